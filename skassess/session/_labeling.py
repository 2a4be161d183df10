"""LabelingSession: an active sampler whose every label is on disk before the next query."""

import inspect
import secrets
import time
from numbers import Integral
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..exceptions import SessionError
from ..samplers import ActiveAssessor, ActiveSampler
from ..utils._dask import is_dask_collection
from ..utils._deprecation import warn_deprecated
from ..utils._validation import as_scalar
from ._columns import ItemIds
from ._fingerprint import RowNumbers, pool_fingerprint, pool_size
from ._label_parser import LabelParser
from ._session_annotators import AnnotatedSession
from ._session_loop import _SessionLoop
from ._spec import (
    SpecError,
    encode_estimator,
    estimator_from_spec,
    same_spec,
    spec_differences,
)
from ._store import SessionStore

__all__ = ["LabelingSession", "pool_fingerprint", "task_answer"]


def _params_json(assessor):
    return {k: repr(v) for k, v in sorted(assessor.get_params(deep=False).items())}


def task_answer(assessor, level=0.95, group_names=None):
    """The current answer to the assessor's task.

    .. deprecated:: 0.1
       Use :meth:`ActiveAssessor.answer <skassess.ActiveAssessor.answer>`;
       removed in 0.2.
    """
    warn_deprecated("skassess.session.task_answer(assessor)", "assessor.answer()")
    return assessor.answer(level, group_names=group_names)


