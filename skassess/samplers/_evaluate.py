"""How far a run's estimate is from the truth of the fully labeled pool.

===================  ============================================================
name                 value per run (the paper's table)
===================  ============================================================
rmse                 (sum_g p_g (theta_hat_g - theta*_g)^2)^(1/2)       (Table 3)
confusion_rmse       (sum_k p_k sum_j (theta_hat_kj - theta*_kj)^2)^(1/2) (Table 4)
ece_error            100 |ECE_hat - ECE*| / ECE*, ECE_hat = sum_b p_b |theta_hat_b
                     - s_b| at the posterior means                      (Table 5)
mrr                  (1/m) sum_i i / r_(i), r_(1) < ... < r_(m) the estimated ranks
                     of the true top-m groups; 1 when they lead          (Table 6)
comparison_success   1 once the most probable region of Delta is the true one
                     and |lambda - lambda*| / lambda* < 0.05            (Table 7)
===================  ============================================================

``theta_hat`` is the posterior mean. In ``mrr`` groups are ranked by the
task's reward at the posterior mean (lowest accuracy first for
``least_accurate``, and so on). ``lambda*`` is the probability of the true
region under the posterior from all labels of both groups with a near-zero
prior.
"""

import numpy as np

from ..metrics import BetaPosterior, DirichletPosterior, rope_probabilities

EVALUATIONS = ("rmse", "coverage", "confusion_rmse", "ece_error", "mrr", "comparison_success")
#: Level of the per-group intervals ``evaluate="coverage"`` checks.
COVERAGE_LEVEL = 0.95
#: Relative tolerance on lambda in ``comparison_success``.
COMPARISON_TOLERANCE = 0.05
#: Pseudo-counts of the near-zero prior of lambda*, the posterior from all
#: labels of both compared groups.
TINY = 0.5e-6


def make_evaluator(evaluate, *, estimator, setup, cell, arm, pred, y, scores, top_m):
    if callable(evaluate):
        return _Callable(evaluate)
    if not isinstance(evaluate, str) or evaluate not in EVALUATIONS:
        raise ValueError(f"evaluate must be one of {EVALUATIONS} or a callable; got {evaluate!r}.")
    n_cells = len(estimator.groups_)
    weights = np.bincount(cell, minlength=n_cells) / len(cell)
    correct = (pred == y).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.nan_to_num(
            np.bincount(cell, weights=correct, minlength=n_cells)
            / np.bincount(cell, minlength=n_cells)
        )
    if evaluate in ("rmse", "coverage", "ece_error") and setup.posterior != "beta":
        raise ValueError(f"evaluate={evaluate!r} needs a Beta (rate) estimator.")
    if evaluate == "rmse":
        return RMSE(rate, weights)
    if evaluate == "coverage":
        return Coverage(rate, weights > 0)
    if evaluate == "ece_error":
        return ECEError(rate, estimator)
    if evaluate == "confusion_rmse":
        if setup.posterior != "dirichlet":
            raise ValueError("evaluate='confusion_rmse' needs a BayesianConfusionMatrix.")
        K = scores.shape[1]
        counts = np.bincount(pred * K + y, minlength=K * K).reshape(K, K).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            truth = np.nan_to_num(counts / counts.sum(axis=1, keepdims=True))
        return ConfusionRMSE(truth, counts.sum(axis=1) / counts.sum())
    if evaluate == "mrr":
        if not setup.task.identifies:
            raise ValueError("evaluate='mrr' needs an identification task.")
        truth_state = _truth_state(setup, cell, arm, y, pred, n_cells, scores.shape[1])
        true_reward = setup.task.reward(truth_state, truth_state.mean())[0]
        top = np.argsort(-true_reward, kind="stable")[:top_m]
        return MRR(setup.task, top)
    # comparison_success
    if setup.posterior != "beta" or not hasattr(setup.task, "pair"):
        raise ValueError("evaluate='comparison_success' needs task='compare'.")
    a, b = setup.task.pair
    n = np.bincount(cell, minlength=n_cells).astype(float)
    s = np.bincount(cell, weights=correct, minlength=n_cells)
    full = rope_probabilities(
        (
            BetaPosterior(s[a] + TINY, n[a] - s[a] + TINY),
            BetaPosterior(s[b] + TINY, n[b] - s[b] + TINY),
        ),
        setup.task.rope,
    )[0]
    delta = rate[a] - rate[b]
    rope = setup.task.rope
    region = 0 if delta < -rope else (2 if delta > rope else 1)
    return ComparisonSuccess(a, b, rope, region, full[region])


