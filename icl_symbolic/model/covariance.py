"""Task covariances C_train, C_test: named families, validation, Appendix A.

Paper: Sec. 2, Eq. (1), p. 2 (tasks w ~ N(0, C_train), test tasks from
N(0, C_test)); Appendix A, p. 7 (the conditions of Result 1).

Named families (all diagonal in the standard basis, eigenvalues listed in
ascending order along the coordinates, and normalised so that tr C = d):

``identity``
    C = I_d.
``powerlaw:p``
    eigenvalues proportional to j^-p, j = 1..d (p >= 0), scaled to tr C = d.
``spiked:f:r``
    a fraction f (0 <= f <= 1) of the trace d sits on r equal spike
    eigenvalues f d / r (1 <= r < d); the other d - r eigenvalues are equal to
    (1 - f) d / (d - r).
``lowrank:r``
    rank r with r equal eigenvalues d / r; an integer r in [1, d] is a fixed
    rank, a number 0 < r < 1 is the fraction r of d (rank round(r d)).

Any other specification is a path to a ``.npy`` file holding a d x d
symmetric positive semidefinite matrix or a length-d non-negative spectrum
(used as is: not renormalised; the Appendix A check reports tr C / d).

Appendix A (p. 7): for fixed w, x^T w ~ N(0, sigma_w) with sigma_w = |w|^2/d;
for w ~ N(0, C), E[sigma_w] = tr(C)/d and Var(sigma_w) = 2 tr(C^2)/d^2.
Result 1 needs tr C = d and tr C^2 = o(d^2), i.e. an effective rank
r_eff = tr(C)^2 / tr(C^2) that grows without bound with d.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from icl_symbolic.core.cost import SECONDS_PER, Estimate
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.limits import MAX_SPECTRUM_D, SILENT_CEILING_SECONDS
from icl_symbolic.core.numbers import parse_float

FAMILIES = ("identity", "powerlaw:p", "spiked:f:r", "lowrank:r")
_SYM_TOL = 1e-10
_PSD_TOL = 1e-10


@dataclass(frozen=True)
class Covariance:
    """A symmetric positive semidefinite task covariance.

    ``eigvals`` is ascending; ``eigvecs`` holds the matching orthonormal
    eigenvectors as columns, or is ``None`` when C = diag(eigvals) in the
    standard basis (all named families).  ``family`` and ``params`` record a
    named family (``family = "matrix"`` for user input).
    """

    eigvals: np.ndarray
    eigvecs: np.ndarray | None = None
    name: str = "identity"
    family: str = "identity"
    params: tuple = ()

    @property
    def d(self) -> int:
        return int(self.eigvals.shape[0])

    @property
    def trace(self) -> float:
        return float(np.sum(self.eigvals))

    @property
    def trace_sq(self) -> float:
        return float(np.sum(self.eigvals**2))

    @property
    def effective_rank(self) -> float:
        """r_eff = tr(C)^2 / tr(C^2) (Appendix A, p. 7)."""
        return self.trace**2 / self.trace_sq if self.trace_sq > 0 else 0.0

    @property
    def is_identity(self) -> bool:
        return self.eigvecs is None and bool(np.all(self.eigvals == 1.0))

    def matrix(self) -> np.ndarray:
        """The dense d x d matrix."""
        if self.eigvecs is None:
            return np.diag(self.eigvals)
        return (self.eigvecs * self.eigvals) @ self.eigvecs.T

    def scaled(self, c: float) -> "Covariance":
        """c C (Result 1 uses a1^2 C_train, a1^2 C_test)."""
        if c < 0:
            raise ICLError(f"covariance scale must be >= 0, got {c}")
        return Covariance(self.eigvals * c, self.eigvecs, f"{c:g}*{self.name}", self.family, self.params)

    def diag_in_basis_of(self, other: "Covariance") -> np.ndarray:
        """diag(V^T C V) where V are the eigenvectors of ``other`` (in ``other.eigvals`` order).

        Used for traces tr(C_test F(C_train)) = sum_j (V^T C_test V)_jj F(lambda_j)
        when C_test does not commute with C_train.
        """
        if other.d != self.d:
            raise ICLError(
                f"covariance sizes differ: {self.name} is {self.d}x{self.d}, {other.name} is {other.d}x{other.d}"
            )
        if other.eigvecs is None and self.eigvecs is None:
            return self.eigvals.copy()
        V = np.eye(self.d) if other.eigvecs is None else other.eigvecs
        C = self.matrix()
        return np.einsum("ij,ik,kj->j", V, C, V)


def _family(name: str, d: int) -> Covariance:
    parts = name.split(":")
    kind = parts[0].lower()

    def number(text, what):
        return parse_float(text, f"covariance {name!r}: {what}")

    if kind == "identity" and len(parts) == 1:
        return Covariance(np.ones(d), None, "identity", "identity", ())
    if kind == "powerlaw" and len(parts) == 2:
        p = number(parts[1], "exponent p")
        if p < 0:
            raise ICLError(f"covariance {name!r}: exponent p must be >= 0")
        lam = np.arange(1, d + 1, dtype=float) ** (-p)
        lam *= d / lam.sum()
        return Covariance(np.sort(lam), None, name, "powerlaw", (p,))
    if kind == "spiked" and len(parts) == 3:
        f = number(parts[1], "trace fraction f")
        r = number(parts[2], "spike count r")
        if not 0 <= f <= 1:
            raise ICLError(f"covariance {name!r}: trace fraction f must be in [0, 1]")
        if r != int(r) or not 1 <= r < d:
            raise ICLError(f"covariance {name!r}: spike count r must be an integer in [1, d-1] (d = {d})")
        r = int(r)
        lam = np.concatenate([np.full(d - r, (1 - f) * d / (d - r)), np.full(r, f * d / r)])
        return Covariance(np.sort(lam), None, name, "spiked", (f, r))
    if kind == "lowrank" and len(parts) == 2:
        r = number(parts[1], "rank r")
        if 0 < r < 1:
            rank = max(1, int(round(r * d)))
        elif r == int(r) and 1 <= r <= d:
            rank = int(r)
        else:
            raise ICLError(f"covariance {name!r}: rank r must be an integer in [1, d] or a fraction in (0, 1)")
        lam = np.concatenate([np.zeros(d - rank), np.full(rank, d / rank)])
        return Covariance(lam, None, name, "lowrank", (r,))
    raise ICLError(f"unknown covariance {name!r}; expected one of {', '.join(FAMILIES)} or a .npy file")


#: largest covariance accepted (a d x d matrix is eigendecomposed: O(d^3) time, 3 d^2 x 8 bytes)
MAX_COV_D = 20_000


def _check_size(shape, dtype, name: str) -> None:
    """Refuse (one line) entries that are not real numbers, an array past :data:`MAX_COV_D`, or a
    matrix whose eigendecomposition is estimated above the ceiling of silent work
    (``SECONDS_PER['cov_eigh']`` per d^3 against ``SILENT_CEILING_SECONDS``; ``--max-seconds`` lifts
    it), from its shape and dtype alone: before a ``.npy`` file's data is read."""
    if dtype.kind not in "biuf":
        what = {"c": "complex", "U": "string", "S": "bytes", "O": "object"}.get(dtype.kind, str(dtype))
        raise ICLError(f"covariance {name}: entries must be real numbers, got dtype {dtype} ({what})")
    size = max(shape) if len(shape) else 0
    if size > MAX_COV_D:
        raise ICLError(f"covariance {name}: size {size} is above the limit {MAX_COV_D} (see docs/limits.md)")
    if len(shape) == 2:
        work = float(size) ** 3
        Estimate(
            work * SECONDS_PER["cov_eigh"],
            work,
            "d^3",
            f"covariance {name}: eigendecomposition of a {size} x {size} matrix",
            "a smaller matrix, or its spectrum (a 1-D array)",
        ).check(SILENT_CEILING_SECONDS)  # no progress lines here: the short ceiling


