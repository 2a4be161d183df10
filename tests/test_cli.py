import subprocess
import sys

import pytest

from skassess.cli import main


def test_demo_prints_posterior_and_writes_png(tmp_path, capsys):
    out = tmp_path / "rel.png"
    assert main(["demo", "--output", str(out), "--n-labels", "150"]) == 0
    text = capsys.readouterr().out
    assert "Accuracy per group" in text and "95% interval" in text and "ECE" in text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_adult(tmp_path, capsys):
    assert main(["demo", "--dataset", "adult", "--output", str(tmp_path / "a.png")]) == 0
    assert "White - non-White" in capsys.readouterr().out


def test_demo_bad_n_labels(tmp_path):
    with pytest.raises(SystemExit, match="--n-labels must be in"):
        main(["demo", "--n-labels", "-3", "--output", str(tmp_path / "x.png")])


def test_python_dash_m(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "skassess", "demo", "--output", str(tmp_path / "m.png")],
        capture_output=True, text=True, check=True,
    )
    assert "Wrote the reliability diagram" in proc.stdout
