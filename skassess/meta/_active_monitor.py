"""``ActiveMonitor``: the labels of a monitored stream, asked for where they matter."""

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ..samplers import ActiveSampler
from ..utils._params import atomic, reset_fitted, validated
from ..utils._sklearn_compat import HasMethods, Interval
from ..utils._validation import as_scalar
from ._error_levels import check_levels
from ._monitor import PerformanceMonitor, allocate_labels, draw_rows, level_suffix

__all__ = ["ActiveMonitor"]


class ActiveMonitor(ActiveSampler):
    """A monitor as an ask/tell sampler: a stream's labels asked for where they move it most.

    Read more in the :ref:`User Guide <ug_monitoring>`.

    ``fit`` takes the stream (every chunk's rows) and the labeled reference;
    the monitor's label-free prediction of each chunk is computed once.
    :meth:`query` proposes the rows to label next, by
    :meth:`PerformanceMonitor.query <skassess.meta.PerformanceMonitor.query>`'s
    rule (the chunks whose alert is least certain, or the widest), drawing
    inside a chunk uniformly from its unlabeled rows; ``tell`` records labels,
    of any row at any time, so labels that arrive late for an old chunk
    update it. :meth:`summary` is the monitor's per-chunk table with the
    labels told so far. As an :class:`~skassess.samplers.ActiveSampler` it
    runs in a crash-safe :class:`~skassess.session.LabelingSession` (the
    reference and the chunks go in ``fit_params``).

    Parameters
    ----------
    monitor : PerformanceMonitor, default=None
        The (unfitted) monitor: its levels, threshold, alert probability,
        and uncertainty model. None: ``PerformanceMonitor()``.
        Its ``random_state``, when None, is this sampler's seed.
    random_state : int or None, default=None
        Seed of the rows drawn inside the chunks (and of the monitor, as
        above); None draws one at fit, which :meth:`undo` reuses.

    Attributes
    ----------
    monitor_ : PerformanceMonitor
        Fitted on the reference.
    labels_ : ndarray of shape (n_pool,)
        Class index of each stream row's label, -1 where unlabeled.
    chunks_ : list
        The chunks' keys, in order.
    chunk_of_ : ndarray of shape (n_pool,)
        Each row's position in ``chunks_``.

    See Also
    --------
    PerformanceMonitor : The per-chunk estimates without a session.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.meta import ActiveMonitor, PerformanceMonitor
    >>> rng = np.random.default_rng(0)
    >>> def scores(n, shift):
    ...     p = rng.beta(8 - shift, 2 + shift, n)
    ...     return np.column_stack([p, 1 - p])
    >>> S_ref = scores(2000, 0)
    >>> y_ref = (rng.random(2000) > S_ref[:, 0]).astype(int)
    >>> S = np.vstack([scores(500, 0), scores(500, 4)])
    >>> y_true = (rng.random(1000) > S[:, 0]).astype(int)
    >>> sampler = ActiveMonitor(PerformanceMonitor(chunk_size=500), random_state=0)
    >>> sampler = sampler.fit(S, reference=S_ref, reference_labels=y_ref)
    >>> sampler = sampler.run(y_true, budget=40, progress=False)
    >>> sampler.summary()["n_labeled"].tolist()
    [0, 40]
    """

    _history_columns = ("step", "index", "label", "chunk", "time")

    _parameter_constraints = {
        "monitor": [HasMethods(["fit", "predict", "query"]), None],
        "random_state": [Interval(Integral, 0, 2**31 - 1, closed="left"), None],
    }

    def __init__(self, monitor=None, *, random_state=None):
        self.monitor = monitor
        self.random_state = random_state

    @validated
    @atomic(deep=False)
    def fit(self, X, y=None, *, reference, reference_labels, chunk_by=None):
        """Fit the monitor on the reference and predict every chunk of the stream label-free.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_pool, n_classes) or (n_pool, n_features)
            The stream's rows: the black box's scores, or its features when
            the monitor's predictor carries the black box.
        y : array-like of shape (n_pool,), default=None
            Labels known already (-1 elsewhere).
        reference : array-like or DataFrame
            The reference period's rows, as ``X``.
        reference_labels : array-like of shape (n_reference,)
            Their true labels.
        chunk_by : array-like of shape (n_pool,), default=None
            Each row's chunk, as in :meth:`PerformanceMonitor.predict
            <skassess.meta.PerformanceMonitor.predict>`; None: the monitor's
            ``chunk_size`` rows.

        Returns
        -------
        self : ActiveMonitor
        """
        reset_fitted(self)
        seed = self._start_fit(
            (X, y),
            {"reference": reference, "reference_labels": reference_labels, "chunk_by": chunk_by},
        )
        monitor = PerformanceMonitor() if self.monitor is None else clone(self.monitor)
        predictor = getattr(self.monitor, "predictor", None)
        if predictor is not None:  # around the same (fitted) black box, which is not cloned
            monitor.set_params(predictor__estimator=predictor.estimator)
        if monitor.random_state is None:
            monitor.set_params(random_state=seed)
        monitor.fit(reference, reference_labels)
        free = monitor.predict_label_free(X, chunk_by=chunk_by)
        n = free.n_rows
        codes = monitor.label_codes(y, n)
        self.labels_ = np.full(n, -1, dtype=np.int64) if codes is None else codes.copy()
        self.chunk_of_ = np.empty(n, dtype=np.int64)
        for i, idx in enumerate(free.chunks):
            self.chunk_of_[idx] = i
        self._queryable = np.zeros(n, dtype=bool)
        for idx in free.rows:
            self._queryable[idx] = True
        pp = monitor.interval_regressor_.predictor_
        classes = pp.estimator.classes_ if pp.estimator is not None else pp.classes
        self._classes = None if classes is None else np.asarray(classes, dtype=object)
        self._n_classes = int(pp.n_classes_)
        self.monitor_ = monitor
        self.chunks_ = free.chunk_keys
        self._label_free = free
        self._rng = np.random.default_rng(seed)
        self._n_steps = 0
        self._history = []
        self._skipped = np.zeros(n, dtype=bool)
        return self

    # ------------------------------------------------------------------ the answer
    def summary(self, level=None):
        """The monitor's per-chunk table with the labels told so far.

        Parameters
        ----------
        level : float or sequence of floats, default=None
            The intervals' levels; None: the monitor's ``level``.

        Returns
        -------
        DataFrame
            As :meth:`PerformanceMonitor.predict
            <skassess.meta.PerformanceMonitor.predict>` gives it.
        """
        check_is_fitted(self)
        levels = check_levels(self.monitor_.level if level is None else level)
        return self.monitor_.predict_from(self._label_free, self.labels_, level=levels)

    def answer(self, level=0.95):
        """The stream's state in one line: the lowest chunk and the alerts.

        Returns
        -------
        answer : dict
            ``text``, ``probability`` and ``certified`` (None: the task
            estimates) and ``max_width``, the widest chunk's ``level``
            interval.
        """
        table = self.summary(level)
        s = level_suffix(level)
        width = (table[f"upper_{s}"] - table[f"lower_{s}"]).to_numpy()
        if table["mean"].isna().all():  # a rate whose prediction no row has
            text = f"{len(table)} chunks; none holds a row of the metric"
        else:
            low = table["mean"].idxmin()
            lowest = table.loc[low]
            text = (
                f"{len(table)} chunks; lowest {low}: {lowest['mean']:.3f} "
                f"[{lowest[f'lower_{s}']:.3f}, {lowest[f'upper_{s}']:.3f}]"
            )
        if "alert" in table:
            text += f"; alerts: {int(table['alert'].sum())}"
        return {
            "text": text,
            "probability": None,
            "certified": None,
            "max_width": float(np.nanmax(width)),
        }

    # ------------------------------------------------------------------ ask / tell
    def query(self, n=1):
        """The ``n`` stream rows to label next.

        Parameters
        ----------
        n : int, default=1

        Returns
        -------
        ndarray of shape (n,)
            Row indices into the stream.

        Raises
        ------
        ValueError
            If fewer than ``n`` rows are unlabeled and not skipped.
        """
        check_is_fitted(self)
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
            raise ValueError(f"n must be a positive integer; got {n!r}.")
        self._start_query(n, "unlabeled, unskipped rows are left")
        open_rows = (self.labels_ < 0) & ~self._skipped & self._queryable
        by_chunk = [idx[open_rows[idx]] for idx in self._label_free.rows]
        monitor = self.monitor_
        taken = allocate_labels(
            self.summary(), [f.size for f in by_chunk], n, monitor.level, monitor.threshold
        )
        return draw_rows(by_chunk, taken, self._rng).astype(np.intp)

    def tell(self, indices, labels, *, time=None):
        """Record the labels of stream rows (of any chunk, in any order).

        Parameters
        ----------
        indices : array-like of int, shape (n,)
        labels : array-like of shape (n,)
            True labels (class indices, or the predictor's ``classes``).
        time : float or array-like of shape (n,), default=None
            When the labels were given (POSIX seconds); None: now.

        Returns
        -------
        self : ActiveMonitor

        Raises
        ------
        ValueError
            If an index is outside the stream, a label is not a class, or a
            row gets a label different from the one it has; nothing is
            recorded then.
        """
        check_is_fitted(self)
        rows, codes, _, when = self._new_labels(indices, labels, time, self._n_classes)
        if len(rows) == 0:
            return self
        self._n_steps += 1
        self.labels_[rows] = codes
        for row, code, t in zip(rows.tolist(), codes.tolist(), when, strict=True):
            chunk = self.chunks_[self.chunk_of_[row]]
            self._history.append((self._n_steps, row, as_scalar(self._label_name(code)), chunk, t))
        return self

    def _available_rows(self):
        return int(((self.labels_ < 0) & ~self._skipped & self._queryable).sum())

    def _array_oracle(self, labels):
        return self._checked_oracle(labels, self._n_classes)
