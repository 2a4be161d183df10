"""ActiveModelSelector: which item to label next to tell which black box is best."""

import time as _time
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ..metrics import BayesianModelComparison, check_model_scores, rope_probabilities
from ..utils._deprecation import warn_deprecated
from ..utils._params import LEVEL, atomic, reset_fitted, validate_args, validated
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions
from ..utils._validation import as_scalar, check_classes, check_labels
from ._sampler import RUN_CONSTRAINTS, ActiveSampler, StopRule

__all__ = ["ActiveModelSelector"]

#: Thompson draws tried for a challenger different from the sampled leader.
N_CHALLENGER_TRIES = 10


class ActiveModelSelector(ActiveSampler):
    """Label the items that decide which of several black boxes is the most accurate.

    Read more in the :ref:`User Guide <ug_model_comparison>`.

    The posterior is a :class:`~skassess.metrics.BayesianModelComparison`
    fitted on the pool (every item the models scored). Each query picks an
    agreement pattern and labels a uniformly random unlabeled item of it (so
    every pattern's labels stay a random sample of it):

    * ``"top_two"`` (default): top-two Thompson sampling of the best model.
      A posterior draw names a leader ``a``; further draws name a challenger
      ``b != a``. The pattern chosen is the one where one more label most
      reduces the posterior variance of the pool's accuracy difference
      ``acc_a - acc_b``: ``n_unlabeled**2 * Var(c . z) / ((A + 1) (A + 2))``
      with ``c`` the +1 / -1 indicator of a's and b's blocks, ``z`` the
      pattern's outcome under its posterior mean and ``A`` its Dirichlet
      total. Patterns where a and b agree have ``c = 0``: they are never
      chosen for this pair, which concentrates the labels where the
      contenders disagree.
    * ``"disagreement"``: a uniformly random item among those where the
      models do not all agree.
    * ``"random"``: a uniformly random unlabeled item.

    Parameters
    ----------
    estimator : BayesianModelComparison, default=None
        Its prior and settings (cloned); None: the default comparison.
    strategy : {"top_two", "disagreement", "random"}, default="top_two"
    random_state : int or None, default=None
        Seed of the item order and of the Thompson draws.

    Attributes
    ----------
    estimator_ : BayesianModelComparison
        The posterior, updated by every :meth:`tell`.
    labels_ : ndarray of shape (n_samples,)
        Class index of each labeled item, -1 elsewhere.
    history_ : DataFrame
        One row per label: ``step``, ``index``, ``label``, ``best`` (the
        model with the highest P(best) after it) and ``p_best`` (its
        probability, with ``n_draws`` of the estimator) -- filled by
        :meth:`run` when it has a stop rule and by :meth:`answer`, else NaN
        -- and ``time`` (POSIX seconds).

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.samplers import ActiveModelSelector
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 5000)
    >>> a = np.where(rng.uniform(size=5000) < 0.90, y, 1 - y)
    >>> b = np.where(rng.uniform(size=5000) < 0.85, y, 1 - y)
    >>> X = np.stack([np.where(a == 1, 0.9, 0.1), np.where(b == 1, 0.85, 0.15)], axis=1)
    >>> sel = ActiveModelSelector(random_state=0).fit(X)
    >>> from skassess.samplers import StopRule
    >>> sel = sel.run(y, budget=2000, stop=StopRule(probability=0.95), progress=False)
    >>> int(sel.best_probabilities().idxmax()[-1]), sel.n_labeled_ < 400
    (0, True)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "groupwise_samples"]), None],
        "strategy": [StrOptions({"top_two", "disagreement", "random"})],
        "random_state": [Interval(Integral, 0, 2**32 - 1, closed="left"), None],
    }
    _history_columns = ("step", "index", "label", "best", "p_best", "time")

    def __init__(self, estimator=None, *, strategy="top_two", random_state=None):
        self.estimator = estimator
        self.strategy = strategy
        self.random_state = random_state

    @validated
    @atomic(deep=False)
    def fit(self, X, y=None):
        """Fit the comparison on the pool and order each pattern's items at random.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_models, n_classes) or list
            The models' scores on the pool (see
            :class:`~skassess.metrics.BayesianModelComparison`).
        y : array-like of shape (n_samples,), default=None
            Labels already known (-1: unlabeled).
        """
        reset_fitted(self)
        S = check_model_scores(X)
        if self.estimator is None:  # the selector's seed also fixes the comparison's draws
            est = BayesianModelComparison(random_state=self.random_state)
        else:
            est = clone(self.estimator)
        self.estimator_ = est.fit(S, y)
        n = est.n_samples_
        self.labels_ = self._codes(y, n, est.missing_label, "y")
        self._pred = S.argmax(axis=2)
        self._rng = np.random.default_rng(self._start_fit((X, y), {}))
        # every pattern's unlabeled items in a random order, one after the other
        order = self._rng.permutation(n)
        order = order[self.labels_[order] < 0]
        order = order[np.argsort(est.pattern_[order], kind="stable")]
        self._queue = order
        n_pat = len(est.patterns_)
        counts = np.bincount(est.pattern_[order], minlength=n_pat)
        self._next = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self._end = self._next + counts
        self._disagree = est.patterns_.max(axis=1) > 0
        self._pending = None
        self._history = []
        self._n_steps = 0
        self._skipped = np.zeros(n, dtype=bool)
        self._n_skipped = np.zeros(n_pat, dtype=np.intp)  # unlabeled skipped items per pattern
        return self

    def _codes(self, y, n, missing_label, name, rows=None):
        """Class indices of labels given as the comparison's ``classes`` (or indices)."""
        est = self.estimator_
        classes = None if est.classes is None else check_classes(est.classes, est.n_classes_)
        return check_labels(
            y, n, est.n_classes_, classes, missing_label=missing_label, name=name, rows=rows
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.positive_only = True
        return tags

    # ---------------------------------------------------------------- choosing
    def _head(self, p):
        """The next unlabeled item of pattern p (items told out of order or skipped are passed)."""
        while self._next[p] < self._end[p] and (
            self.labels_[self._queue[self._next[p]]] >= 0
            or self._skipped[self._queue[self._next[p]]]
        ):
            self._next[p] += 1
        return self._queue[self._next[p]] if self._next[p] < self._end[p] else None

    def _pick_pattern(self):
        """The pattern to label next, and every pattern's score for that choice."""
        est = self.estimator_
        left = (est.n_unlabeled_ - self._n_skipped).astype(np.float64)
        if self.strategy == "top_two":
            score = np.where(left > 0, self._top_two_scores(), 0.0)
            if np.any(score > 0):
                return int(np.argmax(score)), score
        if self.strategy != "random" and np.any(left[self._disagree] > 0):
            left = np.where(self._disagree, left, 0.0)
        if left.sum() <= 0:
            raise ValueError("Every item of the pool is labeled; there is nothing to query.")
        prob = left / left.sum()
        return int(self._rng.choice(len(left), p=prob)), prob

    def _top_two_scores(self):
        est = self.estimator_
        leader = int(np.argmax(est.groupwise_samples(1, random_state=self._rng)[0]))
        best = est.groupwise_samples(N_CHALLENGER_TRIES, random_state=self._rng).argmax(axis=1)
        others = best[best != leader]
        if len(others):
            challenger = int(others[0])
        else:  # the leader won every draw: the runner-up by posterior mean
            mean = est.mean_accuracy()
            mean[leader] = -np.inf
            challenger = int(np.argmax(mean))
        total = est.dirichlet_parameters().sum(axis=1)
        mu = est.outcome_probabilities()
        rows = np.arange(len(mu))
        c = np.zeros_like(mu)
        c[rows, est.patterns_[:, leader]] += 1.0
        c[rows, est.patterns_[:, challenger]] -= 1.0
        var = (c**2 * mu).sum(axis=1) - (c * mu).sum(axis=1) ** 2
        return est.n_unlabeled_**2 * var / ((total + 1) * (total + 2))

    @validate_args(
        {"n": [Interval(Integral, 1, None, closed="left")], "return_utilities": ["boolean"]}
    )
    def query(self, n=1, *, return_utilities=False):
        """The next ``n`` items to label (pool indices); the same until told.

        Parameters
        ----------
        n : int, default=1
        return_utilities : bool, default=False
            Also return, for each index, every item's score when it was
            chosen: its agreement pattern's score (``"top_two"``: the
            expected reduction of the leader-challenger variance; else the
            pattern's probability of being drawn); NaN for items labeled or
            skipped.

        Returns
        -------
        indices : ndarray of shape (n,)
        utilities : ndarray of shape (n, n_pool)
            Only with ``return_utilities=True``.

        Raises
        ------
        ValueError
            If fewer than ``n`` items are unlabeled (nothing is drawn then).
        """
        check_is_fitted(self)
        self._start_query(n)
        if not (
            self._pending is not None
            and len(self._pending) == n
            and (self.labels_[self._pending] < 0).all()
        ):
            picked, scores = [], []
            taken = {}
            for _ in range(n):
                p, score = self._pick_pattern()
                head = self._head(p)
                # within one batch, pass the items already picked from this pattern
                skip = taken.get(p, 0)
                pos = self._next[p] + skip
                if skip:
                    while pos < self._end[p] and (
                        self.labels_[self._queue[pos]] >= 0 or self._skipped[self._queue[pos]]
                    ):
                        pos += 1
                    head = self._queue[pos] if pos < self._end[p] else None
                if head is None:
                    break
                taken[p] = skip + 1
                picked.append(int(head))
                scores.append(score)
            self._pending = np.array(picked, dtype=np.intp)
            self._pending_scores = np.array(scores)
        if not return_utilities:
            return self._pending.copy()
        open_ = (self.labels_ < 0) & ~self._skipped
        utilities = np.where(open_[None], self._pending_scores[:, self.estimator_.pattern_], np.nan)
        return self._pending.copy(), utilities

    def tell(self, indices, labels, *, time=None):
        """Record labels of pool items (class indices, or the estimator's ``classes``).

        ``time``: when the labels were given (POSIX seconds, one or one per
        label), for :attr:`history_`; None: now.
        """
        check_is_fitted(self)
        idx = self._check_indices(np.atleast_1d(indices))
        times = self._check_time(time, len(idx))
        codes = self._codes(np.atleast_1d(labels), len(idx), None, "labels", rows=idx)
        if len(np.unique(idx)) != len(idx):
            raise ValueError(f"indices repeat an item: {np.asarray(indices).tolist()!r}.")
        known = self.labels_[idx] >= 0
        if known.any():
            raise ValueError(f"indices: item {int(idx[known][0])} is labeled already.")
        est = self.estimator_
        patterns = est.pattern_[idx]
        blocks = est.patterns_[patterns]
        pred = self._pred[idx]
        right = pred == codes[:, None]
        cats = np.where(
            right.any(axis=1), blocks[np.arange(len(idx)), right.argmax(axis=1)], est.n_models_
        )
        est.add_pattern_labels(patterns, cats)
        self.labels_[idx] = codes
        was_skipped = idx[self._skipped[idx]]
        np.subtract.at(self._n_skipped, est.pattern_[was_skipped], 1)
        self._skipped[idx] = False
        self._pending = None
        self._n_steps += 1
        when = np.full(len(idx), _time.time()) if times is None else times
        for i, c, t in zip(idx, codes, when.tolist(), strict=True):
            self._history.append((self._n_steps, int(i), int(c), None, np.nan, t))
        return self

    def _skip_rows(self, rows):
        np.add.at(self._n_skipped, self.estimator_.pattern_[rows], 1)
        if self._pending is not None and np.isin(self._pending, rows).any():
            self._pending = None

    # ------------------------------------------------------------------ running
    @validate_args({"n_draws": [Interval(Integral, 1, None, closed="left"), None]})
    def best_probabilities(self, n_draws=None):
        """P(model m is the most accurate), from :attr:`estimator_`."""
        check_is_fitted(self)
        return self.estimator_.best_probabilities(n_draws, random_state=self.random_state)

    def summary(self, level=0.95):
        """The comparison's per-model summary."""
        check_is_fitted(self)
        return self.estimator_.summary(level)

    @validate_args(
        {
            "stop_probability": [Interval(Real, 0, 1, closed="right"), None],
            "n_draws": [Interval(Integral, 1, None, closed="left"), None],
            "stop_rope": [Interval(Real, 0, 1, closed="right"), None],
        }
    )
    def should_stop(self, stop_probability=None, n_draws=None, *, stop_rope=None):
        """Whether the question is decided: by P(best), or by the ROPE decision.

        Parameters
        ----------
        stop_probability : float, default=None
            Decided when one model is the best with at least this probability.
        n_draws : int, default=None
            Posterior draws (None: the estimator's ``n_draws``, 4000 by
            default: a Monte Carlo error of 0.0035 at 0.95).
        stop_rope : float, default=None
            Decided when the two models most probably best are, with at least
            this probability, on one side of the estimator's ROPE or within it
            (practically equivalent: either will do), by
            :func:`~skassess.metrics.rope_probabilities`.
        """
        check_is_fitted(self)
        est = self.estimator_
        p, draws = self._leader(n_draws)
        decided = stop_probability is not None and bool(p.max() >= stop_probability)
        if stop_rope is not None and not decided:
            a, b = np.argsort(-p, kind="stable")[:2]
            rope = rope_probabilities(draws[:, a] - draws[:, b], est.rope)
            decided = bool(rope.max() >= stop_rope)
        return decided

    def _leader(self, n_draws=None):
        """P(best) of every model and the draws, noted in the last history row."""
        est = self.estimator_
        draws = est.groupwise_samples(n_draws, random_state=self.random_state)
        top = draws == draws.max(axis=1, keepdims=True)
        p = (top / top.sum(axis=1, keepdims=True)).mean(axis=0)
        if self._history:
            step, index, label, _, _, t = self._history[-1]
            self._history[-1] = (
                step,
                index,
                label,
                est.groups_[int(np.argmax(p))],
                float(p.max()),
                t,
            )
        return p, draws

    def _available_rows(self):
        return int(((self.labels_ < 0) & ~self._skipped).sum())

    def _array_oracle(self, labels):
        truth = np.asarray(labels)
        if truth.shape != self.labels_.shape:
            raise ValueError(
                f"oracle as an array must hold one label per pool item "
                f"({len(self.labels_)}); got shape {truth.shape}."
            )
        # every label checked before any is told: a bad one changes nothing
        self._codes(truth, len(truth), None, "oracle")
        return truth.__getitem__

    @validate_args({"level": [LEVEL]})
    def answer(self, level=0.95):
        """The model most probably the best, for a progress line and a stop rule.

        Returns
        -------
        answer : dict
            ``text``; ``probability``: P(best) of the leading model, from the
            estimator's draws; ``rope_probability``: the probability of the
            most probable ROPE region (below, within, above) of the two
            leading models' difference; ``certified`` None; ``max_width``: the
            widest ``level`` interval of a model's accuracy.
        """
        check_is_fitted(self)
        p, draws = self._leader()
        a, b = np.argsort(-p, kind="stable")[:2]
        rope = rope_probabilities(draws[:, a] - draws[:, b], self.estimator_.rope)
        summary = self.summary(level)
        width = float((summary["upper"] - summary["lower"]).max())
        best = as_scalar(self.estimator_.groups_[int(a)])
        return {
            "text": f"best: {best} (P = {float(p.max()):.3f})",
            "probability": float(p.max()),
            "rope_probability": float(np.max(rope)),
            "certified": None,
            "max_width": width,
        }

    @validate_args(
        {
            **RUN_CONSTRAINTS,
            "stop_probability": [Interval(Real, 0, 1, closed="right"), None],
            "stop_rope": [Interval(Real, 0, 1, closed="right"), None],
        }
    )
    def run(
        self,
        oracle,
        budget,
        *,
        batch_size=None,
        stop=None,
        progress=True,
        callback=None,
        stop_probability=None,
        stop_rope=None,
    ):
        """Query, ask ``oracle`` and tell until ``budget`` labels or a stop rule.

        Parameters
        ----------
        oracle : callable or array-like
            ``indices -> labels``, or the labels of the whole pool.
        budget : int
        batch_size : int, default=None
            Items per query; None: 1.
        stop : StopRule, default=None
            Read against :meth:`answer` before each batch:
            ``StopRule(probability=0.95)`` stops when a model is the best with
            that probability, ``StopRule(rope=0.95)`` when the two leading
            models' ROPE decision (left, equivalent or right) has it.
        progress : bool, default=True
        callback : callable, default=None
            ``callback(self)`` after each batch; True stops.
        stop_probability, stop_rope : float in (0, 1], default=None
            .. deprecated:: 0.1
               Use ``stop=StopRule(probability=..., rope=...)``; removed in 0.2.
        """
        check_is_fitted(self)
        if stop_probability is not None or stop_rope is not None:
            warn_deprecated(
                "ActiveModelSelector.run(stop_probability=..., stop_rope=...)",
                "run(stop=StopRule(probability=..., rope=...))",
            )
            if stop is None:
                stop = StopRule(probability=stop_probability, rope=stop_rope)
        return super().run(
            oracle, budget, batch_size=batch_size, stop=stop, progress=progress, callback=callback
        )
