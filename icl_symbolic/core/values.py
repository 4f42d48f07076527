"""The result type: a number together with how it was obtained.

Every approximate number in icl-symbolic says where it comes from, following
the pattern of ``mpmath.quad(..., error=True)`` and ``scipy.integrate.qmc_quad``:

* ``exact``   -- a SymPy closed form (``Value.exact`` holds the expression);
* ``mpmath``  -- high-precision quadrature, ``digits`` significant digits with an
  absolute error estimate ``abs_err``;
* ``mc``      -- a Monte-Carlo mean with standard error ``stderr`` over
  ``n_samples`` draws (seeded: ``seeds``);
* ``sim``     -- a full simulation, mean over ``seeds`` with spread ``stderr``;
* ``numeric`` -- a deterministic floating-point computation (root finding,
  linear algebra) with an estimated absolute error ``abs_err`` where known.

Arithmetic
----------
``+ - * /``, unary ``-``, ``abs`` and ``**`` (with a number as exponent) work on
Values and plain numbers, and the result says honestly how it was obtained:

* exact op exact is exact: the SymPy closed forms are combined, evaluated to the
  smaller of the two ``digits``.  Python ``int``, ``fractions.Fraction`` and SymPy
  numbers count as exact; a ``float`` is read through its shortest repr, as
  everywhere in the package (``0.1`` is 1/10).
* When an ``mpmath`` or ``numeric`` Value takes part, the absolute error bounds are
  propagated as bounds (``|a b - A B| <= |a| e_B + |b| e_A + e_A e_B``, and so on),
  the result is ``mpmath`` (``numeric`` if no mpmath operand), and its ``digits``
  are the smaller of the operands' digits and the digits the new bound certifies
  (a cancellation loses digits visibly).  A ``numeric`` operand without an error
  estimate gives a result without one.
* When an ``mc`` or ``sim`` Value takes part, the standard errors are propagated to
  first order (delta method) assuming the operands are independent; the result is
  ``sim`` if a simulation takes part, else ``mc``.  Independence is checked by the
  seeds: two random Values with a seed in common (or without seeds) are refused,
  because their covariance is unknown.  Deterministic error bounds, if any, are
  kept in ``abs_err``.

>>> import sympy
>>> half = Value.from_exact(sympy.Rational(1, 2), digits=20)
>>> (half + 1).exact, (half * 3).provenance()
(3/2, 'exact (SymPy)')
>>> q = Value(mpmath.mpf("0.25"), "mpmath", digits=30, abs_err=mpmath.mpf("1e-32"))
>>> s = half + q
>>> s.method, s.digits, s.to_str()
('mpmath', 20, '0.75')
>>> m = Value(2.0, "mc", stderr=0.1, n_samples=100, seeds=(1,))
>>> (m * 3).stderr
0.30000000000000004
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import mpmath
import sympy

METHODS = ("exact", "mpmath", "mc", "sim", "numeric")
#: what :meth:`Value.to_str` prints for a quadrature result without one certified digit
UNCERTIFIED = "uncertified"


#: working-precision doublings :func:`certified_decimal` tries before it gives up
_MAX_DOUBLINGS = 8


def certified_decimal(expr, digits: int):
    """The real number ``expr`` (a SymPy closed form) as an mpf correct to ``digits`` significant digits.

    ``sympy.N`` evaluates the arguments of a function at the requested precision and does not
    track what the function loses: ``2 asin(2 a^2/(1 + 2 a^2))/pi`` at ``a = 1e15`` is 1 minus
    6.3e-16, and asin near 1 turns the argument's rounding at 25 digits into an error in the 16th
    digit of the result.  So the form is evaluated at a working precision ``p`` and again at
    ``2 p`` (``p`` = digits + 10, then doubled) until two consecutive evaluations agree to
    ``digits + 2`` significant digits; the second (more precise) one is returned.  A loss of L
    digits makes the evaluation at ``p`` wrong from digit ``p - L`` on, and the one at ``2 p``
    from digit ``2 p - L``: agreement to ``digits + 2`` digits puts ``2 p - L`` beyond
    ``digits + p``, far past the digits returned.  An exact zero (every evaluation 0) is 0.

    Raises ValueError when the form is not real, or when no two evaluations agree within
    ``(digits + 10) 2^8`` working digits (a cancellation SymPy cannot resolve: refused, not
    guessed).

    >>> a = sympy.Integer(10) ** 15
    >>> mpmath.nstr(certified_decimal(2 * sympy.asin(2 * a**2 / (1 + 2 * a**2)) / sympy.pi, 20), 20)
    '0.99999999999999936338'
    """
    prec = int(digits) + 10
    prev = None
    for _ in range(_MAX_DOUBLINGS + 1):
        num = sympy.N(expr, prec)
        if not num.is_number or num.is_real is False:
            raise ValueError(f"exact value {expr} is not a real number")
        with mpmath.workdps(prec + 5):
            cur = mpmath.mpf(str(sympy.Float(num, prec)))
            if prev is not None and abs(cur - prev) <= abs(cur) * mpmath.mpf(10) ** -(int(digits) + 2):
                with mpmath.workdps(int(digits)):
                    return +cur
        prev = cur
        prec *= 2
    raise ValueError(
        f"the decimal value of {expr} is not settled at {prec // 2} working digits "
        "(two evaluations disagree: a cancellation SymPy cannot resolve)"
    )


@dataclass(frozen=True)
class Value:
    """A number with its provenance.

    Parameters
    ----------
    value : mpmath.mpf, float or int
        The number (for ``exact``, a high-precision decimal evaluation of ``exact``).
    method : str
        One of ``exact``, ``mpmath``, ``mc``, ``sim``, ``numeric``.
    exact : sympy.Expr, optional
        The closed form, when ``method == "exact"``.
    digits : int, optional
        Significant digits certified (``mpmath``) or used for evaluation (``exact``).
    abs_err : float, optional
        Absolute error estimate (``mpmath``, ``numeric``).
    stderr : float, optional
        Standard error (``mc``, ``sim``).
    n_samples : int, optional
        Number of Monte-Carlo draws or simulation repeats.
    seeds : tuple, optional
        Seeds that reproduce a random result.
    note : str
        Free text: what was computed, where it is in the paper.

    Examples
    --------
    >>> import sympy
    >>> v = Value.from_exact(sympy.exp(-sympy.Rational(1, 2)), digits=15)
    >>> v.provenance()
    'exact (SymPy)'
    >>> round(float(v), 12)
    0.606530659713
    """

    value: Any
    method: str
    exact: Any = None
    digits: int | None = None
    abs_err: Any = None
    stderr: float | None = None
    n_samples: int | None = None
    seeds: tuple | None = None
    note: str = ""

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; expected one of {METHODS}")

    # -- construction -------------------------------------------------
    @classmethod
    def from_exact(cls, expr, digits: int = 30, note: str = "") -> "Value":
        """Wrap a SymPy closed form, evaluated to ``digits`` significant digits."""
        val = certified_decimal(expr, digits + 5)
        return cls(value=val, method="exact", exact=expr, digits=digits, note=note)

    def with_note(self, note: str) -> "Value":
        return replace(self, note=note)

    # -- conversions ----------------------------------------------------
    def __float__(self) -> float:
        return float(self.value)

    def to_str(self, digits: int | None = None) -> str:
        """Decimal string with at most the certified number of digits.

        For quadrature results (``mpmath``) ``digits`` is capped at the certified
        ``self.digits``; when no digit is certified the number is not printed:
        the string is ``"uncertified"`` (the provenance gives the error bound).

        >>> Value(value=mpmath.mpf("33.126301"), method="mpmath", digits=2, abs_err=0.2).to_str(15)
        '33'
        >>> Value(value=mpmath.mpf("33.126301"), method="mpmath", digits=None, abs_err=4.1).to_str(15)
        'uncertified'
        """
        n = digits or self.digits or 15
        if self.method in ("mc", "sim"):
            n = min(n, 8)
        if self.method == "mpmath":
            if self.digits is None:
                return UNCERTIFIED
            n = min(n, self.digits)
        value = self.value
        if not isinstance(value, (mpmath.mpf, mpmath.mpc, complex)):
            value = mpmath.mpf(value)  # ints and floats are exact in binary: no rounding here
        text = mpmath.nstr(value, n)
        if text.endswith(".0") and "e" not in text and len(text.lstrip("-").rstrip("0").rstrip(".")) >= n:
            text = text[:-2]  # "29.0" would claim a third digit: with 2 certified digits print "29"
        return text

    def provenance(self) -> str:
        """One phrase saying how the number was obtained."""
        if self.method == "exact":
            return "exact (SymPy)"
        if self.method == "mpmath":
            if self.abs_err is not None and not mpmath.isfinite(mpmath.mpf(self.abs_err)):
                return "mpmath quadrature, uncertified (no argument bounds its error)"
            err = "" if self.abs_err is None else f", |err| <= {mpmath.nstr(mpmath.mpf(self.abs_err), 2)}"
            got = "no digit certified" if self.digits is None else f"{self.digits} digits"
            return f"mpmath quadrature, {got}{err}"
        if self.method == "mc":
            return f"Monte Carlo, n={self.n_samples}, SE={_fmt(self.stderr)}" + (
                f", seed={self.seeds[0] if len(self.seeds) == 1 else self.seeds}" if self.seeds else ""
            )
        if self.method == "sim":
            if self.seeds and self.n_samples is not None and self.n_samples != len(self.seeds):
                # an extrapolated or pooled value: its SE has n_samples - 1 dof (a jackknife's or Welch's), not one per seed
                return (
                    f"simulation, seeds {self.seeds[0]}..{self.seeds[-1]} (at most {len(self.seeds)} per "
                    f"point), SE={_fmt(self.stderr)} ({self.n_samples - 1} dof)"
                )
            return f"simulation over {self.n_samples} seeds, SE={_fmt(self.stderr)}" + (
                f", seeds={list(self.seeds)}" if self.seeds else ""
            )
        err = "" if self.abs_err is None else f", |err| <= {_fmt(self.abs_err)}"
        return "numeric (float64)" + err

    # -- display ---------------------------------------------------------
    def __repr__(self) -> str:
        shown = self.to_str(min(self.digits or 15, 20))
        if self.method == "exact":
            return f"Value({self.exact} = {shown}, exact)"
        return f"Value({shown}, {self.provenance()})"

    def _repr_latex_(self) -> str:
        shown = self.to_str(min(self.digits or 15, 20))
        if self.method == "exact":
            return f"$\\displaystyle {sympy.latex(self.exact)} \\approx {shown}$"
        if self.method in ("mc", "sim"):
            return f"${shown} \\pm {_fmt(self.stderr)}$ \\ ({self.provenance()})"
        return f"${shown}$ \\ ({self.provenance()})"

    # -- arithmetic (rules in the module docstring) ------------------------
    __array_ufunc__ = None  # numpy defers to the reflected operators below

    def __add__(self, other):
        return _binary(self, other, "+")

    def __radd__(self, other):
        return _binary(other, self, "+")

    def __sub__(self, other):
        return _binary(self, other, "-")

    def __rsub__(self, other):
        return _binary(other, self, "-")

    def __mul__(self, other):
        return _binary(self, other, "*")

    def __rmul__(self, other):
        return _binary(other, self, "*")

    def __truediv__(self, other):
        return _binary(self, other, "/")

    def __rtruediv__(self, other):
        return _binary(other, self, "/")

    def __neg__(self):
        return _binary(-1, self, "*")

    def __pos__(self):
        return self

    def __abs__(self):
        if self.method == "exact":
            return self if sympy.sign(self.exact) >= 0 else -self
        return self if mpmath.mpf(self.value) >= 0 else -self

    def __pow__(self, p):
        return _power(self, p)

    def to_json(self) -> dict:
        """A JSON-ready dict; high-precision numbers are decimal strings."""
        text = self.to_str()
        out: dict = {
            "value": None if text == UNCERTIFIED else text,
            "method": self.method,
            "provenance": self.provenance(),
        }
        if text == UNCERTIFIED:
            unbounded = self.abs_err is not None and not mpmath.isfinite(mpmath.mpf(self.abs_err))
            out["reason"] = (
                "no argument bounds the quadrature error (see note)"
                if unbounded
                else "no digit certified by the error bound"
            )
        if self.exact is not None:
            out["exact"] = str(self.exact)
        for key in ("digits", "n_samples"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        for key in ("abs_err", "stderr"):
            if getattr(self, key) is not None and mpmath.isfinite(mpmath.mpf(getattr(self, key))):
                out[key] = _fmt(getattr(self, key))
        if self.seeds is not None:
            out["seeds"] = list(self.seeds)
        if self.note:
            out["note"] = self.note
        return out


def _fmt(x) -> str:
    if x is None:
        return "None"
    try:
        xf = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isfinite(xf) and xf != 0 and (abs(xf) < 1e-300):
        return mpmath.nstr(mpmath.mpf(x), 3)
    return f"{xf:.3g}"


# ---------------------------------------------------------------------------
# arithmetic
# ---------------------------------------------------------------------------
_RANDOM = ("mc", "sim")
_PLAIN_DIGITS = 30  # digits of a result made of plain numbers only


class _Operand:
    """One side of an operation: value, error bound, closed form, standard error."""

    __slots__ = ("val", "err", "exact", "digits", "stderr", "value")

    def __init__(self, val, err, exact, digits, stderr, value):
        self.val, self.err, self.exact, self.digits, self.stderr, self.value = val, err, exact, digits, stderr, value


def _operand(x):
    """An _Operand for a Value or a plain number; None for anything else."""
    if isinstance(x, Value):
        val = mpmath.mpf(x.value)
        if x.method == "exact":
            # the decimal evaluation carries digits + 5 digits
            err = abs(val) * mpmath.mpf(10) ** -(int(x.digits or _PLAIN_DIGITS) + 4)
        elif x.abs_err is None:
            err = None if x.method == "numeric" else mpmath.mpf(0)
        else:
            err = mpmath.mpf(x.abs_err)
        stderr = None if x.method not in _RANDOM else mpmath.mpf(x.stderr or 0)
        return _Operand(val, err, x.exact if x.method == "exact" else None, x.digits, stderr, x)
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, Fraction, float, mpmath.mpf)):
        if isinstance(x, float):
            if not math.isfinite(x):
                return None
            ex = sympy.Rational(repr(float(x)))  # 0.1 -> 1/10, as gauss.to_rational reads floats
        elif isinstance(x, mpmath.mpf):
            man, exp = x.man_exp
            ex = sympy.Integer(man) * sympy.Integer(2) ** exp
        else:
            ex = sympy.Rational(x.numerator, x.denominator)
        return _Operand(mpmath.mpf(ex.p) / ex.q, mpmath.mpf(0), ex, None, None, None)
    if isinstance(x, (sympy.Expr, sympy.Basic)) and getattr(x, "is_number", False) and x.is_real:
        return _Operand(None, mpmath.mpf(0), x, None, None, None)
    try:  # numpy scalars and other real numbers
        if isinstance(x, numbers.Real) and math.isfinite(float(x)):
            return _operand(float(x))
    except (TypeError, ValueError):
        pass
    return None


def _digits_of(*ops):
    ds = [o.digits for o in ops if o.digits is not None]
    return min(ds) if ds else _PLAIN_DIGITS


def _seeds_of(*ops):
    out = []
    for o in ops:
        if o.value is not None and o.value.seeds:
            out.extend(o.value.seeds)
    return tuple(out) or None


def combine_exact(op: str, ea, eb):
    """``ea op eb`` for two closed forms (SymPy), ``op`` one of ``+ - * /``."""
    return {"+": lambda: ea + eb, "-": lambda: ea - eb, "*": lambda: ea * eb, "/": lambda: ea / eb}[op]()


def bound_arithmetic(op: str, a, ea, b, eb):
    """``(a op b, bound)``: the value and a rigorous absolute error bound of ``x op y`` for any x, y
    with |x - a| <= ea, |y - b| <= eb (``op`` one of ``+ - * /``; mpmath numbers at the caller's
    working precision).  The one implementation of bound propagation: :class:`Value` arithmetic
    and the Hermite quantities (:mod:`icl_symbolic.engine.hermite`) use it.

    * ``+``, ``-``: ea + eb;
    * ``*``: |a| eb + |b| ea + ea eb;
    * ``/``: (ea + |a/b| eb) / (|b| - eb) when eb < |b|, else no bound (``mpmath.inf``).

    >>> bound_arithmetic("*", mpmath.mpf(2), mpmath.mpf("0.1"), mpmath.mpf(3), mpmath.mpf("0.1"))[1]
    mpf('0.51000000000000001')
    """
    if op == "+":
        return a + b, ea + eb
    if op == "-":
        return a - b, ea + eb
    if op == "*":
        return a * b, abs(a) * eb + abs(b) * ea + ea * eb
    if not eb < abs(b):  # the divisor's bound reaches 0 (or is infinite): no bound
        return a / b, mpmath.inf
    val = a / b
    return val, (ea + abs(val) * eb) / (abs(b) - eb)


def _work_dps(*xs) -> int:
    """Working precision for an operation: 20 digits above the operands' digits."""
    ds = [x.digits for x in xs if isinstance(x, Value) and x.digits is not None]
    return (min(ds) if ds else _PLAIN_DIGITS) + 20


