r"""Ball arithmetic (Arb, through python-flint) for the closed-form deep recursions.

The closed forms of :mod:`icl_symbolic.engine.dual` (arc-cosine kernels of Cho and Saul 2009, the
erf kernel of Williams 1997, ...) composed over L layers grow into SymPy expressions that take
minutes to build beyond depth 3.  Here each layer is evaluated instead in Arb's ball arithmetic:
every number is a midpoint with a proven radius, every operation (including acos, asin, erf at
the layer's balls) returns a ball that contains the exact result, so the radius at the last layer
is a rigorous error bound for the whole recursion.  Where a ball leaves the domain of a function
(acos of a ball that pokes past 1 at |rho| = 1) Arb returns an indeterminate ball and the caller
refuses.

The evaluator reads only the node types of the closed-form table (sums, products, powers,
rationals, pi, and the functions in :data:`FUNCTIONS`); anything else raises
:class:`ValidityError`.  Paper: the dual kernel of Sec. 2, Eq. (2), p. 2 of arXiv:2610.10761.
"""

from __future__ import annotations

import mpmath
import sympy
from flint import arb, arb_series, ctx, fmpq

from icl_symbolic.core.errors import ValidityError

__all__ = ["FUNCTIONS", "evaluate", "from_rational", "taylor", "to_mpmath", "working_precision"]

#: SymPy function -> the name of the arb method that encloses it
FUNCTIONS = {
    sympy.acos: "acos",
    sympy.asin: "asin",
    sympy.atan: "atan",
    sympy.exp: "exp",
    sympy.sinh: "sinh",
    sympy.cosh: "cosh",
    sympy.sin: "sin",
    sympy.cos: "cos",
    sympy.erf: "erf",
    sympy.log: "log",
}


class working_precision:
    """Context manager: Arb's working precision in bits and, when given, the length of its power
    series (``ctx.cap``, 10 by default: a longer series is truncated without notice); both restored
    on exit."""

    def __init__(self, bits: int, series_length: int | None = None):
        self.bits = bits
        self.length = series_length

    def __enter__(self):
        self.saved = (ctx.prec, ctx.cap)
        ctx.prec = self.bits
        if self.length is not None:
            ctx.cap = self.length
        return self

    def __exit__(self, *exc):
        ctx.prec, ctx.cap = self.saved


def from_rational(x) -> arb:
    """The ball of an exact rational (a point when it is dyadic, else radius one ulp)."""
    x = sympy.Rational(x)
    return arb(fmpq(int(x.p), int(x.q)))


def evaluate(expr, env: dict) -> arb:
    """An arb ball containing the value of the SymPy expression ``expr``, its symbols taken from
    ``env`` (symbol -> arb).  Raises ValidityError for a node outside the closed-form table."""
    if expr in env:
        return env[expr]
    if expr.is_Rational:
        return from_rational(expr)
    if expr is sympy.pi:
        return arb.pi()
    if expr is sympy.E:
        return arb(1).exp()
    if isinstance(expr, sympy.Add):
        out = arb(0)
        for a in expr.args:
            out += evaluate(a, env)
        return out
    if isinstance(expr, sympy.Mul):
        out = arb(1)
        for a in expr.args:
            out *= evaluate(a, env)
        return out
    if isinstance(expr, sympy.Pow):
        return _power(evaluate(expr.base, env), expr.exp, env)
    name = FUNCTIONS.get(expr.func)
    if name is not None and len(expr.args) == 1:
        return getattr(evaluate(expr.args[0], env), name)()
    raise ValidityError(f"no ball evaluation for {expr.func.__name__} in a closed form")


#: SymPy function -> its enclosure on an Arb power series (Taylor coefficients with proven radii)
SERIES_FUNCTIONS = {
    sympy.exp: lambda s: s.exp(),
    sympy.sin: lambda s: s.sin(),
    sympy.cos: lambda s: s.cos(),
    sympy.atan: lambda s: s.atan(),
    sympy.erf: lambda s: s.erf(),
    sympy.tanh: lambda s: 1 - 2 / ((2 * s).exp() + 1),
    sympy.sinh: lambda s: (s.exp() - (-s).exp()) / 2,
    sympy.cosh: lambda s: (s.exp() + (-s).exp()) / 2,
}


def taylor(expr, var, x: arb, n: int) -> list | None:
    """[expr^(j)(x) / j!, j < n] as arb balls, from one power series in ``var`` at x (the caller
    sets the series length, ``working_precision(.., series_length=n)``); None when expr has a node
    without a series enclosure here (then the caller evaluates otherwise)."""
    try:
        out = _taylor(expr, var, arb_series([x, 1], prec=n))
    except ValidityError:
        return None
    co = out.coeffs() if isinstance(out, arb_series) else [out]
    return co + [arb(0)] * (n - len(co))


def _taylor(expr, var, s):
    if not expr.has(var):
        return evaluate(expr, {})
    if expr == var:
        return s
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        parts = [_taylor(a, var, s) for a in expr.args]
        out = parts[0]
        for p in parts[1:]:
            out = out + p if isinstance(expr, sympy.Add) else out * p
        return out
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and not expr.exp.has(var):
        base = _taylor(expr.base, var, s)
        return base ** int(expr.exp) if expr.exp >= 0 else 1 / base ** int(-expr.exp)
    fn = SERIES_FUNCTIONS.get(expr.func)
    if fn is not None and len(expr.args) == 1:
        return fn(_taylor(expr.args[0], var, s))
    raise ValidityError(f"no series enclosure for {expr.func.__name__}")


def _power(base: arb, e, env) -> arb:
    if e.is_Integer:
        return base ** int(e)
    if e.is_Rational and e.q == 2:
        return base.sqrt() ** int(e.p)
    return base ** evaluate(e, env)


def to_mpmath(x: arb) -> tuple:
    """(midpoint, radius) of a ball as mpmath numbers; the midpoint exactly, the radius rounded up
    (raises ValidityError for a non-finite ball)."""
    if not x.is_finite():
        raise ValidityError("the ball is not finite (a closed form left its domain)")
    man, exp = x.mid().man_exp()
    rman, rexp = x.rad().man_exp()
    mid = mpmath.mpf((int(man), int(exp))) if int(man) else mpmath.mpf(0)
    rad = mpmath.mpf((int(rman), int(rexp))) if int(rman) else mpmath.mpf(0)
    return mid, rad
