"""The one place skassess imports scikit-learn's private names.

scikit-learn keeps its parameter-constraint objects (``Interval``,
``StrOptions``, ...) and ``_check_sample_weight`` in private modules; they
are what its own estimators and every scikit-learn-contrib project use to
declare ``_parameter_constraints``, and no public equivalent exists (nor
for ``_safe_indexing``, rows of an array, a list or a DataFrame alike). They are
imported here only, so that a change of their location in a future
scikit-learn release is fixed in this file. The supported versions are the
package's (``scikit-learn>=1.6``); ``tests/utils/test_sklearn_compat.py``
checks that every name resolves.
"""

from sklearn.utils import _safe_indexing as safe_indexing
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    MissingValues,
    StrOptions,
    make_constraint,
    validate_parameter_constraints,
)
from sklearn.utils._param_validation import validate_params as sklearn_validate_params
from sklearn.utils.validation import _check_sample_weight as check_sample_weight


def validate_estimator_params(estimator):
    """Check a parameter object's parameters against its ``_parameter_constraints``.

    What ``BaseEstimator._validate_params`` does when ``fit`` starts, for an
    object a class receives as a parameter (a query strategy, a prior update)
    and uses without fitting it.
    """
    validate_parameter_constraints(
        estimator._parameter_constraints,
        estimator.get_params(deep=False),
        caller_name=type(estimator).__name__,
    )


__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "MissingValues",
    "StrOptions",
    "check_sample_weight",
    "make_constraint",
    "safe_indexing",
    "sklearn_validate_params",
    "validate_estimator_params",
    "validate_parameter_constraints",
]
