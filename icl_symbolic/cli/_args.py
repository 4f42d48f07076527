"""Argument helpers shared by the sub-commands: grids, numbers, and the output convention.

The convention every command follows (docs/cli.md): ``--json`` prints the
command's JSON object to stdout instead of the table, ``--json-out FILE`` writes
it to a file, ``--csv FILE``, ``--plot FILE``, ``--report FILE`` write files, and
``--quiet`` silences progress (:func:`add_output_options`).  A command's JSON is
always one object whose rows are the list ``points`` (:func:`document`); numbers
that do not exist (a divergence) are ``null`` next to a ``reason``, never NaN or
Infinity (:func:`json_text`).  Defaults come from :mod:`icl_symbolic.core.defaults`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from icl_symbolic import __version__
from icl_symbolic.core import defaults  # noqa: F401  (the commands' defaults, re-exported)
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.limits import (  # noqa: F401  (MAX_D, MAX_SEEDS, MAX_N_TEST: the commands' limits)
    CEILING_SECONDS,
    MAX_D,
    MAX_GRID,
    MAX_LIST_CHARS,
    MAX_N_TEST,
    MAX_SEEDS,
    check_count,
)
from icl_symbolic.core.numbers import grid_points, is_integer_text, parse_float, shown
from icl_symbolic.core.parallel import check_jobs, resolve_scheduler
from icl_symbolic.engine.expr import parse_expr
from icl_symbolic.model.setting import ASSIGNMENTS, CONVENTION_FIELDS, CONVENTIONS, ROUNDINGS, resolve_convention
from icl_symbolic.output.io import json_safe, save_figure, write_csv, write_text  # noqa: F401  (the commands' writers)


def parse_number(text: str, name: str) -> float:
    """A finite float from a command-line string, or an ICLError naming ``name``.

    :func:`icl_symbolic.core.numbers.parse_float` (ASCII decimal notation only: Python's
    ``float`` would also take full-width digits, underscores, ``inf`` and ``nan``).

    >>> parse_number("2.5e-3", "tau")
    0.0025
    >>> parse_number("1_000", "tau")
    Traceback (most recent call last):
    ...
    icl_symbolic.core.errors.ICLError: --tau: '1_000' is not a number (ASCII digits, e.g. 2, 0.5, 1e-3)
    """
    return parse_float(text, f"--{name}")


def parse_grid(text: str, name: str, log: bool = False) -> np.ndarray:
    """Parse one value, a comma list ``a,b,c``, or ``start:stop:count``.

    ``start:stop:count`` is an inclusive linear grid, geometric with ``log=True``, each point the float
    nearest its exact value (:func:`icl_symbolic.core.numbers.grid_points`: 1 is 1).

    >>> parse_grid("0.5", "tau").tolist()
    [0.5]
    >>> parse_grid("1,2,4", "tau").tolist()
    [1.0, 2.0, 4.0]
    >>> parse_grid("1:100:3", "kappa", log=True).tolist()
    [1.0, 10.0, 100.0]
    """
    text = str(text).strip()
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise ICLError(f"--{name}: expected start:stop:count, got {text!r}")
        start, stop = parse_number(parts[0], name), parse_number(parts[1], name)
        if not is_integer_text(parts[2]):
            raise ICLError(f"--{name}: count {parts[2]!r} in {text!r} is not an integer")
        count = int(parts[2])
        if not 1 <= count <= MAX_GRID:
            raise ICLError(f"--{name}: count must be between 1 and {MAX_GRID}, got {count}")
        if log and (start <= 0 or stop <= 0):
            raise ICLError(f"--{name}: a --log grid needs positive start and stop, got {text!r}")
        return np.asarray(grid_points(parts[0], parts[1], count, log=log), dtype=float)
    values = [parse_number(p, name) for p in split_list(text, name)]
    return np.asarray(values, dtype=float)


def split_list(text: str, name: str) -> list:
    """The items of a comma list; an empty list or an empty item (``1,2,,3``, ``1,``) is refused, and so
    is a list of more than :data:`~icl_symbolic.core.limits.MAX_GRID` items or
    :data:`~icl_symbolic.core.limits.MAX_LIST_CHARS` characters (checked before any item is read)."""
    check_count(len(str(text)), MAX_LIST_CHARS, f"--{name}: characters of the list", "fewer items")
    check_count(str(text).count(",") + 1, MAX_GRID, f"--{name}: items of the list", "fewer items")
    items = str(text).split(",")
    if not str(text).strip():
        raise ICLError(f"--{name}: no value given")
    if any(not p.strip() for p in items):
        raise ICLError(f"--{name}: empty item in the list {text!r}")
    return [p.strip() for p in items]


def ascii_int(text: str) -> int:
    """argparse ``type=`` for integer options: ASCII digits only (``int`` accepts '１' and '1_000')."""
    if not is_integer_text(text):
        raise argparse.ArgumentTypeError(f"{shown(text)} is not an integer (ASCII digits)")
    return int(text)


def parse_int(text, name, lo, hi=None):
    """``text`` as an integer in [lo, hi] (one-line error naming option ``--name``)."""
    value = parse_number(text, name)
    if value != int(value) or value < lo:
        raise ICLError(f"--{name}: expected an integer >= {lo}, got {text!r}")
    if hi is not None and value > hi:
        raise ICLError(f"--{name}: {text!r} is above the limit {hi} (see docs/limits.md)")
    return int(value)


# ---------------------------------------------------------------------------
# one check per model parameter: the same mistake has the same wording in every command
# ---------------------------------------------------------------------------
#: parameter -> (the rule, what it is)
PARAMETERS = {
    "rho": (">= 0", "the label-noise variance"),
    "alpha": ("> 0", "the context ratio ell/d"),
    "kappa": ("> 0", "the task diversity k/d"),
    "tau": ("> 0", "the pretraining ratio n/d^2"),
    "lam": (">= 0", "the ridge"),
}


def check_parameter(name: str, values, text: str | None = None) -> None:
    """One-line ICLError ``--rho: must be >= 0 (the label-noise variance), got -0.1`` when a value
    of ``values`` (a number or an array) breaks the rule of :data:`PARAMETERS`; ``text`` is the
    value as the user wrote it (default: the offending value)."""
    rule, what = PARAMETERS[name]
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    bad = arr[arr < 0] if rule == ">= 0" else arr[arr <= 0]
    if bad.size:
        raise ICLError(f"--{name}: must be {rule} ({what}), got {text if text is not None else f'{bad[0]:g}'}")


def parse_parameter(text, name: str, log: bool = False) -> np.ndarray:
    """A grid (:func:`parse_grid`) of parameter ``name``, checked by :func:`check_parameter`."""
    grid = parse_grid(text, name, log)
    check_parameter(name, grid, None if grid.size > 1 else str(text).strip())
    return grid


def check_exact_rho(text):
    """``--rho`` read exactly (the input language: ``0.1`` is 1/10) and checked by :func:`check_parameter`;
    returns the SymPy number."""
    value = parse_expr(text, variables=())
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ICLError(f"--rho: {shown(text)} is not a number") from None
    if not math.isfinite(number):  # 1e500 is a valid exact literal, but no label-noise variance
        raise ICLError(f"--rho: {shown(text)} is not finite")
    check_parameter("rho", number, str(text).strip())
    return value


def check_int(value: int, name: str, lo: int) -> None:
    """The wording of :func:`parse_int` for an option argparse already read as an integer."""
    if value < lo:
        raise ICLError(f"--{name}: expected an integer >= {lo}, got {str(value)!r}")


def progress_printer(quiet):
    """A progress callback printing to stderr, or None with ``--quiet``."""
    if quiet:
        return None

    def emit(msg):
        print(msg, file=sys.stderr, flush=True)

    return emit


# ---------------------------------------------------------------------------
# the output convention shared by every command (docs/cli.md)
# ---------------------------------------------------------------------------
#: file options and the suffixes they accept
OUTPUT_SUFFIXES = {
    "json_out": (".json",),
    "csv": (".csv",),
    "plot": (".png", ".pdf", ".svg"),
    "report": (".md", ".markdown", ".html", ".htm"),
}


def add_output_options(parser, *, csv: str | None = None, plot: str | None = None, report: str | None = None) -> None:
    """The convention: ``--json`` prints the command's JSON object to stdout (instead of the
    table); ``--json-out FILE`` writes the same object to a file; ``--csv``, ``--plot``,
    ``--report`` (added when a help text is given) write files; ``--quiet`` silences progress
    and the lines naming the written files; ``--max-seconds`` is the budget of work
    (:func:`icl_symbolic.core.cost.budget`, applied by the command line's ``main``).  A command without ``--plot`` says why in its
    epilog (:func:`epilog`, ``no_plot``).

    All files are written only after all computation succeeded, atomically
    (:mod:`icl_symbolic.output.io`); check their suffixes first with :func:`check_output_paths`.
    """
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the result as one JSON object (its rows in 'points') to stdout, instead of the table",
    )
    parser.add_argument("--json-out", metavar="FILE.json", help="write the same JSON object to FILE.json")
    if csv:
        parser.add_argument("--csv", metavar="FILE.csv", help=csv)
    if plot:
        parser.add_argument("--plot", metavar="FILE.png", help=plot + " (.png, .pdf or .svg)")
    if report:
        parser.add_argument("--report", metavar="FILE.html", help=report + " (.html or .md)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines and no 'wrote FILE' lines on stderr")
    parser.add_argument(
        "--max-seconds",
        metavar="SECONDS",
        default=None,
        help=f"the budget: run work estimated up to SECONDS (without it, work estimated above "
        f"{CEILING_SECONDS / 3600:g} h is refused before it starts; docs/limits.md)",
    )


def max_seconds(args) -> float | None:
    """The ``--max-seconds`` budget of :func:`add_output_options` (None: the default ceiling), checked
    before any work: a positive finite number of seconds."""
    text = getattr(args, "max_seconds", None)
    if text is None:
        return None
    value = parse_number(text, "max-seconds")
    if value <= 0:
        raise ICLError(f"--max-seconds: must be a positive number of seconds, got {str(text).strip()!r}")
    return value


def check_output_paths(args) -> None:
    """One-line ICLError for an output file with the wrong suffix (call before computing)."""
    for opt, suffixes in OUTPUT_SUFFIXES.items():
        path = getattr(args, opt, None)
        if path is not None and Path(path).suffix.lower() not in suffixes:
            raise ICLError(f"--{opt.replace('_', '-')}: {str(path)!r} must end in {' or '.join(suffixes)}")


def write_points_csv(path, points, keys=None) -> None:
    """The ``points`` of a command's JSON as CSV, one row per point (``keys``: the columns, by default
    those of the first point); nested values (lists, objects) are written as JSON text, null as empty."""
    keys = list(keys if keys is not None else (points[0] if points else {}))

    def cell(v):
        if v is None:
            return ""
        return json_text(v).replace("\n", "") if isinstance(v, (dict, list, tuple)) else v

    write_csv(path, keys, [[cell(p.get(k)) for k in keys] for p in points])


def json_text(doc) -> str:
    """The JSON text of a command's document (strict: no NaN, no Infinity)."""
    return json.dumps(json_safe(doc), indent=2, allow_nan=False, default=str)


