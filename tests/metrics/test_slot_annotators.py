"""The noise model of a comparison of models: each item's true class among its slots first."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.metrics._agreement_patterns import agreement_patterns
from skassess.metrics._annotators import (
    ENDS_GRID,
    OneCoinAnnotators,
    beta_from_interval,
    end_blocks,
)
from skassess.metrics._slot_annotators import SlotAnnotators, model_slots

PRIOR = beta_from_interval(0.85, 0.999)


def test_model_slots_are_the_classes_of_the_blocks():
    predictions = np.array([[3, 3, 1], [2, 0, 2], [5, 5, 5], [4, 1, 0]])
    slots = model_slots(predictions, agreement_patterns(predictions))
    np.testing.assert_array_equal(slots, [[3, 1, -1], [2, 0, -1], [5, -1, -1], [4, 1, 0]])


def test_a_gold_annotator_fixes_the_true_class():
    rng = np.random.default_rng(0)
    n, K = 300, 4
    slots = np.column_stack([rng.integers(0, K, n), np.full(n, -1)])
    gold = rng.integers(0, K, n)
    labels = np.column_stack([gold, np.where(rng.random(n) < 0.5, rng.integers(0, K, n), -1)])
    model = SlotAnnotators(slots, np.zeros(n), labels, K, [1.0, PRIOR], rng)
    eps, drawn = model.draw(5)
    assert np.all(drawn == gold)
    assert np.all(eps[:, 0] == 0.0)


def test_one_slot_is_the_one_coin_model():
    """With one slot and one pseudo-count each, the Gibbs draws and the one-coin model's
    exact ones agree: the annotators' accuracy and how often the prediction is true."""
    rng = np.random.default_rng(1)
    n, K = 800, 5
    y = rng.integers(0, K, n)
    pred = np.where(rng.random(n) < 0.8, y, (y + rng.integers(1, K, n)) % K)
    labels = np.full((n, 2), -1)
    for a, eps in enumerate((0.04, 0.12)):
        mine = rng.random(n) < 0.6
        labels[mine, a] = np.where(rng.random(mine.sum()) < eps, (y[mine] + 1) % K, y[mine])
    labels[(labels < 0).all(1), 0] = y[(labels < 0).all(1)]
    group = (rng.random(n) < 0.5).astype(int)
    slot = SlotAnnotators(pred[:, None], group, labels, K, [PRIOR, PRIOR], rng)
    coin = OneCoinAnnotators(pred, group, labels, K, [PRIOR, PRIOR], rng)
    _, slot_draws = slot.draw(60)
    _, coin_draws = coin.draw(60)
    slot_acc, coin_acc = slot.accuracy_summary()[:, 0], coin.accuracy_summary()[:, 0]
    np.testing.assert_allclose(slot_acc, coin_acc, atol=0.01)
    right_slot, right_coin = (slot_draws == pred).mean(), (coin_draws == pred).mean()
    assert right_slot == pytest.approx(right_coin, abs=0.01)


def test_the_cut_slip_rates_come_from_the_repeats_or_the_prior():
    """Without repeats, under ``"repeats"``, the slip rates' draws follow their prior; with
    every item repeated the cut is the joint chain; with some, the unrepeated items' labels
    do not move them."""
    rng = np.random.default_rng(3)
    n, K = 600, 4
    y = rng.integers(0, K, n)
    slots = np.column_stack([np.where(rng.random(n) < 0.8, y, (y + 1) % K), np.full(n, -1)])
    one = np.where(rng.random(n) < 0.05, (y + 2) % K, y)[:, None]
    model = SlotAnnotators(
        slots, np.zeros(n), one, K, [PRIOR], np.random.default_rng(0), slip_evidence="repeats"
    )
    model.draw(40)
    mean = PRIOR[0] / sum(PRIOR)
    assert model.accuracy_summary()[0, 0] == pytest.approx(mean, abs=0.005)
    two = np.column_stack([one[:, 0], np.where(np.arange(n) < 200, y, -1)])
    moved = two.copy()
    moved[200:, 0] = (moved[200:, 0] + 1) % K  # the labels of the items labeled once
    summaries = []
    for labels in (two, moved):
        m = SlotAnnotators(slots, np.zeros(n), labels, K, [PRIOR, PRIOR], np.random.default_rng(0))
        m.draw(10)
        summaries.append(m.accuracy_summary())
    np.testing.assert_array_equal(summaries[0], summaries[1])
    every = np.column_stack([one[:, 0], y])
    cut, joint = (
        SlotAnnotators(
            slots, np.zeros(n), every, K, [PRIOR, PRIOR], np.random.default_rng(0), slip_evidence=e
        )
        for e in ("repeats", "all")
    )
    np.testing.assert_array_equal(cut.draw(5)[1], joint.draw(5)[1])


