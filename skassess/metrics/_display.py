"""Plots of posteriors: reliability diagrams, per-group intervals, group and model comparisons.

matplotlib is imported only when a plot is drawn (``pip install skassess[plot]``).
"""

import numpy as np
import pandas as pd

from ..utils import LEVEL, N_DRAWS, plot_text, validate_args
from ..utils._deprecation import warn_deprecated
from ..utils._sklearn_compat import HasMethods
from ._accuracy import BayesianAccuracy
from ._base import DEFAULT_N_DRAWS, DEFAULT_PRIOR_STRENGTH
from ._calibration_error import BayesianCalibrationError
from ._group_comparison import GroupComparison, compare_groups
from ._model_comparison import best_shares

__all__ = ["DifferenceDisplay", "ModelComparisonDisplay", "PosteriorDisplay", "ReliabilityDisplay"]


def _axes(ax, caller):
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(f"{caller} needs matplotlib: pip install 'skassess[plot]'.") from exc

    if ax is None:
        _, ax = plt.subplots()
    return ax


def _group_draws(estimator, n_draws, random_state):
    """Draws of the per-group quantity, one column per group."""
    if isinstance(estimator, BayesianCalibrationError) and estimator.classwise:
        return estimator.classwise_ece_samples(n_draws, random_state)
    return pd.DataFrame(
        estimator.groupwise_samples(n_draws, random_state), columns=estimator.groups_
    )


def _intervals(draws, level):
    tail = (1.0 - level) / 2.0
    lower, upper = np.quantile(draws.to_numpy(), [tail, 1 - tail], axis=0)
    # Identical draws (a fully labeled group) average to their value, not a rounding off.
    return np.clip(draws.mean(axis=0).to_numpy(), lower, upper), lower, upper


