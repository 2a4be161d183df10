"""No module uses another class's or module's private names, beyond what the conventions allow.

The rules are those of ``docs/conventions.rst`` ("Private names"):

* a leading underscore on a module (``_setup.py``) makes the module internal
  to the package; its names without an underscore are the package's shared
  internals and may be imported by any of its modules;
* a name with a leading underscore is private to its module, or to its class,
  except that a module may import a private base class it subclasses
  (``_BaseAssessor``), and a class may read a base class's
  ``_parameter_constraints`` (scikit-learn's idiom for extending them);
* a class may use its own private names on any instance of itself (``other._data``
  in a ``concat`` classmethod);
* a subpackage's private modules are imported by that subpackage only (others
  go through its ``__init__``), except ``skassess.utils``'s, the package's shared
  internals;
* scikit-learn's private names are imported in ``utils/_sklearn_compat.py`` only.

Run as a script, it prints every use the rules refuse (none is the expected output):
``python tests/test_private_names.py``.
"""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "skassess"


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _own_names(cls):
    """Names a class defines: its methods, class attributes and ``self.<name>`` assignments."""
    names = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _base_names(tree):
    return {
        base.id
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for base in node.bases
        if isinstance(base, ast.Name)
    }


class _Scanner(ast.NodeVisitor):
    def __init__(self, path, tree):
        self.path, self.found, self.classes = path, [], []
        self.bases = _base_names(tree)

    def visit_ClassDef(self, node):
        self.classes.append(_own_names(node))
        self.generic_visit(node)
        self.classes.pop()

    def visit_ImportFrom(self, node):
        module = node.module or ""
        parts = module.split(".")
        if node.level >= 2 and len(parts) >= 2 and parts[0] != "utils" and _private(parts[1]):
            # another subpackage's private module: its public __init__ is the way in
            self.found.append((node.lineno, f"from {'.' * node.level}{module} import ..."))
        if module.startswith("sklearn") and self.path.name != "_sklearn_compat.py":
            if any(_private(part) for part in module.split(".")) or any(
                _private(a.name) for a in node.names
            ):
                self.found.append((node.lineno, f"from {module} import ..."))
        for alias in node.names:
            if _private(alias.name) and node.level > 0:
                is_module = alias.name.startswith("_") and module == ""
                if not is_module and alias.name not in self.bases:
                    self.found.append((node.lineno, f"import {alias.name}"))

    def visit_Attribute(self, node):
        if _private(node.attr):
            value = node.value
            own = isinstance(value, ast.Name) and value.id in ("self", "cls")
            own |= isinstance(value, ast.Call) and getattr(value.func, "id", "") in (
                "super",
                "type",
            )
            own |= any(node.attr in names for names in self.classes)
            constraints = node.attr == "_parameter_constraints"
            if not (own or constraints):
                self.found.append((node.lineno, f"{ast.unparse(value)}.{node.attr}"))
        self.generic_visit(node)


def private_uses():
    """``(file, line, use)`` of every private name the rules refuse."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scanner = _Scanner(path, tree)
        scanner.visit(tree)
        rel = path.relative_to(PACKAGE.parent)
        out += [(str(rel), line, use) for line, use in scanner.found]
    return out


def test_no_private_name_of_another_class_or_module():
    assert private_uses() == []


def test_the_scanner_finds_what_it_must_refuse(tmp_path):
    source = (
        "from ._x import _helper\n"
        "from ..meta._quantile_model import LEVELS\n"
        "from sklearn.utils._param_validation import Interval\n"
        "class A:\n"
        "    def f(self, other):\n"
        "        return other._rows(), self._mine\n"
    )
    tree = ast.parse(source)
    scanner = _Scanner(tmp_path / "mod.py", tree)
    scanner.visit(tree)
    assert [use for _, use in scanner.found] == [
        "import _helper",
        "from ..meta._quantile_model import ...",
        "from sklearn.utils._param_validation import ...",
        "other._rows",
    ]


def test_the_scanner_allows_what_the_conventions_allow(tmp_path):
    source = (
        "from . import _assess\n"
        "from ..utils._sklearn_compat import Interval\n"
        "from ._base import _Base\n"
        "class B(_Base):\n"
        "    _parameter_constraints = {**_Base._parameter_constraints}\n"
        "    def __init__(self):\n"
        "        self._data = 1\n"
        "    @classmethod\n"
        "    def concat(cls, parts):\n"
        "        return [p._data for p in parts], super()._x, type(parts)._y\n"
    )
    tree = ast.parse(source)
    scanner = _Scanner(tmp_path / "mod.py", tree)
    scanner.visit(tree)
    assert scanner.found == []


if __name__ == "__main__":
    for use in private_uses():
        print(*use, sep=":")
