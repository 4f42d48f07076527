r"""The kernel learner: linear attention on fixed Hermite features of the input (beyond the paper).

This module is OUR extension, not a result of the paper.  The paper (Result 1,
Eq. (9), p. 3; Appendix C, p. 10) shows that linear attention on the raw input
x learns only the linear Hermite mode a1 of a single-index teacher
y = f(x^T w) + eps and that every other mode acts as noise (rho_nonlinear,
Eq. (8), p. 3).  Here a fixed feature map phi is applied to the inputs first
(queries and context alike; the "kernel learner" of the related work), and we
ask which modes of f turn from noise into signal.

Feature maps
------------
``identity``: phi(x) = x, D = d (the paper's model).
``hermite:K`` (K = 1, 2, 3): the orthonormal multivariate Hermite polynomials of
z = sqrt(d) x ~ N(0, I_d) of total degree 1..K,
H_alpha(z) = prod_i h_{alpha_i}(z_i) with h_m = He_m/sqrt(m!) (the paper's h_m,
Eq. (2), p. 2), one feature per multi-index alpha with 1 <= |alpha| <= K; so
E[H_alpha H_beta] = delta_{alpha beta} and
D = sum_{m=1..K} C(d + m - 1, m).  The constant (m = 0) is not a feature.
The learner sees x~ = phi(z)/sqrt(D), which has covariance I_D/D exactly like
the paper's x (covariance I_d/d); ``hermite:1`` is therefore x~ = x, the
identity map.

The exact mode split
--------------------
Write w = r sqrt(d) u with |u| = 1, r^2 = omega = |w|^2/d, so x^T w = r (z^T u).
For a unit u the addition theorem h_m(z^T u) = sum_{|alpha|=m} sqrt(m!/alpha!)
u^alpha H_alpha(z) holds, so with beta_m(r) = E_g[f(r g) h_m(g)] (the Hermite
coefficients of f(r .))::

    y = sum_{m=1..K} theta_m(w)^T H_m(z)  +  beta_0(r) + sum_{m>K} (mode m)  +  eps,
    theta_m(w)_alpha = beta_m(r) sqrt(m!/alpha!) u^alpha.

For tasks normalised to |w|^2 = d (``tasks="sphere"``), r = 1 and beta_m = a_m:
the linear block is a1 w/sqrt(d), the quadratic block a2 (w w^T/d) written in
the orthonormal basis (diagonal entries w_i^2/d, off-diagonal sqrt(2) w_i w_j/d).
For Gaussian tasks w ~ N(0, I) (``tasks="gaussian"``, the paper's law and the
simulation's), r fluctuates (omega ~ chi^2_d/d) and beta_m(r) != a_m: e.g. for
f = g + h_2(g) the constant mode is beta_0 = (omega - 1)/sqrt(2), a per-task
offset of variance a2^2/d that no feature can predict (it acts as noise).

Task spectrum of the D-dimensional linear problem
-------------------------------------------------
With respect to x~ the teacher is linear with task vector w~ = sqrt(D) theta(w).
Its second-moment matrix C~ = D E[theta theta^T] is O(d)-invariant, so it is a
scalar on each irreducible piece: Sym^m(R^d) = Harm_m + Harm_{m-2} + ...  For
u uniform on the sphere, the copy of Harm_l inside degree m carries the
eigenvalue (derived in docs/kernel.md)::

    lambda_{m,l} = m! / ( d (d+2) ... (d+2l-2)  *  prod_{k=1..j} 2k (d + 2l + 2k - 2) ),  j = (m-l)/2,

and two copies of the same Harm_l (degrees m, m') have cross moment
sqrt(lambda_{m,l} lambda_{m',l}) (the same harmonic polynomial restricted to the
sphere).  Hence on Harm_l (multiplicity dim Harm_l = C(d+l-1, l) - C(d+l-3, l-2))
C~ acts on the copies as D * B[m, m'] sqrt(lambda_{m,l} lambda_{m',l}), with
B[m, m'] = E_tasks[beta_m(r) beta_m'(r)].  For K = 2 this is the linear block
(eigenvalue D B11/d, d-fold), the traceless quadratic block (2 D B22/(d(d+2)))
and the trace direction (D B22/d): isotropic plus a rank-one mean, the mean
carrying a fraction 1/(d+2) of the block's power for Gaussian tasks.

The captured power is sum_{m<=K} B[m, m] and the effective noise is

    rho_eff = rho + E_tasks[f(r g)^2] - sum_{m=1..K} B[m, m]

(modes 0 and m > K, plus the task-law offsets).  The prediction is the linear
deterministic equivalent (:func:`icl_symbolic.theory.asymptotic.e_linear`, general C) in D
dimensions with C_train = C_test = C~, noise rho_eff, and the learner's own
ratios::

    alpha = ell/D,   kappa = k/D,   tau = n/D^2,

i.e. the paper's alpha = ell/d, kappa = k/d, tau = n/d^2 with d replaced by the
learner's input dimension D (its parameter count is D(D+1)).  With ``identity``
features D = d and these are the paper's ratios.  This is an approximation
whose error at finite d is what docs/kernel.md measures: the features are not
Gaussian.  A captured spectrum that is identically zero uses the a1 = 0 branch
(Eq. (10), p. 3) in D dimensions, as ``theory`` does.

Only isotropic tasks (C_train = C_test = I) are covered: anisotropic w breaks
the O(d) symmetry that makes the spectrum above exact.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from math import comb, factorial

import numpy as np
import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.values import Value
from icl_symbolic.engine.expr import g as gsym
from icl_symbolic.engine.expr import teacher
from icl_symbolic.engine.gauss import float_expect
from icl_symbolic.engine.hermite import hermite_coeffs
from icl_symbolic.engine.omega_rule import omega_rule
from icl_symbolic.engine.orthopoly import h
from icl_symbolic.model.setting import MAX_FEATURE_DEGREE, check_features
from icl_symbolic.output.rows import Rows
from icl_symbolic.theory import a1zero
from icl_symbolic.theory.asymptotic import (
    Ratios,
    TaskCovariances,
    TaskSpectra,
    check_parameters,
    e_linear,
    e_nonlinear,
    teacher_moments,
)
from icl_symbolic.theory.peak import DIVERGES, is_peak

__all__ = [
    "FeatureMap",
    "parse_features",
    "feature_count",
    "multi_indices",
    "hermite_features",
    "direction_coefficients",
    "degree_slices",
    "FeatureTransform",
    "TeacherBlocks",
    "gaussian_task_vectors",
    "harmonic_dim",
    "sphere_eigenvalue",
    "mode_coefficients",
    "BlockMoments",
    "block_moments",
    "SpectrumBlock",
    "KernelSpectrum",
    "kernel_spectrum",
    "KernelCurve",
    "kernel_curve",
    "TASK_LAWS",
    "MAX_K",
    "MAX_D",
]

MAX_K = MAX_FEATURE_DEGREE
#: Largest feature dimension D the theory accepts (the spectrum is held as an array of length <= D).
MAX_D = 4_000_000
TASK_LAWS = ("gaussian", "sphere")
#: Gauss-Laguerre orders used for E over omega ~ chi^2_d/d (non-polynomial teachers, Gaussian tasks).
_LAGUERRE = (48, 64)

_g, _r = sympy.symbols("g r", real=True)


# ----------------------------------------------------------------------------
# feature maps
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class FeatureMap:
    """A query-side feature map: ``identity`` (phi(x) = x) or ``hermite:K`` (degrees 1..K)."""

    name: str
    K: int

    @property
    def is_identity(self) -> bool:
        return self.name == "identity"

    def D(self, d: int) -> int:
        """Feature dimension at input dimension d."""
        return feature_count(d, self.K)

    def __str__(self) -> str:
        return self.name


def parse_features(spec) -> FeatureMap:
    """``identity`` or ``hermite:K`` with K in 1..3 (one-line ICLError otherwise).

    >>> parse_features("hermite:2")
    FeatureMap(name='hermite:2', K=2)
    >>> parse_features("identity").K
    1
    """
    if isinstance(spec, FeatureMap):
        return spec
    name = check_features(spec)  # the one reading of the spec (icl_symbolic.model.setting)
    return FeatureMap(name, 1 if name == "identity" else int(name.split(":")[1]))


def feature_count(d: int, K: int) -> int:
    """D = sum_{m=1..K} C(d+m-1, m): the number of multi-indices of degree 1..K.

    >>> feature_count(10, 2), feature_count(4, 3)
    (65, 34)
    """
    return sum(comb(d + m - 1, m) for m in range(1, K + 1))


def multi_indices(d: int, m: int) -> list[tuple[int, ...]]:
    """Sorted coordinate tuples (i_1 <= ... <= i_m) of the degree-m features, in feature order."""
    return list(itertools.combinations_with_replacement(range(d), m))


def _h_table(Z: np.ndarray, K: int) -> np.ndarray:
    """h_0..h_K of every coordinate: array (..., d, K+1)."""
    H = np.empty(Z.shape + (K + 1,))
    H[..., 0] = 1.0
    H[..., 1] = Z
    for m in range(1, K):  # He_{m+1} = z He_m - m He_{m-1}, in orthonormal form
        H[..., m + 1] = (Z * H[..., m] - math.sqrt(m) * H[..., m - 1]) / math.sqrt(m + 1)
    return H


def _degree_plan(d: int, K: int):
    """For each degree m and each multiplicity signature, (columns, coords, counts)."""
    plan = []
    col = 0
    for m in range(1, K + 1):
        groups: dict = {}
        for t in multi_indices(d, m):
            coords, counts = [], []
            for c in t:
                if coords and coords[-1] == c:
                    counts[-1] += 1
                else:
                    coords.append(c)
                    counts.append(1)
            groups.setdefault(tuple(counts), ([], []))
            groups[tuple(counts)][0].append(col)
            groups[tuple(counts)][1].append(coords)
            col += 1
        for counts, (cols, coords) in groups.items():
            plan.append((np.array(cols), np.array(coords, dtype=np.intp), counts))
    return plan, col


def hermite_features(Z: np.ndarray, K: int) -> np.ndarray:
    """Orthonormal Hermite features H_alpha(z), 1 <= |alpha| <= K, of the rows of Z (shape (..., d)).

    Order: degree 1 (z_1..z_d), then degree 2, then 3; within a degree the sorted
    coordinate tuples in lexicographic order (:func:`multi_indices`).

    >>> hermite_features(np.array([[1.0, 2.0]]), 2).round(6).tolist()   # z1, z2, h2(z1), z1 z2, h2(z2)
    [[1.0, 2.0, 0.0, 2.0, 2.12132]]
    """
    Z = np.asarray(Z, dtype=float)
    d = Z.shape[-1]
    plan, D = _degree_plan(d, K)
    H = _h_table(Z, K)
    out = np.empty(Z.shape[:-1] + (D,))
    for cols, coords, counts in plan:
        block = np.ones(Z.shape[:-1] + (len(cols),))
        for p, cnt in enumerate(counts):
            block *= H[..., coords[:, p], cnt]
        out[..., cols] = block
    return out


def direction_coefficients(U: np.ndarray, K: int) -> np.ndarray:
    """T_m(u)_alpha = sqrt(m!/alpha!) u^alpha for m = 1..K, in feature order (rows of U, shape (..., d)).

    For a unit u, h_m(u^T z) = sum_{|alpha| = m} T_m(u)_alpha H_alpha(z) (addition theorem),
    so the degree-m block of the teacher is beta_m(r) T_m(u).  Homogeneous of degree m in u.

    >>> direction_coefficients(np.array([0.6, 0.8]), 2).round(6).tolist()
    [0.6, 0.8, 0.36, 0.678823, 0.64]
    """
    U = np.asarray(U, dtype=float)
    d = U.shape[-1]
    plan, D = _degree_plan(d, K)
    out = np.empty(U.shape[:-1] + (D,))
    for cols, coords, counts in plan:
        m = sum(counts)
        c = math.sqrt(factorial(m) / math.prod(factorial(k) for k in counts))
        block = np.full(U.shape[:-1] + (len(cols),), c)
        for p, cnt in enumerate(counts):
            block *= U[..., coords[:, p]] ** cnt
        out[..., cols] = block
    return out


def degree_slices(d: int, K: int) -> list[slice]:
    """Column ranges of the degree-1..K feature blocks."""
    out, start = [], 0
    for m in range(1, K + 1):
        n = comb(d + m - 1, m)
        out.append(slice(start, start + n))
        start += n
    return out


class FeatureTransform:
    """The kernel learner's input map x -> x~ = phi(sqrt(d) x)/sqrt(D) (``identity``: x itself).

    Has the attribute ``D`` that :func:`icl_symbolic.model.prompts.sample_prompts` and
    :func:`icl_symbolic.simulation.simulator.train` read; x~ has covariance I_D/D.
    """

    def __init__(self, features, d: int):
        self.features = parse_features(features)
        self.d = int(d)
        self.D = self.features.D(self.d)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        if self.features.is_identity:
            return X
        return hermite_features(X * math.sqrt(self.d), self.features.K) * (1.0 / math.sqrt(self.D))

    def weighted_sum(self, y: np.ndarray, X: np.ndarray) -> np.ndarray:
        """sum_i y_i x~_i for a batch: y (m, ell), X (m, ell, d) -> (m, D).

        Through the moment tensors sum_i y_i z_i^{(x)j} (one batched matrix product per
        degree) instead of the (m, ell, D) feature array: h_2(z_a) = (z_a^2 - 1)/sqrt(2),
        h_3(z_a) = (z_a^3 - 3 z_a)/sqrt(6), h_2(z_a) z_b = (z_a^2 z_b - z_b)/sqrt(2).
        """
        if self.features.is_identity:
            return np.einsum("mi,mid->md", y, X)
        K, d = self.features.K, self.d
        Z = X * math.sqrt(d)
        S0 = y.sum(axis=1)  # (m,)
        M1 = np.einsum("mi,mia->ma", y, Z)  # (m, d)
        YZ = y[:, :, None] * Z
        M2 = np.matmul(YZ.transpose(0, 2, 1), Z) if K >= 2 else None  # (m, d, d)
        M3 = np.einsum("mia,mib,mic->mabc", YZ, Z, Z, optimize=True) if K >= 3 else None
        plan, D = _degree_plan(d, K)
        out = np.empty((y.shape[0], D))
        for cols, coords, counts in plan:
            if counts == (1,):
                out[:, cols] = M1[:, coords[:, 0]]
            elif counts == (2,):
                out[:, cols] = (M2[:, coords[:, 0], coords[:, 0]] - S0[:, None]) / math.sqrt(2.0)
            elif counts == (1, 1):
                out[:, cols] = M2[:, coords[:, 0], coords[:, 1]]
            elif counts == (3,):
                a = coords[:, 0]
                out[:, cols] = (M3[:, a, a, a] - 3.0 * M1[:, a]) / math.sqrt(6.0)
            elif counts in ((2, 1), (1, 2)):
                twice, once = (coords[:, 0], coords[:, 1]) if counts == (2, 1) else (coords[:, 1], coords[:, 0])
                out[:, cols] = (M3[:, twice, twice, once] - M1[:, once]) / math.sqrt(2.0)
            else:  # (1, 1, 1)
                out[:, cols] = M3[:, coords[:, 0], coords[:, 1], coords[:, 2]]
        return out * (1.0 / math.sqrt(self.D))


class TeacherBlocks:
    """Per-task feature coefficients theta(w) and label power E_g[f(r g)^2] (module docstring).

    ``theta(W)`` (rows w) is sum_m beta_m(r) T_m(u) in feature order, so that
    E[x~ y | w] = theta(w)/sqrt(D); ``label_power(W)`` is E[(y - eps)^2 | w].  Exact
    closed forms (lambdified) for polynomial teachers, float64 quadrature otherwise.
    """

    def __init__(self, f, features, d: int):
        self.features = parse_features(features)
        self.d = int(d)
        self.K = self.features.K
        e, self.T = _polynomial_teacher(f)
        self.exact = e is not None
        if self.exact:
            betas = mode_coefficients(e, self.K)
            self._beta = [sympy.lambdify(_r, b, "numpy") for b in betas]
            self._f2 = sympy.lambdify(_r, _expect_poly_in_g(e.subs(_g, _r * _g) ** 2), "numpy")

    def _parts(self, W):
        W = np.asarray(W, dtype=float)
        norm = np.sqrt(np.einsum("kd,kd->k", W, W))
        r = norm / math.sqrt(self.d)
        U = W / np.where(norm > 0, norm, 1.0)[:, None]
        return r, U

    def betas(self, r: np.ndarray) -> np.ndarray:
        """beta_m(r), m = 0..K, shape (K+1, len(r))."""
        r = np.asarray(r, dtype=float)
        if self.exact:
            return np.array([np.broadcast_to(np.asarray(b(r), dtype=float), r.shape) for b in self._beta])
        return _betas_numeric(self.T, self.K, np.maximum(r * r, 1e-300))[0]

    def theta(self, W) -> np.ndarray:
        r, U = self._parts(W)
        beta = self.betas(r)
        out = direction_coefficients(U, self.K)
        for m, sl in enumerate(degree_slices(self.d, self.K), start=1):
            out[:, sl] *= beta[m][:, None]
        return out

    def label_power(self, W) -> np.ndarray:
        r, _ = self._parts(W)
        if self.exact:
            return np.broadcast_to(np.asarray(self._f2(r), dtype=float), r.shape).copy()
        return _betas_numeric(self.T, 0, np.maximum(r * r, 1e-300))[2]


# ----------------------------------------------------------------------------
# the O(d)-invariant spectrum (exact rationals)
# ----------------------------------------------------------------------------
def harmonic_dim(d: int, l: int) -> int:
    """dim Harm_l(R^d) = C(d+l-1, l) - C(d+l-3, l-2) (degree-l harmonic polynomials).

    >>> [harmonic_dim(5, l) for l in range(4)]
    [1, 5, 14, 30]
    """
    return comb(d + l - 1, l) - (comb(d + l - 3, l - 2) if l >= 2 else 0)


def sphere_eigenvalue(d: int, m: int, l: int) -> Fraction:
    """lambda_{m,l}: eigenvalue of E[T_m(u) T_m(u)^T] on Harm_l inside degree m, u uniform on S^{d-1}.

    T_m(u)_alpha = sqrt(m!/alpha!) u^alpha.  Sum over l of dim Harm_l * lambda_{m,l} is 1.

    >>> sphere_eigenvalue(10, 2, 0), sphere_eigenvalue(10, 2, 2), sphere_eigenvalue(10, 1, 1)
    (Fraction(1, 10), Fraction(1, 60), Fraction(1, 10))
    """
    if (m - l) % 2 or l > m or l < 0:
        return Fraction(0)
    j = (m - l) // 2
    den = 1
    for i in range(l):
        den *= d + 2 * i
    for k in range(1, j + 1):
        den *= 2 * k * (d + 2 * l + 2 * k - 2)
    return Fraction(factorial(m), den)


# ----------------------------------------------------------------------------
# teacher side: beta_m(r) and the task-averaged block moments B[m, m']
# ----------------------------------------------------------------------------
def _gauss_moment(n: int) -> int:
    """E[g^n] for g ~ N(0, 1): (n-1)!! for even n, 0 for odd."""
    if n % 2:
        return 0
    out = 1
    for k in range(n - 1, 0, -2):
        out *= k
    return out


def _expect_poly_in_g(expr) -> sympy.Expr:
    """E_g[P(g, r)] for P polynomial in g (coefficients may involve r), exactly."""
    poly = sympy.Poly(sympy.expand(expr), _g)
    return sympy.expand(sum(c * _gauss_moment(k[0]) for k, c in poly.terms()))


def _polynomial_teacher(f):
    """The teacher's SymPy expression in g if it is a polynomial, else None."""
    T = teacher(f)
    if T.expr is None:
        return None, T
    e = T.expr.subs(gsym, _g)
    try:
        sympy.Poly(e, _g)
    except sympy.PolynomialError:
        return None, T
    if not e.is_polynomial(_g):
        return None, T
    return e, T


