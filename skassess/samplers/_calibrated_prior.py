"""A prior learned from the labels: calibrated prior means, empirical-Bayes strength.

The informative prior of Ji et al. trusts the model's own confidence, which is
biased when the model is miscalibrated. ``CalibratedPrior`` refits, as labels
arrive, a linear-in-log-odds (LLO) calibration map on all labeled rows across
groups,

    P(correct | c) = sigmoid(a * logit(c) + b),

and sets the prior mean of group g to the average of the calibrated
probabilities of all its rows (labeled or not). The prior strength comes from
the labels too: empirical Bayes, the strength on a grid that maximizes the
beta-binomial marginal likelihood of the groups' labeled outcomes.

Nothing here looks at unlabeled outcomes. The map has a weak Gaussian prior
centred on the identity (a = 1, b = 0), so
with no labels it is the informative prior, and one label cannot swing it.
"""

from numbers import Real

import numpy as np
from scipy.special import betaln, expit
from sklearn.base import BaseEstimator

#: Confidences are clipped to [EPS, 1 - EPS] before the log-odds.
EPS = 1e-6
#: Prior strengths tried by empirical Bayes.
STRENGTHS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)


class CalibratedPrior(BaseEstimator):
    """Refit an LLO calibration map and an empirical-Bayes strength as labels arrive.

    Used as ``ActiveAssessor(prior_update=CalibratedPrior())`` or
    ``simulate(..., prior_update=CalibratedPrior())`` with an estimator of
    per-group accuracy (``BayesianAccuracy`` or ``BayesianCalibrationError``
    with ``classwise=False``); the estimator's own prior serves until the first
    label.

    Parameters
    ----------
    strength : float or "auto", default="auto"
        Prior strength (pseudo-count total) of every group; "auto" chooses it
        by empirical Bayes from ``strengths``.
    strengths : tuple of float, default=(1, 2, 5, ..., 1000)
        The grid of empirical Bayes.
    map_scale : float, default=0.5
        Standard deviation of the Gaussian prior of the map's intercept (the
        log-odds shift at the pool's median confidence) around 0.
    slope_scale : float, default=0.25
        Standard deviation of the Gaussian prior of the map's slope around 1.
        Both defaults were chosen on the bundled Fashion-MNIST scores (the
        best of four settings at N = 20, 50, 100), not on the benchmark sets.
    refit_growth : float, default=1.05
        In :func:`simulate`, the map is refitted after every label up to 100
        labels, then each time the number of labels has grown by this factor.
        :class:`ActiveAssessor` refits after every ``tell``.
    n_nodes : int, default=128
        Each group's log-odds are summarized by a histogram of this many
        equal-width cells to average the map over its rows.

    Examples
    --------
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> from skassess.samplers import ActiveAssessor, CalibratedPrior
    >>> data = load_fashion_mnist_scores()
    >>> assessor = ActiveAssessor(prior_update=CalibratedPrior(), random_state=0)
    >>> assessor = assessor.fit(data.scores).run(data.target, budget=100, progress=False)
    >>> assessor.estimator_.prior.sum(axis=1)[:3]  # empirical-Bayes strength per class
    array([20., 20., 20.])
    """

    def __init__(self, *, strength="auto", strengths=STRENGTHS, map_scale=0.5,
                 slope_scale=0.25, refit_growth=1.05, n_nodes=128):
        self.strength = strength
        self.slope_scale = slope_scale
        self.strengths = strengths
        self.map_scale = map_scale
        self.refit_growth = refit_growth
        self.n_nodes = n_nodes

    def fit_pool(self, estimator, setup, scores, cell):
        """Summarize the pool: each row's log-odds, each group's histogram of them."""
        if setup.posterior != "beta" or setup.arm_of_cell is not None:
            raise ValueError(
                "CalibratedPrior needs a per-group accuracy estimator (BayesianAccuracy or "
                "BayesianCalibrationError with classwise=False)."
            )
        if not (self.strength == "auto" or (isinstance(self.strength, Real)
                                              and self.strength > 0)):
            raise ValueError(f"strength must be 'auto' or a number > 0; got {self.strength!r}.")
        conf = np.clip(scores.max(axis=1), EPS, 1 - EPS)
        self.logit_ = np.log(conf) - np.log1p(-conf)
        # Centred log-odds: the intercept is the log-odds at the pool's typical
        # confidence, so the slope's uncertainty does not move it.
        self.center_ = float(np.median(self.logit_))
        G = len(estimator.groups_)
        edges = np.linspace(self.logit_.min(), self.logit_.max() + 1e-9, self.n_nodes + 1)
        node = np.clip(np.searchsorted(edges, self.logit_, side="right") - 1, 0,
                       self.n_nodes - 1)
        key = cell * self.n_nodes + node
        count = np.bincount(key, minlength=G * self.n_nodes).reshape(G, self.n_nodes)
        total = np.bincount(key, weights=self.logit_, minlength=G * self.n_nodes).reshape(
            G, self.n_nodes)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.node_logit_ = np.nan_to_num(total / count)
            self.node_weight_ = np.nan_to_num(count / count.sum(axis=1, keepdims=True))
        self.correct_ = None
        return self

    def set_outcomes(self, correct):
        """The correctness of every pool row (read only where labeled)."""
        self.correct_ = np.asarray(correct, dtype=np.float64)
        return self

    def due(self, t):
        """Whether to refit before choosing label ``t`` (``t`` labels so far)."""
        if t < 1:
            return False
        if t <= 100:
            return True
        # After 100 labels, refit when t crosses the next power of refit_growth.
        def step(n):
            return np.floor(np.log(n / 100.0) / np.log(self.refit_growth))

        return step(t) > step(t - 1)

    def update(self, state, rows):
        """Refit from the labeled ``rows`` (n_runs, t) and set the state's prior."""
        x = self.logit_[rows] - self.center_
        z = self.correct_[rows]
        slope, intercept = fit_llo(x, z, self.map_scale, self.slope_scale, self.center_)
        nodes = self.node_logit_ - self.center_
        mean = (expit(slope[:, None, None] * nodes + intercept[:, None, None])
                * self.node_weight_).sum(axis=2)
        mean = np.clip(mean, EPS, 1 - EPS)
        if self.strength == "auto":
            strength = eb_strength(mean, state.successes, state.trials,
                                   np.asarray(self.strengths, dtype=np.float64))
        else:
            strength = np.full(len(mean), float(self.strength))
        state.a0 = strength[:, None] * mean
        state.b0 = strength[:, None] * (1 - mean)


