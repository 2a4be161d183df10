"""Optional stopping with ``--stop-probability``: is the answer wrong as rarely as promised?

``skassess label --task least_accurate --stop-probability P`` stops once the
most probable least-accurate group has posterior probability at least ``P``
and the anytime-valid intervals at level ``P`` confirm it
(:meth:`skassess.ActiveAssessor.certified_level`); its promise is that a run
stops on a wrong answer with probability at most ``1 - P``. This replays it:
``ActiveAssessor`` with the command's estimator (``BayesianAccuracy()``, the
calibrated prior) and strategy (``--strategy``, the command's default with a
stop probability: ``lucb``), 10 labels at a time from the pool's true labels,
the rule checked after each batch exactly as the command checks it
(:func:`skassess.session.stop_rule` on :func:`skassess.session.task_answer`),
up to ``--max-labels``. The same runs also record where the posterior
probability alone (the rule before anytime levels) would have stopped, and
whether the anytime-valid intervals at level ``P`` ever missed a class's
accuracy (checked after every batch: their promise is at most ``1 - P``).
Prints, per pool, rule and ``P``: runs, stops, labels at the stop (mean),
wrong stops among all runs (the promised rate) and among the stops, with
binomial standard errors. Results go to ``--out`` (JSON lines) run by run.

    OMP_NUM_THREADS=1 python benchmarks/bench_stop_probability.py --runs 20
"""

import argparse
import json
import warnings

import numpy as np
from _results import add_save_argument, saving_printed_tables
from bench_headline import pools

from skassess import BayesianAccuracy
from skassess.samplers import ActiveAssessor
from skassess.session._labeling import task_answer
from skassess.session._session_loop import stop_rule

RULES = ("certified", "posterior")


def one_run(
    scores, target, probabilities, max_labels, seed, prior="auto", strategy="lucb", accuracy=None
):
    """Labels at which each rule and stop probability first fires, and the answer then.

    With ``accuracy`` (each class's), also whether the anytime-valid intervals
    at each level missed a class's accuracy at any batch (``"missed"``).
    """
    assessor = ActiveAssessor(
        BayesianAccuracy(prior=prior, random_state=seed),
        task="least_accurate",
        strategy=strategy,
        random_state=seed,
    ).fit(scores)
    out = {rule: {} for rule in RULES}
    out["missed"] = {p: False for p in probabilities}
    while assessor.n_labeled_ < max_labels and len(out["certified"]) < len(probabilities):
        rows = assessor.query(10)
        assessor.tell(rows, target[rows])
        if accuracy is not None and assessor.certifies():
            for p in probabilities:
                iv = assessor.anytime_intervals(p)
                held = (iv["lower"] <= accuracy + 1e-12) & (accuracy - 1e-12 <= iv["upper"])
                out["missed"][p] |= bool((~held & iv["lower"].notna()).any())
        answer = task_answer(assessor)
        top = None
        for p in probabilities:
            for rule, ans in (("certified", answer), ("posterior", {**answer, "certified": None})):
                if p not in out[rule] and stop_rule(ans, p, None) == "probability":
                    if top is None:
                        top = int(assessor.identification_probabilities().idxmax())
                    out[rule][p] = (assessor.n_labeled_, top)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", nargs="+", default=["fashion-mnist", "classwise-20"])
    ap.add_argument("--probabilities", type=float, nargs="+", default=[0.9, 0.95])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--first-run", type=int, default=0)
    ap.add_argument("--max-labels", type=int, default=6000)
    ap.add_argument(
        "--prior",
        default="auto",
        help="BayesianAccuracy's prior (the command's: auto, the calibrated one)",
    )
    ap.add_argument(
        "--strategy",
        default="lucb",
        help="the query strategy (the command's default with a stop probability: lucb)",
    )
    ap.add_argument("--out", help="append each run as a JSON line")
    ap.add_argument(
        "--table",
        nargs="+",
        metavar="JSONL",
        help="print the table of earlier --out files instead of running",
    )
    add_save_argument(ap)
    args = ap.parse_args()
    with saving_printed_tables(args.save):
        if args.table:
            records = [json.loads(line) for f in args.table for line in open(f)]
        else:
            records = []
            for name, (scores, target, _) in pools(args.pools, 0).items():
                pred = scores.argmax(axis=1)
                acc = np.array(
                    [
                        np.mean(target[pred == k] == k) if np.any(pred == k) else np.inf
                        for k in range(scores.shape[1])
                    ]
                )
                for r in range(args.first_run, args.first_run + args.runs):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        res = one_run(
                            scores,
                            target,
                            args.probabilities,
                            args.max_labels,
                            r,
                            args.prior,
                            args.strategy,
                            np.where(np.isinf(acc), np.nan, acc),
                        )
                    rec = {
                        "pool": name,
                        "run": r,
                        "strategy": args.strategy,
                        "max_labels": args.max_labels,
                        "worst": int(np.argmin(acc)),
                        "stops": {
                            rule: {str(p): v for p, v in res[rule].items()} for rule in RULES
                        },
                        "missed": {str(p): v for p, v in res["missed"].items()},
                    }
                    records.append(rec)
                    if args.out:
                        with open(args.out, "a") as f:
                            f.write(json.dumps(rec) + "\n")
                    print(json.dumps(rec), flush=True)
        print(
            "pool            strategy  rule       P      runs  stops  labels  wrong/runs (se)"
            "  wrong/stops (se)  interval missed (runs)"
        )
        keys = sorted({(r["pool"], r["strategy"]) for r in records})
        for pool, strategy in keys:
            recs = [r for r in records if r["pool"] == pool and r["strategy"] == strategy]
            for rule in RULES:
                for p in sorted(
                    {p for r in recs for p in r["stops"][rule]}
                    | {str(p) for p in args.probabilities}
                ):
                    # a stop is (labels, chosen): a tuple from this run, a list from --table
                    hits = [
                        [*r["stops"][rule][p], r["worst"]] for r in recs if p in r["stops"][rule]
                    ]
                    n, stopped = len(recs), len(hits)
                    wrong = sum(int(chosen != worst) for _, chosen, worst in hits)
                    per_run = wrong / n
                    per_stop = wrong / stopped if stopped else float("nan")
                    labels = np.mean([h[0] for h in hits]) if hits else float("nan")
                    se_run = np.sqrt(per_run * (1 - per_run) / n)
                    se_stop = np.sqrt(per_stop * (1 - per_stop) / stopped) if stopped else np.nan
                    missed = [r["missed"][p] for r in recs if p in r.get("missed", {})]
                    print(
                        f"{pool:<15} {strategy:<9} {rule:<10} {p:<6} {n:>4}  {stopped:>5}  "
                        f"{labels:>6.0f}  {per_run:>6.3f} ({se_run:.3f})   {per_stop:>6.3f} "
                        f"({se_stop:.3f})   {sum(missed)} of {len(missed)}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
