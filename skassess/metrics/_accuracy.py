"""BayesianAccuracy: the posterior of accuracy (or TPR, FPR, ...) per group."""

from numbers import Integral, Real

from ..utils._docstrings import fill_doc
from ..utils._label_noise import NOISE_CONSTRAINTS
from ..utils._sklearn_compat import Hidden, Interval, StrOptions
from ._base import DEFAULT_PRIOR_STRENGTH
from ._grouping import GROUPINGS, STRATEGIES
from ._noisy_labels import DEFAULT_ANNOTATOR_PRIOR, NoisyRateMixture
from ._rates import METRICS, _RateAssessor


@fill_doc
class BayesianAccuracy(NoisyRateMixture, _RateAssessor):
    """Bayesian estimate of a black-box classifier's accuracy per group.

    Read more in the :ref:`User Guide <ug_calibrated_prior>`.

    By default (``prior="calibrated"``) each row is right with probability
    ``sigmoid(m + a + b (logit(c_i) - m) + u_g)``: a calibration map of its
    top-1 score ``c_i`` (``m``, the log-odds of the pool's mean top-1 score)
    whose shift ``a``, slope ``b`` and groups' deviations ``u_g`` are learned
    from the labels and integrated out, so the unlabeled rows count as far
    as the labels bear the scores out. A group's accuracy ``theta_g`` is
    that of its rows in the pool (labeled rows with their labels), and the
    overall accuracy is ``sum_g p_g theta_g``, with ``p_g`` the share of all
    rows, labeled or not, in group ``g``. The other priors give each
    ``theta_g`` a Beta prior that the group's labels update
    (Beta-Bernoulli conjugacy).

    Parameters
    ----------
    metric : {"accuracy", "tpr", "fnr", "tnr", "fpr", "ppv", "npv"}, default="accuracy"
        The rate to assess (``"precision"`` is ``"ppv"``, ``"recall"`` is
        ``"tpr"``). All but ``"accuracy"`` need binary scores and treat
        class 1 as positive; they are degenerate within a predicted class, so
        they need ``grouping="external"`` or ``"score_bins"``.
    grouping : {"predicted_class", "score_bins", "class_bin", "external"}, \
            default="predicted_class"
        How rows form groups: by the black box's predicted class; by bins of
        the top-1 confidence; by predicted class x confidence bin; or by
        the labels passed as ``group_by`` to :meth:`fit` (e.g. a sensitive
        attribute).
    n_bins : int, default=10
        Number of confidence bins (score-bin groupings only).
    {{binning}}
    prior : {"auto", "calibrated", "hierarchical", "informative", "uniform"} or \
            array-like, default="auto"
        ``"calibrated"`` (what ``"auto"`` means): the scores through a
        calibration map whose trust is learned from the labels. For accuracy,
        row ``i`` is right with probability ``sigmoid(m + a + b (logit(c_i) -
        m) + u_g)`` (``c_i``: its top-1 score; ``m``: the log-odds of
        the pool's mean top-1 score), with the map's shift ``a``, slope ``b`` and the groups'
        deviations ``u_g`` (Student t, 4 degrees of freedom, scale ``tau``) all
        learned from the labels and integrated out (see Notes); for the other
        rates the same map gives the probability that the row's class is
        positive, from ``c_i = p_1``. Each group's rate is that of its rows in
        the pool: labeled rows count with their labels.
        ``"hierarchical"``: the groups' rates are exchangeable, ``Beta(mu kappa, (1 - mu) kappa)``
        with a shared mean ``mu ~ Uniform(0, 1)`` and concentration ``kappa``
        in [0.5, 1e4] with ``1 / sqrt(kappa)`` uniform, both integrated out;
        it ignores the scores.
        ``"informative"``: ``Beta(N0 s_g, N0 (1 - s_g))`` with ``s_g`` the rate
        the model's own scores predict for group ``g`` (for accuracy, the mean
        top-1 score over all rows of the group, labeled or not): it trusts the
        scores as they are and warns (SkassessWarning) when the labels
        contradict them.
        ``"uniform"``: ``Beta(N0/2, N0/2)`` in every group. An array of
        shape (2,) or (n_groups, 2) gives ``(alpha, beta)`` directly. With an
        array, ``"calibrated"`` or ``"hierarchical"``, ``prior_strength`` is
        not used.
    prior_strength : float, default=2.0
        ``N0``, the prior's weight in pseudo-labels (the same default for
        every conjugate estimator).
    {{classes}}
    {{missing_label}}
    departure_threshold : float in (0, 1) or None, default=0.05
        With ``prior="calibrated"`` and accuracy: a group whose labels
        disagree with the shared map, its posterior predictive p-value
        (``departure_``) below this, is flagged in :meth:`summary`, and its
        interval is widened to hold the interval of its labels alone too
        (partial pooling pulls a group far from the map toward it; its own
        labels do not). None: no check.
    {{label_noise}}
    random_state : int, RandomState instance or None, default=None
        Seed of the Monte Carlo draws of overall quantities.

    Attributes
    ----------
    posterior_ : BetaPosterior
        Posterior of the rate per group.
    prior_ : BetaPosterior
        The prior it started from.
    groups_ : pandas.Index
        Label of each group.
    group_weights_ : ndarray of shape (n_groups,)
        Share ``p_g`` of each group among all rows seen.
    dispersion_ : float or ndarray of shape (2,)
        With ``prior="calibrated"`` only: the labels' dispersion around the
        calibration map, the posterior mean of the ratio (about 1 where the
        map's shape holds, more with few informative labels; for TPR, FPR,
        ... one per predicted class's map). Each posterior draw takes its own
        ratio ``R`` and, where it is above 1, spreads the unlabeled rows'
        outcomes by its square root (see Notes). With labels given a
        ``design_weight``: the design's (sandwich) variance over the model's,
        which also narrows the draws along the pool's total where it is below
        1.
    n_labeled_ : ndarray of shape (n_groups,)
        Labeled rows on which the metric is defined, per group (weighted).
    n_success_ : ndarray of shape (n_groups,)
        Among them, rows where the outcome happened (e.g. the model was right).
    n_rows_ : ndarray of shape (n_groups,)
        All rows per group (weighted).
    departure_ : pandas.Series
        With ``prior="calibrated"``, accuracy and a ``departure_threshold``:
        each group's posterior predictive p-value of its labels under the
        shared map (a new group's deviation drawn from the groups' spread;
        1 without labels). Small values say the labels disagree with the
        map more than the groups' spread allows.
    {{fitted_rows}}
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.
    {{label_noise_fitted}}

    See Also
    --------
    BayesianCalibrationError : Calibration error from the same Beta model per score bin.
    BayesianConfusionMatrix : Dirichlet posterior over the true class per predicted class.
    compare_groups : Posterior of the difference between two groups, with a ROPE.

    Notes
    -----
    :meth:`predict` gives each row its group's posterior mean rate (for
    accuracy: the probability that the black box is right on the row) and
    :meth:`predict_proba` the columns ``[1 - rate, rate]``. With ``r_g``
    correct predictions among ``n_g`` labeled rows of group ``g``, the
    posterior is ``Beta(alpha_g + r_g, beta_g + n_g - r_g)``. Rates
    conditioned on the true class (TPR, FPR, ...) are weighted in the overall
    rate by ``p_g P(y = c | g)``, with a Beta posterior for the class share
    ``P(y = c | g)`` (``condition_posterior_``) drawn jointly.

    With ``prior="calibrated"`` the score of each row enters through the
    calibration map, so an unlabeled row of high confidence counts as more
    likely right than one of low confidence, as far as the labels show the
    scores to be informative. For TPR, FPR, PPV, NPV, ... the map is of the
    positive class's score ``p_1``, so it recalibrates the scores (with a
    departure per group, as in Bayesian calibration for fairness [2]_); a
    group's rate is the ratio of its pool's counts (e.g. positives predicted
    positive over positives), the classes of its unlabeled rows drawn from
    the map, so every labeled row informs the map, whether or not the
    rate's condition holds on it. ``condition_posterior_`` is then not used.
    The priors are centred on the scores as they are and weak: the pool's
    level ``a + sum_g p_g u_g ~ N(0, 2^2)``, ``b ~ N(1, 1)``, ``tau``
    half-normal of scale 1. If the errors ignore the scores the
    labels drive ``b`` to 0 and the estimate is the label rate's; if the
    groups are miscalibrated differently ``tau`` grows and each group leans on
    its own labels; if the map holds, the overall interval narrows to the
    map's uncertainty (about prediction-powered inference's). The deviations
    are integrated by adaptive Gauss-Hermite quadrature, ``tau`` and ``(a,
    b)`` on grids, and the unlabeled rows' outcomes are drawn. Where the map's
    shape is wrong in a way no shift, slope or deviation follows, the labels
    stray from the posterior-mean map more than it allows: their dispersion
    ``dispersion_`` (``sum (z - p)^2 / sum p (1 - p)`` over the labeled rows,
    times ``n / (n - 2)``, quasi-likelihood's Pearson ratio) then spreads the
    draws of the unlabeled rows' outcomes about their mean by its square
    root; the ratio is integrated over its posterior (each draw takes its
    own), as few labels measure it poorly. See the user guide, *The
    calibrated prior*, for its measured coverage. Its summaries come from
    4,000 draws from ``random_state`` (fresh ones when it is None).

    With ``prior="hierarchical"`` each group's posterior is a mixture, over
    the grid of ``(mu, kappa)``, of conjugate posteriors. ``posterior_`` is
    the Beta per group with the mixture's mean and variance (``prior_``: the
    pseudo-counts that give it, i.e. what the other groups lend), which
    :meth:`summary`, :meth:`predict` and the samplers read; the draws of
    :meth:`overall_samples` and :meth:`groupwise_samples` come from the
    mixture, so that the groups move together through ``mu``. The uniform
    prior treats the groups as unrelated: with many groups and few labels
    each, its overall interval is centred on a rate pulled toward 1/2 in
    every group, and it can miss the truth at any level (see the user
    guide). :meth:`log_marginal_likelihood` is then that of the hierarchical
    model.

    References
    ----------
    .. [1] D. Ji, R. L. Logan IV, P. Smyth, M. Steyvers, "Active Bayesian
       Assessment of Black-Box Classifiers", AAAI 2021.
    .. [2] D. Ji, P. Smyth, M. Steyvers, "Can I Trust My Fairness Metric?
       Assessing Fairness with Unlabeled Data and Bayesian Inference",
       NeurIPS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess import BayesianAccuracy
    >>> scores = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.4, 0.6]])
    >>> y = np.array([0, 1, 1, -1])  # the last row is unlabeled
    >>> est = BayesianAccuracy(random_state=0).fit(scores, y)
    >>> est.summary()[["n_labeled", "weight", "mean"]].round(3)
                     n_labeled  weight  mean
    predicted_class
    0                      2.0     0.5  0.50
    1                      1.0     0.5  0.78
    >>> round(est.overall_mean(), 3)
    0.64
    """

    _checks_prior_conflict = True

    _parameter_constraints = {
        **_RateAssessor._parameter_constraints,
        "prior": [
            StrOptions({"auto", "calibrated", "uniform", "informative", "hierarchical"}),
            "array-like",
        ],
        "metric": [StrOptions(set(METRICS))],
        "grouping": [StrOptions(set(GROUPINGS))],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "binning": [StrOptions(set(STRATEGIES))],
        "strategy": [StrOptions(set(STRATEGIES)), Hidden(StrOptions({"deprecated"}))],
        "departure_threshold": [Interval(Real, 0, 1, closed="neither"), None],
        **NOISE_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        metric="accuracy",
        grouping="predicted_class",
        n_bins=10,
        binning="uniform",
        strategy="deprecated",
        prior="auto",
        prior_strength=DEFAULT_PRIOR_STRENGTH,
        classes=None,
        missing_label=-1,
        departure_threshold=0.05,
        label_noise="auto",
        annotator_prior=DEFAULT_ANNOTATOR_PRIOR,
        slip_evidence="bounds",
        n_imputations=20,
        random_state=None,
    ):
        self.metric = metric
        self.grouping = grouping
        self.n_bins = n_bins
        self.binning = binning
        self.strategy = strategy
        self.prior = prior
        self.prior_strength = prior_strength
        self.classes = classes
        self.missing_label = missing_label
        self.departure_threshold = departure_threshold
        self.label_noise = label_noise
        self.annotator_prior = annotator_prior
        self.slip_evidence = slip_evidence
        self.n_imputations = n_imputations
        self.random_state = random_state