def fit_llo(x, z, scale, slope_scale=None, center=0.0, n_iter=25):
    """MAP slope and intercept of ``P(z=1) = sigmoid(a x + b)``, one fit per row of x.

    ``x`` are log-odds minus ``center``. Newton's method on the log posterior
    with independent N(1, slope_scale^2) and N(center, scale^2) priors on the
    slope and the intercept (the identity map); vectorized over runs.
    """
    n_runs = x.shape[0]
    slope_scale = scale if slope_scale is None else slope_scale
    theta = np.tile([1.0, center], (n_runs, 1))
    prior = np.array([1.0, center])
    precision = np.array([1.0 / slope_scale**2, 1.0 / scale**2])
    for _ in range(n_iter):
        p = expit(theta[:, :1] * x + theta[:, 1:])
        r = z - p
        w = p * (1 - p)
        g = np.stack([(r * x).sum(1), r.sum(1)], axis=1) - precision * (theta - prior)
        h11 = (w * x * x).sum(1) + precision[0]
        h12 = (w * x).sum(1)
        h22 = w.sum(1) + precision[1]
        det = h11 * h22 - h12 * h12
        step = np.stack([(h22 * g[:, 0] - h12 * g[:, 1]) / det,
                         (h11 * g[:, 1] - h12 * g[:, 0]) / det], axis=1)
        theta = theta + step
        if np.abs(step).max() < 1e-8:
            break
    return theta[:, 0], theta[:, 1]


def eb_strength(mean, successes, trials, grid):
    """Strength on ``grid`` maximizing the beta-binomial marginal likelihood, per run."""
    a = grid[None, :, None] * mean[:, None, :]
    b = grid[None, :, None] * (1 - mean[:, None, :])
    s, n = successes[:, None, :], trials[:, None, :]
    loglik = (betaln(a + s, b + n - s) - betaln(a, b)).sum(axis=2)
    return grid[np.argmax(loglik, axis=1)]
