"""BayesianGroupMetrics' calibrated method: the calibrated model's counts per group.

Each group's metrics come from the calibrated model of
:class:`~skassess.metrics.BayesianAccuracy` with the groups as ``group_by``,
or from the group's free alternative (its labels alone, whatever its scores:
for accuracy its rows right with a Beta(1, 1) rate, for the class its rows
predicted 1 and those predicted 0 positive with a Beta(1, 1) rate each);
which groups are pooled is a configuration drawn from its posterior
(:func:`calibrated_sums`).
"""

import itertools

import numpy as np
import pandas as pd
from scipy.special import betaln, expit, logsumexp

from ..metrics import rate_terms
from ..utils._validation import as_scalar

__all__ = ["calibrated_sums", "metric_coefficients", "prior_logit"]


def prior_logit(p):
    """The log-odds of a prior probability; +inf at 1."""
    return np.log(p) - np.log1p(-p) if p < 1 else np.inf


def metric_coefficients(name, metric, pred):
    """(a_num, b_num, a_den, b_den) with num = a_num + b_num y, per row.

    Built-in rates come from the package's rate table: numerator
    ``condition * outcome`` and denominator ``condition`` at y = 0 and y = 1.
    """
    if isinstance(metric, str):
        c0, o0 = rate_terms(metric, pred, 0)
        c1, o1 = rate_terms(metric, pred, 1)
        n0, n1, d0, d1 = c0 * o0, c1 * o1, c0, c1
    else:
        n0, d0 = (np.asarray(v, dtype=np.float64) for v in metric(pred, np.zeros(len(pred))))
        n1, d1 = (np.asarray(v, dtype=np.float64) for v in metric(pred, np.ones(len(pred))))
        if n0.shape != pred.shape or d0.shape != pred.shape:
            raise ValueError(
                f"metric {name!r} must return (numerator, denominator), one value per row."
            )
    return n0, n1 - n0, d0, d1 - d0


#: Labeled groups whose pooled-or-free choice is enumerated jointly (2^k fits of
#: the pooled model); any other labeled group keeps its more probable choice.
MAX_ENUMERATED = 5
#: A labeled group whose leave-one-group-out probability of the pooled model is
#: within this of 0 or 1 keeps its more probable choice (not enumerated).
SURE = 1e-3


def checked_slopes(name, ranges):
    """A metric's slope in ``y`` of its numerator and denominator per predicted
    class, from their ranges over the rows (:class:`GroupTotals` ``slopes``)."""
    slopes = []
    for i in (0, 1):  # numerator, denominator
        per_class = []
        for k in (0, 1):
            low, high = ranges[i, k]
            if np.isnan(low):  # no row predicted k
                per_class.append(0.0)
                continue
            if high - low > 1e-12 * max(1.0, abs(low), abs(high)):
                raise ValueError(
                    f"metrics: {name!r} has a slope in y that differs between rows "
                    f"predicted {k}; method='calibrated' models the positives per "
                    "group and predicted class, so a metric's slope may depend on "
                    "the prediction only. Use method='bayesian_calibration' for it."
                )
            per_class.append(low)
        slopes.append(per_class)
    return slopes


def _seed(rng):
    return int(rng.integers(2**31 - 1))


