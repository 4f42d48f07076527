"""Dual kernels (NNGP and derivative maps) of a teacher, single layer and deep; Sec. 2, Eq. (2), p. 2."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.dual import DualPoint, dual_map
from icl_symbolic.engine.dual_deep import DeepGram, DeepPair, deep_gram, deep_pair
from icl_symbolic.engine.expr import teacher
from icl_symbolic.engine.gauss import to_rational
from icl_symbolic.output.plotting import dual_figure
from icl_symbolic.output.rows import Rows


@dataclass(frozen=True)
class DualGrid(Rows):
    """K_f and Kdot_f over a list of covariances (one :class:`DualPoint` each)."""

    label: str
    digits: int
    results: tuple

    def points(self) -> list[dict]:
        """One row per point: q1, q2, c, rho, nngp, derivative (decimal strings), routes, provenance."""
        return [p.to_json(self.digits) for p in self.results]


def dual_kernel(f, rhos=None, *, q1=1, q2=1, c=None, digits: int = 30, derivative: bool = True) -> DualGrid:
    """The NNGP map E[f(u) f(v)] and the derivative map E[f'(u) f'(v)] of ``f``, certified.

    Either ``c`` (one covariance with variances q1, q2) or ``rhos`` (correlations; c = rho
    sqrt(q1 q2), which needs sqrt(q1 q2) rational).  Every number is a Value labelled exact
    (closed form), or mpmath with its proven bound (Hermite series, endpoint series or
    quadrature): see :mod:`icl_symbolic.engine.dual`.
    """
    T = teacher(f)
    q1r, q2r = to_rational(q1, "q1"), to_rational(q2, "q2")
    if (rhos is None) == (c is None):
        raise ICLError("give either c (one covariance) or rhos (a grid of correlations)")
    if c is not None:
        cs = [to_rational(c, "c")]
    else:
        root = sympy.sqrt(q1r * q2r)
        if not root.is_rational:
            raise ICLError("a rho grid needs sqrt(q1 q2) rational (else give c)")
        cs = [to_rational(r, "rho") * root for r in rhos]
    return DualGrid(T.label, digits, tuple(dual_map(T, q1r, q2r, ci, digits, derivative) for ci in cs))


def read_exact(text, name: str):
    """An exact rational from a user's number (``"0.1"`` is 1/10); one-line ICLError otherwise."""
    return to_rational(text, name)


def plot_dual(grid: DualGrid):
    """The figure of ``dual --plot``: both maps against rho."""
    return dual_figure(grid.label, grid.points())


__all__ = [
    "DualGrid",
    "DualPoint",
    "DeepGram",
    "DeepPair",
    "dual_kernel",
    "dual_map",
    "deep_gram",
    "deep_pair",
    "plot_dual",
]
