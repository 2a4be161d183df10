"""Input checks shared by every skassess estimator.

:func:`check_scores` and :func:`check_labels` are the functions that check a
black box's scores and the labels given for them; every estimator and the
command call them, so that a bad input gets the same message everywhere. The
package's other helpers live in this package's private modules.
"""

import importlib

from ._deprecation import private_names
from ._validation import check_labels, check_scores

__all__ = ["check_labels", "check_scores"]


def _private(module, name):
    return lambda: getattr(importlib.import_module(f"{__name__}.{module}"), name)


__getattr__ = private_names(
    __name__,
    {
        "BLOCK": _private("_validation", "BLOCK"),
        "EPS": _private("_validation", "EPS"),
        "GroupEncoder": _private("_groups", "GroupEncoder"),
        "HypergeometricSequence": _private("_confseq", "HypergeometricSequence"),
        "LEVEL": _private("_params", "LEVEL"),
        "N_DRAWS": _private("_params", "N_DRAWS"),
        "ROPE": _private("_params", "ROPE"),
        "ROW_SUM_TOL": _private("_validation", "ROW_SUM_TOL"),
        "as_scalar": _private("_validation", "as_scalar"),
        "atomic": _private("_params", "atomic"),
        "available_memory": _private("_memory", "available_memory"),
        "check_classes": _private("_validation", "check_classes"),
        "check_design_weight": _private("_validation", "check_design_weight"),
        "check_draw_memory": _private("_memory", "check_draw_memory"),
        "check_generator": _private("_validation", "check_generator"),
        "check_group_by": _private("_groups", "check_group_by"),
        "check_predictions": _private("_validation", "check_predictions"),
        "check_sample_weight": _private("_validation", "check_sample_weight"),
        "checked_codes": _private("_validation", "checked_codes"),
        "naming": _private("_validation", "naming"),
        "one_native_thread": _private("_threads", "one_native_thread"),
        "plot_text": _private("_text", "plot_text"),
        "reset_fitted": _private("_params", "reset_fitted"),
        "single_threaded": _private("_threads", "single_threaded"),
        "terminal_text": _private("_text", "terminal_text"),
        "top1": _private("_validation", "top1"),
        "validate_args": _private("_params", "validate_args"),
        "validate_params": _private("_params", "validate_params"),
        "validate_scores": _private("_validation", "validate_scores"),
        "validated": _private("_params", "validated"),
        "warn": _private("_warnings", "warn"),
    },
    "skassess.utils.check_scores and check_labels (the other helpers are private)",
)
