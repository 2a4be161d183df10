"""Each strategy's choice on small hand-made posteriors."""

import numpy as np
import pytest

from skassess.metrics import BetaPosterior
from skassess.samplers import (
    BayesianUCB,
    EpsilonGreedy,
    LUCBSampling,
    MultiplePlayThompsonSampling,
    RandomSampling,
    ThompsonSampling,
    TopTwoThompsonSampling,
)
from skassess.samplers._base import pick_arms
from skassess.samplers._rewards import CompareTwo, EstimateRates, ExtremeRate

N_RUNS = 2000


def _state(a, b):
    return BetaPosterior(
        np.tile(np.asarray(a, float), (N_RUNS, 1)), np.tile(np.asarray(b, float), (N_RUNS, 1))
    )


def _freq(arms, n_arms):
    return np.bincount(arms, minlength=n_arms) / len(arms)


def test_thompson_picks_a_clearly_worst_arm():
    state = _state([5, 90, 90, 90], [95, 10, 10, 10])
    arms = ThompsonSampling().choose(
        ExtremeRate(4, highest=False), state, np.full((N_RUNS, 4), 10), np.random.default_rng(0)
    )
    assert _freq(arms, 4)[0] > 0.99


def test_thompson_never_picks_an_exhausted_arm():
    state = _state([5, 90, 90], [95, 10, 10])
    remaining = np.tile([0, 3, 3], (N_RUNS, 1))
    arms = ThompsonSampling().choose(
        ExtremeRate(3, highest=False), state, remaining, np.random.default_rng(0)
    )
    assert not np.any(arms == 0)


def test_thompson_splits_between_equal_arms():
    state = _state([50, 50], [50, 50])
    arms = ThompsonSampling().choose(
        ExtremeRate(2, highest=True), state, np.full((N_RUNS, 2), 5), np.random.default_rng(0)
    )
    assert abs(_freq(arms, 2)[0] - 0.5) < 0.05  # 6 standard errors


def test_top_two_labels_the_leader_or_a_challenger():
    state = _state([30, 40, 40], [70, 60, 60])
    task, remaining = ExtremeRate(3, highest=False), np.full((N_RUNS, 3), 5)
    leader = ThompsonSampling().choose(task, state, remaining, np.random.default_rng(0))
    # The same seed gives the same first draw, hence the same leader.
    always = TopTwoThompsonSampling(beta=1.0).choose(
        task, state, remaining, np.random.default_rng(0)
    )
    np.testing.assert_array_equal(always, leader)
    never = TopTwoThompsonSampling(beta=0.0).choose(
        task, state, remaining, np.random.default_rng(0)
    )
    assert np.mean(never != leader) > 0.99
    half = TopTwoThompsonSampling(beta=0.5).choose(task, state, remaining, np.random.default_rng(0))
    assert abs(np.mean(half == leader) - 0.5) < 0.05


def test_multiple_play_chooses_within_the_top_m():
    state = _state([5, 6, 90, 90], [95, 94, 10, 10])
    arms = MultiplePlayThompsonSampling(m=2).choose(
        ExtremeRate(4, highest=False), state, np.full((N_RUNS, 4), 5), np.random.default_rng(0)
    )
    freq = _freq(arms, 4)
    assert freq[2] + freq[3] < 0.01
    assert abs(freq[0] - 0.5) < 0.05


def test_epsilon_greedy_explores_at_rate_epsilon():
    state = _state([5, 90, 90, 90], [95, 10, 10, 10])
    arms = EpsilonGreedy(0.2).choose(
        ExtremeRate(4, highest=False), state, np.full((N_RUNS, 4), 5), np.random.default_rng(0)
    )
    # Greedy picks arm 0; exploration (a random item) spreads 0.2 over 4 equal arms.
    assert abs(_freq(arms, 4)[0] - 0.85) < 0.03
    assert abs(_freq(arms, 4)[1] - 0.05) < 0.02


def test_bayes_ucb_prefers_the_uncertain_arm_for_the_minimum():
    # Same mean 0.5; arm 1 is far less certain, so its 2.5 % quantile is lower.
    state = BetaPosterior(np.tile([500.0, 2.0], (5, 1)), np.tile([500.0, 2.0], (5, 1)))
    arms = BayesianUCB().choose(
        ExtremeRate(2, highest=False), state, np.full((5, 2), 5), np.random.default_rng(0)
    )
    assert np.all(arms == 1)


