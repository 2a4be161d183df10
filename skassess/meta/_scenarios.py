"""Drift scenarios: what a predictor gets wrong on simulated drift, and the batch features.

One scenario is a labeled reference set and a labeled batch under drift. The
predictors learn from the reference; on the batch, their predicted accuracy is
compared with the true one, and the uncertainty model's inputs are computed.
Two uses: the user's fixed black box (its scores on the rows are given), and
a library of data sets where a base model is trained per scenario (how the
pretrained uncertainty model is made).
"""

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ._predictor import PerformancePredictor
from ._um_features import PEERS, SHARED_FEATURES, batch_features

__all__ = ["BASE_MODELS", "evaluate_scenario", "fit_peers", "library_scenario", "peer_accuracies"]

#: The base models of the library scenarios (Elder et al. use these two).
BASE_MODELS = {
    "lr": make_pipeline(SimpleImputer(), StandardScaler(), LogisticRegression(max_iter=2000)),
    "rf": RandomForestClassifier(n_estimators=100, min_samples_leaf=2, n_jobs=1),
}

_N_BOOT = 200


def _bootstrap_sd(p, rng):
    """Standard deviation of the batch mean over Poisson-bootstrap resamples of its rows."""
    w = rng.poisson(1.0, size=(_N_BOOT, p.size)).astype(np.float64)
    means = (w @ p) / np.maximum(w.sum(axis=1), 1.0)
    return float(means.std())


def fit_peers(shared, codes, S, seed):
    """The :data:`PEERS` predictors on the reference rows of ``shared`` (a fitted meta-model).

    They reuse its row features, so each costs one pass over the reference.
    """
    out = {}
    for method in PEERS:
        if method == "meta_model":
            out[method] = shared
            continue
        pp = PerformancePredictor(method=method, random_state=seed, progress=False)
        out[method] = pp.fit(None, codes, scores=S, row_features_from=shared)
    return out


def peer_accuracies(peers, Z, known=None):
    """Each peer's predicted accuracy of the batch whose row features (of the meta-model) are Z.

    ``known`` maps a peer to its accuracy when the caller has it already.
    """
    known = known or {}
    return {
        m: known[m] if m in known else float(np.mean(pp.predict_rows(row_features=Z).p))
        for m, pp in peers.items()
    }


def evaluate_scenario(
    F_ref, y_ref, S_ref, F_batch, y_batch, S_batch, *, methods, seed, features=True
):
    """Fit each predictor on the reference and judge it on the batch.

    Parameters
    ----------
    F_ref, F_batch : ndarray or DataFrame, or None
        Features (None: score-only).
    y_ref, y_batch : ndarray of int
        True class indices.
    S_ref, S_batch : ndarray of shape (n, n_classes)
        The black box's scores.
    methods : sequence of str
        Predictors (:data:`METHODS` names).
    seed : int
        Seed of the predictors, the drift classifiers and the bootstrap.
    features : bool
        Compute the uncertainty model's inputs.

    Returns
    -------
    list of dict
        One record per method: ``method``, ``truth`` (the batch's accuracy),
        ``prediction``, ``error`` (signed), ``n_batch``, the baselines'
        uncalibrated half-widths ``se``, ``bootstrap``, ``intrinsic``, and
        (with ``features``) the uncertainty model's inputs.
    """
    truth = float(np.mean(S_batch.argmax(axis=1) == y_batch))
    shared = PerformancePredictor(method="meta_model", random_state=seed, progress=False)
    shared.fit(F_ref, y_ref, scores=S_ref)
    rng = np.random.default_rng(seed)
    ref_rows = shared.reference_rows_
    importances = None
    if shared.features_.use_proxies_:
        importances = shared.features_.models_[1].feature_importances_
    fitted = fit_peers(shared, y_ref, S_ref, seed)
    shared_rows = shared.predict_rows(F_batch, scores=S_batch)
    Z = shared_rows["Z"]  # every predictor here reads the meta-model's row features
    batch_info = {"Z": Z, "F": shared_rows["features"], "pred": shared_rows["pred"]}
    peers = peer_accuracies(fitted, Z, known={"meta_model": float(np.mean(shared_rows["p"]))})
    records = []
    shared_feats = None
    for method in methods:
        pp = fitted.get(method)
        if pp is None:
            pp = PerformancePredictor(method=method, random_state=seed, progress=False)
            pp.fit(None, y_ref, scores=S_ref, row_features_from=shared)
        rows = shared_rows if pp is shared else pp.predict_rows(row_features=Z, scores=S_batch)
        p = rows["p"]
        rec = {
            "method": method,
            "truth": truth,
            "prediction": float(p.mean()),
            "n_batch": int(p.size),
            "n_reference": int(S_ref.shape[0]),
        }
        rec["error"] = rec["prediction"] - truth
        rec["se"] = float(p.std() / np.sqrt(p.size))
        rec["bootstrap"] = _bootstrap_sd(p, rng)
        rec["intrinsic"] = np.nan if rows["u"] is None else float(np.mean(rows["u"]))
        if features:
            feats = batch_features(
                ref_rows,
                batch_info,
                rows,
                pp.reference_accuracy_,
                importances=importances,
                seed=seed,
                shared=shared_feats,
                peers=peers,
            )
            if shared_feats is None:
                shared_feats = {k: feats[k] for k in SHARED_FEATURES}
            rec.update(feats)
        records.append(rec)
    return records


def library_scenario(
    X, y, reference, batch, *, base, methods, seed, train_share=0.5, features=True
):
    """A scenario of the data-set library: train a base model, then :func:`evaluate_scenario`.

    The reference rows are split at random into the base model's training rows
    (``train_share``) and the predictors' reference rows (Elder et al.'s
    train/test split of the pre-drift data).
    """
    train, ref = train_test_split(
        reference, train_size=train_share, random_state=seed, stratify=None
    )
    model = clone(BASE_MODELS[base])
    if "random_state" in model.get_params():
        model.set_params(random_state=seed)
    model.fit(X[train], y[train])
    K = int(y.max()) + 1

    def scores(rows):
        S = np.zeros((rows.size, K))
        S[:, model.classes_] = model.predict_proba(X[rows])
        return S

    out = evaluate_scenario(
        X[ref],
        y[ref],
        scores(ref),
        X[batch],
        y[batch],
        scores(batch),
        methods=methods,
        seed=seed,
        features=features,
    )
    for rec in out:
        rec["base"] = base
    return out
