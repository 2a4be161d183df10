"""Find the public estimators, samplers and strategies, as scikit-learn's `all_estimators`."""

import importlib
import inspect
import pkgutil

from sklearn.base import BaseEstimator

__all__ = ["all_estimators"]

#: The kinds ``all_estimators(type_filter=...)`` knows.
TYPES = ("estimator", "sampler", "strategy", "predictor")


def _kind(cls):
    from ..meta import PerformanceIntervalRegressor, PerformancePredictor
    from ..samplers import ActiveSampler, QueryStrategy

    if issubclass(cls, ActiveSampler):
        return "sampler"
    if issubclass(cls, QueryStrategy):
        return "strategy"
    if issubclass(cls, PerformancePredictor | PerformanceIntervalRegressor):
        return "predictor"
    return "estimator"


def _bases():
    from ..samplers import ActiveSampler, GroupStrategy, QueryStrategy

    return {ActiveSampler, GroupStrategy, QueryStrategy}


def all_estimators(type_filter=None):
    """Every public class of skassess that is a scikit-learn estimator, by name.

    The public modules (no part of the name starting with ``_``) are walked
    and the classes their ``__all__`` names are kept when they derive from
    :class:`sklearn.base.BaseEstimator`; the base classes meant to be
    subclassed (``ActiveSampler``, ``QueryStrategy``, ``GroupStrategy``) are
    left out.

    Parameters
    ----------
    type_filter : {"estimator", "sampler", "strategy", "predictor"} or list of them, \
            default=None
        Keep only these kinds: ``"estimator"`` the posteriors and
        calibrators (``fit`` on scores and labels), ``"sampler"`` the
        ask/tell samplers, ``"strategy"`` the query strategies,
        ``"predictor"`` the label-free performance predictors of
        :mod:`skassess.meta`. None: every kind.

    Returns
    -------
    estimators : list of (str, type)
        Sorted by name; each class once.

    Examples
    --------
    >>> from skassess.utils.discovery import all_estimators
    >>> [name for name, _ in all_estimators("sampler")]
    ['ActiveAssessor', 'ActiveModelSelector', 'ActiveMonitor', 'ActiveTester']
    """
    import skassess

    if type_filter is not None:
        kinds = [type_filter] if isinstance(type_filter, str) else list(type_filter)
        unknown = [k for k in kinds if k not in TYPES]
        if unknown:
            raise ValueError(f"type_filter must be None or among {TYPES}; got {type_filter!r}.")
    found = {}
    modules = ["skassess"] + [m.name for m in pkgutil.walk_packages(skassess.__path__, "skassess.")]
    for name in modules:
        if any(part.startswith("_") for part in name.split(".")[1:]):
            continue
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr, None)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found[obj.__name__] = obj
    bases = _bases()
    out = sorted((n, c) for n, c in found.items() if c not in bases)
    if type_filter is not None:
        out = [(n, c) for n, c in out if _kind(c) in kinds]
    return out
