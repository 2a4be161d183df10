"""The uncertainty models shipped with skassess (``_pretrained/um_<method>.json.gz``).

Each was trained by ``benchmarks/train_pretrained_um.py`` on linear-skew drift
scenarios of a library of real tabular data sets (``benchmarks/_tabular.py``;
the file records which), with logistic-regression and random-forest base
models. The file holds xgboost boosters as UBJSON text, not a pickle. An
xgboost of another major version may read the boosters yet predict other
quantiles (2.1 and 3.0 read the 3.2 boosters; 2.1's intervals are ~8x too narrow), so
each file also holds 64 reference rows and their predictions under the
training version (``benchmarks/add_um_reference.py``); :func:`load_pretrained`
predicts them again and refuses a model that does not reproduce them.

A file may instead name another method's file (``"boosters_from"``) and hold
scales alone: ``"combined"`` computes the uncertainty model's inputs from the
meta-model's row features, as ``"meta_model"`` does, and its own error gets
its own scales.
"""

import functools
import gzip
import json
from pathlib import Path

from ._quantile_model import QuantileEnsemble
from ._um_features import UM_FEATURES

__all__ = ["PretrainedModelError", "load_pretrained", "pretrained_methods"]

#: How far the reference predictions may move (xgboost's float32 arithmetic).
CHECK_RTOL, CHECK_ATOL = 1e-4, 1e-5


class PretrainedModelError(RuntimeError):
    """The installed xgboost does not reproduce a shipped uncertainty model."""


PRETRAINED_DIR = Path(__file__).parent / "_pretrained"


def pretrained_methods():
    """The predictor methods that have a shipped uncertainty model."""
    return sorted(p.name[3:-8] for p in PRETRAINED_DIR.glob("um_*.json.gz"))


@functools.cache
def _read(method):
    with gzip.open(PRETRAINED_DIR / f"um_{method}.json.gz", "rt", encoding="utf-8") as fh:
        return json.load(fh)


def load_pretrained(method, inputs="features"):
    """``(model, scales, drift_edges, info)`` of the shipped uncertainty model for ``method``.

    ``scales`` has one row per drift stratum, ``drift_edges`` the strengths
    between them (a file with one row of scales has no edges). A predictor
    without features (``inputs="scores"``: it sees the black box's scores
    alone) gets the scales fitted for that case (``scales_scores``) where the
    file has them: the boosters' quantiles miss the features' evidence, and
    their width is calibrated apart.
    """
    available = pretrained_methods()
    if method not in available:
        raise ValueError(
            f"There is no pretrained uncertainty model for method {method!r} (there is for "
            f"{available!r}); use uncertainty_model='fit' to train one on the reference set."
        )
    payload = _read(method)
    # a predictor whose UM inputs are another's (``"combined"`` reads the meta-model's row
    # features) shares that one's boosters and has its own scales
    boosters = _read(payload["boosters_from"]) if "boosters_from" in payload else payload
    if tuple(boosters["features"]) != UM_FEATURES:
        raise ValueError(  # pragma: no cover - guards a package built from mixed versions
            f"The pretrained uncertainty model for {method!r} was trained on other inputs "
            "than this version computes; retrain it with benchmarks/train_pretrained_um.py."
        )
    import numpy as np

    model = QuantileEnsemble.from_dict(boosters["model"])
    _check(model, boosters, payload.get("boosters_from", method))
    key = "_scores" if inputs == "scores" and "scales_scores" in payload else ""
    scales = np.atleast_2d(np.asarray(payload[f"scales{key}"], dtype=np.float64))
    edges = np.asarray(payload.get(f"drift_edges{key}", []), dtype=np.float64)
    return model, scales, edges, {**boosters["trained_on"], **payload["trained_on"]}


def _check(model, payload, method):
    """Refuse a model whose reference rows predict differently under this xgboost."""
    import numpy as np
    import xgboost

    check = payload.get("check")
    if check is None:  # pragma: no cover - guards a package built without the check
        raise PretrainedModelError(
            f"The pretrained uncertainty model for {method!r} has no reference predictions; "
            "run benchmarks/add_um_reference.py."
        )
    got = model.predict(np.asarray(check["inputs"], dtype=np.float64))
    expected = np.asarray(check["predictions"])
    if got.shape != expected.shape or not np.allclose(
        got, expected, rtol=CHECK_RTOL, atol=CHECK_ATOL
    ):
        diff = np.abs(got - expected).max() if got.shape == expected.shape else np.inf
        raise PretrainedModelError(
            f"The pretrained uncertainty model for {method!r} does not reproduce its reference "
            f"predictions under xgboost {xgboost.__version__} (largest difference {diff:.3g}; "
            f"made with xgboost {check['xgboost']}), so its intervals would be wrong. Install "
            "xgboost >= 3.1 (pip install 'skassess[meta]'), or fit an uncertainty model on "
            "your reference rows with uncertainty_model='fit'."
        )
