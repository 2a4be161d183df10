import numpy as np
import pandas as pd
import pytest

from skassess import BayesianAccuracy, BayesianMisclassificationCost
from skassess.metrics import GroupComparison, compare_groups, rank_groups, top_m_groups


def _draws():
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "a": rng.normal(0.80, 0.01, 4000),
            "b": rng.normal(0.90, 0.01, 4000),
            "c": rng.normal(0.60, 0.01, 4000),
            "d": rng.normal(0.805, 0.01, 4000),
        }
    )


def test_rope_probabilities_and_decision():
    draws = _draws()
    left = compare_groups(draws, "a", "b", rope=0.05)
    assert left.probabilities[0] > 0.99 and left.decision == "left"
    assert left.confidence == pytest.approx(max(left.probabilities))
    same = compare_groups(draws, "a", "d", rope=0.05)
    assert same.decision == "rope" and same.probabilities[1] > 0.99
    right = compare_groups(draws, "a", "c")
    assert right.decision == "right"
    assert sum(right.probabilities) == pytest.approx(1.0)
    lower, upper = right.interval(0.95)
    assert lower < right.mean < upper
    assert isinstance(right, GroupComparison)
    assert list(right.summary().columns)[-2:] == ["decision", "confidence"]


def test_a_decision_needs_its_probability_else_undecided():
    # P(left) = 0.55, P(rope) = 0.30, P(right) = 0.15: the most probable region is no decision
    delta = np.concatenate([np.full(55, -0.2), np.zeros(30), np.full(15, 0.2)])
    comp = GroupComparison(delta, "x", "y", rope=0.05)
    assert comp.most_probable == "left" and comp.confidence == pytest.approx(0.55)
    assert comp.decision == "undecided"
    assert comp.summary()["decision"].iloc[0] == "undecided"
    assert GroupComparison(delta, "x", "y", 0.05, decision_probability=0.5).decision == "left"
    draws = pd.DataFrame({"x": delta, "y": np.zeros_like(delta)})
    assert compare_groups(draws, "x", "y", decision_probability=0.55).decision == "left"
    assert compare_groups(draws, "x", "y", decision_probability=0.56).decision == "undecided"
    with pytest.raises(ValueError, match="decision_probability"):
        compare_groups(draws, "x", "y", decision_probability=0.3)


def test_rope_in_metric_units_matches_draws():
    delta = np.linspace(-0.2, 0.2, 401)
    comp = GroupComparison(delta, "x", "y", rope=0.05)
    p_left, p_rope, p_right = comp.probabilities
    assert p_left == pytest.approx(np.mean(delta < -0.05))
    assert p_rope == pytest.approx(np.mean(np.abs(delta) <= 0.05))


def test_rank_groups():
    table = rank_groups(_draws())
    assert table.loc["c", "p_lowest"] == pytest.approx(1.0)
    assert table.loc["b", "p_highest"] == pytest.approx(1.0)
    rank_cols = [c for c in table.columns if c.startswith("p_rank_")]
    np.testing.assert_allclose(table[rank_cols].sum(axis=1), 1.0)
    np.testing.assert_allclose(table[rank_cols].sum(axis=0), 1.0)
    assert table.loc["c", "expected_rank"] == pytest.approx(1.0)


def test_top_m():
    top = top_m_groups(_draws(), 2)
    assert list(top.index[top["selected"]]) == ["c", "a"] or list(top.index[top["selected"]]) == [
        "c",
        "d",
    ]
    assert top.loc["c", "p_top_m"] == pytest.approx(1.0)
    high = top_m_groups(_draws(), 1, highest=True)
    assert list(high.index[high["selected"]]) == ["b"]


def test_from_estimators_find_the_worst_class():
    rng = np.random.default_rng(1)
    n = 3000
    pred = rng.integers(0, 3, n)
    scores = np.full((n, 3), 0.1)
    scores[np.arange(n), pred] = 0.8
    right = rng.uniform(size=n) < np.array([0.9, 0.5, 0.95])[pred]
    y = np.where(right, pred, (pred + 1) % 3)
    est = BayesianAccuracy(random_state=0).fit(scores, y)
    assert rank_groups(est)["p_lowest"].idxmax() == 1
    assert compare_groups(est, 0, 1).decision == "right"
    cost = BayesianMisclassificationCost(random_state=0).fit(scores, y)
    assert top_m_groups(cost, 1, highest=True).index[0] == 1


@pytest.mark.parametrize(
    "call", [rank_groups, lambda d: top_m_groups(d, 1), lambda d: compare_groups(d, "b", "a")]
)
def test_draws_with_a_repeated_group_are_refused(call):
    draws = pd.DataFrame(np.random.default_rng(0).uniform(size=(50, 3)), columns=["a", "b", "a"])
    with pytest.raises(ValueError, match="names the group 'a' in two columns"):
        call(draws)
