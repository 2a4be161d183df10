"""Speed and accuracy of HierarchicalBetaCalibrator's sampler.

Usage::

    python benchmarks/bench_calibration.py

1. Speed: fit + transform on the Adult race scores of the MLP, 100 random
   labeled rows and the other 9,954 unlabeled, two groups (White / rest),
   five seeds; prints wall-clock seconds, the largest R-hat and the smallest
   ESS of each fit.
2. Against a long reference run (20 times the kept steps, 10 times the
   burn-in): posterior means of every group parameter agree within Monte
   Carlo error (z = difference / combined standard error, |z| < 3 expected).
"""

import time

import numpy as np

from skassess.calibration import EmceeSampler, HierarchicalBetaCalibrator
from skassess.datasets import load_adult_scores


def data(seed):
    d = load_adult_scores("race")
    s = d.scores["MultiLayerPerceptron"].to_numpy()
    groups = np.where(d.sensitive["race"] == "White", "White", "rest")
    y = np.full(len(s), -1)
    rows = np.random.default_rng(seed).choice(len(s), 100, replace=False)
    y[rows] = d.target.to_numpy()[rows]
    return s, y, groups


def speed():
    print("| seed | fit + transform (s) | fit (s) | transform (s) | max R-hat | min ESS |")
    print("|---|---|---|---|---|---|")
    for seed in range(5):
        s, y, groups = data(seed)
        start = time.perf_counter()
        cal = HierarchicalBetaCalibrator(random_state=seed).fit(s, y, group_by=groups)
        mid = time.perf_counter()
        cal.transform(s, group_by=groups)
        end = time.perf_counter()
        print(
            f"| {seed} | {end - start:.2f} | {mid - start:.2f} | {end - mid:.2f} | "
            f"{cal.rhat_.max():.4f} | {cal.ess_.min():.0f} |",
            flush=True,
        )


def reference():
    s, y, groups = data(0)
    short = HierarchicalBetaCalibrator(random_state=1).fit(s, y, group_by=groups)
    long = HierarchicalBetaCalibrator(
        random_state=2, sampler=EmceeSampler(n_burn=3000, n_steps=6000, max_steps=6000)
    ).fit(s, y, group_by=groups)
    print("\n| parameter | default mean | reference mean | z |")
    print("|---|---|---|---|")
    zs = []
    a, b = short.summary(), long.summary()
    for name in a.index:
        if name.startswith("sigma"):
            continue
        ds = short.draws_ if "[" in name else None
        sd_a = _sd(short, name)
        sd_b = _sd(long, name)
        se = np.sqrt(sd_a**2 / short.ess_[name] + sd_b**2 / long.ess_[name])
        z = (a.loc[name, "mean"] - b.loc[name, "mean"]) / se
        zs.append(z)
        print(f"| {name} | {a.loc[name, 'mean']:.4f} | {b.loc[name, 'mean']:.4f} | {z:+.2f} |")
        del ds
    print(f"\nlargest |z| = {np.max(np.abs(zs)):.2f} over {len(zs)} parameters")


def _sd(cal, name):
    if "[" in name:
        param, group = name[0], name[2:-1]
        j = list(cal.groups_).index(group)
        return cal.draws_[:, j, "abc".index(param)].std()
    return cal.hyper_draws_[name].std()


if __name__ == "__main__":
    speed()
    reference()
