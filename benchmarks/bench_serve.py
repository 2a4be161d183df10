"""skassess serve: the time from a label to the next item, and labels under server kills.

Two measurements on a synthetic pool (``--classes`` classes, Dirichlet scores,
written as Parquet):

* **latency**: one annotator labels ``--labels`` items through the app (in
  this process, Starlette's test client): the time from posting a label to
  the next item's page, as process CPU and wall time (median and 90th
  percentile), on a pool of ``--pool`` items;
* **kills**: ``--annotators`` annotators label at once through a real server
  (``skassess serve`` in its own process, HTTP), ``--total`` labels in all,
  while the server is SIGKILLed every ``--kill-every`` seconds on average
  (exponential) and started again. Every label whose page came back (the
  annotator saw it accepted) must be in the session file, with its annotator,
  and no item may be labeled twice.

Usage::

    python benchmarks/bench_serve.py --save serve
"""

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _results import Table, add_save_argument

from skassess.session import LabelingSession


def make_pool(folder, n, k, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.dirichlet(np.full(k, 0.3), size=n).astype(np.float32)
    classes = [f"class{c}" for c in range(k)]
    frame = pd.DataFrame(scores, columns=[f"score_{c}" for c in classes])
    frame.insert(0, "id", [f"item{i}" for i in range(n)])
    path = Path(folder) / f"pool-{n}.parquet"
    frame.to_parquet(path, index=False)
    truth = np.array([rng.choice(k, p=p / p.sum()) for p in scores[: min(n, 50_000)]])
    return path, truth


def _field(html, name):
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    return None if found is None else found.group(1)


def latency(path, labels, seed, think):
    from starlette.testclient import TestClient

    from skassess.cli._arguments import build_parser
    from skassess.cli._serve import build

    session_path = Path(tempfile.mkdtemp()) / "latency.sqlite"
    args = build_parser().parse_args(
        ["serve", str(path), "--session", str(session_path), "--seed", str(seed)]
    )
    start = time.process_time()
    app, session = build(args)
    setup = time.process_time() - start
    client = TestClient(app, base_url="http://127.0.0.1")
    page = client.get("/")
    page = client.post("/login", data={"name": "ana", "csrf": _field(page.text, "csrf")})
    rng = np.random.default_rng(seed)
    cpu, wall = [], []
    try:
        for _ in range(labels):
            form = {
                "row": _field(page.text, "row"),
                "csrf": _field(page.text, "csrf"),
                "label": str(int(rng.integers(0, 10))),
            }
            time.sleep(think)  # the annotator looks at the item; the estimate catches up
            c0, w0 = time.process_time(), time.perf_counter()
            page = client.post("/label", data=form)  # the redirect to the next item followed
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
            assert page.status_code == 200 and "Labeling as ana" in page.text
    finally:
        session.close()
    return setup, np.array(cpu), np.array(wall)


class Server:
    def __init__(self, path, session, port):
        self.command = [
            sys.executable,
            "-m",
            "skassess",
            "serve",
            str(path),
            "--session",
            str(session),
            "--seed",
            "1",
            "--port",
            str(port),
        ]
        self.port, self.process, self.starts = port, None, 0

    def start(self):
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(self.process.stderr.read().decode())
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                self.starts += 1
                return
            except OSError:
                time.sleep(0.1)

    def kill(self):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def annotator(name, seed, url, target, acked, lock, stop):
    import httpx

    client = httpx.Client(base_url=url, timeout=30)
    rng = np.random.default_rng(seed)
    page = None
    while not stop.is_set():
        try:
            if page is None or "Labeling as" not in page.text:
                page = client.get("/")
                if "Your name" in page.text:
                    page = client.post(
                        "/login",
                        data={"name": name, "csrf": _field(page.text, "csrf")},
                        follow_redirects=True,
                    )
                continue
            row, csrf = _field(page.text, "row"), _field(page.text, "csrf")
            label = int(rng.integers(0, 10))
            page = client.post(
                "/label",
                data={"row": row, "csrf": csrf, "label": str(label)},
                follow_redirects=True,
            )
            if page.status_code == 200 and "Labeling as" in page.text:
                with lock:
                    acked.append((int(row), name, label))
                    if len(acked) >= target:
                        stop.set()
        except (httpx.HTTPError, OSError):
            page = None
            time.sleep(0.2)


def kills(path, n_annotators, total, kill_every, seed):
    folder = Path(tempfile.mkdtemp())
    session = folder / "kills.sqlite"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = Server(path, session, port)
    server.start()
    acked, lock, stop = [], threading.Lock(), threading.Event()
    url = f"http://127.0.0.1:{port}"
    threads = [
        threading.Thread(target=annotator, args=(f"a{i}", seed + i, url, total, acked, lock, stop))
        for i in range(n_annotators)
    ]
    for t in threads:
        t.start()
    rng = np.random.default_rng(seed)
    n_kills, started = 0, time.perf_counter()
    while not stop.is_set():
        stop.wait(rng.exponential(kill_every))
        if stop.is_set():
            break
        server.kill()
        n_kills += 1
        server.start()
        print(f"  kill {n_kills}: {len(acked)} labels acknowledged", flush=True)
    for t in threads:
        t.join()
    server.kill()
    seconds = time.perf_counter() - started
    events, _, _ = LabelingSession.read_events(session)
    labels = events[events["kind"] == "label"]
    stored = {(int(r), a): int(lab) for r, a, lab in labels[["row", "annotator", "label"]].values}
    lost = sum(1 for r, a, lab in acked if stored.get((r, a)) != lab)
    duplicated = int(labels.duplicated(["row", "annotator"]).sum()) + int(
        labels["row"].duplicated().sum()
    )
    return len(acked), len(labels), lost, duplicated, n_kills, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", type=int, default=1_000_000)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--labels", type=int, default=200)
    ap.add_argument("--think", type=float, default=1.0, help="seconds between a page and its label")
    ap.add_argument("--kill-pool", type=int, default=20_000)
    ap.add_argument("--annotators", type=int, default=5)
    ap.add_argument("--total", type=int, default=10_000)
    ap.add_argument("--kill-every", type=float, default=20.0)
    ap.add_argument("--skip", nargs="*", default=[], choices=["latency", "kills"])
    ap.add_argument("--seed", type=int, default=0)
    add_save_argument(ap)
    args = ap.parse_args()
    folder = tempfile.mkdtemp()
    if "latency" not in args.skip:
        path, _ = make_pool(folder, args.pool, args.classes, args.seed)
        setup, cpu, wall = latency(path, args.labels, args.seed, args.think)
        table = Table(
            [
                "pool",
                "labels",
                "think s",
                "start CPU s",
                "CPU ms: median",
                "CPU ms: p90",
                "wall ms: median",
                "wall ms: p90",
                "load",
            ],
            formats={
                c: ".1f"
                for c in (
                    "start CPU s",
                    "CPU ms: median",
                    "CPU ms: p90",
                    "wall ms: median",
                    "wall ms: p90",
                )
            },
        )
        table.add(
            [
                args.pool,
                args.labels,
                args.think,
                setup,
                1e3 * np.median(cpu),
                1e3 * np.quantile(cpu, 0.9),
                1e3 * np.median(wall),
                1e3 * np.quantile(wall, 0.9),
                f"{os.getloadavg()[0]:.1f}",
            ]
        )
        table.save(
            args.save and f"{args.save}-latency",
            caption="From posting a label to the next item's page, one annotator, the app in "
            "this process (process CPU and wall time per label, the estimate panel computed "
            "in the background during *think* seconds on each page); *start*: reading the "
            "pool and opening the session.",
        )
    if "kills" not in args.skip:
        path, _ = make_pool(folder, args.kill_pool, args.classes, args.seed)
        acked, stored, lost, duplicated, n_kills, seconds = kills(
            path, args.annotators, args.total, args.kill_every, args.seed
        )
        table = Table(
            [
                "pool",
                "annotators",
                "acknowledged",
                "in the file",
                "lost",
                "duplicated",
                "kills",
                "minutes",
            ],
            formats={"minutes": ".1f"},
        )
        table.add(
            [
                args.kill_pool,
                args.annotators,
                acked,
                stored,
                lost,
                duplicated,
                n_kills,
                seconds / 60,
            ]
        )
        table.save(
            args.save and f"{args.save}-kills",
            caption="Annotators labeling at once through skassess serve while it is SIGKILLed "
            "and restarted: labels acknowledged to the annotators, labels in the session file, "
            "acknowledged labels missing or altered there (lost), items labeled twice.",
        )


if __name__ == "__main__":
    main()
