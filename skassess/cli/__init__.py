"""The ``skassess`` command: demo, example, assess, label, export, report, migrate."""

import argparse
import sys

from ..exceptions import ScoresFileError, SessionError
from . import _assess, _demo, _example, _export, _label, _migrate, _report

__all__ = ["main"]


def _parser():
    parser = argparse.ArgumentParser(
        prog="skassess", description="Bayesian assessment of black-box classifiers."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (_demo, _example, _assess, _label, _export, _report, _migrate):
        module.add_parser(sub)
    return parser


def main(argv=None):
    """Run the ``skassess`` command line; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except (ScoresFileError, SessionError, ValueError, ImportError, OSError) as exc:
        # Problems with the user's files and settings: one clear line, no traceback.
        print(f"skassess {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nskassess {args.command}: interrupted.", file=sys.stderr)
        return 130
