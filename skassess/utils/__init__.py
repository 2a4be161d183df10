"""Input checks shared by every skassess estimator.

:func:`check_scores` and :func:`check_labels` are the functions that check a
black box's scores and the labels given for them; every estimator and the
command call them, so that a bad input gets the same message everywhere. The
package's other helpers live in this package's private modules.
"""

from ._deprecation import private_names
from ._validation import check_labels, check_scores

__all__ = ["check_labels", "check_scores"]


__getattr__ = private_names(
    __name__,
    {
        "BLOCK": "_validation",
        "EPS": "_validation",
        "GroupEncoder": "_groups",
        "HypergeometricSequence": "_confseq",
        "LEVEL": "_params",
        "N_DRAWS": "_params",
        "ROPE": "_params",
        "ROW_SUM_TOL": "_validation",
        "as_scalar": "_validation",
        "atomic": "_params",
        "available_memory": "_memory",
        "check_classes": "_validation",
        "check_design_weight": "_validation",
        "check_draw_memory": "_memory",
        "check_generator": "_random",
        "check_group_by": "_groups",
        "check_predictions": "_validation",
        "check_sample_weight": "_validation",
        "checked_codes": "_validation",
        "naming": "_validation",
        "one_native_thread": "_threads",
        "plot_text": "_text",
        "reset_fitted": "_params",
        "single_threaded": "_threads",
        "terminal_text": "_text",
        "top1": "_validation",
        "validate_args": "_params",
        "validate_params": "_params",
        "validate_scores": "_validation",
        "validated": "_params",
        "warn": "_warnings",
    },
    "skassess.utils.check_scores and check_labels (the other helpers are private)",
)
