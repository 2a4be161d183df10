import numpy as np
import pytest

from skassess.calibration._mcmc import effective_sample_size, sample_mcmc, split_rhat


def _normal_log_prob(theta):
    return -0.5 * np.sum(theta**2, axis=1)


def _run(monitor=None, max_steps=400):
    rng = np.random.default_rng(0)
    initial = rng.normal(size=(4, 8, 2))
    kept, _, _ = sample_mcmc(_normal_log_prob, initial, n_burn=50, n_steps=100,
                             max_steps=max_steps, target_ess=200, rng=rng, monitor=monitor)
    return kept


def test_samples_a_standard_normal():
    rng = np.random.default_rng(0)
    kept, rhat, ess = sample_mcmc(_normal_log_prob, rng.normal(size=(4, 8, 2)), n_burn=50,
                                  n_steps=100, max_steps=400, target_ess=200, rng=rng)
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


@pytest.mark.parametrize("max_steps", [100, 150])
def test_max_steps_caps_the_chains(max_steps):
    kept = _run(lambda kept: kept + np.arange(4.0).reshape(4, 1, 1, 1), max_steps=max_steps)
    assert kept.shape[1] == max_steps
