"""Every public class links to its section of the user guide, and every link resolves."""

import inspect
import re
from pathlib import Path

import pytest

import skassess.calibration
import skassess.meta
import skassess.meta.drift
import skassess.metrics
import skassess.samplers
import skassess.session

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "user_guide"
LINK = re.compile(r":ref:`User Guide <(ug_[a-z_]+)>`")


def _labels():
    return {
        m.group(1)
        for page in GUIDE.glob("*.rst")
        for m in re.finditer(r"^\.\. _(ug_[a-z_]+):$", page.read_text(encoding="utf-8"), re.M)
    }


def _public_classes():
    modules = (
        skassess.metrics,
        skassess.samplers,
        skassess.calibration,
        skassess.meta,
        skassess.meta.drift,
        skassess.session,
    )
    for module in modules:
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                yield pytest.param(obj, id=f"{module.__name__}.{name}")


@pytest.mark.parametrize("cls", list(_public_classes()))
def test_class_docstring_links_to_its_user_guide_section(cls):
    if cls.__name__ == "ScoresTable":  # a plain record returned by ScoresFile.read
        pytest.skip("ScoresTable is documented with ScoresFile")
    links = LINK.findall(cls.__doc__ or "")
    assert links, f"{cls.__name__}'s docstring has no 'Read more in the User Guide' link"
    assert set(links) <= _labels(), f"{cls.__name__} links to a missing section: {links}"
