"""The user guide's figure: error against labels, five methods, one model under test.

Usage::

    python benchmarks/bench_alt_mas.py --seeds 10 --out alt_mas_results.pkl
    python benchmarks/plot_alt_mas.py alt_mas_results.pkl --model weak
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

LABELS = {
    "tradition": "random + plug-in",
    "dirichlet": "random + Dirichlet",
    "bald": "BALD",
    "alt_mas": "ALT-MAS (paper)",
    "final": "ActiveTester",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--model", default="weak")
    parser.add_argument("--out", default="docs/_static/alt_mas_errors.png")
    args = parser.parse_args()
    df = pd.read_pickle(args.results)
    df = df[df.model == args.model]
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharex=True)
    for ax, col, title in zip(
        axes,
        ["accuracy", "macro_f1", "recall"],
        ["accuracy", "macro-F1", "mean per-class recall"],
        strict=True,
    ):
        for method, label in LABELS.items():
            part = df[df.method == method].groupby("budget")[col]
            mean, se = part.mean(), part.sem()
            ax.errorbar(
                mean.index, mean.values, yerr=se.values, marker="o", ms=3, capsize=2, label=label
            )
        ax.set_title(title)
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks([50, 100, 200, 400], labels=["50", "100", "200", "400"])
        ax.set_xlabel("labels")
    axes[0].set_ylabel("absolute error (points)")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"MNIST, model under test: {args.model} (mean and SE over seeds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
