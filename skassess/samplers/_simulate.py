"""Many independent active-assessment runs over a fully labeled pool.

This is the experimental protocol of Ji et al. (2021): the whole pool has
labels, each run hides them and reveals one label per step to the strategy;
the estimate is logged every ``log_every`` labels and scored against the
truth computed from all labels.

Runs advance in lockstep, vectorized over a chunk of runs (one numpy call per
step for the whole chunk); chunks go through joblib, so ``n_jobs`` (or a
Dask / Ray joblib backend) spreads them out. Each chunk has its own seed from
``random_state`` and the chunk size is fixed, so results do not depend on
``n_jobs``.
"""

from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn import config_context
from sklearn.base import clone
from sklearn.utils import Bunch

from ..metrics import BayesianCalibrationError
from ..utils._params import validate_params
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_estimator_params
from ..utils._validation import check_classes, check_labels
from ._base import GroupStrategy, QueryStrategy
from ._calibrated_prior import CalibratedPrior
from ._evaluate import EVALUATIONS, make_evaluator
from ._prior_update import PooledPriorUpdate
from ._rewards import TASKS
from ._setup import (
    STRATEGIES,
    Setup,
    default_estimator,
    initial_state,
    make_strategy,
    pool_rows,
)

CHUNK = 100


_POSITIVE = Interval(Integral, 1, None, closed="left")


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "estimator": [HasMethods(["fit", "add_labels", "apply"]), None],
        "task": [StrOptions(set(TASKS))],
        "strategy": [StrOptions(set(STRATEGIES)), QueryStrategy],
        "budget": [_POSITIVE, None],
        "n_runs": [_POSITIVE],
        "log_every": [_POSITIVE],
        "evaluate": [StrOptions(set(EVALUATIONS)), callable, None],
        "group_by": ["array-like", None],
        "y_pred": ["array-like", None],
        "top_m": [_POSITIVE],
        "compare": [tuple, list, None],
        "rope": [Interval(Real, 0, None, closed="left")],
        "prior_update": [CalibratedPrior, None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "progress": ["boolean"],
    },
    prefer_skip_nested_validation=False,
)
def simulate(
    X,
    y,
    *,
    estimator=None,
    task="estimate",
    strategy="thompson",
    budget=None,
    n_runs=1000,
    log_every=10,
    evaluate=None,
    group_by=None,
    y_pred=None,
    top_m=1,
    compare=None,
    rope=0.05,
    prior_update=None,
    n_jobs=None,
    random_state=None,
    progress=False,
):
    """Run active assessment ``n_runs`` times on a fully labeled pool.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_classes) or (n_samples,)
        Black-box scores of the pool.
    y : array-like of shape (n_samples,)
        True labels of every row (the simulation reveals them one at a time).
    estimator : skassess metric estimator, default=None
        Gives the grouping and the prior (it is cloned and fitted on the
        unlabeled pool). None: ``BayesianAccuracy(prior="informative")``
        (``BayesianCalibrationError(classwise=True, prior="informative")`` for
        ``task="least_calibrated"``, ``BayesianMisclassificationCost(
        prior="informative")`` for ``task="most_costly"``): the paper's
        conjugate protocol. ``prior="hierarchical"`` and the calibrated prior
        are refused (the runs would not refit them); use
        :class:`ActiveAssessor`, whose default is the calibrated prior.
    task : str, default="estimate"
        One of ``"estimate"``, ``"least_accurate"``, ``"most_accurate"``,
        ``"least_calibrated"``, ``"most_costly"``, ``"compare"``.
    strategy : str or GroupStrategy, default="thompson"
        ``"random"``, ``"thompson"``, ``"top_two"``, ``"multiple_play"``,
        ``"epsilon_greedy"`` or ``"bayes_ucb"``, or a group strategy object
        (e.g. ``EpsilonGreedy(epsilon=0.2)``). The simulation advances runs
        group by group, so item-level strategies are not simulated here, nor
        ``"lucb"``, which needs each run's anytime-valid intervals.
    budget : int, default=None
        Labels per run; None labels the whole pool (for ``task="compare"``,
        both groups).
    n_runs : int, default=1000
    log_every : int, default=10
        Score the estimate after every ``log_every`` labels (and at the end).
    evaluate : str or callable, default=None
        ``"rmse"``, ``"coverage"`` (share of the groups whose 95 % interval
        holds their accuracy on the pool), ``"confusion_rmse"``,
        ``"ece_error"``, ``"mrr"``, ``"comparison_success"``, or a callable
        ``state -> (n_runs,)`` (the state holds the runs' Beta or Dirichlet
        posteriors).
        None: ``"rmse"`` / ``"confusion_rmse"`` / ``"ece_error"`` for
        estimation (by estimator), ``"mrr"`` for identification,
        ``"comparison_success"`` for comparison.
    group_by : array-like of shape (n_samples,), default=None
        Group of each row, for an estimator with ``grouping="external"``.
    y_pred : array-like of shape (n_samples,), default=None
        The black box's predicted labels; None: the argmax of ``X``.
    top_m : int, default=1
        Number of groups to identify (``"mrr"`` and ``multiple_play``).
    compare : tuple of two group labels, default=None
    rope : float, default=0.05
    prior_update : object, default=None
        Refits the prior from the labels as they arrive, e.g.
        :class:`CalibratedPrior`.
    n_jobs : int, default=None
        Parallel chunks of runs (joblib).
    random_state : int, RandomState instance or None, default=None
    progress : bool, default=False
        Show a progress bar over the chunks.

    Returns
    -------
    result : sklearn.utils.Bunch
        ``n_labels`` (n_logs,): labels at each log; ``by_run`` (n_runs,
        n_logs): the evaluation of every run at every log; ``mean`` (n_logs,);
        ``metric``: the evaluation's name; ``truth``: what it compared with.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> from skassess.samplers import simulate
    >>> data = load_fashion_mnist_scores()
    >>> res = simulate(data.scores, data.target, budget=50, n_runs=20,
    ...                strategy="thompson", random_state=0)
    >>> res.by_run.shape
    (20, 5)
    >>> bool(res.mean[-1] < res.mean[0])
    True
    """
    estimator = clone(default_estimator(task, conjugate=True) if estimator is None else estimator)
    prior = estimator.get_params().get("prior")
    # "auto" is the calibrated prior wherever an estimator offers it (BayesianAccuracy)
    kind = "calibrated" if isinstance(prior, str) and prior == "auto" else prior
    if isinstance(kind, str) and kind in ("hierarchical", "calibrated"):
        raise ValueError(
            f"simulate does not refit the {kind} prior as labels arrive (each run would "
            f"keep the prior of the unlabeled pool); estimator with prior={prior!r} is not "
            f"supported here (it is the {kind} prior). Pass prior='informative' or "
            "'uniform', or use ActiveAssessor, whose estimator refits it after every label."
        )
    estimator.fit(X, group_by=group_by, y_pred=y_pred)
    if getattr(estimator, "metric", "accuracy") != "accuracy":
        # Its runs update each group's Beta with whether the black box was right.
        raise ValueError(
            f"simulate replays accuracy; the estimator's metric={estimator.metric!r} is a "
            "binary rate, whose labels count only where its condition holds. Use "
            "ActiveAssessor(...).run on the labeled pool instead."
        )
    setup = Setup(estimator, task, top_m=top_m, compare=compare, rope=rope)
    strat = make_strategy(strategy, top_m=top_m)
    if not isinstance(strat, GroupStrategy):
        raise ValueError(
            f"simulate runs group strategies; {type(strat).__name__} scores items. Use "
            "ActiveAssessor.run on a labeled pool instead."
        )
    if getattr(strat, "uses_anytime_bounds", False):
        raise ValueError(
            f"{type(strat).__name__} cannot run in simulate: it needs each run's "
            "anytime-valid intervals. Use ActiveAssessor.run on a labeled pool instead."
        )
    scores, pred, cell, arm = pool_rows(estimator, setup, X, group_by, y_pred)
    n, K = scores.shape
    classes = None if estimator.classes is None else check_classes(estimator.classes, K)
    y = check_labels(y, n, K, classes, missing_label=estimator.missing_label)
    if np.any(y < 0):
        raise ValueError(
            "simulate needs the true label of every row; y has "
            f"{int((y < 0).sum())} unlabeled rows (missing_label="
            f"{estimator.missing_label!r})."
        )
    outcome = y if setup.posterior == "dirichlet" else (pred == y).astype(np.int8)
    arm_size = np.bincount(arm, minlength=setup.n_arms)
    pool = int(arm_size[setup.task.allowed].sum())
    if budget is None:
        budget = pool
    if budget > pool:
        raise ValueError(
            f"budget must be at most the rows the task can label ({pool}); got {budget!r}."
        )
    if evaluate is None:
        evaluate = _default_evaluation(task, estimator, setup)
    evaluator = make_evaluator(
        evaluate,
        estimator=estimator,
        setup=setup,
        cell=cell,
        arm=arm,
        pred=pred,
        y=y,
        scores=scores,
        top_m=top_m,
    )
    # Rows grouped by arm; each run labels them in a random order within arms.
    rows_by_arm = np.argsort(arm, kind="stable")
    pool_data = {
        "rows_by_arm": rows_by_arm,
        "arm_sorted": arm[rows_by_arm].astype(np.float64),
        "arm_start": np.concatenate([[0], np.cumsum(arm_size)[:-1]]),
        "arm_size": arm_size,
        "outcome": outcome[rows_by_arm],
        "cell": None if setup.arm_of_cell is None else cell[rows_by_arm],
    }
    if prior_update is not None:
        if setup.posterior != "beta" or setup.arm_of_cell is not None:
            raise ValueError(
                "prior_update needs a per-group accuracy estimator (BayesianAccuracy or "
                "BayesianCalibrationError with classwise=False)."
            )
        prior_update = clone(prior_update)
        validate_estimator_params(prior_update)
        prior_update = PooledPriorUpdate(prior_update, scores, pred, cell, len(estimator.groups_))
        pool_data["rows"] = rows_by_arm
        pool_data["correct"] = (pred == y).astype(np.float64)
    logs = np.unique(np.r_[np.arange(log_every, budget + 1, log_every), budget])
    seeds = np.random.SeedSequence(_entropy(random_state)).spawn(-(-n_runs // CHUNK))
    sizes = [min(CHUNK, n_runs - i * CHUNK) for i in range(len(seeds))]
    jobs = (
        delayed(_run_chunk)(
            estimator,
            setup,
            strat,
            evaluator,
            pool_data,
            size,
            budget,
            logs,
            seed,
            prior_update,
        )
        for size, seed in zip(sizes, seeds, strict=False)
    )
    parallel = Parallel(n_jobs=n_jobs, return_as="generator")
    chunks = parallel(jobs)
    if progress:
        from tqdm.auto import tqdm

        chunks = tqdm(chunks, total=len(sizes), desc=f"{task}/{getattr(strat, 'name', strat)}")
    values = np.concatenate(list(chunks), axis=0)
    return Bunch(
        n_labels=logs,
        by_run=values,
        mean=values.mean(axis=0),
        metric=evaluator.name,
        truth=evaluator.truth,
    )


def _entropy(random_state):
    if random_state is None:
        return None
    if isinstance(random_state, Integral):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31))
    raise ValueError(f"random_state must be None or an int; got {random_state!r}.")


