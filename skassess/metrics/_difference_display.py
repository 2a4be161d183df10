"""DifferenceDisplay: the posterior of a difference between two groups."""

from ..utils._text import plot_text
from ._accuracy import BayesianAccuracy
from ._base import DEFAULT_N_DRAWS, DEFAULT_PRIOR_STRENGTH
from ._display import plot_axes
from ._group_comparison import GroupComparison, compare_groups


class DifferenceDisplay:
    """Posterior density of the difference between two groups, with the ROPE shaded.

    Read more in the :ref:`User Guide <ug_comparing_groups>`.

    Parameters
    ----------
    comparison : GroupComparison
        The comparison to show.

    Attributes
    ----------
    bars_ : matplotlib BarContainer
        The histogram of the draws.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skassess.metrics import DifferenceDisplay
    >>> scores = np.tile([[0.9, 0.1], [0.2, 0.8]], (20, 1))
    >>> y = np.tile([0, 0], 20)
    >>> disp = DifferenceDisplay.from_predictions(y, scores, group_a=0, group_b=1)
    """

    def __init__(self, comparison):
        self.comparison = comparison

    def plot(self, *, ax=None, name=None, bins=60, **kwargs):
        """Draw a density histogram of the draws.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is made if None.
        name : str, default=None
            Legend label of the histogram.
        bins : int, default=60
            Histogram bins.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.hist`.

        Returns
        -------
        display : DifferenceDisplay
        """
        ax = plot_axes(ax, "DifferenceDisplay.plot")
        c = self.comparison
        style = {"color": "C0", "alpha": 0.7, **kwargs}
        if name is not None:
            style["label"] = plot_text(name)
        _, _, self.bars_ = ax.hist(c.samples, bins=bins, density=True, **style)
        ax.axvspan(-c.rope, c.rope, color="C2", alpha=0.2, label=f"ROPE ±{c.rope:g}")
        ax.axvline(0.0, color="0.3", lw=1)
        p_left, p_rope, p_right = c.probabilities
        ax.set_title(
            f"P(left)={p_left:.3f}  P(ROPE)={p_rope:.3f}  P(right)={p_right:.3f}",
            fontsize="medium",
        )
        ax.set(xlabel=plot_text(f"{c.group_a} - {c.group_b}"), ylabel="posterior density")
        ax.legend()
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_comparison(cls, comparison, *, ax=None, name=None, **kwargs):
        """Plot a :class:`GroupComparison`."""
        if not isinstance(comparison, GroupComparison):
            raise TypeError(
                f"comparison must be a GroupComparison; got {type(comparison).__name__}."
            )
        return cls(comparison).plot(ax=ax, name=name, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        group_a,
        group_b,
        *,
        rope=0.05,
        n_draws=DEFAULT_N_DRAWS,
        random_state=None,
        ax=None,
        name=None,
        **kwargs,
    ):
        """Compare two groups of a fitted estimator (see :func:`compare_groups`) and plot."""
        if not hasattr(estimator, "groupwise_samples"):
            raise TypeError(
                "estimator must be a fitted skassess estimator (with groupwise_samples); got "
                f"{type(estimator).__name__}."
            )
        comparison = compare_groups(
            estimator, group_a, group_b, rope=rope, n_draws=n_draws, random_state=random_state
        )
        return cls(comparison).plot(ax=ax, name=name, **kwargs)

    @classmethod
    def from_predictions(
        cls,
        y_true,
        y_score,
        *,
        group_a,
        group_b,
        group_by=None,
        metric="accuracy",
        rope=0.05,
        prior="uniform",
        prior_strength=DEFAULT_PRIOR_STRENGTH,
        missing_label=-1,
        random_state=None,
        ax=None,
        name=None,
        **kwargs,
    ):
        """Fit a :class:`BayesianAccuracy` and plot the difference between two groups.

        Groups are the predicted classes, or the labels in ``group_by``.
        """
        est = BayesianAccuracy(
            metric=metric,
            grouping="predicted_class" if group_by is None else "external",
            prior=prior,
            prior_strength=prior_strength,
            missing_label=missing_label,
            random_state=random_state,
        ).fit(y_score, y_true, group_by=group_by)
        return cls.from_estimator(est, group_a, group_b, rope=rope, ax=ax, name=name, **kwargs)
