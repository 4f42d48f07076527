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
machine.  This module never imports :mod:`icl_symbolic.theory` (tests and
figures compare the two; neither validates itself).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import scipy.linalg
from scipy.linalg import blas, lapack

from . import gamma_error
from .covariance import Covariance, check_task_law, resolve_covariance, sample_tasks
from .display import Quantity, html_table, latex_table, text_table
from .errors import ICLError
from .expr import teacher
from .prompts import sample_prompts
from .values import Value

#: Cholesky is accepted when the reciprocal 1-norm condition estimate exceeds this
#: (relative solution error then at most ~ eps / RCOND_MIN ~ 1e-5, in practice far less).
RCOND_MIN = 1e-11
#: Target bytes for one chunk of pair-product rows in the Gram accumulation.
CHUNK_BYTES = 1 << 25
SOLVERS = ("auto", "gram", "kernel")
DEFAULT_N_TEST = 20_000


# ----------------------------------------------------------------------------
# sizes and memory
# ----------------------------------------------------------------------------
def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


@dataclass(frozen=True)
class Sizes:
    """Integer sizes of one simulation (Sec. 2, p. 2: ell = alpha d, k = kappa d, n = tau d^2)."""

    d: int
    ell: int
    k: int
    n: int

    @property
    def p(self) -> int:
        """Number of trainable parameters d (d + 1)."""
        return self.d * (self.d + 1)


