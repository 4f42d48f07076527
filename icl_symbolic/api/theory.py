"""Result 1, Eq. (9); Eq. (10): the d -> infinity error, one value or a curve, and its plot."""

from __future__ import annotations

import math

import numpy as np

from icl_symbolic.api._args import grid as _grid
from icl_symbolic.core import defaults as D
from icl_symbolic.core.cost import announced
from icl_symbolic.core.errors import ICLError
from icl_symbolic.output.plotting import theory_curve_figure
from icl_symbolic.theory.asymptotic import (
    ERRORS,
    MAX_POINTS,
    Ratios,
    TaskCovariances,
    TheoryCurve,
    appendix_a_warnings,
    check_grid,
    curve,
    sweep_estimate,
    teacher_moments,
)
from icl_symbolic.theory.asymptotic import e_nonlinear as _e_nonlinear
from icl_symbolic.theory.finite_d import TERMS as FINITE_D_TERMS
from icl_symbolic.theory.finite_d import e_finite_d_many, e_nonlinear_finite
from icl_symbolic.theory.finite_d_guard import check_finite_d_teacher
from icl_symbolic.theory.peak import DIVERGES


def e_nonlinear(
    f,
    *,
    rho=D.RHO,
    alpha=D.ALPHA,
    kappa=D.KAPPA,
    tau=D.TAU,
    lam=D.LAM,
    d=None,
    C_train=D.C_TRAIN,
    C_test=None,
    digits: int = D.DIGITS,
    error: str = "icl",
):
    """The d -> infinity ICL error for teacher ``f`` (Result 1, Eq. (9), p. 3; a1 = 0: Eq. (10)).

    With scalars, a :class:`Value` (``numeric``: a deterministic float64
    computation).  With a list for any of ``rho, alpha, kappa, tau, lam``, a
    :class:`TheoryCurve` over their cartesian product; a ridgeless point at
    tau = 1 is marked as diverging (``e = inf`` with a reason) instead of
    stopping the sweep.  ``d`` matters only for non-identity covariance families.
    ``error``: ``icl`` (default), ``idg`` (the test task is one of the k pretraining
    tasks) or ``gap`` (icl - idg); docs/idg.md.
    """
    grids = {k: _grid(v, k) for k, v in (("rho", rho), ("alpha", alpha), ("kappa", kappa), ("tau", tau), ("lam", lam))}
    ratios, tasks = Ratios(**grids), TaskCovariances(C_train, C_test, d)
    if any(isinstance(v, np.ndarray) for v in grids.values()):
        return curve(f, ratios, tasks, digits=digits, error=error)
    return _e_nonlinear(f, ratios, tasks, digits=digits, error=error)


def e_linear(
    *,
    rho=D.RHO,
    alpha=D.ALPHA,
    kappa=D.KAPPA,
    tau=D.TAU,
    lam=D.LAM,
    d=None,
    C_train=D.C_TRAIN,
    C_test=None,
    error: str = "icl",
):
    """The ICL error of the linear teacher y = w^T x + noise (e_ICL^linear of Result 1, Eq. (9), p. 3).

    Same conventions as :func:`e_nonlinear` with f(g) = g (a1 = 1, rho_nonlinear = rho).
    """
    return e_nonlinear(
        "g", rho=rho, alpha=alpha, kappa=kappa, tau=tau, lam=lam, d=d, C_train=C_train, C_test=C_test, error=error
    )


def plot_theory(curve: TheoryCurve, *, log: bool = False):
    """e against the first swept parameter of a :class:`TheoryCurve` (the plot of ``theory --plot``):
    one line per combination of the other swept parameters, the floor rho_nonlinear, the
    tau = 1 peak marked; ``log``: logarithmic x axis."""
    if not isinstance(curve, TheoryCurve):
        raise ICLError("plot_theory takes a TheoryCurve (e_nonlinear with a list for some parameter)")
    swept = ("rho", "alpha", "kappa", "lam", "tau")
    grids = {k: np.unique(curve.columns[k]) for k in swept}
    return theory_curve_figure(curve, grids, swept, log)


def theory_sweep(
    f,
    C_train=D.C_TRAIN,
    C_test=None,
    *,
    rho,
    alpha,
    kappa,
    tau,
    lam,
    d=None,
    digits: int = D.DIGITS,
    progress=None,
    error: str = "icl",
    moments_progress=None,
):
    """The curve of ``theory``: e over the product of the grids (arrays), always a :class:`TheoryCurve`,
    and the Appendix A warnings of the covariances.  Refuses a product over :data:`MAX_POINTS`, and
    resolves the covariances, before the teacher's coefficients are computed.  ``error``: ``icl``,
    ``idg`` or ``gap`` (docs/idg.md); ``progress`` reports the sweep, ``moments_progress`` the
    teacher's coefficients (a long quadrature announces its estimate there).

    ``progress``, a callable taking one line: a sweep estimated above a few seconds
    (:func:`icl_symbolic.theory.asymptotic.sweep_estimate`) is announced there before anything
    is computed, then reports its progress with an ETA."""
    grids = {"rho": rho, "alpha": alpha, "kappa": kappa, "tau": tau, "lam": lam}
    n = math.prod(int(np.size(g)) for g in grids.values())
    est = sweep_estimate(n, C_train, C_test, d)  # refuses past MAX_POINTS, with the estimate
    warnings = appendix_a_warnings(C_train, C_train if C_test is None else C_test, d)
    check_grid(rho, alpha, kappa, tau, lam, C_train, C_test, d)  # the given parameters, before the moments
    watch = announced(progress, est, total=n, unit="points")
    moments = teacher_moments(f, digits, progress=moments_progress)
    cv = curve(
        moments,
        Ratios(**grids),
        TaskCovariances(C_train, C_test, d),
        digits=digits,
        progress=lambda i, k: watch.update(i, k),
        error=error,
    )
    return cv, warnings


def e_finite_d(f, *, rho, alpha, kappa, tau, d: int, order: int = 1, terms=None):
    """The d -> infinity error plus the O(1/d) terms at dimension ``d`` (:mod:`icl_symbolic.theory.finite_d`,
    docs/finite-d.md; identity covariances, ridgeless, Gaussian tasks): the limit, the corrected value and
    each term, as ``theory --d D --order 1`` prints them."""
    check_finite_d_teacher(f, [rho])
    return e_nonlinear_finite(f, rho=rho, alpha=alpha, kappa=kappa, tau=tau, d=d, order=order, terms=terms)


def e_finite_d_points(f, points, *, d: int, terms=None, progress=None) -> list:
    """:func:`e_finite_d` at each ``(rho, alpha, kappa, tau)`` of ``points``, what ``theory --d D --order 1``
    prints: one :class:`~icl_symbolic.theory.finite_d.FiniteD` per point, or the :class:`ICLError` that says
    why the point has no value.  The time estimate goes to ``progress`` first when the work is long (the
    ``population`` term costs 40-70 s a point above the peak), then a line per point."""
    check_finite_d_teacher(f, sorted({r for r, _, _, _ in points}))
    specs = [dict(f=f, rho=r, alpha=a, kappa=k, tau=t, d=d, terms=terms) for r, a, k, t in points]
    return e_finite_d_many(
        specs, progress=progress, reduce="fewer points, --terms without population", keep_errors=True
    )


__all__ = [
    "e_nonlinear",
    "e_linear",
    "theory_sweep",
    "plot_theory",
    "e_finite_d",
    "e_finite_d_points",
    "TheoryCurve",
    "DIVERGES",
    "MAX_POINTS",
    "ERRORS",
    "FINITE_D_TERMS",
]
