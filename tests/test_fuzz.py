"""Adversarial inputs to the public API: a finite result or a clean error, nothing else.

Every call gets inputs drawn by hypothesis from a pool of hostile values
(NaN, inf, negative and huge numbers, wrong shapes and lengths, strings,
objects, lists, DataFrames, empty arrays) mixed with valid ones. Each call is
sorted into one outcome:

* ``finite``: it returned, and every number in the result is finite;
* ``clean error``: ``ValueError``/``TypeError`` whose message names one of
  the call's arguments (``not fitted``: ``NotFittedError`` before ``fit``);
* ``crash``: any other exception (IndexError, ZeroDivisionError, ...);
* ``nan/inf``: a result with a NaN or an infinity;
* ``unclear message``: a clean error type whose message names no argument;
* ``bad input accepted``: a call that returned although an argument was
  certainly invalid (a number argument out of its documented range or of the
  wrong type);
* ``state changed``: a call that raised but changed the object it was
  called on (its pickled state differs);
* ``valid input refused``: a call whose every argument came from the valid
  pool, on a fitted object, that raised.

The tests fail on any of the last five. ``SKASSESS_FUZZ_EXAMPLES`` sets the
examples per target (default 25 here; ``benchmarks/bench_fuzz.py`` runs
thousands and prints the table).
"""

import collections
import json
import os
import pickle
import re
import warnings
from numbers import Integral, Real

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
from skassess.calibration import BayesianGroupMetrics, beta_calibration
from skassess.calibration._maps import fit_llo, log_odds
from skassess.exceptions import ScoresFileError, SessionError
from skassess.metrics import (
    BayesianModelComparison,
    compare_groups,
    expected_calibration_error,
    rank_groups,
    rope_probabilities,
    top_m_groups,
)
from skassess.samplers import (
    ActiveModelSelector,
    ActiveTester,
    CalibratedPrior,
    MLPEnsembleSurrogate,
)

EXAMPLES = int(os.environ.get("SKASSESS_FUZZ_EXAMPLES", "25"))
OUTCOMES = (
    "finite",
    "clean error",
    "not fitted",
    "crash",
    "nan/inf",
    "unclear message",
    "bad input accepted",
    "state changed",
    "valid input refused",
)
DEFECTS = OUTCOMES[3:]
#: Outcomes of every call, by target.
TALLY = collections.defaultdict(collections.Counter)
#: The first example of each defect, by target (for the failure message).
EXAMPLE_OF = {}

_rng = np.random.default_rng(0)
_GOOD3 = _rng.dirichlet(np.ones(3), size=12)
_GOOD2 = _rng.dirichlet(np.ones(2), size=12)

HOSTILE_VALUES = [
    None,
    np.nan,
    np.inf,
    -1.0,
    0,
    1e308,
    -1e308,
    "x",
    b"x",
    [],
    [[]],
    {},
    object(),
    np.array([]),
    np.zeros((0, 3)),
    np.full((12, 3), np.nan),
    np.full((12, 3), -0.1),
    np.full((12, 3), 2.0),
    np.ones((12, 3)),
    np.zeros((12, 1, 3)),
    np.arange(12),
    np.arange(12.0) / 11,
    np.full(12, np.nan),
    np.full(12, -1),
    np.full(12, 7),
    np.array(["a"] * 12),
    np.array([None] * 12, dtype=object),
    pd.Series(range(12)),
    pd.DataFrame(_GOOD3),
    _GOOD3.tolist(),
    _GOOD3[:5],
    _GOOD2,
    _GOOD2[:, 1],
    _GOOD3,
    np.tile([0, 1, 2, -1], 3),
    np.tile([-1, 1], 6),
    np.full(12, 1e308),
    [0.5],
    1.5,
    -3,
    2,
    0.0,
    True,
]


class Drawn:
    """A drawn argument: its value and whether it came from the valid pool."""

    __slots__ = ("value", "valid")

    def __init__(self, value, valid):
        self.value, self.valid = value, valid


