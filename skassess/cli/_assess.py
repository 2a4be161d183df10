"""``skassess assess``: the posterior assessment of a scores file."""

import contextlib
import time

import numpy as np
import pandas as pd

from ..session import assess_file, assess_partitions
from ..utils._dask import local_cluster
from ._common import (
    dump_json,
    file_options,
    open_scores,
    print_table,
)


def read_cost_matrix(path, n_classes):
    cost = pd.read_csv(path, header=None, sep=None, engine="python").to_numpy(dtype=float)
    if cost.shape != (n_classes, n_classes):
        raise ValueError(
            f"--cost-matrix must be {n_classes} x {n_classes} (one row and column "
            f"per class); {path} is {cost.shape[0]} x {cost.shape[1]}."
        )
    return cost


def print_assessment(result):
    src = result.source
    print(
        f"{src['file']}: {src['rows']:,} rows, {src['labeled']:,} labeled, "
        f"{len(src['columns']['classes'])} classes; sha256 {src['sha256'][:16]}..."
    )
    level = result.settings["level"]
    if src["labeled"] == 0:
        print(f"No row is labeled: the posterior is the prior ({result.settings['prior']}).")
    print(f"Posterior means and {level:.0%} credible intervals.\n")
    print_table("Overall", result.overall)
    print_table("Accuracy per predicted class", result.by_class)
    for name, table in result.by_group.items():
        print_table(f"Accuracy per {name}", table)
    rope = result.settings["rope"]
    decide = result.settings.get("decision_probability", 0.95)
    for name, table in result.differences.items():
        if not table.empty:
            cols = [
                "versus",
                "mean",
                "lower",
                "upper",
                "p_greater",
                "p_left",
                "p_rope",
                "p_right",
                "decision",
            ]
            print_table(
                f"Accuracy difference per {name} (group - best; ROPE ±{rope:g}; a decision "
                f"at probability >= {decide:g}, else undecided)",
                table[cols],
            )
    if result.annotators is not None:
        print_table(
            "Annotators (estimated accuracy under the one-coin model of their slips)",
            result.annotators,
        )
        print_table("Agreement on items labeled more than once (kappa)", result.agreement)
    if result.unlabeled is not None:
        u = result.unlabeled
        print_table(
            f"Accuracy of the {int(u['rows'].iloc[0]):,} unlabeled rows predicted "
            f"from {int(u['reference'].iloc[0]):,} labeled rows (skassess.meta)",
            result.unlabeled[["accuracy", "lower", "upper", "level"]],
        )


def partition_paths(pattern):
    """The files of SCORES: the glob's matches, sorted, or the one path; a URL's glob
    (``s3://bucket/scores/*.parquet``) is expanded by its fsspec filesystem."""
    from ..utils._locations import expand_glob

    paths = expand_glob(pattern)
    if not paths:
        raise ValueError(f"SCORES: no file matches {pattern!r}.")
    return paths


@contextlib.contextmanager
def dask_client(workers, scheduler):
    """A distributed.Client on a local cluster of ``workers`` processes or at ``scheduler``."""
    if workers is None and scheduler is None:
        yield None
        return
    if workers is not None and scheduler is not None:
        raise ValueError("--workers starts a local cluster and --scheduler joins one; pass one.")
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be at least 1; got {workers}.")
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            'A Dask cluster (--workers, --scheduler) needs: pip install "skassess[dask]".'
        ) from exc
    if scheduler is not None:
        check_scheduler(scheduler)
        with distributed.Client(scheduler, timeout=SCHEDULER_TIMEOUT) as client:
            yield client
        return
    with local_cluster(workers) as client:
        yield client


#: Seconds to wait for a Dask scheduler's first answer at the address of --scheduler.
SCHEDULER_TIMEOUT = 10.0


