"""Annotators who slip: the one-coin model of noisy labels, and draws of the true labels.

Each labeled item ``i`` has a true class ``y_i`` that no one sees. The black
box predicted ``yhat_i``; within the item's group ``g`` it is right with
probability ``theta_g`` (``Beta(1, 1)``), and wrong toward each other class
alike. Annotator ``a`` gives the true class with probability ``1 - eps_a`` and
each other class with probability ``eps_a / (K - 1)`` (the one-coin model of
Dawid and Skene's family); an annotator of known accuracy (a gold standard:
accuracy 1) keeps it fixed, the others have a Beta prior on ``1 - eps_a``.
Given the slip rates, each group's ``theta_g`` is integrated by Gauss-Hermite
quadrature about its mode on the logit scale, so the slip rates' posterior
is a density over a few numbers; it is drawn by importance sampling from a
Student t about its mode. By default that posterior reads only the labels
beyond each item's first, given the first labels (their conditional
likelihood): a single label that disagrees with the black box is a slip or
an error alike, and the share of the two that the joint model would read
from the groups' agreement rates holds only if annotators slip as often on
easy items as on hard ones; with no item labeled twice, the slip rates are
drawn at the ends of the range the single labels allow. For each draw of
the slip rates, ``theta_g`` and then every item's true class are drawn
exactly, from every label: those draws of the true labels (imputations) are
what the assessment estimators fit.

The items enter through their label patterns (which annotators gave the
predicted class, and which gave the same other class), so the cost grows
with the number of distinct patterns per group, not with the items.
"""

import numpy as np
from scipy import optimize, special, stats

#: Gauss-Hermite nodes of the integral over each group's logit(theta).
QUADRATURE_NODES = 16
#: Grid points of each group's theta when it is drawn (inverse CDF on a grid).
THETA_GRID = 96
#: Slip rates at which the labels' likelihood is read for the allowed range's high end.
ENDS_GRID = 200
#: Proposals of the importance sampler per imputation drawn (at least 256).
PROPOSALS_PER_DRAW = 16
#: Degrees of freedom of the Student t proposal, and the inflation of its scale.
PROPOSAL_DF, PROPOSAL_SCALE = 5.0, 1.5


def beta_from_interval(low, high, level=0.95):
    """``(alpha, beta)`` of the Beta whose central ``level`` interval is ``[low, high]``."""
    tail = (1.0 - level) / 2.0

    def gap(log_ab):
        a, b = np.exp(log_ab)
        return [stats.beta.ppf(tail, a, b) - low, stats.beta.ppf(1 - tail, a, b) - high]

    # Start from the Beta of the interval's mean and of a normal's spread.
    mean, sd = (low + high) / 2, (high - low) / (2 * stats.norm.ppf(1 - tail))
    size = max(mean * (1 - mean) / sd**2 - 1, 1.0)
    start = np.log([mean * size, (1 - mean) * size])
    sol = optimize.root(gap, start, method="hybr")
    a, b = np.exp(sol.x)
    if not sol.success or max(abs(v) for v in gap(sol.x)) > 1e-6:
        raise ValueError(
            f"No Beta distribution has [{low}, {high}] as its central {level:.0%} interval."
        )
    return float(a), float(b)