HOSTILE = st.sampled_from(HOSTILE_VALUES).map(lambda v: Drawn(v, False))
#: Valid values the hostile ones are mixed with, so calls get past the first check.
LABELS3 = st.sampled_from([np.tile([0, 1, 2, -1], 3), np.full(12, -1), None])
LABELS2 = st.sampled_from([np.tile([0, 1, -1, 1], 3), np.full(12, -1)])
GROUPS = st.sampled_from([np.tile(["a", "b", "c"], 4), np.arange(12) % 2])


def _arg(valid):
    return st.one_of(valid.map(lambda v: Drawn(v, True)), HOSTILE)


def _valid(value):
    return st.just(Drawn(value, True))


def _is_int(v, low, high=None):
    return (
        isinstance(v, Integral)
        and not isinstance(v, bool)
        and v >= low
        and (high is None or v <= high)
    )


def _is_real(v, low, high, *, low_open=False, high_open=False):
    if not isinstance(v, Real) or isinstance(v, bool) or not np.isfinite(v):
        return False
    return (v > low if low_open else v >= low) and (v < high if high_open else v <= high)


#: What each number argument accepts (its documented range): anything else drawn
#: for it and accepted is "bad input accepted".
SCALARS = {
    "n": lambda v: _is_int(v, 1),
    "n_draws": lambda v: v is None or _is_int(v, 1),  # None: the estimator's own, where allowed
    "level": lambda v: _is_real(v, 0, 1, low_open=True, high_open=True),
    "rope": lambda v: _is_real(v, 0, np.inf, high_open=True),
    "m": lambda v: _is_int(v, 1),
    "stop_probability": lambda v: v is None or _is_real(v, 0, 1, low_open=True),
    "budget": lambda v: _is_int(v, 0),
    "batch_size": lambda v: _is_int(v, 1),
    "eps": lambda v: _is_real(v, 0, 0.5, low_open=True, high_open=True),
}


def _finite(result):
    """True when every number in the result is finite (recursing into containers)."""
    if result is None or isinstance(result, str | bool):
        return True
    if isinstance(result, pd.DataFrame) and "confidence" in result:
        # Documented: an empty calibration bin has no mean confidence (NaN).
        result = result.drop(columns="confidence")
    if isinstance(result, pd.DataFrame | pd.Series):
        numeric = (
            result.select_dtypes("number")
            if isinstance(result, pd.DataFrame)
            else (result if pd.api.types.is_numeric_dtype(result) else None)
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


def _state(obj):
    """Each attribute pickled on its own (shared references do not matter)."""
    if obj is None:
        return None
    try:
        return {k: pickle.dumps(v) for k, v in vars(obj).items()}
    except Exception:  # e.g. an open session: no state check
        return None


def _record(target, outcome, detail):
    TALLY[target][outcome] += 1
    if outcome in DEFECTS:
        EXAMPLE_OF.setdefault((target, outcome), detail)


def _check(target, call, names, *, args=(), obj=None, fitted=True):
    """Run ``call`` with the drawn ``args`` (name -> Drawn); sort its outcome.

    ``obj`` is the object the call may change; ``fitted`` says whether it
    is fitted (a refusal on an unfitted object is not "valid input refused").
    """
    args = dict(args)
    values = {k: d.value for k, d in args.items()}
    all_valid = all(d.valid for d in args.values())
    before = _state(obj)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call(**values)
    except NotFittedError:
        _record(target, "not fitted", values)
        return
    except (ValueError, TypeError) as exc:
        message = str(exc)
        named = [
            n for n in names if re.search(rf"(?<![A-Za-z_]){re.escape(n)}(?![A-Za-z_])", message)
        ]
        if before is not None and _state(obj) != before:
            _record(target, "state changed", (values, message))
        elif all_valid and fitted:
            _record(target, "valid input refused", (values, message))
        elif not named:
            _record(target, "unclear message", (values, message))
        else:
            _record(target, "clean error", values)
        return
    except Exception as exc:
        _record(target, "crash", (values, f"{type(exc).__name__}: {exc}"))
        return
    bad = [k for k, v in values.items() if k in SCALARS and not args[k].valid and not SCALARS[k](v)]
    if bad:
        _record(target, "bad input accepted", (values, bad))
    elif not _finite(result):
        _record(target, "nan/inf", (values, repr(result)[:300]))
    else:
        _record(target, "finite", values)


def _is_fitted(est):
    return any(k.endswith("_") and not k.startswith("__") for k in vars(est))


@pytest.fixture(autouse=True)
def _no_new_defect(request):
    """Each fuzz test fails on a defect it found (the tally test sees one process only)."""
    before = set(EXAMPLE_OF)
    yield
    if request.node.name.startswith("test_fuzz_found_no_defect"):
        return
    new = {k: v for k, v in EXAMPLE_OF.items() if k not in before}
    assert not new, "\n".join(f"{t} / {o}: {str(d)[:400]}" for (t, o), d in new.items())


FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)

