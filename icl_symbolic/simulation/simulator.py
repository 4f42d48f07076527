"""Ridge-trained reduced linear attention, simulated at finite size.

Paper: Sec. 2, Eqs. (1)-(7), p. 2-3.  Prompts x_1, y_1, ..., x_ell, y_ell,
x_test with x_i ~ N(0, I_d/d), y_i = f(x_i^T w) + eps_i, eps_i ~ N(0, rho);
the model sees u = (d/ell) sum_i y_i x_i, s = (1/ell) sum_i y_i^2 and predicts
y_hat = <Gamma, H>_F with H = x_test [u^T, s] (d x (d+1)), Gamma = [A, b].
Training is the closed-form ridge of Eq. (6):

    gamma* = ((n/d) lam I_p + sum_mu h_mu h_mu^T)^{-1} sum_mu y_test^mu h_mu,
    h = vec(H),  p = d (d + 1),

with lam -> 0 read as the minimum-norm least-squares solution.

Conventions (the paper's ratios made integer; choices where it is silent)
-----------------------------------------------------------------------
* ell = round(alpha d), k = round(kappa d), n = round(tau d^2), rounding to
  the nearest integer with halves up (:func:`sizes`).
* Pretraining tasks w_1..w_k ~ N(0, C_train) (Gaussian tasks, as in the paper;
  |w|^2/d fluctuates at O(d^-1/2)), drawn once per seed; prompt mu
  (mu = 0..n-1) uses task w_{mu mod k} (round robin, so every task is used
  floor(n/k) or ceil(n/k) times).
* Test: fresh tasks from N(0, C_test), one per test prompt.
* IDG error (in-distribution generalisation): the exact test functional of the same
  trained Gamma averaged over the k pretraining tasks themselves
  (:func:`icl_symbolic.model.gamma_error.e_gamma_tasks`; docs/idg.md).
* These choices are one :class:`Convention` (``default``); each is a named option,
  and the preset ``letey2024`` is the convention of the authors' simulations
  (docs/conventions.md).  Every result records its convention.
* vec is row-major: h[i (d+1) + j] = x_test[i] v[j], v = [u; s], so
  Gamma = gamma.reshape(d, d + 1) and A = Gamma[:, :d], b = Gamma[:, d].

Solvers (the n x p feature matrix is never built)
-------------------------------------------------
* ``gram`` (default when n >= p): G = sum_mu h h^T = sum_mu (x x^T) (x) (v v^T)
  is symmetric in the x-pair and in the v-pair separately, so only the
  (d(d+1)/2) x ((d+1)(d+2)/2) table T of sums of (x_i x_j)(v_a v_b) is
  accumulated (one dgemm per fixed-size chunk of prompts; half the flops of
  forming H^T H), and G is assembled from T once.  Memory O(p^2).
* ``kernel`` (default when n < p): K = (X X^T) o (V V^T) (Hadamard product,
  entries (x_test . x_test') ([u;s] . [u';s'])), c = (K + (n/d) lam I)^{-1} y,
  and Gamma = X^T diag(c) V.  Memory O(n^2 + n d).
* Both solve a symmetric positive semidefinite system by Cholesky when its
  reciprocal condition number (LAPACK dpocon) exceeds ``RCOND_MIN``; otherwise
  (lam = 0 near tau = 1, or rank deficiency) by the eigen-decomposition
  pseudo-inverse with cutoff ``max(n, p) eps lambda_max``, the same rule as
  numpy's ``lstsq``.  Both forms then return pinv(H) y for lam = 0 and the
  ridge solution for lam > 0, i.e. the same Gamma.

Randomness: each seed gives ``SeedSequence(seed).spawn(4)`` streams for the
training tasks, training prompts, test tasks and test prompts; chunk sizes
depend only on (d, ell), so a seed reproduces a run bit for bit on one
machine.  This module never imports :mod:`icl_symbolic.theory.asymptotic` (tests and
figures compare the two; neither validates itself).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import scipy.linalg
from scipy.linalg import blas, lapack

from icl_symbolic.core.cost import SECONDS_PER, Estimate, announced
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.limits import ANNOUNCE_BYTES
from icl_symbolic.core.parallel import check_jobs, concurrent_runs, map_sweep, resolve_scheduler
from icl_symbolic.core.stats import sample_se, seed_mean_se
from icl_symbolic.core.values import Value
from icl_symbolic.engine.expr import teacher
from icl_symbolic.model import gamma_error
from icl_symbolic.model.covariance import Covariance, resolve_covariance, sample_tasks
from icl_symbolic.model.moments import MonteCarlo
from icl_symbolic.model.prompts import sample_prompts
from icl_symbolic.model.setting import (  # noqa: F401  (the conventions, re-exported where they were defined first)
    ASSIGNMENTS,
    CONVENTION_FIELDS,
    CONVENTIONS,
    PARAMETERS,
    ROUNDINGS,
    Convention,
    Setting,
    SettingView,
    as_setting,
    check_dimension,
    check_n_test,
    check_nonnegative,
    check_ratio,
    check_rounding,
    resolve_convention,
    setting_fields,
)
from icl_symbolic.model.sizes import Sizes, sizes  # noqa: F401  (re-exported)
from icl_symbolic.output.display import Quantity, html_table, latex_table, text_table
from icl_symbolic.output.rows import Rows
from icl_symbolic.simulation import matfree

#: Cholesky is accepted when the reciprocal 1-norm condition estimate exceeds this
#: (relative solution error then at most ~ eps / RCOND_MIN ~ 1e-5, in practice far less).
RCOND_MIN = 1e-11
#: Target bytes for one chunk of pair-product rows in the Gram accumulation.
CHUNK_BYTES = 1 << 25
SOLVERS = ("auto", "gram", "kernel", "cg")
DEFAULT_N_TEST = 20_000
#: Relative speeds (flops per second, relative to a large dgemm) used by the cost model;
#: measured with benchmarks/bench_simulate.py (one BLAS thread): Gram accumulation + Cholesky ~ 33
#: Gflop/s, the matrix-free operator ~ 24 Gflop/s, the n x n kernel + Cholesky ~ 11-20 Gflop/s.
SPEED = {"gram": 1.0, "cg": 0.7, "kernel": 0.5}
#: Iteration allowance in ``auto`` before falling back to a dense solver: this many times the
#: Marchenko-Pastur estimate (plus 50).
CG_ALLOWANCE = 3.0
#: Relative-residual tolerance of the training solve in a simulation (:func:`train`).
#: Looser than the matrix-free solver's own default (``matfree.DEFAULT_TOL`` = 1e-11)
#: because a simulated error needs far fewer digits of Gamma than Gamma has: measured
#: at 12 settings (sin, tanh, the linear and the a1 = 0 teacher; tau = 0.5, 0.8, 1.3,
#: 1.5, 2, 4, 10; d = 24-64), the test and IDG errors at 1e-6 differ from those at
#: 1e-11 by at most 4e-7 relative, i.e. below 1 % of the smallest per-point seed SE a
#: claim uses (~1e-4 relative), for 1.4-3x fewer CG iterations.  Regenerated by
#: ``python benchmarks/bench_train_tol.py`` (docs/simulation.md); pinned by
#: tests/test_simulate.py.  The dense solvers are exact and ignore it.
TRAIN_TOL = 1e-6


# ----------------------------------------------------------------------------
# conventions (icl_symbolic.model.setting, re-exported here where they were first defined)
# ----------------------------------------------------------------------------
def task_assignment(n: int, k: int, convention: Convention, rng: np.random.Generator | None) -> np.ndarray | None:
    """Task index of each of the n training prompts: None for round robin (mu mod k), else uniform draws."""
    if convention.assignment == "round-robin":
        return None
    return rng.integers(0, k, size=n)


# ----------------------------------------------------------------------------
# sizes (icl_symbolic.model.sizes, re-exported here where they were first defined) and memory
# ----------------------------------------------------------------------------
def cost_flops(sz: Sizes, solver: str, lam: float = 0.0) -> float:
    """Estimated floating-point operations of one training solve (the cost model of ``auto``).

    gram:   n p^2 / 2 (pair-product accumulation) + p^3 / 3 (Cholesky);
    kernel: n^2 (2d + 1) (the kernel) + n^3 / 3 (Cholesky);
    cg:     iterations x 4 n d (d + 1), the iterations from the Marchenko-Pastur
            estimate :func:`icl_symbolic.simulation.matfree.mp_iterations` (infinite at n = p;
            a ridge only shortens it, so it is ignored here).
    """
    d, n, p = sz.d, sz.n, sz.p
    if solver == "gram":
        return n * p * p / 2 + p**3 / 3
    if solver == "kernel":
        return n * n * (2 * d + 1) + n**3 / 3
    return matfree.mp_iterations(n, p) * 4.0 * n * p


def choose_solver(sz: Sizes, solver: str = "auto", lam: float = 0.0, max_memory: int | None = None) -> str:
    """The solver to run: ``solver`` itself unless ``auto``.

    ``auto`` takes the cheapest of ``gram`` (n >= p), ``kernel`` (n < p) and
    ``cg`` (matrix-free) by :func:`cost_flops` divided by the measured relative
    speeds ``SPEED``, among those whose memory estimate fits (``cg`` always
    remains a candidate).  Far from the interpolation threshold n = p and for
    d >~ 24 this is ``cg``; near it (where CG needs many iterations) and at small
    d it is the dense path.

    >>> choose_solver(sizes(64, 2, 2, 2)), choose_solver(sizes(64, 2, 2, 1.02)), choose_solver(sizes(8, 2, 2, 2))
    ('cg', 'gram', 'gram')
    """
    if solver not in SOLVERS:
        raise ICLError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")
    if solver != "auto":
        return solver
    dense = "gram" if sz.n >= sz.p else "kernel"
    limit = memory_limit(max_memory)
    cands = ["cg"] + ([dense] if estimate_memory(sz, dense) <= limit else [])
    return min(cands, key=lambda s: cost_flops(sz, s, lam) / SPEED[s])


def chunk_rows(d: int) -> int:
    """Prompts per Gram-accumulation chunk (depends on d only, for reproducibility)."""
    p = d * (d + 1)
    return int(min(8192, max(64, CHUNK_BYTES // (8 * p))))


def estimate_memory(sz: Sizes, solver: str = "auto", n_test: int = DEFAULT_N_TEST, lam: float = 0.0) -> int:
    """Peak bytes of one training run and its test, counted generously (float64 arrays only).

    Always: the training features X, V, y (n (2d + 2) words), the sampler's
    chunk (<= 2^22 floats plus one prompt chunk of outputs; five ell-vectors
    when one prompt is longer than that), the test prompts
    (n_test (2d + 4)) and their predictions.
    gram:   the pair table T (~p^2/4), G with its Cholesky factor in place (p^2),
            the least-squares fallback (R of the streamed QR, the stacked block
            and the SVD: 3 p^2), plus 3 chunks of m x p pair products.
    kernel: K and its factor (n^2), the least-squares fallback
            (3 min(n, p) p + the SVD), plus X, V.
    cg:     the row-block temporaries of the operator (3 blocks of n_b x (d+1)),
            eight d x (d+1) CG vectors, the preconditioner's eigenvectors, and
            for the dual form four n-vectors.
    ``auto`` counts the solver :func:`choose_solver` picks, plus the dense
    fallback it may take when CG stalls only if that fits (else it errs).
    """
    d, p, n = sz.d, sz.p, sz.n
    # the fast sampler holds one chunk of <= 2^22 floats, but at least one prompt: with ell + d above
    # that, about five ell-vectors live at once (z, f(z), the noise, y, y z): alpha = 1e6 at d = 64
    # takes 2.6 GB there, whatever the solver
    sampler = (1 << 22) if sz.ell + d <= (1 << 22) else 5 * (sz.ell + d)
    words = n * (2 * d + 2) + sampler + 3 * n_test * (2 * d + 4)
    if solver == "auto":
        solver = choose_solver(sz, "auto", lam)
    if solver == "gram":
        m = chunk_rows(d)
        words += p * p // 4 + p * p + 3 * p * p + 3 * m * p + 4 * m * (d + 2)
    elif solver == "kernel":
        k = min(n, p)
        words += n * n + 3 * k * p + k * k
    elif solver == "cg":
        block = max(256, matfree.BLOCK_BYTES // (8 * (d + 1)))
        words += 3 * block * (d + 1) + 8 * p + 2 * (d + 1) ** 2 + 4 * n
    else:
        raise ICLError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")
    return 8 * int(words)


def available_memory() -> int:
    """Bytes the OS reports as available (MemAvailable), else physical memory."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        return 1 << 34