def from_array(arr, d: int | None = None, name: str = "matrix") -> Covariance:
    """Validate a user matrix (d x d symmetric PSD) or spectrum (length d, >= 0).

    Only real numbers: integer, boolean or float dtypes; complex arrays (which
    ``float()`` would truncate to their real part), strings and objects are
    refused, as are empty arrays and sizes above :data:`MAX_COV_D`.
    """
    raw = np.asarray(arr)
    _check_size(raw.shape, raw.dtype, name)
    if raw.size == 0:
        raise ICLError(f"covariance {name}: empty array")
    arr = raw.astype(float)
    if not np.all(np.isfinite(arr)):
        raise ICLError(f"covariance {name}: contains NaN or infinite entries")
    if arr.ndim == 1:
        if d is not None and arr.shape[0] != d:
            raise ICLError(f"covariance {name}: spectrum has length {arr.shape[0]}, expected d = {d}")
        if np.any(arr < 0):
            raise ICLError(f"covariance {name}: spectrum has negative eigenvalues")
        return Covariance(np.sort(arr), None, name, "matrix", ())
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ICLError(f"covariance {name}: expected a square matrix or a spectrum, got shape {arr.shape}")
    if d is not None and arr.shape[0] != d:
        raise ICLError(f"covariance {name}: matrix is {arr.shape[0]}x{arr.shape[1]}, expected d = {d}")
    scale = max(1.0, float(np.max(np.abs(arr))))
    if np.max(np.abs(arr - arr.T)) > _SYM_TOL * scale:
        raise ICLError(f"covariance {name}: matrix is not symmetric")
    vals, vecs = np.linalg.eigh((arr + arr.T) / 2)
    if vals[0] < -_PSD_TOL * scale:
        raise ICLError(f"covariance {name}: matrix is not positive semidefinite (smallest eigenvalue {vals[0]:.3g})")
    vals = np.clip(vals, 0.0, None)
    if np.allclose(arr, np.diag(np.diag(arr)), atol=0, rtol=0):
        diag = np.diag(arr).copy()
        order = np.argsort(diag)
        if np.all(order == np.arange(len(diag))):
            return Covariance(diag, None, name, "matrix", ())
    return Covariance(vals, vecs, name, "matrix", ())


