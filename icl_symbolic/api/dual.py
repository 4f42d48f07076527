"""Dual kernels (NNGP and derivative maps) of a teacher, single layer and deep; Sec. 2, Eq. (2), p. 2."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.dual import DualPoint, dual_map
from icl_symbolic.engine.dual_deep import DeepGram, DeepPair, deep_gram, deep_pair
from icl_symbolic.engine.expr import teacher
from icl_symbolic.engine.gauss import to_rational
from icl_symbolic.output.io import atomic_path, check_output_path
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


#: the largest depth the CLI accepts (a bounded time: Arb balls or the float64 Gram, about linear in L)
MAX_DEPTH = 100


def check_deep_options(depth, sigma_w2, sigma_b2) -> tuple:
    """One-line ICLError for a depth outside 1..MAX_DEPTH or sigma_w2 <= 0, sigma_b2 < 0; the exact
    variances otherwise."""
    if not 1 <= depth <= MAX_DEPTH:
        raise ICLError(f"--depth must be between 1 and {MAX_DEPTH}, got {depth}")
    sw, sb = to_rational(sigma_w2, "--sigma-w2"), to_rational(sigma_b2, "--sigma-b2")
    if not sw.is_positive or sb.is_negative:
        raise ICLError(f"need --sigma-w2 > 0 and --sigma-b2 >= 0, got {sigma_w2}, {sigma_b2}")
    return sw, sb


def read_vector(text: str, name: str) -> list:
    """Comma-separated exact numbers; one-line ICLError otherwise."""
    return [to_rational(v.strip(), name) for v in str(text).split(",")]


def load_gram_input(path) -> np.ndarray:
    """The data set of ``dual --gram``: a .npy file holding a finite 2-D float array (rows are
    inputs, none zero); one-line ICLError otherwise."""
    p = Path(path)
    if p.suffix.lower() != ".npy":
        raise ICLError(f"--gram: {str(path)!r} must be a .npy file")
    if not p.is_file():
        raise ICLError(f"--gram: no such file {str(path)!r}")
    try:
        X = np.load(p, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ICLError(f"--gram: cannot read {str(path)!r} as a numpy array ({exc})") from None
    if X.dtype.kind not in "iuf" or X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ICLError(f"--gram: need a 2-D numeric array (rows are inputs), got shape {X.shape} of {X.dtype}")
    X = X.astype(float)
    if not np.all(np.isfinite(X)) or np.any(np.all(X == 0, axis=1)):
        raise ICLError("--gram: the array must be finite with no zero row")
    return X


def check_gram_output(path) -> None:
    """One-line ICLError for an --out path that is not a writable .npy file."""
    check_output_path(path, "--out", (".npy",))


def save_gram(path, G: DeepGram, kernel: str) -> None:
    """The NNGP or NTK matrix of ``G`` to a .npy file, atomically (no partial file)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, G.nngp if kernel == "nngp" else G.ntk)


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
    "check_deep_options",
    "read_vector",
    "load_gram_input",
    "check_gram_output",
    "save_gram",
]