def memory_limit(max_memory: int | None = None) -> int:
    """Bytes a run may use: ``max_memory`` when given, else 80% of :func:`available_memory`."""
    return int(0.8 * available_memory()) if max_memory is None else int(max_memory)


def memory_share(max_memory: int | None, jobs: int, n_items: int, scheduler: str | None = None) -> int:
    """Bytes each of the runs of a sweep may use: :func:`memory_limit` split over the runs that go
    at once on this machine (:func:`icl_symbolic.core.parallel.concurrent_runs`)."""
    return memory_limit(max_memory) // concurrent_runs(jobs, n_items, scheduler)


def check_memory(
    sz: Sizes, solver: str = "auto", n_test: int = DEFAULT_N_TEST, max_memory: int | None = None, lam: float = 0.0
) -> int:
    """Refuse (ICLError) before allocating when the run would not fit; return the estimate in bytes."""
    chosen = choose_solver(sz, solver, lam, max_memory)
    need = estimate_memory(sz, chosen, n_test, lam)
    limit = memory_limit(max_memory)
    if need > limit:
        raise ICLError(
            f"d={sz.d}, n={sz.n} ({chosen} solver) needs about {need / 2**30:.2f} GiB "
            f"(all arrays), more than the {limit / 2**30:.2f} GiB allowed (80% of available memory); "
            f"reduce d, tau or alpha (context length ell = {sz.ell})"
            + ("" if chosen == "cg" else ", or use --solver cg")
        )
    return need


# ----------------------------------------------------------------------------
# linear algebra
# ----------------------------------------------------------------------------
def _norm1_sym(M: np.ndarray, block: int = 512) -> float:
    """1-norm of a symmetric matrix, column blocks (no full-size temporary)."""
    best = 0.0
    for j in range(0, M.shape[1], block):
        best = max(best, float(np.abs(M[:, j : j + block]).sum(axis=0).max()))
    return best


def _cholesky(A: np.ndarray, rhs: np.ndarray):
    """Cholesky solve of the SPD matrix A (Fortran order, overwritten) if its rcond > RCOND_MIN, else None."""
    anorm = _norm1_sym(A)
    if not anorm > 0:
        return None
    try:
        c, low = scipy.linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    rcond, info = lapack.dpocon(c, anorm, uplo="L")
    if info == 0 and rcond > RCOND_MIN:
        return scipy.linalg.cho_solve((c, low), rhs, check_finite=False)
    return None


