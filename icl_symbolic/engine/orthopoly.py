r"""Hermite polynomials in the paper's convention (Sec. 2, Eq. (2), p. 2).

``He_m`` is the monic probabilists' Hermite polynomial (weight
``exp(-g^2/2)``, SymPy ``hermite_prob_poly``) and ``h_m = He_m / sqrt(m!)`` its
orthonormal version, ``E[h_m(g) h_j(g)] = delta_mj`` for ``g ~ N(0, 1)``.  The
convention is stated in full in :mod:`icl_symbolic.engine.hermite`.

This module sits below the parser (:mod:`icl_symbolic.engine.expr` builds ``He(m, x)``
and ``h(m, x)`` with it) and below :mod:`icl_symbolic.engine.hermite`, so neither
imports the other for the polynomials.
"""

from __future__ import annotations

import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.symbols import g

__all__ = ["he", "h"]


def he(m: int, x=g):
    """Monic probabilists' Hermite polynomial He_m(x) (weight exp(-x^2/2)).

    >>> he(3)
    g**3 - 3*g
    """
    m = int(m)
    if m < 0:
        raise ICLError(f"Hermite order must be non-negative, got {m}")
    return sympy.expand(sympy.hermite_prob_poly(m, g).subs(g, x)) if x is not g else sympy.hermite_prob_poly(m, g)


def h(m: int, x=g):
    """Orthonormal probabilists' Hermite polynomial h_m = He_m / sqrt(m!).

    >>> h(2)
    sqrt(2)*(g**2 - 1)/2
    """
    return he(m, x) / sympy.sqrt(sympy.factorial(int(m)))
