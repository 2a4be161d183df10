"""The scores through a calibration map whose trust is learned from the labels.

The model
---------
Each row ``i`` of group ``g`` has a known score ``c_i`` (for accuracy, the
top-1 confidence) and an unknown outcome ``z_i`` (the black box is right).
With ``l_i = logit(c_i)`` and ``m`` the log-odds of the pool's mean score
(:func:`score_center`),

    P(z_i = 1) = sigmoid(m + a + b (l_i - m) + u_g),   u_g ~ tau t_4,

a linear-in-log-odds calibration map (shift ``a``, slope ``b``) shared by
every group, plus a per-group deviation ``u_g`` whose spread ``tau`` is
unknown. The priors are centred on trusting the scores as they are
(``a = 0``, ``b = 1``, ``tau = 0``) and are weak:

* the pool's level ``a + sum_g w_g u_g ~ N(0, PRIOR_SD_SHIFT^2)`` (``w_g``
  the group's share of the rows), ``a`` otherwise flat; ``b ~ N(1,
  PRIOR_SD_SLOPE^2)``;
* ``tau`` half-normal with scale ``PRIOR_SCALE_TAU``.

The prior is put on the *pool's* level, not on a typical group's shift, so
that the labels place ``a`` and a group with few labels sits at the map's
level give or take ``tau`` (a prior on ``a`` itself lets one large
miscalibrated group absorb the shift and leaves the small groups at the
scores' level).

With ``open_level=True`` the prior is a mixture, each part with probability
``PRIOR_OPEN``, of that one and an *open* one: the level around even odds
(``PRIOR_SD_OPEN``, about uniform on the rate) and a flat map, ``b ~ N(0,
(PRIOR_SD_OPEN_SLOPE / s)^2)`` with ``s`` the spread of the rows' ``l - m``.
The labels weigh the two by their marginal likelihoods. The binary rates'
maps use it (:mod:`skassess.metrics._calibrated_binary`), where saturated
scores would otherwise fix the rate.

How far the scores are trusted is learned: if the errors ignore the scores
the labels drive ``b`` to 0 and the estimate is the label rate's; if the
groups are miscalibrated in different ways ``tau`` grows and each group
leans on its own labels; if the map holds, every unlabeled row gets the
map's probability. With a canonical link and an intercept the map's fitted
mean over the labeled rows equals their observed rate, so the estimate of
an overall rate is the regression (difference) estimator that
prediction-powered inference generalises, unbiased under random labeling
however wrong the map's shape.

The labels' dispersion
----------------------
Where the map's shape is wrong in a way no shift, slope or group deviation
follows, the posterior holds the map more surely than its labels allow.
The labels measure this by their Pearson ratio around the posterior-mean
map (quasi-likelihood, McCullagh and Nelder 1989, ch. 9),

    R_hat = sum d^2 (z - p)^2 / sum d p (1 - p) * n / (n - 2),

(``d`` the design weights below, 1 under random labeling; ``n`` the
effective number of labels), about 1 when the map holds whatever rows were
chosen. ``R`` is integrated, not plugged in: its numerator taken as a scaled
chi-square with Satterthwaite's ``nu = 2 E^2 / Var`` degrees of freedom and
``R`` given an ``IG(RATIO_PRIOR_DOF / 2, RATIO_PRIOR_DOF / 2)`` prior, its
posterior is ``IG(1 + nu / 2, 1 + nu R_hat / 2)`` (mean ``R_hat + 2 / nu``,
the ``dispersion_`` reported). Each posterior draw takes its own ``R``, and
the draw's unlabeled successes are spread about their posterior mean by it
(:func:`quasi_likelihood_spread`): by ``sqrt(max(R, 1))`` without a design.

Designs
-------
Where the labeled rows were drawn with unequal probabilities
(``VarianceSampling``), each labeled row enters the likelihood with its
design weight ``d_i`` (the uniform draw's probability over the design's),
scaled to sum to Kish's effective sample size ``(sum d)^2 / sum d^2``. The
weighted fit's residuals then sum to zero in the design's weighting, so the
estimate of a rate is the generalized regression estimator of survey
sampling (Sarndal, Swensson and Wretman 1992, ch. 6), design-consistent
however wrong the map. ``R`` is then the sandwich (design) variance of the
weighted fit's level over its model variance, as in the pseudo-posterior
adjustment of Williams and Savitsky (2021): it scales the map's part of
each draw, not the rows' binomial noise, and below 1 only the part along
the pool's total.

The estimand and the inference
------------------------------
The estimand is the pool's own rate: a labeled row counts with its observed
outcome, an unlabeled row with a draw from the posterior predictive, so a
fully labeled group's posterior is its observed rate.

No library fits a random-intercept logistic model to binned counts with the
hyperparameters integrated on a grid and finite-pool draws, so it is
written here:

* ``u_g`` is integrated exactly, per group, by adaptive Gauss-Hermite
  quadrature, and the pool level's prior (which ties the groups) from the
  normal of ``sum_g w_g u_g`` that the groups' posterior means and
  variances give; draws of the deviations are conditioned on it as a
  Gaussian (Kalman) update;
* ``tau`` is integrated on a fixed grid of cells weighted by its prior;
* ``(a, b)`` given ``tau`` on a grid of ``N_GRID x N_GRID`` nodes in the
  coordinates that make the Laplace approximation at the mode standard
  (widened until its edges hold no mass), as in INLA's grid exploration;
  the weights are the exact posterior at the nodes.

Every Monte-Carlo quantity (the map's mean at each cell, the spread's
centre, the summaries, the predictive) comes from ``n_draws`` draws of the
model's ``random_state``. Rows are held as counts per group and bin of
``l`` (``N_BINS`` bins of width ``BIN_WIDTH``; each bin uses the mean ``l``
of its rows), so fitting is streaming (``partial_fit``) and its cost does
not grow with the pool.
"""