def solve_psd(M: np.ndarray, rhs: np.ndarray, shift: float = 0.0, overwrite: bool = False):
    """Solve (M + shift I) x = rhs for symmetric PSD M, stably; min-norm if singular.

    Cholesky with a condition check (LAPACK dpocon); if the estimate of the
    reciprocal condition number is below ``RCOND_MIN`` or the factorisation
    fails, the eigen-decomposition pseudo-inverse with eigenvalue cutoff
    ``size * eps * lambda_max``.  This is the minimum-norm solution of the
    system M x = rhs as given; when M = H^T H was formed from features H, its
    small eigenvalues carry rounding of order eps |H|^2 and this is NOT
    pinv(H) y (the Gram and kernel paths use :func:`lstsq_features` instead).

    Returns ``(x, how)`` with ``how`` in ``{"cholesky", "eigh-pinv"}``.

    >>> M = np.array([[2.0, 0.0], [0.0, 0.0]])
    >>> x, how = solve_psd(M, np.array([2.0, 1.0]))
    >>> x.tolist(), how
    ([1.0, 0.0], 'eigh-pinv')
    """
    size = M.shape[0]
    A = M if overwrite else M.copy(order="F")
    if not A.flags.f_contiguous:
        A = A.T  # symmetric: the transpose is the same matrix, Fortran-ordered (in place)
    if shift:
        A.flat[:: size + 1] += shift
    diag = A.diagonal().copy()
    x = _cholesky(A, rhs)
    if x is not None:
        return x, "cholesky"
    # Cholesky wrote only the lower triangle: restore the diagonal and use the upper one.
    A.flat[:: size + 1] = diag
    evals, evecs = scipy.linalg.eigh(A, lower=False, overwrite_a=True, check_finite=False)
    cutoff = size * np.finfo(float).eps * max(float(evals[-1]), 0.0)
    inv = np.zeros_like(evals)
    keep = evals > cutoff
    inv[keep] = 1.0 / evals[keep]
    return evecs @ (inv * (evecs.T @ rhs)), "eigh-pinv"


def _feature_rows(X: np.ndarray, V: np.ndarray, start: int, stop: int) -> np.ndarray:
    return np.einsum("mi,mj->mij", X[start:stop], V[start:stop]).reshape(stop - start, -1)


def lstsq_features(X: np.ndarray, V: np.ndarray, y: np.ndarray, shift: float = 0.0) -> np.ndarray:
    """min ||H g - y||^2 + shift ||g||^2, minimum norm, from the features h = x (x) v themselves.

    The fallback of the dense paths when the Gram or kernel matrix is too
    ill-conditioned for Cholesky.  Forming H^T H squares the condition number
    and buries singular values below sqrt(eps) |H| in rounding, so its
    pseudo-inverse is not pinv(H) y (at d = 2 it differed by up to 54%).  Here
    H is reduced by a streamed QR (TSQR: R <- qr([R; H_block]), with the rows
    sqrt(shift) I appended for a ridge and y carried as an extra column), and
    the minimum-norm solution is taken from the SVD of R with numpy.lstsq's
    cutoff max(n, p) eps sigma_max.  O(n p^2) flops, O(p^2) memory beyond X, V.

    Returns gamma (length p = D m).
    """
    n, D = X.shape
    m = V.shape[1]
    p = D * m
    block = max(p, 256)
    R = np.zeros((0, p + 1))
    rows = []
    if shift > 0:
        rows.append(np.hstack([math.sqrt(shift) * np.eye(p), np.zeros((p, 1))]))
    for start in range(0, n, block):
        stop = min(n, start + block)
        rows.append(np.hstack([_feature_rows(X, V, start, stop), y[start:stop, None]]))
    for B in rows:
        R = scipy.linalg.qr(np.vstack([R, B]), mode="r", overwrite_a=True, check_finite=False)[0]
        R = R[: min(R.shape[0], p + 1)]
    Rg, qty = R[:, :p], R[:, p]
    U, sv, Wt = scipy.linalg.svd(Rg, full_matrices=False, check_finite=False, lapack_driver="gesvd")
    cutoff = max(n + (p if shift > 0 else 0), p) * np.finfo(float).eps * (sv[0] if sv.size else 0.0)
    inv = np.where(sv > cutoff, 1.0 / np.where(sv > 0, sv, 1.0), 0.0)
    return Wt.T @ (inv * (U.T @ qty))


def gram_solve(X: np.ndarray, V: np.ndarray, y: np.ndarray, shift: float):
    """Dense normal equations: G = sum_mu h h^T by pair-product accumulation, Cholesky; lstsq fallback.

    Returns ``(gamma, how)``, how in ``{"cholesky", "lstsq"}``.
    """
    n, d = X.shape
    acc = GramAccumulator(d)
    m = chunk_rows(d)
    for start in range(0, n, m):
        acc.add(X[start : start + m], V[start : start + m], y[start : start + m])
    G = acc.gram()
    A = G.T  # symmetric: Fortran view, factorised in place
    A.flat[:: A.shape[0] + 1] += shift
    gamma = _cholesky(A, acc.R.ravel())
    del G, A
    if gamma is not None:
        return gamma, "cholesky"
    return lstsq_features(X, V, y, shift), "lstsq"


class GramAccumulator:
    """Streams prompts into G = sum_mu h h^T and r = sum_mu y h without feature rows.

    G has the Kronecker structure sum_mu (x x^T) (x) (v v^T): its entry
    G[(i,a),(j,b)] = sum_mu x_i x_j v_a v_b is symmetric in (i, j) and in (a, b)
    separately, so only T[(i<=j), (a<=b)] = sum_mu (x_i x_j)(v_a v_b) is
    accumulated, one BLAS dgemm per chunk of prompts on the symmetric pair
    products: (d(d+1)/2) x ((d+1)(d+2)/2) ~ p^2/4 entries, half the flops of a
    symmetric rank-m update of G itself.  ``G`` is assembled from ``T`` once, in
    :meth:`gram`.  r = sum_mu y h is X^T diag(y) V, a d x (d+1) matrix.
    """

    def __init__(self, d: int):
        self.d = d
        self.p = d * (d + 1)
        self.ix, self.jx = np.triu_indices(d)
        self.ia, self.ja = np.triu_indices(d + 1)
        self.T = np.zeros((self.ix.size, self.ia.size), order="F")
        self.R = np.zeros((d, d + 1))
        self.n = 0

    def add(self, X: np.ndarray, V: np.ndarray, y: np.ndarray) -> None:
        XS = X[:, self.ix] * X[:, self.jx]  # (m, d(d+1)/2)
        VS = V[:, self.ia] * V[:, self.ja]  # (m, (d+1)(d+2)/2)
        # T <- T + XS^T VS in place; XS.T and VS.T are Fortran-contiguous views (no copies)
        self.T = blas.dgemm(1.0, XS.T, VS.T, beta=1.0, c=self.T, trans_b=1, overwrite_c=1)
        self.R += X.T @ (y[:, None] * V)
        self.n += X.shape[0]

    def gram(self) -> np.ndarray:
        """The p x p matrix G (assembled once from T; T is released)."""
        d = self.d
        px = np.zeros((d, d), dtype=np.intp)
        px[self.ix, self.jx] = px[self.jx, self.ix] = np.arange(self.ix.size)
        pa = np.zeros((d + 1, d + 1), dtype=np.intp)
        pa[self.ia, self.ja] = pa[self.ja, self.ia] = np.arange(self.ia.size)
        G = np.empty((self.p, self.p))  # C order; symmetric, so G.T is its Fortran view
        for i in range(d):  # row block i: G[(i, a), (j, b)] = T[px[i, j], pa[a, b]]
            G[i * (d + 1) : (i + 1) * (d + 1)] = self.T[px[i][None, :, None], pa[:, None, :]].reshape(d + 1, self.p)
        self.T = None
        return G


