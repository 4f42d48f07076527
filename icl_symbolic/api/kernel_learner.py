"""The kernel learner (ours, docs/kernel.md): its predicted ICL error over the learner's ratios."""

from __future__ import annotations

import math

import numpy as np

from icl_symbolic.api._args import grid, number
from icl_symbolic.core import defaults as D
from icl_symbolic.core.cost import SECONDS_PER, Estimate, announced
from icl_symbolic.core.errors import ICLError
from icl_symbolic.kernel_learner.theory import KernelCurve, kernel_curve, parse_features
from icl_symbolic.output.plotting import kernel_curve_figure
from icl_symbolic.theory.asymptotic import MAX_POINTS, Ratios

#: the learner's ratios ell/D, k/D, n/D^2 of the command's defaults (they differ from plain attention's)
ALPHA, KAPPA, TAU = 16.0, 4.0, 4.0
#: the input dimension for hermite:K features when none is given
DEFAULT_D = 16


def kernel(
    f,
    *,
    features="hermite:2",
    rho=D.RHO,
    alpha=ALPHA,
    kappa=KAPPA,
    tau=TAU,
    lam=D.LAM,
    d=None,
    tasks: str = "gaussian",
    digits: int = D.DIGITS,
    progress=None,
) -> KernelCurve:
    """Linear attention on the features ``identity`` or ``hermite:K`` of the input: the mode split, the
    task spectrum of the D-dimensional linear problem, rho_eff, and the predicted error over the grid of
    ``alpha, kappa, tau, lam`` (the learner's ratios ell/D, k/D, n/D^2; lists sweep), next to plain
    attention at the same ell, k, n.  ``d`` defaults to the command's (identity without ``d``: the
    paper's d -> infinity theory).  A ridgeless tau = 1 is reported as e = inf with the reason.

    ``progress``, a callable taking one line: a sweep estimated above a few seconds
    (:data:`icl_symbolic.core.cost.SECONDS_PER` ``kernel_point`` per point) is announced there before
    anything is computed (and refused past the ceiling without a budget), then reports its progress
    with an ETA."""
    fm = parse_features(features)
    dd = d if d is not None else (None if fm.is_identity else DEFAULT_D)
    grids = {k: grid(v, k) for k, v in (("alpha", alpha), ("kappa", kappa), ("tau", tau), ("lam", lam))}
    n = math.prod(int(np.size(g)) for g in grids.values())
    est = Estimate(
        n * SECONDS_PER["kernel_point"],
        n,
        "grid points",
        f"kernel: {n} points",
        "fewer grid points (a smaller n in a:b:n)",
    )
    if n > MAX_POINTS:  # before the teacher's coefficients are computed
        raise ICLError(est.refusal(f"{MAX_POINTS} points, the product of the grids"))
    watch = announced(progress, est, total=n, unit="points")
    return kernel_curve(
        f,
        fm,
        Ratios(number(rho, "rho"), **grids),
        d=dd,
        tasks=tasks,
        digits=digits,
        progress=lambda i, k: watch.update(i, k),
    )


def plot_kernel(kc: KernelCurve):
    """The predicted error of the learner and of plain attention against the first swept ratio, with both
    floors (the plot of ``kernel --plot``)."""
    if not isinstance(kc, KernelCurve):
        raise ICLError("plot_kernel takes a KernelCurve (from kernel)")
    grids = {k: np.unique(kc.columns[k]) for k in ("alpha", "kappa", "lam", "tau")}
    return kernel_curve_figure(kc, grids)


__all__ = ["kernel", "plot_kernel", "KernelCurve", "DEFAULT_D"]
