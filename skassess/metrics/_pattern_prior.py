"""Which block of models is right: a prior learned across the agreement patterns.

With many models most agreement patterns hold few labeled items or none,
and their prior decides which block is right there. This prior is learned
from the labeled items of all the patterns at once. Pattern ``p`` with
blocks ``b = 1..r_p`` has category probabilities

    theta_p ~ Dirichlet(s pi_p),
    pi_pb ∝ exp(sum of lambda_m over the models m of block b),
    pi_p,none ∝ (K - r_p) exp(lambda_none),

the one-coin vote of conditionally independent models (``lambda_m``, model
``m``'s log odds of being right against one given wrong class, is
``log(a_m (K - 1) / (1 - a_m))`` for a model of accuracy ``a_m`` that errs
toward every other class alike; a class no block predicts is the truth with
weight 1 each; for a rate, whose patterns record the class the first block
predicts, ``lambda_none`` is one weight per such class, as the chance that
agreeing models are all wrong differs between the classes they predict),
with the concentration ``s`` saying how closely the patterns
follow that vote: large when the models are independent, small when their
errors go together. The models are exchangeable a priori:
``lambda_m ~ N(mu, TAU^2)``, ``mu ~ N(0, PRIOR_SD_MEAN^2)``,
``lambda_none ~ N(0, PRIOR_SD_NONE^2)``, and ``1 / sqrt(s)`` uniform on
``[1 / sqrt(MAX_CONCENTRATION), 1 / sqrt(MIN_CONCENTRATION)]`` (drawn as the
logistic ``w`` of its place in that range, so that nothing is bounded).

The labeled counts of each pattern are Dirichlet-multinomial given these
hyperparameters; their posterior is found at its mode (BFGS with the exact
gradient) and drawn by importance sampling from a Student t about it. The
comparison's draws use ``N_HYPER`` of those draws, each with the patterns'
conjugate Dirichlet posteriors, so the uncertainty of the vote is in every
interval.
"""

import numpy as np
from scipy import optimize, special, stats

#: Spread of the models' vote weights about their mean (log odds).
TAU = 1.5
#: Prior sd of the models' mean vote weight and of the weight of "none".
PRIOR_SD_MEAN, PRIOR_SD_NONE = 5.0, 2.5
#: Range of the concentration ``s``.
MIN_CONCENTRATION, MAX_CONCENTRATION = 0.5, 1e4
#: Hyperparameter draws behind the comparison's draws.
N_HYPER = 64
#: Importance-sampling proposals, and the Student t proposal's df and scale.
N_PROPOSALS, PROPOSAL_DF, PROPOSAL_SCALE = 2048, 5.0, 1.5


