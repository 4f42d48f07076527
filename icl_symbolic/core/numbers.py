"""Reading a number from text: the one parser of every string -> float in the package.

The command line (``--tau 0.5``), covariance specifications (``powerlaw:0.9``), the
``--curve`` CSV of ``diagnose`` and the data table of ``reproduce`` all read numbers
through :func:`parse_float`.  Only ASCII decimal notation is accepted: Python's
``float`` would also take full-width or other non-ASCII digits (``'１'``), ``'_'``
separators (``'1_000'``), ``inf`` and ``nan``.  A refusal is one line,
``<where>: <text> is not a number (...)`` or ``<where>: <text> is not finite``.

>>> parse_float(" 2.5e-3 ", "--tau")
0.0025
>>> parse_float("１", "covariance 'powerlaw:１': exponent p")
Traceback (most recent call last):
...
icl_symbolic.core.errors.ICLError: covariance 'powerlaw:１': exponent p: '１' is not a number (ASCII digits, e.g. 2, 0.5, 1e-3)
"""

from __future__ import annotations

import math
import re

from icl_symbolic.core.errors import ICLError

#: a decimal number in ASCII digits (like the expression language: no '１', no '1_000', no 'nan')
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: an integer in ASCII digits
INTEGER = re.compile(r"[+-]?[0-9]+")
_NOT_FINITE = ("inf", "infinity", "nan")


def parse_float(text, where: str) -> float:
    """The finite float that ``text`` (surrounding blanks ignored) writes in ASCII decimal notation.

    ``where`` names the input in the one-line :class:`ICLError` (``--tau``, ``covariance
    'powerlaw:x': exponent p``, ``--curve: data.csv: data row 3``).
    """
    stripped = str(text).strip()
    if stripped.lower().lstrip("+-") in _NOT_FINITE:
        raise ICLError(f"{where}: {stripped!r} is not finite")
    if not NUMBER.fullmatch(stripped):
        raise ICLError(f"{where}: {stripped!r} is not a number (ASCII digits, e.g. 2, 0.5, 1e-3)")
    value = float(stripped)  # cannot fail on a NUMBER match
    if not math.isfinite(value):  # 1e999
        raise ICLError(f"{where}: {stripped!r} is not finite")
    return value


def is_integer_text(text) -> bool:
    """``text`` (blanks ignored) is an integer in ASCII digits."""
    return INTEGER.fullmatch(str(text).strip()) is not None


__all__ = ["parse_float", "is_integer_text", "NUMBER", "INTEGER"]
