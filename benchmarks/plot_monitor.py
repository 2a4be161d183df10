"""The user guide's timeline: a classifier watched over 14 days, its inputs drifting after day 7.

The bundled Fashion-MNIST scores (``skassess.datasets.load_fashion_mnist_scores``):
2,000 labeled rows are the reference; the other rows make a stream of daily
chunks of 500 rows. For seven days the chunks are drawn as the reference was;
from day 8 the shirts, pullovers and coats (the classes the model confuses)
become ever more common (weight ``1 + s``, ``s`` rising to 12), so the accuracy
falls -- a drift the monitor sees only through the scores. The label-free
table is computed, ``--budget`` labels are spent where
``PerformanceMonitor.query`` asks, and the chunks are predicted again. Writes
``docs/_static/monitor_timeline.png`` and prints each day beside its true
accuracy.

Usage: ``python benchmarks/plot_monitor.py [--budget 60] [--threshold 0.85]``
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from skassess.datasets import load_fashion_mnist_scores  # noqa: E402
from skassess.meta import MonitorDisplay, PerformanceMonitor  # noqa: E402

HARD = (0, 2, 4, 6)  # t-shirt, pullover, coat, shirt
SHIFT = (0, 0, 0, 0, 0, 0, 0, 2, 4, 8, 12, 18, 24, 30)


def monitored(S_ref, y_ref, S, y, chunk, uncertainty_model, args):
    """The monitor's table: fitted on the reference, ``--budget`` labels where it asks."""
    monitor = PerformanceMonitor(
        threshold=args.threshold,
        uncertainty_model=uncertainty_model,
        random_state=0,
        progress=False,
    )
    monitor.fit(S_ref, y_ref)
    free = monitor.predict(S, chunk_by=chunk)
    labels = np.full(len(y), -1)
    asked = monitor.query(S, labels, n=args.budget, chunk_by=chunk, table=free)
    labels[asked] = y[asked]
    table = monitor.predict(S, labels, chunk_by=chunk)
    print(
        f"{uncertainty_model}: reference accuracy {monitor.reference_accuracy_:.3f}, "
        f"threshold {args.threshold:g}"
    )
    cols = ["n_labeled", "predicted", "mean", "lower_95", "upper_95", "p_below", "alert"]
    true = pd.Series(S.argmax(axis=1) == y).groupby(chunk).mean().to_numpy()
    print(table[cols].assign(true=true).round(3).to_string())
    return table.assign(true=true)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--threshold", type=float, default=0.85)
    ap.add_argument("--chunk-rows", type=int, default=500)
    ap.add_argument(
        "--uncertainty-model",
        nargs="+",
        default=["pretrained"],
        help="one panel each",
    )
    ap.add_argument("--out", default="docs/_static/monitor_timeline.png")
    args = ap.parse_args()
    data = load_fashion_mnist_scores()
    S, y = data.scores, np.asarray(data.target)
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    ref, pool = perm[:2000], perm[2000:]
    hard = np.isin(y[pool], HARD)
    parts = []
    for s in SHIFT:
        w = np.where(hard, 1.0 + s, 1.0)
        parts.append(rng.choice(pool, args.chunk_rows, replace=False, p=w / w.sum()))
    rows = np.concatenate(parts)
    chunk = np.repeat(pd.period_range("2026-03-01", periods=len(SHIFT), freq="D"), args.chunk_rows)
    panels = args.uncertainty_model
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(8, 3.6 * len(panels)), squeeze=False, sharey=True
    )
    for ax, um in zip(axes[:, 0], panels, strict=True):
        table = monitored(S[ref], y[ref], S[rows], y[rows], chunk, um, args)
        MonitorDisplay(table, threshold=args.threshold).plot(
            ax=ax,
            name=f"Fashion-MNIST: {args.chunk_rows} rows a day, drifting from day 8"
            + ("" if um == "pretrained" else f" ({um})"),
        )
        ax.plot(table.index.to_timestamp(), table["true"], "o", color="k", ms=4, label="true")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