def check_scheduler(address):
    """Refuse, in at most ``SCHEDULER_TIMEOUT`` seconds, a TCP address where no Dask
    scheduler answers.

    A Dask scheduler sends its handshake as soon as a connection opens; Dask's
    own client waits for it without a deadline, so a port where something else
    listens (a web server, the scheduler's dashboard) would hang the command.
    Addresses of other protocols (``tls://``, ...) are left to Dask.
    """
    import socket

    protocol, _, location = address.rpartition("://")
    if protocol not in ("", "tcp"):
        return
    host, _, port = location.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--scheduler: {address!r} is not an address like tcp://host:8786.")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), SCHEDULER_TIMEOUT) as conn:
            conn.settimeout(SCHEDULER_TIMEOUT)
            first = conn.recv(512)
    except TimeoutError:
        raise ValueError(
            f"--scheduler: nothing answered at {address} within {SCHEDULER_TIMEOUT:g} s as a "
            "Dask scheduler does; something else listens there (a web server, the "
            "scheduler's dashboard?). Give the scheduler's address, e.g. tcp://host:8786."
        ) from None
    except OSError as exc:
        raise ValueError(f"--scheduler: cannot connect to {address} ({exc}).") from None
    if b"pickle-protocol" not in first:
        raise ValueError(
            f"--scheduler: what answers at {address} is not a Dask scheduler; give the "
            "scheduler's address, e.g. tcp://host:8786."
        )


def settings(args, classes):
    """The assessment's keyword arguments from the command line (``classes``: for the costs)."""
    cost = None if args.cost_matrix is None else read_cost_matrix(args.cost_matrix, len(classes))
    return {
        "prior": args.prior,
        "level": args.level,
        "rope": args.rope,
        "decision_probability": args.decision_probability,
        "n_bins": args.n_bins,
        "cost_matrix": cost,
        "random_state": args.seed,
        "progress": not args.quiet,
    }


def run_partitions(args, paths):
    if args.meta:
        raise ValueError("--meta reads one scores file; it cannot be used with partitions.")
    first = open_scores(paths[0], file_options(args))
    options = {k: v for k, v in file_options(args).items() if v is not None}
    with dask_client(args.workers, args.scheduler) as client:
        return assess_partitions(
            paths, client=client, name=args.scores, **settings(args, first.classes), **options
        )


def run(args):
    started = time.perf_counter()
    paths = partition_paths(args.scores)
    if len(paths) > 1 or args.workers is not None or args.scheduler is not None:
        if args.annotations is not None:
            raise ValueError("--annotations reads one scores file; not with partitions.")
        return report(args, run_partitions(args, paths), started)
    sf = open_scores(args.scores, file_options(args))
    result = assess_file(
        None,
        scores_file=sf,
        meta=args.meta,
        **annotated(args, sf),
        **settings(args, sf.classes),
    )
    return report(args, result, started)


def annotated(args, sf):
    """``annotations`` and ``annotator_prior`` of assess_file from the command line."""
    if args.annotations is None:
        if args.annotator_prior is not None:
            raise ValueError("--annotator-prior needs --annotations.")
        return {}
    if args.meta:
        raise ValueError("--meta cannot be used with --annotations.")
    low, high = args.annotator_prior or (None, None)
    if low is not None and not 0 < low < high < 1:
        raise ValueError(
            f"--annotator-prior must be two accuracies 0 < LOW < HIGH < 1; got {low} {high}."
        )
    from ..session import read_annotations

    return {
        "annotations": read_annotations(args.annotations, sf.classes, sf.id_column),
        "annotator_prior": None if low is None else (low, high),
    }


def report(args, result, started):
    """Print, write the JSON and the report of ``result``; the exit status."""
    if not args.quiet:
        print_assessment(result)
    if args.json:
        dump_json(result.to_dict(), args.json)
    if args.report:
        from ..session import write_report

        write_report(result, args.report, progress=not args.quiet, started=started)
        if not args.quiet:
            print(f"Wrote the report to {args.report}")
    return 0 if np.isfinite(result.overall["mean"]).all() else 1
