"""The ``skassess`` command and its subcommands (one module each)."""

import argparse
import contextlib
import sys

from .. import __version__

__all__ = ["main"]


def _parser():
    from . import _assess, _demo, _example, _export, _label, _migrate, _monitor, _plan, _report

    parser = argparse.ArgumentParser(
        prog="skassess", description="Bayesian assessment of black-box classifiers."
    )
    parser.add_argument("--version", action="version", version=f"skassess {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (_demo, _example, _assess, _plan, _label, _monitor, _export, _report, _migrate):
        module.add_parser(sub)
    return parser


def main(argv=None):
    """Run the ``skassess`` command line; returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # answered before the estimators are imported
        print(f"skassess {__version__}")
        return 0
    from ..exceptions import ScoresFileError, SessionError
    from ..utils._text import terminal_text

    args = _parser().parse_args(argv)
    try:
        # Names from the user's files are printed as text, never as terminal controls.
        with contextlib.redirect_stdout(_TerminalWriter(sys.stdout)):
            return args.func(args)
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except (ScoresFileError, SessionError, ValueError, ImportError, OSError) as exc:
        # Problems with the user's files and settings: one clear line, no traceback.
        message = terminal_text(exc).replace("\n", " ")
        print(f"skassess {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nskassess {args.command}: interrupted.", file=sys.stderr)
        return 130


class _TerminalWriter:
    """Standard output with control characters shown as codes (see terminal_text)."""

    def __init__(self, stream):
        from ..utils._text import terminal_text

        self._stream = stream
        self._text = terminal_text

    def write(self, text):
        return self._stream.write(self._text(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)