class ReliabilityDisplay:
    """Bayesian reliability diagram: posterior accuracy per confidence bin.

    Read more in the :ref:`User Guide <ug_calibration_error>`.

    Each bin shows the posterior mean accuracy and its credible interval at
    the bin's mean confidence; the diagonal is perfect calibration; bars show
    how many rows fall in each bin. Create it with :meth:`from_estimator` or
    :meth:`from_predictions`.

    Parameters
    ----------
    summary : pandas.DataFrame
        :meth:`BayesianCalibrationError.summary` of a fitted estimator.
    level : float
        Credible level of the intervals in ``summary``.
    ece : tuple of float, default=None
        ``(mean, lower, upper)`` of the ECE, shown in the legend.

    Attributes
    ----------
    line_ : matplotlib Line2D
        The posterior means (markers).
    errorbar_ : matplotlib ErrorbarContainer
        The means with their credible intervals.
    ax_ : matplotlib Axes
        Axes with the diagram.
    hist_ax_ : matplotlib Axes
        Twin axes with the histogram of rows per bin (``show_histogram=True``).
    figure_ : matplotlib Figure
        Figure containing the diagram.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skassess.metrics import ReliabilityDisplay
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p).astype(int)
    >>> disp = ReliabilityDisplay.from_predictions(y, p, n_bins=5)
    """

    def __init__(self, summary, level, ece=None):
        self.summary = summary
        self.level = level
        self.ece = ece

    def plot(self, *, ax=None, name=None, show_histogram=True, **kwargs):
        """Draw the diagram.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is made if None.
        name : str, default=None
            Label of the posterior in the legend.
        show_histogram : bool, default=True
            Draw the number of rows per bin on a twin axis.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.errorbar`.

        Returns
        -------
        display : ReliabilityDisplay
        """
        ax = _axes(ax, "ReliabilityDisplay.plot")
        table = self.summary
        seen = table["weight"] > 0
        if show_histogram:
            self.hist_ax_ = ax.twinx()
            self.hist_ax_.bar(
                table["bin_lower"],
                table["weight"],
                width=table["bin_upper"] - table["bin_lower"],
                align="edge",
                color="0.85",
                edgecolor="0.6",
                zorder=0,
            )
            self.hist_ax_.set_ylabel("share of rows")
            top = float(table["weight"].max())
            self.hist_ax_.set_ylim(0, 3 * top)  # bars fill the lower third
            self.hist_ax_.set_yticks([0, top / 2, top])
            self.hist_ax_.yaxis.set_major_formatter("{x:.2f}")
            ax.set_zorder(self.hist_ax_.get_zorder() + 1)
            ax.patch.set_visible(False)
        ax.plot([0, 1], [0, 1], ls="--", color="0.4", label="perfect calibration")
        t = table[seen]
        label = plot_text(name) if name else f"posterior mean, {self.level:.0%} interval"
        if self.ece is not None:
            label += f"\nECE {self.ece[0]:.3f} [{self.ece[1]:.3f}, {self.ece[2]:.3f}]"
        style = {"fmt": "o", "capsize": 3, "color": "C0", "clip_on": False, **kwargs}
        self.errorbar_ = ax.errorbar(
            t["confidence"],
            t["mean"],
            yerr=[t["mean"] - t["lower"], t["upper"] - t["mean"]],
            label=label,
            **style,
        )
        self.line_ = self.errorbar_[0]
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="confidence (top-1 score)", ylabel="accuracy")
        ax.legend(loc="upper left")
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_estimator(
        cls, estimator, *, level=0.95, n_draws=DEFAULT_N_DRAWS, ax=None, name=None, **kwargs
    ):
        """Plot the diagram of a fitted :class:`BayesianCalibrationError`.

        Parameters
        ----------
        estimator : BayesianCalibrationError
            Fitted with ``classwise=False``.
        level : float, default=0.95
            Credible level.
        n_draws : int, default=4000
            Draws of the ECE shown in the legend.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        name : str, default=None
            Label of the posterior in the legend.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ReliabilityDisplay
        """
        if not isinstance(estimator, BayesianCalibrationError) or estimator.classwise:
            raise ValueError(
                "estimator must be a fitted BayesianCalibrationError with classwise=False; "
                f"got {estimator!r}."
            )
        ece = (estimator.overall_mean(n_draws), *estimator.overall_interval(level, n_draws))
        return cls(estimator.summary(level), level, ece).plot(ax=ax, name=name, **kwargs)

    @classmethod
    def from_predictions(
        cls,
        y_true,
        y_score,
        *,
        n_bins=10,
        binning="uniform",
        prior="uniform",
        prior_strength=DEFAULT_PRIOR_STRENGTH,
        missing_label=-1,
        level=0.95,
        random_state=None,
        ax=None,
        name=None,
        strategy="deprecated",
        **kwargs,
    ):
        """Fit a :class:`BayesianCalibrationError` on labels and scores, then plot it.

        Rows of ``y_true`` equal to ``missing_label`` are unlabeled: they still
        count in the bin shares and confidences. ``n_bins``, ``binning``,
        ``prior``, ``prior_strength`` and ``missing_label`` are the
        estimator's parameters.

        Returns
        -------
        display : ReliabilityDisplay
        """
        if strategy != "deprecated":
            warn_deprecated("ReliabilityDisplay.from_predictions(strategy=...)", "binning=...")
            binning = strategy
        est = BayesianCalibrationError(
            n_bins=n_bins,
            binning=binning,
            prior=prior,
            prior_strength=prior_strength,
            missing_label=missing_label,
            random_state=random_state,
        ).fit(y_score, y_true)
        return cls.from_estimator(est, level=level, ax=ax, name=name, **kwargs)


