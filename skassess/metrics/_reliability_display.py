"""ReliabilityDisplay: a reliability diagram with the posterior of each bin."""

from ..utils._deprecation import warn_deprecated
from ..utils._text import plot_text
from ._base import DEFAULT_N_DRAWS, DEFAULT_PRIOR_STRENGTH
from ._calibration_error import BayesianCalibrationError
from ._display import plot_axes


class ReliabilityDisplay:
    """Bayesian reliability diagram: posterior accuracy per confidence bin.

    Read more in the :ref:`User Guide <ug_calibration_error>`.

    Each bin with labels shows the posterior mean accuracy and its credible
    interval at the bin's mean confidence (a bin without labels holds its prior
    alone and gets no point); the diagonal is perfect calibration; bars show
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
        ax = plot_axes(ax, "ReliabilityDisplay.plot")
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
        # A bin without labels holds its prior alone, not evidence of calibration: its
        # rows show in the histogram, and no point is drawn for it.
        if "n_labeled" in table:
            seen &= table["n_labeled"] > 0
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
