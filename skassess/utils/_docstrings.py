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
    "label_noise": """\
label_noise : {"auto", "none", "one_coin"}, default="auto"
    How far a label is the truth. ``"none"``: every label is. ``"one_coin"``:
    each annotator gives the true class with its own probability (its
    accuracy) and otherwise any other class alike; the true classes of the
    labeled rows are drawn from their posterior (given every label, the
    black box's predictions and the annotators' priors) and the estimator is
    fitted once per draw, its posterior the mixture of the fits (user guide,
    *When labels are noisy*). ``"auto"``: ``"one_coin"`` when :meth:`fit` is
    told who labeled (``annotator``, or ``y`` with a column per annotator),
    ``"none"`` otherwise.
annotator_prior : (float, float), float or dict, default=(0.85, 0.999)
    What is known of an annotator's accuracy before the labels: a pair is the
    central 95 % interval of a Beta prior; a float is the accuracy, known
    (1.0: a gold standard, whose labels are the truth). A dict gives one of
    these per annotator name (the others take the default). Repeated labels
    and a gold standard narrow it; with one annotator and no repeats, the
    labels cannot tell its slips from the black box's errors, and the
    interval of the metric spans this prior's range, cut from above by
    what the labels rule out (``slip_evidence``).
slip_evidence : {"bounds", "repeats", "all"}, default="bounds"
    Which labels tell the annotators' accuracy. ``"bounds"``: the labels
    beyond each row's first (the first in the order of the annotators),
    given the first labels: the rows labeled more than once, a gold
    standard's among them; a row's single label says nothing of it, and
    choosing the rows to label again by their first label (as
    ``repeat_utilities`` does) leaves it valid. Each row's true class is
    then drawn from every label. Where no row is labeled more than once,
    the single labels cap each annotator's slip rate (a group whose labels
    agree with the black box 90 % of the time cannot have a slip rate much
    above 10 %) and do not bound it from below: the interval spans every
    slip rate from the prior's low end (its central 95 %) to the largest
    the labels do not reject (likelihood ratio at 5 %), each annotator's
    slip rate drawn at either end, half the time each. ``"repeats"``: the
    same, except that with no row labeled more than once the slip rates
    keep their prior. ``"all"``: every label, in one joint
    posterior with the black box's accuracy per group, which also reads the
    annotators' accuracy from how often a single label agrees with the
    black box in each group; it is narrower, and holds only if annotators
    slip as often on hard rows as on easy ones.
n_imputations : int, default=20
    Draws of the true labels, each a fit of the estimator, under
    ``label_noise``.""",
    "label_noise_fitted": """\
imputations_ : list of estimators
    Under ``label_noise``: the fits to the draws of the true labels after
    the first (the estimator's own state is the first's); the summaries,
    draws and predictions mix all of them. The other attributes are the
    first fit's.
annotator_names_ : ndarray of object
    Under ``label_noise``: the annotators, in the order of
    ``annotator_summary``.
label_rows_ : ndarray of shape (n_label_rows,)
    Under ``label_noise``: the labeled rows' positions in the pool.
imputed_labels_ : ndarray of shape (n_imputations, n_label_rows)
    Under ``label_noise``: each draw of the labeled rows' true classes, as
    class indices (an estimator that takes labels as the truth, fitted on
    each draw, makes the same mixture).""",
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
