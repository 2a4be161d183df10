"""The public base of the ask/tell samplers, and the stop rule of their labeling loop."""

import copy
import time as _time
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from ..exceptions import SkassessWarning
from ..utils._params import validate_args
from ..utils._sklearn_compat import Interval
from ..utils._validation import as_scalar, check_labels
from ..utils._warnings import warn

__all__ = ["RUN_CONSTRAINTS", "ActiveSampler", "StopRule"]


class StopRule:
    """When a labeling loop stops: the answer is probable enough, or the intervals narrow.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    A rule is read against a sampler's :meth:`ActiveSampler.answer`. It holds
    when either of its parts does:

    * ``probability``: the answer's posterior probability (the most
      probable candidate of an identification task, the most probable region
      of a comparison) is at least this, and, where the answer has an
      anytime-valid level (``answer["certified"]``: the strategies that keep
      anytime-valid intervals), that level is too. A run that stops then is
      wrong with probability at most ``1 - probability`` however the stop was
      timed; a posterior probability alone, read after every label, does not
      keep that promise (``docs/benchmarks/designs.md``, *Optional stopping*).
    * ``width``: every group's (every metric's) interval is at most this wide.
    * ``rope``: the difference between the two leading candidates lies, with
      at least this probability, on one side of the region of practical
      equivalence or within it (``answer["rope_probability"]``:
      :class:`~skassess.samplers.ActiveModelSelector`, where two models may
      be equally good and P(best) then never grows).

    Parameters
    ----------
    probability : float in (0, 1], default=None
    width : float in (0, 1], default=None
    rope : float in (0, 1], default=None

    Examples
    --------
    >>> from skassess.samplers import StopRule
    >>> rule = StopRule(probability=0.95)
    >>> rule({"probability": 0.97, "certified": None, "max_width": 0.3})
    'probability'
    >>> rule({"probability": 0.97, "certified": 0.9, "max_width": 0.3}) is None
    True
    >>> StopRule(width=0.05)({"probability": None, "max_width": 0.04})
    'width'
    """

    def __init__(self, *, probability=None, width=None, rope=None):
        for name, value in (("probability", probability), ("width", width), ("rope", rope)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, Real) or not 0 < value <= 1
            ):
                raise ValueError(f"{name} must be a number in (0, 1] or None; got {value!r}.")
        self.probability = probability
        self.width = width
        self.rope = rope

    def __call__(self, answer):
        """Which part holds for ``answer``: ``"probability"``, ``"width"``, ``"rope"`` or None."""
        if answer is None:
            return None
        p, certified = answer.get("probability"), answer.get("certified")
        if (
            self.probability is not None
            and p is not None
            and p >= self.probability
            and (certified is None or certified >= self.probability)
        ):
            return "probability"
        width = answer.get("max_width")
        if self.width is not None and width is not None and width <= self.width:
            return "width"
        p_rope = answer.get("rope_probability")
        if self.rope is not None and p_rope is not None and p_rope >= self.rope:
            return "rope"
        return None

    @property
    def active(self):
        """Whether the rule can ever hold (a part is set)."""
        return any(v is not None for v in (self.probability, self.width, self.rope))

    def __repr__(self):
        parts = [
            f"{k}={v!r}"
            for k, v in (
                ("probability", self.probability),
                ("width", self.width),
                ("rope", self.rope),
            )
            if v is not None
        ]
        return f"StopRule({', '.join(parts)})"


#: The arguments of ``run(oracle, budget, *, batch_size, stop, progress, callback)``.
RUN_CONSTRAINTS = {
    "oracle": ["array-like", callable],
    "budget": [Interval(Integral, 1, None, closed="left")],
    "batch_size": [Interval(Integral, 1, None, closed="left"), None],
    "stop": [StopRule, None],
    "progress": ["boolean"],
    "callback": [callable, None],
}


