"""Labels from annotators who slip: an estimator's posterior mixed over draws of the true labels.

With ``label_noise="one_coin"`` (or ``"auto"`` and labels that name their
annotators) ``fit`` draws the true labels of the labeled rows from the
one-coin model of :mod:`skassess.metrics._annotators` and fits the estimator
once per draw, with the drawn labels as its labels. Its posterior is the
mixture of those fits: every overall or per-group draw, mean and interval
comes from all of them, so the uncertainty about who slipped is in every
answer.
"""

import copy
import types
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..utils._label_noise import MixtureOfFits, uses_label_noise
from ..utils._params import LEVEL, N_DRAWS, atomic, reset_fitted, validate_args, validated
from ..utils._random import check_generator
from ..utils._sklearn_compat import safe_indexing
from ..utils._validation import check_labels, validate_scores
from ._annotator_reports import AnnotatorReports
from ._annotators import OneCoinAnnotators, beta_from_interval
from ._base import DEFAULT_N_DRAWS

#: The default prior of every annotator's accuracy: its central 95 % interval.
DEFAULT_ANNOTATOR_PRIOR = (0.85, 0.999)


def _check_accuracy_prior(value, where):
    """A float in (0, 1] (known accuracy) or a pair ``low < high`` in (0, 1)."""
    if isinstance(value, Real) and not isinstance(value, bool):
        if not 0 < value <= 1:
            raise ValueError(f"{where} must be in (0, 1]; got {value!r}.")
        return float(value)
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{where} must be a known accuracy in (0, 1] or a pair (low, high), the central "
            f"95 % interval of the annotator's accuracy; got {value!r}."
        ) from None
    if not 0 < low < high < 1:
        raise ValueError(f"{where} must satisfy 0 < low < high < 1; got {value!r}.")
    try:
        return beta_from_interval(low, high)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


