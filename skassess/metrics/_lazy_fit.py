"""Estimators whose calibrated model is fitted when first read."""

import inspect

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._calibrated import fit_calibrated_rates
from ._calibrated_model import score_center

#: The calibrated model's own posterior draws (each fit of an estimator under
#: ``label_noise`` makes its share of them).
DEFAULT_MODEL_DRAWS = 4000


class LazyCalibratedFit:
    """Mixin of estimators whose calibrated model is fitted when first read.

    A file read in many batches, or labels told in a burst, fit it once: each
    update calls :meth:`_mark_calibrated_stale`, and reading an attribute of
    ``_LAZY`` then calls the estimator's ``_fit_calibrated`` (which sets
    them and clears ``_calibrated_stale``).
    """

    _LAZY = ("posterior_", "prior_", "_hierarchy", "dispersion_")

    def _model_random_state(self):
        """The calibrated model's source of draws, from ``random_state``.

        An int as it is (the same draws at every fit), a RandomState or
        Generator by a seed drawn from it, None: fresh entropy.
        """
        rs = self.random_state
        if rs is None or isinstance(rs, (int, np.integer)):
            return rs
        if isinstance(rs, np.random.Generator):
            return int(rs.integers(2**63))
        return int(check_random_state(rs).randint(2**31 - 1))

    def _calibrated_model(self):
        """The calibrated model of each group's accuracy from the fitted counts.

        What the estimator fits, and what a planner or a session rebuilds.
        """
        return fit_calibrated_rates(
            self.score_rows_,
            self.score_logit_,
            self.score_labeled_,
            self.score_success_,
            fit=self._design_fit(),
            n_draws=getattr(self, "_model_n_draws", DEFAULT_MODEL_DRAWS),
            random_state=self._model_random_state(),
        )

    def _fit_deferred(self, name):
        """Set a lazy attribute that the fit leaves to its first read (hook)."""

    def _score_center(self):
        """The log-odds of the pool's mean score (the calibrated model's centre)."""
        return score_center(self.score_rows_, self.score_logit_)

    def _mark_calibrated_stale(self):
        for name in self._LAZY:
            self.__dict__.pop(name, None)
        self._calibrated_stale = True

    def __getattr__(self, name):
        # Only reached when normal lookup fails: the calibrated posterior not fitted yet.
        if name in type(self)._LAZY and "_calibrated_stale" in self.__dict__:
            if self.__dict__["_calibrated_stale"]:
                self._fit_calibrated()
            if name not in self.__dict__:
                self._fit_deferred(name)
            if name in self.__dict__:
                return self.__dict__[name]
        if isinstance(inspect.getattr_static(type(self), name, None), property):
            # A fitted attribute computed by a property: its NotFittedError (an
            # AttributeError) sent Python here; say so, not "no attribute".
            check_is_fitted(self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
