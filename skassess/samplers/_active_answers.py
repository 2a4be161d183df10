"""ActiveAssessor's answers: the task's current answer and the probabilities behind it."""

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..metrics import BetaPosterior, rope_probabilities
from ..utils._params import LEVEL, validate_args
from ..utils._random import check_generator
from ..utils._sklearn_compat import Interval
from ..utils._validation import as_scalar
from ._setup import initial_state


class _AssessorAnswers:
    """What :class:`ActiveAssessor` answers: a progress line's text, the compare
    task's region probabilities, an identification task's probabilities."""

    # ----------------------------------------------------------------- answer
    @validate_args({"level": [LEVEL]})
    def answer(self, level=0.95, *, group_names=None):
        """The task's current answer: what a progress line shows and a stop rule reads.

        Parameters
        ----------
        level : float, default=0.95
            Level of the intervals whose widest width is ``max_width``.
        group_names : sequence, default=None
            Names of the groups in the text, by group position (e.g. class
            names); None: the group labels.

        Returns
        -------
        answer : dict
            ``text`` (one line), ``probability`` (of the top candidate, the
            most probable comparison region; None for ``"estimate"``),
            ``certified`` (:meth:`certified_level` of that answer, for the
            tasks and strategies that have it; else None) and ``max_width``
            (the widest per-group ``level`` interval).
        """
        check_is_fitted(self)
        est = self.estimator_
        groups = list(self.groups_)

        def name(group):
            if group_names is None:
                return str(as_scalar(group))
            return str(group_names[groups.index(group)])

        if hasattr(est, "groupwise_interval"):  # without the summary's prior means
            lower, upper = est.groupwise_interval(level)
        else:
            summary = est.summary(level)
            lower, upper = summary["lower"].to_numpy(), summary["upper"].to_numpy()
        widths = np.asarray(upper) - np.asarray(lower)
        out = {
            "max_width": float(np.nanmax(widths)) if len(widths) else float("nan"),
            "probability": None,
            "certified": None,
        }
        certifiable = self.certifies()
        if self.task == "compare":
            p = self.comparison_probabilities()
            a, b = (name(g) for g in self._setup.arm_labels[list(self._setup.task.pair)])
            names = (f"{a} < {b}", "practically equal", f"{a} > {b}")
            k = int(np.argmax(p))
            out["probability"] = p[k]
            if certifiable:
                out["certified"] = self.certified_level(("lower", "equal", "higher")[k])
            out["text"] = f"{names[k]} (P = {p[k]:.3f}{certified_text(out)}; rope ±{self.rope:g})"
        elif self.task == "estimate":
            lo, hi = est.overall_interval(level)
            metric = getattr(est, "metric", "accuracy")
            what = "overall" if metric == "accuracy" else f"overall {metric.upper()}"
            out["text"] = (
                f"{what} {est.overall_mean():.4f} [{lo:.4f}, {hi:.4f}]; widest "
                f"group interval {out['max_width']:.3f}"
            )
        else:
            p = self.identification_probabilities()
            out["probability"] = float(p.max())
            if certifiable:
                out["certified"] = self.certified_level(p.idxmax())
            words = self.task.replace("_", " ")
            out["text"] = f"{words}: {name(p.idxmax())} (P = {p.max():.3f}{certified_text(out)})"
        return out

    # ------------------------------------------------------------------- loop
    def comparison_probabilities(self):
        """``(p_left, p_rope, p_right)`` of the compared groups' difference (compare task).

        ``Delta`` is the rate of the first compared group minus the second's;
        the probabilities are those of :func:`~skassess.metrics.rope_probabilities`
        (exact Beta quadrature).
        """
        check_is_fitted(self)
        if self.task != "compare":
            raise ValueError("comparison_probabilities needs task='compare'.")
        a, b = self._setup.task.pair
        post = self.estimator_.posterior_
        probs = rope_probabilities(
            (
                BetaPosterior(post.alpha[a], post.beta[a]),
                BetaPosterior(post.alpha[b], post.beta[b]),
            ),
            self.rope,
        )
        return tuple(float(p) for p in probs[0])

    @validate_args(
        {
            "n_draws": [Interval(Integral, 1, None, closed="left")],
            "random_state": ["random_state"],
        },
    )
    def identification_probabilities(self, n_draws=4000, random_state=None):
        """P(group is the answer) of an identification task, by posterior draws.

        For ``task="least_accurate"`` the probability that each group has the
        lowest rate; ``"most_accurate"`` the highest; ``"least_calibrated"``
        the largest class ECE; ``"most_costly"`` the highest expected cost.
        The draws use their own generator, never the one that chooses the
        next item: seeded by ``random_state``, or where it is None by the
        assessor's ``random_state`` (an int gives the same draws at every
        call; None fresh ones).

        Returns
        -------
        probabilities : pandas.Series
            Indexed by :attr:`groups_`; sums to 1.
        """
        check_is_fitted(self)
        task = self._setup.task
        if not task.identifies:
            raise ValueError(
                f"identification_probabilities needs an identification task; task={self.task!r}."
            )
        rng = check_generator(self.random_state if random_state is None else random_state)
        state = initial_state(self.estimator_, self._setup, n_draws)
        reward = np.where(task.allowed, task.reward(state, state.draw(rng)), -np.inf)
        best = np.bincount(reward.argmax(axis=1), minlength=self._setup.n_arms)
        return pd.Series(best / n_draws, index=self.groups_, name="probability")


def certified_text(answer):
    c = answer["certified"]
    if c is None:
        return ""
    # level 0: the anytime-valid intervals confirm nothing yet
    return "; not yet certified" if c <= 0 else f"; anytime-valid at {c:.2f}"