def kernel_solve(X: np.ndarray, V: np.ndarray, y: np.ndarray, shift: float):
    """Dense dual form: K = (X X^T) o (V V^T), Cholesky, Gamma = X^T diag(c) V; lstsq fallback.

    Returns ``(gamma, how)``, how in ``{"cholesky", "lstsq"}``.
    """
    n = X.shape[0]
    K = X @ X.T
    for start in range(0, n, 256):  # Hadamard product by row blocks: no second n x n array
        K[start : start + 256] *= V[start : start + 256] @ V.T
    A = K.T  # symmetric: Fortran view, factorised in place
    A.flat[:: n + 1] += shift
    c = _cholesky(A, y)
    del K, A
    if c is not None:
        return (X.T @ (c[:, None] * V)).ravel(), "cholesky"
    return lstsq_features(X, V, y, shift), "lstsq"


@dataclass(frozen=True)
class FitInfo:
    """How a training solve went: ``solver`` (path, e.g. ``cg/cg-normal`` or ``gram/cholesky``;
    ``cg/cg-dual->kernel/cholesky`` when ``auto`` fell back), ``iterations`` (CG operator
    applications, 0 for a direct solve), ``residual`` (relative residual of the normal
    equations ||H^T y - (H^T H + (n/d) lam I) g|| / ||H^T y||, recomputed from the data with
    the matrix-free operator after every solve)."""

    solver: str
    iterations: int
    residual: float


def normal_residual(X, V, y, Gamma, shift: float) -> float:
    """||H^T y - (H^T H + shift I) vec(Gamma)|| / ||H^T y|| (matrix-free, one pass)."""
    op = matfree.KroneckerOperator(X, V)
    b = op.adjoint(np.asarray(y, dtype=float))
    r = b - op.normal_matvec(Gamma) - shift * Gamma
    bn = float(np.linalg.norm(b))
    return float(np.linalg.norm(r) / bn) if bn > 0 else float(np.linalg.norm(r))


def fit(
    X,
    V,
    y,
    lam: float = 0.0,
    solver: str = "auto",
    tol: float = matfree.DEFAULT_TOL,
    progress: Callable[[str], None] | None = None,
    max_memory: int | None = None,
):
    """Ridge fit of Eq. (6) on in-memory data (X = x_test rows, V = [u, s] rows), lam = 0: min-norm.

    ``solver``: ``gram`` (dense normal equations), ``kernel`` (dense dual),
    ``cg`` (matrix-free, :mod:`icl_symbolic.simulation.matfree`: PCG on the normal
    equations when n >= p, CG on the dual when n < p) or ``auto``
    (:func:`choose_solver`; when CG does not converge within ``CG_ALLOWANCE``
    times its predicted iterations, the dense path is run instead if it fits in
    memory, else :class:`~icl_symbolic.simulation.matfree.NotConverged` is raised).
    Returns ``(Gamma, FitInfo)``, Gamma of shape (d, d+1).
    """
    X, V, y = np.asarray(X, float), np.asarray(V, float), np.asarray(y, float)
    n, d = X.shape
    sz = Sizes(d, 1, 1, n)
    shift = (n / d) * lam
    chosen = choose_solver(sz, solver, lam, max_memory)
    dense = "gram" if n >= sz.p else "kernel"
    path, its = "", 0
    if chosen == "cg":
        maxiter = None
        if solver == "auto":
            maxiter = int(min(matfree.default_maxiter(n, sz.p), CG_ALLOWANCE * matfree.mp_iterations(n, sz.p) + 50))
        G, info = matfree.solve(X, V, y, shift, tol, maxiter, progress, raise_unconverged=False)
        its = info.iterations
        path = f"cg/{info.method}"
        if info.converged:
            return G, FitInfo(path, its, normal_residual(X, V, y, G, shift))
        if solver != "auto" or estimate_memory(sz, dense) > memory_limit(max_memory):
            raise matfree.NotConverged(info)
        if progress is not None:
            progress(
                f"  {info.method} stalled (residual {info.residual:.1e} after {its} iterations); "
                f"falling back to the dense {dense} solver"
            )
        path += "->"
        chosen = dense
    gamma, how = (gram_solve if chosen == "gram" else kernel_solve)(X, V, y, shift)
    G = gamma.reshape(d, d + 1)
    return G, FitInfo(f"{path}{chosen}/{how}", its, normal_residual(X, V, y, G, shift))


def fit_gamma(X, V, y, lam: float = 0.0, solver: str = "auto"):
    """:func:`fit` returning ``(Gamma, solver path)`` only.

    >>> rng = np.random.default_rng(7)
    >>> X, V, y = rng.standard_normal((30, 3)), rng.standard_normal((30, 4)), rng.standard_normal(30)
    >>> G1, _ = fit_gamma(X, V, y, 0.0, "gram"); G2, _ = fit_gamma(X, V, y, 0.0, "kernel")
    >>> G3, _ = fit_gamma(X, V, y, 0.0, "cg")
    >>> bool(np.allclose(G1, G2, rtol=1e-9, atol=1e-12) and np.allclose(G1, G3, rtol=1e-9, atol=1e-12))
    True
    """
    G, info = fit(X, V, y, lam, solver)
    return G, info.solver


# ----------------------------------------------------------------------------
# training and testing
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class PromptLaw:
    """How the prompts of one run are drawn (Sec. 2, Eqs. (1)-(5), p. 2): the teacher's float64 form
    ``f_numpy``, the context length ``ell``, the label-noise variance ``rho``, the ``sampler``
    (``fast`` or ``direct``, :func:`icl_symbolic.model.prompts.sample_prompts`) and the learner's
    query-side feature map ``features`` (None: plain attention; direct sampler only, an object with
    attribute ``D``: :class:`icl_symbolic.kernel_learner.theory.FeatureTransform`)."""

    f_numpy: Callable
    ell: int
    rho: float
    sampler: str = "fast"
    features: object = None


@dataclass(frozen=True)
class FitOptions:
    """How Gamma is fitted (Eq. (6), p. 3): the ridge ``lam`` (as used: after a convention's floor),
    the ``solver`` (:func:`fit`), a byte limit ``max_memory`` (None: :func:`memory_limit`) and the
    matrix-free solve's relative-residual ``tol`` (:data:`TRAIN_TOL`)."""

    lam: float = 0.0
    solver: str = "auto"
    max_memory: int | None = None
    tol: float = TRAIN_TOL


