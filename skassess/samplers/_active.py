"""ActiveAssessor: a pool-based ask/tell loop around a skassess metric estimator."""

import copy
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._dask import is_dask_collection
from ..utils._deprecation import warn_deprecated
from ..utils._params import LEVEL, atomic, reset_fitted, validate_args, validated
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_estimator_params
from ..utils._validation import as_scalar, check_classes, check_labels
from ._active_answers import _AssessorAnswers
from ._annotated_labels import AnnotatedLabels
from ._anytime import AnytimeAnswersMixin, has_anytime_answers
from ._assessor_steps import _AssessorSteps
from ._base import QueryStrategy, pick_arms
from ._calibrated_prior import CalibratedPrior
from ._partitioned_pool import PartitionedPool, PoolFlags, PoolLabels, check_partitioned
from ._rewards import TASKS
from ._sampler import ActiveSampler, as_label_array
from ._setup import (
    STRATEGIES,
    Setup,
    default_estimator,
    initial_state,
    is_group_strategy,
    make_strategy,
    pool_rows,
)

HISTORY_COLUMNS = ["step", "index", "label", "group", "time"]


class ActiveAssessor(
    AnnotatedLabels, _AssessorAnswers, _AssessorSteps, AnytimeAnswersMixin, ActiveSampler
):
    """Choose which pool item to label next so that an assessment converges fast.

    Read more in the :ref:`User Guide <ug_active_assessment>`.

    The pool is every row the black box has scored. The wrapped metric
    estimator is fitted on the whole pool (labeled and unlabeled rows: the
    unlabeled ones give the group weights and, under the calibrated prior,
    the rows the map carries); each label recorded with :meth:`tell` updates
    its posterior (:meth:`~skassess.BayesianAccuracy.add_labels`). :meth:`query` asks the
    strategy for a score of every unlabeled item and returns the best; a
    group strategy scores each group (arm) and gives every item its group's
    score, so the best group is labeled, at a uniformly random item.

    Parameters
    ----------
    estimator : skassess metric estimator, default=None
        Holds the posterior. None: ``BayesianAccuracy()``, the calibrated
        prior (``BayesianCalibrationError(classwise=True, prior="informative")``
        for ``task="least_calibrated"``, ``BayesianMisclassificationCost()``
        for ``task="most_costly"``), as ``skassess label`` uses.
    strategy : {"thompson", "random", "top_two", "multiple_play", \
"epsilon_greedy", "bayes_ucb", "lucb"} or QueryStrategy, default="thompson"
        A name (the strategy with its default parameters) or a strategy
        object, e.g. ``EpsilonGreedy(epsilon=0.2)``. ``"lucb"`` labels toward
        an answer the :meth:`anytime_intervals` confirm
        (:meth:`certified_level`). ``"random"`` is the
        non-active baseline: a uniformly random item of the remaining pool.
    task : {"estimate", "least_accurate", "most_accurate", "least_calibrated", \
"most_costly", "compare"}, default="estimate"
        What the labels are for (see Notes).
    top_m : int, default=1
        Identification of the ``top_m`` groups (used by ``"multiple_play"``).
    compare : tuple of two group labels, default=None
        The groups to compare, for ``task="compare"``.
    rope : float, default=0.05
        Half-width of the region of practical equivalence of the comparison,
        in metric units.
    stop_confidence : float, default=None
        ``task="compare"`` only: :meth:`run` stops once the probability
        ``lambda`` of the most probable region reaches this value.

        .. deprecated:: 0.1
           Pass ``run(stop=StopRule(probability=...))``, which also checks
           the anytime-valid level where the strategy keeps one;
           ``stop_confidence`` will be removed in 0.2.
    prior_update : CalibratedPrior, default=None
        A prior learned from the labels: after every :meth:`tell` (and at
        :meth:`fit` when rows are labeled already) it is refitted on all
        labeled rows, and ``estimator_`` becomes a clone of ``estimator``
        whose ``prior`` is the learned ``(n_groups, 2)`` pseudo-counts
        (:meth:`CalibratedPrior.prior_for`). Needs a per-group accuracy
        estimator. None: the estimator's own prior.
    random_state : int, RandomState instance or None, default=None
        Seeds the strategy and the choice of rows; one private generator is
        kept, so a pickled assessor resumes the same sequence. It also seeds
        the estimator's posterior draws when the estimator's own
        ``random_state`` is None (the default estimators' is), so intervals
        drawn by Monte Carlo repeat too (None: a seed drawn at :meth:`fit`,
        which :meth:`undo` reuses).

    Attributes
    ----------
    estimator_ : metric estimator
        The current posterior.
    strategy_ : QueryStrategy
        The strategy object used.
    labels_ : ndarray of shape (n_pool,)
        Label of every pool row as a class index, ``-1`` while unlabeled.
    groups_ : pandas.Index
        The groups (arms) the strategy chooses between.
    history_ : pandas.DataFrame
        One row per recorded label: ``step`` (the :meth:`tell` call),
        ``index`` (pool row), ``label`` (as given), ``group`` and ``time``
        (POSIX seconds).
    n_labeled_ : int
        Labeled pool rows.
    skipped_ : ndarray of int
        Rows taken out of the candidates by :meth:`skip`.
    prior_update_ : CalibratedPrior or None
        The fitted ``prior_update``.
    n_features_in_ : int
        Number of score columns.

    See Also
    --------
    simulate : Many runs over a fully labeled pool, to compare strategies.

    Notes
    -----
    The rewards (Ji et al. 2021, Table 1): for ``"estimate"`` the expected
    drop of the ``p_g``-weighted posterior variance of the group rates (the
    Dirichlet analogue for a confusion matrix; ``p_b^2`` weights for the ECE
    of a :class:`~skassess.metrics.BayesianCalibrationError`; for a binary
    rate such as ``BayesianAccuracy(metric="tpr", grouping="external")``,
    the group's share of the rate's condition rows ``p_g P(condition | g)``,
    times ``P(condition | g)`` again where a label counts only if the
    condition holds on its row: for PPV and NPV, and under a prior of counts;
    under the calibrated prior every label of a TPR or FPR informs a map);
    for
    identification the sampled rate itself, the class ECE
    ``sum_b p_gb |theta_gb - s_gb|`` or the expected cost
    ``sum_j C[j, k] theta_kj``; for ``"compare"`` the expected confidence
    ``lambda`` after one more label.

    For ``"least_accurate"`` and ``"most_accurate"`` under the calibrated
    prior, a group that the estimator's departure check flags (its labels
    disagree with the shared map, ``departure_threshold``) is sampled from its
    labels alone (a uniform prior), not from the map that pulls it toward the
    other groups: a group whose few labels say it may be the extreme one gets
    the labels that settle it.

    The estimate task moves labels between the estimator's groups only. For
    the accuracy of all items, group the rows by confidence,
    ``BayesianAccuracy(grouping="score_bins", binning="quantile")``: the
    reward then sends labels to the bins whose outcome is uncertain (the
    widths of both designs against random labels':
    ``docs/benchmarks/designs.md``).

    A strategy that draws items with known probabilities
    (:class:`~skassess.samplers.VarianceSampling`, whose
    ``draw_probabilities`` gives them) makes an unequal design, offered for
    accuracy and the cost (a binary rate raises: a design drawn by each row's
    influence on the rate raises its error above random labels',
    ``docs/benchmarks/designs.md``). With the
    calibrated prior (of accuracy, or of the cost's accuracies) every row
    told is then taken as drawn by it:
    its label enters the posterior with the design weight ``1 / (m q_i)``
    (``q_i`` its probability among the ``m`` unlabeled rows the task allows,
    in the state before the :meth:`tell`; rows earlier in the same call taken
    out), which keeps the estimate valid under the design
    (:meth:`~skassess.BayesianAccuracy.add_labels`). A :meth:`replay` therefore
    tells each step on its own. Label rows of your own choosing with
    ``strategy="random"`` or a group strategy instead.

    References
    ----------
    D. Ji, R. L. Logan IV, P. Smyth, M. Steyvers, "Active Bayesian Assessment
    of Black-Box Classifiers", AAAI 2021.

    Examples
    --------
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> from skassess.samplers import ActiveAssessor
    >>> data = load_fashion_mnist_scores()
    >>> assessor = ActiveAssessor(task="least_accurate", random_state=0)
    >>> assessor = assessor.fit(data.scores)
    >>> idx, utilities = assessor.query(3, return_utilities=True)
    >>> utilities.shape
    (3, 10000)
    >>> assessor = assessor.tell(idx, data.target[idx])
    >>> assessor = assessor.run(data.target, budget=100, progress=False)
    >>> assessor.n_labeled_
    103
    >>> lowest = assessor.estimator_.summary()["mean"].nsmallest(3).index
    >>> sorted(data.class_names[i] for i in lowest)  # Pullover 0.746, Shirt 0.771 on all labels
    ['Coat', 'Pullover', 'Shirt']
    >>> bool(assessor.identification_probabilities().max() < 0.9)  # not settled yet
    True
    """

    _history_columns = HISTORY_COLUMNS

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "add_labels", "apply"]), None],
        "strategy": [StrOptions(set(STRATEGIES)), QueryStrategy],
        "task": [StrOptions(set(TASKS))],
        "top_m": [Interval(Integral, 1, None, closed="left")],
        "compare": [tuple, list, None],
        "rope": [Interval(Real, 0, None, closed="left")],
        "stop_confidence": [Interval(Real, 0, 1, closed="right"), None],
        "prior_update": [CalibratedPrior, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        strategy="thompson",
        task="estimate",
        top_m=1,
        compare=None,
        rope=0.05,
        stop_confidence=None,
        prior_update=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.strategy = strategy
        self.task = task
        self.top_m = top_m
        self.compare = compare
        self.rope = rope
        self.stop_confidence = stop_confidence
        self.prior_update = prior_update
        self.random_state = random_state

    # ----------------------------------------------------------------- fitting
    @validated
    @atomic(deep=False)
    def fit(self, X, y=None, *, group_by=None, y_pred=None):
        """Take the pool and its already labeled rows.

        Parameters
        ----------
        X : array-like of shape (n_pool, n_classes) or (n_pool,)
            Black-box scores of every pool row. A Dask Array or DataFrame
            is a pool in partitions (with ``y``, ``group_by`` and ``y_pred``
            as Dask collections partitioned alike): the rows stay where they
            live (:ref:`ug_bigger_than_one_machine`).
        y : array-like of shape (n_pool,), default=None
            Labels of rows labeled already, the estimator's ``missing_label``
            elsewhere. None: no row is labeled.
        group_by : array-like of shape (n_pool,), default=None
            Group of each row, for an estimator with ``grouping="external"``.
        y_pred : array-like of shape (n_pool,), default=None
            The black box's predicted labels; None: the argmax of ``X``.

        Returns
        -------
        self : ActiveAssessor
        """
        if self.stop_confidence is not None:
            warn_deprecated(
                "ActiveAssessor(stop_confidence=...)",
                "run(stop=StopRule(probability=...))",
            )
        reset_fitted(self)
        seed = self._start_fit((X, y), {"group_by": group_by, "y_pred": y_pred})
        strategy = make_strategy(self.strategy, top_m=self.top_m)
        random_state = check_random_state(seed)
        seed, estimator_seed = random_state.randint(np.iinfo(np.int32).max, size=2)
        base = default_estimator(self.task) if self.estimator is None else clone(self.estimator)
        if base.get_params().get("random_state", 0) is None:
            # The fit's seed also fixes the estimator's posterior draws (an unseeded
            # assessor draws it at fit; undo fits again with the same).
            base.set_params(random_state=int(estimator_seed))
        grouping = base.get_params().get("grouping")
        if group_by is not None and grouping is not None and grouping != "external":
            # the estimator's own error would name its grouping parameter, which
            # the assessor does not have
            raise ValueError(
                f"group_by was passed, but the estimator groups rows by {grouping!r}; pass "
                f"estimator={type(base).__name__}(grouping='external') to group rows by "
                "these labels."
            )
        partitioned = is_dask_collection(X)
        if partitioned:
            check_partitioned(strategy, self.prior_update)
        estimator = clone(base).fit(X, y, group_by=group_by, y_pred=y_pred)
        setup = Setup(estimator, self.task, top_m=self.top_m, compare=self.compare, rope=self.rope)
        K = estimator.n_classes_
        classes = None if estimator.classes is None else check_classes(estimator.classes, K)
        if partitioned:
            pool = PartitionedPool(X, y, group_by, y_pred, estimator, setup)
            scores = pred = cell = arm = None
            n, labels = pool.n_rows, PoolLabels(pool)
        else:
            pool = None
            scores, pred, cell, arm = pool_rows(estimator, setup, X, group_by, y_pred)
            n = scores.shape[0]
            labels = check_labels(y, n, K, classes, missing_label=estimator.missing_label).copy()
        prior_update = None
        if self.prior_update is not None:
            # The map is fitted on class indices: the prediction and label codes.
            prior_update = clone(self.prior_update).set_params(classes=None, missing_label=-1)
            validate_estimator_params(prior_update)
            if not hasattr(estimator, "n_success_") or setup.arm_of_cell is not None:
                raise ValueError(
                    "prior_update needs a per-group accuracy estimator (BayesianAccuracy with "
                    "metric='accuracy', or BayesianCalibrationError with classwise=False)."
                )
        if getattr(strategy, "uses_anytime_bounds", False) and not has_anytime_answers(
            self.task, strategy, estimator, setup
        ):
            raise ValueError(
                f"strategy={type(strategy).__name__}() needs task='least_accurate', "
                "'most_accurate' or 'compare' with the estimator BayesianAccuracy(metric="
                f"'accuracy'); got task={self.task!r} and {type(estimator).__name__}."
            )
        metric = getattr(estimator, "metric", "accuracy")
        if hasattr(strategy, "draw_probabilities") and metric != "accuracy":
            # A design drawn by each row's influence on a binary rate raises its
            # error and under-covers (docs/benchmarks/designs.md, "Binary rates
            # under an unequal design").
            raise ValueError(
                f"strategy={type(strategy).__name__}() draws an unequal design, which is "
                f"offered for accuracy and the cost only; the binary rate metric={metric!r} "
                "takes strategy='thompson' (the default) or 'random', whose labels are "
                "random within each group."
            )
        # Everything is valid: the assessor becomes fitted.
        self.strategy_, self.estimator_, self._setup = strategy, estimator, setup
        self._base_estimator = base
        self._X, self._group_by, self._y_pred = X, group_by, y_pred
        self._scores, self._pred, self._cell, self._arm = scores, pred, cell, arm
        self._classes, self.labels_, self._n_classes = classes, labels, K
        self.n_features_in_ = estimator.n_features_in_
        self._rng = np.random.default_rng(int(seed))
        self._pool = pool
        if pool is not None:
            # The pool walks each group's rows in the order of keys drawn per row, from
            # a stream of their own; the query generator skips the n draws that the
            # walk in memory takes, so the strategy's draws are those of the same
            # pool in memory.
            self._skipped = PoolFlags(n)
            pool.seed_keys(int(np.random.SeedSequence([int(seed), 1]).generate_state(1)[0]))
            self._rng.bit_generator.advance(n)
            self._remaining = pool.unlabeled.copy()
        else:
            self._skipped = np.zeros(n, dtype=bool)
            # Rows grouped by arm, in a random order within each arm; a pointer per
            # arm walks that order, skipping rows labeled since.
            keys = arm + self._rng.random(n)
            self._order = np.argsort(keys, kind="stable")
            size = np.bincount(arm, minlength=setup.n_arms)
            self._arm_end = np.cumsum(size)
            self._pointer = self._arm_end - size
            self._remaining = np.bincount(arm[labels < 0], minlength=setup.n_arms).astype(np.int64)
        self._history = []
        self._n_steps = 0
        self.prior_update_ = prior_update
        self.prior_update_, self.estimator_ = self._refit_prior(estimator, labels)
        return self

    @property
    def groups_(self):
        check_is_fitted(self)
        return self._setup.arm_labels

    # -------------------------------------------------------------- ask / tell
    def _available_rows(self):
        return int(self._remaining[self._setup.task.allowed].sum())

    @validate_args(
        {
            "n": [Interval(Integral, 1, None, closed="left")],
            "return_utilities": ["boolean"],
        },
    )
    def query(self, n=1, *, return_utilities=False):
        """Pool indices of the next ``n`` rows to label.

        With ``n > 1`` each index comes from its own scoring of the pool (for
        Thompson sampling, its own posterior draw: batch Thompson sampling),
        without waiting for the labels.

        Parameters
        ----------
        n : int, default=1
        return_utilities : bool, default=False
            Also return the score every pool item had when each index was
            chosen.

        Returns
        -------
        indices : ndarray of shape (n,)
            Rows not labeled yet, all different.
        utilities : ndarray of shape (n, n_pool)
            Only with ``return_utilities=True``: the strategy's score of every
            item at each choice; NaN for items that could not be chosen
            (labeled, chosen earlier in the batch, or not allowed by the task).

        Raises
        ------
        ValueError
            If fewer than ``n`` rows the task may label are left.
        """
        check_is_fitted(self)
        if return_utilities and self._pool is not None:
            raise ValueError(
                "return_utilities=True gives a score of every pool row, which a pool in Dask "
                "partitions does not send to the client; query it with return_utilities=False."
            )
        self._start_query(n, f"unlabeled rows are left for task={self.task!r}")
        task = self._setup.task
        remaining = self._remaining.copy()
        pointer = None if self._pool is not None else self._pointer.copy()
        out = np.empty(n, dtype=np.intp)
        utilities = np.full((n, len(self.labels_)), np.nan) if return_utilities else None
        state = initial_state(self.estimator_, self._setup, 1)
        group_level = is_group_strategy(self.strategy_)
        bounds = None
        outcome_proba = self._outcome_proba_once()

        for i in range(n):
            available = None
            if return_utilities or not group_level:
                available = (self.labels_ < 0) & ~self._skipped & task.allowed[self._arm]
                available[out[:i]] = False
            if group_level:
                if getattr(self.strategy_, "uses_anytime_bounds", False):
                    if bounds is None:  # once per query: the labels do not change
                        level = np.array([1.0 - self.strategy_.level])
                        bounds = tuple(b[:, 0][None] for b in self._anytime_bounds(level)[:2])
                    u = self.strategy_.utilities(
                        task, state, remaining[None], self._rng, bounds=bounds
                    )
                else:
                    u = self.strategy_.utilities(task, state, remaining[None], self._rng)
                arm = int(pick_arms(u, np.where(task.allowed, remaining, 0)[None], self._rng)[0])
                out[i] = self._next_row(arm, pointer, out[:i])
                remaining[arm] -= 1
                if return_utilities:
                    utilities[i, available] = u[0][self._arm[available]]
                continue
            context = self._context(available, state, outcome_proba)
            u = np.asarray(self.strategy_.item_utilities(context, self._rng), dtype=np.float64)
            if u.shape != (len(self.labels_),):
                raise ValueError(
                    f"{type(self.strategy_).__name__}.item_utilities must return one score per "
                    f"pool item, shape ({len(self.labels_)},); got {u.shape}."
                )
            u = np.where(available, u, np.nan)
            if np.isnan(u[available]).all():
                raise ValueError("The strategy scored every available item NaN.")
            best = np.nanmax(u)
            ties = np.flatnonzero(u == best)
            out[i] = ties[self._rng.integers(len(ties))]
            remaining[self._arm[out[i]]] -= 1
            if return_utilities:
                utilities[i] = u
        return (out, utilities) if return_utilities else out

    def tell(self, indices, labels, *, annotator=None, time=None):
        """Record labels of pool rows and update the posterior.

        Parameters
        ----------
        indices : array-like of int, shape (n,)
            Pool row indices (any rows, not only queried ones).
        labels : array-like of shape (n,)
            Their true labels (class indices, or names with the estimator's
            ``classes``).
        annotator : str or array-like of shape (n,), default=None
            Who gave the labels. Named from the first label on, the labels
            may slip: a row may then be labeled again by another annotator
            (a repeat, in :attr:`annotations_`), and the estimate is the
            estimator's under ``label_noise`` (user guide, *When labels are
            noisy*), refitted from every annotated label after each call;
            :meth:`undo` is then not available. None: the labels are the
            truth.
        time : float or array-like of shape (n,), default=None
            When the labels were given (POSIX seconds), for :attr:`history_`;
            None: now.

        Returns
        -------
        self : ActiveAssessor

        Raises
        ------
        ValueError
            If an index is outside the pool, a label is not a class, or a row
            gets a label different from the one it already has (a repeated
            identical label is ignored); with ``annotator``, if an annotator
            gives a row a label different from the one it gave it, or if
            labels were told before without annotators.
        """
        if annotator is not None:
            return self._tell_annotated(indices, labels, annotator, time)
        if getattr(self, "_annotations", None):
            raise ValueError(
                "This assessor's labels name their annotators; pass annotator= to tell."
            )
        return self._tell_labels(indices, labels, time)

    def _tell_labels(self, indices, labels, time):
        check_is_fitted(self)
        rows, y_new, given_new, when = self._new_labels(indices, labels, time, self._n_classes)
        if len(rows) == 0:
            return self
        # Everything that can fail runs first, on new objects or through the
        # estimator's atomic add_labels; the commit below cannot fail, so a tell
        # that raises leaves the session as it was.
        arm_labels = self._setup.arm_labels
        X_rows, gb, pred, arm = self._pool_rows(rows)
        entries = [
            (self._n_steps + 1, row, as_scalar(label), as_scalar(arm_labels[a]), t)
            for row, label, a, t in zip(rows.tolist(), given_new.tolist(), arm, when, strict=True)
        ]
        design = {}
        if self._design_weighted():
            design["design_weight"] = self._design_weights(rows)
        # With a prior update, the labels go into a copy (O(groups)) that the
        # update reads, then the estimator is refitted under the new prior.
        estimator = (
            self.estimator_ if self.prior_update_ is None else copy.deepcopy(self.estimator_)
        )
        # The pool's own rows (a DataFrame keeps its column names for the estimator).
        estimator.add_labels(
            X_rows, self._decoded(y_new), group_by=gb, y_pred=self._decoded(pred), **design
        )
        if self.prior_update_ is not None:
            codes = self.labels_.copy()
            codes[rows] = y_new
            self.prior_update_, self.estimator_ = self._refit_prior(estimator, codes)
        # Commit. A skipped row was out of the remaining counts already.
        self.labels_[rows] = y_new
        np.subtract.at(self._remaining, arm[~self._skipped[rows]], 1)
        self._skipped[rows] = False
        self._n_steps += 1
        self._history.extend(entries)
        self._setup.refresh(self.estimator_)
        return self

    def _skip_rows(self, rows):
        # A skipped row leaves its group's remaining count (a later tell labels it).
        np.subtract.at(self._remaining, self._pool_rows(rows)[3], 1)

    def _array_oracle(self, labels):
        return _ArrayOracle(labels, len(self.labels_), self._classes, self._n_classes)

    def _should_stop(self, stop):
        if super()._should_stop(stop):
            return True
        if self.task != "compare" or self.stop_confidence is None:
            return False
        return max(self.comparison_probabilities()) >= self.stop_confidence

    @validate_args({"level": [LEVEL]})
    def summary(self, level=0.95):
        """The posterior summary of the wrapped estimator."""
        check_is_fitted(self)
        return self.estimator_.summary(level)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.positive_only = True
        tags.non_deterministic = False
        return tags


class _ArrayOracle:
    def __init__(self, labels, n, classes, n_classes):
        labels = as_label_array(labels, classes)
        if labels.ndim != 1 or len(labels) != n:
            raise ValueError(
                f"oracle as an array must hold one label per pool row ({n}); got shape "
                f"{labels.shape}."
            )
        # every label checked before any is told: a bad one changes nothing
        check_labels(labels, n, n_classes, classes, missing_label=None, name="oracle")
        self.labels = labels

    def __call__(self, indices):
        return self.labels[indices]
