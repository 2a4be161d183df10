"""From a fitted metric estimator and a task name to arms, a task and a strategy."""

import numpy as np
import pandas as pd

from ..metrics import (
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
    BetaPosterior,
    NestedDirichletPosterior,
    rate_terms,
)
from ..utils._sklearn_compat import validate_estimator_params
from ..utils._validation import check_classes, check_predictions, check_scores, top1
from ._base import GroupStrategy, QueryStrategy
from ._epsilon_greedy import EpsilonGreedy
from ._lucb import LUCBSampling
from ._multiple_play import MultiplePlayThompsonSampling
from ._random import RandomSampling
from ._rewards import (
    CompareTwo,
    EstimateConfusion,
    EstimateRates,
    ExtremeRate,
    LeastCalibrated,
    MostCostly,
)
from ._thompson import ThompsonSampling
from ._top_two import TopTwoThompsonSampling
from ._ucb import BayesianUCB
from ._variance import VarianceSampling

STRATEGIES = {
    "random": RandomSampling,
    "thompson": ThompsonSampling,
    "top_two": TopTwoThompsonSampling,
    "multiple_play": MultiplePlayThompsonSampling,
    "epsilon_greedy": EpsilonGreedy,
    "bayes_ucb": BayesianUCB,
    "lucb": LUCBSampling,
    "variance": VarianceSampling,
}


def default_estimator(task, *, conjugate=False):
    """The metric estimator a task uses when none is given.

    The calibrated prior (the package's default); with ``conjugate``, the
    informative prior, whose updates are conjugate (what ``simulate`` runs).
    """
    if task == "least_calibrated":
        return BayesianCalibrationError(classwise=True, prior="informative")
    prior = "informative" if conjugate else "calibrated"
    if task == "most_costly":
        return BayesianMisclassificationCost(prior=prior)
    return BayesianAccuracy(prior=prior)


def make_strategy(strategy, *, top_m=1):
    """A strategy object from its name, or the (validated) object itself."""
    if isinstance(strategy, QueryStrategy):
        validate_estimator_params(strategy)
        return strategy
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise ValueError(
            f"strategy must be one of {tuple(STRATEGIES)} or a QueryStrategy instance; got "
            f"{strategy!r}."
        )
    if strategy == "multiple_play":
        return MultiplePlayThompsonSampling(m=top_m)
    return STRATEGIES[strategy]()


def is_group_strategy(strategy):
    return isinstance(strategy, GroupStrategy)


def _beta_metric_ok(estimator):
    return isinstance(estimator, BayesianCalibrationError) or (
        isinstance(estimator, BayesianAccuracy) and estimator.metric == "accuracy"
    )


def _need(task, estimator, ok, what):
    if not ok:
        raise ValueError(
            f"task={task!r} needs {what}; got the estimator {type(estimator).__name__}"
            + (f"(metric={estimator.metric!r})" if hasattr(estimator, "metric") else "")
            + "."
        )


class Setup:
    """Arms, cells and the task for a fitted estimator.

    Attributes
    ----------
    posterior : {"beta", "dirichlet"}
    n_arms : int
    arm_of_cell : ndarray or None
        Arm of each posterior cell when an arm holds several cells (the
        classes of a class x bin grouping); None when cells are arms.
    task : the reward object.
    arm_labels : pandas.Index
    """

    def __init__(self, estimator, task, *, top_m=1, compare=None, rope=0.05):
        # task, top_m and rope passed their constraints in the caller (ActiveAssessor's
        # parameters, simulate's arguments); what is checked here depends on the data.
        self.posterior = "dirichlet" if isinstance(estimator, BayesianConfusionMatrix) else "beta"
        self.arm_of_cell = None
        self._rate_weights = False
        labels = estimator.groups_
        G = len(labels)
        rate = isinstance(estimator, BayesianAccuracy) and estimator.metric != "accuracy"
        if self.posterior == "beta":
            _need(
                task,
                estimator,
                _beta_metric_ok(estimator) or (rate and task == "estimate"),
                "BayesianAccuracy(metric='accuracy') or BayesianCalibrationError"
                + (" (a binary rate's estimator takes task='estimate' only)" if rate else ""),
            )
        weights = estimator.group_weights_
        if task == "estimate":
            if self.posterior == "dirichlet":
                self.task = EstimateConfusion(weights)
            elif isinstance(estimator, BayesianCalibrationError):
                self.task = EstimateRates(weights, power=2)
            elif rate:
                self.task = EstimateRates(_rate_arm_weights(estimator))
                self._rate_weights = True
            else:
                self.task = EstimateRates(weights)
        elif task in ("least_accurate", "most_accurate"):
            _need(
                task,
                estimator,
                isinstance(estimator, BayesianAccuracy),
                "BayesianAccuracy(metric='accuracy')",
            )
            self.task = ExtremeRate(G, highest=task == "most_accurate")
            # A group without pool rows has no accuracy to be the lowest or highest.
            self.task.allowed = np.asarray(weights) > 0
        elif task == "least_calibrated":
            _need(
                task,
                estimator,
                isinstance(estimator, BayesianCalibrationError) and estimator.classwise,
                "BayesianCalibrationError(classwise=True)",
            )
            n_bins = len(estimator.bin_edges_) - 1
            n_rows = estimator.n_rows_.reshape(-1, n_bins)
            with np.errstate(invalid="ignore", divide="ignore"):
                bin_weights = np.nan_to_num(n_rows / n_rows.sum(axis=1, keepdims=True))
            self.task = LeastCalibrated(bin_weights, estimator.confidence_.reshape(-1, n_bins))
            self.arm_of_cell = np.arange(G) // n_bins
            labels = pd.Index(estimator.classes_, name="predicted_class")
        elif task == "most_costly":
            _need(
                task,
                estimator,
                isinstance(estimator, BayesianMisclassificationCost),
                "BayesianMisclassificationCost",
            )
            self.task = MostCostly(estimator.cost_matrix_)
        else:  # compare
            _need(
                task,
                estimator,
                isinstance(estimator, BayesianAccuracy),
                "BayesianAccuracy(metric='accuracy')",
            )
            a, b = _compare_pair(compare, labels)
            self.task = CompareTwo(G, a, b, float(rope))
        self.n_arms = self.task.n_arms
        self.arm_labels = labels
        if top_m > self.n_arms:
            raise ValueError(
                f"top_m must be an integer from 1 to the number of groups ({self.n_arms}); "
                f"got {top_m!r}."
            )

    def refresh(self, estimator):
        """After labels: the task's weights that the labels move (a binary rate's
        ``P(condition | g)`` where the condition is the class)."""
        if getattr(self, "_rate_weights", False):  # False in a setup pickled before it
            self.task.weights = _rate_arm_weights(estimator)