def _binary(x, y, op):
    with mpmath.workdps(_work_dps(x, y)):
        a, b = _operand(x), _operand(y)
    if a is None or b is None:
        return NotImplemented
    digits = _digits_of(a, b)
    if a.exact is not None and b.exact is not None:
        if op == "/" and b.exact == 0:
            raise ZeroDivisionError("division of a Value by an exact zero")
        return Value.from_exact(combine_exact(op, a.exact, b.exact), digits=digits)
    with mpmath.workdps(digits + 20):
        for o in (a, b):
            if o.val is None:
                o.val = certified_decimal(o.exact, digits + 20)
        if op == "/" and (b.val == 0 or (b.err is not None and abs(b.val) <= b.err)):
            raise ZeroDivisionError(f"division by a Value that is zero within its error ({b.value!r})")
        known = a.err is not None and b.err is not None
        zero = mpmath.mpf(0)
        val, err = bound_arithmetic(op, a.val, a.err if known else zero, b.val, b.err if known else zero)
        if not known:
            err = None
        random = [o for o in (a, b) if o.stderr is not None]
        if random:
            return _random_result(a, b, op, val, err, random)
        method = "mpmath" if any(o.value is not None and o.value.method == "mpmath" for o in (a, b)) else "numeric"
        if err is not None and method == "mpmath":
            digits = min(digits, certified_digits(val, err, digits))
        if method == "numeric":
            return Value(float(val), "numeric", abs_err=None if err is None else float(err))
        return Value(val, "mpmath", digits=digits if digits > 0 else None, abs_err=err)