def sizes(d, alpha, kappa, tau) -> Sizes:
    """Integer sizes from the paper's ratios, rounding halves up.

    >>> sizes(64, 2, 2, 2)
    Sizes(d=64, ell=128, k=128, n=8192)
    >>> sizes(32, 20, 0.5, 10).p
    1056
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) and not (isinstance(d, float) and d == int(d)):
        raise ICLError(f"d must be an integer, got {d!r}")
    d = int(d)
    if d < 2:
        raise ICLError(f"d must be at least 2, got {d}")
    for name, value in (("alpha", alpha), ("kappa", kappa), ("tau", tau)):
        if not (isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value) and value > 0):
            raise ICLError(f"{name} must be a positive finite number, got {value!r}")
    out = Sizes(d, _round_half_up(alpha * d), _round_half_up(kappa * d), _round_half_up(tau * d * d))
    for name, value, ratio in (("ell = round(alpha d)", out.ell, "alpha"), ("k = round(kappa d)", out.k, "kappa"),
                               ("n = round(tau d^2)", out.n, "tau")):
        if value < 1:
            raise ICLError(f"{name} is {value} at d = {d}; increase {ratio}")
    return out


def choose_solver(sz: Sizes, solver: str = "auto") -> str:
    """``gram`` when n >= p = d(d+1), else ``kernel`` (for ``solver="auto"``)."""
    if solver not in SOLVERS:
        raise ICLError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")
    if solver != "auto":
        return solver
    return "gram" if sz.n >= sz.p else "kernel"


def chunk_rows(d: int) -> int:
    """Prompts per Gram-accumulation chunk (depends on d only, for reproducibility)."""
    p = d * (d + 1)
    return int(min(8192, max(64, CHUNK_BYTES // (8 * p))))


def estimate_memory(sz: Sizes, solver: str = "auto", n_test: int = DEFAULT_N_TEST) -> int:
    """Peak bytes of one training run, counted generously (float64 arrays only).

    gram:   the pair table T (~p^2/4) while G is assembled, G with its Cholesky
            factor in place, and the eigen-decomposition fallback (eigenvectors +
            divide-and-conquer workspace ~ 2 p^2): 4 p^2 words, plus 3 chunks of
            m x p pair products.
    kernel: K (the Hadamard factor V V^T is formed in row blocks), the in-place
            factor, and the eigen fallback: 4 n^2 words, plus X, V.
    Both: the sampler's chunk (<= 2^22 floats) and the test prompts n_test (2d + 2).
    """
    solver = choose_solver(sz, solver)
    d, p, n = sz.d, sz.p, sz.n
    if solver == "gram":
        words = 4 * p * p + 3 * chunk_rows(d) * p + 4 * chunk_rows(d) * (d + 2)
    else:
        words = 4 * n * n + n * (3 * d + 4)
    words += (1 << 22) + n_test * (2 * d + 4)
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


def check_memory(sz: Sizes, solver: str = "auto", n_test: int = DEFAULT_N_TEST, max_memory: int | None = None) -> int:
    """Refuse (ICLError) before allocating when the run would not fit; return the estimate."""
    need = estimate_memory(sz, solver, n_test)
    limit = int(0.8 * available_memory()) if max_memory is None else int(max_memory)
    if need > limit:
        raise ICLError(f"d={sz.d}, n={sz.n} ({choose_solver(sz, solver)} solver) needs about "
                       f"{need / 2**30:.2f} GiB, more than the {limit / 2**30:.2f} GiB allowed; "
                       f"reduce d or tau")
    return need


# ----------------------------------------------------------------------------
# linear algebra
# ----------------------------------------------------------------------------
def _norm1_sym(M: np.ndarray, block: int = 512) -> float:
    """1-norm of a symmetric matrix, column blocks (no full-size temporary)."""
    best = 0.0
    for j in range(0, M.shape[1], block):
        best = max(best, float(np.abs(M[:, j:j + block]).sum(axis=0).max()))
    return best


def solve_psd(M: np.ndarray, rhs: np.ndarray, shift: float = 0.0, overwrite: bool = False):
    """Solve (M + shift I) x = rhs for symmetric PSD M, stably; min-norm if singular.

    Cholesky with a condition check (LAPACK dpocon); if the estimate of the
    reciprocal condition number is below ``RCOND_MIN`` or the factorisation
    fails, the eigen-decomposition pseudo-inverse with eigenvalue cutoff
    ``size * eps * lambda_max`` (the rule of ``numpy.linalg.lstsq``).

    Returns ``(x, how)`` with ``how`` in ``{"cholesky", "eigh-pinv"}``.

    >>> M = np.array([[2.0, 0.0], [0.0, 0.0]])
    >>> x, how = solve_psd(M, np.array([2.0, 1.0]))
    >>> x.tolist(), how
    ([1.0, 0.0], 'eigh-pinv')
    """
    size = M.shape[0]
    A = M if overwrite else M.copy(order="F")
    if not A.flags.f_contiguous:
        A = A.T               # symmetric: the transpose is the same matrix, Fortran-ordered (in place)
    if shift:
        A.flat[::size + 1] += shift
    anorm = _norm1_sym(A)
    diag = A.diagonal().copy()
    if anorm > 0:
        try:
            c, low = scipy.linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
            rcond, info = lapack.dpocon(c, anorm, uplo="L")
            if info == 0 and rcond > RCOND_MIN:
                return scipy.linalg.cho_solve((c, low), rhs, check_finite=False), "cholesky"
        except np.linalg.LinAlgError:
            pass
    # Cholesky wrote only the lower triangle: restore the diagonal and use the upper one.
    A.flat[::size + 1] = diag
    evals, evecs = scipy.linalg.eigh(A, lower=False, overwrite_a=True, check_finite=False)
    cutoff = size * np.finfo(float).eps * max(float(evals[-1]), 0.0)
    inv = np.zeros_like(evals)
    keep = evals > cutoff
    inv[keep] = 1.0 / evals[keep]
    return evecs @ (inv * (evecs.T @ rhs)), "eigh-pinv"


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
        XS = X[:, self.ix] * X[:, self.jx]                 # (m, d(d+1)/2)
        VS = V[:, self.ia] * V[:, self.ja]                 # (m, (d+1)(d+2)/2)
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
        G = np.empty((self.p, self.p))            # C order; symmetric, so G.T is its Fortran view
        for i in range(d):                         # row block i: G[(i, a), (j, b)] = T[px[i, j], pa[a, b]]
            G[i * (d + 1):(i + 1) * (d + 1)] = self.T[px[i][None, :, None], pa[:, None, :]].reshape(d + 1, self.p)
        self.T = None
        return G

    def solve(self, lam: float):
        G = self.gram()
        shift = (self.n / self.d) * lam
        gamma, how = solve_psd(G, self.R.ravel(), shift, overwrite=True)
        return gamma.reshape(self.d, self.d + 1), how


def kernel_solve(X: np.ndarray, V: np.ndarray, y: np.ndarray, lam: float):
    """Kernel (dual) form for n < p: K = (X X^T) o (V V^T), Gamma = X^T diag(c) V.

    Returns ``(Gamma, how)``.
    """
    n, d = X.shape
    K = X @ X.T
    for start in range(0, n, 256):         # Hadamard product by row blocks: no second n x n array
        K[start:start + 256] *= V[start:start + 256] @ V.T
    c, how = solve_psd(K, y, (n / d) * lam, overwrite=True)
    return X.T @ (c[:, None] * V), how


def fit_gamma(X, V, y, lam: float = 0.0, solver: str = "auto"):
    """Ridge fit of Eq. (6) on in-memory data (X = x_test rows, V = [u, s] rows).

    ``solver`` is ``gram``, ``kernel`` or ``auto`` (kernel when n < p).
    Returns ``(Gamma, how)`` with Gamma of shape (d, d+1).

    >>> rng = np.random.default_rng(7)
    >>> X, V, y = rng.standard_normal((30, 3)), rng.standard_normal((30, 4)), rng.standard_normal(30)
    >>> G1, _ = fit_gamma(X, V, y, 0.0, "gram"); G2, _ = fit_gamma(X, V, y, 0.0, "kernel")
    >>> bool(np.allclose(G1, G2, rtol=1e-9, atol=1e-12))
    True
    """
    X, V, y = np.asarray(X, float), np.asarray(V, float), np.asarray(y, float)
    n, d = X.shape
    sz = Sizes(d, 1, 1, n)
    if choose_solver(sz, solver) == "kernel":
        return kernel_solve(X, V, y, lam)
    acc = GramAccumulator(d)
    m = chunk_rows(d)
    for start in range(0, n, m):
        acc.add(X[start:start + m], V[start:start + m], y[start:start + m])
    return acc.solve(lam)


# ----------------------------------------------------------------------------
# training and testing
# ----------------------------------------------------------------------------
def _features(P) -> tuple[np.ndarray, np.ndarray]:
    return P.x_test, np.concatenate([P.u, P.s[:, None]], axis=1)


def train(f_numpy, tasks: np.ndarray, n: int, ell: int, rho: float, lam: float, rng: np.random.Generator,
          solver: str = "auto", sampler: str = "fast", progress: Callable[[str], None] | None = None,
          features=None):
    """Train Gamma on n prompts; prompt mu uses task ``tasks[mu mod k]`` (Eq. (6), p. 3).

    ``features`` (direct sampler only): a query-side feature map with attribute ``D``
    (:class:`icl_symbolic.kernel.FeatureTransform`); Gamma is then D x (D + 1).
    Returns ``(Gamma, how)`` where ``how`` names the solver path.
    """
    k, d = tasks.shape
    if features is not None:
        d = int(features.D)          # the learner's input dimension
    sz = Sizes(d, ell, k, n)
    solver = choose_solver(sz, solver)
    m = chunk_rows(d)
    idx_all = np.arange(n) % k
    if solver == "kernel":
        X = np.empty((n, d))
        V = np.empty((n, d + 1))
        y = np.empty(n)
    else:
        acc = GramAccumulator(d)
    last = time.monotonic()
    for start in range(0, n, m):
        stop = min(n, start + m)
        P = sample_prompts(f_numpy, tasks[idx_all[start:stop]], ell, rho, rng, method=sampler, features=features)
        Xc, Vc = _features(P)
        if solver == "kernel":
            X[start:stop], V[start:stop], y[start:stop] = Xc, Vc, P.y_test
        else:
            acc.add(Xc, Vc, P.y_test)
        if progress is not None and time.monotonic() - last > 2.0:
            progress(f"  prompts {stop}/{n}")
            last = time.monotonic()
    if solver == "kernel":
        Gamma, how = kernel_solve(X, V, y, lam)
    else:
        Gamma, how = acc.solve(lam)
    return Gamma, f"{solver}/{how}"


def predict(Gamma: np.ndarray, P) -> np.ndarray:
    """y_hat = x_test^T (A u + s b) for each prompt (Eq. (4), p. 2)."""
    d = Gamma.shape[0]
    A, b = Gamma[:, :d], Gamma[:, d]
    return np.einsum("md,md->m", P.x_test, P.u @ A.T + P.s[:, None] * b)


def mc_test_error(Gamma, f_numpy, cov_test: Covariance, ell: int, rho: float, n_test: int,
                  rng_tasks: np.random.Generator, rng_prompts: np.random.Generator,
                  sampler: str = "fast", seed=None, law: str = "gaussian") -> Value:
    """Monte-Carlo ICL error on ``n_test`` fresh prompts, each with a fresh task ~ N(0, C_test) (``law``).

    The squared errors are i.i.d., so the standard error is their sample
    standard deviation over sqrt(n_test).
    """
    W = sample_tasks(cov_test, n_test, rng_tasks, law=law)
    P = sample_prompts(f_numpy, W, ell, rho, rng_prompts, method=sampler)
    sq = (predict(Gamma, P) - P.y_test) ** 2
    return Value(float(sq.mean()), "mc", stderr=float(sq.std(ddof=1) / math.sqrt(n_test)), n_samples=n_test,
                 seeds=None if seed is None else (seed,),
                 note="MC test error on fresh prompts with fresh tasks from N(0, C_test)")


def exact_test_error(Gamma, teacher, rho: float, ell: int, cov_test: Covariance, rng: np.random.Generator,
                     n_tasks: int = 2000, law: str = "gaussian") -> Value:
    """Exact finite-size test error of Gamma (:mod:`icl_symbolic.gamma_error`).

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
    return gamma_error.e_gamma_mc_tasks(A, b, teacher, rho, ell, cov_test, n_tasks, rng, law=law)


