"""Result files of the benchmarks: the tables the documentation shows, with their command.

A benchmark's ``--save NAME`` writes ``benchmarks/results/NAME.json``: the
table's columns and rows, the command that made it and the commit it measured.
``python benchmarks/render_pages.py`` renders every table of the benchmark
pages from these files, so a number on a page is always the output of a
command at a known commit.
"""

import json
import math
import pathlib
import shlex
import subprocess
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results"


def current_commit():
    """The measured commit (``git describe``), marked ``-dirty`` with uncommitted changes."""
    root = RESULTS.parent.parent
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=7"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def save(name, columns, rows, *, command=None, formats=None, caption=None, commit=None):
    """Write ``results/NAME.json``: the table, the command (default: this process's
    arguments) and the commit measured (default: the checkout's now). ``formats``
    maps a column to a format spec (``".3f"``)."""
    if command is None:
        command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    RESULTS.mkdir(exist_ok=True)
    clean = [[_plain(v) for v in row] for row in rows]
    record = {
        "caption": caption,
        "command": command,
        "commit": commit or current_commit(),
        "columns": list(columns),
        "formats": formats or {},
        "rows": clean,
    }
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return path


def _plain(value):
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def load(name):
    """The record of ``results/NAME.json``."""
    return json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))


class Table:
    """A markdown table printed row by row, and saved as ``results/NAME.json`` at
    the end when ``name`` is given (a benchmark's ``--save NAME``).

    >>> table = Table(["pool", "coverage"], formats={"coverage": ".3f"})  # doctest: +SKIP
    >>> table.add(["svhn", 0.951])                                         # doctest: +SKIP
    >>> table.save("rates", caption="...")                                 # doctest: +SKIP
    """

    def __init__(self, columns, *, formats=None):
        self.columns = list(columns)
        self.formats = dict(formats or {})
        self.rows = []
        print("| " + " | ".join(self.columns) + " |")
        print("|" + "---|" * len(self.columns), flush=True)

    def add(self, row, *, note=""):
        row = [_plain(v) for v in row]
        if len(row) != len(self.columns):
            raise ValueError(f"a row has {len(row)} values for {len(self.columns)} columns")
        self.rows.append(row)
        shown = []
        for column, value in zip(self.columns, row, strict=True):
            spec = self.formats.get(column)
            if value is None:
                shown.append("--")
            elif spec and isinstance(value, int | float) and not isinstance(value, bool):
                shown.append(format(value, spec))
            else:
                shown.append(str(value))
        print("| " + " | ".join(shown) + " |" + (f"  {note}" if note else ""), flush=True)

    def save(self, name, *, caption=None, command=None):
        """Write the table when ``name`` is set (else do nothing)."""
        if name:
            return save(
                name,
                self.columns,
                self.rows,
                command=command,
                formats=self.formats,
                caption=caption,
            )
        return None
