"""The benchmarks' ``--n-jobs``, ``--backend`` and ``--scheduler`` options.

Every benchmark that runs many repetitions sends them through joblib, so any
joblib backend spreads them out: ``--backend dask`` runs them on a Dask
cluster (``--scheduler ADDRESS``, or a local cluster of ``--n-jobs`` worker
processes), with the same results as one process (each repetition has its own
seed).
"""

import atexit
import contextlib

import joblib

BACKENDS = ("loky", "multiprocessing", "threading", "dask")


def add_parallel_arguments(parser, *, n_jobs=2, backend="loky"):
    """Add ``--n-jobs``, ``--backend`` and ``--scheduler`` to ``parser``."""
    parser.add_argument("--n-jobs", type=int, default=n_jobs, help="parallel workers")
    parser.add_argument(
        "--backend", choices=BACKENDS, default=backend, help=f"joblib backend (default {backend})"
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --backend dask: a running Dask scheduler (default: a local cluster of "
        "--n-jobs worker processes)",
    )


def use_parallel_backend(args):
    """Make ``args.backend`` joblib's backend for the rest of the run.

    For ``dask``, connects to ``args.scheduler`` or starts a local cluster,
    closed when the process ends.
    """
    stack = contextlib.ExitStack()
    atexit.register(stack.close)
    if args.backend == "dask":
        if args.scheduler:
            import distributed

            stack.enter_context(distributed.Client(args.scheduler))
        else:
            from skassess.utils._dask import local_cluster

            stack.enter_context(local_cluster(args.n_jobs))
    elif args.scheduler:
        raise SystemExit("--scheduler needs --backend dask.")
    stack.enter_context(joblib.parallel_config(backend=args.backend))
    return stack
