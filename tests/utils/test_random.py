"""Seeds and generators from a scikit-learn random_state."""

import numpy as np
import pytest

from skassess.utils._random import check_generator, seed_int


@pytest.mark.parametrize("seed", [0, 7, 2**31 - 2])
def test_an_int_seed_is_kept(seed):
    assert seed_int(seed) == seed
    assert seed_int(np.int64(seed)) == seed


def test_none_draws_fresh_seeds_in_range():
    seeds = {seed_int(None) for _ in range(20)}
    assert len(seeds) > 1  # 20 draws from 2**31 values: a repeat has probability ~1e-7
    assert all(0 <= s < 2**31 - 1 for s in seeds)


def test_generators_and_random_states_give_reproducible_seeds():
    assert seed_int(np.random.default_rng(3)) == seed_int(np.random.default_rng(3))
    assert seed_int(np.random.RandomState(3)) == seed_int(np.random.RandomState(3))
    rng = np.random.default_rng(0)
    assert check_generator(rng) is rng