ESTIMATORS = {
    "BayesianAccuracy": lambda: BayesianAccuracy(random_state=0),
    "BayesianAccuracy(tpr, score_bins)": lambda: BayesianAccuracy(
        metric="tpr", grouping="score_bins", n_bins=3, random_state=0
    ),
    "BayesianAccuracy(external)": lambda: BayesianAccuracy(grouping="external", random_state=0),
    "BayesianCalibrationError": lambda: BayesianCalibrationError(n_bins=4, random_state=0),
    "BayesianConfusionMatrix": lambda: BayesianConfusionMatrix(random_state=0),
    "BayesianMisclassificationCost": lambda: BayesianMisclassificationCost(random_state=0),
}
ARGS = [
    "X",
    "y",
    "group_by",
    "y_pred",
    "sample_weight",
    "classes",
    "missing_label",
    "labels",
    "indices",
    "n",
    "level",
    "n_draws",
    "normalize",
    "metric",
    "grouping",
    "features",
    "oracle",
    "budget",
    "batch_size",
    "stop_probability",
    "stop_rope",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ESTIMATORS))
@FUZZ
@given(data=st.data())
def test_fuzz_metric_estimators(name, data):
    binary = "tpr" in name
    good_x = st.sampled_from([_GOOD2, _GOOD2[:, 1]]) if binary else st.just(_GOOD3)
    labels = LABELS2 if binary else LABELS3
    est = ESTIMATORS[name]()
    extra = {}
    if "external" in name:
        extra["group_by"] = data.draw(_arg(GROUPS))
    if data.draw(st.booleans()):
        extra["sample_weight"] = data.draw(_arg(st.just(np.ones(12))))
    X, y = data.draw(_arg(good_x)), data.draw(_arg(labels))
    _check(
        name,
        lambda X, y, **kw: est.fit(X, y, **kw),
        ARGS,
        args={"X": X, "y": y, **extra},
        obj=est,
        fitted=_is_fitted(est),
    )
    if binary and X.valid:  # later calls give the scores in the form fit saw
        good_x = st.just(X.value)
    X2, y2 = data.draw(_arg(good_x)), data.draw(_arg(labels))
    # a refusal counts as one of valid input only after a fit on valid input
    fitted = _is_fitted(est) and X.valid and y.valid
    _check(
        name,
        lambda X, y, **kw: est.partial_fit(X, y, **kw),
        ARGS,
        args={"X": X2, "y": y2, **extra},
        obj=est,
        fitted=fitted,
    )
    groups = {k: v for k, v in extra.items() if k == "group_by"}
    _check(
        name, lambda X, **kw: est.predict(X, **kw), ARGS, args={"X": X2, **groups}, fitted=fitted
    )
    _check(
        name,
        lambda X, **kw: est.predict_proba(X, **kw),
        ARGS,
        args={"X": X2, **groups},
        fitted=fitted,
    )
    has_label = y2.value is not None and np.any(np.asarray(y2.value) != -1)
    _check(
        name,
        lambda X, y, **kw: est.score(X, y, **kw),
        ARGS,
        args={"X": X2, "y": y2, **extra},
        fitted=fitted and has_label,
    )
    level, n_draws = data.draw(_arg(st.just(0.9))), data.draw(_arg(st.just(20)))
    _check(name, est.summary, ARGS, args={"level": level}, fitted=fitted)
    _check(name, est.overall_samples, ARGS, args={"n_draws": n_draws}, fitted=fitted)
    _check(name, est.groupwise_samples, ARGS, args={"n_draws": n_draws}, fitted=fitted)
    _check(
        name,
        lambda level: est.overall_interval(level, 50),
        ARGS,
        args={"level": level},
        fitted=fitted,
    )
    if name == "BayesianConfusionMatrix":
        normalize = data.draw(_arg(st.sampled_from(["true", "pred", "all", None])))
        _check(name, est.confusion_matrix, ARGS, args={"normalize": normalize}, fitted=fitted)


