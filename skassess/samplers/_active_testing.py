"""ActiveTester: which item to label next so that many metrics converge at once."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted

from ..utils._params import LEVEL, atomic, reset_fitted, validate_args, validated
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions
from ..utils._validation import (
    as_scalar,
    check_classes,
    check_labels,
    check_predictions,
    check_scores,
)
from ._acquisition import bald, metric_utility, parse_metrics
from ._confusion_metrics import metric_names, metric_values
from ._difference import DifferenceEstimate
from ._sampler import ActiveSampler
from ._tester_design import _TesterDesign

__all__ = ["ActiveTester"]

HISTORY_COLUMNS = ["step", "index", "label", "probability", "time"]
STRATEGIES = ("variance", "random", "alt_mas", "bald")


class ActiveTester(_TesterDesign, ActiveSampler):
    """Estimate many metrics of a black box from few labels, choosing which items to label.

    Read more in the :ref:`User Guide <ug_active_testing>`.

    Metric-aware active testing (ALT-MAS, Ha et al.) with an estimator that a
    poor surrogate cannot bias. A surrogate of the true label
    (:class:`MLPEnsembleSurrogate` on features the user gives) is refitted as
    labels arrive. With ``strategy="variance"`` (the default) the next items
    are *drawn* from a proposal that favours items whose labels would move the
    asked metrics most, and the metrics are estimated by an unbiased
    difference estimator (see Notes): the surrogate lowers the variance but
    cannot bias the estimate, and the intervals are confidence intervals of
    the pool's metrics. ``"alt_mas"`` and ``"bald"`` are the paper's method
    and its baseline: they label the item of highest mutual information, and
    estimate the metrics from the surrogate's predicted labels (the paper's
    eq. 2), which is biased when the surrogate errs.

    Parameters
    ----------
    metrics : str, (name, class) pair or list of them, \
