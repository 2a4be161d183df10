"""Per-row group labels (``group_by``, ``sensitive_features``): the one group encoder.

Groups are any hashable values, one per row. :class:`GroupEncoder` keeps them
as a sorted :class:`pandas.Index` (first-seen order when the labels cannot be
sorted) and maps rows to positions in it; unseen labels are rejected, or
added with :meth:`GroupEncoder.extend` (``partial_fit``).
"""

import numpy as np
import pandas as pd

from ._validation import as_scalar

__all__ = ["GroupEncoder", "check_group_by"]


def check_group_by(values, n_samples, *, name="group_by"):
    """Validate per-row group labels: 1-D, one per row, no missing value.

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        Any hashable labels (strings, integers, ...).
    n_samples : int
        Number of rows.
    name : str, default="group_by"
        Name of the argument, used in error messages.

    Returns
    -------
    values : ndarray of shape (n_samples,)
    """
    if values is None:
        raise ValueError(f"{name} is required; pass one group label per row.")
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise ValueError(
                f"{name} must be 1-D; got a DataFrame with {values.shape[1]} columns. "
                "Combine the columns into one label per row first."
            )
        values = values.iloc[:, 0]
    if isinstance(values, pd.Series | pd.Index | pd.Categorical):
        missing = np.asarray(pd.isna(values))
        values = np.asarray(values, dtype=object)
    else:
        values = np.asarray(values)
        if values.ndim == 1 and values.dtype.kind == "O":
            missing = np.asarray(pd.isna(values))
        elif values.ndim == 1 and values.dtype.kind == "f":
            missing = np.isnan(values)
        else:
            missing = np.zeros(values.shape[:1], dtype=bool)
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got an array of shape {values.shape}.")
    if values.shape[0] != n_samples:
        raise ValueError(f"{name} has {values.shape[0]} entries, but X has {n_samples} rows.")
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} has a missing value at row {row}.")
    if values.dtype.kind == "O":
        for i, v in enumerate(values[: min(len(values), 1 << 16)].tolist()):
            try:
                hash(v)
            except TypeError:
                raise ValueError(f"{name} must hold hashable labels; row {i} is {v!r}.") from None
    return values


def _sorted_labels(labels):
    try:
        return sorted(labels)
    except TypeError:  # mixed types: keep the order of first appearance
        return list(labels)


class GroupEncoder:
    """Group labels of a fitted estimator and the mapping of rows to them.

    Parameters
    ----------
    name : str, default="group"
        Name of the resulting :class:`pandas.Index`.

    Attributes
    ----------
    categories_ : pandas.Index
        The known groups, sorted when they can be.

    Examples
    --------
    >>> from skassess.utils._groups import GroupEncoder
    >>> enc = GroupEncoder().fit(["b", "a", "b"])
    >>> list(enc.categories_), enc.transform(["a", "b"]).tolist()
    (['a', 'b'], [0, 1])
    """

    def __init__(self, name="group"):
        self.name = name

    def fit(self, values):
        """Learn the groups present in ``values`` (checked by :func:`check_group_by`)."""
        uniques = pd.unique(pd.Series(values, dtype=object)).tolist()
        self.categories_ = pd.Index(_sorted_labels(uniques), name=self.name, dtype=object)
        return self

    def fit_transform(self, values):
        """Learn the groups and return the position of each row's group."""
        return self.fit(values).transform(values)

    def extend(self, values):
        """Add unseen groups; return the new position of each old group."""
        old = self.categories_.tolist()
        known = set(old)
        added = [g for g in pd.unique(pd.Series(values, dtype=object)).tolist() if g not in known]
        merged = _sorted_labels(old + added)
        self.categories_ = pd.Index(merged, name=self.name, dtype=object)
        return self.categories_.get_indexer(pd.Index(old, dtype=object)).astype(np.intp)

    def transform(self, values, *, name="group_by"):
        """Position of each row's group; a group not seen in fit raises a ValueError."""
        codes = self.categories_.get_indexer(pd.Index(values, dtype=object))
        if (codes < 0).any():
            row = int(np.flatnonzero(codes < 0)[0])
            raise ValueError(
                f"{name} holds {as_scalar(values[row])!r} at row {row}, a group not seen in "
                f"fit; known groups: {self.categories_.tolist()!r}."
            )
        return codes.astype(np.intp)

    @property
    def n_groups(self):
        """Number of known groups."""
        return len(self.categories_)
