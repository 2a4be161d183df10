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
  the accuracy of classifiers trained to tell the batch from the reference.
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
from sklearn.decomposition import PCA
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

__all__ = ["PEERS", "SHARED_FEATURES", "UM_FEATURES", "batch_features", "peer_features"]

#: The predictors whose batch accuracies the Peers family compares (all cheap once the
#: meta-model's row features exist).
PEERS = ("confidence", "atc", "doc", "meta_model")

_CONF_BINS = np.concatenate([np.arange(0.0, 0.9, 0.1), np.arange(0.9, 1.0001, 0.01)])
_UNIT_BINS = np.linspace(0.0, 1.0, 11)
_ENTROPY_BINS = np.concatenate([np.arange(0.0, 0.1, 0.01), np.arange(0.1, 3.0001, 0.1), [np.inf]])
_DRIFT_FOLDS = 3
_DRIFT_ROWS = 1500


def _distances(p, q):
    """KS, inverse overlap and squared inverse overlap of two normalized histograms."""
    ks = np.max(np.abs(np.cumsum(p) - np.cumsum(q)))
    over = np.maximum(p - q, 0.0)
    return ks, over.sum(), np.square(over).sum()


def _hist(values, bins):
    h = np.histogram(np.clip(values, bins[0], bins[-1]), bins=bins)[0].astype(np.float64)
    return h / max(h.sum(), 1.0)


def _hist_distances(ref, batch, bins):
    return _distances(_hist(ref, bins), _hist(batch, bins))


def _quantile_bins(ref):
    """Ten equal bins over the 10th-90th percentiles of the reference (outliers left out)."""
    lo, hi = np.nanquantile(ref, [0.1, 0.9])
    if not hi > lo:
        lo, hi = np.nanmin(ref), np.nanmax(ref) + 1e-12
    return np.linspace(lo, hi, 11)


def _in_range(values, bins):
    values = values[~np.isnan(values)]
    return values[(values >= bins[0]) & (values <= bins[-1])]


