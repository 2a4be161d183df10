"""Which of several black boxes is more accurate on the same items (paired, few labels)."""

from numbers import Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..utils._dask import is_dask_collection
from ..utils._deprecation import warn_deprecated
from ..utils._docstrings import fill_doc
from ..utils._label_noise import NOISE_CONSTRAINTS
from ..utils._params import LEVEL, N_DRAWS, atomic, reset_fitted, validate_args, validated
from ..utils._random import check_generator
from ..utils._sklearn_compat import Interval, MissingValues, StrOptions
from ..utils._validation import check_classes, check_labels
from ._agreement_patterns import agreement_patterns, check_model_scores
from ._base import DEFAULT_N_DRAWS
from ._comparison_posterior import _ComparisonPosterior, best_shares
from ._group_comparison import (
    DECISION_PROBABILITY,
    DEFAULT_DECISION_PROBABILITY,
    compare_groups,
)
from ._noisy_model_comparison import NoisyModelComparison
from ._pattern_merging import PatternMerging
from ._pattern_prior import PatternPrior
from ._rate_table import RATES

__all__ = ["BayesianModelComparison"]

#: A category's prior mean is at least this (then renormalized): no outcome is impossible.
MIN_PRIOR_MEAN = 1e-3


@fill_doc
class _ModelComparison(PatternMerging, _ComparisonPosterior, BaseEstimator):
    """Posterior accuracy of M black boxes scored on the same items, and which is best.

    Read more in the :ref:`User Guide <ug_model_comparison>`.

    On each item the models' predictions form an *agreement pattern*: the
    models split into blocks that predict the same class. At most one block
    is right, so on an item of a pattern with ``r`` blocks the joint outcome
    ("which models are right") is one of ``r + 1`` categories: block 1
    right, ..., block r right, or none. Each pattern (stratum) gets a
    Dirichlet posterior over its categories. Items on which all models agree
    are one pattern whose outcome says nothing about which model is better;
    labels inform the comparison only where models disagree.

    The pool's accuracy of model m is the share of its items on which m is
    right: the labeled items count as observed, and the unlabeled items of
    each pattern as a multinomial draw with the pattern's probabilities (a
    finite-population posterior: with every item labeled it is the exact
    accuracy).

    The informative prior of a pattern has ``prior_strength`` pseudo-counts
    and the mean of its items' outcome probabilities under the models'
    averaged scores (block b right with the average score of b's class; none
    right with the rest), with the share of "some block right" split evenly
    among the blocks (``prior_split="even"``); ``prior="uniform"`` gives
    every category one pseudo-count.

    With ``prior_split="learned"`` (the default from four models on) the
    prior is learned from the labels of every pattern at once: a pattern's
    categories have the Dirichlet prior ``Dirichlet(s pi_p)``, with ``pi_p``
    the vote of conditionally independent models (block ``b`` weighted by
    ``exp`` of the sum of its models' log odds ``lambda_m`` of being right,
    a class no model predicts by ``exp(lambda_none)``) and ``s`` how closely
    the patterns follow that vote: both learned from the labeled items'
    Dirichlet-multinomial likelihood (``lambda_m`` exchangeable about a
    common mean), and integrated over by importance sampling in every draw.
    With many models most patterns hold few labels or none, and there the
    even split takes a lone dissenter as likely right as the models that
    outvote it.

    A sceptical component guards P(best) against near ties: with prior
    probability ``tie_prior`` the blocks of a pattern are equally likely to
    be right (all its models equally accurate there), else they follow the
    Dirichlet above. Both share how often no block is right, so the labels
    weigh the two by a Bayes factor on the right blocks alone (a conjugate
    mixture: exact, no sampling). Under a true tie the factor rarely grows
    (the chance that it ever reaches ``k`` is at most ``1/k``), so a run
    that stops when P(best) is high seldom stops on a coin flip, whatever
    the stopping rule.

    The tie is a point mass (a difference of exactly 0), so it serves
    decisions, not estimates: P(best) (:meth:`best_probabilities`, the
    ``p_best`` column) and the ROPE probabilities of :meth:`pairwise` keep
    it, while the means and intervals of :meth:`summary` and
    :meth:`pairwise` are those of the continuous (Dirichlet) component.
    Intervals from the mixture collapse towards 0 whenever the labels look
    like a tie, also where the truth is a few points away; the continuous
    component's do not (their coverage beside PPI++'s:
    ``docs/benchmarks/model-comparison.md``).

    ``groupwise_samples`` and ``groups_`` make the models the "groups" of
    :func:`compare_groups`, :func:`rank_groups` and :func:`top_m_groups`.

    Parameters
    ----------
    prior : {"informative", "uniform"}, default="informative"
    metric : str, default="accuracy"
        What is compared: ``"accuracy"``, or for binary models (class 1
        positive) a rate of :func:`rate_terms` -- ``"tpr"`` (``"recall"``),
        ``"fnr"``, ``"tnr"``, ``"fpr"``, ``"ppv"`` (``"precision"``),
        ``"npv"``. For a rate the patterns also record the class each block
        predicts, so that the outcome of an item gives its true class.
    prior_strength : float, default=2.0
        Pseudo-counts of a pattern's informative prior (grid-search it with
        :meth:`score`).
    prior_split : {"auto", "even", "scores", "learned"}, default="auto"
        The informative prior's mean of *which* block is right: even among
        the pattern's blocks (the scores then only say how often none is
        right), or as the averaged scores say, or ``"learned"`` from the
        labels of all the patterns (the models' vote, see above; it ignores
        the scores and ``prior_strength``). ``"auto"``: ``"even"`` for two
        or three models, ``"learned"`` for more. "scores" trusts the models'
        own confidence, which favours the most overconfident model (a
        sampler may then stop on the wrong model after a few labels).
    tie_prior : float in [0, 1), default=0.5
        Prior probability that the models of a pattern where they disagree
        are equally accurate on its items. 0 drops the sceptical component.
    model_names : list of str, default=None
        Names of the models (default ``"model 0"``, ...).
    classes : array-like of shape (n_classes,), default=None
        The label of each score column; ``y`` then holds these labels.
        None: ``y`` holds class indices.
    missing_label : int, float, str or None, default=-1
        The marker of an unlabeled item in ``y``, besides NaN, None and
        ``pd.NA``, which always mark one.
    rope : float, default=0.01
        Half-width of the region of practical equivalence of an accuracy
        difference (one point: models are usually compared more finely than
        groups).
    n_draws : int, default=4000
        Posterior draws behind the intervals and P(best).
    {{label_noise}}
        Under ``label_noise`` the true classes are drawn with the agreement
        patterns as the noise model's groups and the models' averaged scores
        as its black box, each item's true class one of the classes its
        models predict or another, in its pattern's shares (their prior is
        ``prior_``); the draws, P(best) and the differences mix the fits.
    random_state : int, RandomState or None, default=None
        Seed of the draws.

    Attributes
    ----------
    n_models_, n_classes_ : int
    patterns_ : ndarray of shape (n_patterns, n_models)
        The agreement patterns present (blocks of each model).
    pattern_ : ndarray of shape (n_samples,) or None
        Each item's pattern; None after a fit on Dask collections (the items
        stay in their partitions).
    prior_ : ndarray of shape (n_patterns, n_models + 1)
        Dirichlet prior per pattern (category b < r: block b right; category
        ``n_models``: none right; absent blocks have 0); the non-tie
        component of the prior.
    counts_ : ndarray of shape (n_patterns, n_models + 1)
        Labeled outcomes per pattern and category.
    n_unlabeled_ : ndarray of shape (n_patterns,)
        Unlabeled items per pattern.
    n_correct_labeled_ : ndarray of shape (n_models,)
        Labeled items each model gets right.
    imputations_ : list of BayesianModelComparison
        Under ``label_noise``: the fits to the draws of the true labels after
        the first (the estimator's own state is the first's, and so are the
        attributes above).
    annotators_ : BayesianAccuracy
        Under ``label_noise``: the noise model, whose ``imputed_labels_`` are
        the draws of the true labels; :meth:`annotator_summary` and
        :meth:`annotator_agreement` read it.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.metrics import BayesianModelComparison
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 2000)
    >>> a = np.where(rng.uniform(size=2000) < 0.9, y, 1 - y)   # 90 % accurate
    >>> b = np.where(rng.uniform(size=2000) < 0.8, y, 1 - y)   # 80 % accurate
    >>> X = np.stack([np.where(a == 1, 0.9, 0.1), np.where(b == 1, 0.8, 0.2)], axis=1)
    >>> labels = np.full(2000, -1)
    >>> labels[:300] = y[:300]
    >>> comp = BayesianModelComparison(model_names=["A", "B"], random_state=0).fit(X, labels)
    >>> comp.summary().round(2)  # the truth: 0.90 and 0.79  # doctest: +NORMALIZE_WHITESPACE
           mean  lower  upper  p_best
    model
    A      0.91   0.88   0.93     1.0
    B      0.80   0.78   0.83     0.0
    """

    _parameter_constraints = {
        "prior": [StrOptions({"informative", "uniform"})],
        "metric": [StrOptions(set(RATES) - {"selection_rate"})],
        "prior_strength": [Interval(Real, 0, None, closed="neither")],
        "prior_split": [StrOptions({"auto", "even", "scores", "learned"})],
        "tie_prior": [Interval(Real, 0, 1, closed="left")],
        "model_names": [list, None],
        "classes": ["array-like", None],
        "missing_label": [MissingValues()],
        "rope": [Interval(Real, 0, None, closed="left")],
        "n_draws": [N_DRAWS],
        **NOISE_CONSTRAINTS,
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        prior="informative",
        *,
        metric="accuracy",
        prior_strength=2.0,
        prior_split="auto",
        tie_prior=0.5,
        model_names=None,
        classes=None,
        missing_label=-1,
        rope=0.01,
        n_draws=DEFAULT_N_DRAWS,
        label_noise="auto",
        annotator_prior=(0.85, 0.999),
        slip_evidence="bounds",
        n_imputations=20,
        random_state=None,
    ):
        self.prior = prior
        self.metric = metric
        self.prior_strength = prior_strength
        self.prior_split = prior_split
        self.tie_prior = tie_prior
        self.model_names = model_names
        self.classes = classes
        self.missing_label = missing_label
        self.rope = rope
        self.n_draws = n_draws
        self.label_noise = label_noise
        self.annotator_prior = annotator_prior
        self.slip_evidence = slip_evidence
        self.n_imputations = n_imputations
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.positive_only = True
        return tags

    # ------------------------------------------------------------------ fitting
    def _rows(self, X, y, reset):
        S = check_model_scores(
            X, None if reset else self.n_models_, None if reset else self.n_classes_
        )
        codes = self._codes(y, S.shape[0], S.shape[2])
        pred = S.argmax(axis=2)
        return S, pred, agreement_patterns(pred), codes

    def _codes(self, y, n_samples, n_classes, name="y", missing_label="default"):
        """Class indices of labels (-1: unlabeled), by ``classes`` and ``missing_label``."""
        classes = None if self.classes is None else check_classes(self.classes, n_classes)
        missing = self.missing_label if missing_label == "default" else missing_label
        return check_labels(y, n_samples, n_classes, classes, missing_label=missing, name=name)

    def _outcomes(self, blocks, pred, codes):
        """Category of each labeled row: the right block, or n_models for none."""
        right = pred == codes[:, None]
        return np.where(
            right.any(axis=1), blocks[np.arange(len(codes)), right.argmax(axis=1)], self.n_models_
        )

    def _prior_means(self, S, pred, blocks):
        """Per row, the outcome probabilities under the models' averaged scores."""
        M = self.n_models_
        avg = S.mean(axis=1)
        q = np.zeros((len(S), M + 1))
        # the class of each block is the prediction of its first model
        for m in range(M):
            first = blocks[:, m] == blocks[:, : m + 1].max(axis=1)
            first &= ~(blocks[:, :m] == blocks[:, [m]]).any(axis=1)
            rows = np.flatnonzero(first)
            q[rows, blocks[rows, m]] = avg[rows, pred[rows, m]]
        q[:, M] = np.clip(1.0 - q[:, :M].sum(axis=1), 0.0, None)
        return q

    def _keys(self, blocks, pred):
        """Each row's pattern key: its blocks, and for a rate the class of block 0."""
        first = pred[:, 0] if self.metric != "accuracy" else np.zeros(len(pred), np.int64)
        return np.column_stack([blocks, first]).astype(np.int64)

    def _pattern_ids(self, keys, reset):
        M = self.n_models_
        if reset:
            self._key_table, ids = np.unique(keys, axis=0, return_inverse=True)
            self.patterns_ = self._key_table[:, :M]
            return ids.ravel()
        known = {tuple(p): i for i, p in enumerate(self._key_table)}
        new = [tuple(b) for b in np.unique(keys, axis=0) if tuple(b) not in known]
        if new:
            self._key_table = np.vstack([self._key_table, np.array(new)])
            self.patterns_ = self._key_table[:, :M]
            grow = len(new)
            self.counts_ = np.vstack([self.counts_, np.zeros((grow, self.n_models_ + 1))])
            self._q_sum = np.vstack([self._q_sum, np.zeros((grow, self.n_models_ + 1))])
            self.n_unlabeled_ = np.concatenate([self.n_unlabeled_, np.zeros(grow, np.int64)])
            self._n_items = np.concatenate([self._n_items, np.zeros(grow, np.int64)])
            known = {tuple(p): i for i, p in enumerate(self._key_table)}
        return (
            np.array([known[tuple(b)] for b in keys], dtype=np.int64)
            if len(keys)
            else np.empty(0, np.int64)
        )

    def _add(self, S, pred, blocks, codes, reset):
        ids = self._pattern_ids(self._keys(blocks, pred), reset)
        n_pat = len(self.patterns_)
        if reset:
            M = self.n_models_
            self.counts_ = np.zeros((n_pat, M + 1))
            self._q_sum = np.zeros((n_pat, M + 1))
            self.n_unlabeled_ = np.zeros(n_pat, dtype=np.int64)
            self._n_items = np.zeros(n_pat, dtype=np.int64)
            self.n_correct_labeled_ = np.zeros(M, dtype=np.int64)
            self.n_samples_ = 0
        labeled = codes >= 0
        cats = self._outcomes(blocks[labeled], pred[labeled], codes[labeled])
        np.add.at(self.counts_, (ids[labeled], cats), 1.0)
        self.n_unlabeled_ += np.bincount(ids[~labeled], minlength=n_pat)
        self._n_items += np.bincount(ids, minlength=n_pat)
        np.add.at(self._q_sum, ids, self._prior_means(S, pred, blocks))
        self.n_correct_labeled_ += (pred[labeled] == codes[labeled, None]).sum(axis=0)
        self.n_samples_ += len(codes)
        self._set_prior()
        self.pattern_ = ids if reset else np.concatenate([self.pattern_, ids])

    def _split_rule(self):
        """``prior_split`` with ``"auto"`` resolved by the number of models."""
        if self.prior_split == "auto":
            return "learned" if self.n_models_ > 3 else "even"
        return self.prior_split

    def _set_prior(self):
        M = self.n_models_
        n_blocks = self.patterns_.max(axis=1) + 1
        support = np.arange(M + 1)[None, :] < n_blocks[:, None]
        # "none right" is impossible where the blocks predict every class
        support[:, M] = n_blocks < self.n_classes_
        self.__dict__.pop("_pattern_prior", None)
        if self.prior == "uniform":
            self.prior_ = support.astype(np.float64)
            return
        if self._split_rule() == "learned":
            self._pattern_prior = PatternPrior(
                self.patterns_,
                support,
                self.n_classes_,
                self.counts_,
                check_generator(self.random_state),
                none_class=None if self.metric == "accuracy" else self._key_table[:, M],
            )
            self.prior_ = self._pattern_prior.mean_alpha()
            return
        mean = np.where(
            support, np.maximum(self._q_sum / self._n_items[:, None], MIN_PRIOR_MEAN), 0.0
        )
        mean /= mean.sum(axis=1, keepdims=True)
        if self._split_rule() == "even":
            # the scores say how often no block is right; which block is right starts
            # even: each model's own scores would favour the most overconfident one
            some = 1.0 - mean[:, M]
            mean[:, :M] = np.where(support[:, :M], (some / n_blocks)[:, None], 0.0)
        self.prior_ = self.prior_strength * mean

    @validated
    @atomic(deep=False)
    def fit(self, X, y=None):
        """Fit on the models' scores of the pool; ``y`` labels some items (-1: unlabeled).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_models, n_classes), (n_samples, n_models) or list
            The models' scores on the same items (see :func:`check_model_scores`),
            or a Dask Array of them: each partition is fitted where it lives and
            the fits are merged (:meth:`merge`).
        y : array-like of shape (n_samples,), default=None
            True labels (class indices, or entries of ``classes``), a Dask
            collection partitioned as ``X`` when ``X`` is one;
            ``missing_label`` marks an unlabeled item. None: no item is labeled.

        Returns
        -------
        self : BayesianModelComparison
        """
        reset_fitted(self)  # a failure puts the previous fit back (atomic)
        if is_dask_collection(X) or is_dask_collection(y):
            vars(self).update(vars(self._fit_dask(X, y)))
            return self
        S, pred, blocks, codes = self._rows(X, y, reset=True)
        self.n_models_, self.n_classes_ = S.shape[1], S.shape[2]
        if self.metric != "accuracy" and self.n_classes_ != 2:
            raise ValueError(
                f"metric={self.metric!r} needs binary models (2 classes); "
                f"got {self.n_classes_} classes."
            )
        names = self.model_names
        if names is not None and len(names) != self.n_models_:
            raise ValueError(f"model_names has {len(names)} names for {self.n_models_} models.")
        self._add(S, pred, blocks, codes, reset=True)
        return self

    @validated
    def partial_fit(self, X, y=None):
        """Add items (labeled or not) to the pool; the first call is :meth:`fit`."""
        if not hasattr(self, "prior_"):
            return self.fit(X, y)
        if is_dask_collection(X) or is_dask_collection(y):
            return self.merge(self._fit_dask(X, y))
        S, pred, blocks, codes = self._rows(X, y, reset=False)
        self._add(S, pred, blocks, codes, reset=False)
        return self

    def add_pattern_labels(self, pattern, category):
        """Record labels of items already in the pool, by agreement pattern.

        The update of :class:`~skassess.samplers.ActiveModelSelector`: an
        item is known by its pattern (``patterns_``) and its label by its
        outcome category. (``add_labels`` of the other estimators takes rows
        of scores; this estimator keeps counts per pattern.)

        Parameters
        ----------
        pattern, category : array-like of int
            Each labeled item's pattern and outcome category.

        Returns
        -------
        self : BayesianModelComparison
        """
        check_is_fitted(self)
        pattern = np.asarray(pattern, dtype=np.int64)
        category = np.asarray(category, dtype=np.int64)
        if np.any(
            self.n_unlabeled_[np.unique(pattern)]
            < np.bincount(pattern, minlength=len(self.patterns_))[np.unique(pattern)]
        ):
            raise ValueError("add_pattern_labels: more labels than unlabeled items in a pattern.")
        np.add.at(self.counts_, (pattern, category), 1.0)
        self.n_unlabeled_ -= np.bincount(pattern, minlength=len(self.patterns_))
        blocks = self.patterns_[pattern]
        self.n_correct_labeled_ += (blocks == category[:, None]).sum(axis=0)
        if self._split_rule() == "learned":
            self._set_prior()  # the learned prior reads every pattern's labels
        return self

    def label(self, pattern, category):
        """Deprecated: :meth:`add_pattern_labels`.

        .. deprecated:: 0.1
           ``label`` will be removed in 0.2; use ``add_pattern_labels``.
        """
        warn_deprecated("BayesianModelComparison.label", "add_pattern_labels")
        return self.add_pattern_labels(pattern, category)

    # ---------------------------------------------------------------- posterior
    @property
    def groups_(self):
        """The models' names (a pandas Index): the "groups" of the comparison functions."""
        check_is_fitted(self)
        names = self.model_names or [f"model {m}" for m in range(self.n_models_)]
        return pd.Index(names, name="model")

    @validate_args(
        {"n_draws": [N_DRAWS, None], "random_state": ["random_state", np.random.Generator]}
    )
    def groupwise_samples(self, n_draws=None, random_state=None):
        """Posterior draws of each model's accuracy on the pool, ``(n_draws, n_models)``.

        ``random_state``: a seed, a ``numpy.random.Generator`` (used as it is)
        or None for the estimator's ``random_state``.
        """
        check_is_fitted(self)
        return self._draws(n_draws, random_state)

    def _draws(self, n_draws=None, random_state=None, sceptical=True):
        """Metric draws with the tie component (``sceptical``) or without it."""
        n_draws = self.n_draws if n_draws is None else n_draws
        seed = self.random_state if random_state is None else random_state
        if isinstance(seed, np.random.RandomState):
            seed = seed.randint(2**31)
        rng = np.random.default_rng(seed)  # a Generator is used as it is
        return self._metric_draws(rng, n_draws, sceptical)

    @validate_args(
        {"n_draws": [N_DRAWS, None], "random_state": ["random_state", np.random.Generator]}
    )
    def best_probabilities(self, n_draws=None, random_state=None):
        """P(model m has the highest metric) for each model (ties split evenly).

        For an error rate (``"fnr"``, ``"fpr"``) the highest is the worst.
        """
        return pd.Series(
            best_shares(self.groupwise_samples(n_draws, random_state)),
            index=self.groups_,
            name="p_best",
        )

    @validate_args({"level": [LEVEL]})
    def summary(self, level=0.95):
        """Per model: posterior mean of the metric, credible interval, P(best).

        The mean and interval are the continuous component's (the mean exact
        for accuracy, the draws' for a rate); ``p_best`` keeps the tie
        component (see the class's description).
        """
        check_is_fitted(self)
        draws = self._draws(sceptical=False)
        tail = (1 - level) / 2
        lower, upper = np.quantile(draws, [tail, 1 - tail], axis=0)
        mean = (
            self._mean_accuracy(sceptical=False)
            if self.metric == "accuracy"
            else draws.mean(axis=0)
        )
        return pd.DataFrame(
            {
                "mean": mean,
                "lower": lower,
                "upper": upper,
                "p_best": best_shares(self.groupwise_samples()),
            },
            index=self.groups_,
        )

    @validate_args({"level": [LEVEL], "decision_probability": [DECISION_PROBABILITY]})
    def pairwise(self, level=0.95, *, decision_probability=DEFAULT_DECISION_PROBABILITY):
        """Every pair: Δ metric (a − b) with interval and ``(p_left, p_rope, p_right)``.

        The mean and interval are the continuous component's; the three
        probabilities, the decision and its confidence keep the tie
        component (see the class's description). The decision is the region
        with probability at least ``decision_probability``, else
        ``"undecided"`` (:class:`~skassess.metrics.GroupComparison`).
        """
        check_is_fitted(self)
        names = self.groups_
        mixture = pd.DataFrame(self.groupwise_samples(), columns=names)
        continuous = pd.DataFrame(self._draws(sceptical=False), columns=names)
        rows = []
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                row = compare_groups(
                    mixture, a, b, rope=self.rope, decision_probability=decision_probability
                ).summary(level)
                estimate = compare_groups(continuous, a, b, rope=self.rope)
                row["mean"] = estimate.mean
                row["lower"], row["upper"] = estimate.interval(level)
                rows.append(row)
        return pd.concat(rows, ignore_index=True).rename(
            columns={"group_a": "model_a", "group_b": "model_b"}
        )

    def score(self, X, y):
        """Mean log posterior predictive probability of the labeled items' joint outcomes.

        Higher is better: :class:`~sklearn.model_selection.GridSearchCV` uses
        it to choose ``prior_strength``. Items of patterns not seen in
        :meth:`fit` get the uniform prior's probability.
        """
        check_is_fitted(self)
        S, pred, blocks, codes = self._rows(X, y, reset=False)
        labeled = codes >= 0
        if not labeled.any():
            raise ValueError("score needs at least one labeled row (y is not -1).")
        cats = self._outcomes(blocks[labeled], pred[labeled], codes[labeled])
        known = {tuple(p): i for i, p in enumerate(self._key_table)}
        theta = self.outcome_probabilities()
        out = []
        keys = self._keys(blocks[labeled], pred[labeled])
        for b, c in zip(keys, cats, strict=True):
            i = known.get(tuple(b))
            if i is None:
                out.append(-np.log(b[:-1].max() + 2.0))
            else:
                out.append(np.log(theta[i, c]))
        return float(np.mean(out))


class BayesianModelComparison(NoisyModelComparison, _ModelComparison):
    __doc__ = _ModelComparison.__doc__


# The mixin's overrides read as the methods they guard.
for _name in ("partial_fit", "add_pattern_labels"):
    getattr(BayesianModelComparison, _name).__doc__ = getattr(_ModelComparison, _name).__doc__
