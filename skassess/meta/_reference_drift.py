"""Drift scenarios simulated inside the user's labeled reference, the black box fixed.

Each scenario splits the reference rows into a scenario reference and a
drifted batch; the predictor is refitted on the first and judged on the
second (:func:`~skassess.meta._scenarios.evaluate_scenario`), which gives
the uncertainty model's inputs and the true error. Two schemes:

- linear skew (``uncertainty_model="fit"``): the batch is the rows the skew
  keeps out of the scenario's reference, so the reference lacks the batch's
  region, as in the library the shipped model learned from;
- held out (``"recalibrated"``): the scenario's reference is a random half
  and the batch drifts inside the other half, by linear skew or nearest
  neighbours in turn, so the reference has seen the batch's regions.
"""

import numpy as np
import pandas as pd

from ..utils._threads import one_native_thread
from ._scenarios import evaluate_scenario
from .drift import LINEAR_SKEW_RATIOS, LinearSkewSplit, NearestNeighborsSplit

__all__ = ["simulate_reference_drift"]


def held_out_splits(skew, feats, n_scenarios, rng):
    """``(reference, batch)`` pairs: a random half, and a drifted draw from the other half.

    The batch is drawn by linear skew (along one of ``feats``, a random ratio
    of the paper's) or by nearest neighbours, in turn.
    """
    n = skew.shape[0]
    out = []
    for s in range(n_scenarios):
        perm = rng.permutation(n)
        ref, pool = np.sort(perm[: n // 2]), perm[n // 2 :]
        cv_seed = int(rng.integers(2**31 - 1))
        if s % 2 == 0:
            cv = LinearSkewSplit(
                feats[(s // 2) % len(feats)],
                ratios=[float(rng.choice(LINEAR_SKEW_RATIOS))],
                batch_fraction=0.5,
                random_state=cv_seed,
            )
        else:
            cv = NearestNeighborsSplit(1, batch_fraction=0.5, random_state=cv_seed)
        _, batch = next(cv.split(skew[pool]))
        out.append((ref, np.sort(pool[batch])))
    return out


def simulate_reference_drift(
    shared, F, codes, S, *, method, n_scenarios, held_out, seed, n_jobs=None, progress=True
):
    """The scenarios' records (a DataFrame; column ``split``: 80 % train, 20 % calibration).

    Parameters
    ----------
    shared : PerformancePredictor
        The meta-model fitted on the whole reference; its random-forest proxy
        ranks the features to skew along.
    F : ndarray or None
        The reference's encoded features (None: scores only, skewed along the
        black box's confidence and entropy).
    codes, S : ndarray
        The reference's class indices and scores.
    method : str
        The predictor judged in each scenario.
    n_scenarios : int
        Scenarios drawn (those whose reference lacks a class, or two right and
        two wrong predictions, or whose batch has under 10 rows, are skipped).
    held_out : bool
        The held-out scheme, else linear skew.
    seed : int
        Seed of the splits and of each scenario's predictors.
    n_jobs : int or None
        joblib processes, one native thread each.
    progress : bool
        A progress bar over the scenarios when they take over 2 s.
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    if F is not None and F.shape[1] > 0:
        imp = shared.features_.models_[1].feature_importances_
        skew, feats = F, [int(i) for i in np.argsort(imp)[::-1][:2]]
    else:  # scores only: skew along the black box's confidence and entropy
        skew, feats = shared.reference_rows_["Z"][:, [0, 2]], [0, 1]
    skew = np.asarray(skew, dtype=np.float64)
    feats = [j for j in feats if np.nanmax(skew[:, j]) > np.nanmin(skew[:, j])]
    if not feats:
        raise ValueError(
            f"uncertainty_model={'recalibrated' if held_out else 'fit'!r} simulates drift "
            "by skewing the reference along "
            + (
                "its most important features"
                if F is not None and F.shape[1] > 0
                else "the black box's confidence and entropy"
            )
            + ", which are constant in the reference (e.g. every score 0 or 1): no drift "
            "the predictor can see can be simulated. Use uncertainty_model='pretrained'."
        )
    rng = np.random.default_rng(seed)
    if held_out:
        splits = held_out_splits(skew, feats, n_scenarios, rng)
    else:
        per_ratio = len(feats) * len(LINEAR_SKEW_RATIOS)
        cv = LinearSkewSplit(
            feats, n_repeats=max(1, -(-n_scenarios // per_ratio)), random_state=seed
        )
        splits = list(cv.split(skew))
        splits = [splits[i] for i in np.sort(rng.choice(len(splits), n_scenarios, replace=False))]
    tasks = [
        delayed(_scenario)(
            None if F is None else F[ref],
            codes[ref],
            S[ref],
            None if F is None else F[batch],
            codes[batch],
            S[batch],
            method,
            seed + s,
        )
        for s, (ref, batch) in enumerate(splits)
        if np.unique(codes[ref]).size >= 2 and _learnable(S[ref], codes[ref]) and batch.size >= 10
    ]
    records = []
    with tqdm(
        total=len(tasks), desc="drift scenarios", delay=2, leave=False, disable=not progress
    ) as bar:
        for part in Parallel(n_jobs=n_jobs, return_as="generator")(tasks):
            records += part
            bar.update(1)
    if len(records) < 10:
        raise ValueError(
            f"Only {len(records)} drift scenarios could be simulated from "
            "the reference rows (each needs both classes, two right and two "
            "wrong predictions of the black box, and 10 batch rows); give "
            "more reference rows."
        )
    df = pd.DataFrame(records)
    n_cal = max(2, int(round(0.2 * len(df))))
    split = np.array(["train"] * len(df), dtype=object)
    split[rng.choice(len(df), n_cal, replace=False)] = "calibration"
    df["split"] = split
    return df


def _learnable(S, codes):
    """Whether the black box is right on two rows or more and wrong on two or more.

    With fewer, the meta-model predicts a constant (see ``PerformancePredictor.constant_``):
    such a scenario says nothing about how the user's predictor errs.
    """
    correct = S.argmax(axis=1) == codes
    return min(int(correct.sum()), int((~correct).sum())) >= 2


def _scenario(Fr, yr, Sr, Fb, yb, Sb, method, seed):
    with one_native_thread():  # also inside a worker process
        return evaluate_scenario(Fr, yr, Sr, Fb, yb, Sb, methods=[method], seed=seed)
