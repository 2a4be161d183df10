"""Store reference predictions in the shipped uncertainty models, for their load-time check.

For each ``skassess/meta/_pretrained/um_<method>.json.gz``, draws 64 input rows
whose features lie among the boosters' own split values (so that the rows
reach many leaves), predicts them with the boosters under the xgboost that
runs this script, and writes both into the file as ``"check"``. At load,
skassess predicts the same rows and refuses the model if the predictions
differ (an xgboost that reads the boosters but predicts other quantiles).
Run it under the xgboost the models were trained with (``trained_on.xgboost``),
after ``train_pretrained_um.py``:
``python benchmarks/add_um_reference.py``
"""

import gzip
import json

import numpy as np
import xgboost

from skassess.meta._pretrained import PRETRAINED_DIR, pretrained_methods
from skassess.meta._quantile_model import QuantileEnsemble


def reference_inputs(model, n_features, n_rows=64, seed=0):
    rng = np.random.default_rng(seed)
    splits = {}
    for booster in model.boosters_:
        trees = booster.trees_to_dataframe()
        for feature, value in zip(trees["Feature"], trees["Split"], strict=True):
            if feature != "Leaf" and np.isfinite(value):
                splits.setdefault(int(feature.lstrip("f")), []).append(value)
    F = np.zeros((n_rows, n_features))
    for j in range(n_features):
        values = np.asarray(splits.get(j, [0.0]))
        # a split value nudged either way: both branches of many nodes
        F[:, j] = rng.choice(values, n_rows) + rng.normal(0, 1e-3, n_rows) * (
            np.abs(values).mean() + 1e-3
        )
    return F


def main():
    for method in pretrained_methods():
        path = PRETRAINED_DIR / f"um_{method}.json.gz"
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            payload = json.load(fh)
        model = QuantileEnsemble.from_dict(payload["model"])
        F = reference_inputs(model, len(payload["features"]))
        payload["check"] = {
            "inputs": F.tolist(),
            "predictions": model.predict(F).tolist(),
            "xgboost": xgboost.__version__,
        }
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            json.dump(payload, fh)
        print(
            f"{method}: 64 reference rows under xgboost {xgboost.__version__} "
            f"(trained under {payload['trained_on'].get('xgboost')})"
        )


if __name__ == "__main__":
    main()
