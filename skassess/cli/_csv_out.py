"""CSV files a spreadsheet opens as data: cells that would run as formulas are neutralized.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` (or a tab or
carriage return before one) as a formula, so an item id or a class name such as
``=HYPERLINK(...)`` from a user's file would run when the CSV is opened. As OWASP's
"CSV Injection" page advises, such a text cell is written with a single quote before it
(``'=HYPERLINK(...)``) and every text cell is quoted. A cell that is a plain number, such
as ``-3`` or ``+1.5e-3``, is left as it is: it is a number, never a formula. Numeric
columns are never changed. ``raw=True`` writes every cell as it is.
"""

import csv
import re

import pandas as pd

__all__ = ["neutralize", "write_csv"]

_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def neutralize(value):
    """``value`` with a ``'`` before it if a spreadsheet would read it as a formula."""
    if not isinstance(value, str) or not value.startswith(_TRIGGERS):
        return value
    if _NUMBER.fullmatch(value):
        return value
    return "'" + value


def _texts(values):
    if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
        return values
    if isinstance(values.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(values):
        return values
    return values.map(neutralize)


def write_csv(frame, path, *, index=True, raw=False):
    """Write ``frame`` to ``path`` as CSV, spreadsheet-safe unless ``raw``.

    Text cells (of the columns and, with ``index``, of the index) that begin like a
    formula get a ``'`` before them, and every text cell is quoted; see the module's
    docstring.
    """
    if raw:
        frame.to_csv(path, index=index)
        return
    safe = frame.copy()
    for col in safe.columns:
        safe[col] = _texts(safe[col])
    safe.columns = [neutralize(c) for c in safe.columns]
    if index:
        if isinstance(safe.index, pd.MultiIndex):
            levels = [safe.index.get_level_values(i) for i in range(safe.index.nlevels)]
            safe.index = pd.MultiIndex.from_arrays(
                [_texts(level.to_series()) for level in levels],
                names=[neutralize(n) for n in safe.index.names],
            )
        else:
            name = neutralize(safe.index.name)
            safe.index = pd.Index(_texts(safe.index.to_series()), name=name)
    safe.to_csv(path, index=index, quoting=csv.QUOTE_NONNUMERIC)
