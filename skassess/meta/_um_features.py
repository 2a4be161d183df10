"""Batch-level inputs of the uncertainty model (Elder et al., Table 1 and App. 8.2).

Every feature is generic across data sets (any features, any number of
classes), so a model trained on other data sets' drift scenarios applies to
a new one. Four families:

- **Distance**: a per-row quantity (the black box's top confidence, margin,
  entropy, predicted class; the proxies' top confidence and margin; the
  drift classifiers' confidence; the most important feature; the first
  principal component) is histogrammed on the reference rows and on the
  batch, and the two histograms are compared by the Kolmogorov-Smirnov
  distance ``max |P - Q|``, the inverse overlap ``sum max(p - q, 0)`` and
  its squared form ``sum max(p - q, 0)^2``.
- **Prediction**: the batch/reference entropy ratio, the predicted change of
  accuracy, the spread and histogram entropy of the per-row predictions, and
  the balanced accuracy of nearest-neighbour classifiers telling the batch
  from the reference (each row's probability the batch share of its 15
  nearest neighbours, the row itself left out).
- **Noise**: the sampling half-width of the batch's mean confidence and of
  its predicted accuracy (``1.96 sd / sqrt(n)``, what a bootstrap gives for a
  mean), and ``1 / sqrt(n)``.
- **Internal**: the predictor's intrinsic uncertainty, the spread of its
  members (between their means; the mean per-row spread), the change made
  by its calibration, and how many features carry 90 % of the random-forest
  proxy's importance.
- **Peers** (not in the paper): how far the predictor's accuracy is from
  that of each of the four predictors that share its row features
  (``PEERS``: calibrated confidence, ATC, DoC, the meta-model), and the
  range and spread of those four; and how far it is from the reference
  accuracy reweighted to the batch by each drift classifier's odds
  (importance weighting, which assumes covariate shift and nothing about
  the scores), with that estimate's standard error and effective sample
  size. Predictors that rest on different assumptions disagree when drift
  breaks one of them.

The paper's 16 "gbm whitebox" statistics (distances to the boosting model's
split thresholds) are left out: scikit-learn's histogram boosting does not
expose its trees' traversals, and the paper's ablation ranks the Internal
family below Distance and Drift.
"""

import numpy as np
from sklearn.neighbors import NearestNeighbors

from ._batch_summary import (
    UNIT_BINS,
    BatchSummary,
    ReferenceFrame,
    drift_positions,
)

__all__ = [
    "PEERS",
    "SHARED_FEATURES",
    "UM_FEATURES",
    "batch_features",
    "peer_features",
    "summary_features",
]

#: The predictors whose batch accuracies the Peers family compares (all cheap once the
#: meta-model's row features exist).
PEERS = ("confidence", "atc", "doc", "meta_model")

#: The neighbours a drift classifier's probability of a row is the batch share of.
DRIFT_NEIGHBORS = 15


def _distances(p, q):
    """KS, inverse overlap and squared inverse overlap of two normalized histograms."""
    ks = np.max(np.abs(np.cumsum(p) - np.cumsum(q)))
    over = np.maximum(p - q, 0.0)
    return ks, over.sum(), np.square(over).sum()


def _normalized(h):
    return h / max(h.sum(), 1.0)


def _count_distances(a, b):
    """The distances between two histograms given as counts (padded to one length)."""
    n = max(a.size, b.size)
    a, b = (np.pad(h, (0, n - h.size)) for h in (a, b))
    return _distances(_normalized(a), _normalized(b))


def _drift_classifier(A, B, seed):
    """P(batch) of each row of a classifier telling batch rows from reference rows, and its
    balanced accuracy.

    Each side is subsampled to at most ``DRIFT_ROWS`` rows
    (:func:`drift_positions`), which bounds the cost on large batches; the
    third output is the indices of the reference rows kept (the first of the
    probabilities).
    """
    kept, taken = drift_positions(A.shape[0], B.shape[0], seed)
    return (*_drift_neighbors(A[kept], B[taken]), kept)