import numpy as np
from scipy.special import expit, gammaln, log_expit, logsumexp, roots_hermite

from ._conjugate import BetaPosterior

#: Prior standard deviation of the pool's level (log-odds) at its mean score.
PRIOR_SD_SHIFT = 2.0
#: Prior standard deviation of the pool's level around even odds (log-odds) under the
#: open-level component (``open_level=True``): about a uniform prior on the rate.
PRIOR_SD_OPEN = 1.8
#: Prior probability of the open component (``open_level=True``).
PRIOR_OPEN = 0.5
#: Prior standard deviation of the open component's slope around 0, in log-odds
#: per standard deviation of the rows' ``l - m`` (a flat map: the labels alone).
PRIOR_SD_OPEN_SLOPE = 0.5
#: Prior standard deviation of the map's slope around 1 (the scores as they are).
PRIOR_SD_SLOPE = 1.0
#: Degrees of freedom of the groups' deviations (Student t): heavier tails than
#: a normal, so that one far-off group is not shrunk all the way to the others.
DEVIATION_DF = 4.0
#: Variance of a Student t with ``DEVIATION_DF`` degrees of freedom and scale 1.
DEVIATION_VAR = DEVIATION_DF / (DEVIATION_DF - 2.0)
#: Scale of the half-normal prior of the groups' spread ``tau`` (log-odds).
PRIOR_SCALE_TAU = 1.0
#: Prior degrees of freedom of the labels' dispersion ``R`` around the map: a
#: scaled inverse chi-square at 1, ``IG(RATIO_PRIOR_DOF / 2, RATIO_PRIOR_DOF / 2)``.
RATIO_PRIOR_DOF = 2.0
#: Cells of the ``tau`` grid: midpoints of equal cells of ``[0, TAU_MAX]``.
N_TAU, TAU_MAX = 20, 3.5
#: Adaptive Gauss-Hermite nodes of each group's deviation.
N_HERMITE = 7
#: Nodes per axis of the ``(a, b)`` grid and its initial half-width (in
#: standard deviations of the Laplace approximation; the t deviations and the
#: level's prior give the posterior heavier tails than the Laplace
#: approximation's). The grid is widened x 1.6 until its edges hold no mass.
N_GRID, GRID_HALF_WIDTH = 11, 7.2
#: Log weight below the largest at which a node or a ``tau`` cell is dropped.
LOG_TOLERANCE = 20.0
#: Log weight below the largest that the grid's edge may hold (else widened).
EDGE_TOLERANCE = 9.0
#: Log-odds are clipped here (a confidence of 1 - 3e-4 or more counts as that).
LOGIT_CLIP = 8.0
#: Bins of ``l``: ``N_BINS`` cells of width ``BIN_WIDTH`` over the clipped range.
N_BINS = 32
BIN_WIDTH = 2 * LOGIT_CLIP / N_BINS
#: Floats of one temporary block of node x quadrature x cell evaluations.
BLOCK_FLOATS = 2**21


def log_deviation_density(u, tau):
    """Log density of a group's deviation: Student t, ``DEVIATION_DF`` degrees, scale tau."""
    nu = DEVIATION_DF
    return (
        gammaln((nu + 1) / 2)
        - gammaln(nu / 2)
        - 0.5 * np.log(nu * np.pi * tau**2)
        - (nu + 1) / 2 * np.log1p(u**2 / (nu * tau**2))
    )


def logsumexp_axis1(x):
    """``log(sum(exp(x), axis=1))`` of a finite 3-D array, by scipy's formula.

    :func:`scipy.special.logsumexp`'s own steps (the maxima taken out of the
    sum, ``log1p`` of the rest), without its array-API dispatch, which costs
    more than the sum itself on the quadrature's small arrays (the fit calls
    it once per grid block of every ``tau``).
    """
    top = x.max(axis=1, keepdims=True)
    at_top = x == top
    count = at_top.sum(axis=1, keepdims=True, dtype=x.dtype)
    rest = np.exp(np.where(at_top, -np.inf, x) - top).sum(axis=1, keepdims=True)
    rest = np.where(rest == 0, rest, rest / count)
    return (np.log1p(rest) + np.log(count) + top)[:, 0]


def deviation_draws(rng, shape, tau):
    """Draws of new groups' deviations (Student t with scale ``tau``)."""
    return rng.standard_t(DEVIATION_DF, size=shape) * tau


def quasi_likelihood_spread(mean, noise, centre, ratio, *, design=False):
    """Draws of unlabeled successes spread by the labels' dispersion ``R``.

    ``mean`` and ``noise`` (shape ``(n_draws, n_groups)``) are each draw's
    expected successes under the map and its binomial noise, ``centre``
    their mean over the posterior, ``ratio`` a draw of ``R`` per draw. The
    quasi-likelihood scaling of a posterior (McCullagh and Nelder 1989, sec.
    9.2): the draws' deviation from their centre is multiplied by
    ``sqrt(max(R, 1))``,

        centre + sqrt(max(R, 1)) (mean + noise - centre),

    so the model's own spread is the least the labels are given. Under a
    design (``design=True``) ``R`` is the design's variance of the pool's
    level over the model's (a sandwich): it scales the map's part
    ``mean - centre``, not the rows' binomial noise, and below 1 only the
    part along the pool's total (each group's share of the draws' total
    deviation), so that the groups' own spread is kept:

        centre + D + (sqrt(R) - 1) P D + noise  (R < 1),
        centre + sqrt(R) D + noise              (R >= 1),

    with ``D = mean - centre`` and ``P D`` its projection on the total.
    """
    root = np.sqrt(ratio)[:, None]
    if not design:
        return centre + np.maximum(root, 1.0) * (mean + noise - centre)
    deviation = mean - centre
    total = deviation.sum(axis=1, keepdims=True)
    along = total * ((deviation * total).sum(axis=0) / max((total**2).sum(), 1e-300))
    deviation = np.where(root < 1.0, deviation + (root - 1.0) * along, deviation * root)
    return centre + deviation + noise


