"""Anytime-valid intervals per group and answers they confirm, for ActiveAssessor."""

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..metrics import BayesianAccuracy
from ..utils._confseq import HypergeometricSequence
from ..utils._params import LEVEL, validate_args
from ._setup import is_group_strategy

#: Levels :meth:`ActiveAssessor.certified_level` reports (it rounds down to one):
#: a fine grid, with the usual levels exactly.
CERTIFY_LEVELS = np.unique(
    np.r_[
        1.0 - np.exp(-np.linspace(0.0, np.log(1e6), 1201)),
        0.5,
        0.8,
        0.9,
        0.95,
        0.975,
        0.99,
        0.995,
        0.999,
    ]
)


def has_anytime_answers(task, strategy, estimator, setup):
    """Whether the anytime-valid intervals and confirmed answers apply."""
    return (
        task in ("least_accurate", "most_accurate", "compare")
        and is_group_strategy(strategy)
        and isinstance(estimator, BayesianAccuracy)
        and estimator.metric == "accuracy"
        and setup.arm_of_cell is None
    )


class AnytimeAnswersMixin:
    """:meth:`anytime_intervals` and :meth:`certified_level` of an :class:`ActiveAssessor`.

    The class using it keeps ``task``, ``rope``, ``strategy_``, ``estimator_``,
    ``_setup``, ``labels_``, ``_skipped``, ``_pred``, ``_scores`` and each
    group's random walk (``_order``, ``_arm_end``; a partitioned ``_pool``
    keeps its own walks), and implements
    ``identification_probabilities`` and ``comparison_probabilities``.
    """

    @validate_args({"level": [LEVEL]})
    def anytime_intervals(self, level=0.95):
        """Anytime-valid intervals of the groups' accuracies, from the labels so far.

        A group strategy labels a uniformly random row of the chosen group
        (the group's rows are walked in one random order fixed at
        :meth:`fit`). So each group's labels are a sample without replacement
        from it, whatever the strategy chose when, and a confidence
        *sequence* of its accuracy holds at every number of labels at once:
        the intervals keep their level under any stop rule, unlike posterior
        intervals read after every label. Each interval is the
        prior-posterior-ratio confidence sequence of sampling without
        replacement (Waudby-Smith and Ramdas 2020) at level
        ``1 - (1 - level) / G`` for the ``G`` groups the task labels (a union
        bound), so with probability at least ``level`` all hold at once, at
        every step. Its prior, fixed before any label, is half uniform and
        half centred on the group's mean top-1 score: scores that match the
        accuracy narrow it, misleading ones cannot break it.

        A group's sequence uses the labels along its order up to the first
        row neither labeled nor skipped (labels given out of that order count
        once the walk reaches them). A skipped row counts as wrong for the
        lower bound and right for the upper one; this holds when skipping
        depends on the row, not on when it came.

        Parameters
        ----------
        level : float, default=0.95
            Probability that every interval holds its group's accuracy, at
            every step of the labeling.

        Returns
        -------
        intervals : pandas.DataFrame
            Indexed by :attr:`groups_`: ``lower``, ``upper`` and ``n_walked``
            (the rows of the group's sequence); NaN for groups the task does
            not label.

        Raises
        ------
        ValueError
            If the strategy chooses items rather than groups, or the
            estimator is not ``BayesianAccuracy(metric="accuracy")``.

        Examples
        --------
        >>> from skassess.datasets import load_fashion_mnist_scores
        >>> from skassess.samplers import ActiveAssessor
        >>> data = load_fashion_mnist_scores()
        >>> assessor = ActiveAssessor(task="least_accurate", random_state=0).fit(data.scores)
        >>> assessor = assessor.run(data.target, budget=60, progress=False)
        >>> intervals = assessor.anytime_intervals(0.9)
        >>> list(intervals.columns)
        ['lower', 'upper', 'n_walked']
        """
        check_is_fitted(self)
        lower, upper, walked = self._anytime_bounds(np.array([1.0 - level]))
        return pd.DataFrame(
            {"lower": lower[:, 0], "upper": upper[:, 0], "n_walked": walked}, index=self.groups_
        )

    def certifies(self):
        """Whether :meth:`certified_level` applies: its task, a group strategy, accuracy."""
        check_is_fitted(self)
        return has_anytime_answers(self.task, self.strategy_, self.estimator_, self._setup)

    def certified_level(self, answer=None):
        """The highest level at which the anytime-valid intervals confirm an answer.

        For ``task="least_accurate"`` (``"most_accurate"``) the answer is a
        group: it is confirmed at level ``L`` when its
        :meth:`anytime_intervals` upper bound at ``L`` lies below (its lower
        bound above) every other group's bound. For ``task="compare"`` the
        answer is one of ``"lower"``, ``"equal"``, ``"higher"``: the first
        compared group's accuracy is below the second's by more than
        ``rope``, within ``rope`` of it, or above it by more than ``rope``,
        confirmed when the intervals' difference lies in that region. A
        labeling run that stops once the level reaches ``L`` is wrong with
        probability at most ``1 - L`` (the intervals hold at every step).

        Parameters
        ----------
        answer : group label or str, default=None
            The answer to check; None: the posterior's most probable one
            (the top of :meth:`identification_probabilities`, the most
            probable region of :meth:`comparison_probabilities`).

        Returns
        -------
        level : float
            In [0, 1), rounded down to a grid of levels (0 where the
            intervals confirm nothing yet).

        Raises
        ------
        ValueError
            As :meth:`anytime_intervals`, and for a task other than the
            three above or an answer that is not one of its answers.
        """
        check_is_fitted(self)
        task = self._setup.task
        if self.task not in ("least_accurate", "most_accurate", "compare"):
            raise ValueError(
                "certified_level needs task='least_accurate', 'most_accurate' or 'compare'; "
                f"task={self.task!r}."
            )
        alpha = 1.0 - CERTIFY_LEVELS
        lower, upper, _ = self._anytime_bounds(alpha)
        if self.task == "compare":
            regions = ("lower", "equal", "higher")
            if answer is None:
                answer = regions[int(np.argmax(self.comparison_probabilities()))]
            if answer not in regions:
                raise ValueError(
                    f"answer must be one of {list(regions)} for task='compare'; got {answer!r}."
                )
            a, b = task.pair
            lo, hi = lower[a] - upper[b], upper[a] - lower[b]
            ok = {
                "lower": hi < -self.rope,
                "higher": lo > self.rope,
                "equal": (lo >= -self.rope) & (hi <= self.rope),
            }[answer]
        else:
            if answer is None:
                answer = self.identification_probabilities().idxmax()
            if answer not in self.groups_:
                raise ValueError(
                    f"answer must be one of the groups {list(self.groups_)}; got {answer!r}."
                )
            k = self.groups_.get_loc(answer)
            if not task.allowed[k]:
                return 0.0
            others = np.flatnonzero(task.allowed & (np.arange(len(task.allowed)) != k))
            if self.task == "least_accurate":
                ok = upper[k] < lower[others].min(axis=0, initial=np.inf)
            else:
                ok = lower[k] > upper[others].max(axis=0, initial=-np.inf)
        return float(CERTIFY_LEVELS[ok].max(initial=0.0))

    def _anytime_bounds(self, alpha):
        """Lower and upper bounds (groups x alphas) and the rows each group's walk holds."""
        if not is_group_strategy(self.strategy_):
            raise ValueError(
                "Anytime-valid intervals need a strategy that chooses groups (labeling a "
                f"uniformly random row of each); got {type(self.strategy_).__name__}, which "
                "chooses items."
            )
        est = self.estimator_
        if (
            not isinstance(est, BayesianAccuracy)
            or est.metric != "accuracy"
            or self._setup.arm_of_cell is not None
        ):
            raise ValueError(
                "Anytime-valid intervals need the estimator BayesianAccuracy(metric="
                f"'accuracy'); got {type(est).__name__}"
                + (f"(metric={est.metric!r})" if hasattr(est, "metric") else "")
                + "."
            )
        allowed = self._setup.task.allowed
        n_arms = len(allowed)
        per_group = alpha / allowed.sum()  # a union bound over the groups labeled
        lower = np.full((n_arms, alpha.size), np.nan)
        upper = np.full((n_arms, alpha.size), np.nan)
        walked = np.zeros(n_arms, dtype=np.int64)
        for arm in np.flatnonzero(allowed):
            codes, pred, size, guess = self._walked(arm)
            n = codes.size
            right = int(np.sum(codes == pred))
            skipped = int(np.sum(codes < 0))
            # The scores set the prior of each sequence before any label (never the labels).
            seq = HypergeometricSequence(size, guess=guess)
            if skipped:
                # Skipped rows count as wrong for the lower bound, right for the upper
                # one: two sequences, each at half the group's error.
                lower[arm] = seq.bounds(right, n, per_group / 2)[0]
                upper[arm] = seq.bounds(right + skipped, n, per_group / 2)[1]
            else:
                lower[arm], upper[arm] = seq.bounds(right, n, per_group)
            walked[arm] = n
        return lower, upper, walked

    def _walked(self, arm):
        """The arm's walk up to its first open row: the label codes (``-1``:
        skipped) and predicted classes of those rows, the arm's size and its
        mean top-1 confidence."""
        if self._pool is not None:
            codes, pred = self._pool.walked(arm, self.labels_, self._skipped)
            return (
                codes,
                pred,
                int(self._pool.arm_sizes[arm]),
                float(self._pool.mean_confidence[arm]),
            )
        start = self._arm_end[arm - 1] if arm else 0
        rows = self._order[start : self._arm_end[arm]]
        known = self.labels_[rows] >= 0
        open_ = ~known & ~self._skipped[rows]
        n = int(np.argmax(open_)) if open_.any() else rows.size
        walk = rows[:n]
        confidence = self._scores[rows, self._pred[rows]]
        return self.labels_[walk], self._pred[walk], rows.size, float(confidence.mean())