def test_random_follows_the_remaining_rows():
    state = _state([1, 1, 1], [1, 1, 1])
    remaining = np.tile([10, 30, 0], (N_RUNS, 1))
    arms = RandomSampling().choose(
        ExtremeRate(3, highest=False), state, remaining, np.random.default_rng(0)
    )
    freq = _freq(arms, 3)
    assert freq[2] == 0
    assert abs(freq[1] - 0.75) < 0.04


def test_compare_task_labels_only_its_two_groups():
    state = _state([50, 40, 30, 20], [50, 60, 70, 80])
    task = CompareTwo(4, 1, 3, rope=0.05)
    for strategy in (ThompsonSampling(), RandomSampling(), EpsilonGreedy(0.5), BayesianUCB()):
        arms = strategy.choose(task, state, np.full((N_RUNS, 4), 5), np.random.default_rng(0))
        assert set(np.unique(arms)) <= {1, 3}, strategy


def test_lucb_labels_the_leader_and_the_groups_that_overlap_it_by_width():
    # Posterior means 0.5, 0.6, 0.9, 0.7: group 0 leads for the lowest accuracy.
    state = _state([50, 60, 90, 70], [50, 40, 10, 30])
    task = ExtremeRate(4, highest=False)
    lower = np.array([[0.40, 0.45, 0.85, 0.62]] * N_RUNS)
    upper = np.array([[0.60, 0.90, 0.95, 0.78]] * N_RUNS)
    # Group 2 cannot be lower than group 0 (0.85 > 0.60), group 3 cannot either.
    arms = LUCBSampling().choose_with_bounds(
        task, state, np.full((N_RUNS, 4), 5), np.random.default_rng(0), (lower, upper)
    )
    freq = _freq(arms, 4)
    assert freq[2] == 0 and freq[3] == 0
    # in proportion to the widths: 0.20 and 0.45
    assert abs(freq[1] - 0.45 / 0.65) < 0.03
    # nothing open: the leader
    upper[:, 0] = 0.44
    arms = LUCBSampling().choose_with_bounds(
        task, state, np.full((N_RUNS, 4), 5), np.random.default_rng(0), (lower, upper)
    )
    assert set(np.unique(arms)) == {0}


@pytest.mark.parametrize("seed", [0, 1])
def test_estimation_reward_prefers_the_uncertain_heavy_group(seed):
    # Group 1: as heavy, far fewer labels, so a label there cuts more variance.
    state = _state([90, 3], [10, 1])
    task = EstimateRates(np.array([0.5, 0.5]))
    arms = ThompsonSampling().choose(
        task, state, np.full((N_RUNS, 2), 5), np.random.default_rng(seed)
    )
    assert _freq(arms, 2)[1] > 0.95


def test_ties_between_arms_go_to_a_random_item():
    """Equal utilities: the arm of a uniformly random item, i.e. by remaining items."""
    remaining = np.tile([10, 30, 0, 60], (20000, 1))
    utilities = np.tile([1.0, 1.0, 1.0, 0.0], (20000, 1))
    freq = _freq(pick_arms(utilities, remaining, np.random.default_rng(0)), 4)
    assert freq[2] == 0 and freq[3] == 0  # exhausted, and not among the best
    assert abs(freq[1] - 0.75) < 0.01  # 30 / 40 items; 4 standard errors


@pytest.mark.parametrize(
    "strategy",
    [
        TopTwoThompsonSampling(beta=2.0),
        TopTwoThompsonSampling(max_resample=0),
        EpsilonGreedy(epsilon=-0.1),
        BayesianUCB(quantile=1.0),
        BayesianUCB(n_draws=0),
        MultiplePlayThompsonSampling(m=0),
        LUCBSampling(level=1.0),
        LUCBSampling(level=0),
    ],
)
def test_strategy_parameters_are_validated(strategy):
    from skassess import ActiveAssessor

    scores = np.tile([[0.9, 0.1], [0.2, 0.8]], (5, 1))
    with pytest.raises(ValueError, match="parameter of"):
        ActiveAssessor(strategy=strategy).fit(scores)
