"""The batch side of the uncertainty model's inputs, as sums that merge over partitions.

Every batch input of the uncertainty model (:mod:`._um_features`) is a
function of the batch's histograms on bins the reference fixes, its sums and
sums of squared deviations, and the rows its drift classifiers read: at most
``DRIFT_ROWS`` of them, at positions drawn from the seed and the two row
counts alone (:func:`drift_positions`). A :class:`BatchSummary` holds these
for a block of rows. Two summaries merge by adding their counts and sums
(the squared deviations by Chan, Golub and LeVeque's update) and by joining
their drift rows, so a batch summarized partition by partition gives the
features of the whole batch in memory, up to the order of summation.
"""

import numpy as np
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

__all__ = ["DRIFT_ROWS", "BatchSummary", "ReferenceFrame", "drift_positions"]

#: The most rows of each side a drift classifier reads.
DRIFT_ROWS = 1500

CONF_BINS = np.concatenate([np.arange(0.0, 0.9, 0.1), np.arange(0.9, 1.0001, 0.01)])
UNIT_BINS = np.linspace(0.0, 1.0, 11)
ENTROPY_BINS = np.concatenate([np.arange(0.0, 0.1, 0.01), np.arange(0.1, 3.0001, 0.1), [np.inf]])
_PROXIES = ("lr", "rf", "gbm")


def drift_positions(n_ref, n_batch, seed):
    """The reference rows and the batch positions the drift classifiers read.

    Each side is subsampled to at most :data:`DRIFT_ROWS` rows without
    replacement, by one generator seeded with ``seed``: the reference first,
    then the batch. The positions depend on nothing but the seed and the two
    row counts, so a batch held in partitions reads the same rows.
    """
    rng = np.random.default_rng(seed)
    # memory O(DRIFT_ROWS) whatever the counts: Generator.choice without replacement
    # draws a few rows of many without a permutation of them all
    kept, taken = (
        rng.choice(n, DRIFT_ROWS, replace=False) if n > DRIFT_ROWS else np.arange(n)
        for n in (n_ref, n_batch)
    )
    return kept, taken


def counts(values, bins):
    """Histogram counts of ``values`` on ``bins``, the values clipped into their range."""
    return np.histogram(np.clip(values, bins[0], bins[-1]), bins=bins)[0].astype(np.float64)


def quantile_bins(ref):
    """Ten equal bins over the 10th-90th percentiles of the reference (outliers left out)."""
    lo, hi = np.nanquantile(ref, [0.1, 0.9])
    if not hi > lo:
        lo, hi = np.nanmin(ref), np.nanmax(ref) + 1e-12
    return np.linspace(lo, hi, 11)


def in_range(values, bins):
    values = values[~np.isnan(values)]
    return values[(values >= bins[0]) & (values <= bins[-1])]