@FUZZ
@given(data=st.data())
def test_fuzz_comparisons(data):
    est = BayesianAccuracy(random_state=0).fit(_GOOD3, np.tile([0, 1, 2, -1], 3))
    draws = pd.DataFrame(_rng.uniform(size=(30, 3)), columns=["a", "b", "c"])
    source = data.draw(_arg(st.sampled_from([est, draws])))
    valid_pair = st.sampled_from([(0, 1), (1, 2), ("a", "b")])
    pair = data.draw(
        st.one_of(
            valid_pair.map(lambda p: (Drawn(p[0], True), Drawn(p[1], True))),
            st.tuples(HOSTILE, HOSTILE),
        )
    )
    if isinstance(source.value, pd.DataFrame) != isinstance(pair[0].value, str):
        pair = (Drawn(pair[0].value, False), Drawn(pair[1].value, False))
    rope, m = data.draw(_arg(st.just(0.05))), data.draw(_arg(st.just(1)))
    names = ["source", "group_a", "group_b", "rope", "m", "n_draws", "delta", "method"]
    _check(
        "compare_groups",
        lambda source, group_a, group_b, rope: compare_groups(
            source, group_a, group_b, rope=rope, n_draws=50
        ),
        names,
        args={"source": source, "group_a": pair[0], "group_b": pair[1], "rope": rope},
    )
    _check(
        "rank_groups",
        lambda source: rank_groups(source, n_draws=50),
        names,
        args={"source": source},
    )
    _check(
        "top_m_groups",
        lambda source, m: top_m_groups(source, m, n_draws=50),
        names,
        args={"source": source, "m": m},
    )
    delta = data.draw(_arg(st.just(_rng.normal(size=40))))
    _check("rope_probabilities", rope_probabilities, names, args={"delta": delta, "rope": rope})


@FUZZ
@given(data=st.data())
def test_fuzz_functions(data):
    y = data.draw(_arg(st.just(np.tile([0, 1, 2, 0], 3))))
    s = data.draw(_arg(st.just(_GOOD3)))
    n_bins = data.draw(_arg(st.just(5)))
    names = [
        "y_true",
        "y_score",
        "n_bins",
        "s",
        "a",
        "b",
        "c",
        "eps",
        "x",
        "z",
        "sample_weight",
        "intercept_scale",
        "slope_scale",
        "y",
        "X",
    ]
    _check(
        "expected_calibration_error",
        lambda y_true, y_score, n_bins: expected_calibration_error(y_true, y_score, n_bins=n_bins),
        names,
        args={"y_true": y, "y_score": s, "n_bins": n_bins},
    )
    a, eps = data.draw(_arg(st.just(0.7))), data.draw(_arg(st.just(1e-3)))
    _check(
        "beta_calibration",
        lambda s, a, eps: beta_calibration(s, a, 1.0, 0.0, eps=eps),
        names,
        args={"s": s, "a": a, "eps": eps},
    )
    _check("log_odds", lambda s, eps: log_odds(s, eps=eps), names, args={"s": s, "eps": eps})
    x = data.draw(_arg(st.just(_rng.normal(size=(2, 12)))))
    z = data.draw(_arg(st.just((_rng.uniform(size=(2, 12)) < 0.5).astype(float))))
    scale = data.draw(_arg(st.just(1.0)))
    _check(
        "fit_llo",
        lambda x, z, intercept_scale: fit_llo(
            x, z, intercept_scale=intercept_scale, slope_scale=1.0
        ),
        names,
        args={"x": x, "z": z, "intercept_scale": scale},
    )