def _default_evaluation(task, estimator, setup):
    if task == "estimate":
        if setup.posterior == "dirichlet":
            return "confusion_rmse"
        if isinstance(estimator, BayesianCalibrationError):
            return "ece_error"
        return "rmse"
    if task == "compare":
        return "comparison_success"
    return "mrr"


def _run_chunk(*args):
    # simulate validated every argument and parameter on entry; the steps
    # call validated functions (rope_probabilities, fit_llo) thousands of
    # times, so they skip the repeated checks, in this worker too.
    with config_context(skip_parameter_validation=True):
        return _run_chunk_unchecked(*args)


def _run_chunk_unchecked(
    estimator, setup, strategy, evaluator, pool, n_runs, budget, logs, seed, prior_update
):
    rng = np.random.default_rng(seed)
    state = initial_state(estimator, setup, n_runs)
    evaluator = evaluator.start(n_runs)
    runs = np.arange(n_runs)
    # Within-arm random order per run: sort arm + U(0, 1) keys.
    order = np.argsort(pool["arm_sorted"] + rng.random((n_runs, len(pool["arm_sorted"]))), axis=1)
    outcome = pool["outcome"][order]
    cell_seq = None if pool["cell"] is None else pool["cell"][order]
    taken = np.zeros((n_runs, setup.n_arms), dtype=np.int64)
    size, start = pool["arm_size"], pool["arm_start"]
    chosen = np.empty((n_runs, budget), dtype=np.int64) if prior_update is not None else None
    out = np.empty((n_runs, len(logs)))
    log_at = dict(zip(logs.tolist(), range(len(logs)), strict=False))
    for t in range(budget):
        arm = strategy.choose(setup.task, state, size - taken, rng)
        pos = start[arm] + taken[runs, arm]
        cells = arm if cell_seq is None else cell_seq[runs, pos]
        state = state.record((runs, cells), outcome[runs, pos])
        taken[runs, arm] += 1
        if chosen is not None:
            chosen[:, t] = pos
        # the prior is refitted on the t + 1 labels before they are scored, as
        # ActiveAssessor refits after each tell
        if prior_update is not None and prior_update.due(t + 1):
            rows = pool["rows"][np.take_along_axis(order, chosen[:, : t + 1], axis=1)]
            state = prior_update.update(state, rows, pool["correct"])
        if t + 1 in log_at:
            out[:, log_at[t + 1]] = evaluator(state)
    return out
