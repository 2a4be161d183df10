"""Options and helpers the subcommands share."""

import json

import numpy as np
import pandas as pd

from ..session import ScoresFile

#: The priors of the accuracy the commands offer, and their help text.
FILE_OPTIONS = (
    "id_column",
    "score_columns",
    "classes",
    "label_column",
    "group_columns",
    "display_columns",
    "sep",
    "sum_tolerance",
)


def file_options(args):
    """The column options given on the command line (None = not given)."""
    return {k: getattr(args, k, None) for k in FILE_OPTIONS}


def open_scores(path, options):
    given = {k: v for k, v in options.items() if v is not None}
    return ScoresFile(path, **given)


def print_table(title, frame, digits=4):
    print(f"{title}:")
    if frame.empty:
        print("  (none)\n")
        return
    with pd.option_context(
        "display.width", 140, "display.max_columns", 20, "display.max_rows", 200
    ):
        shown = frame.round(digits)
        for col in ("n_labeled", "rows", "labeled"):
            # counts are whole unless weighted: shown as integers then
            if col in shown and pd.api.types.is_float_dtype(shown[col]):
                values = shown[col].to_numpy()
                if np.all(np.isfinite(values) & (values == np.round(values))):
                    shown[col] = shown[col].astype(np.int64)
        print(shown.to_string(), "\n")


def dump_json(obj, path):
    """Write ``obj`` as JSON to ``path`` (``"-"``: stdout), stamped with the package version."""
    from .. import __version__

    if isinstance(obj, dict):
        obj = {"skassess_version": __version__, **obj}
    # NaN and infinities are not JSON: a value that does not exist is null
    text = json.dumps(_finite(obj), indent=2, default=_json_default, allow_nan=False)
    if path == "-":
        print(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")


def _finite(value):
    """``value`` with every NaN or infinite number (also NumPy's) replaced by None."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, np.ndarray):
        return _finite(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
