"""The screenshot of the HTML report in the docs (docs/_static/report.png).

Runs the README's example (a 60-label least-accurate session with the example
oracle), writes the report and renders it in headless Chromium.

    python benchmarks/make_report_screenshot.py
"""

import shutil
import subprocess
import tempfile
from pathlib import Path

from skassess.cli import main as skassess

OUT = Path(__file__).resolve().parents[1] / "docs" / "_static" / "report.png"


def main():
    browser = shutil.which("chromium") or shutil.which("google-chrome")
    if browser is None:
        raise SystemExit("needs Chromium (Debian: apt install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        skassess(["example", "--directory", str(tmp)])
        skassess(
            [
                "label",
                str(tmp / "example_scores.csv"),
                "--session",
                str(tmp / "s.sqlite"),
                "--task",
                "least_accurate",
                "--seed",
                "0",
                "--budget",
                "60",
                "--oracle",
                str(tmp / "example_labels.csv"),
                "--no-progress",
                "--report",
                str(tmp / "report.html"),
            ]
        )
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--window-size=1100,4600",
                f"--screenshot={OUT}",
                (tmp / "report.html").as_uri(),
            ],
            check=True,
            capture_output=True,
        )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