class ReferenceFrame:
    """What the reference fixes for every batch: bins, the feature scaling, the PCA.

    Parameters
    ----------
    ref : dict
        The reference rows (``"Z"``, ``"F"``, ``"pred"``, as in ``batch_features``).
    importances : ndarray or None
        Feature importances of the random-forest proxy.
    seed : int
        Seed of the PCA.

    Attributes
    ----------
    counts : dict
        The reference's histogram counts, by distribution name.
    G, kept : ndarray or None
        The reference's scaled features (None without features) and the
        rows the drift classifiers read (set by :meth:`positions`).
    """

    def __init__(self, ref, importances, seed):
        Z, F = ref["Z"], ref.get("F")
        self.n_columns = Z.shape[1]
        self.has_features = F is not None and F.shape[1] > 0
        self.best = self.best_bins = self.scaler = self.pca = self.pca_bins = self.G = None
        self.importances = importances
        if self.has_features and importances is not None:
            self.best = int(np.argmax(importances))
            self.best_bins = quantile_bins(F[:, self.best])
        pc = None
        if self.has_features:
            self.scaler = make_pipeline(SimpleImputer(), StandardScaler()).fit(F)
            self.G = self.scaler.transform(F)
            if self.G.shape[1] > 1 and self.G.shape[0] > 2:
                self.pca = PCA(n_components=1, random_state=seed).fit(self.G)
            pc = self._component(self.G)
            self.pca_bins = quantile_bins(pc)
        self.n_ref = Z.shape[0]
        self.counts = {k: counts(v, b) for k, (v, b) in self.distributions(Z, F, pc).items()}
        self.counts["class_frequency"] = np.bincount(ref["pred"]).astype(np.float64)

    def _component(self, G):
        return self.pca.transform(G)[:, 0] if self.pca is not None else G[:, 0]

    def scaled(self, F):
        """The scaled features and their first principal component (None without features)."""
        if not self.has_features:
            return None, None
        G = self.scaler.transform(F)
        return G, self._component(G)

    def distributions(self, Z, F, pc):
        """Name to ``(values, bins)`` of each per-row quantity whose histograms are compared."""
        out = {
            "base_top": (Z[:, 0], CONF_BINS),
            "base_margin": (Z[:, 1], UNIT_BINS),
            "base_entropy": (Z[:, 2], ENTROPY_BINS),
        }
        for j, proxy in enumerate(_PROXIES):
            for s, (col, bins) in enumerate((("top", CONF_BINS), ("margin", UNIT_BINS))):
                c = 4 + 2 * j + s
                if self.n_columns > c:
                    out[f"{proxy}_{col}"] = (Z[:, c], bins)
        if self.best is not None:
            out["best_feature"] = (in_range(F[:, self.best], self.best_bins), self.best_bins)
        if pc is not None:
            out["pca"] = (in_range(pc, self.pca_bins), self.pca_bins)
        return out


def _moments(x):
    """``(n, sum, sum of squared deviations)`` of a 1-d array."""
    n = x.shape[0]
    total = x.sum()
    d = x - total / n if n else x
    return n, total, float(np.sum(d * d))


def _merge_moments(a, b):
    na, sa, qa = a
    nb, sb, qb = b
    if na == 0 or nb == 0:
        return a if nb == 0 else b
    delta = sb / nb - sa / na
    return na + nb, sa + sb, qa + qb + delta * delta * na * nb / (na + nb)


def _add(a, b):
    """Two count vectors added, the shorter padded with zeros."""
    if a.size < b.size:
        a, b = b, a
    out = a.copy()
    out[: b.size] += b
    return out


