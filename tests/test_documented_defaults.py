"""What the README and the user guide say the defaults are, checked against the code."""

import inspect
import re
from pathlib import Path

import numpy as np
import pytest

from skassess import ActiveAssessor, BayesianAccuracy
from skassess.calibration import BayesianGroupMetrics
from skassess.cli._arguments import build_parser
from skassess.cli._label import DEFAULTS as LABEL_DEFAULTS
from skassess.cli._label import MODEL_STRATEGIES
from skassess.metrics import BayesianConfusionMatrix, BayesianMisclassificationCost

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GUIDE = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs/user_guide").glob("*.rst")}
PAGES = {"README.md": README, **GUIDE}
OPTIONS = ("method", "prior", "strategy", "task", "grouping", "binning", "metric", "sampler")


def _default(cls, name):
    return inspect.signature(cls).parameters[name].default


def _flat(text):
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_option_values_in_the_docs_are_current_names(page):
    """An option shown as ``name="value"`` is written with underscores (hyphens are deprecated)."""
    found = re.findall(rf"\b({'|'.join(OPTIONS)})=\"([A-Za-z0-9_-]+)\"", PAGES[page])
    stale = [f'{k}="{v}"' for k, v in found if "-" in v]
    assert not stale, f"{page} shows deprecated hyphenated option values: {stale}"


def test_the_calibrated_prior_is_the_default_where_the_docs_say():
    readme = _flat(README)
    assert 'Priors: `prior="calibrated"` (the default for accuracy, every rate and the cost)' in (
        readme
    )
    for metric in ("accuracy", "tpr", "fnr", "tnr", "fpr", "ppv", "npv"):
        assert BayesianAccuracy(metric=metric)._prior_kind() == "calibrated"
    assert _default(BayesianMisclassificationCost, "prior") == "calibrated"
    guide = _flat(GUIDE["calibrated_prior.rst"])
    assert "the default of :class:`BayesianAccuracy`" in guide
    assert ":class:`~skassess.metrics.BayesianConfusionMatrix`" in guide
    assert _default(BayesianConfusionMatrix, "prior") == "calibrated"


def test_active_assessor_samples_with_the_calibrated_prior():
    assert "`ActiveAssessor`'s default working estimator is the calibrated prior" in _flat(README)
    guide = _flat(GUIDE["calibrated_prior.rst"])
    assert ":class:`~skassess.samplers.ActiveAssessor` samples with it too" in guide
    assert "informative prior as its default" not in guide
    scores = np.random.default_rng(0).dirichlet(np.ones(3), 40)
    fitted = ActiveAssessor(random_state=0).fit(scores).estimator_
    assert isinstance(fitted, BayesianAccuracy) and fitted._prior_kind() == "calibrated"


def test_fairness_default_method_is_the_calibrated_one():
    assert 'method="bayesian_calibration"` is the hierarchical beta calibration' in _flat(README)
    assert _default(BayesianGroupMetrics, "method") == "calibrated"


def test_command_defaults_match_the_docs():
    guide = _flat(GUIDE["command_line.rst"])
    assert "``--task estimate`` (the default)" in guide
    assert LABEL_DEFAULTS["task"] == "estimate"
    assert "``--prior calibrated`` by default" in guide
    args = build_parser().parse_args(["assess", "scores.csv"])
    assert args.prior == "calibrated"
    assert "(``--strategy top_two``, the default," in guide
    assert MODEL_STRATEGIES[0] == "top_two"
