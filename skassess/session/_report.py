"""The HTML report: one self-contained file (inline SVG and CSS, no script, no network)."""

import html
import io
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..utils._text import plot_text
from ._progress import Steps

__all__ = ["render_report", "write_report"]

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1d2329; margin: 0 auto; max-width: 1080px; padding: 24px 28px 48px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.2em; margin: 32px 0 8px; border-bottom: 2px solid #d7dde3;
     padding-bottom: 4px; }
.sub { color: #5b6670; margin: 0 0 18px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 12px 0; }
.card { border: 1px solid #d7dde3; border-radius: 8px; padding: 10px 16px; min-width: 180px; }
.card .v { font-size: 1.5em; font-weight: 600; }
.card .k { color: #5b6670; font-size: .85em; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: .9em; }
th, td { padding: 4px 10px; text-align: right; border-bottom: 1px solid #e6eaee; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f3f5f7; }
figure { margin: 8px 0 16px; }
figure svg { width: 100%; height: auto; }
figcaption { color: #5b6670; font-size: .85em; }
.grid { display: flex; flex-wrap: wrap; gap: 8px 24px; align-items: flex-start; }
.grid figure { flex: 1 1 420px; min-width: 0; max-width: 600px; }
.grid .scroll { flex: 0 1 auto; }
.scroll { max-width: 100%; overflow-x: auto; }
td.none { color: #5b6670; text-align: center; }
code { font-size: .9em; background: #f3f5f7; padding: 1px 4px; border-radius: 3px; }
.worse { color: #b3261e; } .better { color: #1b6e3a; } .equivalent { color: #5b6670; }
tbody th { font-weight: 600; text-align: left; white-space: nowrap; }
body.wide { max-width: none; }
body.wide table { font-size: .82em; }
body.wide th, body.wide td { padding: 4px 7px; }
/* A narrow screen shows each row of a table as a card of "column: value" lines, so no
   column is lost off the right-hand side. */
@media (max-width: 640px) {
  body { padding: 16px 12px 40px; }
  .scroll table, .scroll tbody, .scroll tr, .scroll th, .scroll td { display: block; }
  .scroll thead { display: none; }
  .scroll tr { border: 1px solid #d7dde3; border-radius: 6px; margin: 0 0 8px;
               padding: 4px 10px; }
  .scroll tbody th, .scroll td { display: flex; justify-content: space-between; gap: 12px;
                                 border: 0; padding: 2px 0; text-align: right;
                                 white-space: normal; overflow-wrap: anywhere; }
  .scroll tbody th::before, .scroll td::before { content: attr(data-label);
                                                 color: #5b6670; font-weight: 400;
                                                 text-align: left; }
}
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  h2 { break-after: avoid; }
  figure, table, .card { break-inside: avoid; }
}
"""


def svg_figure(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def use_agg():
    """matplotlib on its file backend, or the report's install hint."""
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError as exc:
        raise ImportError(
            'The HTML report draws with matplotlib: pip install "skassess[plot]".'
        ) from exc


def page_head(title, subtitle, cards, *, wide=False):
    """The page's first lines: head and style, the title, the subtitle and the cards;
    ``wide``: the page takes the window's width (for a table of many columns)."""
    from .. import __version__

    esc = html.escape
    body = '<body class="wide">' if wide else "<body>"
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head>{body}",
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">skassess {esc(__version__)} · {time.strftime("%Y-%m-%d %H:%M")} · '
        f"{subtitle}</p>",
        '<div class="cards">'
        + "".join(
            f'<div class="card"><div class="k">{esc(k)}</div><div class="v">{esc(v)}</div></div>'
            for k, v in cards
        )
        + "</div>",
    ]


def settings_table(facts):
    """A two-column table of named facts."""
    return html_table(
        pd.DataFrame(
            {"value": [str(v) for v in facts.values()]}, index=pd.Index(list(facts), name="")
        )
    )


def html_table(frame, digits=4, percent=()):
    frame = frame.copy()
    for col in frame.columns:
        if col == "n_labeled":
            frame[col] = frame[col].map(lambda v: "" if pd.isna(v) else f"{v:,.0f}")
        elif col in percent:
            frame[col] = frame[col].map(lambda v: "" if pd.isna(v) else f"{v:.1%}")
        elif pd.api.types.is_float_dtype(frame[col]) or frame[col].dtype == object:
            frame[col] = frame[col].map(
                lambda v: (
                    ""
                    if v is None or (isinstance(v, float) and np.isnan(v))
                    else f"{v:.{digits}f}"
                    if isinstance(v, float | np.floating)
                    else v
                )
            )
    return f'<div class="scroll">{_table(frame)}</div>'


#: Cells that get a class of their own (a colour, or centred).
_CELL_CLASSES = {"worse": "worse", "better": "better", "equivalent": "equivalent"}


def esc(text):
    return html.escape(text, quote=True)


def _cell(value):
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def _table(frame):
    """An HTML table of ``frame`` (index first), every value escaped; each cell carries
    its column's name (``data-label``), which a narrow screen shows beside it."""
    names = [n for n in frame.index.names]
    index_label = " / ".join("" if n is None else str(n) for n in names)
    head = [f"<th>{esc(index_label)}</th>"] + [f"<th>{esc(str(c))}</th>" for c in frame.columns]
    rows = []
    for key, values in zip(frame.index, frame.itertuples(index=False), strict=True):
        key = " / ".join(map(str, key)) if isinstance(key, tuple) else str(key)
        cells = [f'<th data-label="{esc(index_label)}">{esc(key)}</th>']
        for col, value in zip(frame.columns, values, strict=True):
            text = _cell(value)
            kind = _CELL_CLASSES.get(text, "none" if text == _NO_ROWS else None)
            cls = f' class="{kind}"' if kind else ""
            cells.append(f'<td data-label="{esc(str(col))}"{cls}>{esc(text)}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        "<table><thead><tr>"
        + "".join(head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


#: What a reliability bin without rows shows instead of its prior.
_NO_ROWS = "no rows"


def _bins(table):
    """The reliability table with one 'confidence bin' label instead of its two edges;
    a bin without rows shows "no rows" (its posterior would be the prior alone)."""
    out = table.drop(columns=[c for c in ("prior_mean", "bin_lower", "bin_upper") if c in table])
    empty = (out["weight"] <= 0).to_numpy()
    if empty.any():
        out = out.astype({c: object for c in ("confidence", "mean", "lower", "upper") if c in out})
        for c in ("mean", "lower", "upper"):
            out.loc[empty, c] = _NO_ROWS
        out.loc[empty, "confidence"] = ""
    out.index = pd.Index(
        [
            f"{lo:.2f}–{hi:.2f}"
            for lo, hi in zip(table["bin_lower"], table["bin_upper"], strict=True)
        ],
        name="confidence bin",
    )
    return out


#: What the crosses of a forest plot are, by prior (the summary's ``prior_mean``).
PRIOR_MEAN_TEXT = {
    "calibrated": "the calibrated scores before the group's own labels",
    "hierarchical": "the groups' shared prior mean",
    "informative": "prior mean (the scores as they are)",
    "uniform": "prior mean (uniform)",
}


def _legend_below(ax, handles=None, **kwargs):
    """The legend of ``ax`` (or of ``handles``) below its x axis' labels, outside the data.

    Placed after a draw, under the x axis' tick labels and label as they came
    out, so no row, bin or interval is covered however long the labels are;
    the saved figure's tight box takes it in.
    """
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    below = min(box.y0, ax.xaxis.get_tightbbox(renderer).y0)
    anchor = fig.transFigure.inverted().transform((box.x0 + box.width / 2, below))
    handles, labels = handles or ax.get_legend_handles_labels()
    return fig.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=tuple(anchor),
        bbox_transform=fig.transFigure,
        frameon=False,
        **kwargs,
    )


def _forest(table, title, xlabel, prior):
    import matplotlib.pyplot as plt

    from ..metrics import PosteriorDisplay

    fig, ax = plt.subplots(figsize=(6.0, 0.45 * len(table) + 1.2))
    PosteriorDisplay(
        [str(g) for g in table.index],
        table["mean"].to_numpy(),
        table["lower"].to_numpy(),
        table["upper"].to_numpy(),
        xlabel=xlabel,
    ).plot(ax=ax, color="#1f5fa8")
    if "flagged" in table and table["flagged"].any():
        # a group whose labels depart from the shared map: its labels-alone interval too
        rows = np.flatnonzero(table["flagged"].to_numpy(dtype=bool))
        ax.hlines(
            rows + 0.25,
            table["labels_lower"].to_numpy(dtype=float)[rows],
            table["labels_upper"].to_numpy(dtype=float)[rows],
            color="#c0392b",
            lw=2,
            label="its labels alone (labels that depart from the map)",
        )
    if "prior_mean" in table:
        ax.plot(
            table["prior_mean"].to_numpy(),
            np.arange(len(table)),
            "x",
            color="#9aa5ae",
            label=PRIOR_MEAN_TEXT.get(prior, "prior mean"),
        )
        # outside the axes, below them: a legend inside covers the last rows
        _legend_below(ax, fontsize="small")
    ax.set_title(plot_text(title), fontsize="medium")
    ax.grid(axis="x", alpha=0.3)
    return svg_figure(fig)


def _reliability(assessment):
    import matplotlib.pyplot as plt

    from ..metrics import ReliabilityDisplay

    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    ReliabilityDisplay.from_estimator(assessment.estimators["ece"], ax=ax)
    legend = ax.get_legend()
    if legend is not None:  # below the axes: inside it covers the bins' intervals
        legend.remove()
        _legend_below(ax, fontsize="small")
    ax.set_title("Bayesian reliability diagram", fontsize="medium")
    return svg_figure(fig)


def _history_plot(history, task):
    import matplotlib.pyplot as plt

    has_p = history["probability"].notna().any()
    fig, axes = plt.subplots(
        1 + has_p,
        1,
        figsize=(9, 3.6 + 2.4 * has_p),
        sharex=True,
        squeeze=False,
    )
    ax = axes[0, 0]
    for i, (group, part) in enumerate(history.groupby("group", sort=False)):
        color = plt.cm.tab10(i % 10)
        ax.plot(part["n_labels"], part["mean"], color=color, label=plot_text(group))
        ax.fill_between(part["n_labels"], part["lower"], part["upper"], color=color, alpha=0.06)
    ax.set_ylabel("posterior (95 % interval)")
    ax.set_title("How the posterior converged as labels arrived", fontsize="medium")
    if has_p:
        first = history.groupby("n_labels", sort=True)["probability"].first()
        ax2 = axes[1, 0]
        ax2.plot(first.index, first.to_numpy(), color="#1d2329")
        ax2.set_ylim(0, 1.02)
        ax2.set_ylabel("P(answer)")
        ax2.set_title(plot_text(f"Probability of the current answer ({task})"), fontsize="medium")
        ax2.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("labels in the session")
    _legend_below(axes[-1, 0], handles=ax.get_legend_handles_labels(), fontsize="x-small", ncol=5)
    return svg_figure(fig)


def _setting_text(value):
    """A session setting as words: a record as "key value" pairs, a list by commas."""
    if isinstance(value, dict):
        shown = {k: v for k, v in value.items() if v is not None}
        return "; ".join(f"{k.replace('_', ' ')} {_setting_text(v)}" for k, v in shown.items())
    if isinstance(value, list | tuple):
        return ", ".join(_setting_text(v) for v in value)
    return str(value)


def _plots(assessment, progress):
    """The report's plots as SVG texts, by name, with a progress line of them."""
    prior = assessment.settings["prior"]
    history = assessment.history is not None and len(assessment.history) > 0
    plots = {}
    with Steps(2 + len(assessment.by_group) + history, progress) as steps:
        steps.step("drawing the plot per predicted class")
        plots["predicted class"] = _forest(
            assessment.by_class, "Accuracy per predicted class", "accuracy", prior
        )
        for name, table in assessment.by_group.items():
            steps.step(f"drawing the plot per {name}")
            plots[name] = _forest(table, f"Accuracy per {name}", "accuracy", prior)
        steps.step("drawing the reliability diagram")
        if assessment.reliability is not None:
            plots["reliability"] = _reliability(assessment)
        if history:
            steps.step("drawing the labeling history")
            task = (assessment.session or {}).get("settings", {}).get("task", "")
            plots["history"] = _history_plot(assessment.history, task)
    return plots


def render_report(assessment, *, title=None, progress=False, started=None):
    """The report of a :class:`FileAssessment` as one HTML string.

    Parameters
    ----------
    assessment : FileAssessment
    title : str, default=None
        The page's title; None: "Assessment of" the file's name.
    progress : bool, default=False
        A progress line of the plots on standard error, shown once drawing
        them takes more than 2 s.
    started : float, default=None
        :func:`time.perf_counter` when the whole run began: the report then
        gives the run's seconds, the report's drawing included, beside the
        assessment's.
    """
    use_agg()
    src, settings = assessment.source, assessment.settings
    esc = html.escape
    title = title or f"Assessment of {Path(src['file']).name}"
    level = settings["level"]
    acc = assessment.overall.loc["accuracy"]
    cards = [
        ("rows", f"{src['rows']:,}"),
        ("labeled", f"{src['labeled']:,}"),
        ("accuracy", f"{acc['mean']:.3f}"),
        (f"{level:.0%} interval", f"[{acc['lower']:.3f}, {acc['upper']:.3f}]"),
    ]
    if "ECE" in assessment.overall.index:
        cards.append(("ECE", f"{assessment.overall.loc['ECE', 'mean']:.3f}"))
    plots = _plots(assessment, progress)
    parts = [
        *page_head(title, f"posterior means with {level:.0%} credible intervals", cards),
        "<h2>Overall</h2>",
        html_table(assessment.overall),
    ]
    if src["labeled"] == 0:
        parts.append("<p>No row is labeled: every posterior is the prior.</p>")
    parts += [
        "<h2>Accuracy per predicted class</h2>",
        '<div class="grid"><figure>',
        plots["predicted class"],
        "<figcaption>Dots: posterior means; bars: credible intervals; crosses: "
        f"{esc(PRIOR_MEAN_TEXT.get(settings['prior'], 'the prior means'))} "
        f"({esc(settings['prior'])} prior).</figcaption></figure>",
        html_table(assessment.by_class, percent=("weight",)),
        "</div>",
    ]
    for name, table in assessment.by_group.items():
        parts += [
            f"<h2>Accuracy per {esc(name)}</h2>",
            '<div class="grid"><figure>',
            plots[name],
            "</figure>",
            html_table(table, percent=("weight",)),
            "</div>",
        ]
    parts.append("<h2>Group differences</h2>")
    parts.append(
        f"<p>Each group's accuracy minus the group with the highest posterior mean; "
        f"<code>p_greater</code> = P(Δ &gt; 0); ROPE ±{settings['rope']:g}: "
        "<code>p_left</code> = P(Δ &lt; −ROPE), <code>p_rope</code> = P(|Δ| ≤ ROPE), "
        "<code>p_right</code> = P(Δ &gt; ROPE); the decision (<em>worse</em>, "
        "<em>equivalent</em> or <em>better</em>) is the region whose "
        f"probability is at least {settings.get('decision_probability', 0.95):g}, else "
        "<em>undecided</em>.</p>"
    )
    for name, table in assessment.differences.items():
        if not table.empty:
            parts += [f"<h3>per {esc(name)}</h3>", html_table(table)]
    if assessment.annotators is not None:
        parts += [
            "<h2>Annotators</h2>",
            "<p>The labels name their annotators, who may slip: every estimate above is "
            "the mixture over the true labels under the annotators' one-coin model. Each "
            "annotator's estimated accuracy, and the agreement on the items labeled more "
            "than once (Cohen's kappa per pair, Fleiss' kappa over all).</p>",
            html_table(assessment.annotators, percent=("agreement",)),
            html_table(assessment.agreement, percent=("agreement",)),
        ]
    if assessment.unlabeled is not None:
        u = assessment.unlabeled
        parts += [
            "<h2>Unlabeled rows under drift</h2>",
            f"<p>Accuracy of the {int(u['rows'].iloc[0]):,} unlabeled rows predicted from "
            f"{int(u['reference'].iloc[0]):,} labeled rows by <code>skassess.meta</code>, "
            "which allows the unlabeled rows to differ from the labeled ones; intervals from "
            "the shipped uncertainty model (prediction intervals, not posteriors).</p>",
            html_table(u[["accuracy", "lower", "upper", "level", "sampled"]]),
        ]
    if assessment.reliability is None:
        parts += ["<h2>Calibration</h2>", f"<p>{esc(assessment.calibration_note)}</p>"]
    else:
        parts += ["<h2>Calibration</h2>"]
        if assessment.calibration_note:
            parts += [f"<p>{esc(assessment.calibration_note)}</p>"]
        parts += [
            '<div class="grid"><figure>',
            plots["reliability"],
            "</figure>",
            html_table(_bins(assessment.reliability), digits=3, percent=("weight",)),
            "</div>",
        ]
    if assessment.history is not None and len(assessment.history):
        parts += [
            "<h2>Labeling history</h2>",
            "<figure>",
            plots["history"],
            "</figure>",
        ]
    if assessment.session:
        s = assessment.session
        parts += [
            "<h2>Labeling session</h2>",
            html_table(
                pd.DataFrame(
                    {"value": [_setting_text(v) for v in s.values()]},
                    index=pd.Index(list(s), name=""),
                )
            ),
        ]
    cols = src["columns"]
    facts = {
        "file": src["file"],
        "SHA-256": src["sha256"],
        "bytes": f"{src['bytes']:,}",
        "id column": cols["id_column"],
        "label column": cols["label_column"],
        "classes": ", ".join(cols["classes"]),
        "group columns": ", ".join(cols["group_columns"]) or "—",
        "prior": settings["prior"],
        "credible level": level,
        "ROPE": settings["rope"],
        "ECE bins": settings["n_bins"],
        "seed": settings["random_state"],
        "cost matrix": settings["cost_matrix"] or "—",
        "seconds (assessment)": src["seconds"],
    }
    if started is not None:
        facts["seconds (whole run, report included)"] = round(time.perf_counter() - started, 3)
    parts += ["<h2>Data and settings</h2>", settings_table(facts), "</body></html>"]
    return "\n".join(parts)


def write_report(assessment, path, *, title=None, progress=False, started=None):
    """Write :func:`render_report` to ``path`` (UTF-8)."""
    text = render_report(assessment, title=title, progress=progress, started=started)
    Path(path).write_text(text, encoding="utf-8")
    return Path(path)