def emit_json(args, doc) -> None:
    """Write ``doc`` to ``--json-out`` and/or print it (``--json``)."""
    text = json_text(doc)
    if getattr(args, "json_out", None):
        write_text(args.json_out, text + "\n")
    if getattr(args, "json", False):
        print(text)


def document(command: str, points: list, **fields) -> dict:
    """A command's JSON object: ``command``, ``software``, the command's fields, then ``points``."""
    return {"command": command, "software": f"icl-symbolic {__version__}", **fields, "points": points}


def epilog(statuses: str, examples=(), no_plot: str | None = None) -> str:
    """The end of a command's --help: its exit statuses (130, interrupted, is added here, the
    same for every command), why it has no ``--plot`` (``no_plot``), and its examples (one per
    line, never wrapped: they survive copy-paste)."""
    text = "exit status: " + statuses + "; 130 interrupted (no files written)"
    if no_plot:
        text += "\nno --plot: " + no_plot
    if examples:
        text += "\nexamples:\n" + "\n".join(f"  {e}" for e in examples)
    return text


EXIT_OK_BAD_INPUT = "0 success; 2 bad input (one line on stderr, nothing computed, no files written)"


# ---------------------------------------------------------------------------
# old spellings, kept for one release with a note on stderr
# ---------------------------------------------------------------------------
def _legacy(command, argv):
    out, notes, i = [], [], 0
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if (
            command == "theory"
            and tok == "--json"
            and nxt is not None
            and (nxt == "-" or nxt.lower().endswith(".json"))
        ):
            if nxt == "-":
                out.append("--json")
                notes.append("'theory --json -' is now 'theory --json'")
            else:
                out += ["--json-out", nxt]
                notes.append("'theory --json FILE' is now 'theory --json-out FILE'")
            i += 2
            continue
        if command == "theory" and tok.startswith("--json="):
            out.append("--json-out=" + tok.split("=", 1)[1])
            notes.append("'theory --json=FILE' is now 'theory --json-out FILE'")
        elif command == "simulate" and (tok == "--out" or tok.startswith("--out=")):
            if tok == "--out":
                out += ["--json-out"] + ([nxt] if nxt is not None else [])
                i += 2
                notes.append("'simulate --out FILE' is now 'simulate --json-out FILE'")
                continue
            out.append("--json-out=" + tok.split("=", 1)[1])
            notes.append("'simulate --out=FILE' is now 'simulate --json-out FILE'")
        else:
            out.append(tok)
        i += 1
    return out, notes