def test_bounds_with_repeats_is_repeats():
    rng = np.random.default_rng(1)
    n, K = 400, 4
    y = rng.integers(0, K, n)
    slots = np.column_stack([np.where(rng.random(n) < 0.8, y, (y + 1) % K), np.full(n, -1)])
    one = np.where(rng.random(n) < 0.05, (y + 2) % K, y)
    two = np.column_stack([one, np.where(np.arange(n) < 100, y, -1)])
    draws = [
        SlotAnnotators(
            slots, np.zeros(n), two, K, [PRIOR, PRIOR], np.random.default_rng(0), slip_evidence=e
        ).draw(5)[1]
        for e in ("repeats", "bounds")
    ]
    np.testing.assert_array_equal(draws[0], draws[1])


def test_bounds_without_repeats_draws_each_end_half_the_time():
    """Two annotators, no item labeled twice: every combination of the two ends takes a
    quarter of the draws, and each end is a slip rate the annotator's draws keep."""
    rng = np.random.default_rng(5)
    n, K = 800, 4
    y = rng.integers(0, K, n)
    slots = np.column_stack([np.where(rng.random(n) < 0.9, y, (y + 1) % K), np.full(n, -1)])
    lab = np.where(rng.random(n) < 0.03, (y + 2) % K, y)
    labels = np.full((n, 2), -1)
    labels[::2, 0], labels[1::2, 1] = lab[::2], lab[1::2]
    model = SlotAnnotators(slots, np.zeros(n), labels, K, [PRIOR, PRIOR], np.random.default_rng(0))
    low, high = model._ends
    assert np.all(low < high)
    eps, _ = model.draw(20)
    combos = {tuple(e) for e in eps}
    assert combos == {(a, b) for a in (low[0], high[0]) for b in (low[1], high[1])}
    for a in range(2):
        assert np.sum(eps[:, a] == high[a]) == 10


def test_end_blocks_keep_both_extremes_with_fewer_rows_than_combinations():
    low, high = np.full(5, 0.01), np.full(5, 0.1)
    rows = end_blocks(low, high, 20)  # 32 combinations, 20 rows
    assert np.all(rows[0] == low) and np.all(rows[-1] == high)
    assert len({tuple(r) for r in rows}) == 20
    even = end_blocks(low[:2], high[:2], 20)
    assert all(np.sum((even == c).all(axis=1)) == 5 for c in {tuple(r) for r in even})


def test_slot_ends_with_one_slot_are_the_one_coin_ends():
    """With one slot per item, whether a label names a slot is whether it agrees with the
    black box: the allowed range is the one-coin model's, to a step of its grid."""
    rng = np.random.default_rng(6)
    n, K = 1500, 5
    y = rng.integers(0, K, n)
    pred = np.where(rng.random(n) < 0.93, y, (y + 1) % K)
    group = rng.integers(0, 3, n)
    lab = np.where(rng.random(n) < 0.05, (y + 2) % K, y)[:, None]
    prior = [beta_from_interval(0.8, 0.995)]
    slot = SlotAnnotators(
        np.column_stack([pred, np.full(n, -1)]), group, lab, K, prior, np.random.default_rng(0)
    )
    coin = OneCoinAnnotators(pred, group, lab, K, prior, np.random.default_rng(0))
    np.testing.assert_allclose(slot._ends[0], coin._ends[0])
    step = (coin._ends[1] - coin._ends[0]) / (ENDS_GRID - 1)
    assert coin._ends[1][0] < 0.19  # the labels cap the slip rate below the prior's end
    np.testing.assert_allclose(slot._ends[1], coin._ends[1], atol=1.01 * step[0])


