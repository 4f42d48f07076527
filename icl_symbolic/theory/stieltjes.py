"""Stieltjes transform M(nu) of the task sample covariance, deterministically.

Paper: Result 1, Eq. (9), p. 3 and Appendix C, p. 10 reuse the linear theory
(Lu et al., arXiv:2405.11751; Letey, Lu, Pehlevan 2025), whose error formula
needs ``M(nu) = lim (1/d) tr (S + nu I)^{-1}`` with
``S = (1/k) sum_j w_j w_j^T``, ``w_j ~ N(0, C_train)``, ``k = kappa d``, and
its derivative ``M'(nu)``.

Deterministic equivalent (Silverstein / Marchenko-Pastur).  With
``a(nu) = 1 - 1/kappa + nu M(nu)/kappa``::

    M(nu) = (1/d) sum_j 1 / (a(nu) lambda_j + nu),      lambda_j = eig(C_train).

Method (no starting guess, no sampling).  Eliminating M with
``nu M = 1 - kappa + kappa a`` gives ONE scalar equation in ``a``::

    g(a) = (1/d) sum_j nu / (a lambda_j + nu) - kappa (a - 1) - 1 = 0.

``g`` is strictly decreasing on a >= 0 (both terms decrease), ``g(0) = kappa > 0``
and ``g(1) = (1/d) sum_j nu/(lambda_j + nu) - 1 <= 0``, so the physical root
(a > 0) is unique and lies in (0, 1]; it is bracketed and found by Brent's
method to relative tolerance 4 eps.  Then M is evaluated from the sum (not
from ``(1 - kappa + kappa a)/nu``, which cancels for small nu), and
``M in (max(0, (1-kappa)/nu), 1/nu]`` holds by construction.

Derivative by implicit differentiation: with ``D_j = a lambda_j + nu``,
``T2 = mean(1/D_j^2)``, ``T2l = mean(lambda_j/D_j^2)`` and
``a' = (M + nu M')/kappa``::

    M' = -(T2 + T2l M / kappa) / (1 + nu T2l / kappa).

For ``C_train = c I`` the closed form (``stieltjes_isotropic``)::

    M = 2 / (B + sqrt(B^2 + 4 c nu / kappa)),   B = nu + c - c/kappa.

The sampled alternative (``empirical_stieltjes``) exists only for tests and
the benchmark: (1/d) tr (S + nu I)^{-1} averaged over sampled Wishart matrices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import sample_se
from icl_symbolic.core.values import Value

_RTOL = 4 * np.finfo(float).eps


@dataclass(frozen=True)
class Stieltjes:
    """M(nu), M'(nu) and a(nu) = 1 - 1/kappa + nu M/kappa at one nu (task diversity kappa)."""

    nu: float
    M: float
    M_prime: float
    a: float
    kappa: float

    @property
    def a_prime(self) -> float:
        """da/dnu = (M + nu M') / kappa."""
        return (self.M + self.nu * self.M_prime) / self.kappa


def _check(nu, kappa):
    if not (nu > 0 and math.isfinite(nu)):
        raise ICLError(f"Stieltjes transform needs nu > 0, got {nu}")
    if not (kappa > 0 and math.isfinite(kappa)):
        raise ICLError(f"kappa must be > 0, got {kappa}")


def solve_a(nu: float, eigvals: np.ndarray, kappa: float) -> float:
    """The physical root a(nu) in (0, 1] of the self-consistent equation (bracketed Brent).

    >>> round(solve_a(1.0, np.ones(3), 2.0), 12)   # c = 1, kappa = 2: closed form below
    0.780776406404
    """
    _check(nu, kappa)
    lam = np.asarray(eigvals, dtype=float)

    def g(a):
        return float(np.mean(nu / (a * lam + nu))) - kappa * (a - 1.0) - 1.0

    g1 = g(1.0)
    if g1 >= 0.0:  # only when C_train = 0 (all lambda_j = 0): a = 1 exactly
        return 1.0
    return brentq(g, 0.0, 1.0, xtol=1e-300, rtol=_RTOL, maxiter=500)


