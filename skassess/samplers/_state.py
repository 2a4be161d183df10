"""Posterior state of many independent assessment runs at once.

Active assessment updates one conjugate posterior per group after every label.
The simulation engine runs hundreds of such loops in lockstep, so the state
keeps a leading *runs* axis: Beta parameters ``(n_runs, n_cells)`` or
Dirichlet parameters ``(n_runs, n_arms, n_classes)``. ``ActiveAssessor`` uses
the same code with one run.
"""

import numpy as np

from ..metrics._conjugate import dirichlet_draws


def beta_draws(a, b, rng):
    """Beta draws of the same shape as ``a``; exact also for tiny pseudo-counts.

    numpy's Generator handles ``a, b`` down to about 1e-300 (Johnk's algorithm
    in log space), so the near-zero "frequentist" prior can be sampled.
    """
    return rng.beta(a, b)


def beta_var(a, b):
    """Variance of Beta(a, b), elementwise."""
    n = a + b
    return a * b / (n * n * (n + 1.0))


class BetaState:
    """Beta posterior per run and cell: prior ``(a0, b0)`` plus counts.

    The prior is kept apart from the counts so that a prior refitted from the
    labels (the calibrated prior) can replace it without touching the data.
    """

    kind = "beta"

    def __init__(self, a0, b0, n_runs):
        a0 = np.asarray(a0, dtype=np.float64)
        self.a0 = np.broadcast_to(a0, (n_runs,) + a0.shape[-1:]).copy()
        self.b0 = np.broadcast_to(np.asarray(b0, dtype=np.float64), self.a0.shape).copy()
        self.successes = np.zeros(self.a0.shape)
        self.trials = np.zeros(self.a0.shape)

    @property
    def n_runs(self):
        return self.a0.shape[0]

    @property
    def a(self):
        return self.a0 + self.successes

    @property
    def b(self):
        return self.b0 + self.trials - self.successes

    def draw(self, rng):
        return beta_draws(self.a, self.b, rng)

    def mean(self):
        return (self.a0 + self.successes) / (self.a0 + self.b0 + self.trials)

    def update(self, runs, cells, outcomes):
        """Add one Bernoulli outcome (1 = success) to ``cells`` of ``runs``.

        Each run appears at most once per call.
        """
        self.successes[runs, cells] += outcomes
        self.trials[runs, cells] += 1.0


class DirichletState:
    """Dirichlet posterior over the true class, per run and arm (predicted class)."""

    kind = "dirichlet"

    def __init__(self, alpha0, n_runs):
        alpha0 = np.asarray(alpha0, dtype=np.float64)
        self.alpha0 = np.broadcast_to(alpha0, (n_runs,) + alpha0.shape[-2:]).copy()
        self.counts = np.zeros(self.alpha0.shape)

    @property
    def n_runs(self):
        return self.alpha0.shape[0]

    @property
    def alpha(self):
        return self.alpha0 + self.counts

    def draw(self, rng):
        return dirichlet_draws(self.alpha, rng)

    def mean(self):
        alpha = self.alpha
        return alpha / alpha.sum(axis=-1, keepdims=True)

    def update(self, runs, arms, outcomes):
        """Add one observed true class ``outcomes`` to ``arms`` of ``runs``."""
        self.counts[runs, arms, outcomes] += 1.0
