"""Comparing and ranking groups from posterior draws: ROPE decisions, ranks, top-m.

Every function takes either a fitted skassess estimator (its
``groupwise_samples`` are compared: accuracy per group, calibration gap per
bin, expected cost per predicted class, ...) or a DataFrame of posterior
draws with one column per group.
"""

from collections.abc import Hashable
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..utils._params import LEVEL, N_DRAWS, ROPE, validate_args, validate_params
from ..utils._sklearn_compat import HasMethods, Interval
from ._base import DEFAULT_N_DRAWS
from ._rope import rope_probabilities

__all__ = ["GroupComparison", "compare_groups", "rank_groups", "top_m_groups", "worst_group"]

DECISIONS = ("left", "rope", "right")
#: The decision of a comparison no region reaches ``decision_probability`` for.
UNDECIDED = "undecided"
#: A region is called the decision from this posterior probability on.
DEFAULT_DECISION_PROBABILITY = 0.95
DECISION_PROBABILITY = Interval(Real, 0.5, 1, closed="right")


def _check_columns(source):
    repeated = source.columns[source.columns.duplicated()]
    if len(repeated):
        raise ValueError(
            f"the DataFrame of draws (source) names the group {repeated[0]!r} in two "
            "columns; each group needs one column."
        )


def _draws(source, n_draws, random_state):
    if isinstance(source, pd.DataFrame):
        if source.shape[1] < 1 or source.shape[0] < 1:
            raise ValueError("the DataFrame of draws must have at least one row and column.")
        _check_columns(source)
        draws = source.to_numpy(dtype=np.float64)
        if np.isnan(draws).any():
            column = source.columns[int(np.flatnonzero(np.isnan(draws).any(axis=0))[0])]
            raise ValueError(
                f"the draws of group {column!r} hold NaN (a rate with no defined value); "
                "drop the group or the draws before comparing."
            )
        if np.isinf(draws).any():
            column = source.columns[int(np.flatnonzero(np.isinf(draws).any(axis=0))[0])]
            raise ValueError(
                f"the draws of group {column!r} hold an infinite value; posterior draws of "
                "a metric are finite."
            )
        return draws, source.columns
    if hasattr(source, "held_samples"):
        # a group whose labels depart from the shared map: its labels alone
        return source.held_samples(n_draws, random_state), source.groups_
    return source.groupwise_samples(n_draws, random_state), source.groups_


def _groups(estimator):
    check_is_fitted(estimator)
    return estimator.groups_


def _position(labels, group, name):
    try:
        hash(group)
        pos = labels.get_loc(group)
    except (KeyError, TypeError, pd.errors.InvalidIndexError):
        pos = None
    if not isinstance(pos, Integral):
        raise ValueError(f"{name}={group!r} is not a group; groups are {labels.tolist()!r}.")
    return int(pos)


