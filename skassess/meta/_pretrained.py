"""The uncertainty models shipped with skassess (``_pretrained/um_<method>.json.gz``).

Each was trained by ``benchmarks/train_pretrained_um.py`` on linear-skew drift
scenarios of a library of real tabular data sets (``benchmarks/_tabular.py``;
the file records which), with logistic-regression and random-forest base
models. The file holds xgboost boosters as UBJSON text, not a pickle, so it
loads under any xgboost >= 2.1.
"""

import functools
import gzip
import json
from pathlib import Path

from ._quantile_model import QuantileEnsemble
from ._um_features import UM_FEATURES

__all__ = ["load_pretrained", "pretrained_methods"]

PRETRAINED_DIR = Path(__file__).parent / "_pretrained"


def pretrained_methods():
    """The predictor methods that have a shipped uncertainty model."""
    return sorted(p.name[3:-8] for p in PRETRAINED_DIR.glob("um_*.json.gz"))


@functools.cache
def _read(method):
    with gzip.open(PRETRAINED_DIR / f"um_{method}.json.gz", "rt", encoding="utf-8") as fh:
        return json.load(fh)


def load_pretrained(method):
    """``(model, scales, info)`` of the shipped uncertainty model for ``method``."""
    available = pretrained_methods()
    if method not in available:
        raise ValueError(
            f"There is no pretrained uncertainty model for method {method!r} (there is for "
            f"{available!r}); use uncertainty_model='fit' to train one on the reference set."
        )
    payload = _read(method)
    if tuple(payload["features"]) != UM_FEATURES:
        raise ValueError(  # pragma: no cover - guards a package built from mixed versions
            f"The pretrained uncertainty model for {method!r} was trained on other inputs "
            "than this version computes; retrain it with benchmarks/train_pretrained_um.py."
        )
    import numpy as np

    return (QuantileEnsemble.from_dict(payload["model"]), np.asarray(payload["scales"]),
            payload["trained_on"])
