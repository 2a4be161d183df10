"""What the estimators with ``label_noise`` share: its parameters, when it applies, and
the report on the annotators of a fit that keeps its noise model as ``annotators_``."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ._dask import is_dask_collection
from ._params import LEVEL, validate_args
from ._sklearn_compat import Interval, StrOptions

__all__ = [
    "NOISE_CONSTRAINTS",
    "AnnotatorsOfNoiseModel",
    "MixtureOfFits",
    "noise_model",
    "uses_label_noise",
]

#: The parameters of the noise model, as every estimator with ``label_noise`` has them.
NOISE_CONSTRAINTS = {
    "label_noise": [StrOptions({"auto", "none", "one_coin"})],
    "annotator_prior": ["array-like", Interval(Real, 0, 1, closed="right"), dict],
    "slip_evidence": [StrOptions({"repeats", "bounds", "all"})],
    "n_imputations": [Interval(Integral, 1, None, closed="left")],
}


def uses_label_noise(label_noise, X, y, annotator):
    """Whether a fit models the annotators' slips (refusing what cannot be).

    ``"auto"``: when ``y`` has a column per annotator (a DataFrame, or an
    array of two columns or more: a one-column array is the column vector
    scikit-learn refuses) or ``annotator`` is given.

    Raises
    ------
    ValueError
        With ``label_noise="none"`` and annotators; on Dask collections.
    """
    several = (
        y is not None and np.ndim(y) == 2 and (isinstance(y, pd.DataFrame) or np.shape(y)[1] > 1)
    )
    if label_noise == "none":
        if several or annotator is not None:
            raise ValueError(
                "label_noise='none' treats every label as the truth, so it takes one label "
                "per row and no annotator; set label_noise='one_coin' (or 'auto') to fit "
                "labels from several annotators."
            )
        return False
    noisy = label_noise == "one_coin" or several or annotator is not None
    if noisy and (is_dask_collection(X) or is_dask_collection(y)):
        raise ValueError(
            "label_noise draws the true labels of the labeled rows, in memory: fit it on "
            "arrays or DataFrames, not on Dask collections."
        )
    return noisy and y is not None


def noise_model(estimator, random_state):
    """The unfitted noise model of an estimator that draws its true labels from one.

    A :class:`~skassess.BayesianAccuracy` with ``label_noise="one_coin"`` and
    the estimator's ``classes``, ``missing_label``, ``annotator_prior``,
    ``slip_evidence`` and ``n_imputations``, its groups given at ``fit`` (``grouping="external"``;
    its uniform prior is its own, not the draws'); its ``imputed_labels_``
    are the draws.
    """
    from ..metrics import BayesianAccuracy  # the metrics import these internals

    return BayesianAccuracy(
        grouping="external",
        prior="uniform",
        classes=None if estimator.classes is None else list(estimator.classes),
        missing_label=estimator.missing_label,
        label_noise="one_coin",
        annotator_prior=estimator.annotator_prior,
        slip_evidence=estimator.slip_evidence,
        n_imputations=estimator.n_imputations,
        random_state=random_state,
    )


class MixtureOfFits:
    """Mixin: an estimator whose own state is its first fit to a draw of the true labels,
    the fits to the other draws in ``imputations_``; its outputs mix them all."""

    def _mixed(self):
        return bool(getattr(self, "imputations_", None)) and not self.__dict__.get("_unmixed")

    def _each_fit(self, name, *args, **kwargs):
        """``name(*args, **kwargs)`` of every fit: the estimator's own first, unmixed."""
        self.__dict__["_unmixed"] = True
        try:
            first = getattr(self, name)(*args, **kwargs)
        finally:
            del self.__dict__["_unmixed"]
        return [first] + [getattr(f, name)(*args, **kwargs) for f in self.imputations_]


class AnnotatorsOfNoiseModel:
    """Mixin: the annotators' report of a fit whose noise model is ``annotators_`` (a
    :class:`~skassess.BayesianAccuracy` fitted with ``label_noise``)."""

    def _fitted_annotators(self):
        check_is_fitted(self)
        noise = getattr(self, "annotators_", None)
        if noise is None:
            raise ValueError(
                "No annotator was named: fit with annotator= or a column of labels per "
                "annotator (label_noise) to have their report."
            )
        return noise

    @validate_args({"level": [LEVEL]})
    def annotator_summary(self, level=0.95):
        """Each annotator's labels, repeats, agreement and estimated accuracy.

        As :meth:`BayesianAccuracy.annotator_summary
        <skassess.BayesianAccuracy.annotator_summary>`, from the noise model
        (:attr:`annotators_`).

        Raises
        ------
        ValueError
            If the fit named no annotator.
        """
        return self._fitted_annotators().annotator_summary(level)

    def annotator_agreement(self):
        """Agreement on the rows labeled more than once (Cohen's and Fleiss' kappa).

        As :meth:`BayesianAccuracy.annotator_agreement
        <skassess.BayesianAccuracy.annotator_agreement>`.

        Raises
        ------
        ValueError
            If the fit named no annotator.
        """
        return self._fitted_annotators().annotator_agreement()
