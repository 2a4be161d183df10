"""VarianceSampling: draws by the outcome's uncertainty, and the calibrated posterior under it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import expit, logit
from sklearn.base import clone

from skassess import ActiveAssessor, BayesianAccuracy, BayesianMisclassificationCost
from skassess.samplers import QueryContext, VarianceSampling


def _context(proba, available):
    n = len(available)
    return QueryContext(
        scores=None,
        y_pred=None,
        labels=np.full(n, -1),
        available=available,
        arm=np.zeros(n, dtype=int),
        estimator=None,
        state=None,
        task=None,
        outcome_proba=lambda: proba,
    )


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 30), st.floats(0.0, 1.0), st.integers(0, 2**31 - 1))
def test_draw_probabilities_are_a_distribution_with_the_uniform_floor(n, mix, seed):
    rng = np.random.default_rng(seed)
    p = rng.random(n) * (rng.random(n) < 0.8)  # some outcomes certain
    available = rng.random(n) < 0.7
    available[rng.integers(n)] = True
    q = VarianceSampling(uniform_mix=mix, min_labels=0).draw_probabilities(
        _context(np.column_stack([1 - p, p]), available)
    )
    assert np.isclose(q.sum(), 1.0)
    assert (q[~available] == 0).all()
    assert (q[available] >= mix / available.sum() - 1e-12).all()
    sd = np.sqrt(p * (1 - p))
    if sd[available].sum() > 0 and mix < 1:
        # Above the floor, proportional to the outcome's standard deviation.
        extra = q[available] - mix / available.sum()
        np.testing.assert_allclose(
            extra, (1 - mix) * sd[available] / sd[available].sum(), atol=1e-12
        )


def test_every_outcome_certain_draws_uniformly():
    available = np.array([True, True, False, True])
    p = np.array([0.0, 1.0, 0.5, 1.0])
    q = VarianceSampling(uniform_mix=0.2, min_labels=0).draw_probabilities(
        _context(np.column_stack([1 - p, p]), available)
    )
    np.testing.assert_allclose(q, [1 / 3, 1 / 3, 0, 1 / 3])


def test_draws_follow_the_draw_probabilities():
    """The argmax of log q plus Gumbel noise is a draw from q (chi-square, 20,000 draws)."""
    p = np.array([0.5, 0.9, 0.99, 0.7, 0.2, 0.999])
    available = np.array([True, True, True, True, False, True])
    strategy = VarianceSampling(uniform_mix=0.3, min_labels=0)
    context = _context(np.column_stack([1 - p, p]), available)
    q = strategy.draw_probabilities(context)
    rng = np.random.default_rng(0)
    picks = [int(np.nanargmax(strategy.item_utilities(context, rng))) for _ in range(20_000)]
    counts = np.bincount(picks, minlength=len(p))
    assert counts[4] == 0
    keep = q > 0
    assert stats.chisquare(counts[keep], 20_000 * q[keep]).pvalue > 1e-3


def test_draws_are_uniform_until_min_labels():
    p = np.array([0.5, 0.99, 0.999, 0.6])
    available = np.array([True, True, True, False])
    context = _context(np.column_stack([1 - p, p]), available)
    context.labels = np.array([-1, -1, -1, 1])  # one label in the pool
    np.testing.assert_allclose(
        VarianceSampling(min_labels=2).draw_probabilities(context), [1 / 3, 1 / 3, 1 / 3, 0]
    )
    q = VarianceSampling(min_labels=1).draw_probabilities(context)
    assert q[0] > q[1] > q[2]


def test_a_context_without_outcome_probabilities_is_refused():
    context = QueryContext(
        scores=None,
        y_pred=None,
        labels=np.full(3, -1),
        available=np.ones(3, bool),
        arm=np.zeros(3, int),
        estimator=None,
        state=None,
        task=None,
    )
    with pytest.raises(ValueError, match="outcome probabilities"):
        context.outcome_proba()


@pytest.mark.parametrize(
    "params, name",
    [
        ({"uniform_mix": -0.1}, "uniform_mix"),
        ({"uniform_mix": 1.5}, "uniform_mix"),
        ({"min_labels": -1}, "min_labels"),
        ({"min_labels": 2.5}, "min_labels"),
    ],
)
def test_parameters_are_validated(params, name):
    scores = np.tile([[0.9, 0.1], [0.2, 0.8]], (5, 1))
    with pytest.raises(ValueError, match=name):
        ActiveAssessor(BayesianAccuracy(), strategy=VarianceSampling(**params)).fit(scores)


def _calibrated_pool(n, rng, shift=-0.4):
    """Binary scores; the black box is right with probability expit(logit(conf) + shift)."""
    conf = np.clip(rng.beta(4.0, 1.2, n), 0.51, 0.999)
    right = rng.random(n) < expit(logit(conf) + shift)
    pred = rng.integers(0, 2, n)
    scores = np.column_stack([1 - conf, conf])
    scores[pred == 0] = scores[pred == 0][:, ::-1]
    y = np.where(right, pred, 1 - pred)
    return scores, y


def test_under_the_calibrated_prior_a_rows_probability_is_its_cells():
    """Rows of one group and score bin get one probability: the draw is uniform within
    the model's cells, so the selection is ignorable under it."""
    rng = np.random.default_rng(0)
    scores, y = _calibrated_pool(2000, rng)
    labels = np.full(len(y), -1)
    labels[:80] = y[:80]
    est = BayesianAccuracy().fit(scores, labels)
    p = est.predict_proba(scores)[:, 1]
    group = est.apply(scores)
    conf = scores.max(axis=1)
    from skassess.metrics._calibrated_model import score_bin, score_logit

    cell = group * 100 + score_bin(score_logit(conf))
    for c in np.unique(cell):
        assert np.ptp(p[cell == c]) == 0
    # The map's probabilities average to the posterior mean of the pool's accuracy.
    assert abs(p.mean() - est.overall_mean()) < 0.005
    # The labeled rows' mean log predictive is score()'s.
    np.testing.assert_allclose(
        est.score(scores[:80], y[:80]),
        np.mean(
            np.log(
                est.predict_proba(scores[:80])[
                    np.arange(80), (scores[:80].argmax(1) == y[:80]).astype(int)
                ]
            )
        ),
    )


