"""``MonitorDisplay``: a monitor's timeline, chunk by chunk."""

import numpy as np
import pandas as pd

from ..utils._plot import plot_axes
from ..utils._text import plot_text
from ._monitor import level_suffix

__all__ = ["MonitorDisplay"]


def _levels(table):
    """The levels of a monitor table, from its ``lower_*`` columns, largest first."""
    levels = [float(c[len("lower_") :]) / 100 for c in table.columns if c.startswith("lower_")]
    return sorted(levels, reverse=True)


#: The most chunk labels the time axis shows.
MAX_TICKS = 12


def _positions(index):
    """x positions of the chunks and whether they are the chunks' own values."""
    if isinstance(index, pd.PeriodIndex):
        return index.to_timestamp(), True
    if isinstance(index, pd.DatetimeIndex) or pd.api.types.is_numeric_dtype(index):
        return index, True
    return np.arange(len(index)), False


class MonitorDisplay:
    """Timeline of a :class:`PerformanceMonitor`: predicted accuracy, bands, labels, alerts.

    Read more in the :ref:`User Guide <ug_monitoring>`.

    Per chunk: the label-free predicted accuracy with its interval at each
    level (bands, the widest lightest), the estimate with the chunk's labels
    (points with their interval at the widest level, and the number of labels
    spent), the threshold, and the chunks that raised an alert.

    Parameters
    ----------
    table : DataFrame
        The :meth:`PerformanceMonitor.predict` table.
    threshold : float, default=None
        The alert threshold to draw.
    metric : str, default=None
        The y axis' label; None: "accuracy".

    Attributes
    ----------
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    line_ : matplotlib Line2D
        The label-free prediction.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skassess.meta import MonitorDisplay
    >>> table = pd.DataFrame({
    ...     "n_labeled": [0, 20], "predicted": [0.9, 0.7],
    ...     "predicted_lower_95": [0.85, 0.6], "predicted_upper_95": [0.95, 0.8],
    ...     "mean": [0.9, 0.72], "lower_95": [0.85, 0.66], "upper_95": [0.95, 0.78],
    ...     "alert": [False, True]}, index=pd.Index(["mon", "tue"], name="chunk"))
    >>> disp = MonitorDisplay(table, threshold=0.8).plot()
    """

    def __init__(self, table, *, threshold=None, metric=None):
        self.table = table
        self.threshold = threshold
        self.metric = metric

    def plot(self, *, ax=None, name=None):
        """Draw the timeline.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is made if None.
        name : str, default=None
            The title.

        Returns
        -------
        display : MonitorDisplay
        """
        ax = plot_axes(ax, "MonitorDisplay.plot")
        t = self.table
        levels = _levels(t)
        x, own = _positions(t.index)
        for i, level in enumerate(levels):
            s = level_suffix(level)
            ax.fill_between(
                x,
                t[f"predicted_lower_{s}"],
                t[f"predicted_upper_{s}"],
                color="C0",
                alpha=0.12 + 0.12 * i,
                lw=0,
                step=None,
                label=f"label-free {s} % interval",
            )
        (self.line_,) = ax.plot(x, t["predicted"], "-o", color="C0", ms=3, label="label-free")
        labeled = t["n_labeled"].to_numpy() > 0 if "n_labeled" in t else np.zeros(len(t), bool)
        if labeled.any() and levels:
            s = level_suffix(levels[0])
            xs = np.asarray(x)[labeled]
            mean = t["mean"].to_numpy()[labeled]
            err = np.vstack([mean - t[f"lower_{s}"][labeled], t[f"upper_{s}"][labeled] - mean])
            ax.errorbar(
                xs, mean, yerr=err, fmt="s", color="C1", ms=4, capsize=2,
                label=f"with labels ({s} %)",
            )  # fmt: skip
            for xi, yi, k in zip(
                xs, t[f"upper_{s}"][labeled], t["n_labeled"][labeled], strict=True
            ):
                ax.annotate(
                    f"{int(k)}", (xi, yi), textcoords="offset points", xytext=(0, 3),
                    ha="center", fontsize="x-small", color="C1",
                )  # fmt: skip
        if self.threshold is not None:
            ax.axhline(self.threshold, color="C3", lw=1, ls="--", label="threshold")
        if "alert" in t and t["alert"].any():
            alert = t["alert"].to_numpy(dtype=bool)
            ax.plot(
                np.asarray(x)[alert], t["mean"].to_numpy()[alert], "v", color="C3", ms=8,
                label="alert",
            )  # fmt: skip
        if not own:
            # at most MAX_TICKS labels, evenly spaced: long chunk names do not overlap
            step = max(1, int(np.ceil(len(t) / MAX_TICKS)))
            shown = np.arange(0, len(t), step)
            ax.set_xticks(
                np.asarray(x)[shown],
                [plot_text(str(t.index[i])) for i in shown],
                rotation=45,
                ha="right",
            )
        elif isinstance(x, pd.DatetimeIndex):
            import matplotlib.dates as mdates

            locator = mdates.AutoDateLocator(maxticks=MAX_TICKS)
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        ax.set(
            xlabel=plot_text(str(t.index.name or "chunk")),
            ylabel=plot_text(self.metric or "accuracy"),
        )
        if name is not None:
            ax.set_title(plot_text(name))
        # beside the axes, where it hides no band, line or point
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_monitor(cls, monitor, X, y=None, *, scores=None, chunk_by=None, ax=None, name=None):
        """Predict the stream's chunks with a fitted monitor and plot them.

        Parameters
        ----------
        monitor : PerformanceMonitor
            Fitted.
        X, y, scores, chunk_by
            As in :meth:`PerformanceMonitor.predict`.
        ax, name
            As in :meth:`plot`.

        Returns
        -------
        display : MonitorDisplay
        """
        table = monitor.predict(X, y, scores=scores, chunk_by=chunk_by)
        metric = None if monitor.metric == "accuracy" else monitor.metric.upper()
        return cls(table, threshold=monitor.threshold, metric=metric).plot(ax=ax, name=name)
