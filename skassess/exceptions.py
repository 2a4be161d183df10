"""Warnings and errors raised by skassess."""

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning

__all__ = [
    "ConvergenceWarning",
    "LabelError",
    "DrawMemoryError",
    "ScoresFileError",
    "SessionError",
    "SessionLockedError",
    "SkassessWarning",
]


class SkassessWarning(UserWarning):
    """Base class of every warning skassess raises.

    Raised, for example, when equal-mass binning meets tied confidences and
    makes fewer bins than asked for.
    """


class ConvergenceWarning(SkassessWarning, _SklearnConvergenceWarning):
    """The MCMC sampler may not have converged (R-hat > 1.01 or ESS < 100).

    Also a :class:`sklearn.exceptions.ConvergenceWarning`, so filters written
    for scikit-learn's warning catch it.
    """


class ScoresFileError(ValueError):
    """A scores file cannot be used as it is; the message names the row and column."""


class LabelError(ValueError):
    """A label's text names no class, or several; the message names where it was given."""


class SessionError(ValueError):
    """A labeling session file does not match what it is opened with.

    For example, the scores it was started on changed, or a setting given on
    resuming differs from the stored one.
    """


class SessionLockedError(SessionError):
    """Another process has the labeling session open."""


class DrawMemoryError(ValueError, MemoryError):
    """Posterior draws would not fit in memory; raised before any is made.

    The message gives the size the draws need and the memory available, and
    how to ask for fewer (``n_draws``). Also a ``MemoryError``.
    """
