"""scikit-learn's private names reach skassess through one module only."""

import ast
from pathlib import Path

import skassess
from skassess.utils import _sklearn_compat

PACKAGE = Path(skassess.__file__).parent


def test_every_name_resolves():
    for name in _sklearn_compat.__all__:
        assert getattr(_sklearn_compat, name) is not None


def _private_sklearn_imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] == "sklearn":
                private = [p for p in parts[1:] if p.startswith("_")]
                private += [a.name for a in node.names if a.name.startswith("_")]
                if private:
                    found.append((node.lineno, node.module, private))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "sklearn" and any(p.startswith("_") for p in parts[1:]):
                    found.append((node.lineno, alias.name, parts))
    return found


def test_no_other_module_imports_sklearn_private_names():
    offenders = {
        str(path.relative_to(PACKAGE)): hits
        for path in PACKAGE.rglob("*.py")
        if path.name != "_sklearn_compat.py" and (hits := _private_sklearn_imports(path))
    }
    assert offenders == {}


def test_the_scan_finds_a_private_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from sklearn.utils._param_validation import Interval\n"
        "from sklearn.utils.validation import _check_sample_weight\n"
    )
    assert [hit[0] for hit in _private_sklearn_imports(bad)] == [1, 2]