def _drift_neighbors(A, B, n_neighbors=DRIFT_NEIGHBORS):
    """Leave-one-out P(batch) of a nearest-neighbour classifier telling ``B`` from ``A``.

    A row's probability is the share of batch rows among its ``n_neighbors``
    nearest neighbours, the row itself left out, in the
    columns scaled by the reference's spread: every row's out-of-sample
    probability from one neighbour search. Also returns the balanced accuracy
    of calling a row a batch row when that share is at least the batch's share
    of all the rows (the odds of a batch row above their prior odds): 0.5 is
    "cannot tell them apart", 1 "tells every row", whatever the two sizes.
    """
    if min(A.shape[0], B.shape[0]) < 2:
        return None, np.nan
    X = np.vstack([A, B]).astype(np.float64, copy=False)
    t = np.r_[np.zeros(A.shape[0]), np.ones(B.shape[0])]
    sd = A.std(axis=0)
    X = (X - A.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    k = min(n_neighbors, X.shape[0] - 1)
    # no query: each row's neighbours leave the row itself out (duplicates stay in)
    idx = NearestNeighbors(n_neighbors=k).fit(X).kneighbors(return_distance=False)
    proba = t[idx].mean(axis=1)
    batch = proba >= t.mean()
    acc = 0.5 * ((~batch[t == 0]).mean() + batch[t == 1].mean())
    return proba, float(acc)


def _importance_weighted(proba_ref, correct):
    """The reference accuracy reweighted to the batch, its standard error and effective size.

    Covariate shift (what both drift generators simulate) changes which rows
    come, not how the black box does on a given row; weighting each
    reference row by the drift classifier's odds ``P(batch | x) / P(ref | x)``
    (clipped to [0.01, 0.99]) gives an estimate of the batch accuracy that
    assumes nothing about the scores (Sugiyama et al., 2007). Its standard
    error is that of a ratio estimator, ``sqrt(sum w^2 (c - a)^2) / sum w``,
    and the effective sample size ``(sum w)^2 / sum w^2`` over the rows.
    """
    p = np.clip(proba_ref, 0.01, 0.99)
    w = p / (1.0 - p)
    c = correct.astype(np.float64)
    acc = float(w @ c / w.sum())
    se = float(np.sqrt(np.sum(w**2 * (c - acc) ** 2)) / w.sum())
    return acc, se, float(w.sum() ** 2 / np.sum(w**2) / w.size)


def _entropy(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def peer_features(prediction, peers):
    """The Peers family: the predictor's batch accuracy against its peers'.

    Parameters
    ----------
    prediction : float
        The predictor's batch accuracy.
    peers : dict or None
        :data:`PEERS` name to that predictor's batch accuracy (None: NaN features).

    Returns
    -------
    dict
    """
    if peers is None:
        return {name: np.nan for name in _PEER_NAMES}
    vals = np.array([peers[m] for m in PEERS], dtype=np.float64)
    out = {f"peer_{m}": float(prediction - v) for m, v in zip(PEERS, vals, strict=True)}
    out["peer_range"] = float(vals.max() - vals.min())
    out["peer_sd"] = float(vals.std())
    return out


def batch_features(
    ref, batch, rows, reference_accuracy, *, seed, importances=None, shared=None, peers=None
):
    """The uncertainty model's inputs for one batch held in memory.

    Parameters
    ----------
    ref, batch : dict
        ``"Z"``: the per-row predictor inputs (:class:`RowFeatures`; the first
        four columns the black box's top, margin, entropy, class frequency;
        then the proxies' top and margin, if any), ``"pred"``: predicted
        classes, ``"F"``: encoded features or None.
    rows : dict
        The predictor's per-row outputs on the batch: ``"p"``, ``"u"`` (or
        None), ``"raw"``, ``"members"`` (optional).
    reference_accuracy : float
        The black box's accuracy on the reference rows.
    importances : ndarray or None
        Feature importances of the random-forest proxy.
    seed : int
        Seed of the rows the drift classifiers read (:func:`drift_positions`).
    shared : dict or None
        The features that do not depend on the predictor (Distance, drift
        classifiers), from an earlier call on the same reference and batch.
    peers : dict or None
        :data:`PEERS` name to that predictor's accuracy on the batch (None:
        the Peers family is NaN).

    Returns
    -------
    dict
        Feature name to value (NaN where a source is missing).
    """
    frame = None
    taken = None
    if shared is None:
        frame = ReferenceFrame(ref, importances, seed)
        taken = drift_positions(ref["Z"].shape[0], batch["Z"].shape[0], seed)[1]
    summary = BatchSummary.of_rows(batch, rows, frame=frame, taken=taken)
    return summary_features(
        ref, summary, reference_accuracy, frame=frame, seed=seed, shared=shared, peers=peers
    )


def summary_features(ref, summary, reference_accuracy, *, frame, seed, shared=None, peers=None):
    """The uncertainty model's inputs from a batch's :class:`BatchSummary`.

    Parameters
    ----------
    ref : dict
        The reference rows, as in :func:`batch_features`.
    summary : BatchSummary
        The batch's, with its histograms and drift rows unless ``shared`` is given.
    reference_accuracy : float
        The black box's accuracy on the reference rows.
    frame : ReferenceFrame or None
        The reference's bins and scaling (None with ``shared``).
    seed : int
        Seed of the rows the drift classifiers read (:func:`drift_positions`).
    shared, peers : dict or None
        As in :func:`batch_features`.

    Returns
    -------
    dict
    """
    out = dict(shared) if shared is not None else _shared_features(ref, frame, summary, seed)
    _predictor_features(out, ref["Z"], summary, reference_accuracy)
    out.update(peer_features(out["predicted_accuracy"], peers))
    return out


def _shared_features(ref, frame, summary, seed):
    out = {}

    def dist(name):
        if name in summary.counts:
            values = _count_distances(frame.counts[name], summary.counts[name])
        else:
            values = (np.nan,) * 3
        out.update({f"{name}_{k}": v for k, v in zip(("ks", "io", "sio"), values, strict=True)})

    # Distance: the black box, the proxies (NaN without features)
    for name in ("base_top", "base_margin", "base_entropy", "class_frequency"):
        dist(name)
    for proxy in ("lr", "rf", "gbm"):
        dist(f"{proxy}_top")
        dist(f"{proxy}_margin")
    # Distance: the most important feature and the first principal component
    dist("best_feature")
    if frame.best is not None:
        order = np.sort(frame.importances)[::-1]
        share = np.cumsum(order) / max(order.sum(), 1e-12)
        out["n_important_features"] = float(np.searchsorted(share, 0.9) + 1) / share.size
    else:
        out["n_important_features"] = np.nan
    dist("pca")
    # Drift classifiers: on the features, and on the predictor's per-row inputs
    Gb, Zb = summary.drift_rows()
    kept = drift_positions(frame.n_ref, summary.n, seed)[0]
    sources = [
        ("drift_x", (frame.G, Gb) if frame.has_features else None),
        ("drift_z", (ref["Z"], Zb)),
    ]
    correct = ref.get("correct")
    for name, pair in sources:
        proba, acc = (None, np.nan) if pair is None else _drift_neighbors(pair[0][kept], pair[1])
        out[f"{name}_accuracy"] = acc
        if proba is None:
            out.update({f"{name}_{k}": np.nan for k in ("ks", "io", "sio")})
            out.update({f"{name}_iw_{k}": np.nan for k in ("accuracy", "se", "ess")})
            continue
        n_r = kept.size
        conf = np.maximum(proba, 1 - proba)
        values = _distances(_hist(conf[:n_r]), _hist(conf[n_r:]))
        out.update({f"{name}_{k}": v for k, v in zip(("ks", "io", "sio"), values, strict=True)})
        iw = (np.nan,) * 3 if correct is None else _importance_weighted(proba[:n_r], correct[kept])
        out.update(
            dict(zip((f"{name}_iw_{k}" for k in ("accuracy", "se", "ess")), iw, strict=True))
        )
    return out


def _hist(values):
    """The normalized histogram of values in [0, 1] on ten equal bins."""
    return _normalized(np.histogram(np.clip(values, 0.0, 1.0), bins=UNIT_BINS)[0].astype(float))


def _predictor_features(out, Zr, summary, reference_accuracy):
    # Prediction
    n = summary.n
    p_mean = summary.mean("p")
    out["entropy_ratio"] = float(summary.mean("entropy") / max(Zr[:, 2].mean(), 1e-12))
    out["predicted_change"] = float(p_mean - reference_accuracy)
    out["predicted_accuracy"] = float(p_mean)
    out["reference_accuracy"] = float(reference_accuracy)
    out["prediction_sd"] = summary.std("p")
    out["prediction_entropy"] = _entropy(_normalized(summary.p_counts))
    out["mean_confidence_change"] = float(summary.mean("top") - Zr[:, 0].mean())
    # Noise
    out["confidence_halfwidth"] = float(1.96 * summary.std("top") / np.sqrt(n))
    out["prediction_halfwidth"] = float(1.96 * summary.std("p") / np.sqrt(n))
    out["inverse_sqrt_n"] = 1.0 / np.sqrt(n)
    # Internal
    u = summary.mean("u")
    out["intrinsic"] = np.nan if u is None else float(u)
    members = summary.sums["members"]
    if members is not None and members.shape[0] > 1:
        out["members_sd_of_means"] = float((members / n).std())
        out["members_mean_of_sd"] = float(summary.mean("member_sd"))
    else:
        out["members_sd_of_means"] = out["members_mean_of_sd"] = np.nan
    diff = float(p_mean - summary.mean("raw"))
    out["calibration_change"] = diff
    out["calibration_change_abs"] = abs(diff)
    # Peers: the importance-weighted reference accuracies (from the shared features)
    for src in ("drift_x", "drift_z"):
        out[f"{src}_iw_gap"] = out["predicted_accuracy"] - out.get(f"{src}_iw_accuracy", np.nan)


_PEER_NAMES = tuple(f"peer_{m}" for m in PEERS) + ("peer_range", "peer_sd")


def _feature_names():
    d3 = ("ks", "io", "sio")
    names = [
        f"{src}_{k}"
        for src in (
            "base_top",
            "base_margin",
            "base_entropy",
            "class_frequency",
            "lr_top",
            "lr_margin",
            "rf_top",
            "rf_margin",
            "gbm_top",
            "gbm_margin",
            "best_feature",
        )
        for k in d3
    ]
    names += ["n_important_features"] + [f"pca_{k}" for k in d3]
    for src in ("drift_x", "drift_z"):
        names += [f"{src}_accuracy"] + [f"{src}_{k}" for k in d3]
        names += [f"{src}_iw_{k}" for k in ("accuracy", "se", "ess")]
    names += [
        "entropy_ratio",
        "predicted_change",
        "predicted_accuracy",
        "reference_accuracy",
        "prediction_sd",
        "prediction_entropy",
        "mean_confidence_change",
        "confidence_halfwidth",
        "prediction_halfwidth",
        "inverse_sqrt_n",
        "intrinsic",
        "members_sd_of_means",
        "members_mean_of_sd",
        "calibration_change",
        "calibration_change_abs",
    ]
    names += list(_PEER_NAMES) + ["drift_x_iw_gap", "drift_z_iw_gap"]
    return tuple(names), tuple(names[: names.index("entropy_ratio")])


#: The names of the features, in the order :func:`batch_features` gives them, and those
#: of them that do not depend on the predictor.
UM_FEATURES, SHARED_FEATURES = _feature_names()
