"""Warnings raised by skassess."""

__all__ = ["SkassessWarning"]


class SkassessWarning(UserWarning):
    """Base class of every warning skassess raises.

    Raised, for example, when equal-mass binning meets tied confidences and
    makes fewer bins than asked for.
    """
