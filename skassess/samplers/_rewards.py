"""What a label is worth, per task: the reward of labeling one item of each arm.

A *task* turns the current posterior and a parameter draw ``theta`` (from the
posterior, or its mean, or a quantile) into a reward per arm, shape
``(n_runs, n_arms)``; the strategies choose the arm with the highest reward.
The rewards follow Ji et al. (2021, Table 1):

===================  ==========================================================
task                 reward of arm g at the draw theta
===================  ==========================================================
estimate (accuracy)  p_g (Var[theta_g | L] - E_z Var[theta_g | L, z]),
                     z ~ Bernoulli(theta_g): expected drop of the weighted
                     squared error sum_g p_g (theta_hat_g - theta_g)^2
estimate (rate)      v_g h_g (same variance drop) for a binary rate (TPR,
                     PPV, ...): v_g = p_g P(condition | g) the group's share
                     of the rate's condition rows, h_g the chance that a
                     label of g counts: P(condition | g) for PPV / NPV and
                     under a prior of counts, 1 for TPR / FPR under the
                     calibrated prior (every label informs its maps)
estimate (ECE)       p_b^2 (same variance drop) for score bins: by the delta
                     method Var[ECE] ~ sum_b p_b^2 Var[theta_b]
estimate (confusion) p_k sum_j (drop of Var[theta_kj]), z ~ Categorical(theta_k)
least/most accurate  -theta_g / +theta_g
least calibrated     sum_b p_gb |theta_gb - s_gb| over the bins b of class g
most costly          sum_j C[j, k] theta_kj for predicted class k
compare (a, b)       E_z[lambda after one more label of the arm], lambda the
                     posterior probability of the most probable of
                     Delta < -eps, |Delta| <= eps, Delta > eps
===================  ==========================================================

The comparison reward uses the normal approximation of
:func:`~skassess.metrics.rope_probabilities` (exact mean and variance of
Delta = theta_a - theta_b); it ranks the two arms, it does not report lambda,
which the same function computes by quadrature.
"""

import numpy as np

from ..metrics import BetaPosterior, NestedDirichletPosterior, rope_probabilities

TASKS = (
    "estimate",
    "least_accurate",
    "most_accurate",
    "least_calibrated",
    "most_costly",
    "compare",
)


class _Task:
    """Reward of each arm; ``allowed`` masks arms the task never labels."""

    posterior = "beta"  # or "dirichlet"
    #: The highest reward wins; True when reward = +/- theta (identification).
    identifies = False

    def __init__(self, n_arms):
        self.n_arms = n_arms
        self.allowed = np.ones(n_arms, dtype=bool)

    def reward(self, state, theta):
        raise NotImplementedError


class EstimateRates(_Task):
    """Expected drop of the weighted posterior variance of per-group rates."""

    def __init__(self, weights, power=1):
        super().__init__(len(weights))
        self.weights = np.asarray(weights, dtype=np.float64) ** power

    def reward(self, state, theta):
        a, b = state.alpha, state.beta
        after_success = BetaPosterior(a + 1.0, b).var()
        after_failure = BetaPosterior(a, b + 1.0).var()
        expected = theta * after_success + (1.0 - theta) * after_failure
        return self.weights * (state.var() - expected)


class EstimateConfusion(_Task):
    """Expected drop of the summed cell variances of each predicted class's posterior."""

    posterior = "dirichlet"

    def __init__(self, weights):
        super().__init__(len(weights))
        self.weights = np.asarray(weights, dtype=np.float64)

    def reward(self, state, theta):
        # state: a NestedDirichletPosterior, or a DirichletPosterior (its special case).
        if not isinstance(state, NestedDirichletPosterior):
            state = NestedDirichletPosterior.from_dirichlet(state.alpha)
        drop = state.total_var() - (theta * state.total_var_after()).sum(axis=-1)
        return self.weights * drop


class ExtremeRate(_Task):
    """Find the group with the lowest (``highest=False``) or highest rate."""

    identifies = True

    def __init__(self, n_arms, highest):
        super().__init__(n_arms)
        self.sign = 1.0 if highest else -1.0

    def reward(self, state, theta):
        return self.sign * theta


class LeastCalibrated(_Task):
    """Find the class with the largest ECE over its confidence bins."""

    identifies = True

    def __init__(self, bin_weights, bin_confidence):
        bin_weights = np.asarray(bin_weights, dtype=np.float64)
        super().__init__(bin_weights.shape[0])
        self.bin_weights = bin_weights
        self.bin_confidence = np.nan_to_num(np.asarray(bin_confidence, dtype=np.float64))

    def reward(self, state, theta):
        theta = theta.reshape(theta.shape[:-1] + self.bin_weights.shape)
        return (self.bin_weights * np.abs(theta - self.bin_confidence)).sum(axis=-1)


class MostCostly(_Task):
    """Find the predicted class with the highest expected misclassification cost."""

    posterior = "dirichlet"
    identifies = True

    def __init__(self, cost_matrix):
        cost_matrix = np.asarray(cost_matrix, dtype=np.float64)
        super().__init__(cost_matrix.shape[0])
        self.cost_by_pred = cost_matrix.T  # [k, j] = C[j, k]

    def reward(self, state, theta):
        return (theta * self.cost_by_pred).sum(axis=-1)


class CompareTwo(_Task):
    """Compare groups ``a`` and ``b``: expected confidence after one more label."""

    def __init__(self, n_arms, a, b, rope):
        super().__init__(n_arms)
        self.pair = (a, b)
        self.rope = rope
        self.allowed = np.zeros(n_arms, dtype=bool)
        self.allowed[[a, b]] = True

    def reward(self, state, theta):
        a, b = state.alpha, state.beta
        reward = np.full(a.shape, -np.inf)
        for arm, other in (self.pair, self.pair[::-1]):
            rest = BetaPosterior(a[:, other], b[:, other])
            expected = 0.0
            for z, prob in ((1.0, theta[:, arm]), (0.0, 1.0 - theta[:, arm])):
                after = BetaPosterior(a[:, arm] + z, b[:, arm] + 1.0 - z)
                pair = (after, rest) if arm == self.pair[0] else (rest, after)
                lam = rope_probabilities(pair, self.rope, method="normal").max(axis=-1)
                expected = expected + prob * lam
            reward[:, arm] = expected
        return reward
