"""Parameter validation on every public call that reads the parameters.

scikit-learn's ``_fit_context`` validates ``_parameter_constraints`` in
``fit`` but skips ``partial_fit`` once the estimator is fitted, so a
``set_params`` between two ``partial_fit`` calls would reach the arithmetic
unchecked. :func:`validated` checks them on every call instead (a few tens of
microseconds).
"""

import copy
import functools
import inspect
from numbers import Integral, Real

import numpy as np
from sklearn import get_config

from ._sklearn_compat import (
    Interval,
    InvalidParameterError,
    make_constraint,
    validate_parameter_constraints,
)
from ._sklearn_compat import sklearn_validate_params as _sklearn_validate_params

__all__ = [
    "LEVEL",
    "N_DRAWS",
    "ROPE",
    "atomic",
    "reset_fitted",
    "validate_args",
    "validate_params",
    "validated",
]

#: Constraints shared by the public functions and methods (scikit-learn's
#: ``validate_params`` style): a credible level, a number of Monte Carlo
#: draws, a ROPE half-width.
LEVEL = Interval(Real, 0, 1, closed="neither")
N_DRAWS = Interval(Integral, 1, None, closed="left")
ROPE = Interval(Real, 0, None, closed="left")


def reject_bools(constraints, values, caller):
    """Refuse True/False for a number parameter (scikit-learn's Interval lets them pass).

    ``True`` is an ``int`` to Python, so ``n_draws=True`` would be one draw and
    ``level=True`` a level of 1: nothing is coerced silently, so a bool is
    accepted only where a constraint other than a number range allows it.
    """
    for name, value in values.items():
        if not isinstance(value, bool | np.bool_) or name not in constraints:
            continue
        ranges = [c for c in constraints[name] if isinstance(c, Interval)]
        if not ranges:
            continue
        others = [make_constraint(c) for c in constraints[name] if not isinstance(c, Interval)]
        if any(c.is_satisfied_by(value) for c in others):
            continue
        described = " or ".join(str(c) for c in ranges)
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be {described}, not a bool. "
            f"Got {value!r} instead."
        )


def validated(method):
    """Decorator: validate the estimator's parameters before ``method`` runs.

    The check uses the class's ``_parameter_constraints`` (scikit-learn's
    ``Interval``, ``StrOptions``, ...) and runs on every call, unless
    scikit-learn's ``skip_parameter_validation`` is set.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if not get_config()["skip_parameter_validation"]:
            self._validate_params()
            reject_bools(
                self._parameter_constraints, self.get_params(deep=False), type(self).__name__
            )
        return method(self, *args, **kwargs)

    return wrapper


def validate_args(constraints):
    """Decorator: check a public method's arguments against scikit-learn constraints.

    The method counterpart of scikit-learn's ``validate_params`` (which
    serves the package's functions): the same constraint objects and the same
    ``InvalidParameterError`` (a ``ValueError`` and ``TypeError``), but the
    message names the class the user called, e.g. ``"The 'level' parameter
    of BayesianAccuracy.summary must be ..."``, not the base class that
    defines the method.

    Parameters
    ----------
    constraints : dict
        Argument name to a list of constraints; arguments not listed are not
        checked.
    """

    def decorator(method):
        signature = inspect.signature(method)

        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            if not get_config()["skip_parameter_validation"]:
                bound = signature.bind(self, *args, **kwargs)
                bound.apply_defaults()
                owner = self if isinstance(self, type) else type(self)
                given = {k: v for k, v in bound.arguments.items() if k in constraints}
                caller = f"{owner.__name__}.{method.__name__}"
                validate_parameter_constraints(constraints, given, caller_name=caller)
                reject_bools(constraints, given, caller)
            return method(self, *args, **kwargs)

        return wrapper

    return decorator


def validate_params(constraints, *, prefer_skip_nested_validation):
    """scikit-learn's ``validate_params`` for skassess's functions, refusing bools for numbers.

    The same constraints, messages and ``InvalidParameterError``; in addition
    a bool given for a number range is refused (:func:`reject_bools`).
    """

    def decorator(function):
        checked = _sklearn_validate_params(
            constraints, prefer_skip_nested_validation=prefer_skip_nested_validation
        )(function)
        signature = inspect.signature(function)

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            if not get_config()["skip_parameter_validation"]:
                try:
                    bound = signature.bind(*args, **kwargs)
                except TypeError:
                    return checked(*args, **kwargs)  # scikit-learn's message
                bound.apply_defaults()
                reject_bools(
                    constraints,
                    {k: v for k, v in bound.arguments.items() if k in constraints},
                    function.__qualname__,
                )
            return checked(*args, **kwargs)

        return wrapper

    return decorator


def reset_fitted(estimator):
    """Delete every learned attribute (``name_``), leaving the estimator unfitted.

    ``fit`` calls it first, inside :func:`atomic`, so a ``fit`` that fails puts
    the previous fit back whole (an unfitted estimator stays unfitted) and never
    exposes a half-built state.
    """
    for attr in [a for a in vars(estimator) if a.endswith("_") and not a.startswith("__")]:
        delattr(estimator, attr)


def atomic(method=None, *, deep=True):
    """Decorator: a method that raises leaves the object exactly as it was.

    The object's attributes are saved before the call and put back if it
    raises, whatever the error (a bad input found late, a numerical failure,
    KeyboardInterrupt). Parameters (``get_params``) are never changed by a
    method, so they are kept by reference.

    Parameters
    ----------
    deep : bool, default=True
        Deep-copy the learned state before the call: for methods that update
        it in place (``partial_fit``, ``add_labels``); the copy is O(groups),
        the size of the posterior. ``deep=False`` keeps references only: for
        ``fit``, which builds every learned attribute anew.
    """
    if method is None:
        return functools.partial(atomic, deep=deep)

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        params = set(self.get_params(deep=False)) if hasattr(self, "get_params") else set()
        saved = {
            k: v if (not deep or k in params) else copy.deepcopy(v) for k, v in vars(self).items()
        }
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            vars(self).clear()
            vars(self).update(saved)
            raise

    return wrapper