@FUZZ
@given(data=st.data())
def test_fuzz_samplers_and_fairness(data):
    X, y = data.draw(_arg(st.just(_GOOD3))), data.draw(_arg(LABELS3))
    assessor = ActiveAssessor(random_state=0)
    _check("ActiveAssessor", assessor.fit, ARGS, args={"X": X, "y": y}, obj=assessor, fitted=False)
    fitted = _is_fitted(assessor)
    n = data.draw(_arg(st.just(2)))
    enough = fitted and assessor._available_rows() >= 2  # else the refusal is right
    _check("ActiveAssessor", assessor.query, ARGS, args={"n": n}, obj=assessor, fitted=enough)
    idx, lab = data.draw(_arg(st.just(np.array([0, 5])))), data.draw(_arg(st.just([1, 2])))
    _check(
        "ActiveAssessor",
        assessor.tell,
        ARGS,
        args={"indices": idx, "labels": lab},
        obj=assessor,
        fitted=False,
    )  # row 0 may be labeled already: a refusal is right
    _check("ActiveAssessor", assessor.summary, ARGS, fitted=fitted)
    prior = CalibratedPrior()
    _check("CalibratedPrior", prior.fit, ARGS, args={"X": X, "y": y}, obj=prior, fitted=False)
    _check("CalibratedPrior", prior.predict, ARGS, args={"X": X}, fitted=_is_fitted(prior))
    s2 = data.draw(_arg(st.just(_GOOD2[:, 1])))
    y2, g = data.draw(_arg(LABELS2)), data.draw(_arg(GROUPS))
    bgm = BayesianGroupMetrics(method="beta_binomial", n_draws=30, random_state=0)
    names = ARGS + ["sensitive_features", "rope"]
    _check(
        "BayesianGroupMetrics",
        lambda X, y, sensitive_features: bgm.fit(X, y, sensitive_features=sensitive_features),
        names,
        args={"X": s2, "y": y2, "sensitive_features": g},
        obj=bgm,
        fitted=False,
    )
    _check("BayesianGroupMetrics", bgm.summary, names, fitted=_is_fitted(bgm))
    _check("BayesianGroupMetrics", bgm.differences, names, fitted=_is_fitted(bgm))


_MODELS = np.stack([_GOOD3, _rng.dirichlet(np.ones(3), size=12)], axis=1)


@FUZZ
@given(data=st.data())
def test_fuzz_model_comparison_and_selection(data):
    X, y = data.draw(_arg(st.just(_MODELS))), data.draw(_arg(LABELS3))
    comparison = BayesianModelComparison(random_state=0)
    _check(
        "BayesianModelComparison",
        comparison.fit,
        ARGS,
        args={"X": X, "y": y},
        obj=comparison,
        fitted=False,
    )
    fitted = _is_fitted(comparison)
    n_draws, level = data.draw(_arg(st.just(30))), data.draw(_arg(st.just(0.9)))
    _check(
        "BayesianModelComparison",
        comparison.best_probabilities,
        ARGS,
        args={"n_draws": n_draws},
        fitted=fitted,
    )
    _check(
        "BayesianModelComparison", comparison.summary, ARGS, args={"level": level}, fitted=fitted
    )
    _check(
        "BayesianModelComparison", comparison.pairwise, ARGS, args={"level": level}, fitted=fitted
    )
    selector = ActiveModelSelector(random_state=0)
    _check(
        "ActiveModelSelector",
        selector.should_stop,
        ARGS,
        args={"stop_probability": data.draw(_arg(st.just(0.9)))},
        fitted=False,
    )
    _check(
        "ActiveModelSelector", selector.fit, ARGS, args={"X": X, "y": y}, obj=selector, fitted=False
    )
    fitted = _is_fitted(selector)
    n = data.draw(_arg(st.just(1)))
    left = int((selector.labels_ < 0).sum()) if fitted else 0
    _check(
        "ActiveModelSelector",
        selector.query,
        ARGS,
        args={"n": n},
        obj=selector,
        fitted=fitted and left > 0,
    )
    idx, lab = data.draw(_arg(st.just(np.array([3])))), data.draw(_arg(st.just([1])))
    _check(
        "ActiveModelSelector",
        selector.tell,
        ARGS,
        args={"indices": idx, "labels": lab},
        obj=selector,
        fitted=False,
    )  # row 3 may be labeled already
    _check(
        "ActiveModelSelector",
        selector.best_probabilities,
        ARGS,
        args={"n_draws": n_draws},
        fitted=fitted,
    )
    _check(
        "ActiveModelSelector",
        selector.should_stop,
        ARGS,
        args={"stop_probability": data.draw(_arg(st.just(0.9))), "n_draws": n_draws},
        fitted=fitted,
    )
    truth = data.draw(_arg(st.just(np.tile([0, 1, 2], 4))))
    budget = data.draw(_arg(st.just(3)))
    _check(
        "ActiveModelSelector",
        lambda oracle, budget: selector.run(oracle, budget, progress=False),
        ARGS,
        args={"oracle": truth, "budget": budget},
        obj=selector,
        fitted=False,
    )


