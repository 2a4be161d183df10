"""The calibrated prior refitted inside :func:`simulate`, for many runs at once.

:class:`CalibratedPrior` is an estimator: ``fit`` on one labeled set, then
``prior_for`` an accuracy estimator. :func:`simulate` runs many labeling runs
side by side and refits the prior as their labels arrive; this module keeps
that state (the pool's log-odds summarized per group, which run has labeled
which rows) and computes the same prior as ``prior_for``, vectorized over the
runs. The model itself (the map's prior, the group deviations, the finite
pool) is the functions of :mod:`._calibrated_prior`, shared by both.
"""

import numpy as np
from scipy.special import expit

from ..calibration import fit_llo, log_odds
from ._calibrated_prior import (
    group_prior,
    group_sum,
    leave_group_out,
    llo_pieces,
    map_passes,
    map_precision,
    random_effect_weight,
    tau_grid,
    warn_if_strength,
)

__all__ = ["PooledPriorUpdate"]


class PooledPriorUpdate:
    """A :class:`CalibratedPrior`'s refits over the runs of one :func:`simulate` call.

    Parameters
    ----------
    prior : CalibratedPrior
        Its parameters (validated); it is not fitted.
    scores : ndarray of shape (n_samples, n_classes)
    pred : ndarray of shape (n_samples,)
        The black box's predictions.
    cell : ndarray of shape (n_samples,)
        Each row's group.
    n_groups : int
    """

    def __init__(self, prior, scores, pred, cell, n_groups):
        tau_grid(prior)  # the grid is checked before any run
        warn_if_strength(prior)
        self.prior = prior
        conf = np.take_along_axis(scores, pred[:, None], axis=1)[:, 0]
        self.logit_ = log_odds(conf)
        # Centred log-odds: the intercept is the log-odds at the pool's typical
        # confidence, so the slope's uncertainty does not move it.
        self.center_ = float(np.median(self.logit_))
        edges = np.linspace(self.logit_.min(), self.logit_.max() + 1e-9, self.prior.n_nodes + 1)
        node = np.clip(
            np.searchsorted(edges, self.logit_, side="right") - 1, 0, self.prior.n_nodes - 1
        )
        self.cell_ = cell
        self.count_ = np.bincount(cell, minlength=n_groups).astype(np.float64)
        key = cell * self.prior.n_nodes + node
        size = n_groups * self.prior.n_nodes
        count = np.bincount(key, minlength=size).reshape(n_groups, self.prior.n_nodes)
        total = np.bincount(key, weights=self.logit_, minlength=size).reshape(
            n_groups, self.prior.n_nodes
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            self.node_logit_ = np.nan_to_num(total / count)
            self.node_weight_ = np.nan_to_num(count / count.sum(axis=1, keepdims=True))

    def due(self, t):
        """Whether :func:`simulate` refits before choosing label ``t`` (``t`` labels so far)."""
        if t < 1:
            return False
        if t <= 100:
            return True

        # After 100 labels, refit when t crosses the next power of refit_growth.
        def step(n):
            return np.floor(np.log(n / 100.0) / np.log(self.prior.refit_growth))

        return step(t) > step(t - 1)

    def update(self, state, rows, correct):
        """The state under the prior refitted from labeled ``rows`` (n_runs, t)."""
        x = self.logit_[rows] - self.center_
        z = correct[rows]
        n_runs, G = len(rows), len(self.count_)
        group = self.cell_[rows]
        flat = (group + G * np.arange(n_runs)[:, None]).ravel()  # (run, group) -> one index
        n_unlabeled = self.count_ - state.trials
        nodes = self.node_logit_ - self.center_  # (G, n_nodes)
        weight = np.ones_like(x)
        for last in map_passes(self.prior):
            slope, intercept = fit_llo(
                x,
                z,
                intercept_scale=self.prior.map_scale,
                slope_scale=self.prior.slope_scale,
                intercept_mean=self.center_,
                sample_weight=weight,
            )
            theta = np.stack([slope, intercept], axis=1)
            g_rows, i_rows = llo_pieces(
                x, expit(slope[:, None] * x + intercept[:, None]), z, weight
            )
            grad_g = group_sum(g_rows.reshape(-1, 2), flat, n_runs * G).reshape(n_runs, G, 2)
            info_g = group_sum(i_rows.reshape(-1, 2, 2), flat, n_runs * G).reshape(n_runs, G, 2, 2)
            info = info_g.sum(axis=1) + map_precision(self.prior)
            slope_g, intercept_g, cov = leave_group_out(theta, info, grad_g, info_g)
            q = expit(slope_g[..., None] * nodes + intercept_g[..., None])
            dq = q * (1.0 - q) * self.node_weight_
            mean_all = (q * self.node_weight_).sum(axis=2)
            # the labeled rows' share of their group's total, under the group's own map
            q_lab = expit(
                np.take_along_axis(slope_g, group, axis=1) * x
                + np.take_along_axis(intercept_g, group, axis=1)
            )
            lab_total = np.bincount(flat, weights=q_lab.ravel(), minlength=n_runs * G).reshape(
                n_runs, G
            )
            with np.errstate(invalid="ignore", divide="ignore"):
                mean_unlabeled = (self.count_ * mean_all - lab_total) / n_unlabeled
            alpha, beta, tau2 = group_prior(
                self.prior,
                mean_all=mean_all,
                mean_unlabeled=mean_unlabeled,
                dmean=dq.sum(axis=2),
                dx=(dq * nodes).sum(axis=2),
                cov=cov,
                n_unlabeled=n_unlabeled,
                successes=state.successes,
                trials=state.trials,
            )
            if not last:
                weight = random_effect_weight(info_g, tau2, group)
        return state.with_prior(alpha, beta)
