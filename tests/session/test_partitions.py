import numpy as np
import pandas as pd
import pytest

from skassess.cli import main
from skassess.exceptions import ScoresFileError
from skassess.session import assess_file, assess_partitions

pytest.importorskip("pyarrow")


def _frame(seed, n):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([1.0, 1.0, 1.0], n)
    y = np.array([rng.choice(3, p=q) for q in p])
    label = np.where(rng.random(n) < 0.3, np.array(["a", "b", "c"])[y], None)
    return pd.DataFrame(
        {
            "id": [f"{seed}-{i}" for i in range(n)],
            "score_a": p[:, 0],
            "score_b": p[:, 1],
            "score_c": p[:, 2],
            "label": label,
            "region": rng.choice(["north", "south", "east"], n),
        }
    )


@pytest.fixture
def partitions(tmp_path):
    frames = [_frame(s, n) for s, n in ((0, 400), (1, 250), (2, 300))]
    folder = tmp_path / "scores"
    folder.mkdir()
    paths = []
    for i, f in enumerate(frames):
        paths.append(folder / f"part-{i}.parquet")
        f.to_parquet(paths[-1], index=False)
    whole = tmp_path / "whole.parquet"
    pd.concat(frames, ignore_index=True).to_parquet(whole, index=False)
    return paths, whole


OPTIONS = {"label_column": "label", "id_column": "id", "group_columns": ["region"]}


def _assert_same(a, b):
    for name in ("overall", "by_class", "reliability"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), rtol=1e-9)
    for g in a.by_group:
        pd.testing.assert_frame_equal(a.by_group[g], b.by_group[g], rtol=1e-9)
        pd.testing.assert_frame_equal(a.differences[g], b.differences[g], rtol=1e-9)
    assert (a.source["rows"], a.source["labeled"]) == (b.source["rows"], b.source["labeled"])


def test_partitions_give_the_assessment_of_the_whole_file(partitions):
    paths, whole = partitions
    one = assess_file(whole, chunk_rows=128, **OPTIONS)
    parts = assess_partitions(paths, chunk_rows=128, **OPTIONS)
    _assert_same(parts, one)
    assert parts.source["partitions"] == 3 and len(parts.source["sha256"]) == 64


def test_partitions_on_a_cluster_give_the_same_assessment(partitions, dask_client):
    paths, whole = partitions
    parts = assess_partitions(paths, client=dask_client, **OPTIONS)
    _assert_same(parts, assess_file(whole, **OPTIONS))


def test_a_partition_with_other_columns_is_named(partitions):
    paths, _ = partitions
    pd.read_parquet(paths[1]).drop(columns="region").to_parquet(paths[1], index=False)
    with pytest.raises(ScoresFileError, match="part-1.parquet"):
        assess_partitions(paths, **OPTIONS)
    other = _frame(5, 50).rename(columns={"score_c": "score_d"})
    other.to_parquet(paths[1], index=False)
    with pytest.raises(ScoresFileError, match=r"part-1.parquet: its columns differ.*classes"):
        assess_partitions(paths, **OPTIONS)


def test_a_partition_without_the_label_column_is_named(partitions):
    paths, _ = partitions
    pd.read_parquet(paths[2]).drop(columns="label").to_parquet(paths[2], index=False)
    with pytest.raises(ScoresFileError, match=r"part-2.parquet.*label") as info:
        assess_partitions(paths, **OPTIONS)
    assert "part-0" not in str(info.value) and "part-1" not in str(info.value)


def test_a_nan_score_in_a_partition_is_named_with_its_row(partitions, dask_client):
    paths, _ = partitions
    f = pd.read_parquet(paths[2])
    f.loc[17, "score_b"] = np.nan
    f.to_parquet(paths[2], index=False)
    with pytest.raises(ScoresFileError, match=r"part-2.parquet.*row 18.*score_b"):
        assess_partitions(paths, client=dask_client, **OPTIONS)


