"""The labeling server's pages: server-rendered HTML, every shown value escaped.

Class names, ids, item text and annotator names are data: each goes through
:func:`html.escape`. The one script (keyboard keys) and the style are inline,
allowed by the page's Content-Security-Policy nonce; nothing is loaded from
elsewhere.
"""

from html import escape

import numpy as np

__all__ = ["forest_svg", "label_page", "login_page", "message_page", "page", "review_page"]

_STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:baseline;padding:.6rem 1rem;
background:#243b53;color:#fff}
header b{font-size:1.1rem}
main{display:flex;flex-wrap:wrap;gap:1rem;padding:1rem}
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:1rem;min-width:0}
#item{flex:2 1 420px}#posterior{flex:1 1 300px}
#item img{max-width:100%;max-height:60vh;display:block;margin:auto;image-rendering:auto}
.text{white-space:pre-wrap;overflow-wrap:anywhere;font-size:1.05rem}
.classes{display:flex;flex-wrap:wrap;gap:.4rem;margin:.8rem 0}
button{font-size:1rem;padding:.5rem .8rem;border:1px solid #888;border-radius:4px;
background:#f0f4f8;cursor:pointer}
button.label{background:#e3f2fd}
kbd{font-size:.75rem;color:#555;margin-left:.3rem}
table{border-collapse:collapse;font-size:.85rem;width:100%}
td,th{border-bottom:1px solid #eee;padding:.2rem .4rem;text-align:right}
td:first-child,th:first-child{text-align:left;overflow-wrap:anywhere}
.note{color:#555;font-size:.9rem}.stop{color:#0a6b2d;font-weight:600}
svg{max-width:100%;height:auto}
.error{color:#a00}.inline{display:inline}header a{color:#fff}
"""

_SCRIPT = """
document.addEventListener('keydown', function (e) {
  if (e.target.tagName === 'INPUT' || e.ctrlKey || e.metaKey || e.altKey) return;
  var b = document.querySelector('button[data-key="' + e.key.toLowerCase() + '"]');
  if (b) { e.preventDefault(); b.click(); }
});
"""


def page(title, body, nonce, *, script=False):
    """A whole page: the title, the body (HTML, escaped by its maker), style and script."""
    js = f'<script nonce="{nonce}">{_SCRIPT}</script>' if script else ""
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f'<title>{escape(title)}</title><style nonce="{nonce}">{_STYLE}</style></head>'
        f"<body>{body}{js}</body></html>"
    )


def message_page(title, text, nonce, link="/"):
    """A page of one message and a link back."""
    body = (
        f"<main><section><h1>{escape(title)}</h1><p>{escape(text)}</p>"
        f'<p><a href="{escape(link)}">Back</a></p></section></main>'
    )
    return page(title, body, nonce)


def login_page(nonce, csrf, *, local, error=None):
    """Who labels: a name (on this machine), or the link with a token (beyond it)."""
    err = f'<p class="error">{escape(error)}</p>' if error else ""
    if local:
        form = (
            '<form method="post" action="/login">'
            f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
            '<label>Your name <input name="name" maxlength="200" required autofocus></label> '
            "<button>Start labeling</button></form>"
        )
    else:
        form = (
            "<p>Open the link with your token that the person who started the server gave you.</p>"
        )
    body = f"<main><section><h1>skassess: labeling</h1>{err}{form}</section></main>"
    return page("skassess: who labels?", body, nonce)


def _item_html(view):
    parts = []
    if view.get("image"):
        parts.append(f'<img src="{escape(view["image"])}" alt="item {escape(view["id"])}">')
    elif view.get("missing_image"):
        parts.append(f'<p class="note">No image of item {escape(view["id"])} in the folder.</p>')
    if view.get("text") is not None:
        parts.append(f'<div class="text">{escape(view["text"])}</div>')
    if view.get("record"):
        rows = "".join(
            f"<tr><td>{escape(str(k))}</td><td>{escape(str(v))}</td></tr>"
            for k, v in view["record"]
        )
        parts.append(f"<table>{rows}</table>")
    return "".join(parts)


def _keys(n):
    """The keyboard key of each class button: 1-9, 0, then a-z without s and u."""
    keys = [str(k) for k in range(1, 10)] + ["0"]
    keys += [c for c in "abcdefghijklmnopqrtvwxyz"]
    return keys[:n] + [""] * max(0, n - len(keys))


def label_page(nonce, view):
    """The item to label, its classes as buttons, skip and undo, and the posterior.

    ``view`` holds ``annotator``, ``id``, ``row``, ``csrf``, ``classes``,
    ``prediction``, ``score``, ``repeat``, ``labels``, ``budget``,
    ``answer``, ``stop``, ``summary`` (a DataFrame), and the item (``image``,
    ``text``, ``record``).
    """
    classes = view["classes"]
    hidden = (
        f'<input type="hidden" name="csrf" value="{escape(view["csrf"])}">'
        f'<input type="hidden" name="row" value="{int(view["row"])}">'
    )
    buttons = "".join(
        f'<button class="label" name="label" value="{k}" data-key="{key}">'
        f"{escape(str(name))}{f'<kbd>{key}</kbd>' if key else ''}</button>"
        for k, (name, key) in enumerate(zip(classes, _keys(len(classes)), strict=True))
    )
    repeat = (
        '<p class="note">A second label: someone else labeled this item; give your own.</p>'
        if view["repeat"]
        else ""
    )
    budget = "" if view["budget"] is None else f" of {int(view['budget'])}"
    stop = f'<p class="stop">{escape(view["stop"])}</p>' if view["stop"] else ""
    body = (
        "<header>"
        f"<b>skassess</b><span>Labeling as {escape(view['annotator'])}</span>"
        f"<span>{int(view['labels'])}{budget} labels</span>"
        '<span><a href="/review">review</a></span>'
        "</header><main>"
        f'<section id="item"><h2>Item {escape(view["id"])}</h2>{repeat}{_item_html(view)}'
        f"<p>The model predicts <b>{escape(str(view['prediction']))}</b> "
        f"(score {float(view['score']):.3f}).</p>"
        f'<form method="post" action="/label">{hidden}<div class="classes">{buttons}</div></form>'
        f'<form method="post" action="/skip" class="inline">{hidden}'
        '<button data-key="s">Skip<kbd>s</kbd></button></form> '
        f'<form method="post" action="/undo" class="inline">{hidden}'
        '<button data-key="u">Undo my last label<kbd>u</kbd></button></form>'
        "</section>"
        f'<section id="posterior"><h2>The estimate so far</h2>'
        f'<p class="note">After {int(view["estimate_labels"])} labels.</p>'
        f"<p>{escape(view['answer'])}</p>"
        f"{stop}{forest_svg(view['summary'])}{_table(view['summary'])}</section>"
        "</main>"
    )
    return page(f"skassess: item {view['id']}", body, nonce, script=True)


def _table(frame, digits=3):
    if frame is None or len(frame) == 0:
        return ""
    head = "".join(f"<th>{escape(str(c))}</th>" for c in [frame.index.name or "", *frame.columns])
    rows = []
    for key, *values in frame.itertuples(name=None):  # each column's own type
        cells = "".join(f"<td>{_cell(v, digits)}</td>" for v in values)
        rows.append(f"<tr><td>{escape(str(key))}</td>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _cell(value, digits):
    if isinstance(value, bool | np.bool_):
        return "yes" if value else ""
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return "" if not np.isfinite(value) else f"{value:.{digits}f}"
    return escape(str(value))


def forest_svg(summary, width=320):
    """The posterior per group as a forest plot: each group's interval and mean (inline SVG)."""
    if summary is None or not {"mean", "lower", "upper"} <= set(summary.columns):
        return ""
    n = len(summary)
    row, left, right = 22, 110, width - 10
    height = row * n + 30

    def x(v):
        return left + (right - left) * float(np.clip(v, 0, 1))

    parts = [
        f'<svg width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="posterior per group">'
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(
            f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="4" y2="{height - 22}" '
            'stroke="#ddd"/>'
            f'<text x="{x(tick):.1f}" y="{height - 8}" font-size="10" '
            f'text-anchor="middle">{tick:g}</text>'
        )
    for i, (key, r) in enumerate(summary.iterrows()):
        y = 14 + i * row
        name = escape(str(key))[:18]
        parts.append(
            f'<text x="{left - 6}" y="{y + 4}" font-size="11" text-anchor="end">{name}</text>'
            f'<line x1="{x(r["lower"]):.1f}" x2="{x(r["upper"]):.1f}" y1="{y}" y2="{y}" '
            'stroke="#243b53" stroke-width="3"/>'
            f'<circle cx="{x(r["mean"]):.1f}" cy="{y}" r="4" fill="#e65100"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def review_page(nonce, disagreements, annotators, classes):
    """The items whose labels disagree, and each annotator's estimated accuracy."""
    if len(disagreements):
        rows = "".join(
            f"<tr><td>{escape(str(item))}</td><td>{escape(', '.join(labels))}</td></tr>"
            for item, labels in disagreements
        )
        dis = f"<table><tr><th>item</th><th>labels (annotator: class)</th></tr>{rows}</table>"
    else:
        dis = '<p class="note">No item has labels that disagree.</p>'
    ann = (
        _table(annotators)
        if annotators is not None
        else '<p class="note">No item has two labels yet: the annotators\' accuracy needs '
        "repeats (or a prior alone).</p>"
    )
    body = (
        '<header><b>skassess</b><span>Review</span><span><a href="/">'
        "back to labeling</a></span></header><main>"
        f"<section><h2>Annotators</h2>{ann}</section>"
        f"<section><h2>Disagreements</h2>{dis}</section></main>"
    )
    return page("skassess: review", body, nonce)
