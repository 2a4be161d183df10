"""Where ``skassess label`` gets labels without a keyboard: a CSV or a command."""

import json
import shlex
import subprocess

import numpy as np
import pandas as pd

from ..exceptions import LabelError, SessionError
from ..session import LabelParser

__all__ = ["CommandOracle", "OracleQuit", "read_oracle"]


class OracleQuit(Exception):
    """The oracle command asked to end the session (it answered ``quit``)."""


def read_oracle(path, ids, classes, id_column):
    """Pool-row labels (class codes, -1 = not given) from an oracle CSV."""
    frame = pd.read_csv(path, sep=None, engine="python", dtype=str, keep_default_na=False)
    cols = {c.lower(): c for c in frame.columns}
    idc = next((cols[c] for c in ((id_column or "id").lower(), "id") if c in cols), None)
    labc = next(
        (cols[c] for c in ("label", "y", "y_true", "true_label", "target", "truth") if c in cols),
        None,
    )
    if idc is None or labc is None:
        raise ValueError(
            f"--oracle {path}: needs an id column ({id_column or 'id'}) and a label "
            f"column; it has {list(frame.columns)!r}."
        )
    dup = frame[idc].duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(
            f"--oracle {path}: row {i + 1} (line {i + 2}): the id {frame[idc].iloc[i]!r} repeats."
        )
    text = frame[labc]
    present = (text.str.strip() != "").to_numpy()
    codes = np.full(len(frame), -1, dtype=np.int64)
    codes[present] = LabelParser(classes).parse_many(text[present].to_numpy(dtype=object))
    bad = present & (codes < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            LabelParser(classes).message(
                text.iloc[i], where=f"--oracle {path}: row {i + 1} (line {i + 2}), column {labc!r}"
            )
        )
    lookup = pd.Series(codes, index=frame[idc].to_numpy())
    return lookup.reindex(np.asarray(ids)).fillna(-1).to_numpy(dtype=np.int64)


class CommandOracle:
    """A program that answers one item per line (``--oracle-command``).

    The program is started once (no shell: the command line is split like a
    shell would, see :func:`shlex.split`). For every item, one JSON object is
    written to its standard input, on one line::

        {"id": "img-00042", "row": 41, "predicted": "Shirt",
         "scores": {"T-shirt/top": 0.12, ...}, "display": {"path": "..."}}

    and one line is read from its standard output: a class name (read by
    ``LabelParser``, which also takes ``#k`` for the
    class of score column ``k``) labels the item; an empty line or ``skip``
    skips it; ``quit`` ends the session (every label given so far is kept).
    A class named ``skip`` or ``quit`` is that class: ``:skip`` and ``:quit``
    are always the commands. Its standard error goes to
    the terminal. With ``--task compare_models`` ``predicted`` and ``scores``
    hold one entry per model: ``{"vendor": "Shirt", ...}`` and ``{"vendor":
    {"T-shirt/top": 0.12, ...}, ...}``.

    Parameters
    ----------
    command : str
        The command line.
    table : ScoresTable
        The pool (ids, scores, display columns).
    classes : list of str
        Class names, in score-column order.
    """

    def __init__(self, command, table, classes):
        argv = shlex.split(command)
        if not argv:
            raise ValueError("--oracle-command: the command is empty.")
        self.command = command
        self.table = table
        self.classes = list(classes)
        self.parser = LabelParser(self.classes)
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
                encoding="utf-8",
                # its own session: a Ctrl-C at the terminal interrupts skassess, which
                # saves and closes the program's input, not the program mid-answer
                start_new_session=True,
            )
        except OSError as exc:
            raise ValueError(f"--oracle-command: cannot start {argv[0]!r}: {exc}.") from exc

    def item(self, row):
        """The JSON object sent for pool row ``row``."""
        s = self.table.scores[row]
        display = {str(c): str(self.table.display[c].iloc[row]) for c in self.table.display.columns}
        if np.ndim(s) == 2:  # one row of scores per model (--task compare_models)
            models = self.table.models
            return {
                "id": str(self.table.ids[row]),
                "row": int(row),
                "predicted": {
                    m: self.classes[int(np.argmax(p))] for m, p in zip(models, s, strict=True)
                },
                "scores": {
                    m: {c: float(v) for c, v in zip(self.classes, p, strict=True)}
                    for m, p in zip(models, s, strict=True)
                },
                "display": display,
            }
        probs = np.array([1 - s, s]) if np.ndim(s) == 0 else np.asarray(s)
        return {
            "id": str(self.table.ids[row]),
            "row": int(row),
            "predicted": self.classes[int(np.argmax(probs))],
            "scores": {c: float(p) for c, p in zip(self.classes, probs, strict=True)},
            "display": {
                str(c): str(self.table.display[c].iloc[row]) for c in self.table.display.columns
            },
        }

    def _failed(self, what):
        try:  # the end of its output comes just before its exit status
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        status = "" if code is None else f" (it exited with code {code})"
        return SessionError(
            f"--oracle-command {self.command!r}: {what}{status}. The labels "
            "given so far are saved; the same command resumes the session."
        )

    def __call__(self, row):
        item = self.item(row)
        try:
            self.process.stdin.write(json.dumps(item) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except (BrokenPipeError, OSError):
            raise self._failed(f"cannot send item {item['id']!r}") from None
        if not line:
            raise self._failed(f"no answer for item {item['id']!r}")
        text = line.rstrip("\r\n")
        command = "skip" if text.strip() == "" else self.parser.command(text)
        if command == "skip":
            return None
        if command == "quit":
            raise OracleQuit
        if command is None:
            try:
                return self.parser.parse(text, numbers=True)
            except LabelError:
                where = f"the answer for item {item['id']!r}"
                raise self._failed(
                    self.parser.message(text, numbers=True, where=where).rstrip(".")
                ) from None
        raise self._failed(
            f"the answer {text!r} for item {item['id']!r} is the prompt command {command!r}, "
            "which an oracle command cannot give (it answers a class, skip or quit)"
        )

    def close(self):
        """Close its input (end of items) and wait briefly for it to exit."""
        if self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:  # pragma: no cover - already gone
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