def resolve_covariance(spec, d: int | None = None) -> Covariance:
    """A :class:`Covariance` from a family name, a ``.npy`` path, an array or a Covariance.

    >>> c = resolve_covariance("powerlaw:1", 4)
    >>> round(c.trace, 12), c.family
    (4.0, 'powerlaw')
    >>> resolve_covariance("spiked:0.5:2", 4).eigvals.tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    if isinstance(spec, Covariance):
        if d is not None and spec.d != d:
            raise ICLError(f"covariance {spec.name} has size {spec.d}, expected d = {d}")
        return spec
    if isinstance(spec, (str, Path)):
        text = str(spec).strip()
        if text.lower().endswith(".npy"):
            path = Path(text)
            if not path.is_file():
                raise ICLError(f"covariance file {text!r} does not exist")
            try:
                with open(path, "rb") as fh:  # the header first: shape and dtype before any data is read
                    version = np.lib.format.read_magic(fh)
                    header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
                    if version not in header:
                        raise ValueError(f".npy format version {version} (1.0 and 2.0 are read)")
                    shape, _, dtype = header[version](fh)
                _check_size(shape, dtype, path.name)
                arr = np.load(path, allow_pickle=False)
            except (ValueError, OSError) as exc:
                raise ICLError(f"covariance file {text!r} could not be read as .npy: {exc}") from None
            return from_array(arr, d, name=path.name)
        if d is None:
            raise ICLError(f"covariance {text!r} needs a dimension d")
        if int(d) != d or d < 1:
            raise ICLError(f"dimension d must be a positive integer, got {d}")
        if d > MAX_SPECTRUM_D:  # a family is a spectrum of d numbers (d = 1e9: 8 GB per array)
            raise ICLError(
                f"covariance {text!r}: d = {int(d)} is above the limit {MAX_SPECTRUM_D} (see docs/limits.md)"
            )
        return _family(text, int(d))
    return from_array(spec, d)


#: Task laws: ``gaussian`` w ~ N(0, C) (the paper's setting, Sec. 2, p. 2); ``sphere`` the same
#: draw rescaled to |w|^2 = tr(C) exactly (= d when tr C = d), which removes the O(d^-1/2)
#: fluctuation of |w|^2/d (Appendix A, p. 7) and has the same d -> infinity limit.
TASK_LAWS = ("gaussian", "sphere")


def check_task_law(law: str) -> str:
    """``law`` if it is one of :data:`TASK_LAWS`, else ICLError."""
    if law not in TASK_LAWS:
        raise ICLError(f"unknown task law {law!r}; expected one of {', '.join(TASK_LAWS)}")
    return law


def sample_tasks(cov: Covariance, k: int, rng: np.random.Generator, law: str = "gaussian") -> np.ndarray:
    """k tasks as a (k, d) array: w ~ N(0, C) (Sec. 2, Eq. (1), p. 2), or rescaled to |w|^2 = tr C.

    >>> w = sample_tasks(resolve_covariance("identity", 8), 3, np.random.default_rng(0), law="sphere")
    >>> np.allclose((w * w).sum(axis=1), 8.0)
    True
    """
    check_task_law(law)
    z = rng.standard_normal((k, cov.d))
    w = z * np.sqrt(cov.eigvals)
    w = w if cov.eigvecs is None else w @ cov.eigvecs.T
    if law == "sphere":
        w = w * np.sqrt(cov.trace / np.einsum("kd,kd->k", w, w))[:, None]
    return w


@dataclass(frozen=True)
class AppendixA:
    """Appendix A (p. 7) facts for one covariance and Result 1's conditions."""

    name: str
    d: int
    mean_sigma: float  # E[sigma_w] = tr(C)/d
    var_sigma: float  # Var(sigma_w) = 2 tr(C^2)/d^2
    effective_rank: float  # tr(C)^2 / tr(C^2)
    trace_ok: bool  # tr C = d (to 1e-9 relative)
    concentration: bool | None  # tr C^2 = o(d^2); None: cannot be decided from one matrix
    reason: str

    @property
    def holds(self) -> bool | None:
        if not self.trace_ok:
            return False
        return self.concentration

    def message(self) -> str:
        verdict = {True: "hold", False: "FAIL", None: "cannot be decided"}[self.holds]
        return (
            f"{self.name} (d={self.d}): tr(C)/d = {self.mean_sigma:.6g}, Var(sigma_w) = 2 tr(C^2)/d^2 = "
            f"{self.var_sigma:.4g}, r_eff = {self.effective_rank:.4g}; Result 1 conditions {verdict}: {self.reason}"
        )