def label_patterns(pred, labels):
    """Each item's label pattern and the classes behind its codes.

    Parameters
    ----------
    pred : ndarray of shape (n,)
        Predicted class of each item.
    labels : ndarray of shape (n, A)
        Class given by each annotator, -1 where the annotator gave none.

    Returns
    -------
    codes : ndarray of shape (n, A)
        -1 missing, 0 the predicted class, ``j >= 1`` the ``j``-th distinct
        other class the item's labels name (in annotator order).
    others : ndarray of shape (n, A)
        The class behind code ``j`` at column ``j - 1`` (-1 past the last).
    """
    n, A = labels.shape
    codes = np.where(labels < 0, -1, 0)
    others = np.full((n, A), -1, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    rows = np.arange(n)
    for a in range(A):
        lab = labels[:, a]
        other = (lab >= 0) & (lab != pred)
        seen = (others == lab[:, None]) & other[:, None]
        known = seen.any(axis=1)
        codes[known, a] = seen[known].argmax(axis=1) + 1
        new = other & ~known
        others[rows[new], count[new]] = lab[new]
        count[new] += 1
        codes[new, a] = count[new]
    return codes, others


def allowed_ends(log_likelihood, prior, free, fixed_eps, level=0.95):
    """Per free annotator, the ends of the slip rates the labels allow, ``(low, high)``.

    The range is the prior's central ``level`` of each slip rate, cut from
    above by a likelihood-ratio test of every label at ``1 - level`` (the
    other free annotators at their most likely slip rates in their ranges):
    ``low`` is the prior's low end, ``high`` the largest slip rate the labels
    do not reject.

    Parameters
    ----------
    log_likelihood : callable
        ``log p(labels | eps)`` of slip rates ``eps`` of shape (S, A), shape (S,).
    prior : list of A entries
        Per annotator: ``(alpha, beta)`` of its accuracy's Beta prior, or a float.
    free : ndarray of shape (A,)
        The annotators whose slip rate is not known.
    fixed_eps : ndarray of shape (A,)
        The slip rates of the others.
    level : float, default=0.95

    Returns
    -------
    low, high : ndarray of shape (n_free,)
    """
    idx = np.flatnonzero(free)
    ab = np.array([prior[k] for k in idx], dtype=float)
    low = 1.0 - stats.beta.ppf((1.0 + level) / 2.0, ab[:, 0], ab[:, 1])
    high = 1.0 - stats.beta.ppf((1.0 - level) / 2.0, ab[:, 0], ab[:, 1])
    bounds = list(zip(special.logit(low), special.logit(high), strict=True))

    def eps_of(u):
        eps = np.broadcast_to(fixed_eps, (u.shape[0], fixed_eps.size)).copy()
        eps[:, free] = special.expit(u)
        return eps

    def nll(u):
        return -float(log_likelihood(eps_of(u[None]))[0])

    start = special.logit(np.sqrt(low * high))
    best = optimize.minimize(nll, start, method="L-BFGS-B", bounds=bounds)
    u_best, top = best.x, -best.fun
    cut = stats.chi2.ppf(level, 1) / 2.0
    caps = np.empty(idx.size)
    for j in range(idx.size):
        grid = np.linspace(low[j], high[j], ENDS_GRID)
        u = np.tile(u_best, (ENDS_GRID, 1))
        u[:, j] = special.logit(grid)
        ev = log_likelihood(eps_of(u))
        kept = ev >= max(top, ev.max()) - cut
        caps[j] = grid[kept].max()
    return low, caps


def end_blocks(low, high, size):
    """``size`` slip rates of the free annotators at the ends, shape (size, n_free).

    Every combination of ends in one contiguous block of equal length, so
    that a systematic resampling, or a split into equal runs, takes each
    combination equally often. With fewer rows than combinations, rows
    spread evenly over them, every slip rate at its low end first and every
    one at its high end last.
    """
    m = low.size
    combos = 2**m
    if size >= combos:
        combo = (np.arange(size) * combos) // size
    else:
        combo = np.rint(np.linspace(0, combos - 1, size)).astype(np.int64)
    at_high = (combo[:, None] >> np.arange(m)) & 1
    return np.where(at_high == 1, high, low)


class AnnotatorRates:
    """Base of the annotator models: each annotator's prior, and its accuracy's summary.

    ``prior`` holds, per annotator, ``(alpha, beta)`` of the Beta prior of its
    accuracy, or a float, its known accuracy; a fitted model keeps draws of
    the slip rates in ``slip_draws_`` with weights ``slip_weights_``.
    """

    def _set_prior(self, prior):
        self.prior = list(prior)
        self.free = np.array([not np.isscalar(p) for p in self.prior])
        self.fixed_eps = np.array(
            [0.0 if f else 1.0 - p for f, p in zip(self.free, self.prior, strict=False)]
        )

    def accuracy_summary(self, level=0.95):
        """Each annotator's accuracy: posterior mean, lower and upper, shape (A, 3)."""
        acc, w = 1.0 - self.slip_draws_, self.slip_weights_
        tail = (1.0 - level) / 2.0
        lo = [weighted_quantile(acc[:, k], w, tail) for k in range(acc.shape[1])]
        hi = [weighted_quantile(acc[:, k], w, 1 - tail) for k in range(acc.shape[1])]
        return np.column_stack([w @ acc, lo, hi])


class OneCoinAnnotators(AnnotatorRates):
    """The posterior of the slip rates and of the true labels of the labeled items.

    Parameters
    ----------
    pred : ndarray of shape (n,)
        Predicted class of each labeled item.
    group : ndarray of shape (n,)
        Group index of each item (``0..n_groups-1``).
    labels : ndarray of shape (n, A)
        Each annotator's class for each item, -1 where none.
    n_classes : int
        ``K``.
    prior : list of A entries
        Per annotator: ``(alpha, beta)`` of the Beta prior of its accuracy, or
        a float, its known accuracy (1.0: a gold standard).
    random_state : numpy.random.Generator
    slip_evidence : {"bounds", "repeats", "all"}, default="bounds"
        What the slip rates' posterior reads. ``"repeats"``: the labels
        beyond each item's first (in the order of the columns), given the
        first labels -- ``p(labels) / p(first labels)``, a conditional
        likelihood, so that single labels say nothing of the slip rates and a
        choice of the items to label again that looks at their first label
        leaves it valid; with no repeats the slip rates keep their prior.
        ``"bounds"``: the same where an item is repeated; where none is, the
        slip rates are set-identified -- single labels cap them (a group
        whose labels agree with the black box a share ``a`` of the time
        cannot have a slip rate much above ``1 - a``) and do not bound them
        from below -- and each is drawn half the time at either end of the
        range the labels allow (:meth:`_allowed_ends`): a two-point prior at
        the ends, whose interval spans the posteriors of every slip rate in
        the range, as the robust Bayesian interval over every prior on it
        does (Giacomini and Kitagawa, 2021). ``"all"``: every label, in one
        joint posterior.
    """

    def __init__(self, pred, group, labels, n_classes, prior, random_state, slip_evidence="bounds"):
        self.K = int(n_classes)
        if self.K < 2:
            raise ValueError("The noise model needs at least two classes.")
        self.rng = random_state
        self._set_prior(prior)
        self._index(pred, group, labels)
        self._check_fixed()
        # What the slip rates' posterior reads: every label (the joint posterior), or
        # the labels beyond each item's first given the first labels (None: no
        # repeats, so nothing; the slip rates keep their prior).
        self._first_labels = self
        self._ends = None
        if slip_evidence in ("repeats", "bounds"):
            given = self.labels >= 0
            self._first_labels = None
            if (given.sum(axis=1) >= 2).any():
                rows, first = np.arange(len(given)), given.argmax(axis=1)
                one = np.full_like(self.labels, -1)
                one[rows, first] = self.labels[rows, first]
                self._first_labels = object.__new__(type(self))
                self._first_labels.K = self.K
                self._first_labels._index(self.pred, np.asarray(group), one)
            if slip_evidence == "bounds" and self._first_labels is None and self.free.any():
                self._ends = self._allowed_ends()
        elif slip_evidence != "all":
            raise ValueError(
                f"slip_evidence must be 'repeats', 'bounds' or 'all'; got {slip_evidence!r}."
            )
        self._fit_rates()

    def _allowed_ends(self, level=0.95):
        """Per free annotator, the ends of the slip rates the labels allow, ``(low, high)``.

        See :func:`allowed_ends`; the labels' likelihood is :meth:`log_evidence`.
        """
        return allowed_ends(self.log_evidence, self.prior, self.free, self.fixed_eps, level)

    def _index(self, pred, group, labels):
        """The items' label patterns, and the (group, pattern) cells that hold items."""
        self.pred, group = np.asarray(pred), np.asarray(group, dtype=np.intp)
        self.labels = np.asarray(labels, dtype=np.int64)
        codes, self.others = label_patterns(self.pred, self.labels)
        keys, self.item_pattern = np.unique(codes, axis=0, return_inverse=True)
        self.item_pattern = self.item_pattern.ravel()
        self.codes = keys  # (P, A)
        # The groups that hold labeled items, numbered 0..G-1.
        _, self.group = np.unique(group, return_inverse=True)
        self.group = self.group.ravel()
        self.n_groups = int(self.group.max()) + 1 if self.group.size else 0
        self.counts = np.zeros((self.n_groups, len(keys)))
        np.add.at(self.counts, (self.group, self.item_pattern), 1.0)
        # The (group, pattern) cells that hold items, by group: sums over them.
        self._cell_group, self._cell_pattern = np.nonzero(self.counts)
        self._cell_count = self.counts[self._cell_group, self._cell_pattern]
        self._cell_start = np.searchsorted(self._cell_group, np.arange(self.n_groups))
        self.n_distinct = keys.max(axis=1).clip(min=0)  # d_p

    # ----------------------------------------------------------- likelihood
    def _check_fixed(self):
        """Labels of annotators of accuracy 1 that disagree leave no true class."""
        exact = ~self.free & (self.fixed_eps == 0)
        if exact.sum() < 2:
            return
        lab = self.labels[:, exact]
        given = lab >= 0
        first = np.where(given, lab, -1).max(axis=1)
        clash = (given & (lab != first[:, None])).any(axis=1)
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            raise ValueError(
                f"Annotators of known accuracy 1 (annotator_prior) disagree on labeled item "
                f"{i} ({lab[i].tolist()}): no true class fits both; give one of them a prior "
                "interval instead."
            )

    def _pattern_likelihoods(self, eps):
        """Log of ``A_p`` (true class = prediction) and ``B_p`` (another), shape (S, P)."""
        K, codes = self.K, self.codes
        with np.errstate(divide="ignore"):
            right, slip = np.log1p(-eps), np.log(eps / (K - 1))  # (S, A)
        labeled = (codes >= 0).astype(float)
        hit0 = (codes == 0).astype(float)
        # 0 * -inf where an annotator of accuracy 1 is not in the pattern: count as 0.
        right, slip = np.nan_to_num(right, neginf=-1e300), np.nan_to_num(slip, neginf=-1e300)
        log_a = right @ hit0.T + slip @ (labeled - hit0).T
        dmax = int(self.n_distinct.max()) if codes.size else 0
        terms = []
        for j in range(1, dmax + 1):
            hit = (codes == j).astype(float)
            lj = right @ hit.T + slip @ (labeled - hit).T
            terms.append(np.where(self.n_distinct >= j, lj, -np.inf))
        n_other = (K - 1 - self.n_distinct).astype(float)
        with np.errstate(divide="ignore"):
            log_other = slip @ labeled.T + np.log(n_other)
        log_b = special.logsumexp(np.stack([*terms, log_other]), axis=0) - np.log(K - 1)
        return log_a, log_b, terms, log_other

    def _group_terms(self, eps):
        """Per pattern ``(log scale, a, b)`` with ``max(a, b) = 1``, shape (S, P)."""
        log_a, log_b = self._pattern_likelihoods(eps)[:2]
        scale = np.maximum(log_a, log_b)
        return scale, np.exp(log_a - scale), np.exp(log_b - scale)

    def _group_sum(self, values):
        """Sum of per-cell values (axis 1) within each group: (S, cells, ...) to (S, G, ...)."""
        return np.add.reduceat(values, self._cell_start, axis=1)

    def _log_theta_density(self, t, a, b):
        """``sum_p c_gp log(b + theta (a - b)) + log theta (1 - theta)`` at logit ``t``.

        ``t`` has shape (S, G, Q); ``a``, ``b`` (S, P). Returns (S, G, Q).
        """
        g, p, c = self._cell_group, self._cell_pattern, self._cell_count
        theta = special.expit(t)[:, g, :]  # (S, cells, Q)
        v = b[:, p, None] + theta * (a - b)[:, p, None]
        with np.errstate(divide="ignore"):
            logv = c[None, :, None] * np.log(v)
        return self._group_sum(logv) + special.log_expit(t) + special.log_expit(-t)

    def _theta_modes(self, a, b):
        """Mode of each group's logit(theta) and the curvature there, shape (S, G)."""
        p, c = self._cell_pattern, self._cell_count
        agree = self._group_sum(c * (a > b)[:, p])
        t = special.logit(np.clip((agree + 1) / (self.counts.sum(-1) + 2), 0.01, 0.99))
        d, bp = (a - b)[:, p], b[:, p]
        for _ in range(30):
            grad, hess = self._logit_derivatives(t, bp, d)
            step = np.clip(grad / hess, -2.0, 2.0)
            t = t - step
            if np.max(np.abs(step)) < 1e-8:
                break
        hess = self._logit_derivatives(t, bp, d)[1]
        return t, np.sqrt(1.0 / np.maximum(-hess, 1e-12))

    def _logit_derivatives(self, t, bp, d):
        """First and second derivatives of the log density in logit(theta), (S, G) each."""
        g, c = self._cell_group, self._cell_count
        theta = special.expit(t)
        v = bp + theta[:, g] * d
        g1 = self._group_sum(c * d / v)
        g2 = -self._group_sum(c * d**2 / v**2)
        j = theta * (1 - theta)
        grad = j * g1 + (1 - 2 * theta)
        hess = j**2 * g2 + j * (1 - 2 * theta) * g1 - 2 * j
        return grad, hess

    def log_evidence(self, eps):
        """``log p(labels | eps)`` with every group's theta integrated, shape (S,)."""
        scale, a, b = self._group_terms(eps)
        const = scale @ self.counts.sum(0)
        mode, sd = self._theta_modes(a, b)
        x, w = np.polynomial.hermite.hermgauss(QUADRATURE_NODES)
        t = mode[..., None] + np.sqrt(2.0) * sd[..., None] * x
        f = self._log_theta_density(t, a, b) + x**2 + np.log(w)
        log_z = special.logsumexp(f, axis=-1) + np.log(np.sqrt(2.0) * sd)
        return const + log_z.sum(-1)

    # ------------------------------------------------------------ slip rates
    def _log_target(self, u):
        """Log posterior density of ``u = logit(eps)`` of the free annotators, (S,)."""
        eps = self._eps(u)
        free = self.free
        acc = 1.0 - eps[:, free]
        ab = np.array([self.prior[k] for k in np.flatnonzero(free)], dtype=float).reshape(-1, 2)
        log_prior = stats.beta.logpdf(acc, ab[:, 0], ab[:, 1]).sum(-1)
        jac = (special.log_expit(u) + special.log_expit(-u)).sum(-1)
        return self._slip_evidence(eps) + log_prior + jac

    def _slip_evidence(self, eps):
        """``log p(labels | eps)``, or of the labels beyond the first given the first."""
        if self._first_labels is None:
            return 0.0
        evidence = self.log_evidence(eps)
        if self._first_labels is not self:
            evidence = evidence - self._first_labels.log_evidence(eps)
        return evidence

    def _eps(self, u):
        u = np.atleast_2d(u)
        eps = np.broadcast_to(self.fixed_eps, (u.shape[0], self.fixed_eps.size)).copy()
        eps[:, self.free] = special.expit(u)
        return eps

    def _fit_rates(self):
        m = int(self.free.sum())
        self.slip_draws_, self.slip_weights_ = None, None
        if m == 0:
            self.slip_draws_ = self.fixed_eps[None].copy()
            self.slip_weights_ = np.ones(1)
            self.ess_ = np.inf
            return
        ab = np.array([self.prior[k] for k in np.flatnonzero(self.free)], dtype=float)
        start = special.logit(ab[:, 1] / ab.sum(1))  # the prior mean slip rate

        def nll(u):
            return -float(self._log_target(u[None])[0])

        res = optimize.minimize(nll, start, method="Nelder-Mead" if m == 1 else "BFGS")
        mode = res.x
        hess = _numeric_hessian(nll, mode)
        try:
            cov = np.linalg.inv(hess)
            np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            cov = np.eye(m)
        cov = cov * PROPOSAL_SCALE**2
        self.slip_mode_ = special.expit(mode)
        self._proposal = (mode, cov)

    def draw(self, n_draws):
        """Draws of the slip rates ``(n_draws, A)`` and the true labels ``(n_draws, n)``."""
        rng = self.rng
        if self.free.any():
            u, logw = self._importance(max(256, PROPOSALS_PER_DRAW * n_draws))
            w = np.exp(logw - logw.max())
            w /= w.sum()
            self.ess_ = float(1.0 / np.sum(w**2))
            self.slip_draws_, self.slip_weights_ = self._eps(u), w
            pick = _systematic(w, n_draws, rng)
            eps = self._eps(u[pick])
        else:
            eps = np.broadcast_to(self.fixed_eps, (n_draws, self.fixed_eps.size)).copy()
        theta = self._draw_theta(eps)
        return eps, self._draw_labels(eps, theta)

    def _importance(self, size):
        if self._ends is not None:  # set-identified: each end of the allowed range alike
            return special.logit(end_blocks(*self._ends, size)), np.zeros(size)
        if self._first_labels is None:  # no labels tell the slip rates: draw their prior
            ab = np.array([self.prior[k] for k in np.flatnonzero(self.free)], dtype=float)
            acc = self.rng.beta(ab[:, 0], ab[:, 1], size=(size, ab.shape[0]))
            return special.logit(1.0 - acc), np.zeros(size)
        mode, cov = self._proposal
        m = mode.size
        z = self.rng.standard_normal((size, m)) @ np.linalg.cholesky(cov).T
        chi = self.rng.chisquare(PROPOSAL_DF, size) / PROPOSAL_DF
        u = mode + z / np.sqrt(chi)[:, None]
        log_q = stats.multivariate_t.logpdf(u, loc=mode, shape=cov, df=PROPOSAL_DF)
        log_p = np.concatenate([self._log_target(u[s : s + 256]) for s in range(0, size, 256)])
        return u, np.atleast_1d(log_p - log_q)

    def _draw_theta(self, eps):
        """Each draw's theta per group, shape (S, G), by inverse CDF on a grid."""
        scale, a, b = self._group_terms(eps)
        mode, sd = self._theta_modes(a, b)
        x = np.linspace(-6.0, 6.0, THETA_GRID)
        t = mode[..., None] + sd[..., None] * x
        f = self._log_theta_density(t, a, b)
        p = np.exp(f - f.max(-1, keepdims=True))
        cdf = np.cumsum(p, -1)
        cdf /= cdf[..., -1:]
        r = self.rng.random(cdf.shape[:-1])[..., None]
        k = np.minimum((cdf < r).sum(-1), THETA_GRID - 1)
        step = sd * (x[1] - x[0])
        jitter = (self.rng.random(k.shape) - 0.5) * step
        return special.expit(np.take_along_axis(t, k[..., None], -1)[..., 0] + jitter)

    def _draw_labels(self, eps, theta):
        """Each draw's true class of every item, shape (S, n)."""
        log_a, _, terms, log_other = self._pattern_likelihoods(eps)
        S, n = eps.shape[0], self.pred.size
        pat, grp = self.item_pattern, self.group
        th = theta[:, grp]  # (S, n)
        with np.errstate(divide="ignore"):
            cols = [np.log(th) + log_a[:, pat]]
            wrong = np.log1p(-th) - np.log(self.K - 1)
            cols += [wrong + lj[:, pat] for lj in terms]
            cols.append(wrong + log_other[:, pat])
        logp = np.stack(cols, -1)  # (S, n, 1 + dmax + 1)
        logp -= logp.max(-1, keepdims=True)
        p = np.exp(logp)
        cdf = np.cumsum(p, -1)
        r = self.rng.random((S, n, 1)) * cdf[..., -1:]
        choice = (cdf < r).sum(-1)
        out = np.broadcast_to(self.pred, (S, n)).copy()
        dmax = len(terms)
        for j in range(1, dmax + 1):
            hit = choice == j
            out[hit] = np.broadcast_to(self.others[:, j - 1], (S, n))[hit]
        other = choice == dmax + 1
        if other.any():
            out[other] = self._other_class(other)
        return out

    def _other_class(self, mask):
        """A class uniform among those no label of the item names and not predicted."""
        S, n = mask.shape
        si, ii = np.nonzero(mask)
        excluded = np.concatenate([self.pred[:, None], self.others], axis=1)[ii]
        excluded = np.sort(np.where(excluded < 0, self.K + 1, excluded), axis=1)
        n_left = self.K - 1 - self.n_distinct[self.item_pattern[ii]]
        v = np.floor(self.rng.random(ii.size) * n_left).astype(np.int64)
        for col in range(excluded.shape[1]):
            v = v + (v >= excluded[:, col])
        return v

    # -------------------------------------------------------------- reports


def _numeric_hessian(f, x, h=1e-3):
    m = x.size
    hess = np.empty((m, m))
    f0 = f(x)
    for i in range(m):
        for j in range(i, m):
            ei, ej = np.eye(m)[i] * h, np.eye(m)[j] * h
            if i == j:
                v = (f(x + ei) - 2 * f0 + f(x - ei)) / h**2
            else:
                v = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * h**2)
            hess[i, j] = hess[j, i] = v
    return hess


def _systematic(w, n, rng):
    """Systematic resampling: ``n`` indices with probabilities ``w``."""
    positions = (rng.random() + np.arange(n)) / n
    idx = np.searchsorted(np.cumsum(w), positions)
    return rng.permutation(np.minimum(idx, w.size - 1))


def weighted_quantile(x, w, q):
    order = np.argsort(x)
    cw = np.cumsum(w[order])
    return float(x[order][min(np.searchsorted(cw, q * cw[-1]), x.size - 1)])