def test_a_second_model_tightens_the_cap():
    """Labels that name one of two models' classes cap the slip rate lower than the
    labels that agree with the first model alone: a model error is no slip."""
    rng = np.random.default_rng(7)
    n, K = 2000, 5
    y = rng.integers(0, K, n)
    first = np.where(rng.random(n) < 0.8, y, (y + 1) % K)
    second = np.where(first == y, (y + 3) % K, y)  # right wherever the first is wrong
    lab = np.where(rng.random(n) < 0.02, (y + 2) % K, y)[:, None]
    blocks = agreement_patterns(np.column_stack([first, second]))
    group = blocks @ [10, 1]
    one = SlotAnnotators(
        np.column_stack([first, np.full(n, -1)]), group, lab, K, [PRIOR], np.random.default_rng(0)
    )
    both = SlotAnnotators(
        model_slots(np.column_stack([first, second]), blocks),
        group,
        lab,
        K,
        [PRIOR],
        np.random.default_rng(0),
    )
    assert both._ends[1][0] < one._ends[1][0]


def test_a_slip_away_from_every_model_is_read_as_a_slip():
    """Two models disagree on every item and one of them is always right. A known 10 %
    annotator names a third class on some items: the slot model draws one of the two
    models' classes there nearly always; the one-coin model, whose errors go to every
    other class alike, takes the third class for the truth far more often."""
    rng = np.random.default_rng(2)
    n, K = 1000, 3
    a = rng.integers(0, K, n)
    b = (a + rng.integers(1, K, n)) % K
    y = np.where(rng.random(n) < 0.6, a, b)
    third = 3 - a - b
    label = np.where(rng.random(n) < 0.1, np.where(rng.random(n) < 0.5, third, a + b - y), y)
    labels = label[:, None]
    group = np.zeros(n)
    slot = SlotAnnotators(np.column_stack([a, b]), group, labels, K, [0.9], rng)
    coin = OneCoinAnnotators(a, group, labels, K, [0.9], rng)
    slipped = label == third
    _, slot_draws = slot.draw(20)
    _, coin_draws = coin.draw(20)
    assert (slot_draws[:, slipped] == third[slipped]).mean() < 0.1
    assert (coin_draws[:, slipped] == third[slipped]).mean() > 0.5


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 30),
    K=st.integers(2, 6),
    M=st.integers(1, 3),
    A=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_every_drawn_class_is_a_class_and_keeps_a_group_shape(n, K, M, A, seed):
    rng = np.random.default_rng(seed)
    predictions = rng.integers(0, K, (n, M))
    blocks = agreement_patterns(predictions)
    slots = model_slots(predictions, blocks)
    group = np.unique(blocks, axis=0, return_inverse=True)[1].ravel()
    labels = np.where(rng.random((n, A)) < 0.6, rng.integers(0, K, (n, A)), -1)
    labels[(labels < 0).all(1), 0] = 0
    concentration = rng.uniform(0.1, 2.0, (n, M + 1))
    model = SlotAnnotators(slots, group, labels, K, [PRIOR] * A, rng, concentration)
    eps, drawn = model.draw(3)
    assert drawn.shape == (3, n) and eps.shape == (3, A)
    assert np.all((drawn >= 0) & (drawn < K))
    assert np.all((eps > 0) & (eps < 1))
    # where the models predict every class, the truth is one of them
    full = (slots >= 0).sum(1) == K
    assert np.all((drawn[:, full, None] == slots[None, full]).any(-1))


def test_items_of_a_group_must_have_the_same_number_of_slots():
    slots = np.array([[0, 1], [0, -1]])
    with pytest.raises(ValueError, match="same number of slots"):
        SlotAnnotators(slots, np.zeros(2), np.array([[0], [1]]), 3, [PRIOR], None)
