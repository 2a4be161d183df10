"""A full confusion matrix per annotator (Dawid and Skene) beside the one-coin model.

The one-coin model gives each annotator one slip rate, its slips spread over the
other classes alike. Dawid and Skene's model gives each annotator a confusion
matrix. This benchmark implements it here, outside the package, in the same
frame as the one-coin model: the black box right with ``theta_g`` per predicted
class, each annotator's accuracy per true class with the one-coin prior (95 %
in [0.85, 0.999]) and its slips' spread over the other classes with a Dirichlet
prior of ``--spread`` per class; a Gibbs sampler (``--burn-in`` sweeps, then a
draw of the true labels every ``--thin``) gives ``n_imputations`` draws of the
true labels, and ``BayesianAccuracy()`` fitted on each makes the mixture, as
``label_noise`` does.

Labels as in ``bench_label_noise.py``: ``--labels`` items of Fashion-MNIST,
two annotators slipping ``eps/2`` and ``3 eps/2``, ``--repeats`` of the items
labeled by both; slips uniform, or confusable (seven in ten toward the class
the black box most often predicts for the true class). Prints the coverage of
the 95 % interval of the overall accuracy, its bias and its median width.

Usage::

    python benchmarks/bench_dawid_skene.py --save dawid-skene
"""

import argparse

import numpy as np
import pandas as pd
from _parallel import add_parallel_arguments, use_parallel_backend
from _results import Table, add_save_argument
from bench_label_noise import annotate, confusable_class, load
from joblib import Parallel, delayed

from skassess import BayesianAccuracy
from skassess.metrics._annotators import beta_from_interval


def gibbs_labels(pred, labels, K, prior, n_draws, burn_in, thin, spread, rng):
    """Draws of the labeled items' true classes under Dawid and Skene's model."""
    n, A = labels.shape
    a0, b0 = prior
    eye = np.eye(K, dtype=bool)
    given = labels >= 0
    y = np.where(given.any(1), labels[np.arange(n), given.argmax(1)], pred)
    theta = np.full(K, 0.5)
    pi = np.where(eye, a0 / (a0 + b0), b0 / (a0 + b0) / (K - 1))[None].repeat(A, 0)
    draws = []
    for sweep in range(burn_in + n_draws * thin):
        with np.errstate(divide="ignore"):
            logp = np.log1p(-theta[pred])[:, None] - np.log(K - 1) + np.zeros((n, K))
            logp[np.arange(n), pred] = np.log(theta[pred])
            for a in range(A):
                g = given[:, a]
                logp[g] += np.log(pi[a])[:, labels[g, a]].T
        logp -= logp.max(1, keepdims=True)
        cdf = np.cumsum(np.exp(logp), 1)
        y = (cdf < rng.random((n, 1)) * cdf[:, -1:]).sum(1)
        right = y == pred
        hits = np.bincount(pred, weights=right, minlength=K)
        theta = rng.beta(1 + hits, 1 + np.bincount(pred, minlength=K) - hits)
        for a in range(A):
            g = given[:, a]
            counts = np.zeros((K, K))
            np.add.at(counts, (y[g], labels[g, a]), 1.0)
            wrong = np.where(eye, 0.0, counts)
            accuracy = rng.beta(a0 + np.diag(counts), b0 + wrong.sum(1))
            gam = rng.gamma(np.where(eye, 1.0, spread + wrong))
            gam[eye] = 0.0
            pi[a] = gam / gam.sum(1, keepdims=True) * (1 - accuracy)[:, None]
            pi[a][eye] = accuracy
        if sweep >= burn_in and (sweep - burn_in + 1) % thin == 0:
            draws.append(y.copy())
    return np.array(draws)


def one_run(X, y, kind, eps, args, confusable, seed):
    rng = np.random.default_rng(seed)
    K = X.shape[1]
    pred = X.argmax(1)
    truth = float(np.mean(pred == y))
    items = rng.choice(y.size, args.labels, replace=False)
    first = rng.integers(0, 2, args.labels)
    labels = np.full((y.size, 2), -1)
    slips = (eps / 2, 1.5 * eps)
    for a in range(2):
        rows = items[first == a]
        labels[rows, a] = annotate(y[rows], slips[a], kind, confusable, rng)
        twice = items[: args.repeats][first[: args.repeats] != a]
        labels[twice, a] = annotate(y[twice], slips[a], kind, confusable, rng)
    out = {}
    one_coin = BayesianAccuracy(random_state=seed).fit(X, pd.DataFrame(labels, columns=["a", "b"]))
    out["one-coin"] = one_coin.overall_samples(4000)
    prior = beta_from_interval(0.85, 0.999)
    drawn = gibbs_labels(
        pred[items],
        labels[items],
        K,
        prior,
        args.imputations,
        args.burn_in,
        args.thin,
        args.spread,
        rng,
    )
    samples = []
    for m in range(args.imputations):
        y_m = np.full(y.size, -1)
        y_m[items] = drawn[m]
        fit = BayesianAccuracy(random_state=seed).fit(X, y_m)
        samples.append(fit.overall_samples(-(-4000 // args.imputations)))
    out["Dawid-Skene"] = np.concatenate(samples)
    result = {}
    for name, s in out.items():
        lo, hi = np.quantile(s, [0.025, 0.975])
        result[name] = (lo <= truth <= hi, float(s.mean()) - truth, hi - lo)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--labels", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=600)
    ap.add_argument("--imputations", type=int, default=20)
    ap.add_argument("--burn-in", type=int, default=200)
    ap.add_argument("--thin", type=int, default=10)
    ap.add_argument("--spread", type=float, default=5.0)
    add_parallel_arguments(ap)
    add_save_argument(ap)
    args = ap.parse_args()
    use_parallel_backend(args)
    X, y = load("fashion-mnist")
    confusable = confusable_class(X, y)
    methods = ("one-coin", "Dawid-Skene")
    table = Table(
        ["slips", "eps"] + [f"{m}: {c}" for m in methods for c in ("coverage", "bias", "width")],
        formats={f"{m}: {c}": ".2f" for m in methods for c in ("coverage", "bias", "width")},
    )
    for kind in ("uniform", "confusable"):
        for eps in (0.05, 0.10):
            res = Parallel(n_jobs=args.n_jobs)(
                delayed(one_run)(X, y, kind, eps, args, confusable, s) for s in range(args.runs)
            )
            row = [kind, eps]
            for m in methods:
                cover = np.mean([r[m][0] for r in res])
                bias = 100 * np.mean([r[m][1] for r in res])
                width = 100 * np.median([r[m][2] for r in res])
                row += [cover, bias, width]
            table.add(row)
    table.save(
        args.save,
        caption=f"Fashion-MNIST, {args.labels} labels from two annotators, {args.repeats} "
        f"labeled by both; {args.runs} runs. Coverage of the 95 % interval of the overall "
        "accuracy, mean bias and median width (points).",
    )


if __name__ == "__main__":
    main()