class ActiveSampler(BaseEstimator):
    """Base class of the ask/tell samplers: which pool item to label next, and what is known.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    :class:`~skassess.samplers.ActiveAssessor`,
    :class:`~skassess.samplers.ActiveTester` and
    :class:`~skassess.samplers.ActiveModelSelector` share this protocol
    (after scikit-activeml's query strategies): ``fit`` takes the pool,
    :meth:`query` proposes items, ``tell`` records their labels, and
    :meth:`run` loops the two with an oracle until a budget or a
    :class:`StopRule`. A subclass keeps ``labels_`` (class codes, -1 where
    unlabeled) and ``_history`` (rows of ``_history_columns``, whose first
    three are ``step``, ``index`` and ``label``), and implements ``query``,
    ``tell``, :meth:`answer` and ``_available_rows``.
    """

    _history_columns = ()
    #: Items per query of :meth:`run` when ``batch_size=None``.
    _default_batch_size = 1

    @property
    def n_labeled_(self):
        """Pool items labeled so far (at fit and since)."""
        check_is_fitted(self)
        labels = self.labels_
        if hasattr(labels, "n_labeled"):  # a partitioned pool's labels keep the count
            return int(labels.n_labeled)
        return int((labels >= 0).sum())

    @property
    def n_available_(self):
        """Pool items :meth:`query` may still propose."""
        check_is_fitted(self)
        return int(self._available_rows())

    @property
    def history_(self):
        """The labels told since ``fit``, one row per item, in order."""
        check_is_fitted(self)
        return pd.DataFrame(self._history, columns=list(self._history_columns))

    @property
    def skipped_(self):
        """Pool rows taken out of the candidates by :meth:`skip`, ascending."""
        check_is_fitted(self)
        return self._skipped.nonzero()[0]

    def skip(self, indices):
        """Take rows out of the candidates without a label (e.g. an annotator cannot tell).

        A skipped row is never queried again; it stays unlabeled, and a later
        ``tell`` may label it. Skipping is not ignorable when the rows an
        annotator cannot label differ in accuracy: the estimate then
        describes the rows that can be labeled.

        Parameters
        ----------
        indices : array-like of int
            Pool rows; rows skipped already are ignored.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If an index is outside the pool or its row is labeled.
        """
        check_is_fitted(self)
        rows = np.unique(self._check_indices(indices))
        labeled = self.labels_[rows] >= 0
        if labeled.any():
            raise ValueError(
                f"indices holds row {rows[labeled][0]}, which is labeled; only unlabeled "
                "rows can be skipped."
            )
        rows = rows[~self._skipped[rows]]
        self._skip_rows(rows)
        self._skipped[rows] = True
        return self

    def _skip_rows(self, rows):
        """Subclass hook: take new skipped ``rows`` out of the candidates."""

    # ------------------------------------------------------------------ undo
    def _start_fit(self, args, kwargs):
        """Subclass hook, called by ``fit``: what :meth:`undo` needs to fit again.

        Returns the seed of this fit: ``random_state``, or one drawn now when
        it is None, so that a refit by :meth:`undo` draws as this fit did.
        """
        self._fit_inputs = (args, kwargs)
        self._cursors = {}
        seed = self.__dict__.pop("_undo_seed", None)
        if seed is None:
            seed = self.random_state
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
        self._seed = seed
        return seed

    def _start_query(self, n, what="unlabeled items are left"):
        """Called first by ``query``: refuse ``n`` beyond the items left, then note the
        generator before the next step's items (in that order: a refused query changes
        nothing)."""
        left = self._available_rows()
        if n > left:
            raise ValueError(f"The pool is exhausted: {left} {what}, and query asked for n={n}.")
        self._cursors.setdefault(self._n_steps + 1, self.cursor_)

    def undo(self):
        """Take back the last ``tell``: its labels leave the estimate.

        The sampler is fitted again on the pool it was given and the earlier
        labels are replayed (:meth:`replay`), so its state is the one it had
        before that ``tell``: the next :meth:`query` proposes the same items
        as it did then. Skips stay (an item skipped since can still be
        labeled by ``tell``).

        Returns
        -------
        undone : pandas.DataFrame or None
            The rows of :attr:`history_` taken back; None if nothing was told.

        Examples
        --------
        >>> import numpy as np
        >>> from skassess.samplers import ActiveAssessor
        >>> X = np.random.default_rng(0).dirichlet(np.ones(3), 200)
        >>> sampler = ActiveAssessor(random_state=0).fit(X)
        >>> first = sampler.query()
        >>> _ = sampler.tell(first, [0])
        >>> sampler.undo()[["step", "index", "label"]].values.tolist() == [[1, first[0], 0]]
        True
        >>> bool((sampler.query() == first).all()), sampler.n_labeled_
        (True, 0)
        """
        check_is_fitted(self)
        if not self._history:
            return None
        history = self.history_
        last = int(history["step"].iloc[-1])
        undone = history[history["step"] == last].reset_index(drop=True)
        kept = history[history["step"] != last]
        cursor = self._cursors.get(last)
        if cursor is None:  # told without a query: the generator stands where it stood
            cursor = {"rng": self.cursor_["rng"], "n_steps": last - 1}
        fresh = clone(self)
        fresh._undo_seed = self._seed
        args, kwargs = self._fit_inputs
        fresh.fit(*args, **kwargs)
        fresh.replay(kept, skipped=self.skipped_, cursor=cursor)
        fresh._cursors = {s: c for s, c in self._cursors.items() if s <= last}
        self.__dict__.update(fresh.__dict__)
        return undone

    @property
    def cursor_(self):
        """Where the query sequence stands: the generator's state and the step count.

        A dict of plain data (JSON-safe). A labeling session stores it after
        each label, and :meth:`replay` restores it, so that a resumed run asks
        for the same items as an uninterrupted one.
        """
        check_is_fitted(self)
        return {"rng": copy.deepcopy(self._rng.bit_generator.state), "n_steps": self._n_steps}

    #: Whether :meth:`replay` must re-draw each step's items through ``query`` (the
    #: estimate depends on how the items were drawn, not only on their labels).
    _replay_by_query = False
    #: Whether :meth:`replay` must tell each step's labels on its own (the
    #: estimate depends on the state each step's labels were told in).
    _replay_by_step = False

    def replay(self, history, *, skipped=(), cursor=None):
        """Record a run's labels and skips at once, as they were recorded one by one.

        Parameters
        ----------
        history : pandas.DataFrame
            Labels in order, with columns ``index`` and ``label`` and,
            optionally, ``step`` and ``time`` (as :attr:`history_` has them;
            other columns are ignored). Where the estimate depends on the
            labels alone they are one ``tell``; where each step's labels are
            weighted by the state they were told in (an
            :class:`~skassess.samplers.ActiveAssessor` whose strategy draws
            with known probabilities), one ``tell`` per step; where it
            depends on how the items were drawn
            (:class:`~skassess.samplers.ActiveTester`), each step's items are
            drawn again by ``query`` from a sampler fitted as the one that
            recorded them, and must be the same. An
            :class:`~skassess.samplers.ActiveAssessor` also reads
            ``annotator``: labels told with their annotators, repeats
            included, are one ``tell(..., annotator=...)``.
        skipped : array-like of int, default=()
            Rows to :meth:`skip`.
        cursor : dict, default=None
            A :attr:`cursor_` to resume the query sequence from; None keeps
            the current one.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If ``history`` lacks ``index`` or ``label``, a row or label is not
            in the pool's (see ``tell``), ``cursor`` is not a cursor, or a
            re-drawn step differs from the history's.
        """
        check_is_fitted(self)
        history = pd.DataFrame(history)
        missing = [c for c in ("index", "label") if c not in history.columns]
        if missing:
            raise ValueError(
                f"history must have the columns 'index' and 'label'; it lacks {missing}."
            )
        if cursor is not None and (
            not isinstance(cursor, dict) or set(cursor) != {"rng", "n_steps"}
        ):
            raise ValueError(
                f"cursor must be a dict with 'rng' and 'n_steps', as cursor_ gives; got {cursor!r}."
            )
        rows = history["index"].to_numpy()
        rows = rows.astype(np.intp) if rows.size else np.empty(0, dtype=np.intp)
        labels = history["label"].tolist()
        times = history["time"].tolist() if "time" in history.columns else None
        start = len(self._history)
        if self._replay_by_query and len(rows):
            steps = (
                history["step"].to_numpy() if "step" in history.columns else np.arange(len(rows))
            )
            cuts = np.flatnonzero(np.diff(steps)) + 1
            for block in np.split(np.arange(len(rows)), cuts):
                drawn = self.query(len(block))
                if sorted(drawn.tolist()) != sorted(rows[block].tolist()):
                    raise ValueError(
                        f"history step {as_scalar(steps[block[0]])} labeled rows "
                        f"{rows[block].tolist()}, but the sampler draws {drawn.tolist()} "
                        "there: replay needs the history of a sampler with the same "
                        "parameters and pool, labeled through query."
                    )
                self.tell(
                    rows[block],
                    [labels[i] for i in block],
                    time=None if times is None else [times[i] for i in block],
                )
        elif len(rows) and self._replay_by_step:
            steps = (
                history["step"].to_numpy() if "step" in history.columns else np.arange(len(rows))
            )
            cuts = np.flatnonzero(np.diff(steps)) + 1
            for block in np.split(np.arange(len(rows)), cuts):
                self.tell(
                    rows[block],
                    [labels[i] for i in block],
                    time=None if times is None else [times[i] for i in block],
                )
        elif len(rows):
            self.tell(rows, labels, time=times)
        if "step" in history.columns and len(self._history) > start:
            self._history[start:] = [
                (int(step), *entry[1:])
                for step, entry in zip(history["step"].tolist(), self._history[start:], strict=True)
            ]
        if len(skipped):
            self.skip(np.asarray(skipped, dtype=np.intp))
        if cursor is not None:
            self._n_steps = int(cursor["n_steps"])
            self._rng.bit_generator.state = copy.deepcopy(cursor["rng"])
        return self

    def answer(self, level=0.95):
        """The task's current answer: what a progress line shows and a stop rule reads.

        Returns
        -------
        answer : dict
            ``text`` (one line), ``probability`` (of the most probable
            candidate; None where the task estimates), ``certified`` (the
            anytime-valid level of that candidate, where the sampler keeps
            one; else None) and ``max_width`` (the widest ``level`` interval).
        """
        raise NotImplementedError

    def _available_rows(self):
        raise NotImplementedError

    def _check_indices(self, indices):
        indices = np.asarray(indices)
        n = len(self.labels_)
        if indices.ndim != 1 or not (np.issubdtype(indices.dtype, np.integer) or indices.size == 0):
            raise ValueError(f"indices must be a 1-D array of integers; got {indices!r}.")
        bad = (indices < 0) | (indices >= n)
        if bad.any():
            raise ValueError(
                f"indices must lie in the pool, 0..{n - 1}; got {as_scalar(indices[bad][0])}."
            )
        return indices.astype(np.intp)

    def _label_name(self, code):
        """The label of class index ``code`` as a user gives it: a class name, or the index."""
        return code if self._classes is None else self._classes[code]

    def _checked_labels(self, indices, labels, n_classes):
        """``(given, codes)``: the labels as given and their class indices, one per index."""
        given = as_label_array(labels, self._classes)
        if given.ndim != 1 or len(given) != len(indices):
            raise ValueError(
                f"labels must be one label per index: got {len(indices)} indices and labels "
                f"of shape {given.shape}."
            )
        codes = check_labels(
            given,
            len(indices),
            n_classes,
            self._classes,
            missing_label=None,
            name="labels",
            rows=indices,
        )
        return given, codes

    def _new_labels(self, indices, labels, time, n_classes):
        """A ``tell``'s arguments checked, and its entries that are new.

        Returns ``(rows, codes, given, times)`` of each row's first entry where
        the row is unlabeled: class indices, the labels as given, and their
        POSIX times (None: now). Raises ``ValueError``, recording nothing, if
        an index is outside the pool, a label is not a class, or a row gets a
        label other than the one it has (recorded, or given earlier in the
        call).
        """
        indices = self._check_indices(indices)
        times = self._check_time(time, len(indices))
        given, y = self._checked_labels(indices, labels, n_classes)
        # The label a row had before this entry: its recorded label, or the one given
        # first for it in this call. Vectorized: a replayed history of thousands of
        # labels is one call.
        order = np.argsort(indices, kind="stable")
        first = np.ones(len(indices), dtype=bool)
        first[order[1:]] = indices[order[1:]] != indices[order[:-1]]
        first_label = np.empty_like(y)
        group_start = np.maximum.accumulate(np.where(first[order], np.arange(len(order)), 0))
        first_label[order] = y[order[group_start]]
        recorded = self.labels_[indices]
        old = np.where(recorded >= 0, recorded, np.where(first, recorded, first_label))
        clash = (old >= 0) & (old != y)
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            raise ValueError(
                f"labels[{i}] = {as_scalar(self._label_name(y[i]))!r} for row {indices[i]}, which "
                f"already has the label {as_scalar(self._label_name(old[i]))!r}; a recorded "
                "label cannot change."
            )
        new = first & (recorded < 0)
        when = (np.full(int(new.sum()), _time.time()) if times is None else times[new]).tolist()
        return indices[new], y[new], given[new], when

    @staticmethod
    def _check_time(time, n):
        """``tell``'s ``time=``: None (now), one POSIX time, or one per label."""
        if time is None:
            return None
        times = np.asarray(time, dtype=object)
        if times.ndim == 0:
            times = np.full(n, time, dtype=object)
        if times.shape != (n,) or not all(
            isinstance(t, Real) and not isinstance(t, bool) and np.isfinite(t) for t in times
        ):
            raise ValueError(
                f"time must be None, a POSIX time (seconds) or one per label ({n}); got {time!r}."
            )
        return times.astype(np.float64)

    def _query_state(self):
        """Copies of what a query changes: the random generators and the pending items."""
        return {
            k: copy.deepcopy(v)
            for k, v in vars(self).items()
            if isinstance(v, np.random.Generator) or k == "_pending"
        }

    @validate_args(RUN_CONSTRAINTS)
    def run(self, oracle, budget, *, batch_size=None, stop=None, progress=True, callback=None):
        """Query and label until ``budget`` labels are recorded or ``stop`` holds.

        Parameters
        ----------
        oracle : array-like of shape (n_pool,) or callable
            True labels of the pool, or a function ``indices -> labels``
            (e.g. a call to human annotators).
        budget : int
            Labels to record. More than the items left: all of them are
            labeled, with a warning.
        batch_size : int, default=None
            Items per query (per oracle call). None: the sampler's own, 1
            (:class:`~skassess.samplers.ActiveTester`: 10, as its surrogate
            is refitted once per batch).
        stop : StopRule, default=None
            Read against :meth:`answer` before each batch: a run whose rule
            holds already labels nothing.
        progress : bool, default=True
            Show a tqdm progress bar.
        callback : callable, default=None
            Called as ``callback(self)`` after each batch; returning True stops.

        Returns
        -------
        self
        """
        check_is_fitted(self)
        if not callable(oracle):
            oracle = self._array_oracle(oracle)
        if batch_size is None:
            batch_size = self._default_batch_size
        return self._label_loop(
            oracle, budget, batch_size=batch_size, progress=progress, callback=callback, stop=stop
        )

    def _array_oracle(self, labels):
        raise NotImplementedError

    def _checked_oracle(self, labels, n_classes):
        """``indices -> labels`` of an oracle given as the pool's labels, each checked first
        (a bad one changes nothing)."""
        truth = np.asarray(labels, dtype=object if self._classes is not None else None)
        if truth.ndim != 1 or len(truth) != len(self.labels_):
            raise ValueError(
                f"oracle as an array must hold one label per pool item "
                f"({len(self.labels_)}); got shape {truth.shape}."
            )
        check_labels(truth, len(truth), n_classes, self._classes, missing_label=None, name="oracle")
        return truth.__getitem__

    def _should_stop(self, stop):
        return stop is not None and stop.active and stop(self.answer()) is not None

    def _label_loop(self, oracle, budget, *, batch_size, progress, callback, stop=None):
        """Query ``batch_size`` items, ask ``oracle``, tell, until ``budget`` labels."""
        left = self.n_available_
        if budget > left:
            warn(
                f"budget={budget} is larger than the {left} unlabeled items left to label; "
                f"labeling those {left}.",
                SkassessWarning,
            )
            budget = left
        from tqdm.auto import tqdm

        with tqdm(total=budget, disable=not progress, desc="labels") as bar:
            done = 0
            while done < budget and not self._should_stop(stop):
                # A batch whose oracle call or tell fails leaves no trace (the query's
                # draws are undone); the labels of earlier batches are kept.
                saved = self._query_state()
                try:
                    idx = self.query(min(batch_size, budget - done))
                    labels = oracle(idx)
                    if np.ndim(labels) != 1 or len(labels) != len(idx):
                        raise ValueError(
                            f"The oracle must return one label per index: asked for "
                            f"{len(idx)}, got {np.shape(labels)}."
                        )
                    self.tell(idx, labels)
                except BaseException:
                    vars(self).update(saved)
                    raise
                done += len(idx)
                bar.update(len(idx))
                if callback is not None and callback(self):
                    break
        return self


def as_label_array(labels, classes):
    """``labels`` as an array; a list of names keeps its items as given.

    (numpy would turn ``[-1, "a"]`` into strings.)
    """
    if classes is not None and isinstance(labels, list):
        return np.asarray(labels, dtype=object)
    return np.asarray(labels)