def calibrated_sums(metrics, totals, index, rng, *, threshold, n_draws, p_pooled):
    """Per metric and group: the labeled numerator and denominator, and joint draws
    of both on the whole file under the calibrated model (``method="calibrated"``).

    ``totals`` (:class:`~skassess.calibration._group_totals.GroupTotals`)
    holds the labeled rows and the per-group sums of all rows; ``index`` the
    groups, in the order of the results.

    Returns ``(sums, label_check)``: ``sums[name] = (num_l, den_l, num, den)``
    and the per-model, per-group check of the free alternative (None with
    ``p_pooled`` 1).

    Accuracy comes from :class:`~skassess.metrics.BayesianAccuracy`'s model of
    being right. Every other metric is affine in ``y`` with a slope that
    depends on the prediction only, so its numerator and denominator on
    the file are ``A + b_1 P_1 + b_0 P_0``, with ``P_k`` the group's
    positives predicted ``k``: one model of the class (``metric="tpr"``,
    whose counts are ``P_1`` and ``P_1 + P_0``) gives every such metric in
    the same draws. The predictions are those at ``threshold``.

    The model over the groups (``p_pooled < 1``): each group is either
    *pooled* (its rows follow the shared calibrated model) or *free* (its
    labels alone, Beta(1, 1) rates), a priori independently with probability
    ``p_pooled`` of pooled. A configuration ``I`` (which groups are pooled)
    has the posterior

        P(I | y) ∝ prod_g p^I_g (1 - p)^(1 - I_g)
                   * p(y of the pooled groups | pooled model)
                   * prod_{g free} p(y_g | free),

    the pooled model fitted to the pooled groups' labels only. Each joint
    draw takes a configuration from this posterior and every group's counts
    from that configuration's models, so each group, each difference and the
    ranking are read from one posterior. The configurations enumerated are
    those of the labeled groups whose choice is uncertain, screened by the
    leave-one-group-out Bayes factor ``p(y_g | y_-g, pooled) / p(y_g |
    free)`` (at most ``MAX_ENUMERATED`` of them; every other labeled group
    keeps its more probable choice); a group without labels leaves the
    pooled fit unchanged, so its choice is its prior's, drawn per draw.
    ``label_check`` reports the leave-one-group-out Bayes factor and the
    posterior probability of the pooled model per labeled group.
    """
    G, D = len(index), n_draws
    checks = []
    s, y, groups = totals.labeled
    codes = index.get_indexer(pd.Index(groups, dtype=object))
    pred = (s > threshold).astype(np.intp)
    n_rows, unl, constants = totals.in_order(index)
    fits = {}

    def per_group(mask):
        return np.bincount(codes[mask], minlength=G).astype(np.float64)

    right = pred == (y == 1)
    n_right, n_wrong = per_group(right), per_group(~right)
    has = n_right + n_wrong > 0  # the groups with labels
    pos = [per_group((pred == k) & (y == 1)) for k in (0, 1)]
    neg = [per_group((pred == k) & (y == 0)) for k in (0, 1)]
    log_free = {
        "accuracy": betaln(1.0 + n_right, 1.0 + n_wrong),
        "tpr": betaln(1.0 + pos[1], 1.0 + neg[1]) + betaln(1.0 + pos[0], 1.0 + neg[0]),
    }
    log_prior = (np.log(p_pooled), np.log1p(-p_pooled)) if p_pooled < 1 else (0.0, -np.inf)

    def fitted(metric, free=()):
        """The pooled model fitted to the labels of every group not in ``free``."""
        return totals.model(metric, index, free, threshold=threshold, random_state=_seed(rng))

    def drawn(est):  # joint draws of a model's counts, in our group order
        num, den = est.groupwise_counts(D, _seed(rng))
        order = est.groups_.get_indexer(index)
        return num[:, order], den[:, order]

    def free_draws(metric):
        """Draws of every group's counts under its free model."""
        if metric == "accuracy":
            theta = rng.beta(1.0 + n_right, 1.0 + n_wrong, size=(D, G))
            num = n_right + rng.binomial((unl[0] + unl[1]).astype(np.int64), theta)
            return num, np.broadcast_to(n_rows, (D, G))
        p1, p0 = (  # positives predicted 1, and all positives
            pos[k]
            + rng.binomial(
                unl[k].astype(np.int64), rng.beta(1.0 + pos[k], 1.0 + neg[k], size=(D, G))
            )
            for k in (1, 0)
        )
        return p1, p1 + p0

    def counts(metric):
        if metric in fits:
            return fits[metric]
        est = fitted(metric)
        if p_pooled >= 1:
            fits[metric] = drawn(est)
            return fits[metric]
        # Screen: log p(labels of g | the others' labels) under the pooled model
        # (the evidence with and without g's labels) against the free model's.
        log_all = est.log_marginal_likelihood()
        log_bf = np.zeros(G)
        for j in np.flatnonzero(has):
            log_bf[j] = log_all - fitted(metric, free=[j]).log_marginal_likelihood()
        log_bf -= log_free[metric]
        screen = expit(prior_logit(p_pooled) + log_bf)
        unsure = has & (screen > SURE) & (screen < 1.0 - SURE)
        doubt = np.where(unsure, np.abs(screen - 0.5), np.inf)  # the least sure first
        open_ = np.argsort(doubt, kind="stable")[: min(MAX_ENUMERATED, int(unsure.sum()))]
        fixed_free = np.flatnonzero(has & (screen <= 0.5) & ~np.isin(np.arange(G), open_))
        # Each configuration of the open groups: its pooled fit, its log posterior.
        configs, log_post, models = [], [], []
        for bits in itertools.product((True, False), repeat=open_.size):
            free = np.r_[fixed_free, open_[~np.array(bits, dtype=bool)]].astype(np.intp)
            pooled_labeled = has.copy()
            pooled_labeled[free] = False
            model = est if free.size == 0 else fitted(metric, free)
            log_post.append(
                model.log_marginal_likelihood()
                + log_free[metric][free].sum()
                + log_prior[0] * pooled_labeled.sum()
                + log_prior[1] * free.size
            )
            configs.append(pooled_labeled)
            models.append(model)
        log_post = np.array(log_post)
        post = np.exp(log_post - logsumexp(log_post))
        config = np.array(configs)  # (n_configs, G): labeled groups pooled
        marginal = post @ config
        checks.append(
            pd.DataFrame(
                {
                    "n_labeled": (n_right + n_wrong).astype(int)[has],
                    "right": n_right.astype(int)[has],
                    "log_bayes_factor": log_bf[has],
                    "p_pooled": marginal[has],
                },
                index=pd.MultiIndex.from_tuples(
                    [
                        ("accuracy" if metric == "accuracy" else "class", as_scalar(v))
                        for v in index[has]
                    ],
                    names=["model", "group"],
                ),
            )
        )
        # Each draw: a configuration from the posterior, every group's counts
        # from its models; a group without labels pooled with its prior.
        which = rng.choice(len(post), size=D, p=post)
        num, den = np.empty((D, G)), np.empty((D, G))
        for c in np.unique(which):
            rows = which == c
            c_num, c_den = drawn(models[c])
            num[rows], den[rows] = c_num[rows], c_den[rows]
        pooled = config[which] | (~has & (rng.random((D, G)) < p_pooled))
        alt_num, alt_den = free_draws(metric)
        fits[metric] = np.where(pooled, num, alt_num), np.where(pooled, den, alt_den)
        return fits[metric]

    sums = {}
    for name, metric in metrics.items():
        accuracy = isinstance(metric, str) and metric == "accuracy"
        slopes = None if accuracy else checked_slopes(name, totals.slopes[name])
        a_n, b_n, a_d, b_d = metric_coefficients(name, metric, pred)
        y1 = y == 1
        num_l = np.bincount(codes, weights=a_n + b_n * y1, minlength=G)
        den_l = np.bincount(codes, weights=a_d + b_d * y1, minlength=G)
        if accuracy:
            sums[name] = (num_l, den_l, *counts("accuracy"))
            continue
        const_n, const_d = constants[name]
        if not np.any(slopes):  # no label needed (the selection rate): exact
            zeros = np.zeros((D, G))
            sums[name] = (num_l, den_l, zeros + const_n, zeros + const_d)
            continue
        p1, positives = counts("tpr")
        p0 = positives - p1
        num = const_n + slopes[0][1] * p1 + slopes[0][0] * p0
        den = const_d + slopes[1][1] * p1 + slopes[1][0] * p0
        sums[name] = (num_l, den_l, num, den)
    return sums, pd.concat(checks) if checks else None