def test_the_command_reads_a_glob_of_partitions(partitions, capsys, tmp_path):
    paths, whole = partitions
    pattern = str(paths[0].parent / "part-*.parquet")
    args = ["--label-column", "label", "--id-column", "id", "--group", "region"]
    assert main(["assess", pattern, *args, "--json", str(tmp_path / "p.json")]) == 0
    assert main(["assess", str(whole), *args, "--json", str(tmp_path / "w.json")]) == 0
    out = capsys.readouterr().out
    assert f"{pattern}: 950 rows" in out
    import json

    p, w = (json.loads((tmp_path / f).read_text()) for f in ("p.json", "w.json"))
    pd.testing.assert_frame_equal(pd.DataFrame(p["overall"]), pd.DataFrame(w["overall"]), rtol=1e-8)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--meta", "confidence"], "--meta reads one scores file"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--workers", "2", "--scheduler", "tcp://x:1"], "pass one"),
    ],
)
def test_the_command_refuses_partition_options_it_cannot_honour(partitions, extra, message, capsys):
    paths, _ = partitions
    pattern = str(paths[0].parent / "part-*.parquet")
    assert main(["assess", pattern, "--label-column", "label", *extra]) != 0
    assert message in capsys.readouterr().err


def test_a_glob_that_matches_nothing_is_refused(tmp_path, capsys):
    assert main(["assess", str(tmp_path / "none-*.parquet")]) != 0
    assert "no file matches" in capsys.readouterr().err


def test_the_command_joins_a_scheduler_by_its_address(partitions, dask_client, capsys, tmp_path):
    paths, whole = partitions
    pattern = str(paths[0].parent / "part-*.parquet")
    args = ["--label-column", "label", "--id-column", "id", "--quiet"]
    address = dask_client.scheduler.address
    assert main(["assess", pattern, *args, "--scheduler", address]) == 0
    assert capsys.readouterr().err == ""


class _Listener:
    """A TCP server on localhost that accepts and sends ``banner`` (None: nothing)."""

    def __init__(self, banner):
        import socket
        import threading

        self.server = socket.create_server(("127.0.0.1", 0))
        self.banner, self.held = banner, []
        self.address = f"tcp://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.held.append(conn)
            if self.banner is not None:
                conn.sendall(self.banner)

    def close(self):
        self.server.close()
        for conn in self.held:
            conn.close()


@pytest.mark.parametrize(
    "banner, message",
    [
        (None, "nothing answered at {} within 0.5 s as a Dask scheduler does"),
        (b"SSH-2.0-OpenSSH_9.2\r\n", "what answers at {} is not a Dask scheduler"),
    ],
)
def test_a_scheduler_address_where_something_else_listens_ends_in_bounded_time(
    partitions, capsys, monkeypatch, banner, message
):
    """An HTTP server (it waits for a request) or another protocol at --scheduler's
    address: one clear line within the timeout, not a hang."""
    pytest.importorskip("distributed")
    monkeypatch.setattr("skassess.cli._assess.SCHEDULER_TIMEOUT", 0.5)
    paths, _ = partitions
    listener = _Listener(banner)
    try:
        argv = ["assess", str(paths[0].parent / "part-*.parquet"), "--label-column", "label"]
        assert main([*argv, "--scheduler", listener.address]) == 2
    finally:
        listener.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message.format(listener.address) in err, err


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_partition_with_a_header_and_no_rows_adds_nothing(partitions, tmp_path, capsys, suffix):
    """Spark and other writers leave 0-row files among the partitions."""
    paths, whole = partitions
    folder = tmp_path / f"with-empty-{suffix}"
    folder.mkdir()

    def write(frame, path):
        if suffix == "csv":
            frame.to_csv(path, index=False)
        else:
            frame.to_parquet(path, index=False)

    frames = [pd.read_parquet(p) for p in paths]
    frames.insert(1, frames[0].iloc[:0])
    for i, f in enumerate(frames):
        write(f, folder / f"part-{i}.{suffix}")
    args = ["--label-column", "label", "--id-column", "id", "--group", "region", "--quiet"]
    out = tmp_path / f"{suffix}.json"
    assert main(["assess", str(folder / f"part-*.{suffix}"), *args, "--json", str(out)]) == 0
    assert main(["assess", str(whole), *args, "--json", str(tmp_path / "w.json")]) == 0
    import json

    p, w = (json.loads(f.read_text()) for f in (out, tmp_path / "w.json"))
    assert p["source"]["rows"] == 950 and p["source"]["partitions"] == 4
    pd.testing.assert_frame_equal(pd.DataFrame(p["overall"]), pd.DataFrame(w["overall"]), rtol=1e-8)
    # every partition empty: one line that says so
    for f in folder.iterdir():
        write(frames[0].iloc[:0], f)
    capsys.readouterr()
    assert main(["assess", str(folder / f"part-*.{suffix}"), *args]) == 2
    assert "have a header but no rows" in capsys.readouterr().err