@FUZZ
@given(data=st.data())
def test_fuzz_active_tester(data):
    X, y = data.draw(_arg(st.just(_GOOD3))), data.draw(_arg(LABELS3))
    tester = ActiveTester(
        ["accuracy"], surrogate=MLPEnsembleSurrogate(n_members=2, max_iter=50), random_state=0
    )
    _check("ActiveTester", tester.fit, ARGS, args={"X": X, "y": y}, obj=tester, fitted=False)
    fitted = _is_fitted(tester)
    n = data.draw(_arg(st.just(2)))
    enough = fitted and int((tester.labels_ < 0).sum()) >= 2
    _check("ActiveTester", tester.query, ARGS, args={"n": n}, obj=tester, fitted=enough)
    idx, lab = data.draw(_arg(st.just(np.array([0, 5])))), data.draw(_arg(st.just([1, 2])))
    _check(
        "ActiveTester",
        tester.tell,
        ARGS,
        args={"indices": idx, "labels": lab},
        obj=tester,
        fitted=False,
    )
    level = data.draw(_arg(st.just(0.9)))
    # a summary needs a label drawn by the tester: refused before, rightly
    drawn = fitted and tester._estimate.n_draws > 0
    _check("ActiveTester", tester.summary, ARGS + ["tell"], args={"level": level}, fitted=drawn)


@FUZZ
@given(data=st.data())
def test_fuzz_labeling_session(data, tmp_path_factory):
    from skassess.session import LabelingSession

    path = tmp_path_factory.mktemp("fuzz") / "s.sqlite"
    X = data.draw(_arg(st.just(_GOOD3)))
    names = ARGS + ["row", "label", "path", "ids", "assessor"]

    def open_session(X):
        return LabelingSession(path, X, assessor=ActiveAssessor(random_state=0))

    session = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            session = open_session(X.value)
        _record("LabelingSession", "finite", None)
    except (ValueError, TypeError) as exc:
        target_outcome = "clean error" if not X.valid else "valid input refused"
        named = any(
            re.search(rf"(?<![A-Za-z_]){re.escape(n)}(?![A-Za-z_])", str(exc)) for n in names
        )
        _record(
            "LabelingSession",
            target_outcome if named or X.valid else "unclear message",
            (X.value, str(exc)),
        )
        return
    except Exception as exc:
        _record("LabelingSession", "crash", (X.value, f"{type(exc).__name__}: {exc}"))
        return
    try:
        row = session.query()
        label = data.draw(_arg(st.just(1)))
        events = len(session.events())
        _check(
            "LabelingSession",
            lambda label: session.tell(row, label),
            names,
            args={"label": label},
            fitted=True,
        )
        if not label.valid and len(session.events()) not in (events, events + 1):
            _record("LabelingSession", "state changed", label.value)
        bad_row = data.draw(_arg(st.just(2)))
        _check(
            "LabelingSession",
            lambda row: session.skip(row),
            names,
            args={"row": bad_row},
            fitted=False,
        )  # row 2 may be labeled already
        _check(
            "LabelingSession", session.summary, names, args={"level": data.draw(_arg(st.just(0.9)))}
        )
    finally:
        session.close()


