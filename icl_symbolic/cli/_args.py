"""Argument helpers shared by the sub-commands (grids, positive numbers)."""

from __future__ import annotations

import sys

import numpy as np

from ..errors import ICLError

MAX_GRID = 100_000


def parse_number(text: str, name: str) -> float:
    """A finite float from a command-line string, or an ICLError naming ``name``."""
    try:
        value = float(text)
    except ValueError:
        raise ICLError(f"--{name}: {text!r} is not a number") from None
    if not np.isfinite(value):
        raise ICLError(f"--{name}: {text!r} is not finite")
    return value


def parse_grid(text: str, name: str, log: bool = False) -> np.ndarray:
    """Parse one value, a comma list ``a,b,c``, or ``start:stop:count``.

    ``start:stop:count`` is an inclusive linear grid, geometric with ``log=True``.

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
        try:
            count = int(parts[2])
        except ValueError:
            raise ICLError(f"--{name}: count {parts[2]!r} in {text!r} is not an integer") from None
        if not 1 <= count <= MAX_GRID:
            raise ICLError(f"--{name}: count must be between 1 and {MAX_GRID}, got {count}")
        if log:
            if start <= 0 or stop <= 0:
                raise ICLError(f"--{name}: a --log grid needs positive start and stop, got {text!r}")
            return np.geomspace(start, stop, count)
        return np.linspace(start, stop, count)
    values = [parse_number(p, name) for p in text.split(",") if p.strip()]
    if not values:
        raise ICLError(f"--{name}: no value given")
    return np.asarray(values, dtype=float)


def parse_int(text, name, lo):
    """``text`` as an integer >= ``lo`` (one-line error naming option ``--name``)."""
    value = parse_number(text, name)
    if value != int(value) or value < lo:
        raise ICLError(f"--{name}: expected an integer >= {lo}, got {text!r}")
    return int(value)


def progress_printer(quiet):
    """A progress callback printing to stderr, or None with ``--quiet``."""
    if quiet:
        return None

    def emit(msg):
        print(msg, file=sys.stderr, flush=True)
    return emit
