"""Steps 4-5 of the linear ICL error (docs/linear-theory.md): the one definition.

Given the Stieltjes transform M, M' at nu = rho_tr/alpha + xi and the two
C_test traces (1/d) tr(C_test F), (1/d) tr(C_test F2), the error is

    c = (rho + nu - nu^2 M - xi (1 - 2 nu M - nu^2 M')) / (tau - (1 - 2 xi M - xi^2 M'))
    e = rho + (rho_te/alpha) (1 + (c - 2 nu) M + (xi c - nu^2) M') + c trF - (c xi - nu^2) trF2.

The quantities of steps 1-3 (the resolvent and the two label moments) travel as one
:class:`Resolvent` record.  The function is plain arithmetic, so the same definition serves
floats (:func:`icl_symbolic.theory.asymptotic.e_linear`, :mod:`icl_symbolic.theory.finite_d`)
and SymPy expressions (the a1 = 0 derivation in :mod:`icl_symbolic.theory.a1zero`).

>>> q = Resolvent(M=0.5, Mp=-0.25, xi=0.0, rho_tr=1.1, rho_te=1.1, trF=0.4, trF2=0.2)
>>> round(linear_error(q, rho=0.1, alpha=2.0, tau=2.0), 12)
0.78625
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Resolvent:
    """Steps 1-3 of the recipe at one point (floats or SymPy expressions).

    ``M``, ``Mp``: the Stieltjes transform M(nu) and its derivative M'(nu) at nu = rho_tr/alpha + xi;
    ``xi``: the root of step 1 (0 for tau > 1 ridgeless); ``rho_tr``, ``rho_te``: the label moments
    tr(C_train)/d + rho and tr(C_test)/d + rho; ``trF``, ``trF2``: (1/d) tr(C_test F) and
    (1/d) tr(C_test F2) of step 3.  Built by the callers of :func:`linear_error`
    (``theory.asymptotic._error``, ``theory.finite_d``, ``theory.a1zero``).
    """

    M: object
    Mp: object
    xi: object
    rho_tr: object
    rho_te: object
    trF: object
    trF2: object


def linear_error(q: Resolvent, rho, alpha, tau):
    """The asymptotic linear ICL error from steps 4-5 (floats or SymPy expressions): the noise
    variance ``rho``, the ratios ``alpha = ell/d`` and ``tau = n/d^2``, the quantities ``q`` of steps 1-3."""
    M, Mp, xi, rho_tr, rho_te, trF, trF2 = q.M, q.Mp, q.xi, q.rho_tr, q.rho_te, q.trF, q.trF2
    nu = rho_tr / alpha + xi
    c = (rho + nu - nu**2 * M - xi * (1 - 2 * nu * M - nu**2 * Mp)) / (tau - (1 - 2 * xi * M - xi**2 * Mp))
    return rho + (rho_te / alpha) * (1 + (c - 2 * nu) * M + (xi * c - nu**2) * Mp) + c * trF - (c * xi - nu**2) * trF2
