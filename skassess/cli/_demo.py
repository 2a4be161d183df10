"""``skassess demo``: a real assessment on bundled data."""

import sys

import numpy as np
import pandas as pd

from ..datasets import load_adult_scores, load_fashion_mnist_scores
from ..metrics import (
    BayesianAccuracy,
    BayesianCalibrationError,
    ReliabilityDisplay,
    compare_groups,
    expected_calibration_error,
)

#: The priors the demo offers and the line it prints for each.
PRIORS = {
    "calibrated": "Calibrated prior: P(right) = sigmoid(m + a + b (logit(c) - m) + u_g), the "
    "map (a, b) and the groups' spread learned from the labels.",
    "hierarchical": "Hierarchical prior: the groups' accuracies share Beta(mu kappa, "
    "(1 - mu) kappa), (mu, kappa) learned from the labels.",
    "informative": "Informative prior: Beta(2 s_g, 2 (1 - s_g)), s_g = mean top-1 score of "
    "group g.",
    "uniform": "Uniform prior: Beta(1, 1) for every group.",
}


def _reveal(target, n_labels, seed):
    n = len(target)
    if not 0 <= n_labels <= n:
        raise SystemExit(f"skassess: --n-labels must be in [0, {n}]; got {n_labels}.")
    rng = np.random.default_rng(seed)
    y = np.full(n, -1, dtype=np.int64)
    rows = rng.choice(n, size=n_labels, replace=False)
    y[rows] = target[rows]
    return y


def _interval(est, truth, name):
    lower, upper = est.overall_interval(0.95)
    return (
        f"{name:<9} posterior mean {est.overall_mean():.4f}, 95% interval "
        f"[{lower:.4f}, {upper:.4f}]   (value on all labels: {truth:.4f})"
    )


def run(args):
    pd.set_option("display.width", 120)
    if args.dataset == "fashion-mnist":
        data = load_fashion_mnist_scores()
        scores, target = data.scores, data.target
        groups, title = None, "MLP on Fashion-MNIST (10,000 test images)"
        acc = BayesianAccuracy(prior=args.prior, random_state=args.seed)
    else:
        data = load_adult_scores("race")
        scores = data.scores["MultiLayerPerceptron"].to_numpy()
        target = data.target.to_numpy()
        groups = np.where(data.sensitive["race"] == "White", "White", "non-White")
        title = "MLP on Adult income (10,054 people)"
        acc = BayesianAccuracy(grouping="external", prior=args.prior, random_state=args.seed)
    y = _reveal(target, args.n_labels, args.seed)
    acc.fit(scores, y, group_by=groups)
    print(f"{title}: {args.n_labels} labeled rows, {len(y) - args.n_labels} unlabeled.")
    print(PRIORS[args.prior] + "\n")
    table = acc.summary(0.95)
    if args.dataset == "fashion-mnist":
        table.index = pd.Index(data.class_names, name="predicted class")
    print("Accuracy per group (posterior, 95% credible interval):")
    print(table.round(3).to_string(), "\n")

    # The truth uses every label, which the assessment above did not see.
    pred = np.asarray(scores).argmax(axis=1) if np.ndim(scores) == 2 else (np.asarray(scores) > 0.5)
    print(_interval(acc, float(np.mean(pred == target)), "Accuracy"))
    ece = BayesianCalibrationError(random_state=args.seed).fit(scores, y)
    print(_interval(ece, expected_calibration_error(target, scores), "ECE"))
    if groups is not None:
        comp = compare_groups(acc, "White", "non-White", rope=0.05)
        p_left, p_rope, p_right = comp.probabilities
        print(
            f"\nWhite - non-White accuracy: mean {comp.mean:+.4f}; P(< -0.05) {p_left:.3f}, "
            f"P(within ±0.05) {p_rope:.3f}, P(> 0.05) {p_right:.3f}"
        )
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        print(
            "\nmatplotlib is not installed (pip install skassess[plot]): no plot written.",
            file=sys.stderr,
        )
        return 0
    disp = ReliabilityDisplay.from_estimator(ece)
    disp.ax_.set_title(
        f"{title}\n{args.n_labels} labels: Bayesian reliability diagram", fontsize="medium"
    )
    disp.figure_.tight_layout()
    disp.figure_.savefig(args.output, dpi=120)
    print(f"\nWrote the reliability diagram to {args.output}")
    return 0