# ----------------------------------------------------------------------------
# the public entry point
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class SeedRun:
    """One seed: exact-functional error, Monte-Carlo error, solver path, time."""

    seed: int
    e: Value | None
    e_mc: Value
    how: str
    seconds: float
    Gamma: np.ndarray | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class SimResult:
    """A simulation: inputs, per-seed runs, and means with SE over seeds (``Value(method="sim")``)."""

    teacher: str
    d: int
    ell: int
    k: int
    n: int
    alpha: float
    kappa: float
    tau: float
    rho: float
    lam: float
    C_train: str
    C_test: str
    seeds: tuple
    n_test: int
    sampler: str
    runs: tuple
    e: Value | None
    e_mc: Value
    seconds: float
    tasks: str = "gaussian"

    # -- display --------------------------------------------------------------
    def _rows(self):
        rows = [Quantity("e (exact test functional)", "e", self.e)] if self.e is not None else []
        return rows + [Quantity(f"e_mc ({self.n_test} test prompts/seed)", "e_{\\rm MC}", self.e_mc)]

    def _title(self) -> str:
        return (f"Simulated ICL error, f(g) = {self.teacher}: d = {self.d}, ell = {self.ell}, k = {self.k}, "
                f"n = {self.n} (alpha = {self.alpha:g}, kappa = {self.kappa:g}, tau = {self.tau:g}), "
                f"rho = {self.rho:g}, lam = {self.lam:g}, C_train = {self.C_train}, C_test = {self.C_test}, "
                f"tasks = {self.tasks}")

    def _footer(self) -> str:
        return f"  {len(self.runs)} seeds {list(self.seeds)}, {self.seconds:.1f} s (per seed: .runs)"

    def __repr__(self) -> str:
        return text_table(self._title(), self._rows(), 6, self._footer())

    def _repr_html_(self) -> str:
        return html_table(self._title(), self._rows(), 6, self._footer().strip())

    def _repr_latex_(self) -> str:
        return latex_table(self._title(), self._rows(), 6)

    def to_json(self) -> dict:
        """Inputs plus ``e_mean``, ``e_se`` (exact functional), ``e_mc_mean``, ``e_mc_se``, ``seconds``."""
        def f(x):
            return None if x is None or not math.isfinite(x) else float(x)
        return {
            "teacher": self.teacher, "d": self.d, "alpha": self.alpha, "kappa": self.kappa, "tau": self.tau,
            "rho": self.rho, "lam": self.lam, "C_train": self.C_train, "C_test": self.C_test,
            "ell": self.ell, "k": self.k, "n": self.n, "seeds": list(self.seeds), "n_test": self.n_test,
            "sampler": self.sampler, "tasks": self.tasks,
            "e_mean": None if self.e is None else f(self.e.value),
            "e_se": None if self.e is None or self.e.stderr is None else f(self.e.stderr),
            "e_mc_mean": f(self.e_mc.value),
            "e_mc_se": None if self.e_mc.stderr is None else f(self.e_mc.stderr),
            "per_seed": [{"seed": r.seed, "e": None if r.e is None else f(r.e.value),
                          "e_mc": f(r.e_mc.value), "e_mc_se": f(r.e_mc.stderr), "solver": r.how,
                          "seconds": round(r.seconds, 3)} for r in self.runs],
            "seconds": round(self.seconds, 3),
        }


