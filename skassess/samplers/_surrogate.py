"""A Bayesian surrogate of the true label: an ensemble of scikit-learn MLPs.

ALT-MAS (Ha et al.) uses an MC-dropout network; an ensemble of independently
initialized networks, each fitted on a bootstrap resample of the labels, is the
usual stand-in with scikit-learn's MLPs (Lakshminarayanan et al. 2017) and its
members give the draws ``p(y | x, omega_m)`` the acquisitions need.
"""

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._params import atomic
from ..utils._sklearn_compat import Interval

__all__ = ["MLPEnsembleSurrogate"]

# numbers of X one partial_fit call of _train takes at most (16 MB of float64)
_CHUNK = 2_000_000


class MLPEnsembleSurrogate(ClassifierMixin, BaseEstimator):
    """An ensemble of ``n_members`` MLP classifiers, refitted cheaply as labels arrive.

    Read more in the :ref:`User Guide <ug_active_testing>`.

    Each member is an :class:`~sklearn.neural_network.MLPClassifier` with its
    own seed, fitted on its own bootstrap resample of the labeled rows (and of
    the pseudo-labeled rows, weighted by ``sample_weight``). :meth:`fit` trains
    from scratch; :meth:`partial_fit` continues each member from its current
    weights for ``refit_epochs`` passes over all the labels given (a warm
    start), which is what a labeling loop calls after each batch.

    Parameters
    ----------
    n_members : int, default=10
        Ensemble size ``M``.
    hidden_layer_sizes : tuple of int, default=(64,)
        Hidden layers of each member.
    alpha : float, default=1e-3
        L2 penalty of each member.
    learning_rate_init : float, default=1e-3
        Adam's step size.
    max_iter : int, default=200
        Epochs of a fit from scratch.
    refit_epochs : int, default=10
        Epochs of a warm-started :meth:`partial_fit`.
    bootstrap : bool, default=True
        Fit each member on a bootstrap resample (diversity beyond the seeds).
    random_state : int, RandomState instance or None, default=None
        Seeds of the members and the resamples.

    Attributes
    ----------
    estimators_ : list of MLPClassifier
        The fitted members.
    classes_ : ndarray of shape (n_classes,)
        The classes (given to :meth:`fit`, or seen).
    n_features_in_ : int
        Number of features.
    n_iter_ : int
        Epochs of each member in the last :meth:`fit` or :meth:`partial_fit`.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.samplers import MLPEnsembleSurrogate
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
    >>> sur = MLPEnsembleSurrogate(n_members=3, random_state=0).fit(X, y)
    >>> sur.predict_proba_members(X[:2]).shape
    (3, 2, 2)
    """

    _parameter_constraints = {
        "n_members": [Interval(numbers.Integral, 1, None, closed="left")],
        "hidden_layer_sizes": [tuple],
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "learning_rate_init": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "refit_epochs": [Interval(numbers.Integral, 1, None, closed="left")],
        "bootstrap": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_members=10,
        *,
        hidden_layer_sizes=(64,),
        alpha=1e-3,
        learning_rate_init=1e-3,
        max_iter=200,
        refit_epochs=10,
        bootstrap=True,
        random_state=None,
    ):
        self.n_members = n_members
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.refit_epochs = refit_epochs
        self.bootstrap = bootstrap
        self.random_state = random_state

    def _member(self, seed):
        return MLPClassifier(
            hidden_layer_sizes=self.hidden_layer_sizes,
            alpha=self.alpha,
            learning_rate_init=self.learning_rate_init,
            random_state=int(seed),
        )

    def _check(self, X, y, classes, sample_weight, reset):
        X, y = validate_data(self, X, y, reset=reset)
        if classes is not None:
            classes = np.unique(np.asarray(classes))
            unknown = np.setdiff1d(np.unique(y), classes)
            if unknown.size:
                raise ValueError(
                    f"y holds labels {unknown.tolist()} that are not in classes {classes.tolist()}."
                )
        if sample_weight is None:
            sample_weight = np.ones(len(y))
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if (
            sample_weight.shape != (len(y),)
            or not np.all(np.isfinite(sample_weight))
            or np.any(sample_weight < 0)
        ):
            raise ValueError(
                "sample_weight must have shape (n_samples,) and be finite and "
                f">= 0; got {sample_weight!r}."
            )
        if sample_weight.sum() <= 0:
            raise ValueError("sample_weight is zero for every row: nothing to fit.")
        return X, y, classes, sample_weight

    def _resample(self, rng, sample_weight):
        """Row indices of one member's training set: weighted bootstrap, or every row."""
        n = len(sample_weight)
        if not self.bootstrap:
            return np.repeat(np.arange(n), np.round(sample_weight).astype(int).clip(min=1))
        # Poisson bootstrap with the weights as rates: a row of weight w appears
        # Poisson(w) times, so pseudo-labels of weight < 1 count for less.
        reps = rng.poisson(sample_weight)
        if reps.sum() == 0:
            reps[rng.choice(n, p=sample_weight / sample_weight.sum())] = 1
        return np.repeat(np.arange(n), reps)

    def _train(self, member, X, y, rows, epochs, classes, rng):
        """``epochs`` passes over ``rows``, each in its own random order.

        One ``partial_fit`` call per epoch spent most of a refit in the
        classifier's input checks (about 2 ms a call against 0.5 ms for an
        epoch of 50 rows), so the epochs' orders are passed end to end, as many
        as ``_CHUNK`` numbers hold, in batches of ``min(200, len(rows))`` rows:
        with up to 200 rows each batch is one epoch, as one call per epoch gives.
        """
        # _train orders each epoch itself
        member.set_params(shuffle=False, batch_size=min(200, len(rows)))
        per_call = max(1, _CHUNK // max(1, len(rows) * X.shape[1]))
        for start in range(0, epochs, per_call):
            n_epochs = min(per_call, epochs - start)
            order = np.concatenate([rng.permutation(rows) for _ in range(n_epochs)])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                member.partial_fit(X[order], y[order], classes=classes)

    @atomic(deep=False)
    def fit(self, X, y, *, classes=None, sample_weight=None):
        """Fit every member from scratch.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features of the labeled (and pseudo-labeled) rows.
        y : array-like of shape (n_samples,)
            Their labels.
        classes : array-like, default=None
            Every class the surrogate must predict, also those not yet seen
            (None: the classes in ``y``).
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row (e.g. below 1 for pseudo-labels).

        Returns
        -------
        self : MLPEnsembleSurrogate
        """
        self._validate_params()
        X, y, classes, sample_weight = self._check(X, y, classes, sample_weight, reset=True)
        self.classes_ = np.unique(y) if classes is None else classes
        rng = check_random_state(self.random_state)
        seeds = rng.randint(np.iinfo(np.int32).max, size=self.n_members)
        self.estimators_ = []
        for seed in seeds:
            member_rng = np.random.default_rng(seed)
            member = self._member(seed)
            rows = self._resample(member_rng, sample_weight)
            self._train(member, X, y, rows, self.max_iter, self.classes_, member_rng)
            self.estimators_.append(member)
        self._rng = rng
        self.n_iter_ = self.max_iter
        return self

    def partial_fit(self, X, y, *, classes=None, sample_weight=None):
        """Continue each member for ``refit_epochs`` epochs on all the labels given.

        The first call fits from scratch (as :meth:`fit`). ``X``, ``y`` are the
        whole current training set (labels so far), not only the new rows.
        """
        if not hasattr(self, "estimators_"):
            return self.fit(X, y, classes=classes, sample_weight=sample_weight)
        X, y, _, sample_weight = self._check(X, y, self.classes_, sample_weight, reset=False)
        for member in self.estimators_:
            member_rng = np.random.default_rng(self._rng.randint(np.iinfo(np.int32).max))
            rows = self._resample(member_rng, sample_weight)
            self._train(member, X, y, rows, self.refit_epochs, self.classes_, member_rng)
        self.n_iter_ = self.refit_epochs
        return self

    def predict_proba_members(self, X):
        """``p(y | x, omega_m)`` of every member: shape (n_members, n_samples, n_classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return np.stack([member.predict_proba(X) for member in self.estimators_])

    def predict_proba(self, X):
        """The ensemble's predictive distribution, the mean over members."""
        return self.predict_proba_members(X).mean(axis=0)

    def predict(self, X):
        """The most probable class under :meth:`predict_proba`."""
        proba = self.predict_proba(X)
        return self.classes_[proba.argmax(axis=1)]

    def score(self, X, y, sample_weight=None):
        """Accuracy of :meth:`predict` on ``(X, y)``, weighted by ``sample_weight``."""
        return super().score(X, y, sample_weight=sample_weight)