class GroupComparison:
    """Posterior of the difference ``delta = theta_a - theta_b`` between two groups.

    Read more in the :ref:`User Guide <ug_comparing_groups>`.

    With a region of practical equivalence (ROPE) ``[-rope, rope]`` in metric
    units, the three probabilities ``(p_left, p_rope, p_right)`` are
    ``P(delta < -rope)``, ``P(|delta| <= rope)`` and ``P(delta > rope)``
    (:func:`rope_probabilities`).
    The most probable region has probability ``lambda`` (:attr:`confidence`);
    it is the :attr:`decision` only if ``lambda >= decision_probability``,
    else the decision is ``"undecided"`` (the probabilities stay as they
    are).

    Parameters
    ----------
    samples : ndarray of shape (n_draws,)
        Posterior draws of ``delta``.
    group_a, group_b : hashable
        The groups compared.
    rope : float
        Half-width of the ROPE.
    decision_probability : float, default=0.95
        The posterior probability a region needs to be called the decision.

    Attributes
    ----------
    samples : ndarray of shape (n_draws,)
        Posterior draws of ``delta``.
    """

    def __init__(
        self, samples, group_a, group_b, rope, decision_probability=DEFAULT_DECISION_PROBABILITY
    ):
        self.samples = np.asarray(samples, dtype=np.float64)
        self.group_a = group_a
        self.group_b = group_b
        self.rope = rope
        self.decision_probability = decision_probability

    @property
    def probabilities(self):
        """``(p_left, p_rope, p_right)``."""
        return tuple(float(p) for p in rope_probabilities(self.samples, self.rope))

    @property
    def most_probable(self):
        """The most probable region: ``"left"``, ``"rope"`` or ``"right"``."""
        return DECISIONS[int(np.argmax(self.probabilities))]

    @property
    def decision(self):
        """``"left"`` (a lower than b), ``"rope"`` (practically equal), ``"right"``, or
        ``"undecided"`` when no region has probability ``decision_probability``."""
        if self.confidence < self.decision_probability:
            return UNDECIDED
        return self.most_probable

    @property
    def confidence(self):
        """Posterior probability ``lambda`` of the most probable region."""
        return max(self.probabilities)

    @property
    def mean(self):
        """Posterior mean of ``delta``."""
        return float(self.samples.mean())

    @validate_args({"level": [LEVEL]})
    def interval(self, level=0.95):
        """Equal-tailed credible interval of ``delta``."""
        tail = (1.0 - level) / 2.0
        lower, upper = np.quantile(self.samples, [tail, 1.0 - tail])
        return float(lower), float(upper)

    @validate_args({"level": [LEVEL]})
    def summary(self, level=0.95):
        """One-row DataFrame: mean, interval, the three probabilities, decision, confidence."""
        lower, upper = self.interval(level)
        p_left, p_rope, p_right = self.probabilities
        return pd.DataFrame(
            {
                "group_a": [self.group_a],
                "group_b": [self.group_b],
                "mean": [self.mean],
                "lower": [lower],
                "upper": [upper],
                "p_left": [p_left],
                "p_rope": [p_rope],
                "p_right": [p_right],
                "decision": [self.decision],
                "confidence": [self.confidence],
            }
        )

    def __repr__(self):
        p = ", ".join(f"{v:.3f}" for v in self.probabilities)
        return (
            f"GroupComparison({self.group_a!r} - {self.group_b!r}: mean={self.mean:.4f}, "
            f"(p_left, p_rope, p_right)=({p}), decision={self.decision!r})"
        )


