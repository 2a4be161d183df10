"""Random numbers from a scikit-learn ``random_state``: a numpy Generator, or an int seed."""

import numbers

import numpy as np


def check_generator(random_state):
    """A :class:`numpy.random.Generator` from a scikit-learn ``random_state``.

    An int or None as :func:`numpy.random.default_rng` takes them (None: fresh
    entropy), a Generator as it is, a RandomState by a seed drawn from it.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    return np.random.default_rng(random_state)


def seed_int(random_state):
    """An int seed in ``[0, 2**31 - 1)`` from a scikit-learn ``random_state``.

    An int as it is, a RandomState or Generator by a seed drawn from it, None
    by fresh entropy: for the libraries that take an int seed (xgboost), and
    for a fit that stores one seed for its later calls.
    """
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1)[0] % (2**31 - 1))
    return int(check_generator(random_state).integers(2**31 - 1))
