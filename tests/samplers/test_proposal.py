"""ActiveTester's proposal: relative variances of the metrics, and the share of uniform
sampling chosen from the earlier draws."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skassess.samplers import ActiveTester
from skassess.samplers._confusion_metrics import metric_gradients
from skassess.samplers._proposal import relative_roots, uniform_share


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 100_000))
def test_each_metric_weighs_as_much_under_uniform_sampling(seed):
    # sum_i roots_i^2 over the unlabeled items is the number of metrics with any
    # residual: each metric's residuals, scaled by w_k, sum to one.
    rng = np.random.default_rng(seed)
    resid = rng.exponential(size=(4, 30)) * rng.exponential(size=(4, 1)) * 100
    resid[rng.integers(4)] = 0.0
    unlabeled = np.sort(rng.choice(30, 20, replace=False))
    roots, weights = relative_roots(resid, unlabeled)
    assert np.isclose((roots[unlabeled] ** 2).sum(), np.count_nonzero(weights))
    # A metric scaled up by any factor leaves the proposal unchanged.
    scaled = resid.copy()
    scaled[0] *= 1e6
    np.testing.assert_allclose(relative_roots(scaled, unlabeled)[0], roots)


def _pool(n=400, K=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.full(K, 0.5), size=n), rng.integers(0, K, n)


def test_uniform_share_follows_where_the_draws_met_their_residuals():
    # A proposal that put almost no mass where the earlier draws fell is mixed fully
    # with uniform sampling; one that put its mass there keeps the floor, uniform_mix.
    scores, y = _pool()
    t = ActiveTester(["accuracy", "macro_f1"], min_labels=5, random_state=0).fit(scores)
    t.run(y, budget=40, batch_size=10, progress=False)
    assert t.uniform_mix <= t.uniform_share_ <= 1.0
    grad = metric_gradients(t._estimate.totals(t._plugin(t._g)[0]), t._metrics)
    n_unlabeled = int((t.labels_ < 0).sum())
    drawn = np.array([d.index for d in t._draws])
    args = (t._draws, t.labels_, t._pred)
    rest = (n_unlabeled, grad, t.control_variate_, np.ones(2), t.uniform_mix)
    starve = np.full(len(y), 1.0 / n_unlabeled)
    starve[drawn] = 1e-9
    assert uniform_share(*args, starve, *rest) == 1.0
    focus = np.full(len(y), 1e-9)
    focus[drawn] = 1.0 / len(drawn)
    assert uniform_share(*args, focus, *rest) == t.uniform_mix
