"""The calibrated model of each group's rate: :class:`CalibratedRates`.

The model, its priors and its inference are stated in
:mod:`skassess.metrics._calibrated_model`; the grid in
:mod:`skassess.metrics._calibrated_fit`, the dispersion and the draws in
:mod:`skassess.metrics._calibrated_draws`.
"""

import numpy as np
from scipy.special import expit, roots_hermite

from ._calibrated_draws import _DrawSummaries, _PosteriorDraws
from ._calibrated_fit import _MapGrid
from ._calibrated_model import (
    BIN_WIDTH,
    LOGIT_CLIP,
    N_BINS,
    N_HERMITE,
    PRIOR_OPEN,
    PRIOR_SD_OPEN,
    PRIOR_SD_OPEN_SLOPE,
    PRIOR_SD_SHIFT,
    PRIOR_SD_SLOPE,
    deviation_draws,
    score_center,
)
from ._conjugate import BetaPosterior
from ._count_tails import count_tails


def fit_calibrated_rates(
    rows, logit_sum, labeled, success, *, fit=None, n_draws=4000, random_state=None
):
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
        n_draws=n_draws,
        random_state=random_state,
        **(fit or {}),
    )


class CalibratedRates(_MapGrid, _PosteriorDraws, _DrawSummaries):
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
        its design weight (:mod:`~skassess.metrics._calibrated_model`, *Designs*). None: the
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

    def departure(self, size=None, rng=None):
        """Each group's posterior predictive p-value of its labels under the shared map.

        Could the group's labels have come from a new group of the population?
        Per draw of ``(a, b, tau)`` from the grid and a new deviation ``u ~
        tau t_4``, the group's replicated successes are ``S_rep ~ sum_c
        Binomial(n_c, sigmoid(m + a + b (l_c - m) + u))`` over its labeled
        cells; their probabilities below and above the observed ``S`` are
        computed at each draw (:func:`~skassess.metrics._count_tails.count_tails`:
        exact on the side of few labels, a skewness-corrected normal
        elsewhere) and averaged over the draws, and compared by the two-sided
        mid-p-value

            min(1, 2 min(P(S_rep < S), P(S_rep > S)) + P(S_rep = S)),

        a posterior predictive check (Gelman, Meng and Stern 1996). Small
        values say the labels disagree with the map more than the groups'
        spread allows. A group without labels has nothing to depart with: 1
        (the formula's value at ``S = S_rep = 0``). ``size`` None: the
        model's ``n_draws``; ``rng`` None: the model's own stream, the same
        at every call. Shape ``(n_groups,)``.
        """
        size = self.n_draws if size is None else size
        if rng is None:
            rng = np.random.default_rng([self._predictive_seed, 1])
        out = np.ones(self.n_groups)
        lab = self._lab_group
        if lab.size == 0:
            return out
        node = self._node_draws(size, rng)
        u = deviation_draws(rng, (size, self.n_groups), self.tau[node][:, None])
        g, b = self._cell_index
        n = self.labeled[g, b]
        observed = np.minimum(self.success, self.labeled).sum(axis=1)[lab]
        whole = np.allclose(n, np.round(n)) and np.allclose(observed, np.round(observed))
        below, above = np.zeros(lab.size), np.zeros(lab.size)
        for _, p in self._cell_blocks(node, u, g, self._cell_x):
            lo, hi = count_tails(p, n, self._cell_group, observed, whole=whole, rng=rng)
            below += lo.sum(axis=0)
            above += hi.sum(axis=0)
        below, above = below / size, above / size
        out[lab] = np.minimum(1.0, 2.0 * np.minimum(below, above) + (1.0 - below - above))
        return out