def _random_result(a, b, op, val, err, random):
    if len(random) == 2:
        sa, sb = a.value.seeds, b.value.seeds
        if not sa or not sb or set(sa) & set(sb):
            raise ValueError(
                "cannot combine two random Values that share seeds (or have none): their "
                "covariance is unknown, so the standard error cannot be propagated"
            )
    sa = a.stderr or mpmath.mpf(0)
    sb = b.stderr or mpmath.mpf(0)
    if op in "+-":
        se = mpmath.sqrt(sa**2 + sb**2)
    elif op == "*":
        se = mpmath.sqrt((b.val * sa) ** 2 + (a.val * sb) ** 2)
    else:
        se = mpmath.sqrt((sa / b.val) ** 2 + (a.val * sb / b.val**2) ** 2)
    method = "sim" if any(o.value.method == "sim" for o in random) else "mc"
    ns = [o.value.n_samples for o in random if o.value.n_samples is not None]
    bound = None if err is None or err == 0 else float(err)
    return Value(
        float(val), method, stderr=float(se), abs_err=bound, n_samples=min(ns) if ns else None, seeds=_seeds_of(a, b)
    )


def _power(x, p):
    with mpmath.workdps(_work_dps(x)):
        a, e = _operand(x), _operand(p)
    if a is None or e is None:
        return NotImplemented
    if e.exact is None:
        raise TypeError("the exponent of a Value must be an exact number (int, Fraction, SymPy)")
    pe = e.exact
    if a.exact is not None:
        if a.exact == 0 and pe.is_negative:
            raise ZeroDivisionError("0 to a negative power")
        return Value.from_exact(a.exact**pe, digits=_digits_of(a))
    digits = _digits_of(a)
    with mpmath.workdps(digits + 20):
        pm = mpmath.mpf(str(sympy.N(pe, digits + 20)))
        integer = pe.is_integer
        if a.val < 0 and not integer:
            raise ValueError("a negative Value to a non-integer power is not real")
        val = a.val**pm
        err = None
        if a.err is not None:
            lo, hi = abs(a.val) - a.err, abs(a.val) + a.err
            if lo <= 0 and (pm < 1 and pm != 0):
                raise ZeroDivisionError(f"{a.value!r} is zero within its error: x**{pe} has no error bound")
            # mean value theorem: |x^p - y^p| <= |p| max_{[lo, hi]} t^(p-1) |x - y|
            slope = abs(pm) * max(max(lo, 0) ** (pm - 1) if pm >= 1 else lo ** (pm - 1), hi ** (pm - 1))
            err = slope * a.err
        if a.stderr is not None:
            se = abs(pm * a.val ** (pm - 1)) * a.stderr
            v = a.value
            return Value(
                float(val),
                v.method,
                stderr=float(se),
                abs_err=None if not err else float(err),
                n_samples=v.n_samples,
                seeds=v.seeds,
            )
        if a.value.method == "numeric":
            return Value(float(val), "numeric", abs_err=None if err is None else float(err))
        if err is not None:
            digits = min(digits, certified_digits(val, err, digits))
        return Value(val, "mpmath", digits=digits if digits > 0 else None, abs_err=err)


def certified_digits(val, err, digits) -> int:
    """Significant digits of ``val`` certified by the absolute error ``err`` (capped at ``digits``)."""
    with mpmath.workdps(digits + 20):
        if err is None or err == 0:
            return digits
        if val == 0:
            return digits if err <= mpmath.mpf(10) ** (-digits) else 0
        return max(0, min(digits, int(mpmath.floor(-mpmath.log10(err / abs(val))))))
