"""What the command says about damaged and hostile session files.

Makes a 40-label session on the example file, damages copies of it in each
way below, opens each with ``skassess export`` in a fresh process, and prints
the exit code, whether the file was left unchanged, and the message:

* random bytes over 64 bytes in the middle of a page of events;
* an event row duplicated (a copy of event 2 inserted as the last event);
* one label rewritten;
* the last event deleted;
* the file cut short;
* the ``-wal`` file deleted after the labeling process was killed (nothing
  may be lost: the message is the export's normal output);
* a format-1 file whose pickled assessor would create a marker file (it must
  not appear).

    python benchmarks/bench_damaged_sessions.py
"""

import argparse
import base64
import json
import os
import pickle
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import Table


class _WritesMarker:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def skassess(*argv, cwd):
    proc = subprocess.run(
        [sys.executable, "-m", "skassess", *argv], capture_output=True, text=True, cwd=cwd
    )
    return proc.returncode, (proc.stderr.strip() or proc.stdout.strip().splitlines()[0])


def damage(path, how):
    if how == "random bytes":
        blob = bytearray(path.read_bytes())
        # the middle of the last page that holds events
        start = len(blob) - 4096 + 2048
        blob[start : start + 64] = os.urandom(64)
        path.write_bytes(bytes(blob))
        return
    if how == "cut short":
        blob = path.read_bytes()
        path.write_bytes(blob[: len(blob) // 2])
        return
    db = sqlite3.connect(path)
    if how == "duplicated event":
        cols = "kind, row, item_id, label, step, time, cursor, hash"
        db.execute(f"INSERT INTO events ({cols}) SELECT {cols} FROM events WHERE seq = 2")
    elif how == "rewritten label":
        db.execute("UPDATE events SET label = '\"Bag\"' WHERE seq = 5")
    elif how == "deleted last event":
        db.execute("DELETE FROM events WHERE seq = (SELECT MAX(seq) FROM events)")
    db.commit()
    db.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", metavar="NAME", help="save the table as benchmarks/results/NAME")
    save = parser.parse_args().save
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)

        def short(message):  # the messages without the temporary directory
            return message.replace(str(tmp) + os.sep, "")

        skassess("example", "--directory", str(tmp), cwd=tmp)
        scores, oracle = tmp / "example_scores.csv", tmp / "example_labels.csv"
        base = tmp / "base.sqlite"
        code, _ = skassess(
            "label",
            str(scores),
            "--session",
            str(base),
            "--oracle",
            str(oracle),
            "--budget",
            "40",
            "--seed",
            "0",
            "--no-progress",
            cwd=tmp,
        )
        assert code == 0
        table = Table(["case", "exit code", "file unchanged", "message"])
        for how in (
            "random bytes",
            "duplicated event",
            "rewritten label",
            "deleted last event",
            "cut short",
        ):
            path = tmp / f"{how.replace(' ', '_')}.sqlite"
            shutil.copy(base, path)
            damage(path, how)
            before = path.read_bytes()
            code, message = skassess("export", str(path), cwd=tmp)
            table.add([how, code, "yes" if path.read_bytes() == before else "NO", short(message)])
        # a killed labeling process, then its -wal file deleted
        path = tmp / "killed.sqlite"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skassess",
                "label",
                str(scores),
                "--session",
                str(path),
                "--oracle-command",
                f'{sys.executable} -c "import sys, time\nfor l in sys.stdin: '
                "print('Bag', flush=True); time.sleep(0.01)\"",
                "--seed",
                "0",
                "--no-progress",
            ],
            cwd=tmp,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(6)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        wal = Path(f"{path}-wal")
        had = wal.exists()
        # what the file and its log hold: read from a copy of both
        ref = tmp / "with_wal"
        ref.mkdir()
        for f in (path, wal):
            if f.exists():
                shutil.copy(f, ref / f.name)
        _, counted = skassess("export", str(ref / path.name), cwd=tmp)
        wal.unlink(missing_ok=True)
        code, message = skassess("export", str(path), cwd=tmp)
        with_wal = counted.split(" to ")[0]
        table.add(
            [
                "lost -wal after kill",
                code,
                "--",
                f"{short(message)} (a -wal file was {'there' if had else 'not there'} and deleted; "
                f"with it: {with_wal})",
            ]
        )
        # a crafted format-1 file
        path, marker = tmp / "crafted.sqlite", tmp / "marker"
        db = sqlite3.connect(path)
        db.executescript(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE events (seq INTEGER PRIMARY KEY, kind TEXT, row INTEGER, item_id "
            "TEXT, label TEXT, step INTEGER, time REAL, cursor TEXT);"
        )
        meta = {
            "format": 1,
            "created": 0,
            "settings": {},
            "data_sha256": "0",
            "assessor": base64.b64encode(pickle.dumps(_WritesMarker(marker))).decode(),
            "info": {"input": str(scores), "options": {}, "settings": {}},
        }
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()]
        )
        db.commit()
        db.close()
        for argv in (
            [
                "label",
                str(scores),
                "--session",
                str(path),
                "--oracle",
                str(oracle),
                "--budget",
                "5",
            ],
            ["export", str(path)],
            ["report", str(scores), "--session", str(path), "-o", str(tmp / "r.html")],
        ):
            code, message = skassess(*argv, cwd=tmp)
            made = "CREATED" if marker.exists() else "absent"
            table.add([f"pickle: {argv[0]}", code, f"marker {made}", short(message)])
        table.save(
            save,
            caption="A session of 40 labels of the example file, damaged each way, then "
            "opened with `skassess export` in a fresh process; the crafted file's pickle "
            "would create a marker file if it were ever loaded.",
        )


if __name__ == "__main__":
    main()