def _drift_classifier(A, B, seed):
    """Out-of-fold P(batch) of a forest telling batch rows from reference rows, and its accuracy.

    Each side is subsampled to at most ``_DRIFT_ROWS`` rows (seeded), which
    bounds the cost on large batches; the third output is the indices of the
    reference rows kept (the first of the probabilities).
    """
    rng = np.random.default_rng(seed)
    kept = np.arange(A.shape[0])
    if A.shape[0] > _DRIFT_ROWS:
        kept = rng.choice(A.shape[0], _DRIFT_ROWS, replace=False)
        A = A[kept]
    if B.shape[0] > _DRIFT_ROWS:
        B = B[rng.choice(B.shape[0], _DRIFT_ROWS, replace=False)]
    X = np.vstack([A, B])
    t = np.r_[np.zeros(A.shape[0], int), np.ones(B.shape[0], int)]
    n_folds = int(min(_DRIFT_FOLDS, A.shape[0], B.shape[0]))
    if n_folds < 2:
        return None, np.nan, kept
    forest = RandomForestClassifier(
        n_estimators=30, min_samples_leaf=5, max_features="sqrt", n_jobs=1, random_state=seed
    )
    proba = cross_val_predict(
        forest,
        X,
        t,
        cv=StratifiedKFold(n_folds, shuffle=True, random_state=seed),
        method="predict_proba",
    )[:, 1]
    # balanced accuracy: 0.5 is "cannot tell them apart" whatever the sizes
    acc = 0.5 * ((proba[t == 0] < 0.5).mean() + (proba[t == 1] >= 0.5).mean())
    return proba, acc, kept


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
    """The uncertainty model's inputs for one batch.

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
        Seed of the drift classifiers.
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
    Zr, Zb = ref["Z"], batch["Z"]
    out = dict(shared) if shared is not None else _shared_features(ref, batch, importances, seed)
    _predictor_features(out, Zr, Zb, rows, reference_accuracy)
    out.update(peer_features(out["predicted_accuracy"], peers))
    return out


def _shared_features(ref, batch, importances, seed):
    out = {}
    Zr, Zb = ref["Z"], batch["Z"]

    def dist(name, a, b, bins):
        for k, v in zip(("ks", "io", "sio"), _hist_distances(a, b, bins), strict=True):
            out[f"{name}_{k}"] = v

    # Distance: the black box
    dist("base_top", Zr[:, 0], Zb[:, 0], _CONF_BINS)
    dist("base_margin", Zr[:, 1], Zb[:, 1], _UNIT_BINS)
    dist("base_entropy", Zr[:, 2], Zb[:, 2], _ENTROPY_BINS)
    n_cls = int(max(ref["pred"].max(), batch["pred"].max())) + 1
    for k, v in zip(
        ("ks", "io", "sio"),
        _distances(
            np.bincount(ref["pred"], minlength=n_cls) / ref["pred"].size,
            np.bincount(batch["pred"], minlength=n_cls) / batch["pred"].size,
        ),
        strict=True,
    ):
        out[f"class_frequency_{k}"] = v
    # Distance: the proxies (NaN without features)
    for j, proxy in enumerate(("lr", "rf", "gbm")):
        for s, (col, bins) in enumerate((("top", _CONF_BINS), ("margin", _UNIT_BINS))):
            c = 4 + 2 * j + s
            if Zr.shape[1] > c:
                dist(f"{proxy}_{col}", Zr[:, c], Zb[:, c], bins)
            else:
                out.update({f"{proxy}_{col}_{k}": np.nan for k in ("ks", "io", "sio")})
    Fr, Fb = ref.get("F"), batch.get("F")
    has_f = Fr is not None and Fr.shape[1] > 0
    # Distance: the most important feature and the first principal component
    if has_f and importances is not None:
        best = int(np.argmax(importances))
        bins = _quantile_bins(Fr[:, best])
        dist("best_feature", _in_range(Fr[:, best], bins), _in_range(Fb[:, best], bins), bins)
        order = np.sort(importances)[::-1]
        share = np.cumsum(order) / max(order.sum(), 1e-12)
        out["n_important_features"] = float(np.searchsorted(share, 0.9) + 1) / share.size
    else:
        out.update({f"best_feature_{k}": np.nan for k in ("ks", "io", "sio")})
        out["n_important_features"] = np.nan
    if has_f:
        scaler = make_pipeline(SimpleImputer(), StandardScaler()).fit(Fr)
        Gr, Gb = scaler.transform(Fr), scaler.transform(Fb)
        if Gr.shape[1] > 1 and Gr.shape[0] > 2:
            pca = PCA(n_components=1, random_state=seed).fit(Gr)
            pr, pb = pca.transform(Gr)[:, 0], pca.transform(Gb)[:, 0]
        else:
            pr, pb = Gr[:, 0], Gb[:, 0]
        bins = _quantile_bins(pr)
        dist("pca", _in_range(pr, bins), _in_range(pb, bins), bins)
    else:
        out.update({f"pca_{k}": np.nan for k in ("ks", "io", "sio")})
    # Drift classifiers: on the features, and on the predictor's per-row inputs
    sources = [("drift_x", (Gr, Gb) if has_f else None), ("drift_z", (Zr, Zb))]
    correct = ref.get("correct")
    for name, pair in sources:
        proba, acc, kept = (None, np.nan, None) if pair is None else _drift_classifier(*pair, seed)
        out[f"{name}_accuracy"] = acc
        if proba is None:
            out.update({f"{name}_{k}": np.nan for k in ("ks", "io", "sio")})
            out.update({f"{name}_iw_{k}": np.nan for k in ("accuracy", "se", "ess")})
            continue
        n_r = kept.size
        conf = np.maximum(proba, 1 - proba)
        dist(name, conf[:n_r], conf[n_r:], _UNIT_BINS)
        iw = (np.nan,) * 3 if correct is None else _importance_weighted(proba[:n_r], correct[kept])
        out.update(
            dict(zip((f"{name}_iw_{k}" for k in ("accuracy", "se", "ess")), iw, strict=True))
        )
    return out


def _predictor_features(out, Zr, Zb, rows, reference_accuracy):
    # Prediction
    p = np.asarray(rows["p"], dtype=np.float64)
    n = p.size
    out["entropy_ratio"] = float(Zb[:, 2].mean() / max(Zr[:, 2].mean(), 1e-12))
    out["predicted_change"] = float(p.mean() - reference_accuracy)
    out["predicted_accuracy"] = float(p.mean())
    out["reference_accuracy"] = float(reference_accuracy)
    out["prediction_sd"] = float(p.std())
    out["prediction_entropy"] = _entropy(_hist(p, _UNIT_BINS))
    out["mean_confidence_change"] = float(Zb[:, 0].mean() - Zr[:, 0].mean())
    # Noise
    out["confidence_halfwidth"] = float(1.96 * Zb[:, 0].std() / np.sqrt(n))
    out["prediction_halfwidth"] = float(1.96 * p.std() / np.sqrt(n))
    out["inverse_sqrt_n"] = 1.0 / np.sqrt(n)
    # Internal
    out["intrinsic"] = np.nan if rows.get("u") is None else float(np.mean(rows["u"]))
    members = rows.get("members")
    if members is not None and members.shape[0] > 1:
        out["members_sd_of_means"] = float(members.mean(axis=1).std())
        out["members_mean_of_sd"] = float(members.std(axis=0).mean())
    else:
        out["members_sd_of_means"] = out["members_mean_of_sd"] = np.nan
    diff = float(p.mean() - np.mean(rows["raw"]))
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