def _to_memory(paths, folder):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    for p in paths:
        fs.pipe(f"/{folder}/{p.name}", p.read_bytes())
    return f"memory://{folder}"


def test_the_command_reads_urls_through_fsspec(partitions, tmp_path, capsys):
    """memory:// (an fsspec filesystem in this process) and file:// URLs, one file or a glob,
    give the assessment of the local files."""
    import json

    paths, whole = partitions
    args = ["--label-column", "label", "--id-column", "id", "--group", "region", "--quiet"]
    root = _to_memory([*paths, whole], "skassess-test")
    runs = {
        "local": str(whole),
        "memory file": f"{root}/whole.parquet",
        "memory glob": f"{root}/part-*.parquet",
        "file glob": paths[0].parent.resolve().as_uri() + "/part-*.parquet",
    }
    found = {}
    for name, scores in runs.items():
        out = tmp_path / f"{name}.json"
        assert main(["assess", scores, *args, "--json", str(out)]) == 0, capsys.readouterr().err
        found[name] = json.loads(out.read_text())
        assert found[name]["source"]["rows"] == 950
    for name in runs:
        pd.testing.assert_frame_equal(
            pd.DataFrame(found[name]["overall"]),
            pd.DataFrame(found["local"]["overall"]),
            rtol=1e-8,
        )
    assert main(["assess", f"{root}/none-*.parquet", *args]) == 2
    assert "no file matches" in capsys.readouterr().err
    assert main(["assess", "nosuchprotocol://bucket/x.parquet", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nosuchprotocol://bucket/x.parquet" in err


def test_urls_on_a_cluster(partitions, dask_client, capsys):
    """The workers open the files themselves, through the URL's filesystem."""
    paths, whole = partitions
    url = paths[0].parent.resolve().as_uri() + "/part-*.parquet"
    from skassess.utils._locations import expand_glob

    urls = expand_glob(url)
    assert [u.rsplit("/", 1)[1] for u in urls] == [p.name for p in paths]
    parts = assess_partitions(urls, client=dask_client, **OPTIONS)
    _assert_same(parts, assess_file(whole, **OPTIONS))


@pytest.mark.slow
def test_a_failed_partition_on_local_workers_is_one_line(partitions, tmp_path):
    """No Dask "Compute Failed" log before the error, no shutdown warnings after it."""
    import subprocess
    import sys

    paths, _ = partitions
    f = pd.read_parquet(paths[1])
    f.loc[3, "score_a"] = np.nan
    f.to_parquet(paths[1], index=False)
    pattern = str(paths[0].parent / "part-*.parquet")
    done = subprocess.run(
        [sys.executable, "-m", "skassess", "assess", pattern, "--quiet", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "part-1.parquet: row 4" in done.stderr, done.stderr
