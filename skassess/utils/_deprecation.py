"""Deprecation warnings: a renamed or replaced name keeps working for one release."""

import inspect
import os
import warnings
from pathlib import Path

import sklearn

__all__ = ["REMOVED_IN", "private_names", "warn_deprecated"]

#: The release that removes what 0.1 deprecates.
REMOVED_IN = "0.2"


_PACKAGE = str(Path(__file__).resolve().parents[1]) + os.sep
# scikit-learn wraps some methods (fit_transform, transform: set_output): a call
# through it is the user's line, not the wrapper's
_SKLEARN = str(Path(sklearn.__file__).resolve().parent) + os.sep


def _user_stacklevel():
    """The stack level of the first frame outside skassess and scikit-learn: the user's call."""
    frame, level = inspect.currentframe().f_back.f_back, 2
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(
        (_PACKAGE, _SKLEARN)
    ):
        frame, level = frame.f_back, level + 1
    return level


def warn_deprecated(what, instead, *, since="0.1", removed_in=REMOVED_IN, stacklevel=None):
    """Warn (``FutureWarning``, shown to users by default) that ``what`` is deprecated.

    Parameters
    ----------
    what : str
        The deprecated name as the user wrote it, e.g.
        ``"ActiveAssessor(stop_confidence=...)"``.
    instead : str
        What to write instead.
    since, removed_in : str
        The release that deprecated it and the one that removes it.
    stacklevel : int, default=None
        Frames up to the user's call; None: the first frame outside skassess.

    Examples
    --------
    >>> import warnings
    >>> from skassess.utils._deprecation import warn_deprecated
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_deprecated("f(old=...)", "f(new=...)")
    >>> print(caught[0].message)
    f(old=...) is deprecated since 0.1 and will be removed in 0.2; use f(new=...) instead.
    """
    warnings.warn(
        f"{what} is deprecated since {since} and will be removed in {removed_in}; use "
        f"{instead} instead.",
        FutureWarning,
        stacklevel=_user_stacklevel() if stacklevel is None else stacklevel,
    )


def private_names(package, names, instead):
    """A module ``__getattr__`` for names a package no longer exports.

    ``names`` maps each name to the private module (under ``package``) that
    defines it; reading ``package.NAME`` warns (deprecated since 0.2, removed
    in 0.3) and returns it. The package's own modules import these names from
    their private modules, so only a user's read warns.
    """
    import importlib

    def __getattr__(name):
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warn_deprecated(f"{package}.{name}", instead, since="0.2", removed_in="0.3")
        return getattr(importlib.import_module(f"{package}.{names[name]}"), name)

    __getattr__.private = frozenset(names)
    return __getattr__