def sample_training_set(
    law: PromptLaw,
    tasks: np.ndarray,
    n: int,
    rng: np.random.Generator,
    assign: np.ndarray | None = None,
    progress: Callable[[str], None] | None = None,
):
    """The n training prompts' features: X = x_test rows (n x d), V = [u, s] rows (n x (d+1)), y = y_test.

    Prompt mu uses task ``tasks[mu mod k]`` (round robin), or ``tasks[assign[mu]]``
    when ``assign`` is given (:func:`task_assignment`); drawn in chunks of :func:`chunk_rows` prompts
    (a function of d only, so a seed gives the same prompts whatever the solver).
    With ``law.features`` X is n x D and V n x (D + 1).
    """
    k, d = tasks.shape
    if law.features is not None:
        d = int(law.features.D)  # the learner's input dimension
    m = chunk_rows(d)
    idx_all = np.arange(n) % k if assign is None else np.asarray(assign)
    X, V, y = np.empty((n, d)), np.empty((n, d + 1)), np.empty(n)
    last = time.monotonic()
    for start in range(0, n, m):
        stop = min(n, start + m)
        P = sample_prompts(
            law.f_numpy, tasks[idx_all[start:stop]], law.ell, law.rho, rng, method=law.sampler, features=law.features
        )
        X[start:stop], V[start:stop, :d], V[start:stop, d], y[start:stop] = P.x_test, P.u, P.s, P.y_test
        if progress is not None and time.monotonic() - last > 2.0:
            progress(f"  prompts {stop}/{n}")
            last = time.monotonic()
    return X, V, y


def train(
    law: PromptLaw,
    tasks: np.ndarray,
    n: int,
    rng: np.random.Generator,
    options: FitOptions | None = None,
    assign: np.ndarray | None = None,
    progress: Callable[[str], None] | None = None,
):
    """Train Gamma on n prompts drawn by ``law``; prompt mu uses task ``tasks[mu mod k]`` (Eq. (6), p. 3),
    or ``tasks[assign[mu]]``; fitted with ``options`` (:class:`FitOptions`; None: its defaults).

    With ``law.features`` Gamma is D x (D + 1).
    Returns ``(Gamma, FitInfo)`` (the solver path, CG iterations, certified residual).
    """
    X, V, y = sample_training_set(law, tasks, n, rng, assign, progress)
    options = options or FitOptions()
    return fit(X, V, y, options.lam, options.solver, tol=options.tol, progress=progress, max_memory=options.max_memory)


def predict(Gamma: np.ndarray, P) -> np.ndarray:
    """y_hat = x_test^T (A u + s b) for each prompt (Eq. (4), p. 2)."""
    d = Gamma.shape[0]
    A, b = Gamma[:, :d], Gamma[:, d]
    return np.einsum("md,md->m", P.x_test, P.u @ A.T + P.s[:, None] * b)


def mc_test_error(
    Gamma,
    law: PromptLaw,
    cov_test: Covariance,
    n_test: int,
    rngs: tuple,
    seed=None,
    tasks: str = "gaussian",
) -> Value:
    """Monte-Carlo ICL error on ``n_test`` fresh prompts drawn by ``law``, each with a fresh task ~ N(0, C_test)
    (its law ``tasks``); ``rngs``: the generators of the test tasks and of the prompts.

    The squared errors are i.i.d., so the standard error is their sample
    standard deviation over sqrt(n_test).
    """
    rng_tasks, rng_prompts = rngs
    W = sample_tasks(cov_test, n_test, rng_tasks, law=tasks)
    P = sample_prompts(law.f_numpy, W, law.ell, law.rho, rng_prompts, method=law.sampler)
    sq = (predict(Gamma, P) - P.y_test) ** 2
    return Value(
        float(sq.mean()),
        "mc",
        stderr=float(sample_se(sq)),
        n_samples=n_test,
        seeds=None if seed is None else (seed,),
        note="MC test error on fresh prompts with fresh tasks from N(0, C_test)",
    )


def idg_error(Gamma, teacher, rho: float, ell: int, tasks: np.ndarray) -> Value:
    """Exact IDG error of Gamma: e(Gamma|w_j) averaged uniformly over the k pretraining tasks w_j.

    In-distribution generalisation (docs/idg.md): a fresh prompt whose task is one of
    the pretraining tasks, :func:`icl_symbolic.model.gamma_error.e_gamma_tasks`.
    """
    d = Gamma.shape[0]
    return gamma_error.e_gamma_tasks(Gamma[:, :d], Gamma[:, d], teacher, rho, ell, tasks)


def exact_test_error(
    Gamma,
    teacher,
    rho: float,
    ell: int,
    cov_test: Covariance,
    rng: np.random.Generator,
    n_tasks: int = 2000,
    law: str = "gaussian",
) -> Value:
    """Exact finite-size test error of Gamma (:mod:`icl_symbolic.model.gamma_error`).

    C_test = I: ``e_gamma_isotropic`` (Gaussian tasks) or ``e_gamma_sphere``
    (``law="sphere"``); otherwise ``e_gamma_mc_tasks`` (exact in the prompt
    given each task, Monte Carlo over ``n_tasks`` tasks of the law).
    """
    d = Gamma.shape[0]
    A, b = Gamma[:, :d], Gamma[:, d]
    if cov_test.is_identity:
        if law == "sphere":
            return gamma_error.e_gamma_sphere(A, b, teacher, rho, d, ell)
        return gamma_error.e_gamma_isotropic(A, b, teacher, rho, d, ell)
    return gamma_error.e_gamma_mc_tasks(A, b, teacher, rho, ell, cov_test, MonteCarlo(n_tasks, rng), law=law)


# ----------------------------------------------------------------------------
# the public entry point
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class SeedRun:
    """One seed: exact-functional error, Monte-Carlo error, the solve (path, CG iterations,
    certified normal-equations residual), training and total time; ``e_idg`` the exact
    functional of the same Gamma over its k pretraining tasks (None without ``exact``)."""

    seed: int
    e: Value | None
    e_mc: Value
    solver: str
    iterations: int
    residual: float
    train_seconds: float
    seconds: float
    Gamma: np.ndarray | None = field(default=None, repr=False, compare=False)
    e_idg: Value | None = None

    @property
    def how(self) -> str:
        """The solver path (old name of :attr:`solver`)."""
        return self.solver


def seed_error(run, error: str = "icl") -> tuple:
    """(value, how) of one seed's error: ``icl`` the exact test functional (else its Monte-Carlo
    estimate), ``idg`` the exact IDG functional, ``gap`` icl - idg on the same Gamma.

    The number a verification stores per seed in the simulation cache (its key digests this
    module's import closure, ``icl_symbolic.simulation.cache``)."""
    if error == "icl":
        v = run.e if run.e is not None else run.e_mc
        return float(v.value), ("exact" if run.e is not None else "mc")
    if run.e is None or run.e_idg is None:
        raise ICLError(f"the {error} error needs the exact functionals (exact=True)")
    if error == "idg":
        return float(run.e_idg.value), "exact"
    return float(run.e.value) - float(run.e_idg.value), "exact"