def rewrite_legacy(argv, notes: list | None = None) -> list:
    """``argv`` with the previous release's output spellings rewritten to the convention,
    each with a deprecation note on stderr (they will be removed in the next release).
    With a list ``notes`` the note lines are appended to it instead of printed (the command
    line prints them once the arguments are accepted: a refusal stays one line)."""
    argv = list(argv)
    if not argv or argv[0].startswith("-"):
        return argv
    rest, found = _legacy(argv[0], argv[1:])
    for note in found:
        line = f"icl-symbolic: note: deprecated: {note}; the old spelling will be removed in the next release"
        if notes is None:
            print(line, file=sys.stderr)
        else:
            notes.append(line)
    return [argv[0]] + rest


def add_order_option(p, what: str) -> None:
    """``--order {0,1}``: 1 adds the O(1/d) finite-d terms (icl_symbolic.theory.finite_d, docs/finite-d.md;
    identity covariances, ridgeless, Gaussian tasks); ``what`` says where the corrected value goes."""
    p.add_argument(
        "--order",
        type=ascii_int,
        default=0,
        choices=(0, 1),
        help="1: add the O(1/d) finite-d terms (icl_symbolic.theory.finite_d, docs/finite-d.md; identity "
        f"covariances, ridgeless, Gaussian tasks, the default convention) and {what}",
    )


