"""Matrix-free ridge / minimum-norm solves for features h = x (x) v.

Paper: the training problem of Eq. (6), Sec. 2, p. 3.  Each training prompt
mu contributes the feature vector h_mu = vec(x_mu v_mu^T) = x_mu (x) v_mu
(row-major vec), with x_mu the query-side features (a row of ``X``, n x D) and
v_mu the context statistics (a row of ``V``, n x m; for the paper's model
x = x_test, v = [u; s], D = d, m = d + 1).  Nothing here assumes D = m - 1,
so a kernel model may pass phi(x) for X.

Everything is applied through the two factors, never through the n x (D m)
feature matrix H or the (D m) x (D m) normal matrix:

* ``H vec(G)``  = q with q_mu = x_mu^T G v_mu           (2 n D m flops)
* ``H^T c``     = X^T diag(c) V                         (2 n D m flops)
* ``H^T H vec(G)`` and ``H H^T c`` compose the two      (4 n D m flops)

Preconditioner (normal equations).  x and v of one prompt are independent
(the query is drawn independently of the context), so
E[h h^T] = E[x x^T] (x) E[v v^T] and H^T H ~ (X^T X) (x) (V^T V) / n.  With
the eigendecompositions X^T X = U_x S_x U_x^T and V^T V = U_v S_v U_v^T,

    ((X^T X) (x) (V^T V) / n + shift I)^{-1} vec(R)
        = vec(U_x [(U_x^T R U_v) / (s_x s_v^T / n + shift)] U_v^T),

an O(D^3 + m^3) setup and O(D m (D + m)) per application.  Preconditioned
conjugate gradients (PCG) on (H^T H + shift I) g = H^T y then needs a number of
iterations set by the Marchenko-Pastur spread of the whitened features,
((1 + sqrt(p/n)) / (1 - sqrt(p/n)))^2, independent of d at fixed tau.

Minimum norm (n < p).  PCG with a non-identity preconditioner converges to the
minimum *M-norm* solution when H^T H is singular, which is not pinv(H) y.  For
n < p the dual system (H H^T + shift I) c = y is solved instead (CG with the
Jacobi preconditioner diag(H H^T) = |x_mu|^2 |v_mu|^2, which does not change
the solution of a nonsingular system) and g = H^T c, which lies in the row
space of H: this is the minimum-norm interpolant at shift = 0 and the ridge
solution for shift > 0 (the same g as the normal equations).

Certification.  At the end of a solve the residual of the system solved is
recomputed from scratch (not the CG recurrence) and reported as
``SolveInfo.residual`` (relative to the right-hand side); when it is above the
tolerance the iteration continues from the true residual; a solve that does
not reach the tolerance within ``maxiter`` raises :class:`NotConverged`, an
:class:`~icl_symbolic.core.errors.ICLError` carrying the last ``SolveInfo``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from icl_symbolic.core.errors import ICLError

#: Default relative-residual tolerance (see docs/simulation.md for its effect on Gamma).
DEFAULT_TOL = 1e-11
#: Bytes of one row block of the n x m temporaries in an operator application.
BLOCK_BYTES = 1 << 23


@dataclass(frozen=True)
class SolveInfo:
    """How a matrix-free solve ended.

    ``method``: ``cg-normal`` (PCG on the normal equations) or ``cg-dual``
    (CG on the dual system); ``iterations``: operator applications;
    ``residual``: the recomputed relative residual ||b - A x|| / ||b|| of the
    system solved; ``tol``: the tolerance asked for; ``converged``:
    residual <= tol.
    """

    method: str
    iterations: int
    residual: float
    tol: float
    converged: bool
    seconds: float


class NotConverged(ICLError):
    """A matrix-free solve that did not reach its tolerance (never a silent number)."""

    def __init__(self, info: SolveInfo):
        self.info = info
        super().__init__(
            f"{info.method} did not converge: relative residual {info.residual:.2e} > "
            f"{info.tol:.0e} after {info.iterations} iterations"
        )


class KroneckerOperator:
    """The feature matrix H with rows x_mu (x) v_mu, applied through X (n x D) and V (n x m).

    >>> rng = np.random.default_rng(0)
    >>> X, V = rng.standard_normal((7, 3)), rng.standard_normal((7, 4))
    >>> H = np.einsum("ni,na->nia", X, V).reshape(7, 12)
    >>> op = KroneckerOperator(X, V)
    >>> G = rng.standard_normal((3, 4))
    >>> bool(np.allclose(op.normal_matvec(G).ravel(), H.T @ H @ G.ravel()))
    True
    """

    def __init__(self, X: np.ndarray, V: np.ndarray):
        X = np.ascontiguousarray(X, dtype=float)
        V = np.ascontiguousarray(V, dtype=float)
        if X.ndim != 2 or V.ndim != 2 or X.shape[0] != V.shape[0] or X.shape[0] < 1:
            raise ICLError(f"X and V must be 2-d arrays with the same number of rows, got {X.shape} and {V.shape}")
        self.X, self.V = X, V
        self.n, self.D = X.shape
        self.m = V.shape[1]
        self.block = int(max(256, BLOCK_BYTES // (8 * max(self.D, self.m))))

    @property
    def shape(self) -> tuple[int, int]:
        """(n, D m): the shape of H."""
        return self.n, self.D * self.m

    def _blocks(self):
        for start in range(0, self.n, self.block):
            yield slice(start, min(self.n, start + self.block))

    def forward(self, G: np.ndarray) -> np.ndarray:
        """H vec(G): q_mu = x_mu^T G v_mu (n-vector)."""
        q = np.empty(self.n)
        for sl in self._blocks():
            q[sl] = np.einsum("ij,ij->i", self.X[sl] @ G, self.V[sl])
        return q

    def adjoint(self, c: np.ndarray) -> np.ndarray:
        """H^T c as a D x m matrix: X^T diag(c) V."""
        out = np.zeros((self.D, self.m))
        for sl in self._blocks():
            out += self.X[sl].T @ (c[sl, None] * self.V[sl])
        return out

    def normal_matvec(self, G: np.ndarray) -> np.ndarray:
        """H^T H vec(G) as a D x m matrix, one pass over the rows."""
        out = np.zeros((self.D, self.m))
        for sl in self._blocks():
            Xb, Vb = self.X[sl], self.V[sl]
            q = np.einsum("ij,ij->i", Xb @ G, Vb)
            out += Xb.T @ (q[:, None] * Vb)
        return out

    def kernel_matvec(self, c: np.ndarray) -> np.ndarray:
        """H H^T c (n-vector): the kernel (X X^T) o (V V^T) applied without forming it."""
        return self.forward(self.adjoint(c))

    def kernel_diagonal(self) -> np.ndarray:
        """diag(H H^T) = |x_mu|^2 |v_mu|^2."""
        return np.einsum("ij,ij->i", self.X, self.X) * np.einsum("ij,ij->i", self.V, self.V)


class KroneckerPreconditioner:
    """Applies ((X^T X) (x) (V^T V) / n + shift I)^{-1} through two symmetric eigendecompositions.

    >>> rng = np.random.default_rng(1)
    >>> X, V = rng.standard_normal((20, 3)), rng.standard_normal((20, 2))
    >>> P = KroneckerPreconditioner(X, V, shift=0.5)
    >>> M = np.kron(X.T @ X, V.T @ V) / 20 + 0.5 * np.eye(6)
    >>> R = rng.standard_normal((3, 2))
    >>> bool(np.allclose(P.apply(R).ravel(), np.linalg.solve(M, R.ravel())))
    True
    """

    def __init__(self, X: np.ndarray, V: np.ndarray, shift: float = 0.0):
        n = X.shape[0]
        sx, self.Ux = np.linalg.eigh(X.T @ X)
        sv, self.Uv = np.linalg.eigh(V.T @ V)
        sx, sv = np.maximum(sx, 0.0), np.maximum(sv, 0.0)
        denom = np.outer(sx, sv) / n + shift
        # A singular factor (D > n, or exactly collinear columns) would make M singular: floor the
        # spectrum at a relative 1e-12 of its top so the preconditioner stays SPD (any SPD M is valid).
        floor = 1e-12 * float(denom.max()) if denom.size and denom.max() > 0 else 1.0
        self.inv = 1.0 / np.maximum(denom, floor)

    def apply(self, R: np.ndarray) -> np.ndarray:
        """M^{-1} vec(R), returned as a D x m matrix."""
        return self.Ux @ ((self.Ux.T @ R @ self.Uv) * self.inv) @ self.Uv.T


def _dot(a, b) -> float:
    return float(np.vdot(a, b))


def _pcg(apply_A, b, apply_M, tol, maxiter, method, progress):
    """Preconditioned CG on A x = b (A SPD); restarts from the true residual when the recurrence drifts."""
    t0 = time.monotonic()
    bnorm = math.sqrt(_dot(b, b))
    x = np.zeros_like(b)
    if bnorm == 0:
        return x, SolveInfo(method, 0, 0.0, tol, True, 0.0)
    its = 0
    last = t0
    rel = 1.0
    r = b.copy()
    for _restart in range(4):
        z = apply_M(r)
        p = z.copy()
        rz = _dot(r, z)
        while its < maxiter:
            Ap = apply_A(p)
            its += 1
            pAp = _dot(p, Ap)
            if not pAp > 0:
                break
            a = rz / pAp
            x += a * p
            r -= a * Ap
            rel = math.sqrt(_dot(r, r)) / bnorm
            if progress is not None and time.monotonic() - last > 2.0:
                progress(f"  {method} iteration {its}: relative residual {rel:.2e}")
                last = time.monotonic()
            if rel <= 0.5 * tol:
                break
            z = apply_M(r)
            rz_new = _dot(r, z)
            p = z + (rz_new / rz) * p
            rz = rz_new
        r = b - apply_A(x)  # certify: the true residual, recomputed
        rel = math.sqrt(_dot(r, r)) / bnorm
        if rel <= tol or its >= maxiter:
            break
    info = SolveInfo(method, its, rel, tol, bool(rel <= tol), time.monotonic() - t0)
    if progress is not None:
        progress(f"  {method}: {its} iterations, certified relative residual {rel:.2e}")
    return x, info


def default_maxiter(n: int, p: int) -> int:
    """Iteration cap: 4 x the number of unknowns of the system solved (+ 100), at most 20000.

    (CG terminates in at most that many steps in exact arithmetic; rounding costs some more.)
    """
    return int(min(4 * min(n, p) + 100, 20000))


def solve_normal(
    X,
    V,
    y,
    shift: float = 0.0,
    tol: float = DEFAULT_TOL,
    maxiter: int | None = None,
    progress: Callable[[str], None] | None = None,
    raise_unconverged: bool = True,
):
    """PCG on (H^T H + shift I) vec(G) = H^T y with the Kronecker preconditioner.

    For n >= p = D m (H of full column rank) or shift > 0 this is the unique
    ridge / least-squares solution.  Returns ``(G, SolveInfo)``; G is D x m.
    """
    op = KroneckerOperator(X, V)
    y = np.asarray(y, dtype=float)
    P = KroneckerPreconditioner(op.X, op.V, shift)
    b = op.adjoint(y)

    def apply_A(G):
        out = op.normal_matvec(G)
        if shift:
            out += shift * G
        return out

    maxiter = default_maxiter(op.n, op.D * op.m) if maxiter is None else int(maxiter)
    G, info = _pcg(apply_A, b, P.apply, tol, maxiter, "cg-normal", progress)
    if raise_unconverged and not info.converged:
        raise NotConverged(info)
    return G, info


def solve_dual(
    X,
    V,
    y,
    shift: float = 0.0,
    tol: float = DEFAULT_TOL,
    maxiter: int | None = None,
    progress: Callable[[str], None] | None = None,
    raise_unconverged: bool = True,
):
    """CG (Jacobi-preconditioned) on (H H^T + shift I) c = y, then G = H^T c (minimum norm at shift = 0).

    Returns ``(G, SolveInfo)``; the residual is that of the dual system.
    """
    op = KroneckerOperator(X, V)
    y = np.asarray(y, dtype=float)
    dinv = 1.0 / np.maximum(op.kernel_diagonal() + shift, np.finfo(float).tiny)

    def apply_A(c):
        out = op.kernel_matvec(c)
        if shift:
            out += shift * c
        return out

    maxiter = default_maxiter(op.n, op.D * op.m) if maxiter is None else int(maxiter)
    c, info = _pcg(apply_A, y, lambda r: dinv * r, tol, maxiter, "cg-dual", progress)
    if raise_unconverged and not info.converged:
        raise NotConverged(info)
    return op.adjoint(c), info


def solve(
    X,
    V,
    y,
    shift: float = 0.0,
    tol: float = DEFAULT_TOL,
    maxiter: int | None = None,
    progress: Callable[[str], None] | None = None,
    raise_unconverged: bool = True,
):
    """Ridge (shift > 0) or minimum-norm least squares (shift = 0) for features x (x) v, matrix-free.

    Normal equations with the Kronecker preconditioner when n >= p = D m,
    the dual system when n < p.  Returns ``(G, SolveInfo)``.

    >>> rng = np.random.default_rng(2)
    >>> X, V, y = rng.standard_normal((50, 3)), rng.standard_normal((50, 4)), rng.standard_normal(50)
    >>> H = np.einsum("ni,na->nia", X, V).reshape(50, 12)
    >>> G, info = solve(X, V, y)
    >>> bool(np.allclose(G.ravel(), np.linalg.lstsq(H, y, rcond=None)[0], rtol=1e-8)), info.method
    (True, 'cg-normal')
    """
    n, D = np.shape(X)
    m = np.shape(V)[1]
    fn = solve_normal if n >= D * m else solve_dual
    return fn(X, V, y, shift, tol, maxiter, progress, raise_unconverged)


def mp_iterations(n: int, p: int, tol: float = DEFAULT_TOL) -> float:
    """Predicted CG iterations from the Marchenko-Pastur condition number of the whitened features.

    kappa = ((1 + sqrt(r)) / (1 - sqrt(r)))^2 with r = min(n, p) / max(n, p);
    the classical bound sqrt(kappa)/2 ln(2/tol).  Infinite at n = p.
    """
    r = min(n, p) / max(n, p)
    if r >= 1:
        return math.inf
    sk = (1 + math.sqrt(r)) / (1 - math.sqrt(r))
    return 0.5 * sk * math.log(2 / tol)