class BatchSummary:
    """The sums of a block of batch rows that the uncertainty model's inputs need.

    Built by :meth:`of_rows` on one block and merged with :meth:`merge`.

    Attributes
    ----------
    n : int
        Rows.
    counts : dict or None
        Histogram counts by distribution name, ``class_frequency`` among them
        (None: the features that do not depend on the predictor were not
        asked for).
    moments : dict
        ``(n, sum, sum of squared deviations)`` of ``p`` (the predictor's
        per-row output) and ``top`` (the black box's top score).
    sums : dict
        Sums of ``entropy``, ``raw``, ``u`` (None without it), ``member_sd``
        (each row's spread over the members) and ``members`` (a vector: each
        member's sum; None without members), and of each peer's per-row output.
    p_counts : ndarray
        Histogram counts of ``p`` on ten equal bins.
    order, G, Z : ndarray
        The drift rows this block holds: their ranks in the drift positions,
        their scaled features (None without features) and their row features.
    """

    @classmethod
    def of_rows(cls, batch, rows, *, frame=None, peers=None, taken=None, start=0):
        """The summary of one block of rows.

        Parameters
        ----------
        batch : dict
            ``"Z"`` the row features, ``"F"`` the encoded features (or None),
            ``"pred"`` the black box's predicted classes.
        rows : dict
            The predictor's per-row outputs: ``"p"``, ``"u"`` (or None),
            ``"raw"``, ``"members"`` (optional).
        frame : ReferenceFrame or None
            The reference; None leaves out what does not depend on the predictor.
        peers : dict or None
            Peer name to its per-row output on the block.
        taken : ndarray or None
            The batch's drift positions (:func:`drift_positions`).
        start : int
            The batch position of the block's first row.
        """
        self = cls()
        Z = np.asarray(batch["Z"], dtype=np.float64)
        p = np.asarray(rows["p"], dtype=np.float64)
        self.n = int(p.size)
        self.moments = {"p": _moments(p), "top": _moments(Z[:, 0])}
        u, members = rows.get("u"), rows.get("members")
        self.sums = {
            "entropy": Z[:, 2].sum(),
            "raw": np.sum(rows["raw"]),
            "u": None if u is None else np.sum(u),
            "members": None if members is None else members.sum(axis=1),
            "member_sd": None if members is None else members.std(axis=0).sum(),
        }
        self.sums.update({f"peer_{m}": np.sum(v) for m, v in (peers or {}).items()})
        self.p_counts = counts(p, UNIT_BINS)
        self.counts = self.order = self.G = self.Z = None
        if frame is None:
            return self
        F = batch.get("F")
        G, pc = frame.scaled(F)
        self.counts = {k: counts(v, b) for k, (v, b) in frame.distributions(Z, F, pc).items()}
        self.counts["class_frequency"] = np.bincount(batch["pred"]).astype(np.float64)
        here = np.flatnonzero((taken >= start) & (taken < start + self.n))
        local = taken[here] - start
        self.order, self.Z = here, Z[local]
        self.G = None if G is None else G[local]
        return self

    def merge(self, other):
        """This summary and ``other``'s, of the rows of both (a new summary)."""
        out = BatchSummary()
        out.n = self.n + other.n
        out.moments = {k: _merge_moments(v, other.moments[k]) for k, v in self.moments.items()}
        out.sums = {k: None if v is None else v + other.sums[k] for k, v in self.sums.items()}
        out.p_counts = self.p_counts + other.p_counts
        out.counts = out.order = out.G = out.Z = None
        if self.counts is not None:
            out.counts = {k: _add(v, other.counts[k]) for k, v in self.counts.items()}
            out.order = np.r_[self.order, other.order]
            out.Z = np.concatenate([self.Z, other.Z])
            out.G = None if self.G is None else np.concatenate([self.G, other.G])
        return out

    def drift_rows(self):
        """The drift rows in the order of the drift positions: ``(G or None, Z)``."""
        by = np.argsort(self.order, kind="stable")
        return (None if self.G is None else self.G[by]), self.Z[by]

    def mean(self, name):
        """The batch mean of ``p``, ``top`` or a summed quantity (None where it is None)."""
        if name in self.moments:
            return self.moments[name][1] / self.n
        total = self.sums[name]
        return None if total is None else total / self.n

    def std(self, name):
        """The batch standard deviation of ``p`` or ``top``."""
        n, _, q = self.moments[name]
        return float(np.sqrt(q / n))


def summarize(models, X, scores, *, frame, seed=None, taken=None, start=0):
    """The predictor's rows on a block of the batch, and the block's summary.

    Parameters
    ----------
    models : tuple
        ``(predictor, shared, peers)``: the predictor, the meta-model whose
        row features the uncertainty model reads (None: the predictor's own,
        or a combined predictor's meta-model)
        and the peers by name (``"meta_model"`` reads ``shared``'s output).
    X, scores
        The block, as :meth:`PerformancePredictor.predict_rows` takes it.
    frame, taken, start
        As in :meth:`BatchSummary.of_rows`; ``taken=None`` draws the drift
        positions of a block that is the whole batch, from ``seed``.
    seed : int or None
        Seed of the drift positions.

    Returns
    -------
    rows : Bunch
        The predictor's :meth:`~PerformancePredictor.predict_rows`.
    summary : BatchSummary
    """
    predictor, shared, peers = models
    rows = predictor.predict_rows(X, scores=scores)
    if shared is None:  # a combined predictor's rows hold its meta-model's
        srows = rows if "p_parts" not in rows else {**rows, "p": rows["p_parts"]["meta_model"]}
    else:
        srows = shared.predict_rows(X, scores=scores)
    Z = srows["Z"]
    peer_rows = {
        m: srows["p"] if m == "meta_model" else pp.predict_rows(row_features=Z).p
        for m, pp in peers.items()
    }
    batch = {"Z": Z, "F": srows["features"], "pred": srows["pred"]}
    if taken is None and frame is not None:
        taken = drift_positions(frame.n_ref, Z.shape[0], seed)[1]
    summary = BatchSummary.of_rows(
        batch, rows, frame=frame, peers=peer_rows, taken=taken, start=start
    )
    return rows, summary
