"""Steps 4-5 of the linear ICL error (docs/linear-theory.md): the one definition.

Given the Stieltjes transform M, M' at nu = rho_tr/alpha + xi and the two
C_test traces (1/d) tr(C_test F), (1/d) tr(C_test F2), the error is

    c = (rho + nu - nu^2 M - xi (1 - 2 nu M - nu^2 M')) / (tau - (1 - 2 xi M - xi^2 M'))
    e = rho + (rho_te/alpha) (1 + (c - 2 nu) M + (xi c - nu^2) M') + c trF - (c xi - nu^2) trF2.

The function is plain arithmetic, so the same definition serves floats
(:func:`icl_symbolic.theory.asymptotic.e_linear`) and SymPy expressions (the a1 = 0
derivation in :mod:`icl_symbolic.theory.a1zero`).

>>> round(linear_error(M=0.5, Mp=-0.25, rho=0.1, alpha=2.0, tau=2.0, xi=0.0, rho_tr=1.1, rho_te=1.1,
...                    trF=0.4, trF2=0.2), 12)
0.78625
"""

from __future__ import annotations


# over the parameter limit: the ten quantities of steps 4-5; also called from theory/finite_d
def linear_error(M, Mp, rho, alpha, tau, xi, rho_tr, rho_te, trF, trF2):  # noqa: PLR0913
    """The asymptotic linear ICL error from steps 4-5 (floats or SymPy expressions)."""
    nu = rho_tr / alpha + xi
    c = (rho + nu - nu**2 * M - xi * (1 - 2 * nu * M - nu**2 * Mp)) / (tau - (1 - 2 * xi * M - xi**2 * Mp))
    return rho + (rho_te / alpha) * (1 + (c - 2 * nu) * M + (xi * c - nu**2) * Mp) + c * trF - (c * xi - nu**2) * trF2
