"""A crafted session file ends in one line and exit 2, reads no other file, changes nothing.

The forger here rewrites the file and recomputes its checksum chain (anyone can), so
every case reaches the checks behind the chain.
"""

import json
import os
import sqlite3
import subprocess
from unittest import mock

import pytest

from skassess.cli import main
from skassess.session import file_checksum
from skassess.session._store import event_hash, settings_hash

SECRET = "top-secret-first-line"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A scores file, its oracle and a session of 12 labels on it (made once)."""
    return make_session(tmp_path_factory.mktemp("hostile"))


def make_session(tmp):
    """``(directory, scores, labels, session, secret)``: the files the cases forge from."""
    assert main(["example", "--directory", str(tmp)]) == 0
    scores, labels = tmp / "example_scores.csv", tmp / "example_labels.csv"
    session = tmp / "good.sqlite"
    argv = ["label", str(scores), "--session", str(session), "--oracle", str(labels)]
    assert main([*argv, "--budget", "12", "--seed", "1", "--no-progress"]) == 0
    secret = tmp / "secret.csv"
    secret.write_text(f"{SECRET},b\n1,2\n")
    return tmp, scores, labels, session, secret


def forge(src, dst, *, meta=None, event=None):
    """Copy a session file, edit its meta values (JSON texts) or an event, re-chain it."""
    dst.write_bytes(src.read_bytes())
    db = sqlite3.connect(dst)
    rows = dict(db.execute("SELECT key, value FROM meta").fetchall())
    rows.update(meta or {})
    for key, value in rows.items():
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
    cols = "seq, kind, row, item_id, label, step, time, cursor"
    events = [list(e) for e in db.execute(f"SELECT {cols} FROM events ORDER BY seq")]
    if event is not None:
        seq, changes = event
        names = cols.split(", ")
        for name, value in changes.items():
            events[seq - 1][names.index(name)] = value
    previous = settings_hash(rows)
    for seq, kind, row, item_id, label, step, when, cursor in events:
        previous = event_hash(previous, seq, kind, row, item_id, label, step, when, cursor)
        db.execute(
            "UPDATE events SET row=?, item_id=?, label=?, time=?, cursor=?, hash=? WHERE seq=?",
            (row, item_id, label, when, cursor, previous, seq),
        )
    head = json.dumps([len(events), previous], separators=(",", ":"))
    db.execute("UPDATE meta SET value=? WHERE key='head'", (head,))
    db.commit()
    db.close()
    return dst


def _meta(path, key):
    db = sqlite3.connect(path)
    try:
        return json.loads(db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()[0])
    finally:
        db.close()


def deep(n=100_000):
    return "[" * n + "]" * n


def _info(made, **change):
    info = _meta(made[3], "info")
    info.update(change)
    return {"info": json.dumps(info)}


def _spec(made, edit):
    spec = _meta(made[3], "assessor")
    edit(spec)
    return {"assessor": json.dumps(spec)}


def _not_a_sampler(spec):
    spec.clear()
    spec.update({"class": "skassess.metrics.BayesianAccuracy", "params": {}})


def _huge_bins(spec):
    spec["params"]["estimator"] = {
        "__estimator__": {
            "class": "skassess.metrics.BayesianAccuracy",
            "params": {"n_bins": 10**9, "grouping": "score_bins"},
        }
    }


def _huge_draws(spec):
    spec["params"]["estimator"] = {
        "__estimator__": {
            "class": "skassess.metrics.BayesianAccuracy",
            "params": {"n_draws": 10**12},
        }
    }


CASES = {
    "deep JSON in format": lambda m: {"meta": {"format": deep()}},
    "deep JSON in info": lambda m: {"meta": {"info": deep()}},
    "deep JSON in the assessor": lambda m: {"meta": {"assessor": deep()}},
    "deep JSON in a label": lambda m: {"event": (3, {"label": deep()})},
    "deep JSON in a cursor": lambda m: {"event": (3, {"cursor": deep()})},
    "a metric as the assessor": lambda m: {"meta": _spec(m, _not_a_sampler)},
    "n_bins=10**9": lambda m: {"meta": _spec(m, _huge_bins)},
    "n_draws=10**12": lambda m: {"meta": _spec(m, _huge_draws)},
    "label 99 of 10 classes": lambda m: {"event": (2, {"label": "99"})},
    "a label that is a string": lambda m: {"event": (2, {"label": '"Shirt"'})},
    "a row past the pool": lambda m: {"event": (2, {"row": 10**6})},
    "a forged item id": lambda m: {"event": (2, {"item_id": "x\x1b[31m\x07"})},
    "an event time past the year 9999": lambda m: {"event": (2, {"time": 1e20})},
    "an event time before 1970": lambda m: {"event": (3, {"time": -5.0})},
    "unknown info.options": lambda m: {"meta": _info(m, options={"evil": 1})},
    "a short info.classes": lambda m: {"meta": _info(m, classes=["a", "b"])},
    "info.classes not strings": lambda m: {"meta": _info(m, classes=[{"a": 1}] * 10)},
    "info.input another file": lambda m: {"meta": _info(m, input=str(m[4]), sha256=None)},
    "info.input another file, its hash": lambda m: {
        "meta": _info(m, input=str(m[4]), sha256="0" * 64)
    },
    "settings not a dict": lambda m: {"meta": _info(m, settings=[1, 2])},
}
COMMANDS = {
    "label": lambda m, p: ["label", str(m[1]), "--session", str(p), "--oracle", str(m[2])],
    "export": lambda m, p: ["export", str(p), "--posterior", str(p) + ".json"],
    "export --scores": lambda m, p: [
        "export",
        str(p),
        "--scores",
        str(m[1]),
        "--posterior",
        str(p) + ".json",
    ],
    "report": lambda m, p: ["report", str(m[1]), "--session", str(p), "-o", str(p) + ".html"],
}


#: Edits that change nothing a command relies on: the command may go on (the file it is
#: given is checked against the pool's fingerprint, which the store holds, and a stored
#: path is never opened).
HARMLESS = {
    ("info.input another file", "report"),
    ("info.input another file", "export --scores"),
}


def _run(command, made, path, capsys):
    capsys.readouterr()
    argv = COMMANDS[command](made, path)
    argv += ["--budget", "20", "--no-progress"] if command == "label" else []
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_session_file_ends_in_one_line(made, tmp_path, capsys, case, command):
    path = forge(made[3], tmp_path / "forged.sqlite", **CASES[case](made))
    before = path.read_bytes()
    code, err = _run(command, made, path, capsys)
    if (case, command) in HARMLESS and code == 0:
        assert SECRET not in err and path.read_bytes() == before
        return
    assert code == 2, (case, command, code, err)
    name = command.split()[0]
    assert err.startswith(f"skassess {name}: error: ") and err.count("\n") == 1, err
    assert SECRET not in err
    if "event time" in case:
        assert "is not a time" in err, err
    assert path.read_bytes() == before


def test_export_never_opens_a_stored_path(made, tmp_path, capsys):
    """A session that stores another file's path beside that file's true SHA-256 (easy
    to know for /etc/passwd) makes export read nothing of it: a stored path is shown,
    never opened, and export without --scores writes the labels only."""
    secret = made[4]
    forged = _info(made, input=str(secret), sha256=file_checksum(secret))
    path = forge(made[3], tmp_path / "f.sqlite", meta=forged)
    opened = []
    real_open = open

    def spy(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    capsys.readouterr()
    with mock.patch("builtins.open", spy), mock.patch("io.open", spy):
        assert main(["export", str(path)]) == 0
    out, err = capsys.readouterr()
    assert str(secret) not in opened and SECRET not in out + err
    assert "no posterior written" in out and "--scores" in out and err == ""
    assert (tmp_path / "f.sqlite.labels.csv").exists()
    assert main(["export", str(path), "--posterior", "-"]) == 2
    out, err = capsys.readouterr()
    assert "the posterior needs the scores file" in err and SECRET not in out + err
    # a file the user names is read, and checked against the session's fingerprint
    argv = ["export", str(path), "--scores", str(made[1]), "--posterior", str(path) + ".json"]
    assert main(argv) == 2  # not the file whose SHA-256 the session stores
    assert "is not the file the session labeled" in capsys.readouterr().err


def test_an_edited_assessor_says_what_differs(made, tmp_path, capsys):
    def edit(spec):
        spec["params"]["strategy"] = "random"

    path = forge(made[3], tmp_path / "e.sqlite", meta=_spec(made, edit))
    code, err = _run("label", made, path, capsys)
    assert code == 2
    assert 'assessor.strategy: stored "random", given "thompson"' in err, err


def _read_only(path):
    """Make ``path`` read-only even for root (an immutable file); None if it cannot be."""
    os.chmod(path, 0o444)
    if os.geteuid() != 0:
        return lambda: os.chmod(path, 0o644)
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
    if done.returncode != 0:
        os.chmod(path, 0o644)
        return None
    return lambda: (subprocess.run(["chattr", "-i", str(path)], check=True), os.chmod(path, 0o644))


@pytest.mark.slow
def test_a_read_only_session_is_read_and_refused_for_labeling(made, tmp_path, capsys):
    path = tmp_path / "ro.sqlite"
    path.write_bytes(made[3].read_bytes())
    undo = _read_only(path)
    if undo is None:
        pytest.skip("this machine cannot make a file read-only for root (chattr)")
    try:
        for command in ("export --scores", "report"):
            code, err = _run(command, made, path, capsys)
            assert code == 0, err
        code, err = _run("label", made, path, capsys)
        assert code == 2 and "read-only" in err and "damaged" not in err, err
        assert err.count("\n") == 1
    finally:
        undo()
    assert path.read_bytes() == made[3].read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ro.sqlite")) == [
        "ro.sqlite",
        "ro.sqlite.html",
        "ro.sqlite.json",
        "ro.sqlite.labels.csv",
    ]


def test_a_migrate_pickle_that_asks_for_32_gib_is_refused(tmp_path, capsys):
    from .test_session_safety import _write_v1

    class Huge:
        def __reduce__(self):
            import numpy as np

            reconstruct = np._core.multiarray._reconstruct
            return (reconstruct, (np.ndarray, (2**35,), b"b"))

    path = tmp_path / "bomb.sqlite"
    _write_v1(path, Huge(), {})
    before = path.read_bytes()
    assert main(["migrate", str(path), "--trust-pickle"]) == 2
    err = capsys.readouterr().err
    assert "34,359,738,368 elements" in err and err.count("\n") == 1, err
    assert path.read_bytes() == before


def _table():
    """Every case through every command, as a markdown table (the script's output)."""
    import contextlib
    import io
    import pathlib
    import tempfile

    class Factory:
        def mktemp(self, name):
            return pathlib.Path(tempfile.mkdtemp(prefix=name))

    with contextlib.redirect_stdout(io.StringIO()):
        made_ = make_session(Factory().mktemp("hostile"))
    print("| case | command | exit | file unchanged | message |")
    print("|---|---|---|---|---|")
    for case in sorted(CASES):
        for command in sorted(COMMANDS):
            path = forge(made_[3], Factory().mktemp("case") / "forged.sqlite", **CASES[case](made_))
            before = path.read_bytes()
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                argv = COMMANDS[command](made_, path)
                argv += ["--budget", "20", "--no-progress"] if command == "label" else []
                code = main(argv)
            line = err.getvalue().strip().replace("|", "\\|")
            unchanged = "yes" if path.read_bytes() == before else "no"
            print(f"| {case} | {command} | {code} | {unchanged} | {line[:160]} |")


if __name__ == "__main__":  # python tests/session/test_hostile_files.py
    _table()
