"""Parameter descriptions shared by several docstrings, written once.

A docstring line that holds only ``{{name}}`` (indented as a parameter entry)
is replaced by the entry ``name`` of :data:`PARAMETERS`, indented the same
way, when the class or function is decorated with :func:`fill_doc`. A change
of wording is then made here, for every class at once. (numpydoc and
scikit-learn have no such helper; MNE-Python's ``fill_doc`` is the model.)
"""

import re

__all__ = ["PARAMETERS", "fill_doc"]

#: The shared entries, numpydoc-formatted, without indentation.
PARAMETERS = {
    "classes": """\
classes : array-like of shape (n_classes,), default=None
    Label of each score column, when ``y`` holds labels rather than
    column indices.""",
    "missing_label": """\
missing_label : int, float, str or None, default=-1
    The value of ``y`` that marks an unlabeled row, besides NaN, None and
    ``pd.NA``, which always mark one; None when every row is labeled.""",
    "random_state": """\
random_state : int, RandomState instance or None, default=None
    Seed of the Monte Carlo draws.""",
    "fitted_rows": """\
classes_ : ndarray of shape (n_classes,)
    Label of each score column.
n_classes_ : int
    Number of classes.
n_samples_seen_ : int
    Rows seen by :meth:`fit` and :meth:`partial_fit`.
n_features_in_ : int
    Number of score columns seen in :meth:`fit`.""",
    "binning": """\
binning : {"uniform", "quantile"}, default="uniform"
    Bins of equal width on [0, 1], or with equal numbers of rows (edges
    from the first batch seen), as ``strategy`` in
    :func:`sklearn.calibration.calibration_curve`. A fit on Dask collections
    refuses ``"quantile"`` (its edges would come from one partition).
strategy : {"uniform", "quantile"}
    Deprecated alias of ``binning``.

    .. deprecated:: 0.1
       ``strategy`` will be removed in 0.2; use ``binning`` (``strategy``
       is the query strategy of the samplers).""",
    "predicted_class_groups": """\
n_rows_ : ndarray of shape (n_classes,)
    All rows per predicted class.
groups_ : pandas.Index
    The predicted classes.
group_weights_ : ndarray of shape (n_classes,)
    Share ``p_k`` of rows predicted ``k``.""",
}

_PLACEHOLDER = re.compile(r"^([ \t]*)\{\{(\w+)\}\}[ \t]*$", re.M)


def fill_doc(obj):
    """Replace each ``{{name}}`` line of ``obj.__doc__`` by the shared entry ``name``.

    Raises
    ------
    KeyError
        For a placeholder with no entry in :data:`PARAMETERS` (at import time).

    Examples
    --------
    >>> from skassess.utils._docstrings import fill_doc
    >>> @fill_doc
    ... def f(random_state=None):
    ...     '''Do it.
    ...
    ...     Parameters
    ...     ----------
    ...     {{random_state}}
    ...     '''
    >>> print(f.__doc__.splitlines()[5])
        Seed of the Monte Carlo draws.
    """

    def entry(match):
        indent, name = match.groups()
        return "\n".join(indent + line if line else line for line in PARAMETERS[name].split("\n"))

    if obj.__doc__:
        obj.__doc__ = _PLACEHOLDER.sub(entry, obj.__doc__)
    return obj