class NoisyLabelMixture(AnnotatorReports, MixtureOfFits):
    """Mixin: ``fit`` with labels from annotators, the posterior mixed over true-label draws.

    Put first among an estimator's bases; it adds the parameters
    ``label_noise``, ``annotator_prior``, ``slip_evidence`` and ``n_imputations``.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # An override without a docstring of its own reads, in each estimator,
        # as the method it mixes: a copy of it with that method's docstring.
        if cls.__module__ == __name__:  # a mixin of this module, not an estimator
            return
        mro = cls.__mro__
        after = mro[mro.index(NoisyLabelMixture) + 1 :]
        mixins = [m for m in mro if m.__module__ == __name__ and issubclass(m, NoisyLabelMixture)]
        for mixin in mixins:
            for name, value in vars(mixin).items():
                if name.startswith("_") or not callable(value) or value.__doc__ is not None:
                    continue
                if getattr(cls, name) is not value:
                    continue
                doc = next((getattr(b, name).__doc__ for b in after if hasattr(b, name)), None)
                if doc:
                    setattr(cls, name, _with_doc(value, doc))

    # -------------------------------------------------------------- fitting
    def _noisy(self, X, y, annotator):
        return uses_label_noise(self.label_noise, X, y, annotator)

    @validated
    @atomic(deep=False)
    def fit(self, X, y=None, *, group_by=None, y_pred=None, sample_weight=None, annotator=None):
        """Fit the posterior from scratch; labels may come from annotators who slip.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Black-box scores.
        y : array-like of shape (n_samples,) or (n_samples, n_annotators), default=None
            True labels (``missing_label`` for none). Two-dimensional: one
            column per annotator (a DataFrame's column names name them), each
            row holding the labels its annotators gave; an array needs two
            columns or more (or ``label_noise="one_coin"``), a DataFrame one.
        group_by, y_pred, sample_weight
            As in the estimators' ``fit``.
        annotator : array-like of shape (n_samples,), default=None
            With one-dimensional ``y``: who gave each row's label.

        Returns
        -------
        self : object
        """
        self.__dict__.pop("_shared_draws", None)
        if not self._noisy(X, y, annotator):
            self.__dict__.pop("_model_n_draws", None)
            return super().fit(X, y, group_by=group_by, y_pred=y_pred, sample_weight=sample_weight)
        reset_fitted(self)
        scores, _, _ = validate_scores(self, X, y_pred=y_pred, reset=True)
        n, K = scores.shape
        labels, names = self._annotated_labels(y, annotator, n, K)
        # Every row counted once, unlabeled; then each draw of the true labels
        # adds the labeled rows alone.
        super().fit(X, None, group_by=group_by, y_pred=y_pred, sample_weight=sample_weight)
        rows = np.flatnonzero((labels >= 0).any(axis=1))

        def take(values):
            return None if values is None else safe_indexing(values, rows)

        return self._mix_annotations(
            safe_indexing(X, rows),
            labels[rows],
            names,
            rows,
            group_by=take(group_by),
            y_pred=take(y_pred),
            sample_weight=take(sample_weight),
        )

    @validated
    @atomic
    def add_annotations(self, X, y, *, rows=None, group_by=None, y_pred=None, sample_weight=None):
        """Add the labels of annotators to a fit of the pool without labels.

        For a pool fitted in parts (:meth:`partial_fit`, or on Dask
        collections) or by an active assessor: the pool's rows are counted
        first, unlabeled; here its labeled rows arrive with every label their
        annotators gave, and the estimator becomes the mixture that
        :meth:`fit` makes from the same labels (``label_noise``).

        Parameters
        ----------
        X : array-like of shape (n_labeled, n_classes) or (n_labeled,)
            Scores of the labeled rows, counted already by the fit.
        y : array-like of shape (n_labeled, n_annotators)
            One column per annotator (a DataFrame's column names name them),
            ``missing_label`` where an annotator gave no label.
        rows : array-like of int of shape (n_labeled,), default=None
            The rows' positions in the pool (the index of
            :meth:`repeat_utilities`); None: 0, 1, ...
        group_by, y_pred, sample_weight
            Of the labeled rows, as in :meth:`fit`.

        Returns
        -------
        self : object

        Raises
        ------
        ValueError
            If the fit holds labels already, or holds annotators' labels.
        """
        check_is_fitted(self)
        if self._mixed() or hasattr(self, "annotator_names_") or np.any(self.n_labeled_):
            raise ValueError(
                "add_annotations adds the labels of an unlabeled fit; this "
                f"{type(self).__name__} holds labels already. Fit the pool without labels "
                "first (fit(X) or partial_fit), then add every annotator's labels at once."
            )
        n = np.shape(X)[0]
        if np.ndim(y) != 2:
            raise ValueError(
                "y must hold one column per annotator (n_labeled, n_annotators); got shape "
                f"{np.shape(y)}."
            )
        labels, names = self._annotated_labels(y, None, n, self.n_classes_)
        rows = np.arange(n) if rows is None else np.asarray(rows)
        if rows.shape != (n,):
            raise ValueError(f"rows must hold one position per row of X ({n}); got {rows.shape}.")
        return self._mix_annotations(
            X, labels, names, rows, group_by=group_by, y_pred=y_pred, sample_weight=sample_weight
        )

    def _mix_annotations(
        self, X, labels, names, rows, *, group_by=None, y_pred=None, sample_weight=None
    ):
        """The mixture, from this estimator fitted on the pool unlabeled and the labeled rows.

        ``X`` the labeled rows' scores, ``labels`` their class codes per
        annotator (-1 where none), ``rows`` their positions in the pool.
        """
        self.__dict__.pop("_shared_draws", None)
        given = (labels >= 0).any(axis=1)
        if not given.all():
            labels, rows = labels[given], np.asarray(rows)[given]
            X = safe_indexing(X, np.flatnonzero(given))

            def keep(values):
                return None if values is None else safe_indexing(values, np.flatnonzero(given))

            group_by, y_pred, sample_weight = keep(group_by), keep(y_pred), keep(sample_weight)
        prior = self._annotator_priors(names)
        if len(rows) == 0:
            raise ValueError(
                "y holds no label: no annotator labeled any row, and label_noise needs "
                "labeled rows. Fit without annotators (or with label_noise='none') to see "
                "the prior alone."
            )
        _, pred, _ = validate_scores(self, X, y_pred=y_pred, reset=False)
        group = self.apply(X, group_by=group_by, y_pred=y_pred)
        model = self._annotator_model(
            pred, group, labels, prior, check_generator(self.random_state), rows
        )
        _, drawn = model.draw(self.n_imputations)
        # Each fit makes its share of the mixture's draws (its model is built when
        # first read, after its labels).
        self._model_n_draws = max(2, -(-DEFAULT_N_DRAWS // self.n_imputations))
        unlabeled = copy.deepcopy(self)
        fits = []
        for m in range(self.n_imputations):
            # Every fit draws with the same random_state: common random numbers.
            est = self if m == 0 else copy.deepcopy(unlabeled).set_params(label_noise="none")
            est.add_labels(
                X,
                self.classes_[drawn[m]],
                group_by=group_by,
                y_pred=y_pred,
                sample_weight=sample_weight,
            )
            if m > 0:
                fits.append(est)
        self.imputations_ = fits
        self.annotator_names_ = np.asarray(names, dtype=object)
        self.annotator_labels_ = labels
        self._annotators = model
        self.n_label_rows_ = int(len(rows))
        self._label_rows = np.asarray(rows)
        self.label_rows_ = self._label_rows.copy()
        self.imputed_labels_ = np.asarray(drawn, dtype=np.int64)
        self._right_proba = (drawn == pred).mean(axis=0)
        return self

    def _annotator_model(self, pred, group, labels, prior, random_state, rows):
        """The model of the annotators and of the labeled rows' true classes (one-coin)."""
        return OneCoinAnnotators(
            pred,
            group,
            labels,
            self.n_classes_,
            prior,
            random_state,
            slip_evidence=self.slip_evidence,
        )

    def _annotated_labels(self, y, annotator, n, K):
        """Class codes of shape ``(n, A)`` (-1 where none) and the annotators' names."""
        classes = self._classes(K)
        missing = self.missing_label
        if np.ndim(y) == 2:
            if annotator is not None:
                raise ValueError(
                    "annotator is for one-dimensional y; a two-dimensional y names its "
                    "annotators by its columns."
                )
            frame = pd.DataFrame(y)
            if frame.shape[0] != n:
                raise ValueError(f"y has {frame.shape[0]} rows; X has {n}.")
            names = [str(c) for c in frame.columns]
            if len(set(names)) != len(names):
                raise ValueError(f"y's columns must name distinct annotators; got {names}.")
            codes = np.column_stack(
                [
                    check_labels(
                        frame.iloc[:, j].to_numpy(),
                        n,
                        K,
                        classes,
                        missing_label=missing,
                        name=f"y[:, {names[j]!r}]",
                    )
                    for j in range(frame.shape[1])
                ]
            )
            return codes, names
        codes1 = check_labels(y, n, K, classes, missing_label=missing)
        if annotator is None:
            return codes1[:, None], ["annotator"]
        who = pd.Series(np.asarray(annotator, dtype=object).ravel())
        if who.size != n:
            raise ValueError(f"annotator has {who.size} entries; X has {n} rows.")
        labeled = codes1 >= 0
        unnamed = labeled & who.isna().to_numpy()
        if unnamed.any():
            i = int(np.flatnonzero(unnamed)[0])
            raise ValueError(f"annotator[{i}] is missing, but row {i} is labeled.")
        names = list(dict.fromkeys(who[labeled].astype(str)))
        col = pd.Index(names).get_indexer(who.astype(str))
        codes = np.full((n, len(names)), -1, dtype=np.int64)
        codes[np.flatnonzero(labeled), col[labeled]] = codes1[labeled]
        return codes, names

    def _annotator_priors(self, names):
        spec = self.annotator_prior
        if isinstance(spec, dict):
            unknown = sorted(set(map(str, spec)) - set(names))
            if unknown:
                raise ValueError(
                    f"annotator_prior names {unknown}, who labeled nothing; the annotators are "
                    f"{names}."
                )
            spec = {str(k): v for k, v in spec.items()}
            return [
                _check_accuracy_prior(
                    spec.get(a, DEFAULT_ANNOTATOR_PRIOR), f"annotator_prior[{a!r}]"
                )
                for a in names
            ]
        value = _check_accuracy_prior(spec, "annotator_prior")
        return [value] * len(names)

    def partial_fit(self, X, y=None, *, group_by=None, y_pred=None, sample_weight=None):
        self._refuse_after_noise("partial_fit")
        return super().partial_fit(
            X, y, group_by=group_by, y_pred=y_pred, sample_weight=sample_weight
        )

    def add_labels(
        self, X, y, *, group_by=None, y_pred=None, sample_weight=None, design_weight=None
    ):
        self._refuse_after_noise("add_labels")
        return super().add_labels(
            X,
            y,
            group_by=group_by,
            y_pred=y_pred,
            sample_weight=sample_weight,
            design_weight=design_weight,
        )

    def _refuse_after_noise(self, method):
        if self._mixed() or hasattr(self, "annotator_names_"):
            raise ValueError(
                f"{method} adds labels as the truth; this {type(self).__name__} was fitted "
                "with label_noise, which needs every label at once: call fit with all of them."
            )

    # -------------------------------------------------------------- pooled outputs
    def _each(self, name, *args, **kwargs):
        """``name(*args, **kwargs)`` of every fit: the estimator's own first, unmixed.

        With an int ``random_state`` every fit draws the same numbers on every
        call (common random numbers), so the draws are kept and shared by the
        summaries that read them (a refit makes a new mixture).
        """
        key = None
        if name in _SHARED_DRAWS and isinstance(self.random_state, Integral):
            key = (name, self.random_state, args, tuple(sorted(kwargs.items())))
            if all(v is None or isinstance(v, Integral) for v in (*args, *kwargs.values())):
                cached = self.__dict__.setdefault("_shared_draws", {}).get(key)
                if cached is not None:
                    return cached
            else:
                key = None
        out = self._each_fit(name, *args, **kwargs)
        if key is not None:
            self.__dict__["_shared_draws"][key] = out
        return out

    def _n_fits(self):
        return 1 + len(self.imputations_)

    @validated
    @validate_args({"n_draws": [N_DRAWS], "random_state": ["random_state"]})
    def overall_samples(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        if not self._mixed():
            return super().overall_samples(n_draws, random_state)
        per = -(-n_draws // self._n_fits())
        return _interleave(self._each("overall_samples", per, random_state), n_draws)

    def overall_mean(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        if not self._mixed():
            return super().overall_mean(n_draws, random_state)
        return float(np.mean(self.overall_samples(n_draws, random_state)))

    @validated
    @validate_args({"n_draws": [N_DRAWS], "random_state": ["random_state"]})
    def groupwise_samples(self, n_draws=DEFAULT_N_DRAWS, random_state=None):
        if not self._mixed():
            return super().groupwise_samples(n_draws, random_state)
        per = -(-n_draws // self._n_fits())
        return _interleave(self._each("groupwise_samples", per, random_state), n_draws)

    def predict(self, X, *, group_by=None, y_pred=None):
        if not self._mixed():
            return super().predict(X, group_by=group_by, y_pred=y_pred)
        return np.mean(self._each("predict", X, group_by=group_by, y_pred=y_pred), 0)

    def predict_proba(self, X, *, group_by=None, y_pred=None):
        if not self._mixed():
            return super().predict_proba(X, group_by=group_by, y_pred=y_pred)
        return np.mean(self._each("predict_proba", X, group_by=group_by, y_pred=y_pred), 0)

    def _mixed_interval(self, level):
        """Each group's mean, lower and upper from the fits' draws, mixed."""
        per = -(-DEFAULT_N_DRAWS // self._n_fits())
        draws = np.concatenate(self._each("groupwise_samples", per))
        tail = (1.0 - level) / 2.0
        lower, upper = np.quantile(draws, [tail, 1 - tail], axis=0)
        if getattr(self, "_checks_departure", lambda: False)():
            # A group whose labels stray from the shared map holds their own interval too.
            flagged = self._flagged_groups()
            labels_lower, labels_upper = self._labels_interval(level)
            lower = np.where(flagged, np.minimum(lower, labels_lower), lower)
            upper = np.where(flagged, np.maximum(upper, labels_upper), upper)
        return np.clip(draws.mean(0), lower, upper), lower, upper

    def summary(self, *args, **kwargs):
        frame = super().summary(*args, **kwargs)
        if self._mixed():
            level = args[0] if args else kwargs.get("level", 0.95)
            frame["mean"], frame["lower"], frame["upper"] = self._mixed_columns(frame, level)
        return frame

    def _mixed_columns(self, frame, level):
        """``mean``, ``lower`` and ``upper`` of a summary's rows, mixed over the fits."""
        if len(frame) == len(self.groups_) and type(self)._summary_draws is (
            NoisyLabelMixture._summary_draws
        ):
            return self._mixed_interval(level)
        per = -(-DEFAULT_N_DRAWS // self._n_fits())
        draws = np.concatenate(self._each("_summary_draws", per))
        tail = (1.0 - level) / 2.0
        lower, upper = np.quantile(draws, [tail, 1 - tail], axis=0)
        return np.clip(draws.mean(0), lower, upper), lower, upper

    def _summary_draws(self, n_draws):
        """Draws of what each row of :meth:`summary` describes (hook; per group here)."""
        return self.groupwise_samples(n_draws)


class NoisyRateMixture(NoisyLabelMixture):
    """:class:`NoisyLabelMixture` with each group's interval (of the rate estimators) mixed too."""

    @validate_args({"level": [LEVEL]})
    def groupwise_interval(self, level=0.95):
        if not self._mixed():
            return super().groupwise_interval(level)
        return self._mixed_interval(level)[1:]


class NoisyConfusionMixture(NoisyLabelMixture):
    """:class:`NoisyLabelMixture` with the confusion matrix's own outputs mixed too."""

    def _summary_draws(self, n_draws):
        # The summary's rows: cells (predicted class, true class) of P(y | pred).
        draws = self.confusion_matrix_samples(n_draws, normalize="pred").transpose(0, 2, 1)
        return draws.reshape(n_draws, -1)

    def confusion_matrix_samples(self, n_draws=DEFAULT_N_DRAWS, normalize="all", random_state=None):
        if not self._mixed():
            return super().confusion_matrix_samples(n_draws, normalize, random_state)
        per = -(-n_draws // self._n_fits())
        draws = self._each("confusion_matrix_samples", per, normalize, random_state)
        return _interleave(draws, n_draws)

    def confusion_matrix(self, normalize="all", n_draws=DEFAULT_N_DRAWS, random_state=None):
        if not self._mixed():
            return super().confusion_matrix(normalize, n_draws, random_state)
        frames = self._each("confusion_matrix", normalize, n_draws, random_state)
        return sum(frames[1:], frames[0]) / len(frames)


#: The draws a mixture keeps between calls (with an int random_state): those of its
#: summaries, which read the same draws again.
_SHARED_DRAWS = frozenset({"groupwise_samples", "overall_samples", "_summary_draws"})


def _with_doc(function, doc):
    """A copy of ``function`` with the docstring ``doc``."""
    copy = types.FunctionType(
        function.__code__,
        function.__globals__,
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__dict__.update(function.__dict__)
    copy.__qualname__ = function.__qualname__
    copy.__doc__ = doc
    return copy


def _interleave(draws, n_draws):
    """The mixture's first ``n_draws`` draws, draw ``j`` from fit ``j mod M``."""
    stack = np.stack(draws)  # (M, per, ...)
    return np.swapaxes(stack, 0, 1).reshape(-1, *stack.shape[2:])[:n_draws]
