import numpy as np
import pytest

from skassess.calibration._mcmc import effective_sample_size, sample_mcmc, split_rhat


def _normal_log_prob(theta):
    return -0.5 * np.sum(theta**2, axis=1)


def _run(monitor=None, max_steps=400):
    rng = np.random.default_rng(0)
    initial = rng.normal(size=(4, 8, 2))
    kept, _, _ = sample_mcmc(
        _normal_log_prob,
        initial,
        n_burn=50,
        n_steps=100,
        max_steps=max_steps,
        target_ess=200,
        rng=rng,
        monitor=monitor,
    )
    return kept


def test_samples_a_standard_normal():
    rng = np.random.default_rng(0)
    kept, rhat, ess = sample_mcmc(
        _normal_log_prob,
        rng.normal(size=(4, 8, 2)),
        n_burn=50,
        n_steps=100,
        max_steps=400,
        target_ess=200,
        rng=rng,
    )
    np.testing.assert_allclose(rhat, split_rhat(kept))
    np.testing.assert_allclose(ess, effective_sample_size(kept))
    assert kept.shape[0] == 4 and kept.shape[2:] == (8, 2)
    assert split_rhat(kept).max() <= 1.01
    assert effective_sample_size(kept).min() >= 200
    flat = kept.reshape(-1, 2)
    # mean within 4 Monte Carlo standard errors of 0, variance within 15 % of 1
    se = 1 / np.sqrt(effective_sample_size(kept))
    assert np.all(np.abs(flat.mean(axis=0)) < 4 * se)
    assert np.all(np.abs(flat.var(axis=0) - 1) < 0.15)


def test_the_loop_checks_what_the_monitor_returns():
    converged = _run()
    # a monitored quantity that differs between chains never passes R-hat:
    # the chains grow to max_steps
    offset = np.arange(4.0).reshape(4, 1, 1, 1)
    calls = []

    def monitor(kept):
        calls.append(kept.shape[1])
        return kept[..., :1] + offset

    stuck = _run(monitor, max_steps=400)
    assert converged.shape[1] < 400
    assert stuck.shape[1] == 400
    assert calls[0] == 100 and calls == sorted(calls) and calls[-1] == 400


def test_each_chain_moves_only_by_its_own_walkers():
    # a flat density accepts every proposal; each ensemble starts in a tight
    # cluster of its own, far from the others. Differential-evolution steps
    # built from the walkers of the same ensemble stay within the cluster's
    # spread; one built from another ensemble's walkers would jump by ~100.
    rng = np.random.default_rng(0)
    centres = 100.0 * np.arange(4)
    initial = centres[:, None, None] + 0.001 * rng.normal(size=(4, 7, 2))  # odd walkers too
    kept, _, _ = sample_mcmc(
        lambda theta: np.zeros(len(theta)),
        initial,
        n_burn=0,
        n_steps=5,
        max_steps=5,
        target_ess=1,
        rng=rng,
    )
    assert kept.shape == (4, 5, 7, 2)
    assert np.all(np.abs(kept - centres[:, None, None, None]) < 1.0)
    assert np.all(kept.std(axis=(1, 2)) > 0)  # and they do move


@pytest.mark.parametrize("max_steps", [100, 150])
def test_max_steps_caps_the_chains(max_steps):
    kept = _run(lambda kept: kept + np.arange(4.0).reshape(4, 1, 1, 1), max_steps=max_steps)
    assert kept.shape[1] == max_steps


def test_a_chain_too_big_to_store_is_thinned():
    # 4 chains x 400 steps x 8 walkers x 2 parameters = 25,600 numbers; at most
    # 4,000 may be stored: every 7th step is kept, and the sample is still right
    rng = np.random.default_rng(0)
    kept, rhat, ess = sample_mcmc(
        _normal_log_prob,
        rng.normal(size=(4, 8, 2)),
        n_burn=50,
        n_steps=100,
        max_steps=400,
        target_ess=200,
        rng=rng,
        max_stored=4000,
    )
    assert kept.size <= 4000 and kept.shape[1] <= 400 // 7
    assert kept.shape[1] >= 100 // 7
    flat = kept.reshape(-1, 2)
    assert np.all(np.abs(flat.mean(axis=0)) < 4 / np.sqrt(ess))
    assert np.all(np.abs(flat.var(axis=0) - 1) < 0.15)


def _ar1(rng, shape, phi):
    """Chains of a stationary AR(1) with unit variance along axis 1."""
    x = np.empty(shape)
    x[:, 0] = rng.normal(size=shape[:1] + shape[2:])
    for t in range(1, shape[1]):
        x[:, t] = phi * x[:, t - 1] + np.sqrt(1 - phi**2) * rng.normal(size=shape[:1] + shape[2:])
    return x


def _check_ess(ess, truth):
    # the estimate of one parameter has a sampling error of 11 % (one walker) to
    # 18 % (16 walkers averaged), measured over 20 seeds; the mean over 16
    # parameters within 12 % is more than 2.5 of its standard errors
    ratio = ess / truth
    assert abs(ratio.mean() - 1) < 0.12 and np.all(np.abs(ratio - 1) < 0.6)


def test_ess_of_ar1_chains_is_n_over_tau():
    # AR(1) with phi = 0.9: tau = (1 + phi) / (1 - phi) = 19, ESS = 4 x 2000 / 19 = 421
    x = _ar1(np.random.default_rng(0), (4, 2000, 1, 16), 0.9)
    _check_ess(effective_sample_size(x), 8000 / 19)


def test_identical_walkers_count_once_and_independent_ones_each():
    rng = np.random.default_rng(1)
    x = _ar1(rng, (4, 2000, 1, 4), 0.9)
    # 16 copies of each chain's walker: the same information as one walker
    np.testing.assert_allclose(
        effective_sample_size(np.repeat(x, 16, axis=2)), effective_sample_size(x), rtol=1e-3
    )  # ties: ranks shift
    # 16 independent walkers: 16 times the information
    _check_ess(effective_sample_size(_ar1(rng, (4, 2000, 16, 16), 0.9)), 16 * 8000 / 19)


def test_stuck_or_disagreeing_chains_fail_the_gate():
    from skassess.calibration._mcmc import MAX_RHAT, MIN_ESS

    rng = np.random.default_rng(2)
    stuck = np.repeat(rng.normal(size=(4, 1, 8, 2)), 500, axis=1)  # no walker ever moves
    assert effective_sample_size(stuck).max() < MIN_ESS
    apart = rng.normal(size=(4, 500, 8, 2)) + np.arange(4.0).reshape(4, 1, 1, 1)
    assert effective_sample_size(apart).max() < MIN_ESS
    assert split_rhat(apart).min() > MAX_RHAT
    assert effective_sample_size(rng.normal(size=(4, 3, 8, 2))).max() < MIN_ESS  # 3 steps
