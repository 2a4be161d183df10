"""BayesianGroupMetrics' methods, one small strategy object each.

A method does two things. :meth:`GroupMethod.sums` turns the checked rows
into per-metric sums ``(num_l, den_l, num, den)``: the labeled rows'
numerator and denominator per group, and draws of both on the whole file
(``None`` for a method that uses the labels alone). :meth:`GroupMethod.draws`
turns a metric's sums into its posterior draws in each reported unit (each
group, and ``"rest"``), or None for a method without a posterior.
:class:`~skassess.calibration.BayesianGroupMetrics` checks the input, builds
the units and reports; the model lives here.
"""

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import betaln, expit, logsumexp
from sklearn.base import clone

from ..utils._validation import as_scalar
from ..utils._warnings import warn
from ._group_calibrated import calibrated_sums, metric_coefficients, prior_logit
from ._hierarchical import HierarchicalBetaCalibrator

__all__ = ["GROUP_METHODS", "GroupRows", "group_method", "labeled_sums"]

#: Floats in one block of calibrated draws (n_draws x rows): 32 MB.
DRAW_BLOCK = 2**22


@dataclass(frozen=True)
class GroupRows:
    """The checked input of a fit: P(y = 1) per row, labels coded 0 / 1 with -1
    for unlabeled rows, each row's group code and raw group, and the groups."""

    s: np.ndarray
    y: np.ndarray
    codes: np.ndarray
    groups: np.ndarray
    index: pd.Index

    @property
    def labeled(self):
        return self.y >= 0

    @classmethod
    def labeled_of(cls, totals, index):
        """The labeled rows of :class:`~skassess.calibration._group_totals.GroupTotals`."""
        s, y, groups = totals.labeled
        return cls(s, y, index.get_indexer(pd.Index(groups, dtype=object)), groups, index)


def labeled_sums(metrics, rows, threshold):
    """Per metric: the labeled rows' numerator and denominator per group."""
    G = len(rows.index)
    lab = rows.labeled
    pred = (rows.s > threshold).astype(np.intp)
    y1 = rows.y == 1
    sums = {}
    for name, metric in metrics.items():
        a_n, b_n, a_d, b_d = metric_coefficients(name, metric, pred)
        sums[name] = [
            np.bincount(rows.codes[lab], weights=(a + b * y1)[lab], minlength=G)
            for a, b in ((a_n, b_n), (a_d, b_d))
        ]
    return sums


class GroupMethod:
    """One way of turning labeled and unlabeled rows into per-group metric draws.

    Subclasses set ``name``, ``p_pooled_auto`` (what ``p_pooled="auto"``
    means), ``has_posterior`` and ``needs_rows``, and define :meth:`sums` and
    :meth:`draws`. :meth:`sums` reads :class:`GroupRows` (every row) when
    ``needs_rows``, else the per-group sums of
    :class:`~skassess.calibration._group_totals.GroupTotals`, which add over
    partitions.
    After :meth:`sums`, ``calibrator_`` and ``label_check_`` hold what the
    estimator reports (None where the method has neither).
    """

    name = None
    p_pooled_auto = 1.0
    has_posterior = True
    needs_rows = False

    def __init__(self, *, threshold, n_draws, p_pooled, unlabeled="sampled", calibrator=None):
        self.threshold = threshold
        self.n_draws = n_draws
        self.p_pooled = self.p_pooled_auto if p_pooled == "auto" else p_pooled
        self.unlabeled = unlabeled
        self.calibrator = calibrator
        self.calibrator_ = self.label_check_ = None

    def sums(self, metrics, data, rng, index):  # pragma: no cover - abstract
        """Per metric ``(num_l, den_l, num, den)`` from ``data`` (GroupRows or
        GroupTotals, see ``needs_rows``), per group of ``index``."""
        raise NotImplementedError

    def draws(self, name, sums, member, rng):  # pragma: no cover - abstract
        """Draws of the metric ``name`` per reported unit, shape (n_draws, units),
        from its per-group ``sums``; ``member`` (groups x units) says which
        groups make each unit."""
        raise NotImplementedError

    @staticmethod
    def ratio(num, den, member):
        """The units' num / den per draw, NaN where the denominator is zero."""
        num, den = num @ member, den @ member
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / den, np.nan)


