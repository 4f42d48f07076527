"""Cost estimates of expressions, made before any expensive SymPy operation.

A 15-character input such as ``He(20, He(20, g))`` or ``(sin(g) + cos(g) +
tanh(g) + erf(g))**64`` asks ``sympy.expand`` for a polynomial of degree 400
or for ~10^7 terms, which hangs the tool.  These estimates are structural
(they walk the expression tree once, without expanding) and are upper bounds:

* :func:`expand_terms` -- the number of terms a full ``sympy.expand`` can
  create: a sum adds, a product multiplies, ``(t terms)**n`` gives at most
  ``C(t + n - 1, n)`` monomials; a function call counts as one term (its
  argument is bounded on its own).  With ``trig=2`` the functions that the
  exact Gaussian rules rewrite as two exponentials (``sin``, ``cos``,
  ``sinh``, ``cosh``, ``erfc``) count as two terms.
* :func:`degree` -- the polynomial degree in the variables, the largest over
  all sub-expressions (``sin(g**300)`` has degree 300).

The limits themselves (:data:`icl_symbolic.engine.expr.MAX_DEGREE`,
:data:`icl_symbolic.engine.expr.MAX_EXPAND_TERMS`, ...) are listed in
``docs/limits.md``.

>>> from icl_symbolic.engine.expr import g
>>> import sympy
>>> expand_terms((g + 1) ** 64), degree((g + 1) ** 64)
(65, 64)
>>> expand_terms((sympy.sin(g) + sympy.cos(g) + sympy.tanh(g)) ** 64)
2145
"""

from __future__ import annotations

from math import comb

import sympy

from icl_symbolic.core.caches import memoize

#: estimates are capped here (they only need to be compared with limits far below)
CAP = 10**30

_TWO_TERM = (sympy.sin, sympy.cos, sympy.sinh, sympy.cosh, sympy.erfc)


def _cap(n: int) -> int:
    return n if n < CAP else CAP


@memoize(maxsize=4096)
def _terms(e, trig: int) -> int:
    if e.is_Atom:
        return 1
    if e.is_Add:
        return _cap(sum(_terms(a, trig) for a in e.args))
    if e.is_Mul:
        out = 1
        for a in e.args:
            out = _cap(out * _terms(a, trig))
        return out
    if e.is_Pow:
        n = e.exp
        if n.is_Integer and n > 0 and e.base.has(sympy.Symbol):
            t = _terms(e.base, trig)
            if t == 1:
                return 1
            n = int(n)
            if n > 10_000 or t > 10_000:
                return CAP
            return _cap(comb(t + n - 1, n))
        return 1
    if trig > 1 and isinstance(e, _TWO_TERM):
        return 2
    return 1


def expand_terms(e, trig: int = 1) -> int:
    """Upper bound on the number of terms of ``sympy.expand(e)`` (capped at :data:`CAP`)."""
    return _terms(sympy.S(e), int(trig))


@memoize(maxsize=4096)
def _degree(e) -> tuple:
    """(degree of e as a polynomial in its symbols, largest degree of any sub-expression)."""
    if e.is_Symbol:
        return 1, 1
    if e.is_Atom:
        return 0, 0
    inner = [_degree(a) for a in e.args]
    worst = max((w for _, w in inner), default=0)
    if e.is_Add:
        d = max(d for d, _ in inner)
    elif e.is_Mul:
        d = sum(d for d, _ in inner)
    elif e.is_Pow and e.exp.is_Integer and e.exp > 0:
        d = int(e.exp) * inner[0][0]
    else:
        d = 0  # a function call or a non-polynomial power is an atom of degree 0 here
    d = min(d, CAP)
    return d, max(worst, d)


def degree(e) -> int:
    """Largest polynomial degree of any sub-expression of ``e`` (in its free symbols)."""
    return _degree(sympy.S(e))[1]


def poly_degree(e) -> int:
    """Polynomial degree of ``e`` itself (function calls count as constants)."""
    return _degree(sympy.S(e))[0]


def composed_hermite_cost(m: int, x) -> tuple[int, int]:
    """(degree, term bound) of ``expand(He_m(x))``, computed before building it."""
    x = sympy.S(x)
    t = expand_terms(x)
    d = poly_degree(x)
    if t == 1:
        return m * max(d, 1), m // 2 + 1
    terms = 0
    for j in range(m, -1, -2):
        terms = _cap(terms + (comb(t + j - 1, j) if t < 10_000 else CAP))
    return m * d, terms
