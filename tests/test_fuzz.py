"""Adversarial inputs to the public API: a finite result or a clean error, nothing else.

Every call gets inputs drawn by hypothesis from a pool of hostile values
(NaN, inf, negative and huge numbers, wrong shapes and lengths, strings,
objects, lists, DataFrames, empty arrays) mixed with valid ones. Each call
must either

* return a result whose numbers are all finite (no silent NaN or inf), or
* raise ``ValueError`` or ``TypeError`` whose message names one of the
  call's arguments (``NotFittedError`` for a method called before ``fit``).

Anything else (IndexError, ZeroDivisionError, a NaN in a summary, ...)
fails. ``SKASSESS_FUZZ_EXAMPLES`` sets the examples per target (default 25
here; ``benchmarks/bench_fuzz.py`` runs thousands and prints the tally).
"""

import collections
import os
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from skassess import (
    ActiveAssessor,
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianConfusionMatrix,
    BayesianMisclassificationCost,
)
from skassess.calibration import BayesianGroupMetrics, beta_calibration, fit_llo, log_odds
from skassess.metrics import (
    compare_groups,
    expected_calibration_error,
    rank_groups,
    rope_probabilities,
    top_m_groups,
)
from skassess.samplers import CalibratedPrior

EXAMPLES = int(os.environ.get("SKASSESS_FUZZ_EXAMPLES", "25"))
#: Outcomes of every call, by target: "finite", "clean error", "not fitted".
TALLY = collections.defaultdict(collections.Counter)

_rng = np.random.default_rng(0)
_GOOD3 = _rng.dirichlet(np.ones(3), size=12)
_GOOD2 = _rng.dirichlet(np.ones(2), size=12)

HOSTILE = st.sampled_from([
    None, np.nan, np.inf, -1.0, 0, 1e308, -1e308, "x", b"x", [], [[]], {}, object(),
    np.array([]), np.zeros((0, 3)), np.full((12, 3), np.nan), np.full((12, 3), -0.1),
    np.full((12, 3), 2.0), np.ones((12, 3)), np.zeros((12, 1, 3)), np.arange(12),
    np.arange(12.0) / 11, np.full(12, np.nan), np.full(12, -1), np.full(12, 7),
    np.array(["a"] * 12), np.array([None] * 12, dtype=object), pd.Series(range(12)),
    pd.DataFrame(_GOOD3), _GOOD3.tolist(), _GOOD3[:5], _GOOD2, _GOOD2[:, 1], _GOOD3,
    np.tile([0, 1, 2, -1], 3), np.tile([-1, 1], 6), np.full(12, 1e308), [0.5],
])
#: Valid values the hostile ones are mixed with, so calls get past the first check.
LABELS3 = st.sampled_from([np.tile([0, 1, 2, -1], 3), np.full(12, -1), None])
LABELS2 = st.sampled_from([np.tile([0, 1, -1, 1], 3), np.full(12, -1)])
GROUPS = st.sampled_from([np.tile(["a", "b", "c"], 4), np.arange(12) % 2])


def _arg(valid):
    return st.one_of(valid, HOSTILE)


def _finite(result):
    """True when every number in the result is finite (recursing into containers)."""
    if result is None or isinstance(result, str | bool):
        return True
    if isinstance(result, pd.DataFrame) and "confidence" in result:
        # Documented: an empty calibration bin has no mean confidence (NaN).
        result = result.drop(columns="confidence")
    if isinstance(result, pd.DataFrame | pd.Series):
        numeric = result.select_dtypes("number") if isinstance(result, pd.DataFrame) else (
            result if pd.api.types.is_numeric_dtype(result) else None
        )
        return numeric is None or bool(np.isfinite(numeric.to_numpy(dtype=float)).all())
    if isinstance(result, np.ndarray):
        return result.dtype.kind not in "fc" or bool(np.isfinite(result).all())
    if isinstance(result, float | int | np.number):
        return bool(np.isfinite(result))
    if isinstance(result, tuple | list):
        return all(_finite(r) for r in result)
    if hasattr(result, "get_params"):  # fit returned self
        return True
    if hasattr(result, "probabilities"):  # GroupComparison
        return _finite(result.probabilities) and _finite(result.mean)
    return True


