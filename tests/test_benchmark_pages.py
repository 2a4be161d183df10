"""Every table of the benchmark pages is rendered from its result file, as committed."""

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _render_pages():
    spec = importlib.util.spec_from_file_location(
        "render_pages", ROOT / "benchmarks" / "render_pages.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_table_matches_its_result_file(capsys):
    render = _render_pages()
    assert render.pages(), "no benchmark page found"
    code = render.main(["--check"])
    assert code == 0, capsys.readouterr().err


def test_a_table_without_its_result_file_is_reported():
    render = _render_pages()
    text = "intro\n<!-- result: no-such-result -->\n| old |\n<!-- end result -->\n"
    new, missing = render.rendered(text)
    assert missing == ["no-such-result"] and new == text


def test_every_result_file_is_shown_on_a_page():
    render = _render_pages()
    shown = set()
    for page in render.pages():
        shown |= {m.group(2) for m in render.BLOCK.finditer(page.read_text(encoding="utf-8"))}
    files = {p.stem for p in (ROOT / "benchmarks" / "results").glob("*.json")}
    assert files <= shown, sorted(files - shown)