class Frequentist(GroupMethod):
    """The labeled rows' empirical rate; no posterior."""

    name = "frequentist"
    has_posterior = False

    def sums(self, metrics, totals, rng, index):
        rows = GroupRows.labeled_of(totals, index)
        return {
            name: (*pair, None, None)
            for name, pair in labeled_sums(metrics, rows, self.threshold).items()
        }

    def draws(self, name, sums, member, rng):
        return None


class BetaBinomial(Frequentist):
    """A Beta(1, 1) prior per reported unit, updated with its labeled rows alone."""

    name = "beta_binomial"
    has_posterior = True

    def draws(self, name, sums, member, rng):
        num_l, den_l = sums[0] @ member, sums[1] @ member
        if np.any(num_l > den_l):
            raise ValueError(
                f"metric {name!r}: beta-binomial needs numerators no larger than "
                "denominators (0/1 row terms)."
            )
        return rng.beta(1.0 + num_l, 1.0 + den_l - num_l, size=(self.n_draws, member.shape[1]))


class Calibrated(GroupMethod):
    """The calibrated model of BayesianAccuracy with the groups as ``group_by``
    (:func:`~skassess.calibration._group_calibrated.calibrated_sums`)."""

    name = "calibrated"
    #: even prior odds: the labels' Bayes factor alone decides (see ``p_pooled``)
    p_pooled_auto = 0.5

    def sums(self, metrics, totals, rng, index):
        sums, self.label_check_ = calibrated_sums(
            metrics,
            totals,
            index,
            rng,
            threshold=self.threshold,
            n_draws=self.n_draws,
            p_pooled=self.p_pooled,
        )
        return sums

    def draws(self, name, sums, member, rng):
        _, _, num, den = sums
        draws = self.ratio(num, den, member)
        # A draw in which a unit's condition holds on no row (TPR without positives)
        # takes the file's rate of the same draw, as BayesianAccuracy does; uniform
        # where the file's is undefined too.
        total_num, total_den = num.sum(axis=1), den.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            pool = np.where(total_den > 0, total_num / total_den, rng.uniform(size=total_den.shape))
        return np.where(np.isnan(draws), pool[:, None], draws)