def test_other_priors_keep_a_groups_predictive_for_each_row():
    rng = np.random.default_rng(1)
    scores, y = _calibrated_pool(500, rng)
    labels = np.where(np.arange(500) < 50, y, -1)
    est = BayesianAccuracy(prior="hierarchical").fit(scores, labels)
    m = est.posterior_.mean()
    np.testing.assert_allclose(est.predict_proba(scores)[:, 1], m[est.apply(scores)])


@pytest.mark.slow
def test_the_calibrated_posterior_covers_under_variance_sampling():
    """Seeded coverage of the pool's accuracy: 20 runs of 30 labels, the last 20 drawn by
    VarianceSampling
    (tolerance: at least 17 of 20, i.e. 0.85, for a nominal 0.95). Widths against random
    labeling: docs/benchmarks.md."""
    rng = np.random.default_rng(7)
    scores, y = _calibrated_pool(800, rng)
    truth = np.mean(scores.argmax(axis=1) == y)
    covered = 0
    for seed in range(20):
        a = ActiveAssessor(
            BayesianAccuracy(), strategy=VarianceSampling(min_labels=10), random_state=seed
        )
        a.fit(scores).run(y, budget=30, progress=False)
        lo, hi = a.estimator_.overall_interval(0.95)
        covered += lo <= truth <= hi
    assert covered >= 17


@pytest.mark.parametrize(
    "estimator",
    [BayesianAccuracy(), BayesianMisclassificationCost()],
    ids=["accuracy", "cost"],
)
def test_told_rows_carry_the_design_weight_of_their_draw(estimator):
    """After the burn-in each told row's label is weighted by 1 / (m q_i): the
    assessor's posterior is the estimator's with those design weights (for
    the cost the draw favours predicted classes: its predictive is per
    class)."""
    rng = np.random.default_rng(3)
    scores, y = _calibrated_pool(600, rng)
    strategy = VarianceSampling(uniform_mix=0.3, min_labels=10)
    a = ActiveAssessor(clone(estimator), strategy=strategy, random_state=0).fit(scores)
    a.run(y, budget=10, progress=False)
    first = a.history_["index"].to_numpy()
    rows = a.query(3)
    weights = []
    taken = a.labels_ >= 0
    for row in rows:
        context = QueryContext(
            scores=None,
            y_pred=None,
            labels=a.labels_,
            available=~taken,
            arm=np.zeros(len(y), dtype=int),
            estimator=None,
            state=None,
            task=None,
            outcome_proba=lambda: a.estimator_.predict_proba(scores),
        )
        q = a.strategy_.draw_probabilities(context)
        weights.append(1.0 / ((~taken).sum() * q[row]))
        taken[row] = True
    assert np.ptp(weights) > 0.01 and not np.allclose(weights, 1.0)  # an unequal design
    a.tell(rows, y[rows])
    direct = clone(a.estimator_).fit(scores)
    direct.add_labels(scores[first], y[first])
    direct.add_labels(scores[rows], y[rows], design_weight=np.array(weights))
    np.testing.assert_allclose(a.estimator_.overall_interval(), direct.overall_interval())


def test_replay_and_undo_keep_the_design_weights():
    """A replayed history tells each step in the state it was told in, so the
    weights, and the posterior, are the run's; undo gives the state before the
    last step."""
    rng = np.random.default_rng(4)
    scores, y = _calibrated_pool(500, rng)

    def assessor():
        strategy = VarianceSampling(min_labels=8)
        return ActiveAssessor(BayesianAccuracy(), strategy=strategy, random_state=1).fit(scores)

    a = assessor().run(y, budget=20, batch_size=2, progress=False)
    b = assessor().replay(a.history_)
    np.testing.assert_allclose(b.estimator_.overall_interval(), a.estimator_.overall_interval())
    history = a.history_
    a.undo()
    c = assessor().replay(history.iloc[:-2])
    np.testing.assert_allclose(a.estimator_.overall_interval(), c.estimator_.overall_interval())
    # Told as one call, the same labels are weighted from the first state only.
    d = assessor()
    d.tell(history["index"].to_numpy(), y[history["index"].to_numpy()])
    assert not np.allclose(d.estimator_.overall_interval(), b.estimator_.overall_interval())