@dataclass(frozen=True)
class SimResult(SettingView, Rows):
    """A simulation: its :class:`~icl_symbolic.model.setting.Setting` (as run: the covariances by
    name, ``n_test`` resolved), the integer sizes, per-seed runs, and means with SE over seeds
    (``Value(method="sim")``).  The setting's fields read as attributes too (``res.tau``,
    ``res.teacher`` the teacher's label, ``res.convention``)."""

    setting: Setting
    ell: int
    k: int
    n: int
    seeds: tuple
    sampler: str
    runs: tuple
    e: Value | None
    e_mc: Value
    seconds: float
    e_idg: Value | None = None
    #: the comparison with the d -> infinity theory (``e_theory``, ``e_theory_reason``, ``z``, ``gap_rel``,
    #: ``expected_gap_rel``, ``comparison``), attached by icl_symbolic.studies.compare.with_theory (the
    #: simulation itself never computes the theory)
    theory: dict | None = None

    @property
    def e_theory(self) -> float | None:
        """The d -> infinity error at this point (None: not attached, or the ridgeless peak)."""
        return None if self.theory is None else self.theory["e_theory"]

    @property
    def z(self) -> float | None:
        """(e - e_theory) / SE over seeds (None: not attached, one seed, or the peak)."""
        return None if self.theory is None else self.theory["z"]

    def points(self) -> list[dict]:
        """``[to_json()]``: the one point of ``simulate --json`` for this setting."""
        return [self.to_json()]

    # -- display --------------------------------------------------------------
    def _rows(self):
        rows = [Quantity("e (exact test functional)", "e", self.e)] if self.e is not None else []
        if self.e_idg is not None:
            rows.append(Quantity("e_idg (exact, over the k pretraining tasks)", "e_{\\rm IDG}", self.e_idg))
        rows.append(Quantity(f"e_mc ({self.n_test} test prompts/seed)", "e_{\\rm MC}", self.e_mc))
        if self.theory is not None:
            e_th = self.theory["e_theory"]
            rows.append(
                Quantity(
                    "e_theory (d -> infinity)",
                    "e_\\infty",
                    Value(math.inf if e_th is None else e_th, "numeric", note=self.theory["comparison"]),
                )
            )
        return rows

    def _title(self) -> str:
        return (
            f"Simulated ICL error, f(g) = {self.teacher}: d = {self.d}, ell = {self.ell}, k = {self.k}, "
            f"n = {self.n} (alpha = {self.alpha:g}, kappa = {self.kappa:g}, tau = {self.tau:g}), "
            f"rho = {self.rho:g}, lam = {self.lam:g}, C_train = {self.C_train}, C_test = {self.C_test}, "
            f"tasks = {self.tasks}, convention = {self.convention.name}"
        )

    def _footer(self) -> str:
        return f"  {len(self.runs)} seeds {list(self.seeds)}, {self.seconds:.1f} s (per seed: .runs)"

    def __repr__(self) -> str:
        return text_table(self._title(), self._rows(), 6, self._footer())

    def _repr_html_(self) -> str:
        return html_table(self._title(), self._rows(), 6, self._footer().strip())

    def _repr_latex_(self) -> str:
        return latex_table(self._title(), self._rows(), 6)

    def to_json(self) -> dict:
        """Inputs plus ``e_mean``, ``e_se`` (exact functional), ``e_mc_mean``, ``e_mc_se``, ``seconds``;
        ``per_seed`` adds each seed's ``solver``, ``iterations``, ``residual`` and times.  The only
        keys that vary between identical runs are ``seconds`` and ``train_seconds``."""

        def f(x):
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            **self.setting_items("teacher", "d", *PARAMETERS, "C_train", "C_test"),
            "ell": self.ell,
            "k": self.k,
            "n": self.n,
            "seeds": list(self.seeds),
            "n_test": self.n_test,
            "sampler": self.sampler,
            "tasks": self.tasks,
            "convention": self.convention.to_json(),
            "e_mean": None if self.e is None else f(self.e.value),
            "e_se": None if self.e is None or self.e.stderr is None else f(self.e.stderr),
            "e_idg_mean": None if self.e_idg is None else f(self.e_idg.value),
            "e_idg_se": None if self.e_idg is None or self.e_idg.stderr is None else f(self.e_idg.stderr),
            "e_mc_mean": f(self.e_mc.value),
            "e_mc_se": None if self.e_mc.stderr is None else f(self.e_mc.stderr),
            "per_seed": [
                {
                    "seed": r.seed,
                    "e": None if r.e is None else f(r.e.value),
                    "e_idg": None if r.e_idg is None else f(r.e_idg.value),
                    "e_mc": f(r.e_mc.value),
                    "e_mc_se": f(r.e_mc.stderr),
                    "solver": r.solver,
                    "iterations": r.iterations,
                    "residual": f(r.residual),
                    "train_seconds": round(r.train_seconds, 3),
                    "seconds": round(r.seconds, 3),
                }
                for r in self.runs
            ],
            "seconds": round(self.seconds, 3),
            **(self.theory or {}),
        }


def seed_mean(values: Sequence[float], seeds: Sequence[int], note: str) -> Value:
    """Mean over seeds with SE = sample std / sqrt(S) (None for one seed): :func:`icl_symbolic.core.stats.seed_mean_se`."""
    mean, se, n = seed_mean_se(values)
    return Value(mean, "sim", stderr=se, n_samples=n, seeds=tuple(seeds), note=note)


@dataclass(frozen=True)
class _SeedTask:
    """Everything one seed's run needs (picklable: sent to worker processes)."""

    f: object
    sz: Sizes
    rho: float
    lam: float
    cov_train: Covariance
    cov_test: Covariance
    seed: int
    n_test: int
    solver: str
    sampler: str
    exact: bool
    keep_gamma: bool
    max_memory: int | None
    progress: Callable[[str], None] | None = field(default=None, compare=False)
    label: str = ""
    convention: Convention = field(default_factory=Convention)


def _run_seed(task: _SeedTask) -> SeedRun:
    """One seed: tasks, training (Eq. (6)), MC and exact test error, exact IDG error."""
    t0 = time.monotonic()
    sz, progress, conv = task.sz, task.progress, task.convention
    T = teacher(task.f)
    lam = conv.lam(task.lam)
    if progress is not None:
        progress(
            f"{task.label}seed {task.seed}: d={sz.d} ell={sz.ell} k={sz.k} n={sz.n} "
            f"[{choose_solver(sz, task.solver, lam, task.max_memory)}]"
        )
    # the fifth stream (task assignment) leaves the first four as they were
    ss_tasks, ss_train, ss_test_tasks, ss_test, ss_assign = np.random.SeedSequence(task.seed).spawn(5)
    tasks = sample_tasks(task.cov_train, sz.k, np.random.default_rng(ss_tasks), law=conv.train_tasks)
    assign = task_assignment(sz.n, sz.k, conv, np.random.default_rng(ss_assign))
    law = PromptLaw(T.numpy, sz.ell, task.rho, task.sampler)
    Gamma, info = train(
        law,
        tasks,
        sz.n,
        np.random.default_rng(ss_train),
        FitOptions(lam, task.solver, task.max_memory),
        assign=assign,
        progress=progress,
    )
    t_train = time.monotonic() - t0
    rng_test_tasks = np.random.default_rng(ss_test_tasks)
    e_mc = mc_test_error(
        Gamma,
        law,
        task.cov_test,
        task.n_test,
        (rng_test_tasks, np.random.default_rng(ss_test)),
        task.seed,
        tasks=conv.test_tasks,
    )
    e = (
        exact_test_error(Gamma, T, task.rho, sz.ell, task.cov_test, rng_test_tasks, law=conv.test_tasks)
        if task.exact
        else None
    )
    e_idg = idg_error(Gamma, T, task.rho, sz.ell, tasks) if task.exact else None
    return SeedRun(
        task.seed,
        e,
        e_mc,
        info.solver,
        info.iterations,
        info.residual,
        t_train,
        time.monotonic() - t0,
        Gamma if task.keep_gamma else None,
        e_idg,
    )


def check_rho_lam(rho, lam) -> None:
    """Refuse (ICLError) a noise variance or ridge that is not a finite number >= 0."""
    check_nonnegative("rho", rho)
    check_nonnegative("lam", lam)


