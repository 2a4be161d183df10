"""Tail probabilities of a sum of binomial counts (a Poisson-binomial count).

A group's replicated successes ``S = sum_c Binomial(n_c, p_c)`` over its
labeled cells, compared with its observed successes ``s`` by ``P(S < s)`` and
``P(S > s)`` (the departure check of
:meth:`~skassess.metrics._calibrated.CalibratedRates.departure`). Per set of
``p_c``:

* where the labels hold fewer than ``EXACT_MINORITY`` of one outcome (the
  minority), the tail on that side is exact. With ``F`` the count of the
  minority outcome and ``r_c`` its probability in cell ``c``, ``P(F = k) =
  P(F = 0) e_k(rho)``, ``e_k`` the ``k``-th elementary symmetric polynomial
  of the trials' odds ``rho = r / (1 - r)``, computed from their power sums by
  Newton's identities, which are stable in floating point where every
  ``rho <= 1``; the count of a cell where the minority is the likelier outcome
  (``r_c > 1/2``, rare where the labels hold few of it) is drawn instead, and
  the rest's tail read at the observed minority less that draw;
* elsewhere, the refined normal approximation (Volkova 1996): the normal of
  the count's exact mean and variance with a skewness correction,
  ``P(S <= k) ~ G((k + 1/2 - mu) / sigma)``, ``G(x) = Phi(x) + gamma (1 - x^2)
  phi(x) / 6``, continuity-corrected for whole counts. Its error in a tail
  probability stays under about 0.015 where the count's variance is 2 or
  more; where it is about 1 (few labels in cells of far apart probabilities)
  it reaches about 0.04.
"""

import numpy as np
from scipy.special import ndtr

#: Fewer labels than this of one outcome in a group: that tail is exact.
EXACT_MINORITY = 8


def count_tails(p, n, cell_group, observed, *, rng, whole=True):
    """``P(S < s)`` and ``P(S > s)`` per set of the cells' success probabilities.

    Parameters
    ----------
    p : ndarray of shape (n_sets, n_cells)
        The cells' success probabilities, one set per row.
    n : ndarray of shape (n_cells,)
        Trials per cell.
    cell_group : ndarray of int of shape (n_cells,)
        Each cell's group, in ``range(n_groups)``.
    observed : ndarray of shape (n_groups,)
        Each group's observed successes ``s``.
    whole : bool, default=True
        Whether the counts are whole numbers (the exact tails and the
        continuity correction need it); False: the normal approximation
        throughout, without the correction.
    rng : numpy.random.Generator
        Source of the counts drawn in cells where a set makes the minority
        outcome the likelier one (see the module).

    Returns
    -------
    below, above : ndarray of shape (n_sets, n_groups)
        ``P(S < s)`` and ``P(S > s)``; a group without cells has ``S = 0``.
    """
    n_groups = observed.size
    in_group = np.zeros((n.size, n_groups))
    in_group[np.arange(n.size), cell_group] = n
    total = in_group.sum(axis=0)
    exact = np.zeros(n_groups, dtype=bool)
    if whole:
        exact = np.minimum(observed, total - observed) < EXACT_MINORITY
    below, above = np.empty((p.shape[0], n_groups)), np.empty((p.shape[0], n_groups))
    for cols, tails in ((exact, _exact_minority), (~exact, _refined_normal)):
        if cols.any():
            cells = in_group[:, cols].any(axis=1)
            below[:, cols], above[:, cols] = tails(
                p[:, cells], in_group[np.ix_(cells, cols)], observed[cols], whole, rng
            )
    return below, above


def _refined_normal(p, in_group, observed, whole, rng):
    """Tails by the normal of the count's moments with a skewness correction."""
    half = 0.5 if whole else 0.0
    mean = p @ in_group
    q = 1.0 - p
    pq = p * q
    var = pq @ in_group
    q -= p
    pq *= q  # p q (q - p): the third central moment's terms
    third = pq @ in_group
    sd = np.sqrt(var)
    degenerate = sd < 1e-6  # the count is about certain: a step at its mean
    sd = np.where(degenerate, 1.0, sd)
    gamma = np.where(degenerate, 0.0, third / sd**3)

    def cdf(k):  # P(S <= k), k a half-integer for whole counts
        x = (k - mean) / sd
        x = np.where(degenerate, np.sign(x) * 40.0, np.clip(x, -40.0, 40.0))
        phi = np.exp(-0.5 * x**2) / np.sqrt(2.0 * np.pi)
        return np.clip(ndtr(x) + gamma * (1.0 - x**2) * phi / 6.0, 0.0, 1.0)

    return cdf(observed - half), 1.0 - cdf(observed + half)


def _exact_minority(p, in_group, observed, whole, rng):
    """Tails of groups with few labels of one outcome (see the module)."""
    failures = in_group.sum(axis=0) - observed
    on_failures = failures <= observed  # each group's minority outcome
    minority = np.where(on_failures, failures, observed).astype(np.int64)
    group = in_group.argmax(axis=1)  # a cell is in one group
    trials = in_group.sum(axis=1)
    r = np.where(on_failures[group], 1.0 - p, p)  # the minority's probability
    # Cells where the minority is the likelier outcome: their count is drawn.
    likely = r > 0.5
    drawn = np.zeros(p.shape[0] * observed.size)
    if likely.any():
        sets, cells = np.nonzero(likely)
        count = rng.binomial(trials[cells].astype(np.int64), r[sets, cells])
        drawn = np.bincount(sets * observed.size + group[cells], count, drawn.size)
    drawn = drawn.reshape(p.shape[0], observed.size)
    r[likely] = 0.0
    # The rest exactly: P(A = k) = P(A = 0) e_k(rho), rho = r / (1 - r) <= 1.
    p0 = np.exp(np.log1p(-r) @ in_group)
    rho = r / (1.0 - r)
    need = minority - drawn  # F = m where A = m - (the drawn count)
    fewer = np.where(need > 0, p0, 0.0)  # P(F < m) = P(A < need)
    equal = np.where(need == 0, p0, 0.0)  # P(F = m) = P(A = need)
    power, sums, e = np.ones_like(rho), [], [np.ones_like(p0)]
    for k in range(1, int(minority.max()) + 1):
        power *= rho
        sums.append(power @ in_group)
        e.append(sum((-1) ** (j - 1) * e[k - j] * sums[j - 1] for j in range(1, k + 1)) / k)
        pmf = np.clip(p0 * e[k], 0.0, 1.0)
        fewer += np.where(k < need, pmf, 0.0)
        equal += np.where(k == need, pmf, 0.0)
    more = np.clip(1.0 - fewer - equal, 0.0, 1.0)  # P(F > m)
    # S < s is F > m where the minority is the failures, F < m where the successes
    return np.where(on_failures, more, fewer), np.where(on_failures, fewer, more)