@FUZZ
@given(data=st.data())
def test_fuzz_scores_file(data, tmp_path_factory):
    from skassess.session import ScoresFile

    cells = st.sampled_from(
        ["0.5", "0.2", "", "nan", "inf", "-1", "x", "1e400", '"', "0.5,0.5", "\x00", "é"]
    )
    good = st.sampled_from([["1", "0.5", "0.5"], ["2", "0.3", "0.7"], ["3", "0.9", "0.1"]])
    row = st.one_of(good, good, good, st.lists(cells, min_size=2, max_size=4))
    rows = data.draw(st.lists(row, min_size=0, max_size=5, unique_by=lambda r: r[0]))
    header = data.draw(
        st.sampled_from(
            [
                "id,score_a,score_b",
                "score_a,score_b",
                "id,score_a,score_a",
                "",
                "id;score_a;score_b",
            ]
        )
    )
    text = header + "\n" + "\n".join(",".join(r) for r in rows) + ("\n" if rows else "")
    path = tmp_path_factory.mktemp("fuzz") / "f.csv"
    path.write_text(text, encoding="utf-8")
    try:
        sf = ScoresFile(path)
        table = sf.read()
        ok = _finite(table.scores) and len(table) == len(rows)
        _record("ScoresFile", "finite" if ok else "nan/inf", text)
    except (ScoresFileError, SessionError, ValueError) as exc:
        message = str(exc)
        clean = message.startswith(str(path)) or "sum_tolerance" in message
        _record("ScoresFile", "clean error" if clean else "unclear message", (text, message))
    except Exception as exc:
        _record("ScoresFile", "crash", (text, f"{type(exc).__name__}: {exc}"))


def tally_table():
    """The tally as text: one line per target, one column per outcome."""
    width = max([len(t) for t in TALLY] + [10])
    head = f"{'target':{width}s} {'calls':>6s} " + " ".join(f"{o:>10.10s}" for o in OUTCOMES)
    lines = [head]
    total = collections.Counter()
    for target, counts in sorted(TALLY.items()):
        total.update(counts)
        lines.append(
            f"{target:{width}s} {sum(counts.values()):6d} "
            + " ".join(f"{counts.get(o, 0):10d}" for o in OUTCOMES)
        )
    lines.append(
        f"{'all':{width}s} {sum(total.values()):6d} "
        + " ".join(f"{total.get(o, 0):10d}" for o in OUTCOMES)
    )
    return "\n".join(lines)


_DISPLAY_NAMES = ARGS + ["estimator", "y_true", "y_score", "group_a", "group_b", "rope", "name"]


@FUZZ
@given(data=st.data())
def test_fuzz_displays(data):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    from skassess.metrics import (
        DifferenceDisplay,
        ModelComparisonDisplay,
        PosteriorDisplay,
        ReliabilityDisplay,
    )

    acc = BayesianAccuracy(random_state=0).fit(_GOOD3, np.tile([0, 1, 2, -1], 3))
    ece = BayesianCalibrationError(n_bins=4, random_state=0).fit(_GOOD3, np.tile([0, 1, 2, -1], 3))
    comparison = BayesianModelComparison(random_state=0).fit(
        np.stack([_GOOD3, _GOOD3[::-1]], axis=1), np.tile([0, 1, 2, -1], 3)
    )
    level = data.draw(_arg(st.just(0.9)))
    y_true = data.draw(_arg(st.just(np.tile([0, 1, 2, -1], 3))))
    y_score = data.draw(_arg(st.just(_GOOD3)))
    try:
        _check(
            "ReliabilityDisplay",
            lambda estimator, level: ReliabilityDisplay.from_estimator(
                estimator, level=level, n_draws=50
            ),
            _DISPLAY_NAMES,
            args={"estimator": data.draw(_arg(st.just(ece))), "level": level},
        )
        _check(
            "ReliabilityDisplay",
            lambda y_true, y_score: ReliabilityDisplay.from_predictions(y_true, y_score, n_bins=4),
            _DISPLAY_NAMES,
            args={"y_true": y_true, "y_score": y_score},
        )
        _check(
            "PosteriorDisplay",
            lambda estimator, level: PosteriorDisplay.from_estimator(
                estimator, level=level, n_draws=50
            ),
            _DISPLAY_NAMES,
            args={"estimator": data.draw(_arg(st.just(acc))), "level": level},
        )
        _check(
            "PosteriorDisplay",
            lambda y_true, y_score: PosteriorDisplay.from_predictions(y_true, y_score),
            _DISPLAY_NAMES,
            args={"y_true": y_true, "y_score": y_score},
        )
        pair = data.draw(st.sampled_from([(0, 1), (1, 2)]))
        _check(
            "DifferenceDisplay",
            lambda estimator, group_a, rope: DifferenceDisplay.from_estimator(
                estimator, group_a, pair[1], rope=rope, n_draws=50
            ),
            _DISPLAY_NAMES,
            args={
                "estimator": data.draw(_arg(st.just(acc))),
                "group_a": data.draw(_arg(st.just(pair[0]))),
                "rope": data.draw(_arg(st.just(0.05))),
            },
        )
        _check(
            "ModelComparisonDisplay",
            lambda estimator, level: ModelComparisonDisplay.from_estimator(
                estimator, level=level, n_draws=50
            ),
            _DISPLAY_NAMES,
            args={"estimator": data.draw(_arg(st.just(comparison))), "level": level},
        )
    finally:
        plt.close("all")


