"""The ``icl-symbolic`` command line: a thin layer over the library.

Each sub-command lives in its own module of this package (``coeffs.py``,
``theory.py``, ...) and exposes ``register(subparsers)``, which adds a parser
and sets ``func`` to a function ``run(args) -> int``.  No mathematics lives
here: sub-commands parse, call the library, and format.

Error policy: any :class:`~icl_symbolic.errors.ICLError` (and argument errors)
ends the command with ONE line ``icl-symbolic: error: ...`` on stderr and exit
status 2; an interrupt exits 130.  Output files are written atomically
(:mod:`icl_symbolic.io`), so failures never leave partial files.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from ..errors import ICLError

PROG = "icl-symbolic"


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line, not usage + message."""

    def error(self, message):  # pragma: no cover - exercised through main()
        raise ICLError(f"{self.prog.split()[-1] if ' ' in self.prog else 'arguments'}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Check the mathematics of arXiv:2610.10761 "
                     "(linear attention, nonlinear teachers, in-context learning).")
    from .. import __version__
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv=None) -> int:
    """Run the CLI; returns the exit status (0 success, 1 checks failed, 2 bad input)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except ICLError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; no output files were written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `icl-symbolic ... | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
