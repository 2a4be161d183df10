"""Parameter validation on every public call that reads the parameters.

scikit-learn's ``_fit_context`` validates ``_parameter_constraints`` in
``fit`` but skips ``partial_fit`` once the estimator is fitted, so a
``set_params`` between two ``partial_fit`` calls would reach the arithmetic
unchecked. :func:`validated` checks them on every call instead (a few tens of
microseconds).
"""

import functools

from sklearn import get_config

__all__ = ["reset_fitted", "validated"]


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
        return method(self, *args, **kwargs)

    return wrapper


def reset_fitted(estimator):
    """Delete every learned attribute (``name_``), leaving the estimator unfitted.

    ``fit`` calls it first, and again when fitting fails, so a failed ``fit``
    raises ``NotFittedError`` afterwards instead of exposing a half-built state.
    """
    for attr in [a for a in vars(estimator) if a.endswith("_") and not a.startswith("__")]:
        delattr(estimator, attr)
