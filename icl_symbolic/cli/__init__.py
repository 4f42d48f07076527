"""The ``icl-symbolic`` command line: a thin layer over the library.

Each sub-command lives in its own module of this package, named after the
command (``appendix-a`` -> ``appendix_a.py``), and exposes
``register(subparsers)``, which adds the command's parser and sets ``func`` to
the module's ``run(args) -> int``.  :data:`COMMANDS` below is the one table of
commands, in the order ``--help`` lists them; adding a command is one module
and one entry there.  No mathematics lives here: sub-commands parse, call the
library, and format.

Start-up cost: a command module imports the library it needs (SymPy, SciPy,
the simulator, the verification machinery), so :func:`main` imports only the
module of the command being run (:func:`build_parser` with ``only``); the
top-level ``--help`` and an unknown command import them all.

Plots: the library builds matplotlib figures without ``pyplot``
(:mod:`icl_symbolic.output.plotting`); :func:`main` selects the non-interactive Agg
backend once, for the whole command line, so a command never opens a window.

Error policy: any :class:`~icl_symbolic.core.errors.ICLError` (and argument errors)
ends the command with ONE line ``icl-symbolic: error: ...`` on stderr and exit
status 2; an interrupt exits 130.  Output files are written atomically
(:mod:`icl_symbolic.output.io`), so failures never leave partial files.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import signal
import sys
import textwrap
import threading

from icl_symbolic._version import __version__
from icl_symbolic.cli._args import max_seconds, rewrite_legacy
from icl_symbolic.core.cost import budget
from icl_symbolic.core.errors import ICLError
from icl_symbolic.output.io import check_output_path, transaction

PROG = "icl-symbolic"

#: command name -> module of this package with ``register(subparsers)`` and ``run(args)``.
COMMANDS = {
    "coeffs": "coeffs",
    "dual": "dual",
    "moments": "moments",
    "appendix-a": "appendix_a",
    "theory": "theory",
    "kernel": "kernel",
    "simulate": "simulate",
    "extrapolate": "extrapolate",
    "reproduce": "reproduce",
    "figure": "figure",
    "verify": "verify",
    "diagnose": "diagnose",
}


def command_module(name: str):
    """The module implementing command ``name`` (imported on first use)."""
    return importlib.import_module(f".{COMMANDS[name]}", __name__)


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps each line of a description or epilog separately (so exit statuses and
    examples keep their lines) and states every option's default in its help line."""

    def _fill_text(self, text, width, indent):
        return "\n".join(
            indent + line
            if line.startswith(f"  {PROG} ")  # an example: never wrapped
            else textwrap.fill(
                line,
                width,
                initial_indent=indent + line[: len(line) - len(line.lstrip())],
                subsequent_indent=indent + "    ",
            )
            if line.strip()
            else ""
            for line in text.splitlines()
        )

    def _get_help_string(self, action):
        text = action.help or ""
        d = action.default
        if d is None or d is False or d is argparse.SUPPRESS or not action.option_strings or "default" in text:
            return text
        return f"{text} (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line, not usage + message, and whose help
    states defaults (:class:`_HelpFormatter`)."""

    def __init__(self, *args, **kwargs):
        kwargs["formatter_class"] = _HelpFormatter
        super().__init__(*args, **kwargs)

    def error(self, message):  # pragma: no cover - exercised through main()
        raise ICLError(f"{self.prog.split()[-1] if ' ' in self.prog else 'arguments'}: {message}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; ``only`` (a command name) registers that command alone (a cheaper
    start-up: see the module docstring), ``None`` all of them."""
    parser = _Parser(
        prog=PROG,
        description="Check the mathematics of arXiv:2610.10761 "
        "(linear attention, nonlinear teachers, in-context learning).",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in [only] if only in COMMANDS else COMMANDS:
        command_module(name).register(sub)
    return parser


#: options that name an output file (checked before any computation); figure's --out is a folder
FILE_OPTIONS = ("plot", "csv", "json", "json_out", "report", "out")


def check_output_options(args) -> None:
    """One-line error for an unusable output path (directory, missing folder, unwritable,
    FIFO or device), before the command computes anything."""
    folders = getattr(args, "folder_options", ())
    for dest in FILE_OPTIONS:
        value = getattr(args, dest, None)
        if isinstance(value, str) and value != "-" and dest not in folders:
            check_output_path(value, "--" + dest.replace("_", "-"))


def did_you_mean(word: str, choices) -> str:
    """`` (did you mean --rho?)`` for a misspelt ``word`` close to one of ``choices`` (difflib), else ''."""
    close = difflib.get_close_matches(word.split("=", 1)[0], list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _unrecognized(parser, args, extra) -> ICLError:
    """The one-line error for options the command does not have, with a suggestion."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[args.command]
    options = [o for a in sub._actions for o in a.option_strings]
    word = next((w for w in extra if w.startswith("-")), extra[0])
    return ICLError(f"{args.command}: unrecognized arguments: {' '.join(extra)}{did_you_mean(word, options)}")


def _sigterm(signum, frame):
    raise KeyboardInterrupt  # same clean-up as Ctrl-C: temporary files removed, nothing half-written


def _clear_interrupt_mark() -> None:
    """Undo CPython's "ended by Ctrl-C" mark after main() has handled the interrupt.

    When a KeyboardInterrupt leaves code run by ``exec()`` of a string (SymPy's lambdify,
    dataclass and namedtuple builders do that), CPython sets that mark even if
    the caller catches the exception (seen with CPython 3.11); under ``python -m icl_symbolic`` the interpreter
    then ends itself with SIGINT (return code -2) instead of exiting 130.  Every run of
    a string through ``exec()`` resets the mark first, so running a constant clears it.
    """
    exec("None")  # a constant of ours, never user input


def _announce(path) -> None:
    print(f"{PROG}: wrote {path}", file=sys.stderr)


def main(argv=None) -> int:
    """Run the CLI; returns the exit status (0 success, 1 checks failed, 2 bad input).

    SIGTERM is handled like SIGINT (exit 130, no output files).  MemoryError
    and RecursionError are a last line of defence (the size limits of
    ``docs/limits.md`` are meant to refuse such inputs first): one line, exit 2.
    """
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _sigterm)
    os.environ["MPLBACKEND"] = "Agg"  # the one backend selection of the package (see above)
    try:
        notes = []  # deprecation notes, printed once the arguments are accepted
        argv = rewrite_legacy(sys.argv[1:] if argv is None else argv, notes)
        if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
            raise ICLError(
                f"unknown command {argv[0]!r}{did_you_mean(argv[0], COMMANDS)}; the commands are {', '.join(COMMANDS)}"
            )
        parser = build_parser(only=argv[0] if argv and argv[0] in COMMANDS else None)
        args, extra = parser.parse_known_args(argv)
        if extra:
            raise _unrecognized(parser, args, extra)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        check_output_options(args)
        seconds = max_seconds(args)
        for note in notes:
            print(note, file=sys.stderr)
        announce = None if getattr(args, "quiet", False) else _announce
        with transaction(announce), budget(seconds):  # every requested output file, or none
            return int(args.func(args) or 0)
    except ICLError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _clear_interrupt_mark()
        print(f"{PROG}: interrupted; no output files were written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `icl-symbolic ... | head`
        return 0
    except OSError as exc:  # writing an output failed after the checks (disk full, ...)
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(
            f"{PROG}: error: cannot write output{where} ({exc.strerror or exc}); no output files were written",
            file=sys.stderr,
        )
        return 2
    except (MemoryError, RecursionError) as exc:
        print(
            f"{PROG}: error: the input is too large to handle ({type(exc).__name__}); see docs/limits.md",
            file=sys.stderr,
        )
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
