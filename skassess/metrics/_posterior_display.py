"""PosteriorDisplay and ModelComparisonDisplay: per-group (per-model) intervals."""

import numpy as np

from ..utils._params import LEVEL, N_DRAWS, validate_args
from ..utils._sklearn_compat import HasMethods
from ..utils._text import plot_text
from ._accuracy import BayesianAccuracy
from ._base import DEFAULT_N_DRAWS, DEFAULT_PRIOR_STRENGTH
from ._comparison_posterior import best_shares
from ._display import draw_intervals, group_draws, plot_axes


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
        ax = plot_axes(ax, "PosteriorDisplay.plot")
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
        draws = group_draws(estimator, n_draws, random_state)
        mean, lower, upper = draw_intervals(draws, level)
        xlabel = type(estimator).__name__
        ys = (None, None, None)
        ylabel = None
        if y_estimator is not None:
            y_draws = group_draws(y_estimator, n_draws, random_state)
            if list(y_draws.columns) != list(draws.columns):
                raise ValueError(
                    "estimator and y_estimator must have the same groups; got "
                    f"{list(draws.columns)!r} and {list(y_draws.columns)!r}."
                )
            ys = draw_intervals(y_draws, level)
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
        draws = group_draws(comparison, n_draws, random_state)
        mean, lower, upper = draw_intervals(draws, level)
        return cls(
            draws.columns,
            mean,
            lower,
            upper,
            best_shares(draws),
            xlabel=getattr(comparison, "metric", "accuracy"),
        ).plot(ax=ax, name=name, **kwargs)
