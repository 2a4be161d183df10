"""What a session file of the command stores about its inputs, checked before any is used.

A session file may come from someone else: its ``info`` (the scores file's path
and SHA-256, the column options, the fixed settings, the class names) is data
to check, never an instruction. A command reads only the files named on its
command line: a stored path is shown, never opened, and a stored SHA-256 is a
fingerprint that a named file is compared against.
"""

from numbers import Integral, Real
from pathlib import Path

from ..exceptions import SessionError
from ..session import LabelingSession, file_checksum
from ..utils._validation import is_sha256

__all__ = ["check_classes", "checked_scores_paths", "read_session", "scores_hint"]

#: The type of each column option a session stores (None: not given).
_OPTION_KINDS = {
    "id_column": str,
    "score_columns": list,
    "classes": list,
    "label_column": str,
    "group_columns": list,
    "display_columns": list,
    "sep": str,
    "sum_tolerance": Real,
}
_SETTING_KINDS = {
    "task": str,
    "strategy": str,
    "compare": list,
    "rope": Real,
    "seed": Integral,
    "metrics": list,
    "metric": str,
    "confidence_bins": Integral,
}
MAX_CLASSES = 100_000


def _strings(value):
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _of_kind(value, kind):
    if value is None:
        return True
    if kind is list:
        return _strings(value)
    return isinstance(value, kind) and not isinstance(value, bool)


def _one_or_more(value, check):
    return check(value) or (isinstance(value, list) and bool(value) and all(map(check, value)))


def _problem(info):
    """What is wrong with a command session's ``info`` (None: nothing)."""
    known = {"input", "sha256", "options", "settings", "classes", "models"}
    extra = sorted(set(info) - known)
    if extra:
        return f"info has the unknown key {extra[0]!r}"
    for key in ("options", "settings"):
        if not isinstance(info.get(key, {}), dict):
            return f"info.{key} is not a record"
    for key, kinds in (("options", _OPTION_KINDS), ("settings", _SETTING_KINDS)):
        for name, value in info.get(key, {}).items():
            if name not in kinds:
                return f"info.{key} has the unknown entry {name!r}"
            if not _of_kind(value, kinds[name]):
                return f"info.{key}.{name} is not a {kinds[name].__name__}"
    classes = info.get("classes")
    if classes is not None and not (_strings(classes) and 2 <= len(classes) <= MAX_CLASSES):
        return f"info.classes is not a list of 2 to {MAX_CLASSES:,} class names"
    if classes is not None and len(set(classes)) != len(classes):
        return "info.classes names a class twice"
    if info.get("input") is not None and not _one_or_more(info["input"], _of_str):
        return "info.input is not a path (or a list of them)"
    if info.get("sha256") is not None and not _one_or_more(info["sha256"], is_sha256):
        return "info.sha256 is not a SHA-256 (or a list of them)"
    if "models" in info and not _strings(info["models"]):
        return "info.models is not a list of model names"
    return None


def _of_str(value):
    return isinstance(value, str)


def _is_code(value, n_classes):
    """A class index 0..n_classes-1 (a JSON number read back, possibly as a float)."""
    if isinstance(value, bool) or not isinstance(value, Integral | float):
        return False
    return float(value).is_integer() and 0 <= value < n_classes


def read_session(path):
    """``(events, info)`` of a command's session file, its info and labels checked.

    Raises
    ------
    SessionError
        If the file is not an intact session file, or what it stores about the
        command's inputs is malformed (the message says what).
    """
    events, info, _ = LabelingSession.read_events(path)
    problem = _problem(info)
    classes = info.get("classes")
    if problem is None and classes is not None:
        labels = events.loc[events["kind"] == "label", "label"]
        bad = [v for v in labels if not _is_code(v, len(classes))]
        if bad:
            problem = f"a stored label, {bad[0]!r}, is not one of the {len(classes)} classes"
    if problem is not None:
        raise SessionError(f"{path}: not a session of the skassess command: {problem}.")
    return events, info


def check_classes(path, info, classes):
    """The scores file's classes are the session's."""
    stored = info.get("classes")
    if stored is not None and list(stored) != list(classes):
        raise SessionError(
            f"{path}: the session labeled the classes {stored!r}; the scores file has "
            f"{list(classes)!r}."
        )


def checked_scores_paths(path, info, given):
    """The scores files the user named, checked against the session's fingerprints.

    Parameters
    ----------
    path : path-like
        The session file (for messages).
    info : dict
        The session's checked ``info``.
    given : list of str
        The files named on the command line; the stored ``info["input"]`` is
        never opened, so a session file cannot make the command read another file.

    Raises
    ------
    SessionError
        If no file is named, a named file is missing, or its SHA-256 is not the
        one the session stores.
    """
    stored = info.get("sha256")
    stored = [stored] if isinstance(stored, str) else stored
    if not given:
        raise SessionError(f"{path}: {scores_hint(info)}")
    paths = list(given)
    if stored and len(stored) != len(paths):
        raise SessionError(
            f"{path}: the session labeled {len(stored)} scores file(s); {len(paths)} were given."
        )
    for i, file in enumerate(paths):
        if not Path(file).is_file():
            raise SessionError(f"{file}: the session's scores file is not there.")
        if stored and file_checksum(file) != stored[i]:
            raise SessionError(
                f"{file} is not the file the session labeled (its SHA-256 differs); name the "
                "right one with --scores."
            )
    return paths


def scores_hint(info):
    """Which file to name with ``--scores``: the stored path, shown escaped, never opened."""
    stored = info.get("input")
    named = "" if stored is None else f" (the session labeled {stored!r})"
    return f"name the session's scores file with --scores{named}"