def stieltjes(nu: float, eigvals: np.ndarray, kappa: float) -> Stieltjes:
    """M(nu), M'(nu), a(nu) from the deterministic equation on the spectrum of C_train.

    Parameters
    ----------
    nu : float
        spectral argument, > 0.
    eigvals : array
        eigenvalues lambda_j of C_train (any order, >= 0).
    kappa : float
        task diversity k/d, > 0.

    Examples
    --------
    >>> st = stieltjes(0.5, np.ones(10), 2.0)
    >>> bool(abs(st.M - stieltjes_isotropic(0.5, 2.0)[0]) < 1e-15)
    True
    """
    lam = np.asarray(eigvals, dtype=float)
    a = solve_a(nu, lam, kappa)
    D = a * lam + nu
    inv = 1.0 / D
    M = float(np.mean(inv))
    T2 = float(np.mean(inv * inv))
    T2l = float(np.mean(lam * inv * inv))
    Mp = -(T2 + T2l * M / kappa) / (1.0 + nu * T2l / kappa)
    return Stieltjes(float(nu), M, Mp, a, float(kappa))


def stieltjes_isotropic(nu, kappa, c=1.0):
    """Closed form (M, M') for C_train = c I (vectorised over nu).

    ``M = 2/(B + sqrt(B^2 + 4 c nu/kappa))``, ``B = nu + c - c/kappa``;
    ``M' = -2 (1 + (B + 2c/kappa)/sqrt(...)) / (B + sqrt(...))^2``.

    >>> M, Mp = stieltjes_isotropic(1.0, 2.0)
    >>> round(float(M), 12)
    0.561552812809
    """
    nu = np.asarray(nu, dtype=float)
    B = nu + c - c / kappa
    R = np.sqrt(B * B + 4.0 * c * nu / kappa)
    # 2/(B + R) written without cancellation when B < 0: 2/(B+R) = (R - B)/(2 c nu/kappa)
    with np.errstate(divide="ignore", invalid="ignore"):
        M = np.where(B >= 0, 2.0 / (B + R), (R - B) * kappa / (2.0 * c * nu) if c > 0 else 1.0 / nu)
    dR = (B + 2.0 * c / kappa) / R
    Mp = -0.5 * M * M * (1.0 + dR)
    return M, Mp


def empirical_stieltjes(nu, eigvals, kappa, d, rng, repeats=10, eigvecs=None):
    """Sampled (1/d) tr (S + nu I)^{-1} over ``repeats`` Wishart draws: a ``Value`` (mc) per nu.

    For tests and the benchmark only (the library never uses it).  ``S = W^T W/k``
    with ``k = round(kappa d)`` rows ``w_j ~ N(0, C)``, ``C = V diag(eigvals) V^T``.
    Returns ``(values, per_repeat)`` where ``per_repeat`` is a (repeats, len(nu)) array;
    the standard error is the spread across repeats / sqrt(repeats).
    """
    nu = np.atleast_1d(np.asarray(nu, dtype=float))
    lam = np.asarray(eigvals, dtype=float)
    if lam.shape[0] != d:
        raise ICLError(f"spectrum has length {lam.shape[0]}, expected d = {d}")
    k = max(1, int(round(kappa * d)))
    out = np.empty((repeats, nu.size))
    sq = np.sqrt(lam)
    for r in range(repeats):
        W = rng.standard_normal((k, d)) * sq
        if eigvecs is not None:
            W = W @ eigvecs.T
        s = np.linalg.eigvalsh(W.T @ W / k)
        out[r] = np.mean(1.0 / (s[None, :] + nu[:, None]), axis=1)
    mean = out.mean(axis=0)
    se = sample_se(out, axis=0) if repeats > 1 else np.full(nu.size, np.nan)
    vals = [
        Value(
            float(m), "mc", stderr=float(e), n_samples=repeats, note=f"(1/d) tr (S + nu I)^-1, d={d}, k={k}, nu={x:g}"
        )
        for m, e, x in zip(mean, se, nu)
    ]
    return vals, out
