"""Warnings raised by skassess."""

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning

__all__ = ["ConvergenceWarning", "SkassessWarning"]


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