def add_parallel_options(p, what: str) -> None:
    """``--jobs`` and ``--scheduler`` (:func:`icl_symbolic.core.parallel.map_sweep`), one spelling for every command."""
    p.add_argument(
        "--jobs", default="1", help=f"worker processes for {what} (default 1; results are identical for any value)"
    )
    p.add_argument(
        "--scheduler",
        default=None,
        help="Dask scheduler address, e.g. tcp://host:8786 (default: "
        "$ICL_SYMBOLIC_SCHEDULER if set; needs the optional extra dask)",
    )


def parse_parallel(args) -> tuple[int, str | None]:
    """``(jobs, scheduler address or None)`` from :func:`add_parallel_options`, validated before any work."""
    return check_jobs(parse_int(args.jobs, "jobs", 1)), resolve_scheduler(args.scheduler)


def add_convention_options(p) -> None:
    """The simulation conventions (docs/conventions.md): a preset and one option per open choice."""
    g = p.add_argument_group("conventions (docs/conventions.md; each option overrides the preset)")
    g.add_argument(
        "--convention",
        default="default",
        choices=tuple(CONVENTIONS),
        help="preset: default (ours: round-robin, Gaussian tasks, paper rounding, no ridge floor) or "
        "letey2024 (the authors' simulation code: each task n/k times, sphere pretraining tasks, Gaussian "
        "test tasks, ell = int(alpha d), k = int(kappa d), n = round(tau d^2/k) k, ridge floor 1e-6)",
    )
    g.add_argument(
        "--assignment",
        default=None,
        choices=ASSIGNMENTS,
        help="tasks over training prompts: round-robin (each task n/k times) or random (uniform draws)",
    )
    g.add_argument("--train-tasks", default=None, choices=("gaussian", "sphere"), help="pretraining-task law")
    g.add_argument("--test-tasks", default=None, choices=("gaussian", "sphere"), help="test-task law")
    g.add_argument(
        "--rounding",
        default=None,
        choices=ROUNDINGS,
        help="paper: k = round(kappa d), n = round(tau d^2); floor-k: k = floor(kappa d), n = round(tau d^2/k) k; "
        "truncate (letey2024): also ell = int(alpha d), the products truncated as the authors' code does",
    )
    g.add_argument("--ridge-floor", default=None, help="train with max(lam, this) (default 0; letey2024: 1e-6)")


def parse_convention(args):
    """The Convention of the parsed options (one-line ICLError on bad input, before any work)."""
    floor = None if args.ridge_floor is None else parse_number(args.ridge_floor, "ridge-floor")
    return resolve_convention(
        args.convention,
        getattr(args, "tasks", None),
        assignment=args.assignment,
        train_tasks=args.train_tasks,
        test_tasks=args.test_tasks,
        rounding=args.rounding,
        ridge_floor=floor,
    )


#: the CSV columns of a convention (its name, then each field), for every command that writes one
CONVENTION_COLUMNS = ("convention",) + CONVENTION_FIELDS


def convention_row(conv: dict) -> list:
    """The :data:`CONVENTION_COLUMNS` values of a convention's JSON (``Convention.to_json()``)."""
    return [conv["name"]] + [conv[k] for k in CONVENTION_FIELDS]
