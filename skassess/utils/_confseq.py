"""A confidence sequence of a finite population's share of ones (Waudby-Smith and Ramdas).

Written here because no maintained Python package ships it (``confseq``
publishes no wheel); it is a few closed-form lines.
"""

import numpy as np
from scipy.special import betaln, gammaln, logsumexp


class HypergeometricSequence:
    """Anytime-valid bounds of the share of ones in a 0/1 population sampled without replacement.

    A population of ``size`` rows holds ``m`` ones (unknown). Its rows are
    drawn in a uniformly random order; after ``t`` draws with ``ones`` ones
    the likelihood of ``m`` is hypergeometric, ``[m]_ones [size - m]_(t - ones)``
    (falling factorials). For any prior ``pi`` on ``m`` fixed before the
    draws, the prior-posterior ratio ``pi(m) / pi_t(m)`` is a nonnegative
    martingale at the true ``m`` (Waudby-Smith and Ramdas 2020, NeurIPS,
    "Confidence sequences for sampling without replacement", Thm. 1), so by
    Ville's inequality the set ``{m : pi_t(m) > alpha pi(m)}`` holds the true
    ``m`` at every ``t`` at once with probability ``1 - alpha``. The prior only
    moves where the set is narrow, never its validity. The prior here is half
    uniform and half beta-binomial around a share given before any draw
    (``guess``, e.g. the scores' mean confidence), so good scores narrow the
    set and misleading ones cost at most a factor 2 on ``alpha`` (the
    uniform half alone keeps half the prior mass on every ``m``).

    Parameters
    ----------
    size : int
        Rows in the population.
    guess : float, default=None
        The share of ones expected before any draw; None: a uniform prior.
    guess_strength : float, default=20.0
        Prior rows behind ``guess`` (the beta-binomial's ``a + b``).
    """

    def __init__(self, size, guess=None, guess_strength=20.0):
        self.size = int(size)
        m = np.arange(self.size + 1)
        log_prior = np.full(m.size, -np.log(m.size))
        if guess is not None:
            g = float(np.clip(guess, 0.01, 0.99))
            a, b = g * guess_strength, (1.0 - g) * guess_strength
            log_bb = (
                gammaln(self.size + 1)
                - gammaln(m + 1)
                - gammaln(self.size - m + 1)
                + betaln(m + a, self.size - m + b)
                - betaln(a, b)
            )
            log_prior = np.logaddexp(log_prior, log_bb) - np.log(2.0)
        self._m, self._log_prior = m, log_prior

    def bounds(self, ones, draws, alpha):
        """Lowest and highest share of ones in the set after ``draws`` draws, at each ``alpha``.

        Returns two arrays shaped like ``alpha``.
        """
        alpha = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
        m, N = self._m, self.size
        zeros = draws - ones
        possible = (m >= ones) & (N - m >= zeros)
        mm = m[possible]
        log_like = (
            gammaln(mm + 1)
            - gammaln(mm - ones + 1)
            + gammaln(N - mm + 1)
            - gammaln(N - mm - zeros + 1)
        )
        # m leaves the set once alpha reaches its likelihood over the marginal.
        log_p = log_like - logsumexp(self._log_prior[possible] + log_like)
        log_alpha = np.log(alpha)
        # The set {log_p > log alpha} is one run of m (the likelihood is unimodal):
        # its ends by running maxima from either side, searched at every alpha at once.
        from_left = np.maximum.accumulate(log_p)
        from_right = np.maximum.accumulate(log_p[::-1])
        first = np.searchsorted(from_left, log_alpha, side="right")
        last = np.searchsorted(from_right, log_alpha, side="right")
        empty = first >= mm.size  # only at alpha near 1: the most likely m is kept
        lo = np.where(empty, mm[np.argmax(log_p)], mm[np.minimum(first, mm.size - 1)])
        hi = np.where(empty, mm[np.argmax(log_p)], mm[::-1][np.minimum(last, mm.size - 1)])
        return lo / N, hi / N
