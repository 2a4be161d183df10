"""Result files of the benchmarks: the tables the documentation shows, with their command.

A benchmark's ``--save NAME`` writes ``benchmarks/results/NAME.json``: the
table's columns and rows, the command that made it and the commit it measured.
``python benchmarks/render_pages.py`` renders every table of the benchmark
pages from these files, so a number on a page is always the output of a
command at a known commit.
"""

import contextlib
import io
import json
import math
import pathlib
import re
import shlex
import subprocess
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results"


def current_commit():
    """The measured commit, marked ``-dirty`` when tracked files other than the result
    files differ from it (a benchmark run after another has written its results still
    measures the commit's code)."""
    root = RESULTS.parent.parent

    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short=7", "HEAD")
        changed = git(
            "status", "--porcelain", "--untracked-files=no", "--", ".",
            f":(exclude){RESULTS.relative_to(root).as_posix()}",
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit}-dirty" if changed else commit


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


def add_save_argument(
    parser, what="each printed table as benchmarks/results/NAME-I (I = 1, 2, ...)"
):
    """The benchmarks' ``--save NAME`` option."""
    parser.add_argument("--save", metavar="NAME", help=f"save {what}")


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


def frame_markdown(frame, index=False):
    """A DataFrame as a markdown table (floats as printed by pandas after ``round``)."""
    if index:
        frame = frame.reset_index()
    lines = ["| " + " | ".join(str(c) for c in frame.columns) + " |"]
    lines.append("|" + "---|" * len(frame.columns))
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join("--" if v != v else str(v) for v in row) + " |")
    return "\n".join(lines)


class _Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self):
        for stream in self.streams:
            stream.flush()


_SEPARATOR = re.compile(r"\|(\s*:?-+:?\s*\|)+")


def printed_tables(text):
    """The markdown tables in ``text``: (title, columns, rows) each, the title the
    last line of prose above the table; a note after a row's last ``|`` is dropped."""
    lines = text.splitlines()
    tables, title, i = [], None, 0
    while i < len(lines):
        line = lines[i].strip()
        if (
            line.startswith("|")
            and i + 1 < len(lines)
            and _SEPARATOR.fullmatch(lines[i + 1].strip())
        ):
            columns = _cells(line)
            rows = []
            i += 2
            # rows, and the progress notes (``[...]``) printed between them, up to the
            # next table's header (a row followed by a separator)
            while i < len(lines) and (
                lines[i].strip().startswith("|") or re.fullmatch(r"\[.*\]", lines[i].strip())
            ):
                if i + 1 < len(lines) and _SEPARATOR.fullmatch(lines[i + 1].strip()):
                    break
                if lines[i].strip().startswith("|"):
                    cells = _cells(lines[i].strip())
                    if len(cells) == len(columns):
                        rows.append(cells)
                i += 1
            tables.append((title, columns, rows))
            continue
        if line and not re.fullmatch(r"\[.*\]", line) and not line.startswith("wrote "):
            title = line.lstrip("#").strip()
        i += 1
    return tables


def _cells(line):
    return [c.strip() for c in line[1 : line.rindex("|")].split("|")]


@contextlib.contextmanager
def saving_printed_tables(name):
    """Save each markdown table printed inside the block as ``results/NAME-I.json``
    (``I`` = 1, 2, ... in the order printed; nothing when ``name`` is None)."""
    if not name:
        yield
        return
    buffer = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, buffer)):
        yield
    # the commit measured, before the first result file written makes the checkout dirty
    commit = current_commit()
    for i, (title, columns, rows) in enumerate(printed_tables(buffer.getvalue()), 1):
        save(f"{name}-{i}", columns, rows, caption=title, commit=commit)