def score_logit(conf):
    """Clipped log-odds of scores in [0, 1]."""
    c = np.clip(np.asarray(conf, dtype=np.float64), 1e-300, 1.0)
    with np.errstate(divide="ignore"):
        out = np.log(c) - np.log1p(-np.minimum(c, 1.0 - 1e-16))
    return np.clip(out, -LOGIT_CLIP, LOGIT_CLIP)


def score_center(rows, logit_sum):
    """The pool's centre ``m``: the log-odds of its mean score.

    Each cell's rows count at the score of their mean log-odds. The log-odds
    of the mean score, not the mean of the log-odds: on saturated scores
    (most near 1) the mean log-odds is the log-odds of a score far above the
    mean score (0.997 against 0.974 on a bank-marketing MLP), and a map that
    flattens (``b`` toward 0) would then put the whole pool at that level.
    """
    rows = np.asarray(rows, dtype=np.float64)
    total = rows.sum()
    if not total > 0:
        return 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        ell = np.where(rows > 0, np.asarray(logit_sum) / np.where(rows > 0, rows, 1.0), 0.0)
    mean = float((rows * expit(ell)).sum() / total)
    return float(np.clip(np.log(mean) - np.log1p(-mean), -LOGIT_CLIP, LOGIT_CLIP))


def score_bin(logit_score):
    """Bin index of each clipped log-odds."""
    return np.minimum(((logit_score + LOGIT_CLIP) / BIN_WIDTH).astype(np.intp), N_BINS - 1)


def fit_calibrated_rates(rows, logit_sum, labeled, success, *, fit=None, random_state=None):
    """The calibrated model of each group's rate from its counts per group and bin.

    What the estimators fit (accuracy, the confusion matrix's accuracies) and
    what a planner fits from the same counts: :class:`CalibratedRates`
    centred at the pool's mean score (:func:`score_center`), with the
    likelihood's counts ``fit`` under a design (the keyword arguments of
    :func:`~skassess.metrics._design.design_counts`; None: the labels as
    they are).
    """
    return CalibratedRates(
        rows,
        logit_sum,
        labeled,
        success,
        score_center(rows, logit_sum),
        random_state=random_state,
        **(fit or {}),
    )


class _DrawSummaries:
    """Summaries of a posterior held as draws ``_draws`` of shape ``(n_draws, n_groups)``."""

    def moments(self):
        """Posterior mean and variance of each group's rate (from the stored draws)."""
        d = self.draws
        # Within the draws' range: identical draws (a fully labeled group) average
        # to their value, not one rounding error off it.
        return np.clip(d.mean(axis=0), d.min(axis=0), d.max(axis=0)), d.var(axis=0)

    def interval(self, level=0.95):
        """Equal-tailed interval ``(lower, upper)`` per group (from the stored draws)."""
        tail = (1.0 - level) / 2.0
        lo, hi = np.quantile(self.draws, [tail, 1.0 - tail], axis=0)
        return lo, hi