class BayesianCalibration(GroupMethod):
    """BC (Ji et al. 2020, eq. 4.3): a hierarchical calibration map per group,
    each of its draws giving the unlabeled rows' P(y = 1), averaged with each
    group's free model by the Bayes factor of its labels.

    **The model over the groups.** Each group ``g`` follows either the pooled
    calibration (``z_g = 1``) or a free model of its own (``z_g = 0``): its
    rows right with probability ``theta_g ~ Beta(1, 1)`` whatever their
    scores. A priori the ``z_g`` are independent, ``P(z_g = 1) = p_pooled``.
    Each group's evidence for the pooled model is its labels' leave-group-out
    predictive density ``p(y_g | y_-g)`` under the calibrator's posterior,
    against the beta-binomial marginal of its labels under the free model:
    the Bayes factor ``BF_g``. With these densities the likelihood factorizes
    over the groups, so the posterior of the configuration ``z`` does too,

        p(z | y) = prod_g p(z_g | y),  odds(z_g = 1 | y) = p_pooled / (1 - p_pooled) BF_g,

    and a draw's configuration is a draw of ``z`` from it: one coin per group
    with that group's posterior probability. Every metric and every group of
    a draw uses the same configuration, so each group, each difference and
    each ranking is read from draws of one joint posterior (Bayesian model
    averaging over the ``2^G`` configurations; Hoeting et al. 1999). The
    factorization is the approximation: the pooled map is fitted once (with
    the groups the pooled model does not predict left out), not once per
    configuration.
    """

    name = "bayesian_calibration"
    #: coverage first (see ``p_pooled``)
    p_pooled_auto = 0.2
    needs_rows = True

    def sums(self, metrics, rows, rng, index):
        """As :meth:`GroupMethod.sums`; ``rows`` is :class:`GroupRows`, or the
        rows of Dask partitions (``PartitionedRows``, ``unlabeled="expected"``)."""
        if hasattr(rows, "add_up"):  # in partitions: their labeled and first rows
            fitted = rows.key_rows(index)
            keep = np.arange(len(fitted.s))
        else:
            # Unlabeled rows only define the groups: the labeled rows and the first row
            # of each group give the same posterior with memory O(labels), not O(rows).
            fitted = rows
            first = np.full(len(index), len(rows.s))
            np.minimum.at(first, rows.codes, np.arange(len(rows.s)))
            keep = np.union1d(np.flatnonzero(rows.labeled), first)
        s, y, codes, groups = fitted.s, fitted.y, fitted.codes, fitted.groups
        labeled = fitted.labeled
        cal = HierarchicalBetaCalibrator() if self.calibrator is None else self.calibrator
        # y is coded 0 / 1 with -1 for unlabeled rows by now
        cal = clone(cal).set_params(classes=[0, 1], missing_label=-1)
        if cal.random_state is None:
            cal.set_params(random_state=int(rng.integers(np.iinfo(np.int32).max)))
        self.calibrator_ = clone(cal).fit(s[keep], y[keep], group_by=groups[keep])
        check = (s[labeled], y[labeled], groups[labeled], codes[labeled], index)
        self.label_check_, log_bf = self.label_check(*check, rng)
        if self.p_pooled < 1:
            # Groups whose labels the pooled model does not predict (posterior
            # probability of it below 1/2) are left out of the pooled fit, so their
            # labels do not pull the other groups' maps; their pooled predictive is
            # then the population's. If every labeled group would leave, the one
            # the pooled model predicts best stays.
            posterior = expit(prior_logit(self.p_pooled) + log_bf)
            has_labels = np.bincount(codes[labeled], minlength=len(index)) > 0
            out = np.flatnonzero((posterior < 0.5) & has_labels)
            if len(out) == has_labels.sum():  # the pooled fit keeps the best group
                out = np.setdiff1d(out, np.argmax(np.where(has_labels, posterior, -1)))
            if len(out):
                y_in = np.where(np.isin(codes[keep], out), -1, y[keep])
                self.calibrator_ = clone(cal).fit(s[keep], y_in, group_by=groups[keep])
                self.label_check_, log_bf = self.label_check(*check, rng, left_out=out)
        warn_misfit(self.label_check_)
        return self.unlabeled_sums(metrics, rows, fitted, log_bf, rng)

    def draws(self, name, sums, member, rng):
        return self.ratio(sums[2], sums[3], member)

    def label_check(self, s, y, groups, codes, index, rng, left_out=()):
        """Posterior predictive check of each group's labeled rows, and the log Bayes
        factor of "pooled" against "free" per group.

        Per posterior draw of the calibration maps, each labeled row is right
        with its calibrated probability (of y = 1 if it is predicted 1, else
        of y = 0); the replicated number of right rows is compared with the
        observed one (a one-sided p-value of so few right rows).

        The same draws give each group's leave-group-out predictive density
        of its labels under the pooled model, ``p(y_g | y_-g) = 1 / E[1 /
        p(y_g | maps)]`` over the full posterior (importance sampling with
        the group's likelihood as weights); the free model's is the
        beta-binomial marginal of the right / wrong sequence. A group in
        ``left_out`` was fitted without its labels, so its predictive density
        is the plain posterior mean of its likelihood.
        """
        G = len(index)
        log_bf = np.zeros(G)
        columns = [
            "n_labeled",
            "right",
            "expected_right",
            "p_value",
            "log_bayes_factor",
            "p_pooled",
        ]
        if not len(s):
            return pd.DataFrame(columns=columns), log_bf
        D = self.n_draws
        pred = s > self.threshold
        right = pred == (y == 1)
        onehot = np.eye(G)[codes]
        replicated = np.zeros((D, G))
        expected = np.zeros(G)
        loglik = np.zeros((D, G))
        block = max(1, DRAW_BLOCK // D)  # memory n_draws x block
        for start in range(0, len(s), block):
            rows = slice(start, start + block)
            prob = self.calibrator_.sample(s[rows], group_by=groups[rows], n_draws=D)
            right_prob = np.where(pred[rows], prob, 1.0 - prob)
            replicated += (rng.random(right_prob.shape) < right_prob) @ onehot[rows]
            expected += right_prob.mean(axis=0) @ onehot[rows]
            seen = np.where(right[rows], right_prob, 1.0 - right_prob)
            with np.errstate(divide="ignore"):
                loglik += np.log(seen) @ onehot[rows]
        n_labeled = onehot.sum(axis=0)
        observed = right @ onehot
        log_pooled = np.log(D) - logsumexp(-loglik, axis=0)
        left_out = np.asarray(left_out, dtype=np.intp)
        log_pooled[left_out] = logsumexp(loglik[:, left_out], axis=0) - np.log(D)
        log_free = betaln(1.0 + observed, 1.0 + n_labeled - observed)
        log_bf = log_pooled - log_free
        with np.errstate(invalid="ignore"):
            posterior = expit(prior_logit(self.p_pooled) + log_bf)
        frame = pd.DataFrame(
            {
                "n_labeled": n_labeled.astype(int),
                "right": observed.astype(int),
                "expected_right": expected,
                "p_value": np.mean(replicated <= observed, axis=0),
                "log_bayes_factor": log_bf,
                "p_pooled": posterior,
            },
            index=pd.Index([as_scalar(v) for v in index], name="group"),
        )[n_labeled > 0]
        return frame, log_bf

    def unlabeled_terms(self, metrics, index, s, y, groups, *, codes=None, rng=None):
        """The unlabeled rows' terms per metric and group, sums that add over rows.

        ``"sums"``: per metric, the numerator's and denominator's label-free
        terms plus, per draw of the maps, the calibrated terms; and the free
        model's counts: ``"free_a"`` and ``"free_b"`` (the terms per group and
        per (group, predicted class)), ``"n_unl"``, ``"n_right"`` and
        ``"n_wrong"``. Rows are taken a block at a time, so the extra memory
        is O(n_draws x block), not O(n_draws x n_rows): the calibrator's draws
        are fixed (equally spaced along its chain), so every block sees the
        same maps. With ``unlabeled="expected"`` the calibrator's
        ``sample_sums`` adds up a block's calibrated probabilities without
        drawing them row by row; ``"sampled"`` draws each row's label (``rng``).
        """
        if codes is None:
            codes = index.get_indexer(pd.Index(groups, dtype=object))
        G, D = len(index), self.n_draws
        sampled = self.unlabeled == "sampled"
        free = self.p_pooled < 1
        sums = {name: [np.zeros((D, G)), np.zeros((D, G))] for name in metrics}
        # free model: unlabeled a-sums per group, b-sums per (group, predicted class)
        free_a = {name: np.zeros((2, G)) for name in metrics}
        free_b = {name: np.zeros((2, G, 2)) for name in metrics}
        n_unl = np.zeros((G, 2))
        n_right = np.zeros(G)
        n_wrong = np.zeros(G)
        to_cal = self.calibrator_.groups_.get_indexer(index)  # the calibrator's order
        block = max(1, DRAW_BLOCK // D) if sampled else 2**18
        eye = np.eye(G)
        for start in range(0, len(s), block):
            part = slice(start, start + block)
            onehot = eye[codes[part]]  # (block, G)
            pred = (s[part] > self.threshold).astype(np.intp)
            y1 = y[part] == 1
            lab = y[part] >= 0
            unl = ~lab
            if free:  # the free model's counts
                by_class = [onehot * (pred == k)[:, None] for k in (0, 1)]
                for k in (0, 1):
                    n_unl[:, k] += unl @ by_class[k]
                n_right += (lab & (pred == y1)) @ onehot
                n_wrong += (lab & (pred != y1)) @ onehot
            if not unl.any():
                continue
            coefficients = {
                name: metric_coefficients(name, metric, pred) for name, metric in metrics.items()
            }
            prob = expected = None
            if sampled:
                prob = self.calibrator_.sample(s[part][unl], group_by=groups[part][unl], n_draws=D)
                prob = (rng.random(prob.shape) < prob).astype(np.float64)
            else:
                w = np.column_stack([c[i][unl] for c in coefficients.values() for i in (1, 3)])
                cal = self.calibrator_.sample_sums(
                    s[part][unl], w, group_by=groups[part][unl], n_draws=D
                )
                expected = cal[:, to_cal, :]  # (draws, groups, weights)
            oh = onehot[unl]
            for i, (name, (a_n, b_n, a_d, b_d)) in enumerate(coefficients.items()):
                for j, (a, b) in enumerate(((a_n, b_n), (a_d, b_d))):
                    a_sum = a[unl] @ oh
                    sums[name][j] += a_sum
                    if free:
                        free_a[name][j] += a_sum
                        for k in (0, 1):
                            free_b[name][j, :, k] += b[unl] @ by_class[k][unl]
                    if sampled:
                        sums[name][j] += prob @ (b[unl, None] * oh)
                    else:
                        sums[name][j] += expected[:, :, 2 * i + j]
        return {
            "sums": sums,
            "free_a": free_a,
            "free_b": free_b,
            "n_unl": n_unl,
            "n_right": n_right,
            "n_wrong": n_wrong,
        }

    def unlabeled_sums(self, metrics, rows, fitted, log_bf, rng):
        """Per metric and group: the labeled numerator and denominator, and their
        posterior draws with the unlabeled rows' terms added.

        ``rows`` are every row (:class:`GroupRows`, or the rows of Dask
        partitions, whose terms :meth:`unlabeled_terms` adds up where they
        live), ``fitted`` the rows the maps were fitted on (the labeled ones
        among them).

        With ``p_pooled < 1`` each draw's configuration ``z`` is drawn from
        its posterior (the class docstring): group ``g`` takes the pooled
        (calibration) model's draw with probability ``P(z_g = 1 | y)``, else
        the free model's, whose rows are right with probability theta_g ~
        Beta(1 + labeled right, 1 + labeled wrong) whatever their scores
        (beta-binomial), so an unlabeled row predicted 1 has P(y = 1) =
        theta_g and one predicted 0 has 1 - theta_g. The draw's every metric
        and group share the configuration.
        """
        index = fitted.index
        G, D = len(index), self.n_draws
        sampled = self.unlabeled == "sampled"
        free = self.p_pooled < 1
        if hasattr(rows, "add_up"):
            terms = rows.add_up(functools.partial(self.unlabeled_terms, metrics, index))
        else:
            terms = self.unlabeled_terms(
                metrics, index, rows.s, rows.y, rows.groups, codes=rows.codes, rng=rng
            )
        sums = {
            name: [*pair, *terms["sums"][name]]
            for name, pair in labeled_sums(metrics, fitted, self.threshold).items()
        }
        free_a, free_b, n_unl = terms["free_a"], terms["free_b"], terms["n_unl"]
        n_right, n_wrong = terms["n_right"], terms["n_wrong"]
        if free:
            # P(the group follows the pooled model | its labels), then one choice per draw
            pooled = rng.random((D, G)) < expit(prior_logit(self.p_pooled) + log_bf)
            right = rng.beta(1.0 + n_right, 1.0 + n_wrong, size=(D, G))
            theta = np.stack([1.0 - right, right], axis=-1)  # P(y = 1 | predicted k)
            if sampled:
                ones = rng.binomial(n_unl.astype(np.int64), theta)
                with np.errstate(invalid="ignore", divide="ignore"):
                    per_row = {
                        name: np.where(n_unl > 0, b / n_unl, 0.0) for name, b in free_b.items()
                    }
        for name, acc in sums.items():
            for j in (0, 1):
                if free:
                    if sampled:
                        alt = free_a[name][j] + np.einsum("dgk,gk->dg", ones, per_row[name][j])
                    else:
                        alt = free_a[name][j] + np.einsum("dgk,gk->dg", theta, free_b[name][j])
                    acc[2 + j] = np.where(pooled, acc[2 + j], alt)
                acc[2 + j] += acc[j]  # the draws add the labeled terms too
        return sums


def warn_misfit(frame):
    """A SkassessWarning naming the groups whose posterior predictive p-value is
    below 0.01 / groups."""
    if not len(frame):
        return
    bad = frame[frame["p_value"] < 0.01 / len(frame)]
    if len(bad):
        detail = "; ".join(
            f"{g!r}: {r.right} of {r.n_labeled} labeled rows right, "
            f"{r.expected_right:.1f} expected (p = {r.p_value:.1g})"
            for g, r in bad.iterrows()
        )
        warn(
            f"The labeled rows contradict the calibrated scores in {len(bad)} group(s): "
            f"{detail}. The scores may be P(class 0) rather than P(class 1), or the "
            "group's calibration differs from the others'. See label_check_ (its "
            "p_pooled column: the weight of the pooled calibration in the group's "
            "estimate, the rest resting on the group's own labels)."
        )


#: The methods by name, in the order the docs list them.
GROUP_METHODS = {
    method.name: method for method in (Calibrated, BayesianCalibration, BetaBinomial, Frequentist)
}


def group_method(name, **params):
    """The strategy object of the method ``name`` (underscore spelling)."""
    return GROUP_METHODS[name](**params)
