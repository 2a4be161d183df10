"""The HTML report of ``skassess monitor``: the timeline, the chunks, the alerts, the labels."""

import html
from pathlib import Path

import pandas as pd

from ._report import html_table, page_head, settings_table, svg_figure, use_agg

__all__ = ["render_monitor_report", "write_monitor_report"]


def _timeline(result, title):
    import matplotlib.pyplot as plt

    from ..meta import MonitorDisplay

    fig, ax = plt.subplots(figsize=(10, 4.2))
    metric = result.monitor.metric
    MonitorDisplay(
        result.table,
        threshold=result.monitor.threshold,
        metric=None if metric == "accuracy" else metric.upper(),
    ).plot(ax=ax, name=title)
    fig.tight_layout()
    return svg_figure(fig)


def _stream_name(files):
    """The stream's name: its one file, its folder, or its first file and how many more."""
    paths = [Path(f) for f in dict.fromkeys(files)]
    if len(paths) == 1:
        return paths[0].name
    parents = {p.parent for p in paths}
    if len(parents) == 1:
        return f"{paths[0].parent.name or paths[0].parent}/ ({len(paths)} files)"
    return f"{paths[0].name} and {len(paths) - 1} more files"


def render_monitor_report(result, *, title=None, settings=None):
    """The report of a :class:`MonitoredStream` as one self-contained HTML string.

    Parameters
    ----------
    result : MonitoredStream
    title : str, default=None
        The page's title; None: "Monitoring of" the stream's file (or folder).
    settings : dict, default=None
        Facts shown under "Data and settings" (the command's options).
    """
    use_agg()
    esc = html.escape
    table, monitor, ref = result.table, result.monitor, result.reference
    name = "accuracy" if monitor.metric == "accuracy" else monitor.metric.upper()
    title = title or f"Monitoring of {_stream_name(result.files)}"
    levels = sorted(float(a) for a in pd.Series(monitor.level).tolist())
    s = f"{100 * levels[-1]:.10g}"  # the table's column suffix of the widest level
    last = table.iloc[-1]
    alerts = table.index[table["alert"]] if "alert" in table else []
    cards = [
        ("chunks", f"{len(table):,}"),
        ("stream rows", f"{int(table['n_rows'].sum()):,}"),
        ("labeled in the stream", f"{int(table['n_labeled'].sum()):,}"),
        (f"reference {name}", f"{ref['accuracy']:.3f}"),
        (
            f"last chunk ({last.name})",
            f"{last['mean']:.3f} [{last[f'lower_{s}']:.3f}, {last[f'upper_{s}']:.3f}]",
        ),
    ]
    if monitor.threshold is not None:
        cards.append(("alerts", f"{len(alerts):,}"))
    levels_text = ", ".join(f"{a:.3g}" for a in levels)
    subtitle = f"{name} per chunk, label-free prediction intervals at {levels_text}"
    parts = [
        *page_head(title, subtitle, cards, wide=True),
        "<h2>Timeline</h2>",
        "<figure>",
        _timeline(result, None),
        f"<figcaption>Line and bands: the {name} predicted without labels, with its "
        "prediction intervals (they allow for drift between the reference and the chunk). "
        "Squares: the estimate with the chunk's labels (the label-free prediction as the "
        "prior), the number above it the labels the chunk holds. Dashed line: the "
        "threshold; triangles: the chunks that raised an alert.</figcaption>",
        "</figure>",
    ]
    if monitor.threshold is not None:
        parts.append(
            f"<p>Alerts, where P({name} &lt; {monitor.threshold:g}) &ge; "
            f"{monitor.alert_probability:g}: "
            + (esc(", ".join(str(k) for k in alerts)) if len(alerts) else "none")
            + ".</p>"
        )
    shown = [c for c in table.columns if not c.startswith("predicted_")]
    shown = [c for c in shown if c not in ("drift_features",)]
    parts += [
        "<h2>Chunks</h2>",
        "<p><code>predicted</code>: label-free; <code>mean</code>, <code>lower_*</code>, "
        "<code>upper_*</code>: the estimate to read (with the chunk's labels where it has "
        "some: the label-free prediction is its prior); <code>drift_scores</code>: how "
        "well a classifier tells the "
        "chunk's scores from the reference's (0.5: not at all); <code>confidence_ks</code>: "
        "the Kolmogorov-Smirnov distance of the top confidence.</p>",
        html_table(table[shown]),
    ]
    if len(result.to_label):
        parts += [
            "<h2>Rows to label next</h2>",
            html_table(result.to_label.set_index("file")),
        ]
    facts = {
        "reference": ref["file"],
        "reference rows (labeled)": f"{ref['labeled']:,}",
        "metric": monitor.metric,
        "uncertainty model": monitor.uncertainty_model,
        "levels": ", ".join(f"{a:g}" for a in levels),
        "threshold": "—" if monitor.threshold is None else monitor.threshold,
        "alert probability": monitor.alert_probability,
    }
    if monitor.uncertainty_model == "recalibrated":
        factors = monitor.interval_regressor_.recalibration_factor_
        facts["recalibration factor per drift stratum"] = ", ".join(f"{f:.3f}" for f in factors)
    facts.update(settings or {})
    parts += [
        "<h2>Data and settings</h2>",
        settings_table(facts),
        "</body></html>",
    ]
    return "\n".join(parts)


def write_monitor_report(result, path, *, title=None, settings=None):
    """Write :func:`render_monitor_report` to ``path`` (UTF-8)."""
    text = render_monitor_report(result, title=title, settings=settings)
    Path(path).write_text(text, encoding="utf-8")
    return Path(path)
