"""The uncertainty model's Peers family, drift classifiers and importance-weighted accuracy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.meta._um_features import (
    DRIFT_NEIGHBORS,
    PEERS,
    UM_FEATURES,
    _drift_classifier,
    _drift_neighbors,
    _importance_weighted,
    batch_features,
    peer_features,
)

unit = st.floats(0.0, 1.0)


@settings(max_examples=100, deadline=None)
@given(unit, st.lists(unit, min_size=len(PEERS), max_size=len(PEERS)))
def test_peer_features_are_the_gaps_to_each_peer(prediction, values):
    peers = dict(zip(PEERS, values, strict=True))
    out = peer_features(prediction, peers)
    for m in PEERS:
        assert out[f"peer_{m}"] == pytest.approx(prediction - peers[m])
    assert out["peer_range"] == pytest.approx(max(values) - min(values))
    assert 0.0 <= out["peer_sd"] <= out["peer_range"] / 2 + 1e-12
    assert set(out) <= set(UM_FEATURES)


def test_peer_features_without_peers_are_nan():
    out = peer_features(0.8, None)
    assert len(out) == len(PEERS) + 2 and all(np.isnan(v) for v in out.values())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.booleans()), min_size=2, max_size=80))
def test_importance_weighted_accuracy_is_a_weighted_mean(rows):
    proba = np.array([r[0] for r in rows])
    correct = np.array([r[1] for r in rows])
    acc, se, ess = _importance_weighted(proba, correct)
    assert correct.min() - 1e-12 <= acc <= correct.max() + 1e-12
    assert se >= 0.0
    assert 1.0 / proba.size - 1e-12 <= ess <= 1.0 + 1e-12


def test_equal_odds_give_the_plain_accuracy():
    correct = np.array([1, 1, 0, 1, 0, 1, 1, 1], dtype=bool)
    acc, se, ess = _importance_weighted(np.full(8, 0.3), correct)
    assert acc == pytest.approx(correct.mean())
    assert ess == pytest.approx(1.0)
    assert se == pytest.approx(np.sqrt(np.sum((correct - correct.mean()) ** 2)) / 8)


def _shifted(seed, n=3000):
    """A black box right with probability sigmoid(2 x0); the batch favours large x0."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    correct = rng.random(n) < 1 / (1 + np.exp(-2 * X[:, 0]))
    in_batch = rng.random(n) < 1 / (1 + np.exp(-2.5 * X[:, 0]))
    return X, correct, in_batch


@pytest.mark.slow
def test_importance_weighting_follows_covariate_shift():
    # Ten seeded covariate shifts: the reference accuracy is off by 43 points on average,
    # the reweighted one by 4 (asserted: at least three times closer).
    ref_err, iw_err = [], []
    for seed in range(10):
        X, correct, in_batch = _shifted(seed)
        proba, _, kept = _drift_classifier(X[~in_batch], X[in_batch], seed)
        acc, _, ess = _importance_weighted(proba[: kept.size], correct[~in_batch][kept])
        truth = correct[in_batch].mean()
        ref_err.append(abs(correct[~in_batch].mean() - truth))
        iw_err.append(abs(acc - truth))
        assert ess < 1.0
    assert np.mean(ref_err) > 0.1
    assert np.mean(iw_err) < np.mean(ref_err) / 3


def test_batch_features_with_the_reference_correctness():
    X, correct, in_batch = _shifted(0, n=1200)
    ref = {
        "Z": np.column_stack([np.full((~in_batch).sum(), 0.8)] * 4),
        "pred": np.zeros((~in_batch).sum(), int),
        "F": X[~in_batch],
        "correct": correct[~in_batch],
    }
    batch = {
        "Z": np.column_stack([np.full(in_batch.sum(), 0.8)] * 4),
        "pred": np.zeros(in_batch.sum(), int),
        "F": X[in_batch],
    }
    rows = {"p": np.full(in_batch.sum(), 0.6), "u": None, "raw": np.full(in_batch.sum(), 0.8)}
    peers = dict.fromkeys(PEERS, 0.6)
    feats = batch_features(
        ref,
        batch,
        rows,
        correct[~in_batch].mean(),
        importances=np.array([0.7, 0.3]),
        peers=peers,
        seed=0,
    )
    assert set(feats) == set(UM_FEATURES)
    for src in ("drift_x", "drift_z"):
        assert feats[f"{src}_iw_gap"] == pytest.approx(0.6 - feats[f"{src}_iw_accuracy"])
    # the features see the shift; the constant scores do not
    assert feats["drift_x_iw_accuracy"] > correct[~in_batch].mean() + 0.05
    assert feats["drift_z_iw_accuracy"] == pytest.approx(correct[~in_batch].mean(), abs=0.02)
    assert feats["peer_range"] == 0.0


def test_drift_neighbors_tell_apart_what_differs_and_not_what_does_not():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(1500, 4))
    same = _drift_neighbors(A, rng.normal(size=(300, 4)))[1]
    apart = _drift_neighbors(A, rng.normal(size=(300, 4)) + 10.0)[1]
    assert abs(same - 0.5) < 0.03
    assert apart == 1.0


def test_drift_neighbors_leave_each_row_out_and_count_its_duplicates():
    # two reference rows and two batch rows on one point: each row's neighbours are the
    # three others (itself left out), so a batch row's share is 1/3 and a reference
    # row's 2/3 when n_neighbors=3
    A = np.zeros((2, 1))
    B = np.zeros((2, 1))
    proba, acc = _drift_neighbors(A, B, n_neighbors=3)
    np.testing.assert_allclose(proba, [2 / 3, 2 / 3, 1 / 3, 1 / 3])
    assert acc == 0.0
    assert _drift_neighbors(A[:1], B)[0] is None  # one reference row: nothing to tell apart


def test_drift_neighbors_are_as_many_as_the_rows_allow():
    rng = np.random.default_rng(1)
    proba, _ = _drift_neighbors(rng.normal(size=(5, 2)), rng.normal(size=(4, 2)))
    assert DRIFT_NEIGHBORS > 8
    np.testing.assert_allclose(proba * 8, np.round(proba * 8), atol=1e-12)  # shares of 8
