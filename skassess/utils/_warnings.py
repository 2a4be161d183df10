"""Warnings that point at the user's line, however deep inside skassess they start."""

import inspect
import os
import warnings

import sklearn

from ..exceptions import SkassessWarning

__all__ = ["warn"]

#: Frames in these directories are skipped: skassess's own, and scikit-learn's
#: parameter-validation wrapper around the public functions.
_INTERNAL = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
    os.path.join(os.path.dirname(sklearn.__file__), "utils", "_param_validation.py"),
)


def warn(message, category=SkassessWarning):
    """``warnings.warn`` with the stack level of the first frame outside skassess.

    A fixed ``stacklevel`` breaks whenever a decorator or a helper adds a
    frame; this walks the stack instead, as pandas does for its warnings.
    """
    frame = inspect.currentframe()
    level = 0
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
        level += 1
    del frame
    warnings.warn(message, category, stacklevel=level + 1)
