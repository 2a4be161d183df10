"""``PerformanceMonitor``: a deployed black box's accuracy over time, chunk by chunk."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from ..utils._params import atomic, reset_fitted, validated
from ..utils._random import check_generator
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions
from ..utils._threads import one_native_thread
from ..utils._validation import check_labels, check_scores
from ..utils._warnings import warn
from ._chunk_posterior import ChunkPosterior
from ._chunks import allocate_labels, chunk_rows, draw_rows, level_suffix, value_order
from ._error_levels import check_levels, error_quantiles
from ._interval import PerformanceIntervalRegressor

__all__ = [
    "DRIFT_COLUMNS",
    "PerformanceMonitor",
    "allocate_labels",
    "chunk_rows",
    "draw_rows",
    "level_suffix",
]

#: The uncertainty model's inputs shown per chunk: how well a classifier tells the
#: chunk's scores (and features) from the reference's, and the Kolmogorov-Smirnov
#: distance of the top confidence.
DRIFT_COLUMNS = {
    "drift_scores": "drift_z_accuracy",
    "drift_features": "drift_x_accuracy",
    "confidence_ks": "base_top_ks",
}


#: Chunks with fewer rows (of the metric) than this get a warning: their drift
#: features rest on a handful of rows.
MIN_CHUNK_ROWS = 30

#: The predicted class whose rows a rate is the accuracy of.
_RATE_CLASS = {"ppv": 1, "npv": 0}


class PerformanceMonitor(BaseEstimator):
    """Watch a deployed black box over time: its accuracy per chunk, with or without labels.

    Read more in the :ref:`User Guide <ug_monitoring>`.

    A labeled reference period fits a
    :class:`~skassess.meta.PerformanceIntervalRegressor`. Each chunk of the
    stream (rows of a day, an hour, or a fixed number of rows) then gets:

    - the **label-free** predicted accuracy and its intervals at every level
      of ``level`` (the batch features are computed once a chunk);
    - the **posterior** of its accuracy: the label-free prediction is the
      prior, and the chunk's labels, if any, update it (with none, the
      posterior is the label-free prediction); labels that arrive late for
      an old chunk update that chunk the next time :meth:`predict` is
      called;
    - ``p_below``, the probability that the chunk's accuracy is below
      ``threshold``, and an ``alert`` where it is at least
      ``alert_probability``.

    :meth:`query` says which rows to label next: a labeling budget is spent
    on the chunks where a label moves the answer most (those whose alert is
    least certain when a threshold is set, else the widest), on uniformly
    random rows inside each chunk, so each chunk's labels are a random sample
    of it.

    Parameters
    ----------
    predictor : PerformancePredictor, default=None
        The (unfitted) predictor, carrying the black box if one is used; None
        means ``PerformancePredictor(method="combined")`` on the scores.
    level : float in (0, 1) or sequence of floats, default=(0.8, 0.95)
        The intervals' levels; each gets columns ``lower_<100 level>`` and
        ``upper_<100 level>`` (``lower_80``, ``upper_99.7``).
    metric : {"accuracy", "ppv", "npv"}, default="accuracy"
        What each chunk's number is: the black box's accuracy, or for a
        binary black box the precision of its positive predictions
        (``"ppv"``: the accuracy of the rows it predicts as class 1) or of its
        negative ones (``"npv"``: class 0). A rate is the accuracy of a subset
        of the rows, so it gets the same predictor and intervals, fitted on
        the reference's rows of that prediction; the labels of the other rows
        do not enter it, and :meth:`query` asks for none of them.
    threshold : float in [0, 1], default=None
        The metric below which a chunk raises an alert; None: no alerts.
    alert_probability : float in (0, 1), default=0.9
        How probable a shortfall must be to raise the alert.
    chunk_size : int, default=None
        Rows per chunk when :meth:`predict` is given no ``chunk_by`` (the last
        chunk may be shorter); None: the whole stream is one chunk.
    uncertainty_model : {"pretrained", "recalibrated", "fit"}, default="pretrained"
        As in :class:`~skassess.meta.PerformanceIntervalRegressor`.
    random_state : int or None, default=None
        Seed of the predictor, the uncertainty model's drift features and the
        rows :meth:`query` picks.
    progress : bool, default=True
        A progress bar over the chunks (tqdm, on standard error) when they
        take over 2 s.

    Attributes
    ----------
    interval_regressor_ : PerformanceIntervalRegressor
        Fitted on the reference.
    reference_accuracy_ : float
        The black box's accuracy on the reference rows (with a rate: that
        rate, the accuracy of the rows of its prediction).
    n_reference_ : int
        Reference rows.

    See Also
    --------
    PerformanceIntervalRegressor : One batch, one interval.

    Notes
    -----
    The label-free interval of a chunk is ``m +- Q(level)``, ``m`` the
    predicted accuracy and ``Q`` the uncertainty model's quantile of the
    absolute error, extended beyond its levels 0.5-0.95 as in
    :meth:`~skassess.meta.PerformanceIntervalRegressor.predict`; the error's
    sign is taken as symmetric, so ``P(accuracy < t) = P(e > m - t)``. That
    distribution is the prior of the chunk's accuracy ``K / N`` (``K`` of its
    ``N`` rows right), and its labels, a random sample of its rows, have the
    hypergeometric likelihood: the posterior, its equal-tailed intervals and
    ``p_below`` are computed on every ``K`` (on a grid of [0, 1] above 5,000
    rows; :mod:`skassess.meta._chunk_posterior`). A chunk without labels
    keeps the label-free values (to a cell of ``1 / N``); a correct label
    never raises ``p_below``.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.meta import PerformanceMonitor
    >>> rng = np.random.default_rng(0)
    >>> def scores(n, shift):
    ...     p = rng.beta(8 - shift, 2 + shift, n)
    ...     return np.column_stack([p, 1 - p])
    >>> S_ref = scores(2000, 0)
    >>> y_ref = (rng.random(2000) > S_ref[:, 0]).astype(int)
    >>> monitor = PerformanceMonitor(threshold=0.6, chunk_size=500, random_state=0)
    >>> monitor = monitor.fit(S_ref, y_ref)
    >>> stream = np.vstack([scores(1000, 0), scores(1000, 4)])
    >>> table = monitor.predict(stream)
    >>> list(table.index)
    [0, 1, 2, 3]
    >>> bool(table["predicted"].iloc[0] > table["predicted"].iloc[3])
    True
    """

    _parameter_constraints = {
        "predictor": [HasMethods(["fit", "predict"]), None],
        "level": [Interval(Real, 0, 1, closed="neither"), "array-like"],
        "metric": [StrOptions({"accuracy", "ppv", "npv"})],
        "threshold": [Interval(Real, 0, 1, closed="both"), None],
        "alert_probability": [Interval(Real, 0, 1, closed="neither")],
        "chunk_size": [Interval(Integral, 1, None, closed="left"), None],
        "uncertainty_model": [StrOptions({"pretrained", "recalibrated", "fit"})],
        "random_state": [Interval(Integral, 0, 2**31 - 1, closed="left"), None],
        "progress": ["boolean"],
    }

    def __init__(
        self,
        predictor=None,
        *,
        level=(0.8, 0.95),
        metric="accuracy",
        threshold=None,
        alert_probability=0.9,
        chunk_size=None,
        uncertainty_model="pretrained",
        random_state=None,
        progress=True,
    ):
        self.predictor = predictor
        self.level = level
        self.metric = metric
        self.threshold = threshold
        self.alert_probability = alert_probability
        self.chunk_size = chunk_size
        self.uncertainty_model = uncertainty_model
        self.random_state = random_state
        self.progress = progress

    @validated
    @atomic(deep=False)
    def fit(self, X, y, *, scores=None):
        """Fit on the labeled reference period.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features), or None
            The reference rows: the black box's scores, or its features
            (with ``scores=`` or the predictor's ``estimator``), as in
            :meth:`PerformancePredictor.fit`.
        y : array-like of shape (n_samples,)
            Their true labels.
        scores : array-like of shape (n_samples, n_classes), default=None
            The black box's scores, when ``X`` holds features.

        Returns
        -------
        self : PerformanceMonitor
        """
        reset_fitted(self)
        check_levels(self.level)
        pir = PerformanceIntervalRegressor(
            self.predictor,
            uncertainty_model=self.uncertainty_model,
            random_state=self.random_state,
            progress=self.progress,
        )
        self.n_reference_ = int(len(y))
        if self.metric != "accuracy":
            S = _black_box_scores(self.predictor, X, scores)
            if S.shape[1] != 2:
                raise ValueError(
                    f"metric={self.metric!r} is a rate of a binary black box; its scores have "
                    f"{S.shape[1]} classes."
                )
            rows = np.flatnonzero(S.argmax(axis=1) == _RATE_CLASS[self.metric])
            if rows.size < 20:
                raise ValueError(
                    f"metric={self.metric!r} is learned from the reference rows predicted "
                    f"{_RATE_CLASS[self.metric]}; there are {rows.size}, and it needs 20."
                )
            X, scores, y = _take(X, rows), _take(scores, rows), _take(y, rows)
        pir.fit(X, y, scores=scores)
        self.interval_regressor_ = pir
        self.reference_accuracy_ = float(pir.predictor_.reference_accuracy_)
        return self

    # -- chunks ------------------------------------------------------------------------------

    def predict_label_free(self, X, *, scores=None, chunk_by=None):
        """Every chunk's label-free prediction, computed once for any labels and levels.

        The drift features and the error quantiles of a chunk do not depend on
        its labels: :meth:`predict_from` turns them into the :meth:`predict`
        table for the labels received so far, without computing them again.

        Parameters
        ----------
        X, scores, chunk_by
            As in :meth:`predict`.

        Returns
        -------
        Bunch
            ``chunk_keys`` (the chunks, in order), ``chunks`` (each chunk's row
            indices), ``rows`` (the rows its metric is over: all of them, or
            those of the rate's prediction) and ``batches`` (each chunk's
            :meth:`PerformanceIntervalRegressor.predict_batch
            <skassess.meta.PerformanceIntervalRegressor.predict_batch>`, None
            where it has no row of the metric).
        """
        from tqdm.auto import tqdm

        out = self._stream_chunks(X, scores, chunk_by)
        _warn_small(zip(out.chunk_keys, (r.size for r in out.rows), strict=True))
        pir = self.interval_regressor_
        # a chunk's models are small: native threads would only wait on each other
        with one_native_thread():
            out.batches = [
                pir.predict_batch(_take(X, idx), scores=_take(scores, idx)) if idx.size else None
                for idx in tqdm(
                    out.rows, desc="chunks", delay=2, leave=False, disable=not self.progress
                )
            ]
        return out

    def _stream_chunks(self, X, scores, chunk_by):
        """:meth:`predict_label_free`'s Bunch without the batches."""
        check_is_fitted(self, "interval_regressor_")
        data = X if X is not None else scores
        if data is None:
            raise ValueError("X and scores are both None; give the stream's rows.")
        keys, chunks = chunk_rows(len(data), chunk_by, self.chunk_size)
        rows = chunks
        if self.metric != "accuracy":
            S = _black_box_scores(self.interval_regressor_.predictor_, X, scores)
            keep = S.argmax(axis=1) == _RATE_CLASS[self.metric]
            rows = [idx[keep[idx]] for idx in chunks]
        # each chunk's rows in an order of their own values: its answer does not depend
        # on the order they came in (its drift features cut the rows into folds)
        rows = [idx[value_order(_take(X, idx), _take(scores, idx))] for idx in rows]
        return Bunch(chunk_keys=list(keys), chunks=chunks, rows=rows, n_rows=len(data))

    def label_codes(self, y, n_rows):
        """``y`` as class indices of the black box's classes, -1 where unlabeled (None: None)."""
        check_is_fitted(self, "interval_regressor_")
        if y is None:
            return None
        pp = self.interval_regressor_.predictor_
        classes = pp.estimator.classes_ if pp.estimator is not None else pp.classes
        return check_labels(y, n_rows, pp.n_classes_, classes, missing_label=-1)

    # -- the table -----------------------------------------------------------------------------

    def predict(self, X, y=None, *, scores=None, chunk_by=None):
        """The accuracy of every chunk of the stream: label-free, and with its labels.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features), or None
            The stream's rows, as in :meth:`fit`.
        y : array-like of shape (n_samples,), default=None
            Labels received so far; ``-1`` marks an unlabeled row. None: no
            labels.
        scores : array-like of shape (n_samples, n_classes), default=None
            The black box's scores, when ``X`` holds features.
        chunk_by : array-like of shape (n_samples,), default=None
            Each row's chunk (a date, an hour, a batch name: anything pandas
            sorts); chunks are reported in sorted order. None cuts the stream
            into ``chunk_size`` rows.

        Returns
        -------
        DataFrame
            One row per chunk (index ``chunk``): ``n_rows``, ``n_predicted``
            (with a rate: the rows of its prediction), ``n_labeled`` (of those),
            ``predicted`` (label-free), ``predicted_lower_*``,
            ``predicted_upper_*``, then the estimate to read -- ``mean``,
            ``lower_*``, ``upper_*`` (the posterior with the chunk's labels;
            the label-free values where it has none) --, ``p_below`` and
            ``alert`` (with a ``threshold``) and the drift columns ``drift_scores``,
            ``drift_features`` (NaN without features), ``confidence_ks``.
        """
        check_is_fitted(self, "interval_regressor_")
        self._validate_params()
        check_levels(self.level)
        free = self.predict_label_free(X, scores=scores, chunk_by=chunk_by)
        return self.predict_from(free, self.label_codes(y, free.n_rows))

    def predict_from(self, label_free, codes=None, *, level=None):
        """The :meth:`predict` table from :meth:`predict_label_free`'s output and the labels.

        Parameters
        ----------
        label_free : Bunch
            :meth:`predict_label_free` of the stream.
        codes : ndarray of shape (n_samples,), default=None
            The stream's labels received so far as class indices, -1 where
            none (:meth:`label_codes`); None: no labels.
        level : float or sequence of floats, default=None
            The intervals' levels; None: ``level``.

        Returns
        -------
        DataFrame
            As :meth:`predict`.
        """
        check_is_fitted(self, "interval_regressor_")
        levels = check_levels(self.level if level is None else level)
        free = label_free
        if codes is not None and np.shape(codes) != (free.n_rows,):
            raise ValueError(
                f"codes must hold one class index per stream row ({free.n_rows}); got shape "
                f"{np.shape(codes)}."
            )
        records = [
            self._record(key, idx.size, batch, None if codes is None else codes[own], levels)
            for key, idx, own, batch in zip(
                free.chunk_keys, free.chunks, free.rows, free.batches, strict=True
            )
        ]
        return _table(records)

    def predict_chunks(self, chunks, *, level=None):
        """The :meth:`predict` table of a stream given one chunk at a time.

        Only one chunk's rows are held at a time, so a stream of any length
        (a backfill of thousands of chunks, files bigger than the memory) is
        monitored in the memory of its largest chunk and of the table.

        Parameters
        ----------
        chunks : iterable of tuples ``(key, X, y)`` or ``(key, X, y, scores)``
            Each chunk's key, rows and labels (as :meth:`predict`'s ``X``,
            ``y`` and ``scores``; ``y`` None: no labels), in the table's order.
        level : float or sequence of floats, default=None
            The intervals' levels; None: ``level``.

        Returns
        -------
        DataFrame
            As :meth:`predict` (its rows in the order of ``chunks``).
        """
        from tqdm.auto import tqdm

        check_is_fitted(self, "interval_regressor_")
        levels = check_levels(self.level if level is None else level)
        records, sizes = [], []
        pir = self.interval_regressor_
        with one_native_thread():
            for item in tqdm(
                chunks, desc="chunks", delay=2, leave=False, disable=not self.progress
            ):
                key, X, y, scores = (*item, None)[:4]
                n_rows = len(X if X is not None else scores)
                own = self._stream_chunks(X, scores, np.zeros(n_rows, dtype=np.int8)).rows[0]
                codes = self.label_codes(y, n_rows)
                batch = (
                    pir.predict_batch(_take(X, own), scores=_take(scores, own))
                    if own.size
                    else None
                )
                sizes.append((key, own.size))
                records.append(
                    self._record(key, n_rows, batch, None if codes is None else codes[own], levels)
                )
        if not records:
            raise ValueError("chunks is empty; give at least one chunk of rows.")
        _warn_small(sizes)
        return _table(records)

    def _record(self, key, n_rows, batch, codes, levels):
        """A chunk's row of the table; ``codes`` are its metric's rows' labels, or None."""
        row = {"chunk": key, "n_rows": int(n_rows)}
        if self.metric != "accuracy":
            row["n_predicted"] = 0 if batch is None else int(batch.y_pred.size)
        if batch is None:  # no row of the rate's prediction: nothing to say
            row["n_labeled"] = 0
            if self.threshold is not None:
                row["alert"] = False
        else:
            row.update(self._estimates(batch, codes, levels))
        return row

    def _estimates(self, batch, codes, levels):
        """A chunk's estimates; ``codes`` are its metric's rows' labels (-1: none) or None."""
        m, q, feats = batch.accuracy, batch.error_quantiles, batch.features
        u = error_quantiles(q, levels)
        size = batch.y_pred.size
        row = {}
        labeled = np.zeros(size, dtype=bool) if codes is None else codes >= 0
        row["n_labeled"] = int(labeled.sum())
        row["predicted"] = m
        for a, h in zip(levels, u, strict=True):
            s = level_suffix(a)
            row[f"predicted_lower_{s}"] = max(0.0, m - h)
            row[f"predicted_upper_{s}"] = min(1.0, m + h)
        correct = batch.y_pred[labeled] == codes[labeled] if row["n_labeled"] else np.empty(0, bool)
        post = ChunkPosterior(m, q, size, int(correct.sum()), int((~correct).sum()))
        row["mean"] = post.mean()
        for a in levels:
            s = level_suffix(a)
            row[f"lower_{s}"], row[f"upper_{s}"] = post.interval(a)
        p_below = None if self.threshold is None else post.cdf(self.threshold)
        if self.threshold is not None:
            row["p_below"] = p_below
            row["alert"] = bool(p_below >= self.alert_probability)
        for name, source in DRIFT_COLUMNS.items():
            row[name] = float(feats.get(source, np.nan))
        return row

    # -- which rows to label ---------------------------------------------------------------------

    def query(self, X, y=None, *, n=1, scores=None, chunk_by=None, table=None):
        """Which rows to label next: ``n`` of them, spent where a label moves the answer most.

        Each label goes, one at a time, to the chunk whose answer it would
        sharpen most: the chunk's standard deviation after ``k`` more labels
        is ``1 / sqrt(1 / sd^2 + k / (m (1 - m)))`` (a Beta's, ``sd`` read off
        its interval); with a ``threshold`` the gain is weighted by the
        density of that normal at the threshold (a chunk far from it needs
        no label to decide its alert). Inside a chunk, the rows are drawn
        uniformly among its unlabeled rows (``random_state``).

        Parameters
        ----------
        X, y, scores, chunk_by
            As in :meth:`predict`.
        n : int, default=1
            Rows to return.
        table : DataFrame, default=None
            The :meth:`predict` table of the same stream, labels and chunks,
            to skip computing it again.

        Returns
        -------
        ndarray of shape (n,)
            Row indices into the stream (fewer when fewer rows are unlabeled).
        """
        check_is_fitted(self, "interval_regressor_")
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
            raise ValueError(f"n must be a positive integer; got {n!r}.")
        if table is None:
            free = self.predict_label_free(X, scores=scores, chunk_by=chunk_by)
            table = self.predict_from(free, self.label_codes(y, free.n_rows))
        else:
            free = self._stream_chunks(X, scores, chunk_by)
        if len(table) != len(free.chunk_keys) or list(table["n_rows"]) != [
            len(c) for c in free.chunks
        ]:
            raise ValueError("table is not the predict() table of these rows and chunks.")
        codes = self.label_codes(y, free.n_rows)
        open_rows = [c if codes is None else c[codes[c] < 0] for c in free.rows]
        taken = allocate_labels(table, [len(f) for f in open_rows], n, self.level, self.threshold)
        return draw_rows(open_rows, taken, check_generator(self.random_state))


def _table(records):
    """The table of the chunks' records, indexed by chunk."""
    columns = max(records, key=len).keys()
    return pd.DataFrame.from_records(records, columns=list(columns)).set_index("chunk")


def _warn_small(sizes):
    """Warn of the chunks (``(key, rows of the metric)`` pairs) too small to be checked."""
    small = [(k, n) for k, n in sizes if 0 < n < MIN_CHUNK_ROWS]
    if small:
        shown = ", ".join(f"{k!s} ({n} rows)" for k, n in small[:3])
        more = f" and {len(small) - 3} more" if len(small) > 3 else ""
        warn(
            f"{len(small)} chunk(s) hold fewer than {MIN_CHUNK_ROWS} rows of the metric: "
            f"{shown}{more}. Their label-free intervals rest on drift features of a "
            "handful of rows and have not been checked there; use larger chunks "
            "(chunk_size, or a coarser chunk_by)."
        )


def _take(data, idx):
    """Rows ``idx`` of an array, DataFrame or Series (None stays None)."""
    if data is None:
        return None
    if isinstance(data, pd.DataFrame | pd.Series):
        return data.iloc[idx]
    return np.asarray(data)[idx]


def _black_box_scores(predictor, X, scores):
    """The black box's scores of the rows: given, from the predictor's estimator, or ``X``."""
    if scores is not None:
        return check_scores(scores, input_name="scores")
    if predictor is not None and predictor.estimator is not None:
        return check_scores(predictor.estimator.predict_proba(X), input_name="predict_proba(X)")
    return check_scores(X)