def check_seeds(seeds) -> tuple:
    """The seeds as a tuple of ints; refuse (ICLError) none, negative or repeated ones."""
    seeds = tuple(int(s) for s in seeds)
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise ICLError(f"seeds must be distinct non-negative integers, got {seeds}")
    return seeds


def _check_run(seeds, sampler) -> tuple:
    """The run options of one simulation that are not part of its Setting (which was validated once)."""
    seeds = check_seeds(seeds)
    if sampler not in ("fast", "direct"):
        raise ICLError(f"unknown prompt sampler {sampler!r}; expected fast or direct")
    return seeds


#: simulate_many announces a run (memory: core.limits.ANNOUNCE_BYTES; draws) above these sizes, before it starts
ANNOUNCE_DRAWS = 10**9


def seed_cost(sz: Sizes, solver: str = "auto", n_test: int = DEFAULT_N_TEST, lam: float = 0.0) -> tuple:
    """``(seconds, flops, draws)`` of one seed: the context tokens drawn (training prompts, their
    tasks, the test prompts), the training solve's flops (:func:`cost_flops` of the solver ``auto``
    picks) and a fixed part (the teacher's tables, the exact test functional), each with its
    measured constant ``cost.SECONDS_PER`` (``sim_draw``, ``sim_flop``, ``sim_seed``)."""
    draws = sz.n * (sz.ell + sz.k + 2) + n_test * (sz.ell + 2)
    flops = cost_flops(sz, choose_solver(sz, solver, lam), lam)
    seconds = SECONDS_PER["sim_seed"] + draws * SECONDS_PER["sim_draw"] + flops * SECONDS_PER["sim_flop"]
    return seconds, flops, draws


#: what shortens a run of simulations (the options of ``simulate``)
SIM_REDUCE = "fewer --seeds, a smaller --d, --alpha or --tau"


def run_estimate(
    plans, jobs: int = 1, scheduler: str | None = None, what: str = "simulate", reduce: str = SIM_REDUCE
) -> Estimate:
    """What a list of planned simulations costs: the sum of :func:`seed_cost` over every
    (simulation, seed), divided by the runs that go on at once here.  ``plans``: dicts with
    ``sz`` (:class:`Sizes`), ``seeds``, ``solver``, ``n_test``, ``lam`` (:func:`sized_plan`), and
    optionally ``extra_seconds``, a per-seed cost on top of :func:`seed_cost` (the kernel learner's
    feature maps); ``what`` names the command, ``reduce`` the options that shorten it."""
    seconds = flops = draws = 0.0
    seeds = 0
    for pl in plans:
        s, fl, dr = seed_cost(pl["sz"], pl["solver"], pl["n_test"], pl["lam"])
        s += pl.get("extra_seconds", 0.0)
        n = len(pl["seeds"])
        seconds, flops, draws, seeds = seconds + s * n, flops + fl * n, draws + dr * n, seeds + n
    at_once = concurrent_runs(jobs, seeds, scheduler)
    what = f"{what}: {seeds} seed run(s)" + (f" on {at_once} processes" if at_once > 1 else "")
    unit = f"context tokens drawn, {flops:.2g} flops of training"
    return Estimate(seconds / at_once, draws, unit, what, reduce)


def sized_plan(sz: Sizes, n_seeds: int, n_test: int = DEFAULT_N_TEST, lam: float = 0.0, solver: str = "auto") -> dict:
    """A plan for :func:`run_estimate` from sizes alone (a ladder's rung, a kernel learner's run in D)."""
    return dict(sz=sz, seeds=range(int(n_seeds)), solver=solver, n_test=int(n_test), lam=float(lam or 0.0))


def seed_seconds(res: "SimResult") -> float:
    """One more seed of the simulation ``res`` by the cost model (:func:`seed_cost` at its sizes, solver
    ``auto``): what a verdict's advice "about N seeds (estimated T)" multiplies (icl_symbolic.core.verdict)."""
    st = res.setting
    return seed_cost(Sizes(st.d, res.ell, res.k, res.n), "auto", st.n_test, st.lam or 0.0)[0]


def run_seed_tasks(fn, tasks, estimate, jobs, address, progress, serial) -> tuple:
    """Run the seed tasks through :func:`icl_symbolic.core.parallel.map_sweep` after announcing
    ``estimate`` (then progress with an ETA; per-item progress only when the runs go in parallel):
    ``(runs, wall seconds)``.  Shared by the model's simulation and the kernel learner's."""
    watch = announced(progress, estimate, total=len(tasks), unit="seed runs")
    t_start = time.monotonic()
    runs = map_sweep(
        fn,
        tasks,
        jobs=jobs,
        scheduler=address,
        progress=None if serial else progress,
        label="seed run",
        on_item=lambda i, _: watch.update(i + 1),
    )
    return runs, time.monotonic() - t_start


def simulate_many(
    specs: Sequence[dict],
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Callable[[str], None] | None = None,
    what: str = "simulate",
    reduce: str = SIM_REDUCE,
) -> list:
    """Several simulations, every (simulation, seed) pair one item of one parallel map.

    ``specs``: dicts of one simulation each: ``f`` a :class:`~icl_symbolic.model.setting.Setting`
    (or ``setting=``), or the teacher with the setting's fields :data:`SPEC_FIELDS` as loose
    keywords (``tasks`` sets both task laws of the convention); the run options :data:`RUN_OPTIONS`
    (``seeds`` and the fields of :class:`RunOptions`); ``progress``, ``jobs``, ``scheduler`` not
    allowed inside.  All inputs are validated and the memory
    of ``min(jobs, items)`` concurrent runs is checked before anything is
    computed.  Items run through :func:`icl_symbolic.core.parallel.map_sweep`
    (``jobs`` processes or a Dask ``scheduler``; BLAS pinned to one thread per
    item in the serial loop too, so the numbers do not depend on ``jobs``).
    The time estimate (:func:`run_estimate`, named ``what``, shortened by ``reduce``) goes to
    ``progress`` before the first seed when it is long.  Returns one :class:`SimResult` per spec, in order.
    """
    check_jobs(jobs)
    address = resolve_scheduler(scheduler)
    if not specs:
        raise ICLError("no simulations to run")
    plans = [_plan(spec) for spec in specs]
    n_items = sum(len(pl["seeds"]) for pl in plans)
    serial = address is None and concurrent_runs(jobs, n_items) == 1
    estimate = run_estimate(plans, jobs, address, what, reduce)
    estimate.check()  # past the ceiling without a budget: one refusal line, before the memory line
    tasks = []
    for i, pl in enumerate(plans):
        need = check_memory(
            pl["sz"], pl["solver"], pl["n_test"], memory_share(pl["max_memory"], jobs, n_items, address), pl["lam"]
        )
        label = f"run {i + 1}/{len(plans)} " if len(plans) > 1 else ""
        sz = pl["sz"]
        draws = sz.n * (sz.ell + sz.k + 2) + pl["n_test"] * (sz.ell + 2)
        if progress is not None and (need > ANNOUNCE_BYTES or draws > ANNOUNCE_DRAWS):
            # announced before the first array is allocated: what the run will take
            progress(
                f"{label}d={sz.d} ell={sz.ell} k={sz.k} n={sz.n}: peak memory about {need / 2**30:.2f} GiB "
                f"(estimate, all arrays), about {draws:.2g} context tokens drawn per seed, "
                f"{len(pl['seeds'])} seed(s); smaller --alpha, --tau or --d reduce it"
            )
        for seed in pl["seeds"]:
            tasks.append(
                _SeedTask(
                    pl["spec"],
                    pl["sz"],
                    pl["rho"],
                    pl["lam"],
                    pl["cov_train"],
                    pl["cov_test"],
                    seed,
                    pl["n_test"],
                    pl["solver"],
                    pl["sampler"],
                    pl["exact"],
                    pl["keep_gamma"],
                    pl["max_memory"],
                    progress if serial else None,
                    label,
                    pl["convention"],
                )
            )
    # the time, estimated from the cost model before the first seed, then progress with an ETA
    runs, seconds = run_seed_tasks(_run_seed, tasks, estimate, jobs, address, progress, serial)
    out, at = [], 0
    for pl in plans:
        seeds = pl["seeds"]
        rs = tuple(runs[at : at + len(seeds)])
        at += len(seeds)
        e_mean = e_idg = None
        if pl["exact"] and all(x.e is not None for x in rs):
            e_mean = seed_mean(
                [float(x.e) for x in rs], seeds, "exact test functional of each trained Gamma, mean over seeds"
            )
        if pl["exact"] and all(x.e_idg is not None for x in rs):
            e_idg = seed_mean(
                [float(x.e_idg) for x in rs],
                seeds,
                "IDG error: exact functional over the k pretraining tasks of each Gamma, mean over seeds",
            )
        e_mc = seed_mean(
            [float(x.e_mc) for x in rs],
            seeds,
            f"Monte-Carlo test error ({pl['n_test']} fresh prompts per seed), mean over seeds",
        )
        secs = seconds if len(plans) == 1 else sum(x.seconds for x in rs)
        sz = pl["sz"]
        out.append(
            SimResult(pl["setting"], sz.ell, sz.k, sz.n, seeds, pl["sampler"], rs, e_mean, e_mc, secs, e_idg=e_idg)
        )
    return out


