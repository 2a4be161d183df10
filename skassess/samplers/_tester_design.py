"""How ActiveTester draws the next items: the surrogate, the control variate, the proposal.

Each query draws items with probability q, mixing a share of uniform draws with
the square roots of each item's expected squared residual under the control
variate g (the scores, the label shares of its stratum, the calibrated scores
or the surrogate's predictions, whichever the labels so far say predicts the
metrics' gradients best). What a draw needs for its difference estimate (see
_difference) is stored with it when the labels come back.
"""

import numpy as np
from sklearn.base import clone

from ._confusion_metrics import metric_gradients
from ._control_variate import CANDIDATES, Draw, calibrated, choose, mix, strata
from ._proposal import relative_roots, uniform_share
from ._pseudo_labels import pseudo_labels
from ._surrogate import MLPEnsembleSurrogate

#: Pseudo-labels given to the surrogate per refit, at most.
MAX_PSEUDO_LABELS = 1000


def _row_totals(pred, g, K):
    """``sum_i g_i`` placed in row ``pred_i``: shape (K, K)."""
    out = np.zeros((K, K))
    np.add.at(out, pred, g)
    return out


def _sample_without_replacement(q, n, rng):
    """``n`` distinct indices drawn one after another from ``q`` renormalized each time."""
    # Exponential race (Efraimidis-Spirakis): the n smallest E_i / q_i are a
    # sequential weighted draw without replacement.
    keys = rng.exponential(size=len(q)) / np.maximum(q, 1e-300)
    return np.argsort(keys, kind="stable")[:n]


