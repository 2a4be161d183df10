"""The command's arguments are checked before anything heavy is imported."""

import subprocess
import sys

import pytest

from skassess.cli import _arguments


def test_the_literal_choices_are_the_librarys():
    from skassess.cli._demo import PRIORS
    from skassess.samplers import STRATEGY_NAMES, TASKS
    from skassess.session import META_METHODS

    assert _arguments.META_METHODS == META_METHODS
    assert _arguments.STRATEGY_NAMES == STRATEGY_NAMES
    assert _arguments.LABEL_TASKS == (*TASKS, "compare_models")
    assert _arguments.PRIOR_CHOICES == tuple(PRIORS)


def test_every_command_has_a_module_that_runs_it():
    import importlib

    for name in _arguments.COMMANDS:
        assert callable(importlib.import_module(f"skassess.cli._{name.replace('-', '_')}").run), (
            name
        )


@pytest.mark.parametrize(
    "argv",
    [["assess", "--bogus", "x.csv"], ["label", "x.csv", "--task", "nonsense"], ["--help"]],
)
def test_a_mistyped_flag_is_answered_before_the_heavy_imports(argv):
    code = (
        "import sys\n"
        "from skassess.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "heavy = sorted(m for m in ('numpy', 'pandas', 'scipy', 'sklearn') if m in sys.modules)\n"
        "print('HEAVY', heavy, 'CODE', code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "HEAVY [] CODE" in done.stdout, done.stdout + done.stderr
    assert done.stdout.strip().endswith("CODE 0" if argv == ["--help"] else "CODE 2")
