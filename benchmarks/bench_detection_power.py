"""How often any check can tell, from a group's few labels, that its scores' map fails it.

The most powerful level-``alpha`` test of H0 "each of the group's ``n`` labels
is right with the map's probability ``p0``" against H1 "with ``p1 < p0``"
(Neyman-Pearson: reject for many wrong predictions, randomized at the boundary
so the level is exactly ``alpha``), knowing ``p0`` and ``p1`` exactly. Its
power bounds the share of such groups that any departure check -- skassess's
or another -- can flag: an estimator that pools an unflagged group with the
map misses the rest. Prints the power per (p0, p1) and number of labels.

Usage: ``python benchmarks/bench_detection_power.py [--alpha 0.05]``
"""

import argparse

from scipy.stats import binom

SETTINGS = ((0.85, 0.6), (0.9, 0.6), (0.8, 0.5), (0.9, 0.75))
LABELS = (1, 2, 3, 4, 8, 12, 20)


def power(n, p0, p1, alpha):
    """Power of the randomized most powerful test on the number of wrong predictions."""
    q0, q1 = 1.0 - p0, 1.0 - p1
    k = next(k for k in range(n + 2) if binom.sf(k - 1, n, q0) <= alpha)  # reject F >= k
    size = binom.sf(k - 1, n, q0)
    gamma = (alpha - size) / binom.pmf(k - 1, n, q0)  # P(reject | F = k - 1)
    return float(binom.sf(k - 1, n, q1) + gamma * binom.pmf(k - 1, n, q1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alpha", type=float, default=0.05)
    args = ap.parse_args()
    print(
        "| map's accuracy p0 | group's accuracy p1 | "
        + " | ".join(f"n = {n}" for n in LABELS)
        + " |"
    )
    print("|---|---|" + "---|" * len(LABELS))
    for p0, p1 in SETTINGS:
        cells = " | ".join(f"{power(n, p0, p1, args.alpha):.2f}" for n in LABELS)
        print(f"| {p0:g} | {p1:g} | {cells} |")


if __name__ == "__main__":
    main()
