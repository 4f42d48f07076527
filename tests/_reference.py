"""Independent references for the tests: Gaussian expectations computed without the package.

One home for what several test files need (the pattern of SciPy's ``_mptestutils``):

* :func:`gauss_mp`: E[F(t)], t ~ N(0, 1), by mpmath's adaptive quadrature on the
  whole line, split where the caller knows F is not smooth;
* :func:`normal_moment`: E[t^k] exactly ((k - 1)!! for even k, 0 for odd k);
* :func:`gauss_poly`: E[p(t)] of a SymPy polynomial exactly, from those moments.

None of them calls :mod:`icl_symbolic`, so a test comparing the package with
them compares two independent computations.
"""

from __future__ import annotations

import math

import mpmath
import sympy


def gauss_mp(fun, dps: int = 60, splits=(0,)):
    """E[fun(t)], t ~ N(0, 1), by ``mpmath.quad`` over (-inf, splits..., inf) at ``dps`` digits.

    >>> float(gauss_mp(lambda t: t * t, dps=30))
    1.0
    """
    with mpmath.workdps(dps):
        pts = [-mpmath.inf, *[mpmath.mpf(s) for s in splits], mpmath.inf]
        return mpmath.quad(lambda t: fun(t) * mpmath.npdf(t), pts)


def normal_moment(k: int) -> int:
    """E[t^k], t ~ N(0, 1): (k - 1)!! for even k >= 0, 0 for odd k.

    >>> [normal_moment(k) for k in range(7)]
    [1, 0, 1, 0, 3, 0, 15]
    """
    return 0 if k % 2 else math.prod(range(k - 1, 0, -2))


def gauss_poly(expr, t):
    """E[expr(t)], t ~ N(0, 1), exactly, for a SymPy polynomial in ``t``.

    >>> x = sympy.Symbol("x")
    >>> gauss_poly(x**4 + 3*x + 2, x)
    5
    """
    poly = sympy.Poly(sympy.expand(expr), t)
    return sum(cf * normal_moment(k) for (k,), cf in poly.terms())