@dataclass(frozen=True)
class RunOptions:
    """The run options of one simulation that are not part of its Setting: the ``solver``
    (``auto``: the cost model of :func:`choose_solver` with a dense fallback when CG stalls;
    ``gram``, ``kernel``, ``cg`` force one path, :func:`fit`), the prompt ``sampler`` (``fast`` or
    ``direct``, :func:`icl_symbolic.model.prompts.sample_prompts`), ``exact`` (also the exact test
    functional of each trained Gamma), ``max_memory`` (bytes; None: 80 % of what the OS reports
    available) and ``keep_gamma`` (keep each seed's Gamma in the result)."""

    solver: str = "auto"
    sampler: str = "fast"
    exact: bool = True
    max_memory: int | None = None
    keep_gamma: bool = False


#: the run options of a simulation spec (:func:`simulate_many`), with their defaults
RUN_OPTIONS = dict(seeds=(0, 1, 2), **dataclasses.asdict(RunOptions()))
#: the Setting fields a simulation spec may give as loose keywords (the teacher is ``f``)
SPEC_FIELDS = ("d", "alpha", "kappa", "tau", "rho", "lam", "C_train", "C_test", "n_test", "convention")


def _plan(spec: dict) -> dict:
    """Validate one simulation's inputs (no computation) and resolve sizes, covariances, teacher.

    The setting is ``setting`` (a :class:`Setting`) or ``f`` (a Setting, or the teacher with the
    loose parameters); ``tasks`` sets both task laws of the convention."""
    unknown = sorted(set(spec) - {"f", "setting", "tasks", *SPEC_FIELDS, *RUN_OPTIONS})
    if unknown:
        raise TypeError(f"a simulation spec got an unexpected keyword argument {unknown[0]!r}")
    opt = {**RUN_OPTIONS, **{k: spec[k] for k in RUN_OPTIONS if k in spec}}
    seeds, solver, sampler, exact, max_memory, keep_gamma = (opt[k] for k in RUN_OPTIONS)
    setting, tasks = spec.get("setting"), spec.get("tasks")
    st = as_setting(spec.get("f") if setting is None else setting, **{k: spec.get(k) for k in SPEC_FIELDS})
    if st.d is None:
        raise ICLError("a simulation needs the dimension d")
    if tasks is not None:
        st = st.replace(convention=resolve_convention(st.convention, tasks))
    conv = st.convention
    sz = st.sizes  # computed once by the Setting, whose ratios were validated once
    seeds = _check_run(seeds, sampler)
    n_test = DEFAULT_N_TEST if st.n_test is None else st.n_test  # the Setting checked it
    check_memory(sz, solver, n_test, max_memory, conv.lam(st.lam))  # before any array is allocated
    cov_train = resolve_covariance(st.C_train, sz.d)
    cov_test = resolve_covariance(st.C_test, sz.d)
    T = st.teacher
    spec = st.f if isinstance(st.f, str) else T
    return {
        "spec": spec,
        # the setting as run: the covariances by name, n_test resolved
        "setting": st.replace(f=spec, C_train=cov_train.name, C_test=cov_test.name, n_test=n_test),
        "sz": sz,
        "lam": st.lam,
        "rho": st.rho,
        "cov_train": cov_train,
        "cov_test": cov_test,
        "seeds": seeds,
        "n_test": n_test,
        "solver": solver,
        "sampler": sampler,
        "exact": bool(exact),
        "max_memory": max_memory,
        "keep_gamma": bool(keep_gamma),
        "convention": conv,
    }


def simulate(
    setting,
    seeds: Sequence[int] = (0, 1, 2),
    options: RunOptions | None = None,
    progress: Callable[[str], None] | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
) -> SimResult:
    """Simulate training (Eq. (6)) and testing of linear attention in one setting.

    Paper: Sec. 2, Eqs. (1)-(7), p. 2-3; the ICL error of Eq. (7).

    Parameters
    ----------
    setting : Setting
        The :class:`~icl_symbolic.model.setting.Setting` to simulate (its ``d`` is needed; its
        ratios become sizes by its convention's rounding, :func:`icl_symbolic.model.sizes.sizes`);
        a teacher alone stands for ``Setting(teacher)``.  The loose keywords of a setting go to
        :func:`simulate_many` (``simulate_many([dict(f=..., d=..., tau=..., seeds=...)])[0]``) or to
        the API's ``ics.simulate``.
    seeds : sequence of int
        One independent simulation per seed.
    options : RunOptions, optional
        The solver, sampler, exact functional, memory limit and kept Gamma (:class:`RunOptions`;
        None: its defaults).
    progress : callable(str), optional
        Receives progress lines (the CLI prints them to stderr): one per seed,
        prompt generation every ~2 s, CG iterations and residual every ~2 s.
    jobs : int
        Seeds run on this many processes (:func:`icl_symbolic.core.parallel.map_sweep`).
    scheduler : str, optional
        Dask scheduler address (``tcp://host:8786``); default ``$ICL_SYMBOLIC_SCHEDULER``.

    Returns
    -------
    SimResult
        ``e`` (mean over seeds of the exact functional, ``Value(method="sim")``,
        None when not computed), ``e_mc`` (mean over seeds of the Monte-Carlo
        error), ``e_idg`` (mean over seeds of the exact IDG error: the same Gamma on its
        k pretraining tasks), ``runs`` (per seed: solver path, iterations, certified
        residual), ``setting``.
    """
    spec = {"f": setting, "seeds": seeds, **dataclasses.asdict(options or RunOptions())}
    return simulate_many([spec], jobs=jobs, scheduler=scheduler, progress=progress)[0]