class CalibratedRates(_DrawSummaries):
    """Posterior of each group's rate on the pool under the calibrated model.

    Parameters
    ----------
    rows, logit_sum, labeled, success : ndarray of shape (n_groups, N_BINS)
        Per group and bin: rows (weighted), the sum of their log-odds,
        labeled rows and labeled successes.
    center : float
        The pool's centre ``m``, the log-odds of its mean score (:func:`score_center`).
    open_level : bool, default=False
        The map's prior: the pool's level ``N(0, PRIOR_SD_SHIFT^2)`` around
        the scores' level and the slope ``N(1, PRIOR_SD_SLOPE^2)``, or with
        True a mixture of it and an open part, the level ``N(-m,
        PRIOR_SD_OPEN^2)`` (even odds, about uniform on the rate) and a flat
        slope (``PRIOR_SD_OPEN_SLOPE`` around 0 per spread of ``l - m``), with
        weight ``PRIOR_OPEN``; the labels weigh the two by their marginal
        likelihoods (both are grids of the same posterior, so draws mix them).
    n_draws : int, default=4000
        Monte-Carlo size: the draws of the map and the groups' deviations
        behind :meth:`cell_proba`, the dispersion and the spread's centre,
        the draws of the rates behind :meth:`moments` and :meth:`interval`,
        and those of :meth:`predictive`. At least 2.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Source of those draws (:func:`numpy.random.default_rng`'s argument).
    fit_labeled, fit_success : ndarray of shape (n_groups, N_BINS), default=None
        The counts the likelihood and the dispersion read, where the labels
        were drawn with unequal probabilities: each labeled row weighted by
        its design weight (see the module's Notes on designs). None: the
        labels as they are. The pool's own bookkeeping (which rows are known)
        always uses ``labeled`` and ``success``.
    fit_square, fit_square_success : ndarray of shape (n_groups, N_BINS), default=None
        With ``fit_labeled``: the sums of the squared design weights over the
        labeled rows and over their successes, for the dispersion.

    Attributes
    ----------
    log_evidence : float
        Log probability of the labels under the model.
    ratio_estimate : tuple of float or None
        ``(R_hat, nu)``: the labels' dispersion around the posterior-mean map
        and its Satterthwaite degrees of freedom (see :meth:`_dispersion`);
        None with two labels or fewer.
    """

    def __init__(
        self,
        rows,
        logit_sum,
        labeled,
        success,
        center,
        *,
        open_level=False,
        n_draws=4000,
        random_state=None,
        fit_labeled=None,
        fit_success=None,
        fit_square=None,
        fit_square_success=None,
    ):
        rows = np.asarray(rows, dtype=np.float64)
        self.center = float(center)
        with np.errstate(invalid="ignore", divide="ignore"):
            mids = -LOGIT_CLIP + BIN_WIDTH * (np.arange(N_BINS) + 0.5)
            self.ell = np.where(rows > 0, logit_sum / np.where(rows > 0, rows, 1.0), mids)
        self.rows = rows
        # Priors of the map (level's mean relative to the center, its sd, log prior
        # weight, slope's mean, its sd): the scores as they are, and with
        # open_level also the labels alone (even odds and a flat map).
        self._components = [(0.0, PRIOR_SD_SHIFT, 0.0, 1.0, PRIOR_SD_SLOPE)]
        if open_level:
            self._components = [
                (0.0, PRIOR_SD_SHIFT, np.log1p(-PRIOR_OPEN), 1.0, PRIOR_SD_SLOPE),
                (
                    -self.center,
                    PRIOR_SD_OPEN,
                    np.log(PRIOR_OPEN),
                    0.0,
                    PRIOR_SD_OPEN_SLOPE / self._score_spread(),
                ),
            ]
        self._level_mean, self._level_sd = self._components[0][:2]
        self._slope_mean, self._slope_sd = self._components[0][3:]
        self.labeled = np.minimum(np.asarray(labeled, dtype=np.float64), rows)
        self.success = np.asarray(success, dtype=np.float64)
        self.n_groups = rows.shape[0]
        total = rows.sum()
        self._share = rows.sum(axis=1) / total if total > 0 else np.zeros(self.n_groups)
        # Labeled cells, and the groups that have any.
        g, b = np.nonzero(self.labeled > 0)
        self._cell_index = (g, b)
        self._lab_group = np.unique(g)
        self._cell_group = np.searchsorted(self._lab_group, g)
        self._cell_x = self.ell[g, b] - self.center
        # The likelihood's counts: the labels themselves, or their design-weighted
        # sums where the rows were drawn with unequal probabilities.
        fit_n = self.labeled if fit_labeled is None else np.asarray(fit_labeled, np.float64)
        fit_s = self.success if fit_success is None else np.asarray(fit_success, np.float64)
        self._cell_n = fit_n[g, b]
        self._cell_s = np.clip(fit_s[g, b], 0.0, self._cell_n)
        # Sums of the squared design weights, and of them over the successes.
        self._cell_n2 = self._cell_s2 = None
        if fit_square is not None:
            self._cell_n2 = np.asarray(fit_square, np.float64)[g, b]
            self._cell_s2 = np.clip(np.asarray(fit_square_success)[g, b], 0.0, self._cell_n2)
        self._share_lab = self._share[self._lab_group]
        # sum of the squared shares of the groups without labels (their deviations
        # enter the pool's level from the t prior)
        self._share2_free = float((self._share**2).sum() - (self._share_lab**2).sum())
        self._gh_x, w = roots_hermite(N_HERMITE)
        self._gh_logw = np.log(w)
        if int(n_draws) < 2:
            raise ValueError(f"n_draws must be at least 2; got {n_draws!r}.")
        self.n_draws = int(n_draws)
        self._fit()
        rng = np.random.default_rng(random_state)
        # The predictive's draws from their own stream: the same whenever it is asked.
        self._predictive_seed = int(rng.integers(2**63))
        # The map and the groups' deviations, drawn once: the map's mean at each
        # cell (which the dispersion reads), then the rates' draws whose
        # unspread mean is the spread's centre.
        node = self._node_draws(self.n_draws, rng)
        self._parameter_draws = (node, self._deviations(node, rng))
        self.dispersion = self._dispersion()
        self._count_center = None
        self.success_draws = self._count_draws(*self._parameter_draws, rng)
        self.draws = self._rates(self.success_draws, *self._parameter_draws)

    def _score_spread(self):
        """Root mean square of the rows' ``l - m`` (at least 0.1: a pool at one score)."""
        total = self.rows.sum()
        if not total > 0:
            return 1.0
        return max(float(np.sqrt((self.rows * (self.ell - self.center) ** 2).sum() / total)), 0.1)

    # ------------------------------------------------------------ likelihood
    def _log_prior_slope(self, b):
        """Log prior density of the slope under the component being fitted."""
        sd = self._slope_sd
        return -0.5 * ((b - self._slope_mean) / sd) ** 2 - np.log(np.sqrt(2 * np.pi) * sd)

    @staticmethod
    def _log_normal(x, var):
        return -0.5 * x**2 / var - 0.5 * np.log(2 * np.pi * var)

    def _level_var(self, tau):
        """Prior variance of the pool's level plus the unlabeled groups' part of it."""
        return self._level_sd**2 + DEVIATION_VAR * tau**2 * self._share2_free

    def _joint_mode(self, tau, start):
        """Joint mode of ``(a, b, u)`` at one ``tau`` and the Laplace terms around it.

        Newton's method on the joint log posterior; its Hessian is an arrow
        (each ``u_g`` couples only to ``a`` and ``b``), solved through the
        Schur complement in O(groups). Returns a dict with the mode, the
        covariance of ``(a, b)`` with ``u`` integrated out (Laplace), each
        group's ``u`` at the mode, its slope in ``(a, b)`` and its standard
        deviation, and the Laplace log evidence at this ``tau``.
        """
        G = self._lab_group.size
        x, n, s, cg = self._cell_x, self._cell_n, self._cell_s, self._cell_group
        nu = DEVIATION_DF
        share, V = self._share_lab, self._level_var(tau)
        theta, u = np.array(start[0], dtype=np.float64), np.array(start[1], dtype=np.float64)

        def log_post(theta, u):
            eta = self.center + theta[0] + theta[1] * x + u[cg]
            ll = s * log_expit(eta) + (n - s) * log_expit(-eta)
            return (
                ll.sum()
                + log_deviation_density(u, tau).sum()
                + self._log_normal(theta[0] + share @ u - self._level_mean, V)
                + self._log_prior_slope(theta[1])
            )

        def solve_uu(h_uu, rhs):
            """``(diag(h_uu) + share share' / V)^-1 rhs`` (Sherman-Morrison)."""
            d = rhs / (h_uu[:, None] if rhs.ndim == 2 else h_uu)
            ds = share / h_uu
            return d - np.multiply.outer(ds, share @ d) / (V + share @ ds)

        def terms(theta, u):
            eta = self.center + theta[0] + theta[1] * x + u[cg]
            p = expit(eta)
            r, w = s - n * p, n * p * (1.0 - p)
            level = (theta[0] + share @ u - self._level_mean) / V
            # The t prior's gradient, and its IRLS weight as a positive curvature
            # (the t density is not log-concave; the grid integrates it exactly).
            prec = (nu + 1.0) / (nu * tau**2 + u**2)
            g_u = np.bincount(cg, r, G) - prec * u - share * level
            slope = (theta[1] - self._slope_mean) / self._slope_sd**2
            g_t = np.array([r.sum() - level, (x * r).sum() - slope])
            h_uu = np.bincount(cg, w, G) + prec
            # The level's prior ties a to every u (a rank-one term).
            cross = np.column_stack([np.bincount(cg, w, G) + share / V, np.bincount(cg, w * x, G)])
            wx = (w * x).sum()
            h_tt = np.array(
                [[w.sum() + 1.0 / V, wx], [wx, (w * x * x).sum() + 1.0 / self._slope_sd**2]]
            )
            schur = h_tt - cross.T @ solve_uu(h_uu, cross)
            return g_u, g_t, h_uu, cross, schur

        value = log_post(theta, u)
        for _ in range(100):
            g_u, g_t, h_uu, cross, schur = terms(theta, u)
            d_t = np.linalg.solve(schur, g_t - cross.T @ solve_uu(h_uu, g_u))
            d_u = solve_uu(h_uu, g_u - cross @ d_t)
            step = 1.0
            while True:
                new = log_post(theta + step * d_t, u + step * d_u)
                if new >= value - 1e-10 or step < 1e-6:
                    break
                step /= 2.0
            theta, u, value = theta + step * d_t, u + step * d_u, new
            size = max(np.abs(step * d_t).max(), np.abs(step * d_u).max() if G else 0.0)
            if size < 1e-8:
                break
        _, _, h_uu, cross, schur = terms(theta, u)
        log_det_uu = np.log(h_uu).sum() + np.log1p(share @ (share / h_uu) / V)
        laplace = (
            value
            + 0.5 * (G + 2) * np.log(2 * np.pi)
            - 0.5 * log_det_uu
            - 0.5 * np.linalg.slogdet(schur)[1]
        )
        return {
            "theta": theta,
            "cov": np.linalg.inv(schur),
            "u": u,
            "slope": (cross - np.outer(share, [1.0 / V, 0.0])) / h_uu[:, None],
            "sd": 1.0 / np.sqrt(h_uu),
            "laplace": laplace,
        }

    def _group_loglik(self, a, b, tau, mode):
        """Each labeled group's log likelihood at nodes ``(a, b)`` of one ``tau``.

        The deviation ``u_g`` is integrated by adaptive Gauss-Hermite
        quadrature, centred where the joint mode puts it given ``(a, b)``
        and scaled by its Laplace standard deviation. Returns ``(loglik,
        u_mean, u_var)`` of shape ``(n_nodes, n_labeled_groups)``.
        """
        n_nodes, m, G = a.size, self._cell_x.size, self._lab_group.size
        if G == 0:
            return tuple(np.zeros((n_nodes, 0)) for _ in range(3))
        out = [np.empty((n_nodes, G)) for _ in range(3)]
        onehot = np.zeros((m, G))
        onehot[np.arange(m), self._cell_group] = 1.0
        scale = np.sqrt(2.0) * mode["sd"]
        log_norm = (self._gh_logw + self._gh_x**2)[None, :, None] + np.log(scale)[None, None, :]
        step = max(1, BLOCK_FLOATS // (N_HERMITE * max(m, G)))
        for start in range(0, n_nodes, step):
            sl = slice(start, start + step)
            da, db = a[sl] - mode["theta"][0], b[sl] - mode["theta"][1]
            slope = mode["slope"]
            centre = mode["u"] - da[:, None] * slope[:, 0] - db[:, None] * slope[:, 1]
            u = centre[:, None, :] + scale[None, None, :] * self._gh_x[None, :, None]  # (n, K, G)
            eta = (
                self.center
                + a[sl, None, None]
                + b[sl, None, None] * self._cell_x
                + u[:, :, self._cell_group]
            )  # (n, K, m)
            # s log sigmoid(eta) + (n - s) log sigmoid(-eta), with log sigmoid(-eta) =
            # log sigmoid(eta) - eta: one transcendental evaluation, not two (the
            # fit's largest cost)
            ll = log_expit(eta)
            ll *= self._cell_n
            eta *= self._cell_n - self._cell_s
            ll -= eta
            log_f = ll @ onehot + log_deviation_density(u, tau) + log_norm
            total = logsumexp_axis1(log_f)
            post = np.exp(log_f - total[:, None, :])
            mean = (post * u).sum(axis=1)
            second = (post * u**2).sum(axis=1)
            out[0][sl], out[1][sl], out[2][sl] = total, mean, np.maximum(second - mean**2, 0.0)
        return tuple(out)

    # ------------------------------------------------------------------ fit
    def _fit(self):
        """The grid of ``(a, b, tau)`` of every component of the map's prior, weighted."""
        parts = []
        for level_mean, level_sd, log_weight, slope_mean, slope_sd in self._components:
            self._level_mean, self._level_sd = level_mean, level_sd
            self._slope_mean, self._slope_sd = slope_mean, slope_sd
            for a, b, tau, w, u_mean, u_var in self._fit_component():
                n = a.size
                parts.append(
                    (
                        a,
                        b,
                        tau,
                        w + log_weight,
                        u_mean,
                        u_var,
                        np.full(n, level_mean),
                        np.full(n, level_sd),
                    )
                )
        a, b, tau, log_w, u_mean, u_var, level_mean, level_sd = (
            np.concatenate(v) for v in zip(*parts, strict=True)
        )
        self.log_evidence = float(logsumexp(log_w))
        keep = log_w > log_w.max() - LOG_TOLERANCE
        self.a, self.b, self.tau = a[keep], b[keep], tau[keep]
        self.weights = np.exp(log_w[keep] - logsumexp(log_w[keep]))
        self._u_mean, self._u_var = u_mean[keep], u_var[keep]
        self._node_level_mean, self._node_level_sd = level_mean[keep], level_sd[keep]

    def _fit_component(self):
        """Grid nodes of one prior of the map: ``(a, b, tau, log weight, u mean, u var)``."""
        edges = np.linspace(0.0, TAU_MAX, N_TAU + 1)
        taus = (edges[:-1] + edges[1:]) / 2.0
        # Half-normal prior mass of each cell (renormalised over the grid).
        log_tau_prior = -0.5 * (taus / PRIOR_SCALE_TAU) ** 2
        log_tau_prior -= logsumexp(log_tau_prior)
        modes, start = [], ((self._level_mean, self._slope_mean), np.zeros(self._lab_group.size))
        for tau in taus:
            mode = self._joint_mode(tau, start)
            start = (mode["theta"], mode["u"])
            modes.append(mode)
        laplace = np.array([m["laplace"] for m in modes]) + log_tau_prior
        z = np.linspace(-1.0, 1.0, N_GRID)
        za, zb = (v.ravel() for v in np.meshgrid(z, z, indexing="ij"))
        edge = (np.abs(za) == 1.0) | (np.abs(zb) == 1.0)
        parts = []
        for tau, lp, mode, lap in zip(taus, log_tau_prior, modes, laplace, strict=True):
            if lap < laplace.max() - LOG_TOLERANCE:
                continue
            chol = np.linalg.cholesky(mode["cov"] + 1e-12 * np.eye(2))
            half = GRID_HALF_WIDTH
            for _ in range(6):
                a, b = mode["theta"][:, None] + chol @ (half * np.vstack([za, zb]))
                loglik, u_mean, u_var = self._group_loglik(a, b, tau, mode)
                cell = np.log(abs(np.linalg.det(chol)) * (2 * half / (N_GRID - 1)) ** 2)
                # The pool level's prior, over the groups' posteriors at the node.
                level = self._log_normal(
                    a + u_mean @ self._share_lab - self._level_mean,
                    self._level_var(tau) + u_var @ self._share_lab**2,
                )
                w = loglik.sum(axis=1) + level + self._log_prior_slope(b) + lp + cell
                if w[edge].max() < w.max() - EDGE_TOLERANCE:
                    break
                half *= 1.6
            parts.append((a, b, np.full(a.size, tau), w, u_mean, u_var))
        return parts

    def _dispersion(self):
        """The labels' dispersion ``R`` around the posterior-mean map, and its posterior.

        The estimate is ``R_hat = sum (z - p)^2 / sum p (1 - p)`` over the
        labeled rows, times ``n / (n - 2)`` for the map's two parameters (per
        labeled cell of ``n_c`` rows with ``s_c`` successes, ``(z - p)^2``
        sums to ``s_c (1 - p)^2 + (n_c - s_c) p^2``). Its numerator taken as a
        scaled chi-square with Satterthwaite's ``nu`` degrees of freedom
        (:meth:`_ratio_dof`) and an ``IG(1, 1)`` prior on ``R``
        (``RATIO_PRIOR_DOF = 2``), the posterior of ``R`` is ``IG(1 + nu / 2, 1 +
        nu R_hat / 2)``, of mean ``R_hat + 2 / nu``. Sets ``_ratio_posterior``
        to its (shape, scale) and ``ratio_estimate`` to ``(R_hat, nu)``, both
        None with two labels or fewer (``R`` is then 1), and returns its mean.
        """
        self._ratio_posterior = self.ratio_estimate = None
        n, s = self._cell_n, self._cell_s
        total = n.sum()
        if total <= 2:
            return 1.0
        p = self._proba_at(*self._cell_index)
        expected = (n * p * (1.0 - p)).sum() / total
        if not expected > 0:
            return 1.0
        if self._cell_n2 is None:
            observed = (s * (1.0 - p) ** 2 + (n - s) * p**2).sum() / total
        else:
            # Under a design the squared residuals are summed with the squared
            # design weights: the ratio is then the sandwich variance of the
            # weighted fit's level over its model variance (see the Notes).
            n2, s2 = self._cell_n2, self._cell_s2
            observed = (s2 * (1.0 - p) ** 2 + (n2 - s2) * p**2).sum() / total
        ratio = float(observed / expected * total / (total - 2.0))
        nu = self._ratio_dof(p)
        self.ratio_estimate = (ratio, nu)
        if not np.isfinite(nu):
            self._ratio_posterior = (np.inf, ratio)
            return ratio
        nu0 = RATIO_PRIOR_DOF
        self._ratio_posterior = ((nu0 + nu) / 2.0, (nu0 + nu * ratio) / 2.0)
        return (nu0 + nu * ratio) / (nu0 + nu - 2.0)

    def _ratio_dof(self, p):
        """Satterthwaite's degrees of freedom ``nu = 2 E^2 / Var`` of the ratio's numerator.

        The numerator ``sum d^2 (z - p)^2`` (``d = 1`` without a design) has
        mean ``E = sum d^2 p (1 - p)`` and variance ``sum d^4 p (1 - p) (1 -
        2 p)^2`` at the map's ``p``; a cell's design weights are about equal
        (the draw probability is a function of the cell's score), so its ``sum
        d^4`` is ``(sum d^2)^2`` over its labels. Few labels where the outcome
        is uncertain (saturated scores) leave few degrees of freedom: the
        ratio is then mostly noise.
        """
        n2 = self._cell_n if self._cell_n2 is None else self._cell_n2
        v = p * (1.0 - p) * n2
        var = (v * (1.0 - 2.0 * p) ** 2 * n2 / self.labeled[self._cell_index]).sum()
        return float(2.0 * v.sum() ** 2 / var) if var > 0 else np.inf

    def _ratio_draws(self, size, rng):
        """Draws of ``R`` from its posterior (see :meth:`_dispersion`), or None (``R = 1``)."""
        if self._ratio_posterior is None:
            return None
        shape, scale = self._ratio_posterior
        if not np.isfinite(shape):
            return np.full(size, scale)
        return scale / rng.gamma(shape, size=size)

    # ---------------------------------------------------------------- draws
    def rvs(self, size, rng):
        """Joint draws of every group's rate on the pool, shape ``(size, n_groups)``.

        Each draw takes ``(a, b, tau)`` from the grid, each labeled group's
        deviation from its posterior given them (a normal of the quadrature's
        mean and variance), each other group's from ``tau t_4``, and the
        unlabeled rows' successes from a normal of their Poisson-binomial
        mean and variance (clipped to the rows available), spread by the
        labels' dispersion (:func:`quasi_likelihood_spread`).
        """
        node = self._node_draws(size, rng)
        u = self._deviations(node, rng)
        return self._rates(self._count_draws(node, u, rng), node, u)

    def count_draws(self, size, rng):
        """Joint draws of each group's successes on the pool, shape ``(size, n_groups)``.

        The labeled successes as observed, the unlabeled ones drawn (see :meth:`rvs`).
        """
        node = self._node_draws(size, rng)
        return self._count_draws(node, self._deviations(node, rng), rng)

    def _node_draws(self, size, rng):
        """Grid nodes ``(a, b, tau)`` drawn by their posterior weights."""
        return rng.choice(self.weights.size, size=size, p=self.weights)

    def _rates(self, successes, node, u):
        """Each group's rate from drawn successes ``(size, n_groups)``."""
        n_rows = self.rows.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = successes / n_rows
        # A group with no rows (grown but empty) has the map's rate at its mean score.
        empty = ~(n_rows > 0)
        if empty.any():
            rate[:, empty] = expit(self.center + self.a[node][:, None] + u[:, empty])
        return rate

    def _count_draws(self, node, u, rng):
        """Each group's successes at drawn nodes and deviations, ``(size, n_groups)``.

        The unlabeled rows' successes: a normal of their Poisson-binomial mean
        and variance at the draw's map, spread about the centre by the labels'
        dispersion (:func:`quasi_likelihood_spread`) and clipped to the rows
        available; the labeled successes added as observed. The first call
        (the model's own draws) sets the centre: the mean of its unspread draws.
        """
        size, G = node.size, self.n_groups
        unlabeled = self.rows - self.labeled
        g, bins = np.nonzero(unlabeled > 0)
        count = unlabeled[g, bins]
        x = self.ell[g, bins] - self.center
        order = np.argsort(g, kind="stable")
        g, count, x = g[order], count[order], x[order]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if g.size else np.array([], int)
        mean = np.zeros((size, G))
        var = np.zeros((size, G))
        step = max(1, BLOCK_FLOATS // max(g.size, 1))
        a, b = self.a[node], self.b[node]
        level = self.center + a
        for s in range(0, size, step):
            sl = slice(s, s + step)
            # expit(center + a + b x + u), built in one buffer
            p = b[sl, None] * x[None, :]
            p += level[sl, None]
            p += u[sl][:, g]
            expit(p, out=p)
            if g.size:
                pc = p * count
                mean[sl][:, g[starts]] = np.add.reduceat(pc, starts, axis=1)
                p -= 1.0
                pc *= p
                var[sl][:, g[starts]] = -np.add.reduceat(pc, starts, axis=1)
        noise = np.sqrt(var) * rng.standard_normal((size, G))
        if self._count_center is None:
            self._count_center = (mean + noise).mean(axis=0)
        ratio = self._ratio_draws(size, rng)
        if ratio is not None:
            drawn = quasi_likelihood_spread(
                mean, noise, self._count_center, ratio, design=self._cell_n2 is not None
            )
        else:
            drawn = mean + noise
        drawn = np.clip(drawn, 0.0, unlabeled.sum(axis=1))
        return self._labeled_successes() + drawn

    def _labeled_successes(self):
        """Each group's labeled successes."""
        return np.minimum(self.success, self.labeled).sum(axis=1)

    def count_rvs(self, size, rng):
        """Joint draws of each group's successes and rows on the pool, each ``(size, G)``.

        The numerator and denominator of each group's rate (the rows are fixed).
        """
        successes = self.count_draws(size, rng)
        return successes, np.broadcast_to(self.rows.sum(axis=1), successes.shape)

    def _deviations(self, node, rng):
        """Each group's deviation at the drawn grid nodes, shape ``(len(node), n_groups)``.

        A labeled group's from its posterior given the node (a normal of the
        quadrature's mean and variance), any other group's from the t prior.
        """
        tau = self.tau[node][:, None]
        u = deviation_draws(rng, (node.size, self.n_groups), tau)
        var = np.broadcast_to(DEVIATION_VAR * tau**2, u.shape).copy()
        lab = self._lab_group
        if lab.size:
            u[:, lab] = self._u_mean[node] + rng.standard_normal((node.size, lab.size)) * np.sqrt(
                self._u_var[node]
            )
            var[:, lab] = self._u_var[node]
        # Condition on the pool level's prior (a perturbed-observation Kalman
        # update: exact for normal deviations).
        w = self._share
        sd = self._node_level_sd[node]
        gain = var * w / (sd**2 + var @ w**2)[:, None]
        miss = (
            self._node_level_mean[node]
            - (self.a[node] + u @ w)
            - sd * rng.standard_normal(node.size)
        )
        return u + miss[:, None] * gain

    def variance_draws(self, size, rng):
        """Draws of the mean Bernoulli variance ``p (1 - p)`` over the pool's rows.

        Each draw takes the map's ``(a, b)`` and the groups' deviations from
        the posterior (as :meth:`rvs` does) and averages ``p (1 - p)`` at every
        row's score. Shape ``(size,)``.
        """
        node = self._node_draws(size, rng)
        u = self._deviations(node, rng)
        g, b = np.nonzero(self.rows > 0)
        total = max(float(self.rows.sum()), 1e-300)
        out = np.zeros(size)
        step = max(1, BLOCK_FLOATS // max(g.size, 1))
        for start in range(0, size, step):
            sl = slice(start, start + step)
            p = expit(
                self.center
                + self.a[node[sl], None]
                + self.b[node[sl], None] * (self.ell[g, b] - self.center)
                + u[sl][:, g]
            )
            out[sl] = (p * (1.0 - p)) @ self.rows[g, b] / total
        return out

    def _proba_at(self, groups, bins):
        """Posterior mean probability of success at cells ``(groups, bins)``.

        :meth:`cell_proba` is this at every cell; the dispersion needs it at
        the labeled cells only. The mean over the model's own draws of the map
        and the deviations, a block of cells at a time.
        """
        node, u = self._parameter_draws
        a, b = self.a[node][:, None], self.b[node][:, None]
        x = self.ell[groups, bins] - self.center
        out = np.empty(x.size)
        step = max(1, BLOCK_FLOATS // node.size)
        for start in range(0, x.size, step):
            sl = slice(start, start + step)
            out[sl] = expit(self.center + a + b * x[None, sl] + u[:, groups[sl]]).mean(axis=0)
        return out

    def cell_proba(self):
        """Posterior mean probability of success of a row in each (group, bin) cell.

        The map at the cell's own log-odds (its rows' mean, the bin's middle
        where it has none): the probability the model gives each row it holds
        there. Shape ``(n_groups, N_BINS)``; computed once, when first asked.
        """
        if getattr(self, "_cell_proba", None) is None:
            groups, bins = np.indices(self.ell.shape).reshape(2, -1)
            self._cell_proba = self._proba_at(groups, bins).reshape(self.ell.shape)
        return self._cell_proba

    def posterior(self):
        """One Beta per group with the posterior's mean and variance."""
        mean, var = self.moments()
        s = np.minimum(self.success, self.labeled).sum(axis=1)
        return BetaPosterior.from_moments(mean, var, s, self.labeled.sum(axis=1) - s)

    def predictive(self):
        """The Beta of a group's rate before its labels: the map with a new deviation."""
        if self._lab_group.size == 0:  # no label: the posterior is this prior
            mean, var = self.moments()
            zeros = np.zeros(self.n_groups)
            return BetaPosterior.from_moments(mean, var, zeros, zeros)
        rng = np.random.default_rng(self._predictive_seed)
        rate = self.new_group_successes(self.n_draws, rng) / np.maximum(
            self.rows.sum(axis=1), 1e-300
        )
        mean, second = rate.mean(axis=0), (rate**2).mean(axis=0)
        zeros = np.zeros(self.n_groups)
        return BetaPosterior.from_moments(mean, np.maximum(second - mean**2, 0.0), zeros, zeros)

    def new_group_successes(self, size, rng):
        """Expected successes of each group's rows under the map with a new deviation.

        Draws of ``(a, b, tau)`` from the grid and a deviation from ``tau
        t_4`` per group, shape ``(size, n_groups)``: what a group's rows would
        give before any of its labels.
        """
        node = self._node_draws(size, rng)
        u = deviation_draws(rng, (size, self.n_groups), self.tau[node][:, None])
        out = np.zeros((size, self.n_groups))
        for bin_ in np.flatnonzero(self.rows.any(axis=0)):
            p = expit(
                self.center
                + self.a[node][:, None]
                + self.b[node][:, None] * (self.ell[:, bin_] - self.center)
                + u
            )
            out += self.rows[:, bin_] * p
        return out
