"""Simulation-based calibration (Talts et al. 2018) of HierarchicalBetaCalibrator.

Each replicate draws the population and group parameters from the model's own
prior, scores and labels from them, and fits the calibrator: if the sampler
draws from the posterior, the rank of each true parameter among ``L``
posterior draws is uniform on ``0..L``. The ranks of every replicate are
pooled per parameter and tested for uniformity (chi-square on ``N_BINS``
bins). ``SKASSESS_SBC_REPS`` sets the replicates (default 60 here;
``benchmarks/bench_sbc.py`` runs more and prints the histograms).
"""

import os
import warnings

import numpy as np
import pytest
from scipy.special import expit, ndtri
from scipy.stats import chisquare

from skassess.calibration import HierarchicalBetaCalibrator
from skassess.calibration._hierarchical_model import MU_SCALE, N_SIGMA_NODES, SIGMA_SCALE

N_REPS = int(os.environ.get("SKASSESS_SBC_REPS", "60"))
N_DRAWS = 19  # ranks 0..19: 20 values, 4 per bin
N_BINS = 5
GROUPS = 2
ROWS = 40  # labeled rows per group
NAMES = ["log a[0]", "log a[1]", "c[0]", "c[1]", "mu_a", "mu_c", "sigma_a", "sigma_c"]


def _replicate(seed):
    """True parameters and their ranks among the posterior draws of one replicate."""
    rng = np.random.default_rng(seed)
    mu_scale = np.array([MU_SCALE["a"], MU_SCALE["c"]])
    # the prior of the fitted model: each scale on N_SIGMA_NODES nodes of equal
    # half-normal mass, the mean normal, the groups normal around it
    nodes = ndtri(0.5 + 0.5 * (np.arange(N_SIGMA_NODES) + 0.5) / N_SIGMA_NODES)
    sigma = nodes[rng.integers(N_SIGMA_NODES, size=2)] * np.array(
        [SIGMA_SCALE["a"], SIGMA_SCALE["c"]]
    )
    mu = rng.normal(0.0, mu_scale)
    t = mu + sigma * rng.normal(size=(GROUPS, 2))  # (log a, c) per group
    s = rng.uniform(0.02, 0.98, GROUPS * ROWS)
    g = np.repeat(np.arange(GROUPS), ROWS)
    a, c = np.exp(t[g, 0]), t[g, 1]
    y = (rng.random(len(s)) < expit(c + a * np.log(s) - a * np.log1p(-s))).astype(int)
    cal = HierarchicalBetaCalibrator("llo", random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an all-one-outcome replicate warns; it counts too
        cal.fit(s, y, group_by=g)
    take = np.linspace(0, len(cal.draws_) - 1, N_DRAWS).round().astype(np.intp)
    draws = cal.draws_[take]
    hyper = cal.hyper_draws_.to_numpy()[take]
    posterior = np.column_stack([np.log(draws[:, :, 0]), draws[:, :, 2], hyper])
    truth = np.concatenate([t[:, 0], t[:, 1], mu, sigma])
    below = (posterior < truth).sum(axis=0)
    ties = (posterior == truth).sum(axis=0)  # sigma lives on nodes: break ties at random
    return below + rng.integers(0, ties + 1)


def sbc_ranks(n_reps, first_seed=0):
    """Ranks ``(n_reps, 8)`` of the true parameters (``NAMES``) among ``N_DRAWS`` draws."""
    return np.array([_replicate(first_seed + i) for i in range(n_reps)])


def rank_histograms(ranks):
    """Counts per bin ``(N_BINS, 8)`` and the chi-square p-value of uniformity per parameter."""
    counts = np.stack(
        [np.bincount(r * N_BINS // (N_DRAWS + 1), minlength=N_BINS) for r in ranks.T], axis=1
    )
    return counts, chisquare(counts, axis=0).pvalue


@pytest.mark.slow
def test_the_ranks_of_the_true_parameters_are_uniform():
    ranks = sbc_ranks(N_REPS)
    counts, p = rank_histograms(ranks)
    # 8 parameters at an overall level of 0.001 (Bonferroni): fails on a wrong
    # prior scale, a missing Jacobian or a stuck sampler, not on noise
    assert p.min() > 0.001 / len(NAMES), dict(zip(NAMES, p.round(5), strict=True))
    # and no rank piles up at an end (a posterior too narrow or shifted)
    ends = np.mean((ranks == 0) | (ranks == N_DRAWS))
    assert ends < 3 * 2 / (N_DRAWS + 1)
