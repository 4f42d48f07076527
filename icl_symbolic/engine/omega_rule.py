r"""Gauss quadrature for the task norm omega = |w|^2/d of Gaussian tasks w ~ N(0, I_d).

Paper: tasks w ~ N(0, I_d) (Sec. 2, Eq. (1), p. 2); omega = |w|^2/d ~ chi^2_d/d, whose
fluctuation Appendix A (p. 7) discusses.  The isotropic test functional and the kernel
learner's Gaussian-task law average a smooth function of omega over this law.

With ``t = d omega/2 ~ Gamma(d/2)`` this is generalised Gauss-Laguerre quadrature with
``alpha = d/2 - 1``.  SciPy's ``roots_genlaguerre`` returns weights that sum to
``Gamma(d/2)``, which overflows float64 above d of about 342 (every weight inf, the average
nan).  Here the rule is built by the Golub-Welsch method directly for omega and for the
*normalised* law: the Jacobi matrix of the monic Laguerre recurrence (diagonal
``2k + alpha + 1``, off-diagonal ``sqrt(k (k + alpha))``) scaled by ``2/d`` has the omega nodes as
eigenvalues, and the squared first components of its unit eigenvectors are the weights of a
probability law (they sum to 1 at every d).  The scaled diagonal is ``1 + 4k/d``: the matrix is
well conditioned for every d, large or small.

>>> om, w = omega_rule(8, 4096)
>>> round(float(w.sum()), 12), round(float(w @ om), 12), round(float(w @ (om - 1) ** 2 * 4096 / 2), 10)
(1.0, 1.0, 1.0)
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh_tridiagonal

from icl_symbolic.core.errors import ICLError

__all__ = ["omega_rule"]


def omega_rule(n: int, d) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights (summing to 1) of the n-point Gauss rule for omega ~ chi^2_d / d.

    Exact for polynomials in omega of degree <= 2n - 1 (up to float64 rounding): E[omega] = 1,
    Var(omega) = 2/d.  ``d`` > 0 (not necessarily an integer); ``n`` >= 1.
    """
    n = int(n)
    d = float(d)
    if n < 1:
        raise ICLError(f"a Gauss rule needs n >= 1 nodes, got {n}")
    if not (np.isfinite(d) and d > 0):
        raise ICLError(f"the task-norm law chi^2_d/d needs a finite d > 0, got {d}")
    k = np.arange(n, dtype=float)
    alpha = d / 2.0 - 1.0
    scale = 2.0 / d
    diag = (2.0 * k + alpha + 1.0) * scale
    off = np.sqrt(k[1:] * (k[1:] + alpha)) * scale
    nodes, vecs = eigh_tridiagonal(diag, off)
    weights = vecs[0, :] ** 2
    return nodes, weights / weights.sum()
