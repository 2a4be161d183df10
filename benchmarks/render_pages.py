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
BLOCK = re.compile(r"(<!-- result: ([\w.-]+)(?::(\w+))? -->\n)(.*?)(<!-- end result -->)", re.S)


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


README = PAGES.parents[1] / "README.md"
FIRST = PAGES.parent / "user_guide" / "first_assessment.md"
INTERVALS = PAGES.parent / "user_guide" / "intervals.md"


def pages():
    return [*sorted(PAGES.glob("*.md")), README, FIRST, INTERVALS]


def headline_summary(name):
    """The README's small table: over the headline's pools, per budget."""
    import statistics

    record = load(name)
    col = {c: i for i, c in enumerate(record["columns"])}
    lines = [
        "| labels | coverage: mean (lowest) | PPI++'s coverage: mean (lowest) "
        "| width ÷ PPI++'s: median | width ÷ Wilson's: median |",
        "|---|---|---|---|---|",
    ]
    for n in sorted({row[col["n"]] for row in record["rows"]}):
        rows = [row for row in record["rows"] if row[col["n"]] == n]

        def pick(c, rows=rows):
            return [row[col[c]] for row in rows]

        cov, ppi = pick("coverage: calibrated"), pick("PPI++")
        lines.append(
            f"| {n} | {statistics.mean(cov):.3f} ({min(cov):.3f}) "
            f"| {statistics.mean(ppi):.3f} ({min(ppi):.3f}) "
            f"| {statistics.median(pick('width / PPI++')):.2f} "
            f"| {statistics.median(pick('width / Wilson')):.2f} |"
        )
    pools = len({row[col["pool"]] for row in record["rows"]})
    return (
        "\n".join(lines)
        + f"\n\n{pools} pools, {record['rows'][0][col['runs']]} runs a cell: "
        + f"`{record['command']}` at commit `{record['commit']}`.\n"
    )


def intervals_table(name):
    """The user guide's table of how far each interval holds (many result files)."""
    from _coverage_summary import ROWS, table

    return table(ROWS)


#: Blocks rendered by a function of a result file (``<!-- result: NAME:VIEW -->``).
VIEWS = {"summary": headline_summary}
#: Blocks rendered from many result files (``<!-- result: NAME:table -->``); a missing
#: file raises FileNotFoundError with its name.
TABLES = {"intervals": intervals_table}


def rendered(text):
    """The page's text with every block rendered; and the names whose file is missing."""
    missing = []

    def one(match):
        name, view = match.group(2), match.group(3)
        if view == "table":
            try:
                return match.group(1) + TABLES[name](name) + match.group(5)
            except FileNotFoundError as missing_file:
                missing.append(str(missing_file))
                return match.group(0)
        if not (RESULTS / f"{name}.json").exists():
            missing.append(name)
            return match.group(0)
        text = VIEWS[view](name) if view else render(name)
        return match.group(1) + text + match.group(5)

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
