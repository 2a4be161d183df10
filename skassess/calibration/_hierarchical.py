"""HierarchicalBetaCalibrator: per-group beta calibration with shared hyperpriors."""

from numbers import Integral, Real
from types import SimpleNamespace

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..exceptions import SkassessWarning
from ..utils._deprecation import warn_deprecated
from ..utils._groups import GroupEncoder, check_group_by
from ..utils._params import LEVEL, N_DRAWS, atomic, reset_fitted, validate_args, validated
from ..utils._sklearn_compat import HasMethods, Hidden, Interval, MissingValues, StrOptions
from ..utils._validation import EPS, check_classes, check_labels, validate_scores
from ..utils._warnings import warn
from ._hierarchical_model import N_NODES, _BetaCalibrationModel, append_steps
from ._maps import MAPS, log_features
from ._mcmc import warn_convergence
from ._samplers import EmceeSampler, NUTSSampler

#: The sampler's parameters the calibrator took before ``sampler=`` objects.
DEPRECATED_SCHEDULE = (
    "n_chains",
    "n_walkers",
    "n_burn",
    "n_steps",
    "max_steps",
    "target_ess",
    "progress",
    "n_jobs",
)

TARGETS = ("auto", "binary", "top_label")


class HierarchicalBetaCalibrator(_BetaCalibrationModel, TransformerMixin, BaseEstimator):
    """Per-group beta calibration with shared hyperpriors, fitted by MCMC.

    Read more in the :ref:`User Guide <ug_fairness>`.

    Each group ``g`` (a sensitive attribute, the predicted class, ...) has its
    own beta calibration map ``f(s; a_g, b_g, c_g)``; the groups' parameters
    are drawn from a common population, so a group with few labels borrows
    strength from the others. Rows whose label is ``-1`` do not enter the
    likelihood; they only define the groups.

    Parameters
    ----------
    map : {"beta", "llo", "temperature"}, default="beta"
        The calibration map: beta calibration, its linear-in-log-odds special
        case ``a = b``, or temperature scaling ``a = b, c = 0``.
    target : {"auto", "binary", "top_label"}, default="auto"
        ``"binary"``: X is P(y = 1) (1-D or two columns) and the map gives a
        calibrated P(y = 1). ``"top_label"``: the map calibrates the top-1
        confidence into P(prediction correct). ``"auto"``: binary for 1-D X
        or two columns, top-label for three or more.
    hierarchical : bool, default=True
        False gives every group independent priors ``log a_g, log b_g ~ N(0,
        0.4)``, ``c_g ~ N(0, 2)`` (times ``prior_scale``): no pooling.
    prior_scale : float, default=1.0
        Multiplies every hyperprior scale.
    eps : float, default=1e-3
        Scores are clipped to ``[eps, 1 - eps]`` before their logarithms.
    n_draws : int, default=1000
        Posterior draws (equally spaced along the chain) used by
        :meth:`transform` and :meth:`sample`.
    classes : array-like of shape (n_classes,), default=None
        Label of each score column, when ``y`` holds labels.
    missing_label : int, float, str or None, default=-1
        The value of ``y`` that marks an unlabeled row, besides NaN, None and
        ``pd.NA``, which always mark one.
    random_state : int, RandomState instance or None, default=None
    sampler : EmceeSampler or NUTSSampler, default=None
        How the posterior is drawn, and for how long. None:
        ``EmceeSampler()``: ensembles of emcee walkers on the model with the
        population parameters integrated out (see Notes).
        :class:`~skassess.calibration.NUTSSampler` runs the no-U-turn sampler
        of the optional ``mici`` package on the non-centered model, faster
        with many groups.
    n_chains, n_walkers, n_burn, n_steps, max_steps, target_ess, progress, n_jobs
        Deprecated: the sampler's parameters, now given to it
        (``sampler=EmceeSampler(n_steps=500)``).

        .. deprecated:: 0.1
           They will be removed in 0.2, and so will ``sampler="emcee"`` and
           ``"nuts"`` (use the sampler objects).

    Attributes
    ----------
    groups_ : pandas.Index
        The groups seen in :meth:`fit` (labeled or not).
    classes_ : ndarray of shape (n_classes,)
        Label of each score column.
    target_ : {"binary", "top_label"}
    draws_ : ndarray of shape (n_samples, n_groups, 3)
        Every kept posterior sample of ``(a_g, b_g, c_g)``.
    hyper_draws_ : pandas.DataFrame or None
        Samples of the population parameters ``mu_*`` and ``sigma_*``
        (hierarchical model only).
    rhat_ : pandas.Series
        Rank-normalized split R-hat of every group parameter and of each
        ``mu`` (the ensembles as chains). ``sigma``, drawn exactly given each
        sample, converges with the group parameters.
    ess_ : pandas.Series
        Effective sample size of the same parameters.
    n_labeled_ : ndarray of shape (n_groups,)
        Labeled rows per group.
    n_features_in_ : int
        Number of score columns of ``X`` (1 for a 1-D ``X``).

    Notes
    -----
    The model (Ji, Smyth, Steyvers 2020, eqs. 4.5-4.11), with ``t_i`` the
    observed outcome (``y_i`` for binary scores, "prediction correct" for
    top-label confidences)::

        t_i ~ Bernoulli(f(s_i; a_g, b_g, c_g))
        log a_g ~ N(mu_a, sigma_a),  log b_g ~ N(mu_b, sigma_b),  c_g ~ N(mu_c, sigma_c)
        mu_a, mu_b ~ N(0, 0.4),  mu_c ~ N(0, 2)
        sigma_a, sigma_b ~ half-N(0, 0.15),  sigma_c ~ half-N(0, 0.75)

    (scales times ``prior_scale``). The population parameters are
    integrated out: ``mu`` exactly (given sigma, the group parameters are
    jointly normal with covariance ``sigma^2 I + 0.4^2 11'``) and each sigma
    on 64 nodes of equal prior mass. The sampler then moves in the group
    parameters alone, a posterior without the funnel that makes
    hierarchical models hard to sample whether the labels are few (centered
    form) or many (non-centered form). Draws of ``mu`` and ``sigma`` are
    then drawn given each sample (``hyper_draws_``). The sampler is
    ``n_chains`` independent emcee ensembles with differential-evolution
    moves; the log density is vectorized over walkers. A group without
    labeled rows gets its parameters from the population level (from its independent prior when
    ``hierarchical=False``). A ConvergenceWarning is raised when an R-hat
    exceeds 1.01 or an ESS is below 100.

    References
    ----------
    D. Ji, P. Smyth, M. Steyvers, "Can I Trust My Fairness Metric? Assessing
    Fairness with Unlabeled Data and Bayesian Inference", NeurIPS 2020.
    M. Kull, T. Silva Filho, P. Flach, "Beta calibration", AISTATS 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.calibration import HierarchicalBetaCalibrator
    >>> rng = np.random.default_rng(0)
    >>> s = rng.uniform(0.05, 0.95, 400)
    >>> y = (rng.uniform(size=400) < s**2).astype(int)  # the scores are too high
    >>> groups = np.repeat(["a", "b"], 200)
    >>> cal = HierarchicalBetaCalibrator(random_state=0).fit(s, y, group_by=groups)
    >>> bool(cal.rhat_.max() <= 1.01 and cal.ess_.min() >= 400)
    True
    >>> p = cal.transform(s, group_by=groups)
    >>> p.shape, list(cal.get_feature_names_out())
    ((400, 1), ['proba_1'])
    >>> bool(abs(p.mean() - (s**2).mean()) < 0.05)
    True
    """

    def __init__(
        self,
        map="beta",
        *,
        target="auto",
        hierarchical=True,
        prior_scale=1.0,
        eps=EPS,
        n_draws=1000,
        classes=None,
        missing_label=-1,
        random_state=None,
        sampler=None,
        n_chains="deprecated",
        n_walkers="deprecated",
        n_burn="deprecated",
        n_steps="deprecated",
        max_steps="deprecated",
        target_ess="deprecated",
        progress="deprecated",
        n_jobs="deprecated",
    ):
        self.map = map
        self.target = target
        self.hierarchical = hierarchical
        self.prior_scale = prior_scale
        self.eps = eps
        self.n_chains = n_chains
        self.n_walkers = n_walkers
        self.n_burn = n_burn
        self.n_steps = n_steps
        self.max_steps = max_steps
        self.target_ess = target_ess
        self.n_draws = n_draws
        self.classes = classes
        self.missing_label = missing_label
        self.random_state = random_state
        self.progress = progress
        self.sampler = sampler
        self.n_jobs = n_jobs

    _parameter_constraints = {
        "map": [StrOptions(set(MAPS))],
        "target": [StrOptions(set(TARGETS))],
        "hierarchical": ["boolean"],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "eps": [Interval(Real, 0, 0.5, closed="neither")],
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "classes": ["array-like", None],
        "missing_label": [MissingValues()],
        "random_state": ["random_state"],
        "sampler": [
            HasMethods(["draw", "check"]),
            None,
            Hidden(StrOptions({"emcee", "nuts"})),
        ],
        **{
            name: [*constraints, Hidden(StrOptions({"deprecated"}))]
            for name, constraints in {
                **EmceeSampler._parameter_constraints,
                **NUTSSampler._parameter_constraints,
            }.items()
        },
    }

    def _sampler(self):
        """The sampler object, from ``sampler`` and the deprecated schedule parameters."""
        sampler = self.sampler
        if isinstance(sampler, str):
            cls = EmceeSampler if sampler == "emcee" else NUTSSampler
            warn_deprecated(
                f"HierarchicalBetaCalibrator(sampler={sampler!r})",
                f"sampler={cls.__name__}()",
            )
            sampler = cls()
        sampler = EmceeSampler() if sampler is None else clone(sampler)
        old = {k: getattr(self, k) for k in DEPRECATED_SCHEDULE if getattr(self, k) != "deprecated"}
        if old:
            given = ", ".join(f"{k}={v!r}" for k, v in old.items())
            warn_deprecated(
                f"HierarchicalBetaCalibrator({given})",
                f"sampler={type(sampler).__name__}({given})",
            )
            sampler.set_params(**{k: v for k, v in old.items() if k in sampler.get_params()})
        return sampler

    def _scores(self, X, y_pred, reset):
        """(score to calibrate, predicted class, score matrix) of X."""
        scores, pred, conf = validate_scores(self, X, y_pred=y_pred, reset=reset)
        K = scores.shape[1]
        if reset:
            target = self.target
            if target == "auto":
                target = "binary" if K == 2 else "top_label"
            if target == "binary" and K != 2:
                raise ValueError(
                    f"target='binary' needs P(y = 1) (1-D X or two columns); X has {K} columns."
                )
            self.n_classes_ = K
            self.classes_ = np.arange(K) if self.classes is None else check_classes(self.classes, K)
            self.target_ = target
        s = scores[:, 1] if self.target_ == "binary" else conf
        return s, pred, scores

    def _classes(self, n_classes):
        return None if self.classes is None else check_classes(self.classes, n_classes)

    def _group_codes(self, group_by, pred, n, reset):
        if group_by is None:
            labels = pred if self.target_ == "top_label" else np.zeros(n, dtype=np.intp)
        else:
            labels = check_group_by(group_by, n)
        if reset:
            if group_by is None and self.target_ == "top_label":
                self._encoder = GroupEncoder("group").fit(np.arange(self.n_classes_))
            else:
                self._encoder = GroupEncoder("group").fit(labels)
            self.groups_ = self._encoder.categories_
        return self._encoder.transform(labels, name="group_by")

    # --------------------------------------------------------------- fitting
    @validated
    @atomic(deep=False)
    def fit(self, X, y=None, *, group_by=None, y_pred=None):
        """Sample the posterior of the calibration maps from the labeled rows.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, n_classes)
            Black-box scores: P(y = 1), or class probabilities.
        y : array-like of shape (n_samples,)
            True labels, ``missing_label`` for unlabeled rows. Required: None
            raises a ValueError (mark every row unlabeled for the prior
            predictive).
        group_by : array-like of shape (n_samples,), default=None
            Group of each row. None: the predicted class (top-label) or a
            single group (binary).
        y_pred : array-like of shape (n_samples,), default=None
            The black box's predicted labels; None: the argmax of ``X``. For
            top-label calibration it picks the confidence that is calibrated.

        Returns
        -------
        self : HierarchicalBetaCalibrator
        """
        reset_fitted(self)
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None; "
                "mark the rows without a label with missing_label."
            )
        s, pred, scores = self._scores(X, y_pred, reset=True)
        n = len(s)
        y = check_labels(
            y, n, scores.shape[1], self._classes(scores.shape[1]), missing_label=self.missing_label
        )
        codes = self._group_codes(group_by, pred, n, reset=True)
        n_dim = len(self.groups_) * len(MAPS[self.map])
        sampler = self._sampler()
        sampler.check(n_dim, f"{len(self.groups_)} groups x {len(MAPS[self.map])}")
        labeled = y >= 0
        t = (y == 1) if self.target_ == "binary" else (y == pred)
        t = t[labeled].astype(np.float64)
        if labeled.sum() == 0:
            warn(
                "No labeled rows (every y is missing_label): the calibration maps follow "
                "the prior (prior predictive).",
                SkassessWarning,
            )
        elif t.min() == t.max():
            outcome = "y = 1" if self.target_ == "binary" else "correct"
            warn(
                f"All {len(t)} labeled rows have the same outcome ({outcome}: {bool(t[0])}); "
                "the calibration map is weakly identified and leans on the prior.",
                SkassessWarning,
            )
        ls, l1s = log_features(s[labeled], self.eps)
        self._data = (codes[labeled], ls, l1s, t)
        self._constants = None
        self.n_labeled_ = np.bincount(codes[labeled], minlength=len(self.groups_))
        rng = np.random.default_rng(
            check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        )
        stored = {}

        def monitor(kept):  # the quantities rhat_ and ess_ report
            # A check after more steps sees the earlier steps again: their draws
            # (mu's too, drawn once per sample) are kept, and only the new steps'
            # are computed.
            seen = stored.get("kept")
            if seen is None or not np.array_equal(kept[:, : seen.shape[1]], seen):
                stored.update(self._constrained(kept, rng), kept=kept)
            elif kept.shape[1] > seen.shape[1]:
                new = self._constrained(kept[:, seen.shape[1] :], rng)
                stored.update(append_steps(stored, new, kept.shape), kept=kept)
            return stored["monitored"]

        self._noncentered = sampler.parametrization == "noncentered"
        model = self._nuts_model(codes[labeled], ls, l1s, t)
        target = SimpleNamespace(
            n_dim=n_dim,
            log_prob=self._log_prob,
            initial=self._initial,
            log_prob_grad=model.log_prob_grad,
            nuts_initial=model.initial,
        )
        _, rhat, ess = sampler.draw(target, rng, monitor)
        self.draws_, self.hyper_draws_ = stored["draws"], stored["hyper"]
        self.rhat_ = pd.Series(rhat, index=stored["columns"], name="rhat")
        self.ess_ = pd.Series(ess, index=stored["columns"], name="ess")
        del self._data, self._constants, self._noncentered
        many = isinstance(sampler, EmceeSampler) and n_dim > 30
        warn_convergence(
            self.rhat_.to_numpy(),
            self.ess_.to_numpy(),
            list(self.rhat_.index),
            type(self).__name__,
            hint=", or use sampler=NUTSSampler() (faster with many groups)" if many else "",
        )
        return self

    @validate_args({"n_draws": [N_DRAWS, None]})
    def sample(self, X, *, group_by=None, y_pred=None, n_draws=None):
        """Posterior draws of the calibrated probability of every row.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, n_classes)
        group_by : array-like of shape (n_samples,), default=None
        y_pred : array-like of shape (n_samples,), default=None
        n_draws : int, default=None
            None: ``self.n_draws``. Draws are equally spaced along the chain.

        Returns
        -------
        draws : ndarray of shape (n_draws, n_samples)
            Calibrated P(y = 1) (binary) or P(prediction correct) (top-label).
        """
        check_is_fitted(self, "draws_")
        n_draws = self.n_draws if n_draws is None else n_draws
        s, pred, _ = self._scores(X, y_pred, reset=False)
        codes = self._group_codes(group_by, pred, len(s), reset=False)
        return self._sample_rows(s, codes, self._thinned(n_draws))

    @validate_args({"n_draws": [N_DRAWS, None]})
    def sample_sums(self, X, weights, *, group_by=None, y_pred=None, n_draws=None):
        """Posterior draws of weighted sums of the calibrated probabilities, per group.

        ``out[d, g, j] = sum_i weights[i, j] p_i^(d)`` over the rows ``i`` of
        group ``g``, with ``p_i^(d)`` what :meth:`sample` draws; the draws are
        the same maps as :meth:`sample`'s, so sums of blocks of rows add up.
        Memory and time do not grow with ``n_draws x n_samples``: when a block
        has more rows than ``N_NODES`` per group, each row's weight is split
        between the two nearest of ``N_NODES`` nodes equally spaced in
        ``logit(s)`` over the clipped range, and the maps are evaluated at the
        nodes (exact for a map linear between nodes; the error of a row is at
        most ``h^2 / 8 * max|f''| <= 2e-7 * (max(a, b)^2 + |a - b|)`` with the
        node spacing ``h = 2 logit(1 - eps) / (N_NODES - 1)``, far below the
        Monte Carlo error of the draws).

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, n_classes)
        weights : array-like of shape (n_samples, n_weights)
            Finite weights of each row.
        group_by : array-like of shape (n_samples,), default=None
        y_pred : array-like of shape (n_samples,), default=None
        n_draws : int, default=None
            None: ``self.n_draws``.

        Returns
        -------
        sums : ndarray of shape (n_draws, n_groups, n_weights)
            Groups in the order of ``groups_``.
        """
        check_is_fitted(self, "draws_")
        n_draws = self.n_draws if n_draws is None else n_draws
        s, pred, _ = self._scores(X, y_pred, reset=False)
        codes = self._group_codes(group_by, pred, len(s), reset=False)
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim != 2 or weights.shape[0] != len(s) or not np.isfinite(weights).all():
            raise ValueError(
                f"weights must be a finite array of shape (n_samples, n_weights) = "
                f"({len(s)}, m); got shape {weights.shape}."
            )
        draws = self._thinned(n_draws)
        G, m = len(self.groups_), weights.shape[1]
        out = np.zeros((len(draws), G, m))
        present = np.unique(codes)
        if len(s) <= N_NODES * len(present):  # fewer rows than nodes: exactly
            block = max(1, 2**22 // len(draws))
            for start in range(0, len(s), block):
                rows = slice(start, start + block)
                p = self._sample_rows(s[rows], codes[rows], draws)
                for g in np.unique(codes[rows]):
                    mine = codes[rows] == g
                    out[:, g, :] += p[:, mine] @ weights[rows][mine]
            return out
        node_s, position = self._nodes(s)
        k = np.minimum(position.astype(np.intp), N_NODES - 2)
        frac = (position - k)[:, None]
        for g in present:
            rows = codes == g
            w = np.zeros((N_NODES, m))
            for j in range(m):
                wj = weights[rows, j]
                w[:, j] = np.bincount(k[rows], wj * (1.0 - frac[rows, 0]), N_NODES) + np.bincount(
                    k[rows] + 1, wj * frac[rows, 0], N_NODES
                )
            used = np.flatnonzero(np.any(w != 0.0, axis=1))
            step = max(1, 2**21 // len(draws))  # bounded (n_draws, step) temporaries
            for start in range(0, len(used), step):
                nodes = used[start : start + step]
                p = self._sample_rows(node_s[nodes], np.full(len(nodes), g), draws)
                out[:, g, :] += p @ w[nodes]
        return out

    def transform(self, X, *, group_by=None, y_pred=None):
        """Posterior-mean calibrated scores, one column per input column.

        For binary scores the columns are the calibrated ``P(y = 0)`` and
        ``P(y = 1)`` (or ``P(y = 1)`` alone for a 1-D or one-column ``X``).
        For top-label scores the predicted class's column holds the
        calibrated confidence ``P(prediction correct)`` and the other classes
        share the rest in proportion to their scores. The output is a plain
        array (a DataFrame with ``set_output(transform="pandas")``) named by
        :meth:`get_feature_names_out`; its argmax need not be the black box's
        prediction, so a metric estimator after this step needs the
        prediction as ``y_pred`` (routed with ``set_fit_request(y_pred=True)``).

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, n_classes)
        group_by : array-like of shape (n_samples,), default=None
        y_pred : array-like of shape (n_samples,), default=None
            The black box's predictions; None: the argmax of ``X``.

        Returns
        -------
        calibrated : ndarray of shape (n_samples, n_features_in)
            One column per column of ``X`` (the attribute ``n_features_in_``).
        """
        check_is_fitted(self, "draws_")
        s, pred, scores = self._scores(X, y_pred, reset=False)
        codes = self._group_codes(group_by, pred, len(s), reset=False)
        draws = self._thinned(self.n_draws)
        p = np.empty(len(s))
        for start in range(0, len(s), 4096):  # bounded (n_draws, block) temporaries
            rows = slice(start, start + 4096)
            p[rows] = self._sample_rows(s[rows], codes[rows], draws).mean(axis=0)
        if self.target_ == "binary":
            return p[:, None] if self.n_features_in_ == 1 else np.column_stack([1.0 - p, p])
        rest = 1.0 - s
        with np.errstate(invalid="ignore", divide="ignore"):
            factor = np.where(rest > 0, (1.0 - p) / rest, 0.0)
        out = scores * factor[:, None]
        out[np.arange(len(s)), pred] = p
        others = rest <= 0  # the model put all its mass on one class
        if others.any():
            K = scores.shape[1]
            out[others] = ((1.0 - p[others]) / (K - 1))[:, None]
            out[np.flatnonzero(others), pred[others]] = p[others]
        return out

    def fit_transform(self, X, y=None, *, group_by=None, y_pred=None):
        """Fit, then transform the same rows (with the same groups and predictions)."""
        return self.fit(X, y, group_by=group_by, y_pred=y_pred).transform(
            X, group_by=group_by, y_pred=y_pred
        )

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: ``proba_<class>`` per column.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Ignored (the names follow the classes).

        Returns
        -------
        names : ndarray of str
        """
        check_is_fitted(self, "draws_")
        classes = self.classes_[1:] if self.n_features_in_ == 1 else self.classes_
        return np.asarray([f"proba_{c}" for c in classes], dtype=object)

    @validate_args({"level": [LEVEL]})
    def summary(self, level=0.95):
        """Posterior mean, interval, R-hat and ESS of every sampled parameter."""
        check_is_fitted(self, "draws_")
        lo, hi = (1 - level) / 2, (1 + level) / 2
        rows = {}
        names = MAPS[self.map]
        for name in names:
            for j, group in enumerate(self.groups_):
                rows[f"{name}[{group}]"] = self.draws_[:, j, "abc".index(name)]
        if self.hyper_draws_ is not None:
            rows.update({k: v.to_numpy() for k, v in self.hyper_draws_.items()})
        table = pd.DataFrame(
            {
                "mean": [v.mean() for v in rows.values()],
                "lower": [np.quantile(v, lo) for v in rows.values()],
                "upper": [np.quantile(v, hi) for v in rows.values()],
            },
            index=pd.Index(list(rows), name="parameter"),
        )
        table["rhat"] = self.rhat_
        table["ess"] = self.ess_
        return table

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.target_tags.required = True
        return tags
