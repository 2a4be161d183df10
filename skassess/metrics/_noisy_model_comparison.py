"""The comparison of models from labels whose annotators may slip.

The true classes of the labeled items are drawn under the one-coin model of
the annotators, each item's true class one of the classes its models predict
(its slots, :mod:`._slot_annotators`) or another, in the shares of its
agreement pattern, as the comparison's own model has them. The noise model
is a :class:`BayesianAccuracy` with ``label_noise="one_coin"`` on the models'
averaged scores, its groups the agreement patterns, that draws its true
labels so. The comparison is fitted once per draw with those classes as its
labels; its draws (of each model's metric, P(best), the differences) are the
mixture of the fits' draws.
"""

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..utils._label_noise import (
    AnnotatorsOfNoiseModel,
    MixtureOfFits,
    noise_model,
    uses_label_noise,
)
from ..utils._params import atomic, reset_fitted, validated
from ..utils._random import check_generator
from ._accuracy import BayesianAccuracy
from ._agreement_patterns import agreement_patterns, check_model_scores
from ._slot_annotators import SlotAnnotators, model_slots


class NoisyModelComparison(AnnotatorsOfNoiseModel, MixtureOfFits):
    """Mixin of :class:`BayesianModelComparison`: ``fit`` with labels from annotators."""

    def _noisy(self, X, y, annotator):
        return uses_label_noise(self.label_noise, X, y, annotator)

    @validated
    @atomic(deep=False)
    def fit(self, X, y=None, *, annotator=None):
        """Fit on the models' scores of the pool; ``y`` labels some items (-1: unlabeled).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_models, n_classes), (n_samples, n_models) or list
            The models' scores on the same items (see :func:`check_model_scores`),
            or a Dask Array of them: each partition is fitted where it lives and
            the fits are merged (:meth:`merge`).
        y : array-like of shape (n_samples,) or (n_samples, n_annotators), default=None
            True labels (class indices, or entries of ``classes``), a Dask
            collection partitioned as ``X`` when ``X`` is one;
            ``missing_label`` marks an unlabeled item. None: no item is
            labeled. Two-dimensional: one column per annotator (a
            DataFrame's column names name them), labels of annotators who may
            slip (``label_noise``).
        annotator : array-like of shape (n_samples,), default=None
            With one-dimensional ``y``: who gave each item's label.

        Returns
        -------
        self : BayesianModelComparison
        """
        if not self._noisy(X, y, annotator):
            self.__dict__.pop("imputations_", None)
            self.__dict__.pop("annotators_", None)
            return super().fit(X, y)
        reset_fitted(self)
        S = check_model_scores(X)
        predictions = S.argmax(axis=2)
        blocks = agreement_patterns(predictions)
        patterns = pd.Series(["-".join(map(str, b)) for b in blocks.tolist()], dtype=object)
        rng = check_generator(self.random_state)
        noise = _SlotNoiseModel(**noise_model(self, int(rng.integers(2**31 - 1))).get_params())
        # The comparison's own prior of each item's pattern is its slots' prior.
        unlabeled = clone(self).set_params(label_noise="none", classes=None).fit(S)
        noise.slots = model_slots(predictions, blocks)
        noise.concentration = unlabeled.prior_[unlabeled.pattern_]
        noise.fit(S.mean(axis=1), y, group_by=patterns.to_numpy(), annotator=annotator)
        fits = []
        for m in range(self.n_imputations):
            codes = np.full(S.shape[0], -1, dtype=np.int64)
            codes[noise.label_rows_] = noise.imputed_labels_[m]
            est = clone(self).set_params(label_noise="none", classes=None, missing_label=-1)
            fits.append(est.fit(S, codes))
        params = self.get_params(deep=False)
        vars(self).update({k: v for k, v in vars(fits[0]).items() if k not in params})
        self.imputations_ = fits[1:]
        self.annotators_ = noise
        return self

    def _draws(self, n_draws=None, random_state=None, sceptical=True):
        if not self._mixed():
            return super()._draws(n_draws, random_state, sceptical)
        n_draws = self.n_draws if n_draws is None else n_draws
        per = -(-n_draws // (1 + len(self.imputations_)))
        # Every fit draws with the same random_state: common random numbers.
        stack = np.stack(self._each_fit("_draws", per, random_state, sceptical))
        return np.swapaxes(stack, 0, 1).reshape(-1, stack.shape[2])[:n_draws]

    def _mean_accuracy(self, sceptical=True):
        if not self._mixed():
            return super()._mean_accuracy(sceptical)
        return np.mean(self._each_fit("_mean_accuracy", sceptical), axis=0)

    def _outcome_probabilities(self, sceptical=True):
        if not self._mixed():
            return super()._outcome_probabilities(sceptical)
        return np.mean(self._each_fit("_outcome_probabilities", sceptical), axis=0)

    def partial_fit(self, X, y=None):
        self._refuse_after_noise("partial_fit")
        return super().partial_fit(X, y)

    def add_pattern_labels(self, pattern, category):
        self._refuse_after_noise("add_pattern_labels")
        return super().add_pattern_labels(pattern, category)

    def _refuse_after_noise(self, method):
        if getattr(self, "annotators_", None) is not None:
            raise ValueError(
                f"{method} adds labels as the truth; this {type(self).__name__} was fitted "
                "with label_noise, which needs every label at once: call fit with all of them."
            )


class _SlotNoiseModel(BayesianAccuracy):
    """The noise model of a comparison: each labeled item's true class among its slots first.

    Set before ``fit`` (which reads and drops them, so that its fits to the
    draws do not copy a value per item of the pool): ``slots``, each item's
    slots, the distinct classes its models predict (:func:`model_slots`), in
    the order of its agreement pattern's blocks; ``concentration``, each
    item's Dirichlet prior over them and the rest (the comparison's
    ``prior_`` of its pattern). The groups given at ``fit`` are the
    agreement patterns.
    """

    def _annotator_model(self, pred, group, labels, prior, random_state, rows):
        slots, concentration = vars(self).pop("slots"), vars(self).pop("concentration")
        return SlotAnnotators(
            slots[rows],
            group,
            labels,
            self.n_classes_,
            prior,
            random_state,
            concentration=concentration[rows],
            slip_evidence=self.slip_evidence,
        )
