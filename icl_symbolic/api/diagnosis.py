"""The scale-mismatch search: what a number is among a teacher's quantities."""

from __future__ import annotations

import numpy as np

from icl_symbolic.core import defaults as D
from icl_symbolic.diagnosis.curves import curve_on_grid, explain_curve, read_curve
from icl_symbolic.diagnosis.scale import Diagnosis, diagnose_value, to_mpf, tolerance_from_text
from icl_symbolic.diagnosis.slips import catalogue, diagnose_formula, diagnose_number, parse_quantity, teacher_context
from icl_symbolic.output.plotting import slip_curve_figure


def diagnose(value, f, *, rho=D.RHO, tol=None, required=None, digits: int = D.DIGITS) -> Diagnosis:
    """Name what ``value`` is among teacher ``f``'s quantities (rho, E[f^2], rho_f,
    rho_nonlinear, a1, their ratios, ...): the scale-mismatch search behind the
    Fig. 1 finding (the Sec. 3 text on it, p. 3) (Eq. (8), p. 3; Fig. 1, p. 4)."""
    return diagnose_value(value, f=f, rho_value=rho, tol=tol, required=required, digits=digits)


def plot_curve_explanation(rep, ctx, x, title: str = ""):
    """A claimed curve (``x``: its abscissae), the theory and the best error model on a dense grid of their
    own (the plot of ``diagnose --curve --plot``; ``rep`` from :func:`explain_curve`)."""
    lo, hi = float(np.min(x)), float(np.max(x))
    gx = np.geomspace(lo, hi, 200) if hi > lo else np.asarray(x, float)
    return slip_curve_figure(rep, (gx, curve_on_grid(rep, ctx, gx), curve_on_grid(rep, ctx, gx, rep.best)), title)


__all__ = [
    "diagnose",
    "Diagnosis",
    "catalogue",
    "diagnose_formula",
    "diagnose_number",
    "diagnose_value",
    "explain_curve",
    "parse_quantity",
    "plot_curve_explanation",
    "read_curve",
    "teacher_context",
    "to_mpf",
    "tolerance_from_text",
]