def _rate_arm_weights(estimator):
    """The estimate reward's weight of each group of a binary rate.

    The group's share of the rate's condition rows (``p_g P(condition | g)``,
    its weight in the pool's rate). Where a label moves the rate's posterior
    only if the condition holds on its row, times the chance that it does
    (``P(condition | g)`` again): for a rate conditioned on the prediction
    (PPV, NPV; a row predicted otherwise enters neither of its counts) and,
    for any rate, under a prior of counts per group. Under the calibrated
    prior a rate conditioned on the class (TPR, FPR) learns from every label:
    each row's class informs the map of its predicted class, and both maps
    enter the rate.
    """
    share = np.asarray(estimator.group_weights_, dtype=np.float64)
    k = np.array([0, 1])
    if np.array_equal(rate_terms(estimator.metric, k, 0)[0], rate_terms(estimator.metric, k, 1)[0]):
        # the condition is the prediction's (PPV, NPV): known on every row
        with np.errstate(invalid="ignore", divide="ignore"):
            condition = np.nan_to_num(estimator.n_condition_rows_ / estimator.n_rows_)
        return share * condition**2
    condition = estimator.condition_posterior_.mean()
    calibrated = isinstance(estimator.prior, str) and estimator.prior in ("calibrated", "auto")
    return share * condition ** (1 if calibrated else 2)


def _compare_pair(compare, labels):
    if compare is None or isinstance(compare, str) or len(compare) != 2:
        raise ValueError(
            f"task='compare' needs compare=(group_a, group_b), two group labels; got {compare!r}."
        )
    index = []
    for g in compare:
        if g not in labels:
            raise ValueError(
                f"compare names the group {g!r}, which does not exist; groups are {list(labels)}."
            )
        index.append(labels.get_loc(g))
    if index[0] == index[1]:
        raise ValueError(f"compare needs two different groups; got {compare!r}.")
    return index[0], index[1]


def pool_rows(estimator, setup, X, group_by=None, y_pred=None):
    """Validated scores, predicted class, posterior cell and arm of each pool row."""
    scores = check_scores(X, n_classes=estimator.n_classes_)
    n, K = scores.shape
    classes = None if estimator.classes is None else check_classes(estimator.classes, K)
    pred = None if y_pred is None else check_predictions(y_pred, n, K, classes)
    pred, _ = top1(scores, pred)
    cell = estimator.apply(X, group_by=group_by, y_pred=y_pred)
    arm = cell if setup.arm_of_cell is None else setup.arm_of_cell[cell]
    return scores, pred, cell, arm


def initial_state(estimator, setup, n_runs):
    """The estimator's current posterior, repeated over ``n_runs`` runs (a leading axis)."""
    post = estimator.posterior_

    def tile(a):
        return np.broadcast_to(a, (n_runs,) + a.shape)

    if setup.posterior == "dirichlet":
        return NestedDirichletPosterior(
            tile(post.prior_alpha), tile(post.prior_failures), tile(post.counts)
        )
    prior_alpha, prior_beta = post.prior_alpha, post.prior_beta
    flagged = _departing_groups(estimator, setup)
    if flagged.any():
        # A group whose labels depart from the shared map: its labels alone (a
        # uniform prior), so that a search for the extreme group looks at it.
        prior_alpha = np.where(flagged, 1.0, prior_alpha)
        prior_beta = np.where(flagged, 1.0, prior_beta)
    return BetaPosterior(
        tile(prior_alpha), tile(prior_beta), tile(post.successes), tile(post.failures)
    )


def _departing_groups(estimator, setup):
    """The groups that the departure check flags, for the searches of the least or
    most accurate group (all False for other tasks, where the check is not read)."""
    none = np.zeros(setup.n_arms, dtype=bool)
    threshold = getattr(estimator, "departure_threshold", None)
    if threshold is None or not isinstance(setup.task, ExtremeRate):
        return none
    try:
        p_values = estimator.departure_  # 1 for a group without labels
    except AttributeError:  # the check does not apply (a rate, a prior of counts)
        return none
    return p_values.to_numpy() < threshold
