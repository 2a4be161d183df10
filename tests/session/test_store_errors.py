"""A session path that is not a regular file, and a disk that refuses a write, end in one line."""

import os
import re
import resource
import subprocess
import sys

import pytest

from skassess.cli import main
from skassess.exceptions import SessionError
from skassess.session import LabelingSession
from skassess.session._store import SessionStore


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("store")
    assert main(["example", "--directory", str(tmp)]) == 0
    return tmp, tmp / "example_scores.csv", tmp / "example_labels.csv"


def _special_paths(tmp):
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    (tmp / "to-fifo").symlink_to(fifo)
    (tmp / "to-null").symlink_to("/dev/null")
    (tmp / "dangling").symlink_to(tmp / "nowhere" / "s.sqlite")
    (tmp / "folder").mkdir()
    return {
        "fifo": "a FIFO (named pipe), not a session file",
        "to-fifo": "a FIFO (named pipe) (through a symbolic link)",
        "to-null": "a character device (through a symbolic link)",
        "dangling": "a symbolic link to ",
        "folder": "a folder, not a session file",
    }


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_session_path_that_is_not_a_file_is_named(example, tmp_path, capsys):
    _, scores, labels = example
    for name, message in _special_paths(tmp_path).items():
        path = tmp_path / name
        for read_only in (False, True):
            with pytest.raises(SessionError, match="not a session file|does not exist") as err:
                SessionStore(path, read_only=read_only)
            assert message in str(err.value) and "I/O" not in str(err.value)
        capsys.readouterr()
        argv = ["label", str(scores), "--session", str(path), "--oracle", str(labels)]
        assert main([*argv, "--budget", "3", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("skassess label: error: ") and err.count("\n") == 1
        assert message in err
        assert main(["export", str(path)]) == 2
        assert message in capsys.readouterr().err
    # a link to a regular session file is that file
    session = tmp_path / "real.sqlite"
    argv = ["label", str(scores), "--session", str(session), "--oracle", str(labels)]
    assert main([*argv, "--budget", "3", "--no-progress"]) == 0
    (tmp_path / "link.sqlite").symlink_to(session)
    assert main(["export", str(tmp_path / "link.sqlite")]) == 0


def _limit(size):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return apply


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as on Linux")
def test_a_full_disk_ends_in_one_line_and_keeps_the_labels(example, tmp_path, capsys):
    """A write past the file-size limit (``ulimit -f``, as a full disk) is one line (exit 2),
    and every label committed before it stays; the same command then resumes."""
    _, scores, labels = example
    session = tmp_path / "s.sqlite"
    argv = ["label", str(scores), "--session", str(session), "--oracle", str(labels)]
    argv += ["--no-progress", "--seed", "2"]
    assert main([*argv, "--budget", "5"]) == 0
    # the main file and the WAL grow by a page every few commits: one soon passes the limit
    size = max(session.stat().st_size, 32 * 1024) + 8 * 1024
    done = subprocess.run(
        [sys.executable, "-m", "skassess", *argv, "--budget", "2000"],
        capture_output=True,
        text=True,
        preexec_fn=_limit(size),
        timeout=600,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    err = done.stderr
    assert err.startswith("skassess label: error: ") and err.count("\n") == 1, err
    assert "was not recorded" in err and "Traceback" not in err
    kept = LabelingSession.read_events(session)[0]
    n = int(re.search(r"the (\d+) events before it are kept", err).group(1))
    assert len(kept) == n and n >= 5
    # resumes where it stopped, with every label kept
    capsys.readouterr()
    assert main([*argv, "--budget", str(n + 3)]) == 0
    after = LabelingSession.read_events(session)[0]
    assert after.iloc[:n].equals(kept) and len(after) == n + 3
