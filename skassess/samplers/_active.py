"""ActiveAssessor: a pool-based ask/tell loop around a skassess metric estimator."""

import time
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._validation import _py, check_labels
from ..exceptions import SkassessWarning
from ._evaluate import comparison_probabilities
from ._setup import (
    Setup,
    check_task,
    default_estimator,
    initial_state,
    make_strategy,
    pool_rows,
)
from ._state import BetaState

HISTORY_COLUMNS = ["step", "index", "group", "label", "time"]


class ActiveAssessor(BaseEstimator):
    """Choose which pool item to label next so that an assessment converges fast.

    The pool is every row the black box has scored. The wrapped metric
    estimator is fitted on the whole pool (labeled and unlabeled rows: the
    unlabeled ones give the group weights and the informative prior); each
    label recorded with :meth:`tell` is a conjugate update of its posterior.
    :meth:`query` asks the strategy for the group whose next label is worth
    most to the task, then draws a row uniformly among that group's unlabeled
    rows.

    Parameters
    ----------
    estimator : skassess metric estimator, default=None
        Holds the posterior. None: ``BayesianAccuracy(prior="informative")``
        (``BayesianCalibrationError(classwise=True, prior="informative")`` for
        ``task="least_calibrated"``, ``BayesianMisclassificationCost(
        prior="informative")`` for ``task="most_costly"``).
    strategy : {"thompson", "random", "top_two", "multiple_play", \
"epsilon_greedy", "bayes_ucb"}, default="thompson"
        ``"random"`` is the non-active baseline: a row drawn uniformly from
        the remaining pool, i.e. groups in proportion to their unlabeled rows.
    task : {"estimate", "least_accurate", "most_accurate", "least_calibrated", \
"most_costly", "compare"}, default="estimate"
        What the labels are for (see Notes).
    top_m : int, default=1
        Identification of the ``top_m`` groups (used by ``"multiple_play"``).
    compare : tuple of two group labels, default=None
        The groups to compare, for ``task="compare"``.
    rope : float, default=0.05
        Half-width of the region of practical equivalence of the comparison,
        in metric units.
    stop_confidence : float, default=None
        ``task="compare"`` only: :meth:`run` stops once the probability
        ``lambda`` of the most probable region reaches this value.
    epsilon : float, default=0.1
        Exploration rate of ``"epsilon_greedy"``.
    top_two_beta : float, default=0.5
        Probability of labeling the leader in ``"top_two"``.
    ucb_quantile : float, default=0.975
        Posterior quantile of ``"bayes_ucb"``.
    prior_update : CalibratedPrior, default=None
        A prior learned from the labels: after every :meth:`tell` (and at
        :meth:`fit` when rows are labeled already) it refits a calibration
        map on all labeled rows and sets the estimator's prior to the
        calibrated group means, with an empirical-Bayes strength
        (``estimator_.prior`` then holds the ``(n_groups, 2)`` pseudo-counts).
        Needs a per-group accuracy estimator. None: the estimator's own prior.
    random_state : int, RandomState instance or None, default=None
        Seeds the strategy and the choice of rows; one private generator is
        kept, so a pickled assessor resumes the same sequence.

    Attributes
    ----------
    estimator_ : metric estimator
        The current posterior.
    labels_ : ndarray of shape (n_pool,)
        Label of every pool row as a class index, ``-1`` while unlabeled.
    groups_ : pandas.Index
        The groups (arms) the strategy chooses between.
    history_ : pandas.DataFrame
        One row per recorded label: ``step`` (the :meth:`tell` call),
        ``index`` (pool row), ``group``, ``label`` (as given) and ``time``.
    n_labeled_ : int
        Labeled pool rows.
    prior_update_ : CalibratedPrior or None
        The fitted ``prior_update``.

    See Also
    --------
    simulate : Many runs over a fully labeled pool, to compare strategies.

    Notes
    -----
    The rewards (Ji et al. 2021, Table 1): for ``"estimate"`` the expected
    drop of the ``p_g``-weighted posterior variance of the group rates (the
    Dirichlet analogue for a confusion matrix; ``p_b^2`` weights for the ECE
    of a :class:`~skassess.metrics.BayesianCalibrationError`); for
    identification the sampled rate itself, the class ECE
    ``sum_b p_gb |theta_gb - s_gb|`` or the expected cost
    ``sum_j C[j, k] theta_kj``; for ``"compare"`` the expected confidence
    ``lambda`` after one more label.

    References
    ----------
    D. Ji, R. L. Logan IV, P. Smyth, M. Steyvers, "Active Bayesian Assessment
    of Black-Box Classifiers", AAAI 2021.

    Examples
    --------
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> from skassess.samplers import ActiveAssessor
    >>> data = load_fashion_mnist_scores()
    >>> assessor = ActiveAssessor(task="least_accurate", random_state=0)
    >>> assessor = assessor.fit(data.scores)
    >>> idx = assessor.query(3)
    >>> assessor = assessor.tell(idx, data.target[idx])
    >>> assessor = assessor.run(data.target, budget=100, progress=False)
    >>> assessor.n_labeled_
    103
    >>> worst = assessor.estimator_.summary()["mean"].idxmin()
    >>> data.class_names[worst]  # the least accurate class on all 10,000 labels
    'Pullover'
    """

    def __init__(
        self,
        estimator=None,
        *,
        strategy="thompson",
        task="estimate",
        top_m=1,
        compare=None,
        rope=0.05,
        stop_confidence=None,
        epsilon=0.1,
        top_two_beta=0.5,
        ucb_quantile=0.975,
        prior_update=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.strategy = strategy
        self.task = task
        self.top_m = top_m
        self.compare = compare
        self.rope = rope
        self.stop_confidence = stop_confidence
        self.epsilon = epsilon
        self.top_two_beta = top_two_beta
        self.ucb_quantile = ucb_quantile
        self.prior_update = prior_update
        self.random_state = random_state

    # ----------------------------------------------------------------- fitting
    def fit(self, X, y=None, *, groups=None):
        """Take the pool and its already labeled rows.

        Parameters
        ----------
        X : array-like of shape (n_pool, n_classes) or (n_pool,)
            Black-box scores of every pool row.
        y : array-like of shape (n_pool,), default=None
            Labels of rows labeled already, ``-1`` elsewhere. None: no row is
            labeled.
        groups : array-like of shape (n_pool,), default=None
            External groups, for an estimator with ``grouping="external"``.

        Returns
        -------
        self : ActiveAssessor
        """
        check_task(self.task)
        if self.stop_confidence is not None and not (
            isinstance(self.stop_confidence, Real) and 0 < self.stop_confidence <= 1
        ):
            raise ValueError(
                f"stop_confidence must be None or a number in (0, 1]; got "
                f"{self.stop_confidence!r}."
            )
        self._strategy = make_strategy(
            self.strategy, top_m=self.top_m, epsilon=self.epsilon,
            top_two_beta=self.top_two_beta, ucb_quantile=self.ucb_quantile,
        )
        estimator = default_estimator(self.task) if self.estimator is None else self.estimator
        self.estimator_ = clone(estimator).fit(X, y, groups=groups)
        self._setup = Setup(
            self.estimator_, self.task, top_m=self.top_m, compare=self.compare, rope=self.rope
        )
        self._scores, self._pred, self._cell, self._arm = pool_rows(
            self.estimator_, self._setup, X, groups
        )
        n, K = self._scores.shape
        self._classes = self.estimator_._checked_classes(K)
        self.labels_ = check_labels(y, n, K, self._classes).copy()
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        self._rng = np.random.default_rng(seed)
        # Rows grouped by arm, in a random order within each arm; a pointer per
        # arm walks that order, skipping rows labeled since.
        keys = self._arm + self._rng.random(n)
        self._order = np.argsort(keys, kind="stable")
        size = np.bincount(self._arm, minlength=self._setup.n_arms)
        self._arm_end = np.cumsum(size)
        self._pointer = self._arm_end - size
        self._remaining = np.bincount(
            self._arm[self.labels_ < 0], minlength=self._setup.n_arms
        ).astype(np.int64)
        self._history = []
        self._n_steps = 0
        self.prior_update_ = None
        if self.prior_update is not None:
            self.prior_update_ = clone(self.prior_update).fit_pool(
                self.estimator_, self._setup, self._scores, self._cell
            )
            self._refit_prior()
        return self

    def _refit_prior(self):
        """Refit the learned prior from every labeled row; no-op without labels."""
        rows = np.flatnonzero(self.labels_ >= 0)
        if self.prior_update_ is None or len(rows) == 0:
            return
        est = self.estimator_
        self.prior_update_.set_outcomes(self._pred == self.labels_)
        state = BetaState(est.prior_.prior_alpha, est.prior_.prior_beta, 1)
        state.successes[0] = est.n_success_
        state.trials[0] = est.n_labeled_
        self.prior_update_.update(state, rows[None, :])
        est.prior = np.column_stack([state.a0[0], state.b0[0]])
        est._update_posterior()

    @property
    def groups_(self):
        check_is_fitted(self)
        return self._setup.arm_labels

    @property
    def n_labeled_(self):
        check_is_fitted(self)
        return int((self.labels_ >= 0).sum())

    @property
    def history_(self):
        check_is_fitted(self)
        return pd.DataFrame(self._history, columns=HISTORY_COLUMNS)

    # -------------------------------------------------------------- ask / tell
    def _available_rows(self):
        return int(self._remaining[self._setup.task.allowed].sum())

    def query(self, n=1):
        """Pool indices of the next ``n`` rows to label.

        With ``n > 1`` each index comes from its own posterior draw (batch
        Thompson sampling), without waiting for the labels.

        Parameters
        ----------
        n : int, default=1

        Returns
        -------
        indices : ndarray of shape (n,)
            Rows not labeled yet, all different.

        Raises
        ------
        ValueError
            If fewer than ``n`` rows the task may label are left.
        """
        check_is_fitted(self)
        if not isinstance(n, Integral) or n < 1:
            raise ValueError(f"n must be a positive integer; got {n!r}.")
        left = self._available_rows()
        if n > left:
            raise ValueError(
                f"The pool is exhausted: {left} unlabeled rows are left for task="
                f"{self.task!r}, and query asked for n={n}."
            )
        remaining = self._remaining.copy()
        pointer = self._pointer.copy()
        out = np.empty(n, dtype=np.intp)
        for i in range(n):
            state = initial_state(self.estimator_, self._setup, 1)
            arm = int(self._strategy.choose(self._setup.task, state, remaining[None], self._rng)[0])
            out[i], pointer[arm] = self._next_row(arm, pointer[arm], out[:i])
            remaining[arm] -= 1
        return out

    def _next_row(self, arm, pointer, taken):
        while pointer < self._arm_end[arm]:
            row = self._order[pointer]
            pointer += 1
            if self.labels_[row] < 0 and row not in taken:
                return row, pointer
        raise RuntimeError("No unlabeled row left in the chosen group.")  # pragma: no cover

    def tell(self, indices, labels):
        """Record labels of pool rows and update the posterior.

        Parameters
        ----------
        indices : array-like of int, shape (n,)
            Pool row indices (any rows, not only queried ones).
        labels : array-like of shape (n,)
            Their true labels (class indices, or names with the estimator's
            ``classes``).

        Returns
        -------
        self : ActiveAssessor

        Raises
        ------
        ValueError
            If an index is outside the pool, a label is not a class, or a row
            gets a label different from the one it already has (a repeated
            identical label is ignored).
        """
        check_is_fitted(self)
        indices = self._check_indices(indices)
        given = _as_label_array(labels, self._classes)
        if given.ndim != 1 or len(given) != len(indices):
            raise ValueError(
                f"labels must be one label per index: got {len(indices)} indices and labels "
                f"of shape {given.shape}."
            )
        y = check_labels(given, len(indices), self._scores.shape[1], self._classes, name="labels")
        if np.any(y < 0):
            i = int(np.flatnonzero(y < 0)[0])
            raise ValueError(f"labels must be true labels, not -1 (unlabeled); position {i}.")
        # The label a row had before this row of the call: its recorded label, or
        # the one given first for it in this call. Vectorized: a replayed history
        # of thousands of labels is one call.
        order = np.argsort(indices, kind="stable")
        first = np.ones(len(indices), dtype=bool)
        first[order[1:]] = indices[order[1:]] != indices[order[:-1]]
        first_label = np.empty_like(y)
        group_start = np.maximum.accumulate(np.where(first[order], np.arange(len(order)), 0))
        first_label[order] = y[order[group_start]]
        old = np.where(first, self.labels_[indices], first_label)
        recorded = self.labels_[indices]
        old = np.where(recorded >= 0, recorded, old)
        clash = (old >= 0) & (old != y)
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            raise ValueError(
                f"Row {indices[i]} already has the label {_py(self._label_name(old[i]))!r}; got "
                f"{_py(self._label_name(y[i]))!r}. A recorded label cannot change."
            )
        new = first & (recorded < 0)
        rows, y_new = indices[new], y[new]
        if len(rows) == 0:
            return self
        self.estimator_._add_labels(self._pred[rows], self._cell[rows], y_new)
        self.labels_[rows] = y_new
        self._refit_prior()
        np.subtract.at(self._remaining, self._arm[rows], 1)
        now = time.time()
        arm_labels = self._setup.arm_labels
        self._n_steps += 1
        for row, label in zip(rows.tolist(), given[new].tolist(), strict=False):
            self._history.append(
                (self._n_steps, row, _py(arm_labels[self._arm[row]]), _py(label), now)
            )
        return self

    def _label_name(self, code):
        return code if self._classes is None else self._classes[code]

    def _check_indices(self, indices):
        indices = np.asarray(indices)
        n = len(self.labels_)
        if indices.ndim != 1 or not (
            np.issubdtype(indices.dtype, np.integer) or indices.size == 0
        ):
            raise ValueError(f"indices must be a 1-D array of integers; got {indices!r}.")
        bad = (indices < 0) | (indices >= n)
        if bad.any():
            raise ValueError(
                f"indices must lie in the pool, 0..{n - 1}; got {_py(indices[bad][0])}."
            )
        return indices.astype(np.intp)

    # ------------------------------------------------------------------- loop
    def comparison_probabilities(self):
        """Probabilities of ``Delta < -rope``, ``|Delta| <= rope``, ``Delta > rope`` (compare task).

        ``Delta`` is the rate of the first compared group minus the second's.
        """
        check_is_fitted(self)
        if self.task != "compare":
            raise ValueError("comparison_probabilities needs task='compare'.")
        a, b = self._setup.task.pair
        post = self.estimator_.posterior_
        probs = comparison_probabilities(
            [[post.alpha[a], post.beta[a]]], [[post.alpha[b], post.beta[b]]], self.rope
        )
        return tuple(float(p) for p in probs[0])

    def run(self, oracle, budget, *, batch_size=1, progress=True, callback=None):
        """Query and label until ``budget`` labels are recorded (or a stop rule fires).

        Parameters
        ----------
        oracle : array-like of shape (n_pool,) or callable
            True labels of the pool, or a function ``indices -> labels``
            (e.g. a call to human annotators).
        budget : int
            Labels to record. More than the unlabeled rows left: all of them
            are labeled, with a warning.
        batch_size : int, default=1
            Rows per query (per oracle call).
        progress : bool, default=True
            Show a tqdm progress bar.
        callback : callable, default=None
            Called as ``callback(self)`` after each batch; returning True stops.

        Returns
        -------
        self : ActiveAssessor
        """
        check_is_fitted(self)
        if not isinstance(budget, Integral) or budget < 1:
            raise ValueError(f"budget must be a positive integer; got {budget!r}.")
        if not isinstance(batch_size, Integral) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer; got {batch_size!r}.")
        if not callable(oracle):
            oracle = _ArrayOracle(oracle, len(self.labels_), self._classes)
        left = self._available_rows()
        if budget > left:
            warnings.warn(
                f"budget={budget} is larger than the {left} unlabeled rows the task can "
                f"label; labeling those {left}.",
                SkassessWarning,
                stacklevel=2,
            )
            budget = left
        from tqdm.auto import tqdm

        with tqdm(total=budget, disable=not progress, desc="labels") as bar:
            done = 0
            while done < budget:
                idx = self.query(min(batch_size, budget - done))
                labels = oracle(idx)
                if np.ndim(labels) != 1 or len(labels) != len(idx):
                    raise ValueError(
                        f"The oracle must return one label per index: asked for {len(idx)}, "
                        f"got {np.shape(labels)}."
                    )
                self.tell(idx, labels)
                done += len(idx)
                bar.update(len(idx))
                if callback is not None and callback(self):
                    break
                if self._should_stop():
                    break
        return self

    def _should_stop(self):
        if self.task != "compare" or self.stop_confidence is None:
            return False
        return max(self.comparison_probabilities()) >= self.stop_confidence

    def summary(self, level=0.95):
        """The posterior summary of the wrapped estimator."""
        check_is_fitted(self)
        return self.estimator_.summary(level)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.positive_only = True
        return tags


def _as_label_array(labels, classes):
    # A list of names keeps its items as given (numpy would turn [-1, "a"] into strings).
    if classes is not None and isinstance(labels, list):
        return np.asarray(labels, dtype=object)
    return np.asarray(labels)


class _ArrayOracle:
    def __init__(self, labels, n, classes):
        labels = _as_label_array(labels, classes)
        if labels.ndim != 1 or len(labels) != n:
            raise ValueError(
                f"oracle as an array must hold one label per pool row ({n}); got shape "
                f"{labels.shape}."
            )
        self.labels = labels

    def __call__(self, indices):
        return self.labels[indices]