class PosteriorDisplay:
    """Posterior mean and credible interval of a quantity per group.

    Read more in the :ref:`User Guide <ug_accuracy>`.

    With one quantity, a forest plot (one row per group). With two, a scatter
    of one against the other with intervals in both directions, e.g. accuracy
    against ECE per class.

    Parameters
    ----------
    labels : array-like of shape (n_groups,)
        Group labels.
    mean, lower, upper : ndarray of shape (n_groups,)
        The quantity's posterior per group.
    y_mean, y_lower, y_upper : ndarray of shape (n_groups,), default=None
        A second quantity for the vertical axis.
    xlabel, ylabel : str, default=None
        Axis labels.

    Attributes
    ----------
    line_ : matplotlib Line2D
        The posterior means (markers).
    errorbar_ : matplotlib ErrorbarContainer
        The means with their credible intervals.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skassess.metrics import PosteriorDisplay
    >>> scores = np.tile([[0.9, 0.1], [0.2, 0.8]], (20, 1))
    >>> disp = PosteriorDisplay.from_predictions(np.tile([0, 0], 20), scores)
    """

    def __init__(
        self,
        labels,
        mean,
        lower,
        upper,
        y_mean=None,
        y_lower=None,
        y_upper=None,
        xlabel=None,
        ylabel=None,
    ):
        self.labels = np.asarray(labels, dtype=object)
        self.mean, self.lower, self.upper = mean, lower, upper
        self.y_mean, self.y_lower, self.y_upper = y_mean, y_lower, y_upper
        self.xlabel, self.ylabel = xlabel, ylabel

    def plot(self, *, ax=None, name=None, **kwargs):
        """Draw the plot.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is made if None.
        name : str, default=None
            Legend label of the points.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.errorbar`.

        Returns
        -------
        display : PosteriorDisplay
        """
        ax = _axes(ax, "PosteriorDisplay.plot")
        style = {"fmt": "o", "capsize": 3, **kwargs}
        if name is not None:
            style["label"] = plot_text(name)
        # a point posterior (e.g. a fully labeled pool's ECE) can put the mean a
        # rounding error outside its interval; matplotlib refuses negative bars
        xerr = np.maximum([self.mean - self.lower, self.upper - self.mean], 0.0)
        if self.y_mean is None:
            pos = np.arange(len(self.labels))
            self.errorbar_ = ax.errorbar(self.mean, pos, xerr=xerr, **style)
            ax.set_yticks(pos, [plot_text(g) for g in self.labels])
            ax.invert_yaxis()
            ax.set_xlabel(plot_text(self.xlabel or "posterior"))
        else:
            yerr = np.maximum([self.y_mean - self.y_lower, self.y_upper - self.y_mean], 0.0)
            self.errorbar_ = ax.errorbar(self.mean, self.y_mean, xerr=xerr, yerr=yerr, **style)
            for label, x, y in zip(self.labels, self.mean, self.y_mean, strict=True):
                ax.annotate(plot_text(label), (x, y), textcoords="offset points", xytext=(4, 4))
            ax.set(xlabel=plot_text(self.xlabel or "x"), ylabel=plot_text(self.ylabel or "y"))
        if name is not None:
            ax.legend()
        self.line_ = self.errorbar_[0]
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    @validate_args(
        {
            "estimator": [HasMethods("groupwise_samples")],
            "y_estimator": [HasMethods("groupwise_samples"), None],
            "level": [LEVEL],
            "n_draws": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def from_estimator(
        cls,
        estimator,
        y_estimator=None,
        *,
        level=0.95,
        n_draws=DEFAULT_N_DRAWS,
        random_state=None,
        ax=None,
        name=None,
        **kwargs,
    ):
        """Plot the per-group posterior of a fitted estimator (or of two, against each other).

        Parameters
        ----------
        estimator : fitted skassess estimator
            Its ``groupwise_samples`` give the horizontal quantity.
        y_estimator : fitted skassess estimator, default=None
            A second estimator over the same groups for the vertical axis; a
            :class:`BayesianCalibrationError` with ``classwise=True`` gives
            each predicted class's ECE (as in the AAAI-21 paper's Fig. 1).
        level : float, default=0.95
            Credible level.
        n_draws : int, default=4000
            Monte Carlo draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        name : str, default=None
            Legend label of the points.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : PosteriorDisplay
        """
        draws = _group_draws(estimator, n_draws, random_state)
        mean, lower, upper = _intervals(draws, level)
        xlabel = type(estimator).__name__
        ys = (None, None, None)
        ylabel = None
        if y_estimator is not None:
            y_draws = _group_draws(y_estimator, n_draws, random_state)
            if list(y_draws.columns) != list(draws.columns):
                raise ValueError(
                    "estimator and y_estimator must have the same groups; got "
                    f"{list(draws.columns)!r} and {list(y_draws.columns)!r}."
                )
            ys = _intervals(y_draws, level)
            ylabel = type(y_estimator).__name__
        disp = cls(draws.columns, mean, lower, upper, *ys, xlabel=xlabel, ylabel=ylabel)
        return disp.plot(ax=ax, name=name, **kwargs)

    @classmethod
    def from_predictions(
        cls,
        y_true,
        y_score,
        *,
        group_by=None,
        metric="accuracy",
        prior="uniform",
        prior_strength=DEFAULT_PRIOR_STRENGTH,
        missing_label=-1,
        level=0.95,
        random_state=None,
        ax=None,
        name=None,
        **kwargs,
    ):
        """Fit a :class:`BayesianAccuracy` (by predicted class, or by ``group_by``) and plot it.

        Returns
        -------
        display : PosteriorDisplay
        """
        est = BayesianAccuracy(
            metric=metric,
            grouping="predicted_class" if group_by is None else "external",
            prior=prior,
            prior_strength=prior_strength,
            missing_label=missing_label,
            random_state=random_state,
        ).fit(y_score, y_true, group_by=group_by)
        return cls.from_estimator(est, level=level, ax=ax, name=name, **kwargs)


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
        ax = _axes(ax, "DifferenceDisplay.plot")
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


class ModelComparisonDisplay(PosteriorDisplay):
    """Forest plot of several models' posterior accuracy, each with its P(best).

    Read more in the :ref:`User Guide <ug_model_comparison>`.

    Parameters
    ----------
    labels : array-like of shape (n_models,)
        Model names.
    mean, lower, upper : ndarray of shape (n_models,)
        Posterior mean accuracy and credible interval.
    p_best : ndarray of shape (n_models,)
        Posterior probability that each model is the most accurate.
    xlabel : str, default="accuracy"
        The metric compared.

    Attributes
    ----------
    line_, errorbar_, ax_, figure_
        As in :class:`PosteriorDisplay`.
    texts_ : list of matplotlib Text
        The P(best) annotations.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skassess.metrics import BayesianModelComparison, ModelComparisonDisplay
    >>> X = np.array([[0.9, 0.8], [0.2, 0.7], [0.3, 0.4], [0.6, 0.1]] * 25)
    >>> y = np.array([1, 0, 0, -1] * 25)
    >>> comp = BayesianModelComparison(model_names=["A", "B"], random_state=0).fit(X, y)
    >>> disp = ModelComparisonDisplay.from_estimator(comp)
    >>> [t.get_text() for t in disp.texts_]
    ['P(best) 1.00', 'P(best) 0.00']
    """

    def __init__(self, labels, mean, lower, upper, p_best, xlabel="accuracy"):
        super().__init__(labels, mean, lower, upper, xlabel=xlabel)
        self.p_best = np.asarray(p_best, dtype=np.float64)

    def plot(self, *, ax=None, name=None, **kwargs):
        """Draw the forest plot and write each model's P(best) at its right.

        Returns
        -------
        display : ModelComparisonDisplay
        """
        super().plot(ax=ax, name=name, **kwargs)
        transform = self.ax_.get_yaxis_transform()
        self.texts_ = [
            self.ax_.text(
                1.01, i, f"P(best) {p:.2f}", transform=transform, va="center", fontsize="small"
            )
            for i, p in enumerate(self.p_best)
        ]
        return self

    @classmethod
    @validate_args(
        {
            "estimator": [HasMethods("best_probabilities")],
            "level": [LEVEL],
            "n_draws": [N_DRAWS],
            "random_state": ["random_state"],
        },
    )
    def from_estimator(
        cls,
        estimator,
        *,
        level=0.95,
        n_draws=DEFAULT_N_DRAWS,
        random_state=None,
        ax=None,
        name=None,
        **kwargs,
    ):
        """Plot a fitted :class:`BayesianModelComparison` (or an ``ActiveModelSelector``'s).

        ``level``, ``n_draws``, ``random_state``, ``ax``, ``name`` and
        ``**kwargs`` are those of :meth:`PosteriorDisplay.from_estimator`.

        Returns
        -------
        display : ModelComparisonDisplay
        """
        comparison = getattr(estimator, "estimator_", estimator)
        draws = _group_draws(comparison, n_draws, random_state)
        mean, lower, upper = _intervals(draws, level)
        return cls(
            draws.columns,
            mean,
            lower,
            upper,
            best_shares(draws),
            xlabel=getattr(comparison, "metric", "accuracy"),
        ).plot(ax=ax, name=name, **kwargs)