def _truth_state(setup, cell, arm, y, pred, n_cells, n_classes):
    """A one-run state whose posterior mean is the truth of the pool."""
    if setup.posterior == "dirichlet":
        counts = np.bincount(pred * n_classes + y, minlength=n_classes**2).reshape(
            1, n_classes, n_classes
        )
        return DirichletPosterior(np.full(counts.shape, 1e-300), counts)
    trials = np.bincount(cell, minlength=n_cells)[None].astype(np.float64)
    successes = np.bincount(cell, weights=(pred == y), minlength=n_cells)[None]
    return BetaPosterior(np.full(trials.shape, 1e-300), 1e-300, successes, trials - successes)


class _Evaluator:
    name = None
    truth = None

    def start(self, n_runs):
        """A copy for a chunk of ``n_runs`` runs (evaluators may keep state)."""
        return self


class _Callable(_Evaluator):
    def __init__(self, func):
        self.func = func
        self.name = getattr(func, "__name__", "custom")

    def __call__(self, state):
        return np.asarray(self.func(state), dtype=np.float64)


class RMSE(_Evaluator):
    name = "rmse"

    def __init__(self, truth, weights):
        self.truth, self.weights = truth, weights

    def __call__(self, state):
        return np.sqrt(((state.mean() - self.truth) ** 2) @ self.weights)


class Coverage(_Evaluator):
    """Share of the pool's groups whose 95 % interval holds the group's accuracy on the pool."""

    name = "coverage"

    def __init__(self, truth, present):
        self.truth, self.present = truth, present

    def __call__(self, state):
        lower, upper = state.interval(COVERAGE_LEVEL)
        inside = (lower <= self.truth) & (self.truth <= upper)
        return inside[:, self.present].mean(axis=1)


class ECEError(_Evaluator):
    name = "ece_error"

    def __init__(self, rate, estimator):
        self.estimator = estimator  # its calibration_error is the one ECE formula
        self.truth = float(estimator.calibration_error(rate))

    def __call__(self, state):
        ece = self.estimator.calibration_error(state.mean())
        return 100.0 * np.abs(ece - self.truth) / self.truth


class ConfusionRMSE(_Evaluator):
    name = "confusion_rmse"

    def __init__(self, truth, weights):
        self.truth, self.weights = truth, weights

    def __call__(self, state):
        return np.sqrt(((state.mean() - self.truth) ** 2).sum(axis=-1) @ self.weights)


class MRR(_Evaluator):
    name = "mrr"

    def __init__(self, task, top):
        self.task, self.truth = task, top

    def __call__(self, state):
        reward = self.task.reward(state, state.mean())
        # Rank 1 = highest reward; ties count against the true groups.
        true_reward = reward[:, self.truth]
        ranks = (reward[:, None, :] >= true_reward[:, :, None]).sum(axis=2)
        ranks = np.sort(ranks, axis=1)
        m = len(self.truth)
        return (np.arange(1, m + 1) / ranks).mean(axis=1)


class ComparisonSuccess(_Evaluator):
    name = "comparison_success"

    def __init__(self, a, b, rope, region, full_lambda):
        self.a, self.b, self.rope, self.region = a, b, rope, region
        self.truth = full_lambda
        self.done = None

    def start(self, n_runs):
        new = ComparisonSuccess(self.a, self.b, self.rope, self.region, self.truth)
        new.done = np.zeros(n_runs, dtype=bool)
        return new

    def __call__(self, state):
        todo = ~self.done
        if todo.any():
            alpha, beta = state.alpha[todo], state.beta[todo]
            probs = rope_probabilities(
                (
                    BetaPosterior(alpha[:, self.a], beta[:, self.a]),
                    BetaPosterior(alpha[:, self.b], beta[:, self.b]),
                ),
                self.rope,
            )
            lam = probs[:, self.region]
            ok = (probs.argmax(axis=1) == self.region) & (
                np.abs(lam - self.truth) < COMPARISON_TOLERANCE * self.truth
            )
            self.done[np.flatnonzero(todo)[ok]] = True
        return self.done.astype(np.float64)
