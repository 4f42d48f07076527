"""The scale-mismatch search: what a number is among a teacher's quantities."""

from __future__ import annotations

from icl_symbolic.core import defaults as D
from icl_symbolic.diagnosis.scale import Diagnosis, diagnose_value


def diagnose(value, f, *, rho=D.RHO, tol=None, required=None, digits: int = D.DIGITS) -> Diagnosis:
    """Name what ``value`` is among teacher ``f``'s quantities (rho, E[f^2], rho_f,
    rho_nonlinear, a1, their ratios, ...): the scale-mismatch search behind the
    Fig. 1 caption finding (Eq. (8), p. 3; Fig. 1, p. 4)."""
    return diagnose_value(value, f=f, rho_value=rho, tol=tol, required=required, digits=digits)


__all__ = ["diagnose", "Diagnosis"]