def mode_coefficients(f, K: int) -> list[sympy.Expr]:
    """beta_m(r) = E_g[f(r g) h_m(g)], m = 0..K, exactly, for a polynomial teacher f (SymPy in r).

    These are the Hermite coefficients of f(r .); beta_m(1) = a_m.  The degree-m
    feature block of the teacher is beta_m(r) T_m(u) (module docstring).

    >>> mode_coefficients("g + (g**2 - 1)/sqrt(2)", 2)
    [sqrt(2)*(r**2 - 1)/2, r, r**2]
    """
    e, T = _polynomial_teacher(f)
    if e is None:
        raise ICLError(f"f = {T.label} is not a polynomial in g: beta_m(r) has no finite closed form here")
    fr = e.subs(_g, _r * _g)
    return [sympy.simplify(_expect_poly_in_g(fr * h(m, _g))) for m in range(K + 1)]


def _omega_moment(j: int, d: int) -> Fraction:
    """E[omega^j] for omega = |w|^2/d, w ~ N(0, I_d): prod_{i<j} (1 + 2i/d)."""
    out = Fraction(1)
    for i in range(j):
        out *= Fraction(d + 2 * i, d)
    return out


def _expect_over_omega(expr, d: int) -> sympy.Expr:
    """E over Gaussian tasks of a polynomial in r with even powers only (r^2 = omega)."""
    poly = sympy.Poly(sympy.expand(expr), _r)
    out = sympy.Integer(0)
    for (k,), c in poly.terms():
        if k % 2:
            raise ICLError("internal: odd power of r in an omega average")  # pragma: no cover
        q = _omega_moment(k // 2, d)
        out += c * sympy.Rational(q.numerator, q.denominator)
    return sympy.expand(out)


@dataclass(frozen=True)
class BlockMoments:
    """Task-averaged products B[m, m'] = E[beta_m beta_m'] (m, m' = 0..K, same parity) and E[f^2].

    ``B`` is a float array (entries of opposite parity are 0: they multiply a vanishing
    sphere moment); ``B_values``/``E_f2`` carry provenance (exact, mpmath or numeric).
    ``a`` are the Hermite coefficients a_0..a_{K+2} of f (for the mode table), from the
    Hermite engine.
    """

    K: int
    tasks: str
    d: int | None
    B: np.ndarray
    B_values: dict
    E_f2: Value
    a: tuple
    a1_float: float
    E_f2_float: float
    E_f2_limit: float
    label: str
    exact: bool
    #: the teacher's moments (sphere and limit laws): rho_nonlinear computed exactly as Result 1 does
    moments: object = None


def _parity_pairs(K: int):
    return [(m, mp) for m in range(K + 1) for mp in range(m, K + 1) if (m - mp) % 2 == 0]


def _hermite_power_coeffs(K: int) -> list[list[float]]:
    """h_m(g) = sum_j c[m][j] g^j, m = 0..K."""
    return [[float(c) for c in reversed(sympy.Poly(h(m, _g), _g).all_coeffs())] for m in range(K + 1)]


def _betas_numeric(T, K: int, omegas: np.ndarray):
    """beta_m(sqrt(omega)), m = 0..K, and E_g[f(sqrt(omega) g)^2] with error bounds (float64).

    E_g[f(r g) h_m(g)] = sum_j c_mj r^{-j} E_{x ~ N(0, omega)}[f(x) x^j] (h_m = sum_j c_mj g^j);
    the x-expectations by :func:`icl_symbolic.engine.gauss.float_expect` (kinks respected).
    Returns ``(beta, beta_err, f2, f2_err)`` with beta of shape (K+1, len(omegas)).
    """
    coeffs = _hermite_power_coeffs(K)
    fnp = T.numpy

    def integrands(x):
        fx = fnp(x)
        out = {f"x{j}": fx * x**j for j in range(K + 1)}
        out["f2"] = fx * fx
        return out

    om = np.asarray(omegas, dtype=float)
    vals, errs = float_expect(integrands, om, T.breakpoints, label=f"f = {T.label}")
    beta = np.zeros((K + 1, om.size))
    beta_err = np.zeros((K + 1, om.size))
    for m in range(K + 1):
        for j, c in enumerate(coeffs[m]):
            if c:
                beta[m] += c * om ** (-j / 2.0) * vals[f"x{j}"]
                beta_err[m] += abs(c) * om ** (-j / 2.0) * errs[f"x{j}"]
    return beta, beta_err, vals["f2"], errs["f2"]


def _numeric_gaussian_law(T, K: int, d: int):
    """B[m,m'] and E f^2 for Gaussian tasks and a non-polynomial f (float64 quadrature).

    beta_m at the nodes by :func:`_betas_numeric`; the omega average by generalised
    Gauss-Laguerre quadrature (omega = 2t/d, t ~ Gamma(d/2)); error = difference between
    the 48- and 64-point rules plus the propagated quadrature errors.  The rule is
    :func:`icl_symbolic.engine.omega_rule.omega_rule` (normalised weights: any d).
    """
    results = []
    for n in _LAGUERRE:
        om, wts = omega_rule(n, d)  # normalised weights: no Gamma(d/2) overflow at large d
        beta, beta_err, f2, f2_err = _betas_numeric(T, K, om)
        B = np.zeros((K + 1, K + 1))
        Berr = np.zeros((K + 1, K + 1))
        for m, mp in _parity_pairs(K):
            B[m, mp] = B[mp, m] = float(np.dot(wts, beta[m] * beta[mp]))
            Berr[m, mp] = Berr[mp, m] = float(
                np.dot(wts, np.abs(beta[m]) * beta_err[mp] + np.abs(beta[mp]) * beta_err[m])
            )
        results.append((B, Berr, float(np.dot(wts, f2)), float(np.dot(wts, f2_err))))
    (B1, _, f1, _), (B2, Berr, f2, ef2) = results
    return B2, np.abs(B2 - B1) + Berr, f2, abs(f2 - f1) + ef2


def block_moments(f, K: int, d: int | None = None, tasks: str = "gaussian", digits: int = 30) -> BlockMoments:
    """B[m, m'] = E_tasks[beta_m(r) beta_m'(r)] for m, m' = 0..K and E_tasks[f(r g)^2].

    ``tasks="sphere"`` (|w|^2 = d, r = 1) or ``d=None`` (the d -> infinity limit, where
    both task laws agree): B = a a^T from the Hermite engine, E f^2 = E[f(g)^2].
    ``tasks="gaussian"`` (w ~ N(0, I_d)): exact (SymPy) for polynomial f, using
    E[omega^j] = prod_{i<j}(1 + 2i/d); float64 quadrature otherwise (any d).

    >>> bm = block_moments("g + (g**2 - 1)/sqrt(2)", 2, d=10)
    >>> [str(bm.B_values[k].exact) for k in ((0, 0), (1, 1), (2, 2))], str(bm.E_f2.exact)
    (['1/10', '1', '6/5'], '23/10')
    """
    if tasks not in TASK_LAWS:
        raise ICLError(f"unknown task law {tasks!r}; expected one of {', '.join(TASK_LAWS)}")
    if not (isinstance(K, int) and 1 <= K <= MAX_K):
        raise ICLError(f"K must be 1, 2 or 3, got {K!r}")
    tm = teacher_moments(f, digits)
    src = tm.source
    hc = hermite_coeffs(src.expr if src.expr is not None else f, M=K + 2, rho=0, digits=digits)
    a = tuple(hc.a)
    a_f = [float(v) for v in a]
    a_f[1] = 0.0 if tm.a1_is_zero else float(tm.a1)  # the very float theory uses
    label = tm.label
    if tasks == "sphere" or d is None:
        B = np.zeros((K + 1, K + 1))
        vals = {}
        for m, mp in _parity_pairs(K):
            B[m, mp] = B[mp, m] = a_f[m] * a_f[mp]
            vals[(m, mp)] = _product_value(a[m], a[mp])
        return BlockMoments(
            K,
            "sphere" if d is not None else "limit",
            d,
            B,
            vals,
            tm.E_f2,
            a,
            a_f[1],
            float(tm.E_f2),
            float(tm.E_f2),
            label,
            all(v.method == "exact" for v in vals.values()),
            moments=tm,
        )
    d = int(d)
    e, T = _polynomial_teacher(f)
    if e is not None:
        betas = mode_coefficients(e, K)
        vals = {}
        B = np.zeros((K + 1, K + 1))
        for m, mp in _parity_pairs(K):
            ex = sympy.simplify(_expect_over_omega(betas[m] * betas[mp], d))
            vals[(m, mp)] = Value.from_exact(ex, digits, note=f"E_w[beta_{m} beta_{mp}], w ~ N(0, I_{d})")
            B[m, mp] = B[mp, m] = float(vals[(m, mp)])
        ef2 = sympy.simplify(_expect_over_omega(_expect_poly_in_g(e.subs(_g, _r * _g) ** 2), d))
        ef2_v = Value.from_exact(ef2, digits, note=f"E_w E_g[f(r g)^2], w ~ N(0, I_{d})")
        return BlockMoments(K, tasks, d, B, vals, ef2_v, a, a_f[1], float(ef2_v), float(tm.E_f2), label, True)
    B, Berr, ef2, ef2_err = _numeric_gaussian_law(T, K, d)
    vals = {
        (m, mp): Value(
            B[m, mp],
            "numeric",
            abs_err=float(Berr[m, mp]),
            note=f"E_w[beta_{m} beta_{mp}], w ~ N(0, I_{d}), Gauss-Laguerre x Gauss-Legendre",
        )
        for m, mp in _parity_pairs(K)
    }
    ef2_v = Value(ef2, "numeric", abs_err=ef2_err, note=f"E_w E_g[f(r g)^2], w ~ N(0, I_{d})")
    return BlockMoments(K, tasks, d, B, vals, ef2_v, a, a_f[1], ef2, float(tm.E_f2), label, False)


def _product_value(u: Value, v: Value) -> Value:
    if u.method == "exact" and v.method == "exact":
        return Value.from_exact(sympy.simplify(u.exact * v.exact), u.digits or 30, note="a_m a_m'")
    err = None
    if u.abs_err is not None or v.abs_err is not None:
        eu = float(u.abs_err or 0.0)
        ev = float(v.abs_err or 0.0)
        err = abs(float(u)) * ev + abs(float(v)) * eu + eu * ev
    return Value(float(u) * float(v), "numeric", abs_err=err, note="a_m a_m'")


# ----------------------------------------------------------------------------
# the D-dimensional task spectrum
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class SpectrumBlock:
    """One eigenvalue of C~ = D E[theta theta^T]: harmonic degree l, degrees it mixes, multiplicity."""

    l: int
    degrees: tuple
    eigenvalue: float
    multiplicity: int
    description: str


@dataclass(frozen=True)
class KernelSpectrum:
    """The task spectrum of the kernel learner and its noise accounting (module docstring)."""

    features: FeatureMap
    d: int | None
    D: int | None
    blocks: tuple
    captured_power: float  # sum_{m=1..K} B[m, m] = tr(C~)/D
    rho: float
    rho_eff: float
    moments: BlockMoments

    @property
    def all_zero(self) -> bool:
        return all(b.eigenvalue == 0.0 for b in self.blocks)

    def task_spectra(self) -> TaskSpectra:
        """C_train = C_test = C~ as a ``TaskSpectra`` (eigenvalues repeated by multiplicity / gcd)."""
        mults = [b.multiplicity for b in self.blocks]
        gcd = 0
        for m in mults:
            gcd = math.gcd(gcd, m)
        arr = np.concatenate([np.full(b.multiplicity // gcd, b.eigenvalue) for b in self.blocks])
        return TaskSpectra(arr, arr.copy(), f"kernel {self.features} task spectrum, d={self.d}")


def _describe(l, degrees):
    names = {(1,): "linear block", (2,): "quadratic block", (3,): "cubic block"}
    if l == 0:
        return "quadratic block, trace direction (rank-one mean for Gaussian tasks)"
    if len(degrees) == 1:
        base = names[degrees]
        return base + (" (traceless part)" if degrees == (2,) else "") + (" (harmonic part)" if degrees == (3,) else "")
    return "linear block mixed with the trace part of the cubic block"


def kernel_spectrum(
    f,
    features="hermite:2",
    rho=0.1,
    d: int | None = None,
    tasks: str = "gaussian",
    digits: int = 30,
    moments: BlockMoments | None = None,
) -> KernelSpectrum:
    """Task spectrum, captured power and rho_eff of the kernel learner for teacher f.

    ``d=None`` is allowed for ``identity`` only (the d -> infinity limit, where the
    spectrum is the single eigenvalue a1^2: Result 1, Eq. (9), p. 3).

    >>> ks = kernel_spectrum("g + (g**2 - 1)/sqrt(2)", "hermite:2", rho=0.1, d=10, tasks="sphere")
    >>> [(b.l, round(b.eigenvalue, 10), b.multiplicity) for b in ks.blocks]
    [(0, 6.5, 1), (1, 6.5, 10), (2, 1.0833333333, 54)]
    >>> round(float(ks.rho_eff), 12)
    0.1
    """
    fm = parse_features(features)
    if not (isinstance(rho, (int, float, np.integer, np.floating)) and math.isfinite(rho) and rho >= 0):
        raise ICLError(f"rho (noise variance) must be a finite number >= 0, got {rho!r}")
    if d is None and not fm.is_identity:
        raise ICLError(f"features {fm} need a dimension d (the spectrum depends on d)")
    if d is not None:
        if isinstance(d, bool) or int(d) != d or d < 2:
            raise ICLError(f"d must be an integer >= 2, got {d!r}")
        d = int(d)
        if fm.D(d) > MAX_D:
            raise ICLError(f"features {fm} at d = {d} give D = {fm.D(d)} > {MAX_D}; reduce d")
    K = fm.K
    bm = moments if moments is not None else block_moments(f, K, d, tasks, digits)
    blocks = []
    if d is None:  # identity, d -> infinity: C~ = a1^2 I
        blocks.append(SpectrumBlock(1, (1,), 1.0 * float(bm.B[1, 1]), 1, "linear block"))
        D = None
    else:
        D = fm.D(d)
        for l in range(K + 1):
            degs = tuple(m for m in range(max(l, 1), K + 1) if (m - l) % 2 == 0)
            if not degs:
                continue
            lam = [sphere_eigenvalue(d, m, l) for m in degs]
            if len(degs) == 1:
                m = degs[0]
                ev = [float(D * lam[0]) * bm.B[m, m]]
            else:
                Ml = np.array(
                    [
                        [bm.B[m, mp] * math.sqrt(float(D * lam[i] * D * lam[j])) for j, mp in enumerate(degs)]
                        for i, m in enumerate(degs)
                    ]
                )
                ev = [float(x) for x in np.linalg.eigvalsh(Ml)]
                ev = [max(x, 0.0) for x in ev]
            for x in ev:
                blocks.append(SpectrumBlock(l, degs, float(x), harmonic_dim(d, l), _describe(l, degs)))
    captured = float(sum(bm.B[m, m] for m in range(1, K + 1)))
    if bm.tasks in ("sphere", "limit"):
        # theory.TeacherMoments.rho_nonlinear itself (no float64 cancellation; identity features then
        # reproduce Result 1 to the last bit), minus the extra captured modes
        rho_eff = (
            bm.moments.rho_nonlinear(rho) if bm.moments is not None else float(rho) + bm.E_f2_float - bm.a1_float**2
        )
        for m in range(2, K + 1):
            rho_eff -= bm.B[m, m]
    else:
        rho_eff = float(rho) + bm.E_f2_float - captured
    if -1e-12 * max(1.0, bm.E_f2_float) < rho_eff < 0.0:
        rho_eff = 0.0  # rounding of a teacher that is captured completely (e.g. f = g, rho = 0)
    return KernelSpectrum(fm, d, D, tuple(blocks), captured, float(rho), rho_eff, bm)


def gaussian_task_vectors(ks: KernelSpectrum, n: int, rng: np.random.Generator) -> np.ndarray:
    """n task vectors w~ ~ N(0, C~) with the exact second moment C~ of ``ks`` (K <= 2), shape (n, D).

    In feature coordinates C~ is lambda_1 I on the degree-1 block and, on the degree-2 block,
    lambda_iso (I - t t^T) + lambda_tr t t^T with t the unit vector on the diagonal features
    h_2(z_i) (the trace direction).  Used by the all-Gaussian control of the simulation.
    """
    if ks.d is None or ks.features.K > 2:
        raise ICLError("Gaussian task vectors with the kernel spectrum need d and K <= 2")
    d, D = ks.d, ks.D
    ev = {b.l: b.eigenvalue for b in ks.blocks}
    out = rng.standard_normal((n, D))
    out[:, :d] *= math.sqrt(ev[1])
    if ks.features.K == 2:
        sl = degree_slices(d, 2)[1]
        diag = np.array([i == j for i, j in multi_indices(d, 2)])
        t = diag / math.sqrt(d)
        Q = out[:, sl]
        c = Q @ t
        Q -= np.outer(c, t)
        Q *= math.sqrt(ev[2])
        Q += np.outer(c * math.sqrt(ev[0]), t)
        out[:, sl] = Q
    return out


# ----------------------------------------------------------------------------
# the prediction over a grid
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelCurve(Rows):
    """Predicted ICL error of the kernel learner over a grid (tau fastest), plus plain attention.

    ``columns``: alpha, kappa, tau, lam (the learner's D-ratios), ell, k, n (at d; NaN when
    d is None), e (kernel learner), e_plain (plain linear attention, Result 1, at the same
    ell, k, n: alpha_d = ell/d, kappa_d = k/d, tau_d = n/d^2; NaN when d is None).
    """

    spectrum: KernelSpectrum
    columns: dict
    branch: str

    def __len__(self):
        return len(self.columns["e"])

    def points(self) -> list[dict]:
        """One dict per point: the ratios, sizes, ``e``, ``e_plain`` (None where it does not exist) and
        ``reason`` (None, or why ``e`` is infinite: the ridgeless interpolation peak)."""
        keys = ("alpha", "kappa", "tau", "lam", "ell", "k", "n", "e", "e_plain")
        out = []
        for i in range(len(self)):
            row = {}
            for k in keys:
                v = float(self.columns[k][i])
                row[k] = v if math.isfinite(v) else None
            row["reason"] = DIVERGES if math.isinf(self.columns["e"][i]) else None
            out.append(row)
        return out


def _e_at(ks: KernelSpectrum, sp: TaskSpectra | None, alpha, kappa, tau, lam) -> float:
    if sp is None:
        return a1zero.e_a1zero(ks.rho_eff, alpha=alpha, tau=tau, lam=lam)
    return e_linear(Ratios(ks.rho_eff, alpha, kappa, tau, lam), TaskCovariances(sp))


def kernel_curve(
    f,
    features,
    ratios: Ratios,
    *,
    d: int | None = None,
    tasks: str = "gaussian",
    digits: int = 30,
    plain: bool = True,
    progress=None,
) -> KernelCurve:
    """Predicted ICL error of the kernel learner over the grid of alpha, kappa, lam, tau (D-ratios).

    ``ratios`` (:class:`~icl_symbolic.theory.asymptotic.Ratios`): rho, a number; alpha, kappa, tau, lam
    (the learner's ratios ell/D, k/D, n/D^2 and the ridge), each a number or a 1-D grid.

    Linear deterministic equivalent in D dimensions (:func:`icl_symbolic.theory.asymptotic.e_linear`)
    with the spectrum of :func:`kernel_spectrum` and noise rho_eff; the a1 = 0 branch
    (Eq. (10), p. 3) in D dimensions when nothing is captured.  ``plain=True`` also gives
    plain linear attention (Result 1) at the same integer-free sizes ell = alpha D, k = kappa D,
    n = tau D^2, i.e. at the paper's ratios alpha D/d, kappa D/d, tau D^2/d^2 (needs d).
    """
    rho, alpha, kappa, tau, lam = ratios.rho, ratios.alpha, ratios.kappa, ratios.tau, ratios.lam
    ks = kernel_spectrum(f, features, rho, d, tasks, digits)
    grids = {
        name: np.atleast_1d(np.asarray(v, dtype=float))
        for name, v in (("alpha", alpha), ("kappa", kappa), ("lam", lam), ("tau", tau))
    }
    for name, arr in grids.items():
        if arr.ndim != 1 or arr.size == 0:
            raise ICLError(f"{name}: expected a number or a 1-D list of numbers")
    rows = list(itertools.product(grids["alpha"], grids["kappa"], grids["lam"], grids["tau"]))
    for al, ka, la, ta in rows:  # the peak is a point of the sweep, marked inf (as theory.asymptotic.curve)
        check_parameters(ks.rho_eff, al, ka, 2.0 if is_peak(ta, la) else ta, la)
    sp = None if ks.all_zero else ks.task_spectra()
    d_, D = ks.d, ks.D
    plain_possible = plain and d_ is not None
    if plain_possible:
        a1p, rnl_plain = ks.moments.a1_float, float(rho) + ks.moments.E_f2_limit - ks.moments.a1_float**2
        r = D / d_
        for al, ka, la, ta in rows:
            tp = ta * r * r
            check_parameters(rnl_plain, al * r, ka * r, 2.0 if is_peak(tp, la) else tp, la)
    n = len(rows)
    cols = {k: np.empty(n) for k in ("alpha", "kappa", "lam", "tau", "ell", "k", "n", "e", "e_plain")}
    for i, (al, ka, la, ta) in enumerate(rows):
        e = math.inf if is_peak(ta, la) else _e_at(ks, sp, al, ka, ta, la)
        ep = float("nan")
        if plain_possible:
            ep = (
                math.inf
                if is_peak(ta * r * r, la)
                else float(
                    e_nonlinear(
                        ratios=Ratios(alpha=al * r, kappa=ka * r, tau=ta * r * r, lam=la),
                        a1=a1p,
                        rho_nonlinear=rnl_plain,
                    )
                )
            )
        for k, v in (
            ("alpha", al),
            ("kappa", ka),
            ("lam", la),
            ("tau", ta),
            ("ell", al * D if D else float("nan")),
            ("k", ka * D if D else float("nan")),
            ("n", ta * D * D if D else float("nan")),
            ("e", e),
            ("e_plain", ep),
        ):
            cols[k][i] = v
        if progress is not None:
            progress(i + 1, n)
    return KernelCurve(ks, cols, "a1zero" if sp is None else "linear-D")
