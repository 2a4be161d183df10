"""Deprecation warnings: a renamed or replaced name keeps working for one release."""

import warnings

__all__ = ["REMOVED_IN", "warn_deprecated"]

#: The release that removes what 0.1 deprecates.
REMOVED_IN = "0.2"


def warn_deprecated(what, instead, *, stacklevel=3):
    """Warn (``FutureWarning``, shown to users by default) that ``what`` is deprecated.

    Parameters
    ----------
    what : str
        The deprecated name as the user wrote it, e.g.
        ``"ActiveAssessor(stop_confidence=...)"``.
    instead : str
        What to write instead.
    stacklevel : int, default=3
        Frames up to the user's call (3: the caller of the function that warns).

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
        f"{what} is deprecated since 0.1 and will be removed in {REMOVED_IN}; use "
        f"{instead} instead.",
        FutureWarning,
        stacklevel=stacklevel,
    )