class PatternPrior:
    """The learned prior of the patterns' categories, and draws of it.

    Parameters
    ----------
    patterns : ndarray of shape (n_patterns, M)
        Block of each model in each pattern.
    support : ndarray of bool, shape (n_patterns, M + 1)
        The categories that can happen (blocks present; none unless the
        blocks predict every class).
    n_classes : int
    counts : ndarray of shape (n_patterns, M + 1)
        Labeled items per pattern and category.
    random_state : numpy.random.Generator
        Source of the hyperparameter draws.
    none_class : ndarray of shape (n_patterns,), default=None
        A code per pattern: patterns of one code share the weight of "none"
        (None: all share one).
    """

    def __init__(self, patterns, support, n_classes, counts, random_state, none_class=None):
        self.patterns = np.asarray(patterns, dtype=np.intp)
        self.support = np.asarray(support, dtype=bool)
        self.M = self.patterns.shape[1]
        if none_class is None:
            none_class = np.zeros(len(self.patterns), np.intp)
        _, self._none_of = np.unique(none_class, return_inverse=True)
        self._none_of = self._none_of.ravel()
        self.C = int(self._none_of.max()) + 1 if self._none_of.size else 1
        r = self.patterns.max(axis=1) + 1 if len(self.patterns) else np.zeros(0, int)
        self.none_offset = np.log(np.maximum(n_classes - r, 1))
        counts = np.where(self.support, counts, 0.0)
        labeled = counts.sum(axis=1) > 0
        self._lab = np.flatnonzero(labeled)
        self._c = counts[labeled]
        self._C = self._c.sum(axis=1)
        self.mode_ = self._fit_mode()
        self.draws_ = self._draw(random_state)

    # ------------------------------------------------------------ the vote
    def _split(self, u):
        """The vote weights, none's weights, their mean and ``s`` (from ``w``, the last entry)."""
        M, C = self.M, self.C
        return u[..., :M], u[..., M : M + C], u[..., M + C], _concentration(u[..., M + C + 1])

    def probabilities(self, u, rows=None):
        """``pi`` of the patterns ``rows`` (default all) at hyperparameters ``u``, (..., P, M+1)."""
        lam, none, _, _ = self._split(np.asarray(u, dtype=float))
        pat = self.patterns if rows is None else self.patterns[rows]
        sup = self.support if rows is None else self.support[rows]
        off = self.none_offset if rows is None else self.none_offset[rows]
        none_of = self._none_of if rows is None else self._none_of[rows]
        eta = np.zeros((*lam.shape[:-1], len(pat), self.M + 1))
        idx = np.arange(len(pat))
        for m in range(self.M):
            eta[..., idx, pat[:, m]] += lam[..., m, None]
        eta[..., self.M] = off + none[..., none_of]
        return special.softmax(np.where(sup, eta, -np.inf), axis=-1)

    def alphas(self, u=None):
        """Dirichlet prior parameters ``s pi`` of every pattern: at ``u``, or per draw."""
        u = self.draws_ if u is None else u
        return self._split(np.asarray(u, dtype=float))[3][..., None, None] * self.probabilities(u)

    def mean_alpha(self):
        """One Dirichlet per pattern for the exact means: the draws' median ``s`` times
        their mean ``pi``."""
        s = self._split(self.draws_)[3]
        return np.median(s) * self.probabilities(self.draws_).mean(axis=0)

    # ------------------------------------------------------------ posterior
    def _log_prior(self, u):
        lam, none, mu, s = self._split(u)
        lp = -0.5 * np.sum((lam - mu[..., None]) ** 2, axis=-1) / TAU**2
        lp -= 0.5 * (mu / PRIOR_SD_MEAN) ** 2 + 0.5 * np.sum((none / PRIOR_SD_NONE) ** 2, axis=-1)
        # 1/sqrt(s) = LOW + (HIGH - LOW) sigmoid(w) uniform: w has the logistic density
        w = u[..., -1]
        return lp + special.log_expit(w) + special.log_expit(-w)

    def _log_lik(self, u):
        """Dirichlet-multinomial log likelihood of the labeled patterns, shape (...)."""
        if self._lab.size == 0:
            return np.zeros(np.shape(u)[:-1])
        s = self._split(u)[3][..., None, None]
        a = s * self.probabilities(u, self._lab)
        sup = self.support[self._lab]
        lg = special.gammaln(a + self._c) - special.gammaln(np.where(sup, a, 1))
        terms = np.where(sup, lg, 0)
        s0 = s[..., 0]
        return np.sum(special.gammaln(s0) - special.gammaln(s0 + self._C) + terms.sum(-1), axis=-1)

    def log_posterior(self, u):
        u = np.asarray(u, dtype=float)
        lp = self._log_prior(u)
        return np.where(np.isfinite(lp), lp + self._log_lik(u), -np.inf)

    def _gradient(self, u):
        """Gradient of the log posterior at one point ``u``."""
        M, C = self.M, self.C
        lam, none, mu, s = self._split(u)
        g = np.zeros(M + C + 2)
        g[:M] = -(lam - mu) / TAU**2
        g[M : M + C] = -none / PRIOR_SD_NONE**2
        g[M + C] = np.sum(lam - mu) / TAU**2 - mu / PRIOR_SD_MEAN**2
        w = u[-1]
        g[-1] = 1.0 - 2.0 * special.expit(w)
        d_log_s = _log_concentration_slope(w)
        if self._lab.size:
            pi = self.probabilities(u, self._lab)
            a = s * pi
            sup = self.support[self._lab]
            G = np.where(
                sup & (self._c > 0),
                special.digamma(a + self._c) - special.digamma(np.where(sup, a, 1)),
                0.0,
            )
            d_eta = a * (G - np.sum(pi * G, axis=1, keepdims=True))
            pat = self.patterns[self._lab]
            rows = np.arange(len(pat))
            for m in range(M):
                g[m] += d_eta[rows, pat[:, m]].sum()
            g[M : M + C] += np.bincount(self._none_of[self._lab], weights=d_eta[:, M], minlength=C)
            d_s = np.sum(s * (special.digamma(s) - special.digamma(s + self._C))) + np.sum(a * G)
            g[-1] += d_s * d_log_s
        return g

    def _fit_mode(self):
        start = np.r_[np.full(self.M, 2.0), np.zeros(self.C), 2.0, 0.0]
        res = optimize.minimize(
            lambda u: -float(self.log_posterior(u)),
            start,
            jac=lambda u: -self._gradient(u),
            method="BFGS",
        )
        return res.x

    def _draw(self, rng):
        """``N_HYPER`` draws of the hyperparameters (importance resampling), (N_HYPER, M+C+2)."""
        mode, D = self.mode_, self.mode_.size
        h = 1e-4
        hess = np.empty((D, D))
        for i in range(D):
            e = np.zeros(D)
            e[i] = h
            hess[i] = -(self._gradient(mode + e) - self._gradient(mode - e)) / (2 * h)
        hess = 0.5 * (hess + hess.T)
        w, V = np.linalg.eigh(hess)
        cov = (V / np.maximum(w, 1e-3)) @ V.T * PROPOSAL_SCALE**2
        u = stats.multivariate_t.rvs(
            loc=mode, shape=cov, df=PROPOSAL_DF, size=N_PROPOSALS, random_state=rng
        ).reshape(N_PROPOSALS, D)
        log_q = stats.multivariate_t.logpdf(u, loc=mode, shape=cov, df=PROPOSAL_DF)
        log_w = (
            np.concatenate([self.log_posterior(u[i : i + 256]) for i in range(0, N_PROPOSALS, 256)])
            - log_q
        )
        w = np.exp(log_w - log_w.max())
        w /= w.sum()
        self.ess_ = float(1.0 / np.sum(w**2))
        positions = (rng.random() + np.arange(N_HYPER)) / N_HYPER
        pick = np.minimum(np.searchsorted(np.cumsum(w), positions), N_PROPOSALS - 1)
        return u[pick]


_LOW, _HIGH = MAX_CONCENTRATION**-0.5, MIN_CONCENTRATION**-0.5


def _concentration(w):
    """``s`` from ``w``: ``1 / sqrt(s) = LOW + (HIGH - LOW) sigmoid(w)``."""
    return (_LOW + (_HIGH - _LOW) * special.expit(w)) ** -2.0


def _log_concentration_slope(w):
    """``d log s / d w``."""
    v = _LOW + (_HIGH - _LOW) * special.expit(w)
    return -2.0 * (_HIGH - _LOW) * special.expit(w) * special.expit(-w) / v
