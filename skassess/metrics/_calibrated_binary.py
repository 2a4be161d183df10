"""Binary rates (TPR, FPR, PPV, NPV, ...) under the calibrated model: a map per predicted class.

See :class:`CalibratedBinaryRates`; the model of each predicted class is
:class:`~skassess.metrics._calibrated.CalibratedRates`.
"""

import numpy as np

from ._calibrated import CalibratedRates
from ._calibrated_draws import _DrawSummaries
from ._calibrated_model import N_BINS, score_center
from ._conjugate import BetaPosterior
from ._design import design_counts
from ._rate_table import rate_terms


class CalibratedBinaryRates(_DrawSummaries):
    """Posterior of a binary rate (TPR, FPR, PPV, ...) per group under the calibrated model.

    The rows the black box predicts negative and those it predicts positive
    each get their own :class:`CalibratedRates` model of the outcome ``y = 1``
    (the positive class) from the score ``p_1``: ``P(y_i = 1) = sigmoid(m_k +
    a_k + b_k (logit(p_1i) - m_k) + u_gk)`` for a row of group ``g``
    predicted ``k`` (``m_k``: the log-odds of the mean ``p_1`` of the rows
    predicted ``k``). A map per predicted class, so that each has its own
    level: its fitted mean over its labeled rows is their observed rate, and
    the count of positives among its unlabeled rows is a regression
    (difference) estimate, unbiased under random labeling however wrong the
    map's shape (one map for both would carry one class's miscalibration
    into the other's rows). A group's rate is the ratio of its
    pool's counts (e.g. TPR: positives predicted positive over positives),
    with the labeled rows' classes as observed and the others' drawn, so a
    fully labeled group's rate is its observed one.

    Each map has the two-part prior of ``open_level=True``, half on the
    scores and half on the labels alone (even odds and a flat map): a
    predicted class may hold few labels and saturated scores (naive Bayes),
    and a prior centred on the scores alone then decides its rate.

    A draw in which a group's condition holds on no row (e.g. PPV in a group
    with no row predicted positive) takes the pool's rate of the same draw;
    where it holds on no row of the pool either, the rate is undefined and
    drawn uniformly on [0, 1] (nothing is known of it).

    Parameters
    ----------
    rows, logit_sum, labeled, success : ndarray of shape (n_groups, 2 * N_BINS)
        Per group, predicted class and bin of ``logit(p_1)``: rows (weighted),
        the sum of their log-odds, labeled rows and labeled positives.
    metric : str
        A rate of :data:`~skassess.metrics._rate_table.RATES` other than
        ``"selection_rate"``.
    successes, failures : ndarray of shape (n_groups,)
        Labeled rows on which the metric's condition holds with and without
        its outcome (the counts of the Beta that :meth:`posterior` returns).
    n_draws : int, default=4000
        Monte-Carlo size of each predicted class's model and of the summaries.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Source of the draws (:func:`numpy.random.default_rng`'s argument).
    design : dict of ndarray of shape (n_groups, 2 * N_BINS), default=None
        Where the labels were drawn with unequal probabilities: the
        design-weighted sums per cell of
        :func:`~skassess.metrics._design.design_counts`. Each predicted
        class's map is fitted under the design (its weights scaled to its own
        effective sample size), so that its count of positives is the
        generalized regression estimate; None: the labels as they are.

    Attributes
    ----------
    log_evidence : float
        Log probability of the labels under the two models.
    """

    def __init__(
        self,
        rows,
        logit_sum,
        labeled,
        success,
        *,
        metric,
        successes,
        failures,
        n_draws=4000,
        random_state=None,
        design=None,
    ):
        rng = np.random.default_rng(random_state)
        self.n_draws = int(n_draws)
        self._predictive_seed = int(rng.integers(2**63))
        rows = np.asarray(rows, dtype=np.float64)
        self.n_groups = rows.shape[0]
        # (condition, outcome) of a row predicted k whose class is y
        self._terms = {
            (k, y): tuple(float(v) for v in rate_terms(metric, k, y))
            for k in (0, 1)
            for y in (0, 1)
        }
        self._counts = (
            np.asarray(successes, dtype=np.float64),
            np.asarray(failures, dtype=np.float64),
        )
        self._n = rows.reshape(self.n_groups, 2, N_BINS).sum(axis=2)
        self._blocks = []
        for k in (0, 1):
            cols = slice(k * N_BINS, (k + 1) * N_BINS)
            total = rows[:, cols].sum()
            fit = (
                {}
                if design is None
                else design_counts(
                    np.asarray(labeled)[:, cols], **{n: v[:, cols] for n, v in design.items()}
                )
            )
            self._blocks.append(
                None
                if not total > 0
                else CalibratedRates(
                    rows[:, cols],
                    logit_sum[:, cols],
                    labeled[:, cols],
                    success[:, cols],
                    score_center(rows[:, cols], np.asarray(logit_sum)[:, cols]),
                    open_level=True,
                    n_draws=n_draws,
                    random_state=rng,
                    **fit,
                )
            )
        self.log_evidence = float(sum(b.log_evidence for b in self._blocks if b is not None))
        #: each predicted class's map: the labels' dispersion around it (1 without rows)
        self.dispersion = np.array([1.0 if b is None else b.dispersion for b in self._blocks])
        # The summaries: each predicted class's own draws (the two models are
        # independent, so their draws side by side are joint ones).
        positives = np.zeros((self.n_draws, self.n_groups, 2))
        for k, block in enumerate(self._blocks):
            if block is not None:
                positives[:, :, k] = block.success_draws
        self.draws = self._rates(positives, rng)
        self._pool_draws = self._pool_rates(positives, rng)

    def cell_proba(self):
        """Posterior mean probability of the positive class per group and cell, ``(G, 2 N_BINS)``.

        Each predicted class's map at the cell's log-odds (:meth:`CalibratedRates.cell_proba`);
        NaN in the block of a predicted class no row has.
        """
        out = np.full((self.n_groups, 2 * N_BINS), np.nan)
        for k, block in enumerate(self._blocks):
            if block is not None:
                out[:, k * N_BINS : (k + 1) * N_BINS] = block.cell_proba()
        return out

    def _positives(self, size, rng):
        """Draws of the positives per group and predicted class, ``(size, G, 2)``."""
        out = np.zeros((size, self.n_groups, 2))
        for k, block in enumerate(self._blocks):
            if block is not None:
                out[:, :, k] = block.count_draws(size, rng)
        return out

    def _ratio(self, positives, n):
        """Numerator and denominator of the rate from positives ``(..., G, 2)`` among ``n``."""
        num = den = 0.0
        for (k, y), (cond, out) in self._terms.items():
            count = positives[..., k] if y == 1 else n[..., k] - positives[..., k]
            num = num + cond * out * count
            den = den + cond * count
        return num, den

    def _pool_rates(self, positives, rng):
        """The pool's rate from drawn positives ``(size, G, 2)`` (uniform where undefined)."""
        num, den = self._ratio(positives.sum(axis=1), self._n.sum(axis=0))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 1e-9, num / den, rng.uniform(size=den.shape))

    def _rates(self, positives, rng):
        """Each group's rate from drawn positives ``(size, G, 2)`` (the pool's where undefined)."""
        num, den = self._ratio(positives, self._n)
        pool = self._pool_rates(positives, rng)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = num / den
        return np.where(den > 1e-9, rate, pool[:, None])

    def rvs(self, size, rng):
        """Joint draws of every group's rate on the pool, shape ``(size, n_groups)``."""
        return self._rates(self._positives(size, rng), rng)

    def count_rvs(self, size, rng):
        """Joint draws of each group's numerator and denominator on the pool, each ``(size, G)``.

        E.g. for TPR the positives predicted positive and the positives.
        """
        return self._ratio(self._positives(size, rng), self._n)

    def overall_draws(self):
        """The pool's rate in the model's own draws (those of the summaries), ``(n_draws,)``."""
        return self._pool_draws

    def overall_rvs(self, size, rng):
        """Draws of the pool's rate (every group's counts summed), shape ``(size,)``.

        Uniform on [0, 1] in a draw where the condition holds on no row.
        """
        return self._pool_rates(self._positives(size, rng), rng)

    def posterior(self):
        """One Beta per group with the posterior's mean and variance."""
        mean, var = self.moments()
        return BetaPosterior.from_moments(mean, var, *self._counts)

    def predictive(self):
        """The Beta of a group's rate before its labels: each map with a new deviation."""
        zeros = np.zeros(self.n_groups)
        rng = np.random.default_rng(self._predictive_seed)
        positives = np.zeros((self.n_draws, self.n_groups, 2))
        for k, block in enumerate(self._blocks):
            if block is not None:
                positives[:, :, k] = block.new_group_successes(self.n_draws, rng)
        rate = self._rates(positives, rng)
        mean, second = rate.mean(axis=0), (rate**2).mean(axis=0)
        return BetaPosterior.from_moments(mean, np.maximum(second - mean**2, 0.0), zeros, zeros)
