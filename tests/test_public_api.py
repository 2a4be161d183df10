"""The public API is what ``docs/api.rst`` lists; helpers 0.1 exported warn until 0.3."""

import importlib
import pathlib
import re

import pytest

SUBPACKAGES = ("metrics", "samplers", "calibration", "meta", "session", "datasets", "utils")
API = pathlib.Path(__file__).resolve().parents[1] / "docs" / "api.rst"


def _listed():
    """``(module, name)`` of every entry of the API reference's autosummaries."""
    out, module = set(), None
    for line in API.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            module = m.group(1)
        elif m := re.match(r"   ([A-Za-z_]\w*)$", line):
            out.add((module, m.group(1)))
    return out


def test_every_exported_name_is_in_the_api_reference_and_back():
    exported = {("skassess", n) for n in importlib.import_module("skassess").__all__}
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"skassess.{sub}")
        exported |= {(module.__name__, n) for n in module.__all__}
    exported.discard(("skassess", "__version__"))
    exported.discard(("skassess.meta", "drift"))  # a module: its classes are listed
    for constant in (
        ("skassess.metrics", "RATES"),
        ("skassess.meta", "LEVELS"),
        ("skassess.session", "META_METHODS"),
    ):
        exported.discard(constant)  # named in the page's opening paragraph
    listed = _listed()
    # the top-level estimators are documented once, under skassess
    missing = {
        (m, n) for m, n in exported - listed if ("skassess", n) not in listed and m != "skassess"
    }
    missing |= {(m, n) for m, n in exported - listed if m == "skassess"}
    assert not missing, sorted(missing)
    unknown = {(m, n) for m, n in listed if (m, n) not in exported}
    unknown = {
        (m, n)
        for m, n in unknown
        if not m.startswith(
            ("skassess.utils.discovery", "skassess.meta.drift", "skassess.exceptions")
        )
    }
    assert not unknown, sorted(unknown)


def _private_helpers():
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"skassess.{sub}")
        for name in sorted(getattr(getattr(module, "__getattr__", None), "private", ())):
            yield pytest.param(module, name, id=f"{sub}.{name}")


@pytest.mark.parametrize(("module", "name"), list(_private_helpers()))
def test_a_helper_no_longer_exported_warns_and_still_works(module, name):
    with pytest.warns(FutureWarning, match=rf"{module.__name__}\.{name} is deprecated since 0\.2"):
        obj = getattr(module, name)
    assert obj is not None
    assert name not in module.__all__


def test_an_unknown_name_is_an_attribute_error_naming_it():
    import skassess.metrics

    with pytest.raises(AttributeError, match="'skassess.metrics' has no attribute 'nope'"):
        skassess.metrics.nope  # noqa: B018
