"""The screenshot of the HTML report in the docs (docs/_static/report.png).

Runs the README's example (a 60-label least-accurate session with the example
oracle), writes the report and renders it in headless Chromium; with
``--widths`` also at those window widths into ``--directory``
(``report-<width>.png``), e.g. a wide screen and a phone:

    python benchmarks/make_report_screenshot.py
    python benchmarks/make_report_screenshot.py --widths 1280 390 --directory shots
"""

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

from skassess.cli import main as skassess

OUT = Path(__file__).resolve().parents[1] / "docs" / "_static" / "report.png"


def shoot(browser, page, out, width, height):
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            f"--screenshot={out}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
    )
    if not out.exists():
        raise SystemExit(f"Chromium wrote no screenshot to {out}")
    print(f"wrote {out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="*", default=[])
    parser.add_argument("--directory", default=".")
    args = parser.parse_args()
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
        page = tmp / "report.html"
        shoot(browser, page, OUT, 1100, 4600)
        Path(args.directory).mkdir(parents=True, exist_ok=True)
        for width in args.widths:
            out = Path(args.directory) / f"report-{width}.png"
            shoot(browser, page, out, width, 5200 if width < 600 else 4000)


if __name__ == "__main__":
    main()