#: Values given to the commands' options: valid ones and hostile ones.
_OPTION_VALUES = ["0.95", "0.5", "10", "3", "-1", "0", "1e9", "nan", "inf", "x", "", "\x1b[31m"]
_COMMANDS = {
    "assess": ["--level", "--rope", "--n-bins", "--seed", "--decision-probability"],
    "plan": ["--width", "--level"],
    "label": ["--budget", "--seed", "--stop-probability", "--stop-width", "--rope"],
    "report": ["--seed"],
}


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_fuzz_commands(data, tmp_path_factory):
    """Each command with options drawn from hostile values: exit 0 or one line and exit 2."""
    import contextlib
    import io

    from skassess.cli import main

    tmp = tmp_path_factory.mktemp("cmd")
    rng = np.random.default_rng(0)
    scores = rng.dirichlet(np.ones(3), size=60)
    frame = pd.DataFrame(scores, columns=["score_a", "score_b", "score_c"])
    frame.insert(0, "id", [f"i{i}" for i in range(60)])
    truth = np.array(["a", "b", "c"])[scores.argmax(axis=1)]
    frame["label"] = np.where(np.arange(60) < 20, truth, "")
    frame.to_csv(tmp / "s.csv", index=False)
    pd.DataFrame({"id": frame["id"], "label": truth}).to_csv(tmp / "o.csv", index=False)
    command = data.draw(st.sampled_from(sorted(_COMMANDS)))
    argv = [command, str(tmp / "s.csv")]
    if command == "label":
        argv += ["--session", str(tmp / "l.sqlite"), "--oracle", str(tmp / "o.csv")]
        argv += ["--no-progress"]
    if command == "report":
        argv += ["-o", str(tmp / "r.html")]
    chosen = {}
    for option in data.draw(st.lists(st.sampled_from(_COMMANDS[command]), max_size=3)):
        chosen[option] = data.draw(st.sampled_from(_OPTION_VALUES))
    for option, value in chosen.items():
        argv += [option, value]
    err = io.StringIO()
    try:
        with (
            contextlib.redirect_stderr(err),
            contextlib.redirect_stdout(io.StringIO()),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            code = main(argv)
    except SystemExit as exc:  # argparse: a usage line and the error, exit 2
        code = exc.code
    except Exception as exc:
        _record(f"skassess {command}", "crash", (argv, f"{type(exc).__name__}: {exc}"))
        return
    message = err.getvalue()
    if code == 2 and message.strip() and "Traceback" not in message:
        _record(f"skassess {command}", "clean error", argv)
    elif code in (0, 1) and "Traceback" not in message:
        _record(f"skassess {command}", "finite", argv)
    else:
        _record(f"skassess {command}", "crash", (argv, code, message[:300]))


def test_fuzz_found_no_defect(capsys):
    """No crash, NaN/inf, unclear message, bad input accepted, state change, valid refusal."""
    if not TALLY:
        pytest.skip("no fuzz test ran before this one")
    with capsys.disabled():
        print("\n" + tally_table())
    if os.environ.get("SKASSESS_FUZZ_TALLY"):  # benchmarks/bench_fuzz.py --save
        with open(os.environ["SKASSESS_FUZZ_TALLY"], "w", encoding="utf-8") as out:
            json.dump({"outcomes": list(OUTCOMES), "tally": TALLY}, out)
    found = {k: v for k, v in EXAMPLE_OF.items()}
    assert not found, "\n".join(f"{t} / {o}: {str(d)[:400]}" for (t, o), d in found.items())
