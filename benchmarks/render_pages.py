"""Render the benchmark pages' tables from the result files.

Each table on a page of ``docs/benchmarks/`` sits between two markers::

    <!-- result: NAME -->
    ... (written by this script) ...
    <!-- end result -->

and is rendered from ``benchmarks/results/NAME.json`` (``_results.save``): the
table, then the command that made it and the commit it measured.

    python benchmarks/render_pages.py           # rewrite the pages
    python benchmarks/render_pages.py --check   # exit 1 if a page is stale or a file missing
"""

import argparse
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from _results import RESULTS, load  # noqa: E402

PAGES = pathlib.Path(__file__).resolve().parents[1] / "docs" / "benchmarks"
BLOCK = re.compile(r"(<!-- result: ([\w.-]+) -->\n)(.*?)(<!-- end result -->)", re.S)


def cell(value, spec):
    if value is None:
        return "--"
    if spec and isinstance(value, int | float) and not isinstance(value, bool):
        return format(value, spec)
    return str(value)


def render(name):
    """The markdown of one result file: its table, its command and commit."""
    record = load(name)
    columns, formats = record["columns"], record.get("formats", {})
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in record["rows"]:
        values = (cell(v, formats.get(c)) for c, v in zip(columns, row, strict=True))
        lines.append("| " + " | ".join(values) + " |")
    caption = record.get("caption")
    tail = f"\n{caption}\n" if caption else ""
    return (
        "\n".join(lines)
        + "\n"
        + tail
        + f"\n`{record['command']}` at commit `{record['commit']}`.\n"
    )


def pages():
    return sorted(PAGES.glob("*.md"))


def rendered(text):
    """The page's text with every block rendered; and the names whose file is missing."""
    missing = []

    def one(match):
        name = match.group(2)
        if not (RESULTS / f"{name}.json").exists():
            missing.append(name)
            return match.group(0)
        return match.group(1) + render(name) + match.group(4)

    return BLOCK.sub(one, text), missing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    args = ap.parse_args(argv)
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new, missing = rendered(text)
        stale += [f"{page.name}: no result file for {name!r}" for name in missing]
        if new != text:
            if args.check:
                stale.append(f"{page.name}: a table differs from its result file")
            else:
                page.write_text(new, encoding="utf-8")
                print(f"rendered {page}")
    for line in stale:
        print(line, file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