def _concentration_rule(cov: Covariance) -> tuple[bool | None, str]:
    """Whether tr(C^2) = o(d^2) along the family as d grows (analytic, per family)."""
    fam, par = cov.family, cov.params
    if fam == "identity":
        return True, "r_eff = d grows with d"
    if fam == "powerlaw":
        p = par[0]
        if p <= 1:
            return (
                True,
                f"power law with p = {p:g} <= 1: r_eff grows without bound (like d^min(1, 2-2p), log factors at p = 1/2 and 1)",
            )
        return False, f"power law with p = {p:g} > 1: r_eff tends to zeta(p)^2/zeta(2p), bounded"
    if fam == "spiked":
        f, r = par
        if f == 0:
            return True, "no spike weight: the bulk has rank d - r, r_eff grows with d"
        return False, f"{r} spikes carry the fixed fraction {f:g} of the trace: r_eff <= r/f^2 stays bounded"
    if fam == "lowrank":
        r = par[0]
        if 0 < r < 1:
            return True, f"rank proportional to d (fraction {r:g}): r_eff = rank grows with d"
        return False, f"fixed rank {int(r)}: r_eff = {int(r)} does not grow with d"
    return None, (
        "a single matrix does not define a d -> infinity sequence; judge by r_eff "
        "(large is needed) and Var(sigma_w) (small is needed)"
    )


def appendix_a(cov: Covariance) -> AppendixA:
    """Appendix A (p. 7): E[sigma_w], Var(sigma_w), r_eff and Result 1's conditions.

    >>> a = appendix_a(resolve_covariance("identity", 100))
    >>> a.mean_sigma, a.var_sigma, a.holds
    (1.0, 0.02, True)
    >>> appendix_a(resolve_covariance("lowrank:5", 100)).holds
    False
    """
    d = cov.d
    mean_sigma = cov.trace / d
    var_sigma = 2 * cov.trace_sq / d**2
    trace_ok = abs(mean_sigma - 1.0) <= 1e-9
    conc, reason = _concentration_rule(cov)
    if not trace_ok:
        reason = f"tr(C)/d = {mean_sigma:.6g} != 1 (rescale C so that tr C = d); " + reason
    return AppendixA(cov.name, d, mean_sigma, var_sigma, cov.effective_rank, trace_ok, conc, reason)