default=("accuracy", "precision", "recall")
        Names in ``"accuracy"``, ``"macro_f1"``, ``"precision"``,
        ``"recall"``, ``"f1"``; a per-class name alone means every class,
        ``("recall", c)`` one class ``c``. The default is 21 metrics for 10
        classes.
    strategy : {"variance", "random", "alt_mas", "bald"}, default="variance"
        ``"variance"``: draw items from the variance-minimizing proposal,
        mixed with uniform sampling; ``"random"``: uniform draws (the same
        estimator); ``"alt_mas"``: the item of highest summed metric-aware
        mutual information; ``"bald"``: the item of highest BALD.
    surrogate : MLPEnsembleSurrogate or similar, default=None
        Needs ``fit``, ``partial_fit`` and ``predict_proba_members``. None:
        ``MLPEnsembleSurrogate(n_members=10)``.
    pseudo_labels : bool, default=False
        Augment the surrogate's training set with the items a classifier of
        "the model is right" trusts most, labeled with the model's prediction
        (the paper's augmentation, ``N_s = precision^2 x |set|``; above 1000,
        a uniform subset of 1000 weighted ``N_s / 1000``).
    spread_errors : bool, default=False
        Spread each predicted class's estimated errors among its unlabeled
        items over the true classes by an empirical-Bayes Dirichlet-multinomial
        posterior mean: recall and F1, whose columns add every class's few
        errors, lose much of their noise when errors scatter over many
        classes, and gain a bias when each class's errors go to one or two
        others (see Notes).
        Accuracy and precision (the diagonal) are unchanged; a fully labeled
        pool stays exact.
    uniform_mix : float in (0, 1], default=0.1
        The least share of uniform sampling in the ``"variance"`` proposal: it
        bounds every draw's importance weight by ``1 / uniform_mix`` times
        uniform sampling's, whatever the surrogate says. Once ``min_labels``
        draws are in, the share is the one of ``uniform_mix``, 0.25, 0.5 and 1
        that the earlier draws say gives the least variance
        (``uniform_share_``).
    min_labels : int, default=10
        Labels before the surrogate is first fitted, and draws before the
        control variate may leave the model's scores.
    refit_every : int, default=1
        Labels between two refits of the surrogate (at the next
        :meth:`query`). A refit takes about a second on a few thousand
        items; an interactive session may refit every 10 labels. The
        estimates stay unbiased whatever the cadence: each draw is weighted by
        the probability it was drawn with.
    classes : array-like of shape (n_classes,), default=None
        The label of each score column; None: labels are column indices.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws and the surrogate; a pickled tester resumes the same
        sequence.

    Attributes
    ----------
    labels_ : ndarray of shape (n_pool,)
        Class index of every labeled item, -1 while unlabeled.
    surrogate_ : fitted surrogate or None
        None until ``min_labels`` labels are recorded.
    uniform_share_ : float
        The share of uniform sampling the last query used.
    control_variate_ : str
        The prediction ``g`` the last query used: ``"scores"``, ``"strata"``
        (the label shares of each predicted class, from the draws),
        ``"calibrated"`` (the scores with the temperature of least weighted
        log-loss on the draws), ``"surrogate"``, ``"strata+surrogate"`` or
        ``"calibrated+surrogate"`` (even mixes).
    metric_names_ : list of str
        Names of the estimated metrics (rows of :meth:`summary`).
    history_ : pandas.DataFrame
        One row per recorded label: ``step``, ``index``, ``label``,
        ``probability`` (the draw's probability, NaN for items not drawn) and
        ``time``.
    n_labeled_ : int
    n_features_in_ : int
        Number of score columns.

    See Also
    --------
    ActiveAssessor : Which *group* to label next (Bayesian bandits).

    Notes
    -----
    The rows of the pool's confusion totals (one per predicted class, whose
    size is known) are strata. A label drawn from the proposal ``q`` that
    lands in row ``c`` gives one unbiased estimate of that row,
    ``sum_labeled e_i + sum_unlabeled g_i + (e_I - g_I) / q(I | c)`` over
    the row's items (``e`` the one-hot true class, ``g`` a prediction fixed
    before the draw), and a row's estimate is the mean of its draws: a
    martingale, as in active testing with the LURE weights (Kossen et al.
    2021) and active statistical inference (Zrnic and Candes 2024). Rows
    that few draws reach (fewer than five expected, or fewer than two drawn:
    many classes, few labels) are estimated together without conditioning on
    where the draws landed, ``sum_labeled e_i + sum_unlabeled g_i + [I in
    row] (e_I - g_I) / q(I)`` averaged over all draws, which is unbiased for
    a row no draw has reached, so a biased ``g`` cannot bias them. The
    proposal is ``q_i``
    proportional to ``sqrt(sum_k w_k Var[grad h_k . e_i])``, the optimum for
    the sum of the metrics' variances ``h_k``, each relative to its variance
    under uniform sampling (``1 / w_k``, so that an easy metric such as
    accuracy is not given up for the noisier per-class ones), computed under
    an even mix of ``g`` and the row's label shares. It is mixed with a share
    of uniform sampling chosen among ``uniform_mix``, 0.25, 0.5 and 1 by the
    earlier draws' importance-weighted estimate of each mixture's variance:
    where the residuals the draws met lie where the proposal puts little
    mass, the mixture moves towards uniform sampling. The prediction ``g``
    is the candidate (the model's scores, the label shares of each
    predicted class, the temperature-scaled scores, the surrogate, or an
    even mix) with the least importance-weighted squared residual on the
    earlier draws, each judged by what it predicted *before* that draw's
    label was known, so the choice never looks at the draw it is used for.
    Intervals: normal, from the delta method, with each row's variance the
    larger of its draws' spread and the one ``g`` predicts.

    With ``spread_errors=True`` the errors each row's estimate puts among its
    unlabeled items are spread over the true classes as a
    Dirichlet-multinomial posterior mean: their estimated shares weighted by
    the row's labeled errors ``n_e``, even shares weighted by a strength
    ``m`` of greatest marginal likelihood of where those errors fell. The
    diagonal is the unbiased estimate's, so accuracy and precision are
    unchanged; recall and F1 trade a bias that vanishes as ``n_e`` grows for
    much less noise when a class has had a few errors labeled. The even
    prior is a bet that errors scatter: where they do it lowers the recall
    error at a few labels a class; where each class's errors go to two
    others it is worse than random labeling
    (``docs/benchmarks/many-metrics.md``), which is why it is off by default.

    References
    ----------
    H. Ha, S. Gupta, S. Rana, S. Venkatesh, "ALT-MAS: A Data-Efficient
    Framework for Active Testing of Machine Learning Algorithms", 2021.
    J. Kossen, S. Farquhar, Y. Gal, T. Rainforth, "Active Testing:
    Sample-Efficient Model Evaluation", ICML 2021.
    T. Zrnic, E. J. Candes, "Active Statistical Inference", ICML 2024.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> from skassess.samplers import ActiveTester, MLPEnsembleSurrogate
    >>> data = load_fashion_mnist_scores()
    >>> scores, y = data.scores[:2000], data.target[:2000]
    >>> tester = ActiveTester(
    ...     metrics=["accuracy", "macro_f1"],
    ...     surrogate=MLPEnsembleSurrogate(n_members=3, max_iter=50, random_state=0),
    ...     random_state=0,
    ... ).fit(scores)
    >>> tester = tester.run(y, budget=60, batch_size=20, progress=False)
    >>> table = tester.summary()
    >>> list(table.columns)
    ['estimate', 'se', 'lower', 'upper', 'n_labeled']
    >>> bool(table.loc["accuracy", "lower"] <= table.loc["accuracy", "upper"])
    True
    """

    _history_columns = HISTORY_COLUMNS

    _parameter_constraints = {
        "metrics": [str, tuple, list],
        "strategy": [StrOptions(set(STRATEGIES))],
        "surrogate": [HasMethods(["fit", "partial_fit", "predict_proba_members"]), None],
        "pseudo_labels": ["boolean"],
        "spread_errors": ["boolean"],
        "uniform_mix": [Interval(Real, 0, 1, closed="right")],
        "min_labels": [Interval(Integral, 1, None, closed="left")],
        "refit_every": [Interval(Integral, 1, None, closed="left")],
        "classes": ["array-like", None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        metrics=("accuracy", "precision", "recall"),
        *,
        strategy="variance",
        surrogate=None,
        pseudo_labels=False,
        spread_errors=False,
        uniform_mix=0.1,
        min_labels=10,
        refit_every=1,
        classes=None,
        random_state=None,
    ):
        self.metrics = metrics
        self.strategy = strategy
        self.surrogate = surrogate
        self.pseudo_labels = pseudo_labels
        self.spread_errors = spread_errors
        self.uniform_mix = uniform_mix
        self.min_labels = min_labels
        self.refit_every = refit_every
        self.classes = classes
        self.random_state = random_state

    # ----------------------------------------------------------------- fitting
    @validated
    @atomic(deep=False)
    def fit(self, X, y=None, *, features=None, y_pred=None):
        """Take the pool: the black box's scores, labels known already, surrogate features.

        Parameters
        ----------
        X : array-like of shape (n_pool, n_classes) or (n_pool,)
            The black box's scores of every pool item (one-hot rows for a
            black box that only gives labels).
        y : array-like of shape (n_pool,), default=None
            Labels known already, -1 elsewhere. None: no item is labeled.
        features : array-like of shape (n_pool, n_features), default=None
            The surrogate's input (pixels, an embedding, ...). None: the
            scores.
        y_pred : array-like of shape (n_pool,), default=None
            The black box's predicted labels; None: the argmax of ``X``.

        Returns
        -------
        self : ActiveTester
        """
        reset_fitted(self)
        scores = check_scores(X)
        n, K = scores.shape
        classes = None if self.classes is None else check_classes(self.classes, K)
        pred = scores.argmax(axis=1) if y_pred is None else check_predictions(y_pred, n, K, classes)
        labels = check_labels(y, n, K, classes).copy()
        feats = scores if features is None else check_array(features, input_name="features")
        if len(feats) != n:
            raise ValueError(
                f"features must have one row per pool item ({n}); got {len(feats)} rows."
            )
        metrics = parse_metrics(self.metrics, range(K))
        seed = self._start_fit((X, y), {"features": features, "y_pred": y_pred})
        rng = check_random_state(seed)
        self._rng = np.random.default_rng(rng.randint(np.iinfo(np.int32).max))
        self._surrogate_seed = int(rng.randint(np.iinfo(np.int32).max))
        self._scores = scores / scores.sum(axis=1, keepdims=True)
        self._pred, self._features, self._metrics = pred, feats, metrics
        self._classes, self.labels_ = classes, labels
        self.n_features_in_ = K
        self.metric_names_ = metric_names(
            metrics, list(range(K)) if classes is None else list(classes)
        )
        self.surrogate_ = None
        self._surrogate_proba = None  # (members, n_pool, K), refreshed after each refit
        self._surrogate_stale = True
        self._estimate = DifferenceEstimate(K, metrics)
        self._draws = []  # resolved draws (Draw records)
        self._pending = None
        self._history = []
        self._n_steps = 0
        self._skipped = np.zeros(n, dtype=bool)
        self.control_variate_ = "strata"
        self.uniform_share_ = self.uniform_mix
        return self

    # -------------------------------------------------------------- ask / tell
    @validate_args(
        {"n": [Interval(Integral, 1, None, closed="left")], "return_utilities": ["boolean"]}
    )
    def query(self, n=1, *, return_utilities=False):
        """Pool indices of the next ``n`` items to label.

        For ``"variance"`` and ``"random"`` the items are drawn (without
        replacement) and count in the estimate once :meth:`tell` records
        their labels; a new :meth:`query` drops the draws of the previous one
        that were not told.

        Parameters
        ----------
        n : int, default=1
        return_utilities : bool, default=False
            Also return each pool item's score when the items were chosen:
            its draw probability (``"variance"``, ``"random"``) or the
            surrogate's utility (``"alt_mas"``, ``"bald"``; uniform before the
            surrogate is fitted); NaN for labeled items.

        Returns
        -------
        indices : ndarray of shape (n,)
        utilities : ndarray of shape (n, n_pool)
            Only with ``return_utilities=True``; one row per index (the same
            row for every index of a query: they are chosen together).

        Raises
        ------
        ValueError
            If fewer than ``n`` unlabeled items are left.
        """
        check_is_fitted(self)
        self._start_query(n)
        unlabeled = np.flatnonzero(self.labels_ < 0)
        self._refit_surrogate()
        if self.strategy in ("alt_mas", "bald"):
            self._pending = None
            proba = self._surrogate_proba
            if proba is None:  # no surrogate yet: random items
                u = np.full(len(unlabeled), 1.0 / len(unlabeled))
                out = self._rng.choice(unlabeled, n, replace=False)
            else:
                proba = proba[:, unlabeled]
                u = (
                    bald(proba)
                    if self.strategy == "bald"
                    else metric_utility(proba, self._pred[unlabeled], self._metrics)
                )
                # Ties (e.g. all zero) broken at random.
                order = np.lexsort((self._rng.random(len(u)), -u))
                out = unlabeled[order[:n]]
        else:
            out, u = self._draw(unlabeled, n)
        if not return_utilities:
            return out
        utilities = np.full((n, len(self.labels_)), np.nan)
        utilities[:, unlabeled] = u
        return out, utilities

    def tell(self, indices, labels, *, time=None):
        """Record labels of pool items.

        Parameters
        ----------
        indices : array-like of int, shape (n,)
        labels : array-like of shape (n,)
            True labels (class indices, or names with ``classes``).
        time : float or array-like of shape (n,), default=None
            When the labels were given (POSIX seconds), for :attr:`history_`;
            None: now.

        Returns
        -------
        self : ActiveTester

        Raises
        ------
        ValueError
            If an index is outside the pool, a label is not a class, or an
            item gets a label different from the one it has.
        """
        check_is_fitted(self)
        rows, codes, _, when = self._new_labels(indices, labels, time, self._scores.shape[1])
        if len(rows) == 0:
            return self
        self._n_steps += 1
        drawn = (
            {}
            if self._pending is None
            else {
                int(r): float(q)
                for r, q in zip(self._pending["index"], self._pending["q"], strict=True)
            }
        )
        for row, label, t in zip(rows.tolist(), codes.tolist(), when, strict=True):
            self.labels_[row] = label
            self._history.append(
                (self._n_steps, row, as_scalar(self._label_name(label)), drawn.get(row, np.nan), t)
            )
        self._surrogate_stale = True
        self._resolve()
        return self

    # ------------------------------------------------------------------- loop
    _default_batch_size = 10
    # The estimate weights each draw by the probability it was drawn with: a replay
    # draws every step again.
    _replay_by_query = True

    def _skip_rows(self, rows):
        raise ValueError(
            "ActiveTester cannot skip rows: its estimate weights each drawn item by the "
            "probability it was drawn with, and a drawn item left unlabeled would bias it. "
            "Label the item, or use ActiveAssessor, which can skip."
        )

    def _available_rows(self):
        return int((self.labels_ < 0).sum())

    def _array_oracle(self, labels):
        return self._checked_oracle(labels, self._scores.shape[1])

    @validate_args({"level": [LEVEL]})
    def answer(self, level=0.95):
        """The current estimate of the first metric, for a progress line and a stop rule.

        Returns
        -------
        answer : dict
            ``text`` (the first metric's estimate and ``level`` interval),
            ``probability`` None and ``certified`` None (the task estimates),
            ``max_width`` the widest ``level`` interval over the metrics (NaN
            before the first drawn label).
        """
        check_is_fitted(self)
        try:
            table = self.summary(level)
        except ValueError:  # no drawn label yet
            return {
                "text": "no drawn label yet",
                "probability": None,
                "certified": None,
                "max_width": float("nan"),
            }
        first = table.iloc[0]
        width = float((table["upper"] - table["lower"]).max())
        return {
            "text": (
                f"{table.index[0]} {first['estimate']:.4f} [{first['lower']:.4f}, "
                f"{first['upper']:.4f}]; widest interval {width:.3f}"
            ),
            "probability": None,
            "certified": None,
            "max_width": width,
        }

    # --------------------------------------------------------------- estimate
    def _surrogate_totals(self):
        """Confusion totals of each surrogate member: labels where known, its argmax elsewhere."""
        K = self._scores.shape[1]
        proba = self._surrogate_proba
        if proba is None:
            raise ValueError(
                f"strategy={self.strategy!r} estimates from the surrogate, which "
                f"is fitted after min_labels={self.min_labels} labels; "
                f"{self.n_labeled_} are recorded."
            )
        labeled = self.labels_ >= 0
        y = np.where(labeled[None], self.labels_[None], proba.argmax(axis=2))
        T = np.zeros((len(proba), K, K))
        for m in range(len(proba)):
            np.add.at(T[m], (self._pred, y[m]), 1.0)
        return T

    @validate_args({"level": [LEVEL]})
    def summary(self, level=0.95):
        """Estimate, standard error and ``level`` interval of every metric.

        With ``"variance"`` or ``"random"``: the difference estimate and its
        normal confidence interval; exact (se 0) once every item is labeled.
        With ``"alt_mas"`` or ``"bald"``: the mean over the surrogate's
        members of the metric computed with their predicted labels, and the
        members' spread (their standard deviation and ``level`` quantiles),
        which does not account for the surrogate's bias.

        Returns
        -------
        summary : pandas.DataFrame
            Indexed by metric name, with columns ``estimate``, ``se``,
            ``lower``, ``upper`` and ``n_labeled``.

        Raises
        ------
        ValueError
            If no drawn label has been told yet (``"variance"``,
            ``"random"``) or the surrogate is not fitted yet (``"alt_mas"``,
            ``"bald"``).
        """
        check_is_fitted(self)
        n_metrics = len(self._metrics)
        if (self.labels_ >= 0).all():
            value = metric_values(self._totals_labeled(), self._metrics)
            se, lower, upper = np.zeros(n_metrics), value, value
        elif self.strategy in ("alt_mas", "bald"):
            values = metric_values(self._surrogate_totals(), self._metrics)
            value, se = values.mean(axis=0), values.std(axis=0)
            lower, upper = np.quantile(values, [0.5 - level / 2, 0.5 + level / 2], axis=0)
        else:
            if self._estimate.n_draws == 0:
                raise ValueError(
                    "No drawn label has been told yet: query items, label them "
                    "with tell (or run), then ask for the summary."
                )
            value, se, lower, upper = self._estimate.estimate(
                *self._plugin(self._g), level, counts=self._counts()
            )
        return pd.DataFrame(
            {
                "estimate": value,
                "se": se,
                "lower": lower,
                "upper": upper,
                "n_labeled": self.n_labeled_,
            },
            index=pd.Index(self.metric_names_, name="metric"),
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.positive_only = True  # X is scores: class probabilities
        tags.non_deterministic = False
        return tags
