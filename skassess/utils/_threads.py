"""Native thread pools kept at one thread, so that fits never oversubscribe the cores.

scikit-learn's HistGradientBoosting and xgboost use OpenMP, numpy uses a BLAS
thread pool: each starts one thread per core. Inside skassess's fits, which
train many small models (drift scenarios, ensembles), those threads mostly
wait on each other, and on a machine whose cores are busy they slow a fit
down many times over. skassess parallelizes with processes instead
(``n_jobs``, joblib), each with one native thread, so the total never exceeds
the cores asked for.
"""

import functools

from threadpoolctl import threadpool_limits  # installed with scikit-learn

__all__ = ["one_native_thread", "single_threaded"]


def one_native_thread():
    """A context in which OpenMP and BLAS pools use one thread each."""
    return threadpool_limits(limits=1)


def single_threaded(function):
    """Run ``function`` (a fit) with one native thread per pool."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with one_native_thread():
            return function(*args, **kwargs)

    return wrapper
