"""The ``skassess`` command and its subcommands (one module each)."""

import contextlib
import importlib
import sys

from .. import __version__

__all__ = ["main"]


def main(argv=None):
    """Run the ``skassess`` command line; returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # answered before the estimators are imported
        print(f"skassess {__version__}")
        return 0
    from ._arguments import build_parser

    # The arguments are checked before the estimators are imported: a mistyped flag
    # is answered at once.
    args = build_parser().parse_args(argv)
    from ..exceptions import ScoresFileError, SessionError
    from ..utils._text import terminal_text

    try:
        # Names from the user's files are printed as text, never as terminal controls.
        with contextlib.redirect_stdout(_TerminalWriter(sys.stdout)):
            command = importlib.import_module(f"{__name__}._{args.command.replace('-', '_')}")
            return command.run(args)
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