@validate_params(
    {
        "source": [HasMethods("groupwise_samples"), pd.DataFrame],
        "group_a": [Hashable],
        "group_b": [Hashable],
        "rope": [ROPE],
        "decision_probability": [DECISION_PROBABILITY],
        "n_draws": [N_DRAWS],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=False,
)
def compare_groups(
    source,
    group_a,
    group_b,
    *,
    rope=0.05,
    decision_probability=DEFAULT_DECISION_PROBABILITY,
    n_draws=DEFAULT_N_DRAWS,
    random_state=None,
):
    """Posterior of the difference between two groups' metric, with a ROPE.

    Parameters
    ----------
    source : fitted estimator or pandas.DataFrame
        A fitted skassess estimator, or posterior draws with one column per
        group. A group that the estimator's departure check flags (the
        calibrated :class:`~skassess.BayesianAccuracy`) is read from its
        labels alone.
    group_a, group_b : hashable
        Labels of the two groups (as in the estimator's ``groups_``).
    rope : float, default=0.05
        Half-width of the region of practical equivalence, in metric units.
    decision_probability : float, default=0.95
        The posterior probability, in [0.5, 1], a region needs to be called
        the comparison's ``decision``; below it the decision is
        ``"undecided"``.
    n_draws : int, default=4000
        Number of posterior draws (estimators only).
    random_state : int, RandomState instance or None, default=None
        Seed of the draws; None uses the estimator's ``random_state``.

    Returns
    -------
    comparison : GroupComparison

    Examples
    --------
    >>> import numpy as np
    >>> from skassess import BayesianAccuracy
    >>> from skassess.metrics import compare_groups
    >>> scores = np.tile([[0.9, 0.1], [0.2, 0.8]], (50, 1))
    >>> y = np.tile([0, 0], 50)  # class 0 always right, class 1 always wrong
    >>> est = BayesianAccuracy(random_state=0).fit(scores, y)
    >>> compare_groups(est, 0, 1).decision
    'right'
    """
    # The groups are checked before any draw (a large posterior takes seconds to draw).
    if isinstance(source, pd.DataFrame):
        _check_columns(source)
    labels = source.columns if isinstance(source, pd.DataFrame) else _groups(source)
    a = _position(labels, group_a, "group_a")
    b = _position(labels, group_b, "group_b")
    if a == b:
        raise ValueError(f"group_a and group_b must differ; both are {group_a!r}.")
    draws, labels = _draws(source, n_draws, random_state)
    return GroupComparison(
        draws[:, a] - draws[:, b], group_a, group_b, float(rope), float(decision_probability)
    )


def _ranks(draws):
    """Rank 1 = lowest value, per draw."""
    return draws.argsort(axis=1).argsort(axis=1) + 1


@validate_params(
    {
        "source": [HasMethods("groupwise_samples"), pd.DataFrame],
        "n_draws": [N_DRAWS],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=False,
)
def rank_groups(source, *, n_draws=DEFAULT_N_DRAWS, random_state=None):
    """Posterior of each group's rank (1 = lowest value).

    Parameters
    ----------
    source : fitted estimator or pandas.DataFrame
        A fitted skassess estimator, or posterior draws with one column per
        group. A group that the estimator's departure check flags (the
        calibrated :class:`~skassess.BayesianAccuracy`) is read from its
        labels alone.
    n_draws : int, default=4000
        Number of posterior draws (estimators only).
    random_state : int, RandomState instance or None, default=None
        Seed of the draws.

    Returns
    -------
    ranks : pandas.DataFrame
        One row per group with ``mean`` (posterior mean of the metric),
        ``expected_rank``, ``p_lowest`` (e.g. P(least accurate)),
        ``p_highest``, and ``p_rank_r`` = P(rank = r) for each rank ``r``.
    """
    draws, labels = _draws(source, n_draws, random_state)
    n, G = draws.shape
    ranks = _ranks(draws)
    cells = np.arange(G)[None, :] * G + (ranks - 1)
    prob = np.bincount(cells.ravel(), minlength=G * G).reshape(G, G) / n
    table = pd.DataFrame(
        {
            "mean": draws.mean(axis=0),
            "expected_rank": ranks.mean(axis=0),
            "p_lowest": prob[:, 0],
            "p_highest": prob[:, -1],
        },
        index=labels,
    )
    rank_cols = pd.DataFrame(prob, index=labels, columns=[f"p_rank_{r}" for r in range(1, G + 1)])
    return pd.concat([table, rank_cols], axis=1)


@validate_params(
    {
        "source": [HasMethods("groupwise_samples"), pd.DataFrame],
        "m": [Interval(Integral, 1, None, closed="left")],
        "highest": ["boolean"],
        "n_draws": [N_DRAWS],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=False,
)
def top_m_groups(source, m, *, highest=False, n_draws=DEFAULT_N_DRAWS, random_state=None):
    """The ``m`` groups most probably among the ``m`` lowest (or highest).

    Parameters
    ----------
    source : fitted estimator or pandas.DataFrame
        A fitted skassess estimator, or posterior draws with one column per
        group. A group that the estimator's departure check flags (the
        calibrated :class:`~skassess.BayesianAccuracy`) is read from its
        labels alone.
    m : int
        Number of groups to select, ``1 <= m <= n_groups``.
    highest : bool, default=False
        Select the highest values (e.g. the most costly classes) instead.
    n_draws : int, default=4000
        Number of posterior draws (estimators only).
    random_state : int, RandomState instance or None, default=None
        Seed of the draws.

    Returns
    -------
    top : pandas.DataFrame
        All groups sorted by ``p_top_m`` = P(group is among the m lowest /
        highest), with ``mean`` and ``selected`` (True for the first ``m``).
    """
    draws, labels = _draws(source, n_draws, random_state)
    G = draws.shape[1]
    if m > G:
        raise ValueError(f"m must be at most the number of groups ({G}); got {m!r}.")
    ranks = _ranks(-draws if highest else draws)
    table = pd.DataFrame(
        {"mean": draws.mean(axis=0), "p_top_m": (ranks <= m).mean(axis=0)}, index=labels
    )
    table = table.sort_values(["p_top_m", "mean"], ascending=[False, not highest])
    table["selected"] = np.arange(G) < m
    return table


@validate_params(
    {
        "source": [HasMethods("groupwise_samples"), pd.DataFrame],
        "level": [LEVEL],
        "highest": ["boolean"],
        "n_draws": [N_DRAWS],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def worst_group(source, *, level=0.95, highest=False, n_draws=DEFAULT_N_DRAWS, random_state=None):
    """The worst group's value: the minimum over groups, and the group ranked last.

    "Which group is least accurate, and how accurate is it?" has two
    answers. The *minimum over groups* ``min_g theta_g`` is read draw by
    draw: whichever group is lowest in a draw, so it is never above any
    group's value. The *group ranked last* is the group of the lowest
    posterior mean; its row is that group's own posterior.

    With an estimator whose departure check flags groups (the calibrated
    :class:`~skassess.BayesianAccuracy`), a flagged group's draws are those
    of its labels alone: the map that pulls it toward the other groups is
    what its labels disagree with, and the worst group is the one a user
    acts on.

    Parameters
    ----------
    source : fitted estimator or pandas.DataFrame
        A fitted skassess estimator, or posterior draws with one column per
        group. A group that the estimator's departure check flags (the
        calibrated :class:`~skassess.BayesianAccuracy`) is read from its
        labels alone.
    level : float, default=0.95
        Credible level of the equal-tailed intervals.
    highest : bool, default=False
        The maximum and the group ranked first instead (e.g. the most costly
        class).
    n_draws : int, default=4000
        Number of posterior draws (estimators only).
    random_state : int, RandomState instance or None, default=None
        Seed of the draws.

    Returns
    -------
    worst : pandas.DataFrame
        Two rows, ``"minimum over groups"`` (``"maximum ..."`` with
        ``highest``) and ``"ranked last"`` (``"ranked first"``), with
        ``group`` (the group ranked last; NaN for the minimum), ``mean``,
        ``lower``, ``upper`` and ``p_worst`` (the probability that the group
        ranked last is the worst; 1 for the minimum).

    Examples
    --------
    >>> import pandas as pd
    >>> from skassess.metrics import worst_group
    >>> draws = pd.DataFrame({"a": [0.9, 0.8, 0.85], "b": [0.7, 0.85, 0.6]})
    >>> worst_group(draws)[["group", "mean"]].round(3)
                          group   mean
    minimum over groups   NaN  0.700
    ranked last             b  0.717
    """
    draws, labels = _draws(source, n_draws, random_state)
    signed = -draws if highest else draws
    tail = (1.0 - level) / 2.0
    extreme = signed.min(axis=1)
    last = int(np.argmin(signed.mean(axis=0)))
    p_worst = float((np.argmin(signed, axis=1) == last).mean())
    rows = []
    for values, group, p in ((extreme, None, 1.0), (signed[:, last], labels[last], p_worst)):
        values = -values if highest else values
        lower, upper = np.quantile(values, [tail, 1.0 - tail])
        rows.append(
            {"group": group, "mean": values.mean(), "lower": lower, "upper": upper, "p_worst": p}
        )
    index = (
        ["maximum over groups", "ranked first"]
        if highest
        else ["minimum over groups", "ranked last"]
    )
    return pd.DataFrame(rows, index=index)