def seed_mean(values: Sequence[float], seeds: Sequence[int], note: str) -> Value:
    """Mean over seeds with SE = sample std / sqrt(S) (None for one seed)."""
    arr = np.asarray(values, dtype=float)
    se = float(arr.std(ddof=1) / math.sqrt(arr.size)) if arr.size > 1 else None
    return Value(float(arr.mean()), "sim", stderr=se, n_samples=int(arr.size), seeds=tuple(seeds), note=note)


def _teacher(f):
    return teacher(f)


def simulate(f, d: int, alpha: float, kappa: float, tau: float, rho: float, lam: float = 0.0,
             C_train="identity", C_test="identity", seeds: Sequence[int] = (0, 1, 2),
             n_test: int = DEFAULT_N_TEST, progress: Callable[[str], None] | None = None,
             solver: str = "auto", sampler: str = "fast", exact: bool = True,
             max_memory: int | None = None, keep_gamma: bool = False, tasks: str = "gaussian") -> SimResult:
    """Simulate training (Eq. (6)) and testing of linear attention with teacher f.

    Paper: Sec. 2, Eqs. (1)-(7), p. 2-3; the ICL error of Eq. (7).

    Parameters
    ----------
    f : str, SymPy expression, callable or Teacher
        The teacher (parsed by :func:`icl_symbolic.expr.teacher`; never eval'd).
    d : int
        Input dimension (>= 2).
    alpha, kappa, tau : float
        ell/d, k/d, n/d^2 (rounded to integers, halves up).
    rho : float
        Label-noise variance.
    lam : float
        Ridge lambda (regulariser (n/d) lam); 0 means min-norm least squares.
    C_train, C_test : str, array or Covariance
        Task covariances (``identity``, ``powerlaw:p``, ``spiked:f:r``, ...).
    seeds : sequence of int
        One independent simulation per seed.
    n_test : int
        Fresh test prompts for the Monte-Carlo error.
    progress : callable(str), optional
        Receives progress lines (the CLI prints them to stderr).
    solver : {"auto", "gram", "kernel"}
    sampler : {"fast", "direct"}
        Prompt sampler (:func:`icl_symbolic.prompts.sample_prompts`).
    exact : bool
        Also compute the exact test functional of each trained Gamma (egamma).
    max_memory : int, optional
        Byte limit; default 80% of the memory the OS reports available.
    tasks : {"gaussian", "sphere"}
        Task law for training and test tasks: ``gaussian`` w ~ N(0, C) (the
        paper's setting), ``sphere`` the same rescaled to |w|^2 = tr C
        (:func:`icl_symbolic.covariance.sample_tasks`); same d -> infinity limit.

    Returns
    -------
    SimResult
        ``e`` (mean over seeds of the exact functional, ``Value(method="sim")``,
        None when not computed), ``e_mc`` (mean over seeds of the Monte-Carlo
        error), ``runs`` (per seed).
    """
    sz = sizes(d, alpha, kappa, tau)
    d = sz.d
    for name, value in (("rho", rho), ("lam", lam)):
        if not (isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value) and value >= 0):
            raise ICLError(f"{name} must be a finite number >= 0, got {value!r}")
    seeds = tuple(int(s) for s in seeds)
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise ICLError(f"seeds must be distinct non-negative integers, got {seeds}")
    if int(n_test) != n_test or n_test < 2:
        raise ICLError(f"n_test must be an integer >= 2, got {n_test}")
    n_test = int(n_test)
    if sampler not in ("fast", "direct"):
        raise ICLError(f"unknown prompt sampler {sampler!r}; expected fast or direct")
    check_task_law(tasks)
    choose_solver(sz, solver)
    check_memory(sz, solver, n_test, max_memory)
    cov_train = resolve_covariance(C_train, d)
    cov_test = resolve_covariance(C_test, d)
    T = _teacher(f)
    f_numpy = T.numpy
    t_start = time.monotonic()
    runs = []
    for i, seed in enumerate(seeds):
        t0 = time.monotonic()
        if progress is not None:
            progress(f"seed {seed} ({i + 1}/{len(seeds)}): d={d} ell={sz.ell} k={sz.k} n={sz.n} "
                     f"[{choose_solver(sz, solver)}]")
        ss_tasks, ss_train, ss_test_tasks, ss_test = np.random.SeedSequence(seed).spawn(4)
        W_train = sample_tasks(cov_train, sz.k, np.random.default_rng(ss_tasks), law=tasks)
        Gamma, how = train(f_numpy, W_train, sz.n, sz.ell, float(rho), float(lam), np.random.default_rng(ss_train),
                           solver, sampler, progress)
        rng_test_tasks = np.random.default_rng(ss_test_tasks)
        e_mc = mc_test_error(Gamma, f_numpy, cov_test, sz.ell, float(rho), n_test, rng_test_tasks,
                             np.random.default_rng(ss_test), sampler, seed, law=tasks)
        e = (exact_test_error(Gamma, T, float(rho), sz.ell, cov_test, rng_test_tasks, law=tasks)
             if exact else None)
        runs.append(SeedRun(seed, e, e_mc, how, time.monotonic() - t0, Gamma if keep_gamma else None))
    e_mean = None
    if exact and all(r.e is not None for r in runs):
        e_mean = seed_mean([float(r.e) for r in runs], seeds,
                           "exact test functional of each trained Gamma, mean over seeds")
    e_mc = seed_mean([float(r.e_mc) for r in runs], seeds,
                     f"Monte-Carlo test error ({n_test} fresh prompts per seed), mean over seeds")
    label = getattr(T, "label", str(f))
    return SimResult(label, d, sz.ell, sz.k, sz.n, float(alpha), float(kappa), float(tau), float(rho), float(lam),
                     cov_train.name, cov_test.name, seeds, n_test, sampler, tuple(runs), e_mean, e_mc,
                     time.monotonic() - t_start, tasks)
