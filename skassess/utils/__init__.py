"""Input checks shared by every skassess estimator, and the parameter-validation decorator.

These are the only functions that check scores, labels, predictions, groups
and weights; estimators and the command call them so that every bad input
gets the same message.
"""

# The package's modules import their internal helpers from here too; only the
# names in __all__ are public.
# ruff: noqa: F401

from ._confseq import HypergeometricSequence
from ._groups import GroupEncoder, check_group_by
from ._memory import available_memory, check_draw_memory
from ._params import (
    LEVEL,
    N_DRAWS,
    ROPE,
    atomic,
    reset_fitted,
    validate_args,
    validate_params,
    validated,
)
from ._text import plot_text, terminal_text
from ._threads import one_native_thread, single_threaded
from ._validation import (
    BLOCK,
    EPS,
    ROW_SUM_TOL,
    as_scalar,
    check_classes,
    check_design_weight,
    check_generator,
    check_labels,
    check_predictions,
    check_sample_weight,
    check_scores,
    checked_codes,
    naming,
    top1,
    validate_scores,
)
from ._warnings import warn

# What users and estimator authors call (the API reference's *Input checks*).
# The other names imported above are the package's internals, imported by its
# modules from here; they are not part of the public API.
__all__ = [
    "GroupEncoder",
    "atomic",
    "check_draw_memory",
    "check_group_by",
    "check_labels",
    "check_predictions",
    "check_design_weight",
    "check_sample_weight",
    "check_scores",
    "naming",
    "plot_text",
    "terminal_text",
    "validate_args",
    "validate_params",
    "validated",
]
