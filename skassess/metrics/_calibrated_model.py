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
from scipy.special import expit, gammaln

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
LOG_TOLERANCE = 14.0
#: Log weight below the largest that the grid's edge may hold (else widened).
EDGE_TOLERANCE = 9.0
#: Log-odds are clipped here (a confidence of 1 - 3e-4 or more counts as that).
LOGIT_CLIP = 8.0
#: Bins of ``l``: ``N_BINS`` cells of width ``BIN_WIDTH`` over the clipped range.
N_BINS = 32
BIN_WIDTH = 2 * LOGIT_CLIP / N_BINS
#: Floats of one temporary block of draw x cell evaluations.
BLOCK_FLOATS = 2**21
#: Floats of one block of the grid's node x quadrature x cell evaluations: small
#: enough that its temporaries stay in a core's cache.
QUADRATURE_BLOCK = 2**15


def log_deviation_density(u, tau):
    """Log density of a group's deviation: Student t, ``DEVIATION_DF`` degrees, scale tau."""
    nu = DEVIATION_DF
    return (
        gammaln((nu + 1) / 2)
        - gammaln(nu / 2)
        - 0.5 * np.log(nu * np.pi * tau**2)
        - (nu + 1) / 2 * np.log1p(u**2 / (nu * tau**2))
    )


def sigmoid(x, out=None):
    """``1 / (1 + exp(-x))`` elementwise (into ``out``, which may be ``x``).

    Equal to :func:`scipy.special.expit` to a unit in the last place, at a third
    of its cost: NumPy's ``exp`` is vectorised. ``exp(-x)`` overflows to
    infinity below ``x = -709``, where the value is 0 as it should be.
    """
    out = np.negative(x, out=out)
    with np.errstate(over="ignore"):
        np.exp(out, out=out)
    out += 1.0
    return np.reciprocal(out, out=out)


def log_sigmoid(x):
    """``log(1 / (1 + exp(-x)))`` elementwise, as ``min(x, 0) - log1p(exp(-|x|))``.

    Equal to :func:`scipy.special.log_expit` to a few units in the last place,
    at less than half its cost (the quadrature's largest cost).
    """
    out = np.abs(x)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.log1p(out, out=out)
    low = np.minimum(x, 0.0)
    low -= out
    return low


def deviation_draws(rng, shape, tau):
    """Draws of new groups' deviations (Student t with scale ``tau``)."""
    return rng.standard_t(DEVIATION_DF, size=shape) * tau


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


def add_to_cells(table, cell, weights):
    """``table[g, b] += w`` for every row's cell ``(g, b)`` and weight ``w``.

    What ``np.add.at`` does, summed by :func:`numpy.bincount` over the flat
    cell index (an order of magnitude faster on a pool's rows).
    """
    g, b = cell
    flat = np.asarray(g, dtype=np.intp) * table.shape[1] + b
    table += np.bincount(flat, weights=weights, minlength=table.size).reshape(table.shape)
