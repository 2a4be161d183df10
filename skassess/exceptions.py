"""Warnings raised by skassess."""

__all__ = ["SkassessWarning", "PriorWarning"]


class SkassessWarning(UserWarning):
    """Base class of every warning skassess raises."""


class PriorWarning(SkassessWarning):
    """A posterior rests on its prior alone where the user may expect data.

    Raised, for example, when a comparison involves a group without any
    labeled row.
    """
