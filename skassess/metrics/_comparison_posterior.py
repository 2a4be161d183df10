"""The posterior of a model comparison: the patterns' Dirichlets, the tie component, draws.

Each agreement pattern's categories (which block of models is right, or none)
have a Dirichlet posterior; with the tie probability of a pattern (its blocks
equally likely to be right) it is a two-component mixture. A draw picks each
pattern's category shares, then the unlabeled items' categories
(multinomial), and sums the models' successes over the pool with the labeled
ones.
"""

import numpy as np
from scipy.special import expit, gammaln
from sklearn.utils.validation import check_is_fitted

from ._rate_table import rate_terms


def best_shares(draws):
    """P(best) per column of posterior draws ``(n_draws, n_models)``: ties split evenly.

    Finite-population draws tie often (two models right on the same number of
    items), so an argmax would favour the first model.
    """
    draws = np.asarray(draws)
    top = draws == draws.max(axis=1, keepdims=True)
    return (top / top.sum(axis=1, keepdims=True)).mean(axis=0)


class _ComparisonPosterior:
    """The patterns' posteriors, their means, and draws of the models' metrics on the pool."""

    def dirichlet_parameters(self):
        """Dirichlet parameters per pattern, prior + labeled counts (the non-tie component).

        With the learned prior (``prior_split="learned"``) ``prior_`` is a summary
        of its hyperparameter draws (their median ``s`` times their mean
        ``pi``); the draws and the means use each draw's own Dirichlets.
        """
        return self.prior_ + self.counts_

    def _learned_dirichlets(self):
        """Prior + labeled counts per hyperparameter draw of a learned prior, else None."""
        learned = getattr(self, "_pattern_prior", None)
        return None if learned is None else learned.alphas() + self.counts_

    def _n_blocks(self):
        return self.patterns_.max(axis=1) + 1

    def tie_probabilities(self):
        """Posterior probability, per pattern, that its models are equally accurate there.

        The prior ``tie_prior`` times the Bayes factor of the labeled items'
        right blocks: equal chances against the Dirichlet of
        :meth:`dirichlet_parameters` (the share with no block right is
        common to both and cancels). Patterns where all models agree keep
        the prior (there, both components are the same).
        """
        check_is_fitted(self)
        if self.tie_prior == 0:
            return np.zeros(len(self.patterns_))
        M = self.n_models_
        r = self._n_blocks()
        support = np.arange(M)[None, :] < r[:, None]
        a = np.where(support, self.prior_[:, :M], 1.0)
        n = np.where(support, self.counts_[:, :M], 0.0)
        n_some = n.sum(axis=1)
        log_slab = (
            gammaln(a.sum(axis=1, where=support))
            - gammaln(a.sum(axis=1, where=support) + n_some)
            + (gammaln(a + n) - gammaln(a)).sum(axis=1, where=support)
        )
        log_tie = -n_some * np.log(r)
        log_odds = np.log(self.tie_prior) - np.log1p(-self.tie_prior) + log_tie - log_slab
        return np.where(r > 1, expit(log_odds), self.tie_prior)

    def outcome_probabilities(self):
        """Posterior predictive probability of each pattern's categories, ``(n_patterns, M+1)``."""
        return self._outcome_probabilities()

    def _outcome_probabilities(self, sceptical=True):
        check_is_fitted(self)
        M = self.n_models_
        learned = self._learned_dirichlets()
        # a learned prior: the mean over its hyperparameter draws, as in the draws
        alpha = self.dirichlet_parameters() if learned is None else learned
        none = alpha[..., M] / alpha.sum(axis=-1)
        some = alpha[..., :M].sum(axis=-1, keepdims=True)
        slab = alpha[..., :M] / np.where(some > 0, some, 1.0)
        w = self.tie_probabilities()[:, None] if sceptical else 0.0
        split = w * self._split(slab, np.ones(len(self.patterns_), bool)) + (1 - w) * slab
        theta = np.concatenate([split * (1 - none)[..., None], none[..., None]], axis=-1)
        return theta if learned is None else theta.mean(axis=0)

    def mean_accuracy(self):
        """Posterior mean accuracy of each model, ``(n_models,)`` (exact)."""
        return self._mean_accuracy()

    def _mean_accuracy(self, sceptical=True):
        theta = self._outcome_probabilities(sceptical)
        expected = self.n_unlabeled_[:, None] * np.take_along_axis(theta, self.patterns_, axis=1)
        return (expected.sum(axis=0) + self.n_correct_labeled_) / self.n_samples_

    def _split(self, theta_blocks_slab, tie):
        """Right-block shares: equal under a tie, else the Dirichlet's."""
        r = self._n_blocks()
        even = (np.arange(self.n_models_)[None, :] < r[:, None]) / r[:, None]
        return np.where(tie[..., None], even, theta_blocks_slab)

    def _category_draws(self, rng, n_draws, sceptical=True):
        """Posterior draws of the unlabeled items' categories, ``(n_draws, n_patterns, M+1)``.

        ``sceptical=False``: the continuous (Dirichlet) component alone.
        """
        M = self.n_models_
        hyper = self._learned_dirichlets()
        if hyper is None:
            alpha = self.dirichlet_parameters()
            alpha = np.broadcast_to(alpha, (n_draws, *alpha.shape))
        else:  # each draw with one of the learned prior's hyperparameter draws
            alpha = hyper[np.arange(n_draws) % len(hyper)]
        g = rng.standard_gamma(alpha)
        total = g.sum(axis=2, keepdims=True)
        some = g[:, :, :M].sum(axis=2, keepdims=True)
        # no block right ~ Beta(alpha_none, sum alpha_blocks) in both components
        p_tie = self.tie_probabilities() if sceptical else np.zeros(alpha.shape[1])
        tie = rng.uniform(size=(n_draws, alpha.shape[1])) < p_tie
        split = self._split(g[:, :, :M] / np.where(some > 0, some, 1.0), tie)
        theta = np.concatenate([split * (some / total), g[:, :, M:] / total], axis=2)
        # the unlabeled items' outcomes: a multinomial draw per pattern
        return rng.multinomial(self.n_unlabeled_, theta)

    def _rate_weights(self):
        """Condition and condition x outcome of each (pattern, category, model).

        For binary models the category gives the true class: block 0 predicts
        the pattern's recorded class, block 1 the other; "none right" happens
        only where all agree, and then the true class is the other one.
        """
        M = self.n_models_
        cls0 = self._key_table[:, M]
        block_class = np.where(
            np.arange(M + 1)[None, :] == 0, cls0[:, None], 1 - cls0[:, None]
        )  # (n_pat, M + 1)
        y = np.where(np.arange(M + 1)[None, :] == M, 1 - cls0[:, None], block_class)
        pred = np.where(self.patterns_ == 0, cls0[:, None], 1 - cls0[:, None])  # (n_pat, M)
        cond, out = rate_terms(self.metric, pred[:, None, :], y[:, :, None])
        return cond, cond * out

    def _metric_draws(self, rng, n_draws, sceptical=True):
        counts = self._category_draws(rng, n_draws, sceptical)
        if self.metric == "accuracy":
            # model m is right on category blocks[p, m] of pattern p
            correct = np.take_along_axis(
                counts, np.broadcast_to(self.patterns_, (n_draws, *self.patterns_.shape)), axis=2
            )
            return (correct.sum(axis=1) + self.n_correct_labeled_) / self.n_samples_
        cond, joint = self._rate_weights()
        total = counts + self.counts_
        den = np.einsum("dpc,pcm->dm", total, cond)
        num = np.einsum("dpc,pcm->dm", total, joint)
        # a draw whose pool has no item meeting the condition (e.g. no positive) has
        # no rate; it counts as 0 (the pools this is for have thousands of items)
        return np.divide(num, den, out=np.zeros_like(num), where=den > 0)