class LabelingSession(AnnotatedSession, _SessionLoop):
    """An active-labeling session stored in a file, resumable after a crash.

    Read more in the :ref:`User Guide <ug_command_line>`.

    The session wraps an :class:`~skassess.ActiveAssessor` fitted on the
    pool. Each :meth:`tell` (or :meth:`skip`) is committed to the session
    file, an SQLite database in WAL mode, in its own transaction before the
    call returns; the file keeps the assessor's class and parameters, the
    pool's fingerprint and every label with its time and the query
    generator's state after it, all as plain data (JSON), with a checksum
    chain that is verified on every open.
    Opening an existing file with the same pool resumes the session: the
    next :meth:`query` gives the item an uninterrupted session would have
    given. The ``skassess label`` command writes the same files.

    Parameters
    ----------
    path : str or path-like
        The session file, created if it does not exist.
    X : array-like of shape (n_pool, n_classes) or (n_pool,)
        Black-box scores of every pool item.
    y : array-like of shape (n_pool,), default=None
        Labels known before the session (``-1`` elsewhere); not stored.
    assessor : ActiveSampler, default=None
        Starts a new session: an unfitted
        :class:`~skassess.samplers.ActiveAssessor`,
        :class:`~skassess.samplers.ActiveTester` (which cannot skip items)
        or :class:`~skassess.samplers.ActiveModelSelector` (``X`` then holds
        the models' scores, ``(n_pool, n_models, n_classes)``). Its
        ``random_state`` must be an int or None, which draws one and stores
        it. On resuming, None rebuilds
        the stored assessor; a given one must have the same parameters. An
        assessor holding a class of your own (e.g. a custom strategy) is
        stored by its name only, never as code: pass it again to resume.
    group_by, y_pred : array-like, default=None
        As in :meth:`ActiveAssessor.fit` (``ActiveTester`` takes ``y_pred``
        only, ``ActiveModelSelector`` neither).
    fit_params : dict, default=None
        More arguments of the sampler's ``fit``, by name: for an
        :class:`~skassess.meta.ActiveMonitor`, ``reference``,
        ``reference_labels`` and ``chunk_by``. Not stored; their
        fingerprint is, so a session resumes only with the same ones.
    ids : array-like of shape (n_pool,), default=None
        Item ids stored beside the labels; None: the row numbers.
    group_names : sequence, default=None
        Names of the assessor's groups in progress lines (e.g. class names
        for groups by predicted class); not stored.
    info : dict, default=None
        JSON-serializable facts stored with a new session (e.g. the input
        file and its checksum); read back as :attr:`info`.
    classes : sequence of str, default=None
        The class names, in score-column order, by which :meth:`tell` reads
        a label given as text (see :class:`LabelParser`: a name always wins
        over a number). None: ``info["classes"]`` if stored (sessions of
        the ``skassess`` command), else the assessor's ``classes``.

    Attributes
    ----------
    assessor_ : ActiveSampler
        The fitted sampler holding the estimate.
    path : pathlib.Path
        The session file.
    info : dict
    resumed : bool
        Whether the file held a session already.

    Raises
    ------
    SessionError
        If the pool differs from the one the session started on, a given
        assessor's parameters differ from the stored ones, the file is not a
        session file or is damaged (the message says how), or it is a
        format-1 file, which held a pickle (see :func:`migrate_session`).
    SessionLockedError
        If another process has the session open.

    Notes
    -----
    A session file holds data only: opening one never runs code from it, so
    a file received from someone else is safe to open.

    Labels may name their annotator (``tell(row, label, annotator=...)``,
    format 3 of the file): a row is then labeled once by each annotator, and
    the estimate models their slips (user guide, *When labels are noisy*).
    A session names the annotator of every label or of none.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess import ActiveAssessor
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> from skassess.session import LabelingSession
    >>> data = load_fashion_mnist_scores()
    >>> path = getfixture("tmp_path") / "session.sqlite"
    >>> assessor = ActiveAssessor(task="least_accurate", random_state=0)
    >>> with LabelingSession(path, data.scores, assessor=assessor) as session:
    ...     first = session.query()
    ...     session = session.tell(first, data.target[first])
    ...     second = session.query()        # shown, then the process dies
    >>> with LabelingSession(path, data.scores) as session:   # resume
    ...     session.n_labeled, session.query() == second
    (1, True)
    """

    def __init__(
        self,
        path,
        X,
        y=None,
        *,
        assessor=None,
        group_by=None,
        y_pred=None,
        fit_params=None,
        ids=None,
        info=None,
        group_names=None,
        classes=None,
        read_only=False,
    ):
        try:  # the pool's size; the scores themselves are checked once, by the assessor
            n = pool_size(X, ids)
        except TypeError as exc:
            raise TypeError(
                f"X: the black box's scores must be an array of shape (n_pool, "
                f"n_classes) or (n_pool,); got {type(X).__name__}."
            ) from exc
        self.group_names = group_names
        if ids is not None and len(ids) != n:
            raise ValueError(f"ids must hold one id per pool row ({n}); got {len(ids)}.")
        fit_params = {} if fit_params is None else fit_params
        if not isinstance(fit_params, dict) or not all(isinstance(k, str) for k in fit_params):
            raise ValueError(
                f"fit_params must be a dict of fit's argument names to values; got {fit_params!r}."
            )
        self._pool = (X, y, group_by, y_pred)
        self._fit_params = fit_params
        if ids is None:
            ids = RowNumbers(n) if is_dask_collection(X) else np.arange(n).astype(str)
        self._ids = ids if isinstance(ids, ItemIds | RowNumbers) else np.asarray(ids).astype(str)
        # The extra arguments enter the fingerprint by name, after the pool (none: the
        # fingerprint of the sessions started before they existed).
        extra = [part for k in sorted(fit_params) for part in (np.str_(k), fit_params[k])]
        fingerprint = pool_fingerprint(X, y, group_by, y_pred, self._ids, *extra)
        self.path = Path(path)
        self._store = SessionStore(path, read_only=read_only)
        self.read_only = read_only
        try:
            if self._store.is_new:
                self.resumed = False
                template = self._new_template(assessor)
                self._store.create(
                    settings=_params_json(template),
                    data_sha256=fingerprint,
                    assessor=encode_estimator(template),
                    info=info or {},
                )
            else:
                self.resumed = True
                template = self._stored_assessor(path, assessor)
                stored = self._store.get("data_sha256")
                if stored != fingerprint:
                    raise SessionError(
                        f"{path}: the pool differs from the one this session was started on "
                        f"(fingerprint {fingerprint[:12]}..., stored {stored[:12]}...); "
                        "resume with the same scores, labels, groups, ids"
                        + (" and fit_params" if fit_params else "")
                        + (", in the same partitions." if is_dask_collection(X) else ".")
                    )
            self.info = self._store.get("info", {})
            self._template = template
            self._parser = self._label_parser(classes)
            self._rebuild()
        except BaseException:
            # A session that cannot start leaves no file behind (nor one it must be told
            # to ignore); an existing file is only closed.
            self._store.discard()
            raise

    def _stored_assessor(self, path, assessor):
        """The stored assessor, rebuilt from its data (or the given one, if the same)."""
        spec = self._store.get("assessor")
        if assessor is None:
            try:
                stored = estimator_from_spec(spec)
            except SpecError as exc:
                raise SessionError(f"{path}: {exc}") from exc
            if not isinstance(stored, ActiveSampler):
                raise SessionError(
                    f"{path}: the stored assessor is a {type(stored).__name__}, not a sampler "
                    "(ActiveAssessor, ActiveTester or ActiveModelSelector)."
                )
            return stored
        try:
            given = encode_estimator(assessor)
        except SpecError as exc:
            raise SessionError(f"{path}: {exc}") from exc
        if not same_spec(given, spec):
            differences = spec_differences(spec, given)
            raise SessionError(
                f"{path}: the session was started with another assessor ("
                + "; ".join(differences)
                + "). Resume with the stored assessor (assessor=None), or start a new "
                "session file to change it."
            )
        return clone(assessor)

    def _label_parser(self, classes):
        """The reader of text labels, and the assessor's own classes (None: indices)."""
        params = self._template.get_params()
        own = params.get(
            "classes", params.get("estimator__classes", params.get("monitor__predictor__classes"))
        )
        names = classes if classes is not None else self.info.get("classes", own)
        self._own_classes = None if own is None else list(own)
        if names is None:
            return None
        if not isinstance(names, list | tuple | np.ndarray) or not all(
            isinstance(c, str | Integral) for c in names
        ):
            raise ValueError(f"classes must be a sequence of class names; got {names!r}.")
        return LabelParser(names)

    def read_label(self, label):
        """A label as the assessor takes it: a text by :class:`LabelParser`, else as given.

        Raises
        ------
        LabelError
            If ``label`` is a text that names no class, or several.
        """
        if not isinstance(label, str) or self._parser is None:
            return label
        code = self._parser.parse(label, where=None)
        return code if self._own_classes is None else self._own_classes[code]

    @staticmethod
    def _new_template(assessor):
        if assessor is None:
            raise SessionError(
                "A new session needs an assessor (an unfitted ActiveAssessor, "
                "ActiveTester or ActiveModelSelector)."
            )
        if not isinstance(assessor, ActiveSampler):
            raise ValueError(
                f"assessor must be an ActiveSampler (ActiveAssessor, ActiveTester "
                f"or ActiveModelSelector); got {type(assessor).__name__}."
            )
        template = clone(assessor)
        seed = template.random_state
        if seed is None:
            # The seed is stored: the session resumes the same query sequence.
            template.set_params(random_state=secrets.randbelow(2**31 - 1))
        elif not isinstance(seed, Integral):
            raise ValueError(
                "A labeling session needs assessor.random_state to be an int or None, so that a "
                f"resumed session repeats the query sequence; got {type(seed).__name__}."
            )
        try:
            encode_estimator(template)
        except SpecError as exc:
            raise ValueError(f"A labeling session stores its assessor as data: {exc}") from exc
        return template

    def _rebuild(self):
        """Fit the assessor on the pool and replay the stored events (resume, undo)."""
        assessor = self._fitted()
        events = self._store.events()
        self._check_items(events)
        labels = [e for e in events if e["kind"] == "label"]
        if events:
            history = pd.DataFrame(
                {
                    "step": [e["step"] for e in labels],
                    "index": [e["row"] for e in labels],
                    "label": pd.Series([e["label"] for e in labels], dtype=object),
                    "time": [e["time"] for e in labels],
                    "annotator": pd.Series([e["annotator"] for e in labels], dtype=object),
                }
            )
            try:
                assessor.replay(
                    history,
                    skipped=[e["row"] for e in events if e["kind"] == "skip"],
                    cursor=events[-1]["cursor"],
                )
            except (ValueError, TypeError, KeyError) as exc:
                raise SessionError(
                    f"{self.path}: the stored events do not fit the pool and assessor they "
                    f"were recorded with ({exc})."
                ) from exc
        self.assessor_ = assessor
        self._annotated = {(e["row"], e["annotator"]): e["label"] for e in labels}
        self._pending = self._batch = None

    def _check_items(self, events):
        """Each stored event names a row of the pool, by the row's own id."""
        n = len(self._ids)
        for e in events:
            if not 0 <= e["row"] < n:
                raise SessionError(
                    f"{self.path}: event {e['seq']} names row {e['row']}; the pool has {n} rows."
                )
            if e["item_id"] != str(self._ids[e["row"]]):
                raise SessionError(
                    f"{self.path}: event {e['seq']} names item {e['item_id']!r} at row "
                    f"{e['row']}, where the pool holds item {str(self._ids[e['row']])!r}; "
                    "the file does not belong to this pool."
                )

    def _fitted(self):
        """A clone of the template fitted on the pool (with the groups and predictions given)."""
        X, y, group_by, y_pred = self._pool
        sampler = clone(self._template)
        extra = {"group_by": group_by, "y_pred": y_pred}
        given = {k: v for k, v in extra.items() if v is not None} | self._fit_params
        if isinstance(sampler, ActiveAssessor):
            return sampler.fit(X, y, **extra, **self._fit_params)
        accepted = inspect.signature(sampler.fit).parameters
        refused = sorted(k for k in given if k not in accepted)
        if refused:
            raise ValueError(
                f"{type(sampler).__name__} takes no {refused[0]}: start the session without it."
            )
        return sampler.fit(X, y, **given)

    def answer(self, level=0.95):
        """The sampler's current answer (:meth:`ActiveSampler.answer
        <skassess.samplers.ActiveSampler.answer>`), its groups named by ``group_names``,
        or groups by predicted class by the session's ``classes``."""
        if isinstance(self.assessor_, ActiveAssessor):
            return self.assessor_.answer(level, group_names=self._group_names())
        return self.assessor_.answer(level)

    def _group_names(self):
        """``group_names``, else the class names where the groups are predicted classes
        that the assessor numbers (its estimator has no ``classes``); else None."""
        if self.group_names is not None:
            return self.group_names
        est = getattr(self.assessor_, "estimator_", None)
        if (
            self._parser is not None
            and self._own_classes is None
            and getattr(est, "grouping", None) == "predicted_class"
        ):
            return list(self._parser.classes)
        return None

    # --------------------------------------------------------------- labeling
    def query(self):
        """The pool row to label next (the same row until it is labeled or skipped)."""
        if self._pending is None:
            self._pending = int(self.assessor_.query(1)[0])
        return self._pending

    def item_id(self, row):
        """The id of pool row ``row``."""
        return str(self._ids[row])

    def tell(self, row, label, *, annotator=None):
        """Record the label of one pool row, committed to the file before returning.

        ``label`` is a class index (or an entry of the assessor's ``classes``),
        or a class name as text, read by :meth:`read_label`.

        Parameters
        ----------
        row : int
        label : int, str or a class
        annotator : str, default=None
            Who gave the label. Named, a row already labeled by another
            annotator may be labeled again (a repeat), and the estimate models
            the annotators' slips (see :meth:`ActiveAssessor.tell
            <skassess.samplers.ActiveAssessor.tell>`). A session names the
            annotator of every label or of none.

        Raises
        ------
        ValueError
            If ``row`` is not an int index of the pool, ``label`` is not one
            of the pool's classes (:class:`~skassess.exceptions.LabelError`
            for a text), ``annotator`` is not a name, or it gave this row
            another label; nothing is recorded.
        SessionError
            If ``annotator`` is named in a session file of format 2 (convert
            it with :func:`migrate_session`).
        """
        self._writable()
        row = self._row(row)
        label = self.read_label(as_scalar(label))
        if annotator is not None:
            return self._tell_annotated(row, label, annotator)
        known = self.assessor_.labels_[row] >= 0  # O(1): n_labeled_ counts the pool
        when = time.time()  # the history's time and the file's are the same
        try:  # the assessor validates first and raises leaving all as it was
            self.assessor_.tell([row], [label], time=when)
        except ValueError as exc:  # its message speaks of its own arguments (indices, labels)
            raise ValueError(f"label={label!r} for row {row} was refused: {exc}") from exc
        if known:
            return self  # the same label again (another is refused): nothing new
        self._commit("label", row, label, when)
        return self

    def skip(self, row):
        """Never ask for ``row`` again, without a label; committed to the file.

        Raises
        ------
        ValueError
            If ``row`` is not an int index of the pool, or is labeled (undo its
            label first); nothing is recorded.
        """
        self._writable()
        row = self._row(row)
        if row in set(self.assessor_.skipped_.tolist()):
            return self
        if self.assessor_.labels_[row] >= 0:
            raise ValueError(
                f"row={row} is labeled; only an unlabeled row can be skipped (undo its "
                "label first)."
            )
        self.assessor_.skip([row])
        self._commit("skip", row, None, time.time())
        return self

    def undo(self):
        """Delete the last label or skip; the next :meth:`query` asks for its row again.

        Returns the undone event (a dict) or None if there was none.
        """
        self._writable()
        last = self._store.pop()
        if last is not None:
            self._rebuild()
        return last

    def _row(self, row):
        n = len(self._ids)
        if not isinstance(row, Integral | np.integer) or isinstance(row, bool) or not 0 <= row < n:
            raise ValueError(f"row must be an int pool index, 0..{n - 1}; got {row!r}.")
        return int(row)

    def _writable(self):
        if self.read_only:
            raise SessionError(f"{self.path}: the session was opened read-only (read_only=True).")

    def _commit(self, kind, row, label, when, annotator=None):
        cursor = self.assessor_.cursor_
        try:
            self._store.add(
                kind,
                row,
                self._ids[row],
                label,
                cursor["n_steps"],
                cursor,
                when=when,
                annotator=annotator,
            )
        except BaseException:
            # Not on disk, so not recorded: go back to what the file holds.
            self._rebuild()
            raise
        self._pending = self._batch = None

    def labeled_rows(self):
        """``(rows, labels)`` recorded in this session, as the assessor took them.

        Where labels name their annotators, each row's first label (every label
        is in :meth:`annotations`).
        """
        labels, seen = [], set()
        for e in self._store.events():
            if e["kind"] == "label" and e["row"] not in seen:
                seen.add(e["row"])
                labels.append(e)
        return (
            np.array([e["row"] for e in labels], dtype=np.int64),
            np.array([e["label"] for e in labels], dtype=object),
        )

    def design_groups(self):
        """The group of every pool row, when the sampler draws within a group at random.

        A group strategy of :class:`~skassess.samplers.ActiveAssessor` chooses
        a group, then one of its unlabeled rows uniformly at random, so the
        labels within each group are a random sample of it, while the groups
        are labeled at unequal rates. Estimates that do not group rows this way
        (the calibration bins, other group columns) must weight the groups by
        their rows.

        Returns
        -------
        groups : ndarray of shape (n_rows,) or None
            The sampler's group index of each row; None for a design that
            draws items with unequal chances within a group.
        """
        if isinstance(self.assessor_, ActiveAssessor):
            return self.assessor_.design_groups()
        return None

    @property
    def n_labeled(self):
        """Labels recorded in this session (labels known before it are not counted)."""
        return self._store.count("label")

    @property
    def exhausted(self):
        """Whether no item is left that the task may ask for."""
        return self.assessor_.n_available_ == 0

    def events(self):
        """Every label and skip, in order, as a DataFrame."""
        return _events_frame(self._store.events())

    def summary(self, level=0.95):
        """The posterior summary of :attr:`assessor_`, its groups named as in :meth:`answer`."""
        table = self.assessor_.summary(level)
        names = self._group_names() if isinstance(self.assessor_, ActiveAssessor) else None
        if names is not None and len(names) == len(table):
            groups = list(self.assessor_.groups_)
            table.index = pd.Index(
                [names[groups.index(g)] for g in table.index], name=table.index.name
            )
        return table

    def close(self):
        """Release the session file."""
        self._store.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    @staticmethod
    def read_events(path):
        """The events of a session file, without the pool (labels as CSV need nothing else)."""
        store = SessionStore(path, create=False, read_only=True)
        try:
            return _events_frame(store.events()), store.get("info", {}), store.get("settings")
        finally:
            store.close()


def _events_frame(events):
    columns = ["seq", "kind", "row", "item_id", "label", "step", "time", "annotator"]
    frame = pd.DataFrame([{k: e[k] for k in columns} for e in events], columns=columns)
    frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True)
    return frame