def _check(target, call, names):
    """Run ``call``; record its outcome; fail on anything but finite / a clean error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call()
    except NotFittedError:
        TALLY[target]["not fitted"] += 1
        return
    except (ValueError, TypeError) as exc:
        message = str(exc)
        named = [n for n in names if re.search(rf"(?<![A-Za-z_]){re.escape(n)}(?![A-Za-z_])",
                                                message)]
        assert named, f"{target}: {type(exc).__name__} names none of {names}: {message}"
        TALLY[target]["clean error"] += 1
        return
    assert _finite(result), f"{target} returned a non-finite result: {result!r}"
    TALLY[target]["finite"] += 1


FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))

ESTIMATORS = {
    "BayesianAccuracy": lambda: BayesianAccuracy(random_state=0),
    "BayesianAccuracy(tpr, score_bins)": lambda: BayesianAccuracy(
        metric="tpr", grouping="score_bins", n_bins=3, random_state=0),
    "BayesianAccuracy(external)": lambda: BayesianAccuracy(grouping="external", random_state=0),
    "BayesianCalibrationError": lambda: BayesianCalibrationError(n_bins=4, random_state=0),
    "BayesianConfusionMatrix": lambda: BayesianConfusionMatrix(random_state=0),
    "BayesianMisclassificationCost": lambda: BayesianMisclassificationCost(random_state=0),
}
ARGS = ["X", "y", "group_by", "y_pred", "sample_weight", "classes", "missing_label",
        "labels", "indices", "n", "level", "n_draws", "normalize", "metric", "grouping"]


@pytest.mark.parametrize("name", list(ESTIMATORS))
@FUZZ
@given(data=st.data())
def test_fuzz_metric_estimators(name, data):
    binary = "tpr" in name
    good_x = st.sampled_from([_GOOD2, _GOOD2[:, 1]]) if binary else st.just(_GOOD3)
    labels = LABELS2 if binary else LABELS3
    est = ESTIMATORS[name]()
    kwargs = {"group_by": data.draw(_arg(GROUPS))} if "external" in name else {}
    if data.draw(st.booleans()):
        kwargs["sample_weight"] = data.draw(_arg(st.just(np.ones(12))))
    X, y = data.draw(_arg(good_x)), data.draw(_arg(labels))
    _check(name, lambda: est.fit(X, y, **kwargs), ARGS)
    X2, y2 = data.draw(_arg(good_x)), data.draw(_arg(labels))
    _check(name, lambda: est.partial_fit(X2, y2, **kwargs), ARGS)
    _check(name, lambda: est.predict(X2, **{k: v for k, v in kwargs.items()
                                            if k == "group_by"}), ARGS)
    _check(name, lambda: est.predict_proba(X2, **{k: v for k, v in kwargs.items()
                                                  if k == "group_by"}), ARGS)
    _check(name, lambda: est.score(X2, y2, **kwargs), ARGS)
    level, n_draws = data.draw(_arg(st.just(0.9))), data.draw(_arg(st.just(20)))
    _check(name, lambda: est.summary(level), ARGS)
    _check(name, lambda: est.overall_samples(n_draws), ARGS)
    _check(name, lambda: est.groupwise_samples(n_draws), ARGS)
    _check(name, lambda: est.overall_interval(level, 50), ARGS)


@FUZZ
@given(data=st.data())
def test_fuzz_comparisons(data):
    est = BayesianAccuracy(random_state=0).fit(_GOOD3, np.tile([0, 1, 2, -1], 3))
    draws = pd.DataFrame(_rng.uniform(size=(30, 3)), columns=["a", "b", "c"])
    source = data.draw(st.one_of(st.sampled_from([est, draws]), HOSTILE))
    a, b = data.draw(_arg(st.sampled_from([0, 1, "a", "b"]))), data.draw(_arg(st.just(2)))
    rope, m = data.draw(_arg(st.just(0.05))), data.draw(_arg(st.just(1)))
    names = ["source", "group_a", "group_b", "rope", "m", "n_draws", "delta", "method"]
    _check("compare_groups", lambda: compare_groups(source, a, b, rope=rope, n_draws=50), names)
    _check("rank_groups", lambda: rank_groups(source, n_draws=50), names)
    _check("top_m_groups", lambda: top_m_groups(source, m, n_draws=50), names)
    delta = data.draw(_arg(st.just(_rng.normal(size=40))))
    _check("rope_probabilities", lambda: rope_probabilities(delta, rope), names)


@FUZZ
@given(data=st.data())
def test_fuzz_functions(data):
    y = data.draw(_arg(st.just(np.tile([0, 1, 2, 0], 3))))
    s = data.draw(_arg(st.just(_GOOD3)))
    n_bins = data.draw(_arg(st.just(5)))
    names = ["y_true", "y_score", "n_bins", "s", "a", "b", "c", "eps", "x", "z",
             "sample_weight", "intercept_scale", "slope_scale", "y", "X"]
    _check("expected_calibration_error",
           lambda: expected_calibration_error(y, s, n_bins=n_bins), names)
    a, eps = data.draw(_arg(st.just(0.7))), data.draw(_arg(st.just(1e-3)))
    _check("beta_calibration", lambda: beta_calibration(s, a, 1.0, 0.0, eps=eps), names)
    _check("log_odds", lambda: log_odds(s, eps=eps), names)
    x = data.draw(_arg(st.just(_rng.normal(size=(2, 12)))))
    z = data.draw(_arg(st.just((_rng.uniform(size=(2, 12)) < 0.5).astype(float))))
    scale = data.draw(_arg(st.just(1.0)))
    _check("fit_llo", lambda: fit_llo(x, z, intercept_scale=scale, slope_scale=1.0), names)


@FUZZ
@given(data=st.data())
def test_fuzz_samplers_and_fairness(data):
    X, y = data.draw(_arg(st.just(_GOOD3))), data.draw(_arg(LABELS3))
    assessor = ActiveAssessor(random_state=0)
    _check("ActiveAssessor", lambda: assessor.fit(X, y), ARGS)
    n = data.draw(_arg(st.just(2)))
    _check("ActiveAssessor", lambda: assessor.query(n), ARGS)
    idx, lab = data.draw(_arg(st.just(np.array([0, 5])))), data.draw(_arg(st.just([1, 2])))
    _check("ActiveAssessor", lambda: assessor.tell(idx, lab), ARGS)
    _check("ActiveAssessor", lambda: assessor.summary(), ARGS)
    prior = CalibratedPrior()
    _check("CalibratedPrior", lambda: prior.fit(X, y), ARGS)
    _check("CalibratedPrior", lambda: prior.predict(X), ARGS)
    s2 = data.draw(_arg(st.just(_GOOD2[:, 1])))
    y2, g = data.draw(_arg(LABELS2)), data.draw(_arg(GROUPS))
    bgm = BayesianGroupMetrics(method="beta-binomial", n_draws=30, random_state=0)
    names = ARGS + ["sensitive_features", "rope"]
    _check("BayesianGroupMetrics", lambda: bgm.fit(s2, y2, sensitive_features=g), names)
    _check("BayesianGroupMetrics", lambda: bgm.summary(), names)
    _check("BayesianGroupMetrics", lambda: bgm.differences(), names)


def test_fuzz_tally(capsys):
    """Print the tally of the fuzz tests of this session (run them first)."""
    if not TALLY:
        pytest.skip("no fuzz test ran before this one")
    total = collections.Counter()
    lines = []
    for target, counts in sorted(TALLY.items()):
        total.update(counts)
        lines.append(f"{target:40s} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    lines.append(f"{'all':40s} {sum(total.values())} calls: "
                 + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    with capsys.disabled():
        print("\n" + "\n".join(lines))