class _TesterDesign:
    """How ActiveTester draws the next items: the surrogate, the control variate, the proposal."""

    # -------------------------------------------------------------- surrogate
    def _refit_surrogate(self):
        labeled = np.flatnonzero(self.labels_ >= 0)
        if len(labeled) < self.min_labels or not self._surrogate_stale:
            return
        if self.surrogate_ is not None and len(labeled) < self._labels_at_refit + self.refit_every:
            return  # the cadence: the surrogate of the last refit serves until then
        rows, y = labeled, self.labels_[labeled]
        weight = np.ones(len(rows))
        if self.pseudo_labels:
            extra = pseudo_labels(self._features, self._pred, labeled, y, rng=self._rng)
            w_extra = 1.0
            if len(extra) > MAX_PSEUDO_LABELS:
                # A uniform subset weighted up keeps the refit O(MAX_PSEUDO_LABELS): the
                # same expected training signal as all of them, at a fraction of the cost.
                w_extra = len(extra) / MAX_PSEUDO_LABELS
                extra = self._rng.choice(extra, MAX_PSEUDO_LABELS, replace=False)
            rows, y = np.concatenate([rows, extra]), np.concatenate([y, self._pred[extra]])
            weight = np.concatenate([weight, np.full(len(extra), w_extra)])
        K = self._scores.shape[1]
        if self.surrogate_ is None:
            base = MLPEnsembleSurrogate(n_members=10) if self.surrogate is None else self.surrogate
            surrogate = clone(base)
            if "random_state" in surrogate.get_params():
                surrogate.set_params(random_state=self._surrogate_seed)
            self.surrogate_ = surrogate.fit(
                self._features[rows], y, classes=np.arange(K), sample_weight=weight
            )
        else:
            self.surrogate_.partial_fit(self._features[rows], y, sample_weight=weight)
        self._surrogate_proba = self.surrogate_.predict_proba_members(self._features)
        self._surrogate_stale = False
        self._labels_at_refit = len(labeled)

    # -------------------------------------------------------- control variate
    def _totals_labeled(self):
        K = self._scores.shape[1]
        labeled = self.labels_ >= 0
        T = np.zeros((K, K))
        np.add.at(T, (self._pred[labeled], self.labels_[labeled]), 1.0)
        return T

    def _counts(self):
        """Labeled items per cell, for spreading the errors; None when not asked."""
        return self._totals_labeled() if self.spread_errors else None

    def _components(self):
        """``(4, n_pool, K)``: scores, strata, calibrated scores, surrogate (or the scores)."""
        sur = self._scores if self._surrogate_proba is None else self._surrogate_proba.mean(0)
        cal = (
            calibrated(self._scores, self._draws)
            if len(self._draws) >= self.min_labels
            else self._scores
        )
        return np.stack([self._scores, strata(self._scores, self._pred, self._draws), cal, sur])

    def _choose_g(self, grad):
        """The control variate: before ``min_labels`` draws the class shares, then the best."""
        usable = [d for d in self._draws if d.with_surrogate]
        if self._surrogate_proba is not None and len(usable) >= self.min_labels:
            return choose(list(CANDIDATES), usable, grad)
        if len(self._draws) >= self.min_labels:
            return choose(["scores", "strata", "calibrated"], self._draws, grad)
        return "strata"

    def _plugin(self, g):
        """``g``'s prediction of the totals (labels where known) and of its variance per row."""
        K = self._scores.shape[1]
        unlabeled = self.labels_ < 0
        plugin = self._totals_labeled() + _row_totals(self._pred[unlabeled], g[unlabeled], K)
        var = np.zeros((K, len(self._metrics)))
        np.add.at(var, self._pred[unlabeled], self._v[:, unlabeled].T)
        return plugin, var

    def _draw(self, unlabeled, n):
        K = self._scores.shape[1]
        components = self._components()
        plugin = self._totals_labeled() + _row_totals(
            self._pred[unlabeled], components[1][unlabeled], K
        )
        grad = metric_gradients(self._estimate.totals(plugin, self._counts()), self._metrics)
        name = self._choose_g(grad)
        self.control_variate_ = name
        g = mix(name, components)
        ga = grad[:, self._pred, :]  # (n_metrics, n_pool, K)
        # Expected squared residual of each item under a hedge between g and the
        # label shares of its predicted class: an overconfident g (0.999 on an
        # item it gets wrong) must not make the item's draw probability tiny.
        hedge = 0.5 * (g + components[1])
        mean = (ga * g[None]).sum(-1)
        hedged = (ga**2 * hedge[None]).sum(-1) - 2 * mean * (ga * hedge[None]).sum(-1) + mean**2
        # g's own prediction of each item's variance, for the intervals.
        self._g, self._v = g, np.maximum((ga**2 * g[None]).sum(-1) - mean**2, 0.0)
        v = self._v[:, unlabeled]
        q = np.full(len(unlabeled), 1.0 / len(unlabeled))
        if self.strategy == "variance":
            root_all, weights = relative_roots(hedged, unlabeled)
            root = root_all[unlabeled]
            if root.sum() > 0:
                share = self.uniform_mix
                if len(self._draws) >= self.min_labels:
                    share = uniform_share(
                        self._draws,
                        self.labels_,
                        self._pred,
                        root_all / root.sum(),
                        len(unlabeled),
                        grad,
                        name,
                        weights,
                        self.uniform_mix,
                    )
                self.uniform_share_ = share
                q = (1.0 - share) * root / root.sum() + share * q
        picks = _sample_without_replacement(q, n, self._rng)
        # What each draw's Z needs besides the labels (see _difference): per row,
        # g's sum over the unlabeled items, q's mass and sum(v / q).
        rows = self._pred[unlabeled]
        base = self._totals_labeled() + _row_totals(rows, g[unlabeled], K)
        mass = np.bincount(rows, weights=q, minlength=K)
        v_over_q = np.zeros((K, len(self._metrics)))
        np.add.at(v_over_q, rows, (v / q).T)
        self._pending = {
            "index": unlabeled[picks],
            "q": q[picks],
            "g": g[unlabeled[picks]],
            "base": base,
            "mass": mass,
            "left": 1.0,
            "v_over_q": v_over_q,
            "components": components[:, unlabeled[picks]].transpose(1, 0, 2),
            "with_surrogate": self._surrogate_proba is not None,
            "resolved": 0,
        }
        return unlabeled[picks], q

    def _resolve(self):
        """Turn the pending draws whose labels (and earlier draws' labels) are known into Z."""
        p = self._pending
        if p is None:
            return
        idx = p["index"]
        start = stop = p["resolved"]
        while stop < len(idx) and self.labels_[idx[stop]] >= 0:
            stop += 1
        K = self._scores.shape[1]
        # p["base"], p["mass"] and p["left"] hold the totals and q masses as the
        # draws before j left them: an earlier draw of the batch is labeled now,
        # its label replaces its g and it leaves the q mass (of its row, and in all).
        for j in range(start, stop):
            a = self._pred[idx[j]]
            e = np.eye(K)[self.labels_[idx[j]]]
            base, masses, left = p["base"], p["mass"], p["left"]
            resid = e - p["g"][j]
            z = base[a] + resid * masses[a] / p["q"][j]
            self._estimate.add(
                a,
                z,
                masses[a] * p["v_over_q"][a],
                base=base,
                resid=resid * left / p["q"][j],
                row_prob=np.maximum(masses, 0.0) / left,
                pooled_var=left * p["v_over_q"],
            )
            base[a] += resid
            masses[a] -= p["q"][j]
            p["left"] = left - p["q"][j]
            self._draws.append(
                Draw(
                    int(a),
                    int(self.labels_[idx[j]]),
                    float(p["q"][j]),
                    p["components"][j],
                    p["with_surrogate"],
                    int(idx[j]),
                )
            )
        p["resolved"] = stop
        if stop == len(idx):
            self._pending = None
