import pytest

from skassess.utils._docstrings import PARAMETERS, fill_doc
from skassess.utils.discovery import all_estimators


def test_no_placeholder_is_left_in_a_public_docstring():
    for name, cls in all_estimators():
        assert "{{" not in (cls.__doc__ or ""), name


def test_a_shared_entry_is_indented_like_its_placeholder():
    @fill_doc
    class A:
        """A.

        Parameters
        ----------
        {{missing_label}}
        """

    lines = A.__doc__.splitlines()
    start = lines.index("        " + PARAMETERS["missing_label"].splitlines()[0])
    assert lines[start + 1].startswith("            The value of ``y``")


def test_an_unknown_placeholder_fails_at_import_time():
    with pytest.raises(KeyError, match="nope"):

        @fill_doc
        def f():
            """F.

            {{nope}}
            """
