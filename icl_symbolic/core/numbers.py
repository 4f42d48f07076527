"""Reading a number from text: the one parser of every string -> float in the package.

The command line (``--tau 0.5``), covariance specifications (``powerlaw:0.9``), the
``--curve`` CSV of ``diagnose`` and the data table of ``reproduce`` all read numbers
through :func:`parse_float`.  Only ASCII decimal notation is accepted: Python's
``float`` would also take full-width or other non-ASCII digits (``'１'``), ``'_'``
separators (``'1_000'``), ``inf`` and ``nan``.  A number has at most
:data:`~icl_symbolic.core.limits.MAX_NUMBER_CHARS` characters (Python's ``int`` refuses
strings of more than 4300 digits with a traceback; the limit comes first) and must be
finite as a float64 (``1e999`` is refused).  A refusal is one line,
``<where>: <text> is not a number (...)``, ``<where>: <text> is not finite`` or
``<where>: a number of N characters is longer than the limit ...``.  :func:`check_decimal`
applies the same grammar to a number whose decimal text is kept (``diagnose --value``).

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
from fractions import Fraction

import mpmath

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.limits import MAX_NUMBER_CHARS

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
    return float(check_decimal(text, where))


def check_decimal(text, where: str) -> str:
    """``text`` without surrounding blanks, once it is checked to be a number of the grammar of
    :func:`parse_float`: ASCII decimal notation, at most ``MAX_NUMBER_CHARS`` characters, finite as
    a float64.  The text itself is returned, so that its printed digits can be read (``--value``).

    >>> check_decimal(" 1.4470 ", "--value")
    '1.4470'
    >>> check_decimal("1e999", "--value")
    Traceback (most recent call last):
    ...
    icl_symbolic.core.errors.ICLError: --value: '1e999' is not finite
    """
    stripped = str(text).strip()
    if len(stripped) > MAX_NUMBER_CHARS:
        raise ICLError(
            f"{where}: a number of {len(stripped)} characters is longer than the limit "
            f"{MAX_NUMBER_CHARS} (see docs/limits.md)"
        )
    if stripped.lower().lstrip("+-") in _NOT_FINITE:
        raise ICLError(f"{where}: {stripped!r} is not finite")
    if not NUMBER.fullmatch(stripped):
        raise ICLError(f"{where}: {stripped!r} is not a number (ASCII digits, e.g. 2, 0.5, 1e-3)")
    if not math.isfinite(float(stripped)):  # 1e999 (float() cannot fail on a NUMBER match)
        raise ICLError(f"{where}: {stripped!r} is not finite")
    return stripped


def shown(text, width: int = 40) -> str:
    """``text`` quoted for an error line, cut to about ``width`` characters (a refusal stays short).

    >>> shown("1" * 5000)
    "'1111111111111111111111111111111111111111...' (5000 characters)"
    """
    text = str(text)
    return repr(text) if len(text) <= width else f"{text[:width]!r}"[:-1] + f"...' ({len(text)} characters)"


def is_integer_text(text) -> bool:
    """``text`` (blanks ignored) is an integer in ASCII digits of at most ``MAX_NUMBER_CHARS`` characters."""
    stripped = str(text).strip()
    return len(stripped) <= MAX_NUMBER_CHARS and INTEGER.fullmatch(stripped) is not None


def grid_points(start_text, stop_text, count: int, log: bool = False) -> list:
    """The ``count`` points of the inclusive grid from ``start_text`` to ``stop_text`` (ASCII decimals,
    already checked by :func:`parse_float`), each the float nearest to its exact value.

    Linear: ``start + i (stop - start)/(count - 1)`` in rational arithmetic on the decimals as
    written, so ``0.1:4:40`` has the point 1 exactly (``numpy.linspace`` gives 0.9999999999999999
    there, a ridgeless point next to the interpolation peak that is not the peak).  Geometric
    (``log``): ``start (stop/start)^(i/(count - 1))`` at 60 significant digits, then rounded once, so
    a point whose exact value is a power of ten or 1 is that number exactly.

    >>> grid_points("0.1", "4", 40)[9]
    1.0
    >>> grid_points("0.1", "10", 3, log=True)
    [0.1, 1.0, 10.0]
    """
    a, b = Fraction(str(start_text).strip()), Fraction(str(stop_text).strip())
    count = int(count)
    if count == 1:
        return [float(a)]
    if not log:
        return [float(a + (b - a) * i / (count - 1)) for i in range(count)]
    with mpmath.workdps(60):
        ma, mb = mpmath.mpf(a.numerator) / a.denominator, mpmath.mpf(b.numerator) / b.denominator
        pts = [float(ma * (mb / ma) ** (mpmath.mpf(i) / (count - 1))) for i in range(count)]
    pts[0], pts[-1] = float(a), float(b)
    return pts


__all__ = ["parse_float", "check_decimal", "shown", "is_integer_text", "grid_points", "NUMBER", "INTEGER"]
