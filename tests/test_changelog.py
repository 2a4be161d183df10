"""The release history has a section for the version the package says it is."""

import re
from pathlib import Path

from packaging.version import Version

import skassess

CHANGELOG = Path(__file__).resolve().parents[1] / "docs" / "whats_new.rst"


def _sections():
    """(version, date or "in development") of each section, newest first."""
    text = CHANGELOG.read_text(encoding="utf-8")
    return re.findall(r"^Version (\S+) \(([^)]+)\)\n-+$", text, flags=re.MULTILINE)


def test_the_installed_version_has_its_section():
    version = Version(skassess.__version__)
    sections = dict(_sections())
    assert version.base_version in sections, (version, list(sections))
    when = sections[version.base_version]
    if version.is_devrelease:
        assert when == "in development"
    else:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", when), when


def test_sections_are_newest_first_and_released_ones_are_dated():
    sections = _sections()
    assert sections
    versions = [Version(v) for v, _ in sections]
    assert versions == sorted(versions, reverse=True)
    for _, when in sections[1:]:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", when), when
