"""Asymptotic ICL error of the reduced linear-attention model: the theory engine.

Paper: Result 1, Eq. (9), p. 3 (nonlinear -> linear map); Appendix C, p. 10;
Eq. (10) and Eq. (15), p. 3 and p. 10 (the a1 = 0 branch, see
:mod:`icl_symbolic.theory.a1zero`); Eq. (11), p. 3-4 (task-diversity limit);
Appendix A, p. 7 (conditions of Result 1).

``e_linear(Ratios(rho, alpha, kappa, tau, lam), TaskCovariances(C_train, C_test, d))`` is the
linear-task theory of Lu et al. (arXiv:2405.11751) and Letey, Lu, Pehlevan (2025) as
restated in ``docs/linear-theory.md``:

1. ridgeless: ``xi = 0`` if tau > 1; for tau < 1, ``xi > 0`` solves
   ``xi M(xi + rho_tr/alpha) = 1 - tau``;
   ridge lam > 0: ``xi = eps > 0`` solves
   ``1 - tau + tau lam/eps - eps M(eps + rho_tr/alpha) = 0``;
2. ``nu = rho_tr/alpha + xi``; ``M = M(nu)``, ``M' = M'(nu)`` from the
   deterministic equation (:mod:`icl_symbolic.theory.stieltjes`);
3. ``F = (a C_train + nu I)^{-1}``, ``F2 = F (a' C_train + I) F``;
4. ``c = (rho + nu - nu^2 M - xi (1 - 2 nu M - nu^2 M')) / (tau - (1 - 2 xi M - xi^2 M'))``;
5. ``e = rho + (rho_te/alpha)(1 + (c - 2 nu) M + (xi c - nu^2) M')
   + c (1/d) tr(C_test F) - (c xi - nu^2) (1/d) tr(C_test F2)``,

with ``rho_tr = tr(C_train)/d + rho``, ``rho_te = tr(C_test)/d + rho``.  Traces
are taken in C_train's eigenbasis: only the eigenvalues lambda_j of C_train and
the diagonal t_j = (V^T C_test V)_jj of C_test in that basis enter
(:class:`TaskSpectra`).  Both root equations have a strictly monotone left-hand
side and are solved by bracketing (Brent), so no starting guess is involved.

Numbers returned here are deterministic float64 evaluations of the
d -> infinity formula (``Value`` method ``numeric``); their error is rounding
and root-finding at relative tolerance 4 eps, far below any finite-d effect.

Conventions chosen where the paper is silent: a named covariance family needs
a dimension ``d`` (``identity`` alone does not: the theory is d-free for it);
``C_test=None`` means C_test = C_train; ``lam`` is the ridge of Eq. (6),
regulariser ``(n/d) lam I``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import mpmath
import numpy as np
import sympy as sp
from scipy.optimize import brentq

from icl_symbolic.core.cost import SECONDS_PER, Estimate
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.values import Value
from icl_symbolic.engine.hermite import hermite_coeffs
from icl_symbolic.model.covariance import appendix_a, resolve_covariance
from icl_symbolic.output.display import Quantity, html_table, latex_table, text_table
from icl_symbolic.output.rows import Rows
from icl_symbolic.theory import a1zero
from icl_symbolic.theory.linear_recipe import Resolvent, linear_error
from icl_symbolic.theory.peak import DIVERGES, check_not_peak, is_peak
from icl_symbolic.theory.stieltjes import Stieltjes, stieltjes, stieltjes_isotropic

_RTOL = 4 * np.finfo(float).eps

__all__ = [
    "Ratios",
    "TaskCovariances",
    "IDENTITY",
    "TaskSpectra",
    "check_grid",
    "task_spectra",
    "e_linear",
    "e_linear_isotropic",
    "e_nonlinear",
    "e_nonlinear_normalized",
    "e_a1zero",
    "TeacherMoments",
    "teacher_moments",
    "curve",
    "TheoryCurve",
    "task_diversity_limit",
    "task_diversity_sequence",
    "appendix_a_warnings",
    "check_parameters",
    "derive_task_diversity",
    "TaskDiversityDerivation",
    "sweep",
    "ERRORS",
    "check_error",
    "e_idg_isotropic",
]

e_a1zero = a1zero.e_a1zero


# ----------------------------------------------------------------------------
# covariances -> the two spectra the theory needs
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class TaskSpectra:
    """Eigenvalues of C_train and the diagonal of C_test in C_train's eigenbasis.

    ``train[j] = lambda_j``, ``test_diag[j] = (V^T C_test V)_jj`` where V holds
    C_train's eigenvectors.  Everything ``e_linear`` needs (Appendix C, p. 10).
    """

    train: np.ndarray
    test_diag: np.ndarray
    label: str = ""

    @property
    def d(self) -> int:
        return int(self.train.shape[0])

    @property
    def tr_train(self) -> float:
        """tr(C_train)/d."""
        return float(np.mean(self.train))

    @property
    def tr_test(self) -> float:
        """tr(C_test)/d."""
        return float(np.mean(self.test_diag))

    def scaled(self, c: float) -> "TaskSpectra":
        """The spectra of (c C_train, c C_test); Result 1 uses c = a1^2."""
        return TaskSpectra(self.train * c, self.test_diag * c, f"{c:g}*({self.label})")


@dataclass(frozen=True)
class Ratios:
    """The paper's ratios at a point of the theory (Sec. 2, p. 2-3): the record the theory functions
    take instead of five loose parameters.

    ``rho`` the label-noise variance, ``alpha = ell/d``, ``kappa = k/d``, ``tau = n/d^2``, ``lam``
    the ridge of Eq. (6).  Each is a number; in :func:`curve` and
    :func:`icl_symbolic.kernel_learner.theory.kernel_curve` also a 1-D grid (the sweep is their
    product).  A plain container: the function that takes it checks the values (one ICLError line),
    with the ranges of the theory (:func:`check_parameters`), which are not the Setting's.
    Built by the API (``api.theory``, from its keywords), by the claim registry (from a claim file's
    keywords, :func:`icl_symbolic.verification.registry.call_theory`) and from a Setting
    (:meth:`Ratios.of`).

    >>> Ratios(rho=0.1, alpha=2, kappa=2, tau=3)
    Ratios(rho=0.1, alpha=2, kappa=2, tau=3, lam=0.0)
    """

    rho: object = 0.1
    alpha: object = 1.0
    kappa: object = 1.0
    tau: object = 0.5
    lam: object = 0.0

    @classmethod
    def of(cls, setting) -> "Ratios":
        """The ratios of a :class:`~icl_symbolic.model.setting.Setting`."""
        return cls(setting.rho, setting.alpha, setting.kappa, setting.tau, setting.lam)


@dataclass(frozen=True)
class TaskCovariances:
    """The task covariances of the theory (Appendix A, p. 7) and the dimension that sizes a named family.

    ``C_train``: a Covariance, family name, ``.npy`` path, matrix or spectrum, or a
    :class:`TaskSpectra` (then ``C_test`` is None); ``C_test=None`` means C_test = C_train; ``d``
    sizes a named family (``identity`` alone needs none: the theory is d-free for it).  Resolved by
    :func:`task_spectra` where the function needs the spectra.  The default is C_train = C_test = I.
    Built like :class:`Ratios` (:meth:`TaskCovariances.of` from a Setting).
    """

    C_train: object = "identity"
    C_test: object = None
    d: int | None = None

    @classmethod
    def of(cls, setting) -> "TaskCovariances":
        """The covariances and dimension of a :class:`~icl_symbolic.model.setting.Setting`."""
        return cls(setting.C_train, setting.C_test, setting.d)

    def spectra(self) -> TaskSpectra:
        """:func:`task_spectra` of the three fields."""
        return task_spectra(self.C_train, self.C_test, self.d)


#: C_train = C_test = I, the theory's default covariances
IDENTITY = TaskCovariances()


def _is_identity_name(spec) -> bool:
    return isinstance(spec, str) and spec.strip().lower() == "identity"


def _is_family_name(spec) -> bool:
    """A named family (needs d), as opposed to a Covariance, an array or a .npy path."""
    return isinstance(spec, str) and not spec.strip().lower().endswith(".npy")


def _resolve_pair(C_train, C_test, d):
    """Resolve both covariances; with ``d=None`` a named family takes its size from the other one."""
    if d is None:
        if _is_family_name(C_train) and not _is_family_name(C_test):
            cte = resolve_covariance(C_test, None)
            return resolve_covariance(C_train, cte.d), cte
    ctr = resolve_covariance(C_train, d)
    return ctr, resolve_covariance(C_test, ctr.d)


def task_spectra(C_train="identity", C_test=None, d: int | None = None) -> TaskSpectra:
    """Resolve C_train, C_test (Covariance, family name, .npy path, matrix or spectrum).

    ``C_test=None`` means C_test = C_train.  With ``d=None`` and both covariances
    ``"identity"`` the one-point spectrum [1] is used (the theory for C = I does not
    depend on d); otherwise a named family takes its size from the other covariance
    (a matrix, spectrum, ``.npy`` or Covariance).  A ``TaskSpectra`` passes through unchanged.

    >>> sp = task_spectra("powerlaw:1", "identity", d=4)
    >>> round(sp.tr_train, 12), sp.test_diag.tolist()
    (1.0, [1.0, 1.0, 1.0, 1.0])
    """
    if isinstance(C_train, TaskSpectra):
        if C_test is not None:
            raise ICLError("pass either a TaskSpectra or two covariances, not both")
        return C_train
    if C_test is None:
        C_test = C_train
    if d is None and _is_identity_name(C_train) and _is_identity_name(C_test):
        return TaskSpectra(np.ones(1), np.ones(1), "identity")
    ctr, cte = _resolve_pair(C_train, C_test, d)
    return TaskSpectra(
        np.asarray(ctr.eigvals, float), cte.diag_in_basis_of(ctr), f"C_train={ctr.name}, C_test={cte.name}"
    )


def appendix_a_warnings(C_train="identity", C_test=None, d: int | None = None) -> list[str]:
    """Appendix A (p. 7) messages for each covariance whose Result-1 conditions fail.

    Returns one line per failing (or undecidable) covariance; empty when both hold.
    """
    if C_test is None:
        C_test = C_train
    if d is None and _is_identity_name(C_train) and _is_identity_name(C_test):
        return []
    out = []
    ctr, cte = _resolve_pair(C_train, C_test, d)
    for role, cov in (("C_train", ctr), ("C_test", cte)):
        info = appendix_a(cov)
        if info.holds is not True:
            out.append(f"{role}: {info.message()}")
    return out


# ----------------------------------------------------------------------------
# parameter checks
# ----------------------------------------------------------------------------
#: supported range of alpha, kappa, tau (and upper bound of rho, lam): see docs/limits.md
PARAM_MIN = 1e-6
PARAM_MAX = 1e9
#: upper bound of the effective noise rho_nonlinear = rho + E[f^2] - a1^2 (rho itself <= PARAM_MAX)
NOISE_MAX = 2 * PARAM_MAX
#: at most this many points in one theory sweep (the product of the grids)
MAX_POINTS = 1_000_000


def check_parameters(rho, alpha, kappa, tau, lam=0.0, noise: str = "rho") -> None:
    """One-line ICLError for parameters outside the theory's domain.

    ``noise`` names the noise argument in messages: ``"rho_nonlinear"`` when it is
    Result 1's effective noise rho + E[f^2] - a1^2, whose upper bound is
    :data:`NOISE_MAX` (so that every rho <= PARAM_MAX is accepted for any teacher
    whose E[f^2] - a1^2 is at most PARAM_MAX).
    """
    for name, v in ((noise, rho), ("alpha", alpha), ("kappa", kappa), ("tau", tau), ("lam", lam)):
        if not (isinstance(v, (int, float, np.floating, np.integer)) and math.isfinite(v)):
            raise ICLError(f"{name} must be a finite number, got {v!r}")
    for name, v, lo in (
        ("alpha", alpha, PARAM_MIN),
        ("kappa", kappa, PARAM_MIN),
        ("tau", tau, PARAM_MIN),
        (noise, rho, 0.0),
        ("lam", lam, 0.0),
    ):
        top = NOISE_MAX if name == "rho_nonlinear" else PARAM_MAX
        if v > top or (0 < v < PARAM_MIN) and lo > 0:
            raise ICLError(
                f"{name} = {v:g} is outside the supported range [{lo:g}, {top:g}] "
                "(float64 cancellation beyond; see docs/limits.md)"
            )
    if alpha <= 0:
        raise ICLError(f"alpha = l/d must be > 0, got {alpha:g}")
    if kappa <= 0:
        raise ICLError(f"kappa = k/d must be > 0, got {kappa:g}")
    if tau <= 0:
        raise ICLError(f"tau = n/d^2 must be > 0, got {tau:g}")
    if rho < 0:
        raise ICLError(f"{noise} (noise variance) must be >= 0, got {rho:g}")
    if lam < 0:
        raise ICLError(f"lam (ridge) must be >= 0, got {lam:g}")
    check_not_peak(tau, lam)


# ----------------------------------------------------------------------------
# the general recipe (steps 1-5)
# ----------------------------------------------------------------------------
def _increasing_root(fun, lo: float, hi: float) -> float:
    """Root of an increasing function with fun(lo) < 0; expands hi until fun(hi) > 0."""
    for _ in range(2000):
        if fun(hi) > 0:
            break
        lo, hi = hi, hi * 2.0
    else:  # pragma: no cover - cannot happen for the monotone equations used here
        raise ICLError("root bracket not found")
    return brentq(fun, lo, hi, xtol=1e-300, rtol=_RTOL, maxiter=500)


def _solve_xi(mfun, r: float, tau: float, lam: float) -> float:
    """Step 1: xi (ridgeless, tau < 1), 0 (ridgeless, tau > 1), or eps (ridge)."""
    if lam == 0:
        if tau > 1:
            return 0.0
        # phi(xi) = xi M(xi + r) - (1 - tau): increasing (nu M(nu) increases), phi(0) < 0
        return _increasing_root(lambda xi: xi * mfun(xi + r).M - (1.0 - tau), 0.0, max(r, 1.0))

    # h(eps) = 1 - tau + tau lam/eps - eps M(eps + r): decreasing from +inf to -tau.
    # Solve -h = 0 with the bracket (lo, hi) found by expansion downwards and upwards.
    def negh(eps):
        return -(1.0 - tau + tau * lam / eps - eps * mfun(eps + r).M)

    lo = max(r, 1.0)
    for _ in range(2000):
        if negh(lo) < 0:
            break
        lo *= 0.5
    return _increasing_root(negh, lo, 2.0 * lo)


#: which error the theory returns: ``icl`` (fresh test tasks from N(0, C_test), the paper's ICL
#: error), ``idg`` (in-distribution generalisation: the test task is one of the k pretraining
#: tasks, uniformly), ``gap`` (icl - idg); docs/idg.md
ERRORS = ("icl", "idg", "gap")


def check_error(error: str) -> str:
    """The error name, or a one-line ICLError for anything but icl, idg, gap."""
    if error not in ERRORS:
        raise ICLError(f"error must be one of {', '.join(ERRORS)}, got {error!r}")
    return error


def _error(sp: TaskSpectra, rho, alpha, kappa, tau, lam, mfun=None, error: str = "icl") -> float:
    """Steps 1-5 of the recipe for one parameter point (``mfun(nu) -> Stieltjes``).

    ``error="idg"``: the test task is drawn uniformly from the k pretraining tasks
    (docs/idg.md).  The C_test traces of step 5 are the deterministic equivalents of
    (1/d) E_w[w^T R w] and (1/d) E_w[w^T R^2 w], R = (S + nu I)^{-1}; with w one of the
    pretraining tasks they become (1/d) tr(S R) = 1 - nu M and (1/d) tr(S R^2) = M + nu M'
    (exact identities of the resolvent, no new equivalent), and the test label moment
    rho_te becomes tr(S)/d + rho -> rho_tr.  ``gap`` is icl - idg at the same point.
    """
    if error == "gap":
        return _error(sp, rho, alpha, kappa, tau, lam, mfun, "icl") - _error(
            sp, rho, alpha, kappa, tau, lam, mfun, "idg"
        )
    if mfun is None:
        train = sp.train

        def mfun(nu):
            return stieltjes(nu, train, kappa)

    rho_tr = sp.tr_train + rho
    rho_te = sp.tr_test + rho
    r = rho_tr / alpha
    xi = _solve_xi(mfun, r, tau, lam)
    nu = r + xi
    st = mfun(nu)
    if error == "idg":
        rho_te = rho_tr
        trF = 1.0 - nu * st.M
        trF2 = st.M + nu * st.M_prime
    else:
        D = st.a * sp.train + nu
        trF = float(np.mean(sp.test_diag / D))
        trF2 = float(np.mean(sp.test_diag * (st.a_prime * sp.train + 1.0) / (D * D)))
    e = linear_error(Resolvent(st.M, st.M_prime, xi, rho_tr, rho_te, trF, trF2), rho, alpha, tau)
    # an MSE is >= rho >= 0; a NaN or a value below rho (beyond round-off) is cancellation in
    # float64, not an answer: refuse instead of printing it (kappa = 1e-300 gave -6e283)
    if not math.isfinite(e) or e < rho - 1e-9 * max(1.0, abs(e), rho):
        raise ICLError(
            f"the theory is numerically unreliable at rho={rho:g}, alpha={alpha:g}, "
            f"kappa={kappa:g}, tau={tau:g}, lam={lam:g} (float64 gives e = {e:.3g}); "
            "see docs/limits.md"
        )
    return e


def e_linear(ratios: Ratios, tasks: TaskCovariances = IDENTITY, *, error: str = "icl") -> float:
    """Asymptotic ICL error for LINEAR tasks y = x^T w + eps, w ~ N(0, C_train).

    Paper: the function e_ICL^linear of Result 1, Eq. (9), p. 3 (Appendix C,
    p. 10), as given in docs/linear-theory.md (Lu et al. 2024; Letey, Lu, Pehlevan 2025).

    Parameters
    ----------
    ratios : :class:`Ratios`, numbers: rho the noise variance (>= 0); alpha = l/d the context
        length ratio; kappa = k/d the task diversity; tau = n/d^2 the pretraining ratio (tau = 1
        needs lam > 0); lam the ridge (regulariser (n/d) lam I, Eq. (6)), 0 the ridgeless limit.
    tasks : :class:`TaskCovariances` (default C_train = C_test = I): C_train, C_test (Covariance,
        family name, .npy path, matrix or spectrum; ``C_test=None``: same as C_train; or a
        ``TaskSpectra`` as ``C_train`` with ``C_test=None``; C_test need not commute with C_train)
        and the dimension ``d`` of a named family (not needed for ``identity``).
    error : ``icl`` (default; fresh test tasks from N(0, C_test)), ``idg`` (the test task
        is one of the k pretraining tasks; C_test is not used; docs/idg.md) or ``gap`` (icl - idg).

    Returns
    -------
    float : the d -> infinity error (deterministic, float64).

    Examples
    --------
    >>> e = e_linear(Ratios(rho=0.1, alpha=2, kappa=2, tau=3))
    >>> abs(e - e_linear_isotropic(0.1, 2, 2, 3)) < 1e-13
    True
    """
    rho, alpha, kappa, tau, lam = ratios.rho, ratios.alpha, ratios.kappa, ratios.tau, ratios.lam
    check_error(error)
    check_parameters(rho, alpha, kappa, tau, lam)
    sp = tasks.spectra()
    return _error(sp, rho, alpha, kappa, tau, lam, error=error)


def _iso_mfun(kappa, c=1.0):
    def mfun(nu):
        M, Mp = stieltjes_isotropic(nu, kappa, c)
        M, Mp = float(M), float(Mp)
        return Stieltjes(nu, M, Mp, 1.0 - 1.0 / kappa + nu * M / kappa, kappa)

    return mfun


def e_linear_isotropic(rho, alpha, kappa, tau, lam=0.0) -> float:
    """Closed form for C_train = C_test = I (docs/linear-theory.md, "Isotropic closed form").

    With ``x = (1 + rho)/alpha``, ``m = M_kappa(x)``, ``mu = x M_{kappa/tau}(x)``:

    * tau < 1: ``e = tau (1+x)/(1-tau) (1 - tau (1-mu)^2 - (x - rho)/x mu) - 2 tau (1 - mu) + rho + 1``
    * tau > 1: with ``K = 1/(1 - kappa (m/(kappa + m))^2)`` (``k`` in the reference, a local
      quantity, not the task count), ``e = (K - 1/(tau-1)) (1+x) (x m)^2 + (3 - 2 tau)/(tau - 1) m x^2
      + ((1+rho)/(tau-1) m + 1) x + rho m/(tau-1) + rho``.

    Ridge (lam > 0): the recipe of :func:`e_linear` with the closed-form M of c I
    (the eps equation has no closed form).

    >>> round(e_linear_isotropic(0.0, 1e9, 2.0, 1e9), 6)   # alpha, tau -> inf, kappa > 1: e -> rho = 0
    0.0
    """
    check_parameters(rho, alpha, kappa, tau, lam)
    if lam > 0:
        return _error(TaskSpectra(np.ones(1), np.ones(1), "identity"), rho, alpha, kappa, tau, lam, _iso_mfun(kappa))
    x = (1.0 + rho) / alpha
    if tau < 1:
        mu = x * float(stieltjes_isotropic(x, kappa / tau)[0])
        return tau * (1 + x) / (1 - tau) * (1 - tau * (1 - mu) ** 2 - (x - rho) / x * mu) - 2 * tau * (1 - mu) + rho + 1
    m = float(stieltjes_isotropic(x, kappa)[0])
    K = 1.0 / (1.0 - kappa * (m / (kappa + m)) ** 2)
    return (
        (K - 1 / (tau - 1)) * (1 + x) * (x * m) ** 2
        + (3 - 2 * tau) / (tau - 1) * m * x * x
        + ((1 + rho) / (tau - 1) * m + 1) * x
        + rho * m / (tau - 1)
        + rho
    )


def e_idg_isotropic(rho, alpha, kappa, tau) -> float:
    """Closed form of the ridgeless IDG error for C_train = I, tau > 1 (docs/idg.md).

    With ``x = (1 + rho)/alpha`` and ``m = M_kappa(x)``, steps 4-5 of the recipe with the
    IDG traces collapse (every M' term cancels) to::

        e_IDG = tau/(tau - 1) (rho + x (1 - x m)).

    As kappa -> 0, ``x m -> 1`` and e_IDG -> rho tau/(tau - 1): the pretraining tasks are
    memorised and only the label noise costs (the memorisation regime).  Written out
    separately from :func:`e_linear` so that the tests compare two derivations.

    >>> round(e_idg_isotropic(0.1, 2, 2, 3) - e_linear(Ratios(rho=0.1, alpha=2, kappa=2, tau=3), error="idg"), 12)
    0.0
    """
    check_parameters(rho, alpha, kappa, tau)
    if not tau > 1:
        raise ICLError(f"the closed form e_idg_isotropic is for tau > 1, got tau = {tau:g}")
    x = (1.0 + rho) / alpha
    m = float(stieltjes_isotropic(x, kappa)[0])
    return tau / (tau - 1.0) * (rho + x * (1.0 - x * m))


# ----------------------------------------------------------------------------
# Result 1: teachers
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class TeacherMoments:
    """a1 and E[f^2] of a teacher (Eq. 2, Eq. 8, p. 3), independent of rho.

    ``rho_f(rho) = rho + E[f^2]``, ``rho_nonlinear(rho) = rho + E[f^2] - a1^2``.
    """

    a1: Value
    E_f2: Value
    label: str = ""
    source: object = field(default=None, repr=False, compare=False)

    @property
    def a1_is_zero(self) -> bool:
        return _is_zero(self.a1)

    def rho_f(self, rho: float) -> float:
        return float(rho) + float(self.E_f2)

    def rho_nonlinear(self, rho: float) -> float:
        """rho + E[f^2] - a1^2 without float64 cancellation (1e30*g gives rho, not -1.8e44).

        Exact when both moments are closed forms; otherwise in mpmath with the
        propagated error bound, refused (one line) when the bound does not
        resolve the difference to float64 accuracy.
        """
        rho_ex = sp.Rational(repr(float(rho)))
        if self.a1.exact is not None and self.E_f2.exact is not None:
            return float(sp.N(rho_ex + self.E_f2.exact - self.a1.exact**2, 20))
        with mpmath.workdps(60):
            a1, ef2 = mpmath.mpf(self.a1.value), mpmath.mpf(self.E_f2.value)
            e_a1 = mpmath.mpf(self.a1.abs_err or 0)
            e_f2 = mpmath.mpf(self.E_f2.abs_err or 0)
            val = mpmath.mpf(str(sp.N(rho_ex, 40))) + ef2 - a1 * a1
            err = e_f2 + 2 * abs(a1) * e_a1 + e_a1 * e_a1
            if not mpmath.isfinite(err) or err > mpmath.mpf(10) ** -15 * max(abs(val), 1):
                raise ICLError(
                    f"rho_nonlinear = rho + E[f^2] - a1^2 of {self.label} is not certified to "
                    f"float64 accuracy (value {mpmath.nstr(val, 6)}, error bound "
                    f"{mpmath.nstr(err, 3)}); see icl-symbolic coeffs"
                )
            return float(val)


def _memo(fn):
    """fn of one float argument, remembered per argument (NaN included, by its repr)."""
    cache = {}

    def wrapped(r):
        key = repr(float(r))
        if key not in cache:
            cache[key] = fn(r)
        return cache[key]

    return wrapped


def _is_zero(v) -> bool:
    if isinstance(v, Value):
        if v.exact is not None:
            try:
                return bool(v.exact == 0) or v.exact.is_zero is True
            except AttributeError:
                return v.exact == 0
        tol = float(v.abs_err) if v.abs_err is not None else 0.0
        return abs(float(v.value)) <= tol
    return float(v) == 0.0


def teacher_moments(f, digits: int = 30, *, progress=None) -> TeacherMoments:
    """a1 and E[f^2] from the Hermite engine (``hermite.hermite_coeffs`` at rho = 0).

    ``f`` is an expression string (parsed by ``expr.parse_expr``, never evaluated
    as Python), a SymPy expression, a callable, or a ``TeacherMoments``.
    ``progress`` (a callable taking one line) hears about a long quadrature.
    """
    if isinstance(f, TeacherMoments):
        return f
    res = hermite_coeffs(f, M=1, rho=0, digits=digits, progress=progress)
    label = getattr(res, "label", None) or (f if isinstance(f, str) else str(f))
    return TeacherMoments(res.a1, res.E_f2, str(label), res)


def _moments_from(f, a1, rho_nonlinear, rho, digits):
    """(a1: float, rho_nonlinear: float, moments or None)."""
    if a1 is not None or rho_nonlinear is not None:
        if a1 is None or rho_nonlinear is None:
            raise ICLError("give both a1 and rho_nonlinear, or a teacher f")
        a1f, rnl = float(a1), float(rho_nonlinear)
        if not (math.isfinite(a1f) and math.isfinite(rnl)) or rnl < 0:
            raise ICLError(f"need finite a1 and rho_nonlinear >= 0, got a1={a1f}, rho_nonlinear={rnl}")
        return (0.0 if _is_zero(a1) else a1f), rnl, None
    if f is None:
        raise ICLError("give a teacher f, or a1 and rho_nonlinear")
    if rho is None or not (float(rho) >= 0 and math.isfinite(float(rho))):
        raise ICLError(f"rho (noise variance) must be a finite number >= 0, got {rho!r}")
    if float(rho) > PARAM_MAX:
        raise ICLError(
            f"rho = {float(rho):g} is outside the supported range [0, {PARAM_MAX:g}] "
            "(float64 cancellation beyond; see docs/limits.md)"
        )
    tm = teacher_moments(f, digits)
    return (0.0 if tm.a1_is_zero else float(tm.a1)), tm.rho_nonlinear(rho), tm


def e_nonlinear(
    f=None,
    ratios: Ratios = Ratios(),
    tasks: TaskCovariances = IDENTITY,
    *,
    a1=None,
    rho_nonlinear=None,
    digits: int = 30,
    error: str = "icl",
) -> Value:
    """Result 1, Eq. (9), p. 3: ``e_linear(a1^2 C_train, a1^2 C_test, rho_nonlinear)``.

    ``ratios`` (:class:`Ratios`: rho, alpha, kappa, tau, lam, numbers) and ``tasks``
    (:class:`TaskCovariances`: C_train, C_test, d) as in :func:`e_linear`.
    ``a1`` and ``rho_nonlinear`` come from the Hermite engine for teacher ``f`` at
    noise variance ``rho`` (Eq. 8, p. 3), or are given directly (then ``f`` and
    ``rho`` are not used).  a1 = 0 dispatches to Eq. (10) (:func:`e_a1zero`).
    The paper states Result 1 at lam -> 0; for lam > 0 the same map is applied with
    the same lam (the equivalent linear teacher has the same feature moments, Lemma 1,
    hence the same regularised normal equations at leading order).

    ``error="idg"`` (docs/idg.md): the same map applied to the IDG error of the linear
    theory.  Appendix C's step (p. 10: at leading order the error of a teacher f on a
    task w equals that of the linear teacher with task a1 w and noise rho_nonlinear)
    holds task by task, so it holds for the pretraining tasks as test tasks too.  At
    a1 = 0 the features carry no task signal (Lemma 1, p. 8-9), the error does not
    depend on which task is tested, and IDG = ICL = Eq. (10) (gap 0).

    Examples
    --------
    >>> v = e_nonlinear(ratios=Ratios(alpha=2, kappa=2, tau=0.5), a1=0.0, rho_nonlinear=0.3)
    >>> round(float(v), 12), v.method
    (0.6, 'numeric')
    """
    rho, alpha, kappa, tau, lam = ratios.rho, ratios.alpha, ratios.kappa, ratios.tau, ratios.lam
    check_error(error)
    _check_row({"rho": _noise_or_nan(rho), "alpha": alpha, "kappa": kappa, "lam": lam, "tau": tau}, None)
    a1f, rnl, _ = _moments_from(f, a1, rho_nonlinear, rho, digits)
    check_parameters(rnl, alpha, kappa, tau, lam, noise="rho_nonlinear")
    if a1f == 0.0:
        return _a1zero_value(rnl, alpha, tau, lam, error)
    sp = tasks.spectra().scaled(a1f * a1f)
    e = _error(sp, rnl, alpha, kappa, tau, lam, error=error)
    return Value(
        e,
        "numeric",
        note=f"Result 1, Eq. (9), p. 3: e_linear(a1^2 C_train, a1^2 C_test, "
        f"rho_nonlinear), deterministic equivalent (d -> infinity){_ERROR_NOTE[error]}",
    )


_ERROR_NOTE = {
    "icl": "",
    "idg": "; IDG error (test task = a pretraining task, docs/idg.md)",
    "gap": "; ICL minus IDG error (docs/idg.md)",
}


def _a1zero_value(rnl, alpha, tau, lam, error) -> Value:
    """Eq. (10)/(15) at a1 = 0: ICL and IDG coincide (no task signal), so the gap is 0."""
    e = 0.0 if error == "gap" else e_a1zero(rnl, alpha=alpha, tau=tau, lam=lam)
    return Value(e, "numeric", note="a1 = 0 branch, Eq. (10)/(15), p. 3/p. 10" + _ERROR_NOTE[error])


def e_nonlinear_normalized(
    f=None,
    ratios: Ratios = Ratios(),
    tasks: TaskCovariances = IDENTITY,
    *,
    a1=None,
    rho_nonlinear=None,
    digits: int = 30,
    error: str = "icl",
) -> Value:
    """Result 1 through homogeneity: ``a1^2 e_linear(C_train, C_test, rho_nonlinear/a1^2)``.

    Homogeneity ``e(c C, c C, c rho; lam) = c e(C, C, rho; lam/c)`` (scaling the labels
    by sqrt(c)); at lam = 0 this is ``c e(C, C, rho)``, which is what makes the
    Fig. 1 legend value rho_nonlinear/a1^2 = 0.447... (not the Sec. 3 text's 1.447...)
    the noise of the normalised linear teacher.  For lam > 0 the ridge is rescaled
    to lam/a1^2 so that both forms agree.  a1 = 0 dispatches to Eq. (10).
    """
    rho, alpha, kappa, tau, lam = ratios.rho, ratios.alpha, ratios.kappa, ratios.tau, ratios.lam
    check_error(error)
    _check_row({"rho": _noise_or_nan(rho), "alpha": alpha, "kappa": kappa, "lam": lam, "tau": tau}, None)
    a1f, rnl, _ = _moments_from(f, a1, rho_nonlinear, rho, digits)
    check_parameters(rnl, alpha, kappa, tau, lam, noise="rho_nonlinear")
    if a1f == 0.0:
        return _a1zero_value(rnl, alpha, tau, lam, error)
    c = a1f * a1f
    sp = tasks.spectra()
    e = c * _error(sp, rnl / c, alpha, kappa, tau, lam / c, error=error)
    return Value(
        e,
        "numeric",
        note="a1^2 e_linear(C_train, C_test, rho_nonlinear/a1^2) (homogeneity form of Result 1, Eq. (9), p. 3)",
    )


# ----------------------------------------------------------------------------
# curves
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class TheoryCurve(Rows):
    """A grid of theory points (cartesian product, tau varying fastest).

    ``columns``: dict of equal-length arrays ``rho, alpha, kappa, tau, lam,
    rho_nonlinear, e``.  ``moments``: the teacher's a1, E[f^2] (or None for a plain
    linear teacher given by rho).  ``branch``: ``"result1"`` or ``"a1zero"``.
    """

    columns: dict
    moments: TeacherMoments | None
    branch: str
    spectra_label: str = ""
    error: str = "icl"

    def __len__(self):
        return len(self.columns["e"])

    @property
    def e(self) -> np.ndarray:
        return self.columns["e"]

    # -- display: the swept parameters and e, at most 12 rows ----------------
    def _rows(self, limit: int = 12):
        c = self.columns
        swept = [k for k in ("rho", "alpha", "kappa", "lam", "tau") if np.unique(c[k]).size > 1] or ["tau"]
        tex = {"rho": "\\rho", "alpha": "\\alpha", "kappa": "\\kappa", "lam": "\\lambda", "tau": "\\tau"}
        return [
            Quantity(
                ", ".join(f"{k}={c[k][i]:g}" for k in swept),
                ",\\ ".join(f"{tex[k]}={c[k][i]:g}" for k in swept),
                Value(float(c["e"][i]), "numeric", note=DIVERGES if math.isinf(c["e"][i]) else ""),
            )
            for i in range(min(len(self), limit))
        ]

    def _title(self) -> str:
        who = f"f(g) = {self.moments.label}" if self.moments is not None else "given a1, rho_nonlinear"
        eq = "Result 1, Eq. (9)" if self.branch == "result1" else "a1 = 0 branch, Eq. (10)"
        fixed = ", ".join(
            f"{k} = {self.columns[k][0]:g}"
            for k in ("rho", "alpha", "kappa", "lam", "tau")
            if np.unique(self.columns[k]).size == 1
        )
        name = {"icl": "ICL error e", "idg": "IDG error e", "gap": "ICL - IDG gap"}[self.error]
        return f"{name} (d -> infinity, {eq}) for {who}; {fixed}"

    def _footer(self) -> str:
        more = len(self) - len(self._rows())
        return f"  ... {more} more points (.points(), .columns)" if more > 0 else ""

    def __repr__(self) -> str:
        return text_table(self._title(), self._rows(), 10, self._footer())

    def _repr_html_(self) -> str:
        return html_table(self._title(), self._rows(), 10, self._footer().strip())

    def _repr_latex_(self) -> str:
        return latex_table(self._title(), self._rows(), 10)

    def to_json(self) -> dict:
        """The fields of ``theory --json`` that the curve knows: ``a1``, ``E_f2``, one entry per rho of
        the grid in ``rho``, ``rho_f``, ``rho_nonlinear``, the ``branch``, ``method``, ``provenance``
        and the ``points`` (the command adds its inputs: ``expr``, ``C_train``, ``C_test``, ``d``)."""
        rhos = [float(r) for r in np.unique(self.columns["rho"])]
        out = {
            "rho": rhos,
            "branch": self.branch,
            "method": (
                "deterministic equivalent (d -> infinity), float64; Stieltjes transform from the "
                "self-consistent equation by bracketing"
                if self.branch == "result1"
                else "closed form of the a1 = 0 branch, Eq. (10)/(15)"
            ),
        }
        tm = self.moments
        if tm is not None:
            out.update(
                a1=float(tm.a1),
                E_f2=float(tm.E_f2),
                rho_f=[float(tm.rho_f(r)) for r in rhos],
                rho_nonlinear=[float(tm.rho_nonlinear(r)) for r in rhos],
                provenance={
                    "a1": tm.a1.to_json(),
                    "E_f2": tm.E_f2.to_json(),
                    "rho_nonlinear": "rho + E[f^2] - a1^2",
                    "rho_f": "rho + E[f^2]",
                },
            )
        return {**out, "points": self.points()}

    def points(self) -> list[dict]:
        """One dict per point: the parameters, ``e`` and ``reason`` (None, or why ``e`` is inf)."""
        keys = ("alpha", "kappa", "tau", "lam", "rho", "rho_nonlinear", "e")
        return [
            {
                **{k: float(self.columns[k][i]) for k in keys},
                "reason": DIVERGES if math.isinf(self.columns["e"][i]) else None,
            }
            for i in range(len(self))
        ]


def curve(
    f=None,
    ratios: Ratios = Ratios(),
    tasks: TaskCovariances = IDENTITY,
    *,
    a1=None,
    rho_nonlinear=None,
    digits: int = 30,
    progress=None,
    error: str = "icl",
) -> TheoryCurve:
    """Theory curve over the cartesian grid of ``rho, alpha, kappa, lam, tau`` (the fields of ``ratios``,
    a :class:`Ratios`, each scalar or 1-D); ``tasks`` (:class:`TaskCovariances`) as in :func:`e_linear`.

    Teacher: ``f`` (Hermite engine, computed ONCE; rho_nonlinear(rho) = rho + E[f^2] - a1^2),
    or precomputed ``a1`` with ``rho_nonlinear`` (then ``rho`` must be a single value or None and
    is only recorded), or neither (the plain linear teacher ``g``: a1 = 1, rho_nonlinear = rho).
    ``progress(i, n)`` is called after each point.  Result 1 (Eq. 9, p. 3) or Eq. (10).
    ``error``: ``icl`` (default), ``idg`` or ``gap`` (:func:`e_nonlinear`; docs/idg.md).
    A ridgeless point at tau = 1 (the interpolation peak) is part of the sweep with
    ``e = inf`` and the reason :data:`DIVERGES` in :meth:`TheoryCurve.points`.

    >>> cv = curve(ratios=Ratios(rho=0.1, tau=[0.5, 0.9, 2.0]), a1=0.0, rho_nonlinear=0.2)
    >>> [round(float(x), 12) for x in cv.e]
    [0.4, 2.0, 0.4]
    """
    rho, alpha, kappa, tau, lam = ratios.rho, ratios.alpha, ratios.kappa, ratios.tau, ratios.lam
    C_train, C_test, d = tasks.C_train, tasks.C_test, tasks.d
    check_error(error)
    if rho is None and a1 is None:
        raise ICLError("rho (noise variance) is needed unless a1 and rho_nonlinear are given")
    grids = check_grid(rho, alpha, kappa, tau, lam, C_train, C_test, d)  # before the teacher's moments
    n_points = math.prod(len(grids[k]) for k in _GRID_ORDER)
    moments = None
    if a1 is not None or rho_nonlinear is not None:
        a1f, rnl0, _ = _moments_from(None, a1, rho_nonlinear, None, digits)
        if grids["rho"].size != 1:
            raise ICLError("with precomputed rho_nonlinear, rho cannot be swept (give the teacher f)")

        def rnl_of(r):
            return rnl0
    elif f is not None:
        moments = teacher_moments(f, digits)
        a1f = 0.0 if moments.a1_is_zero else float(moments.a1)
        rnl_of = moments.rho_nonlinear
    else:
        a1f = 1.0

        def rnl_of(r):
            return float(r)

    rnl_of = _memo(rnl_of)  # one high-precision rho_nonlinear per distinct rho, not per point
    _validate_grid(grids, rnl_of)  # rho_nonlinear of every rho, before any point is computed
    rows = itertools.product(grids["rho"], grids["alpha"], grids["kappa"], grids["lam"], grids["tau"])
    sp = None if a1f == 0.0 else tasks.spectra().scaled(a1f * a1f)
    n = n_points
    cols = {k: np.empty(n) for k in ("rho", "alpha", "kappa", "lam", "tau", "rho_nonlinear", "e")}
    for i, (r, al, ka, la, ta) in enumerate(rows):
        rnl = rnl_of(r)
        if is_peak(ta, la):
            e = math.inf
        elif sp is None:
            e = float(_a1zero_value(rnl, al, ta, la, error).value)
        else:
            e = _error(sp, rnl, al, ka, ta, la, error=error)
        for k, v in (
            ("rho", r),
            ("alpha", al),
            ("kappa", ka),
            ("lam", la),
            ("tau", ta),
            ("rho_nonlinear", rnl),
            ("e", e),
        ):
            cols[k][i] = v
        if progress is not None:
            progress(i + 1, n)
    return TheoryCurve(cols, moments, "a1zero" if sp is None else "result1", "" if sp is None else sp.label, error)


sweep = curve

_GRID_ORDER = ("rho", "alpha", "kappa", "lam", "tau")


def _check_row(row, rnl_of) -> None:
    """Check one row's parameters; its rho_nonlinear too unless ``rnl_of`` is None (the check of the
    given parameters, made before any moment of the teacher is computed)."""
    r, al, ka, la, ta = (row[k] for k in _GRID_ORDER)
    ta_ok = 2.0 if is_peak(ta, la) else ta  # the peak is a point of the sweep, marked inf
    if not np.isnan(r):
        check_parameters(r, al, ka, ta_ok, la)
    if rnl_of is not None:
        check_parameters(rnl_of(r), al, ka, ta_ok, la, noise="rho_nonlinear")


def _noise_or_nan(rho) -> float:
    """rho as a float for the early check (NaN when not given: a precomputed rho_nonlinear)."""
    if rho is None:
        return float("nan")
    try:
        return float(rho)
    except (TypeError, ValueError):
        raise ICLError(f"rho must be a finite number, got {rho!r}") from None


def check_grid(rho, alpha, kappa, tau, lam, C_train="identity", C_test=None, d=None) -> dict:
    """The grids of a sweep as 1-D float arrays, refused in one line when a given parameter is out of
    range or the product exceeds :data:`MAX_POINTS`: the checks that need no moment of the teacher,
    made before any is computed (``curve`` and the API's ``theory_sweep`` call it first; rho None,
    a precomputed rho_nonlinear, is NaN here)."""
    grids = {
        name: np.atleast_1d(np.asarray(np.nan if v is None else v, dtype=float))
        for name, v in (("rho", rho), ("alpha", alpha), ("kappa", kappa), ("lam", lam), ("tau", tau))
    }
    for name, arr in grids.items():
        if arr.ndim != 1 or arr.size == 0:
            raise ICLError(f"{name}: expected a number or a 1-D list of numbers")
    if rho is not None and not np.all(np.isfinite(grids["rho"])):  # NaN below means "not given" only
        raise ICLError(f"rho must be finite numbers, got {rho!r}")
    sweep_estimate(math.prod(arr.size for arr in grids.values()), C_train, C_test, d)
    _validate_grid(grids, None)
    return grids


def _validate_grid(grids, rnl_of) -> None:
    """Validate every row of the product of ``grids`` (rho outermost, tau innermost), in
    sum-of-sizes instead of product-of-sizes checks: each check concerns one parameter, so a
    row fails exactly when one of its values fails with the others at their first value.
    Checking the first row, then each grid from the innermost (tau) outwards, raises the
    error of the first failing row in product order (a 1000 x 1000 sweep took 20 s here)."""
    first = {k: grids[k][0] for k in _GRID_ORDER}
    _check_row(first, rnl_of)
    for name in reversed(_GRID_ORDER):
        for v in grids[name][1:]:
            _check_row({**first, name: v}, rnl_of)


def sweep_estimate(n_points: int, C_train="identity", C_test=None, d: int | None = None) -> Estimate:
    """What a sweep of ``n_points`` costs (``cost.SECONDS_PER``: per point, plus per eigenvalue
    of a non-identity covariance), refused past :data:`MAX_POINTS` with the estimate.

    >>> sweep_estimate(10**6).work
    1000000
    """
    spectrum = 1 if d is None else int(d)
    if not (_is_identity_name(C_train) and (C_test is None or _is_identity_name(C_test))) and d is None:
        spectrum = 1000  # a .npy covariance sets d; its size is known once it is read
    seconds = n_points * (SECONDS_PER["theory_point"] + spectrum * SECONDS_PER["theory_point_eig"])
    est = Estimate(
        seconds, n_points, "grid points", f"theory: {n_points} points", "fewer grid points (a smaller n in a:b:n)"
    )
    if n_points > MAX_POINTS:
        raise ICLError(est.refusal(f"{MAX_POINTS} points, the product of the grids"))
    return est


# ----------------------------------------------------------------------------
# Eq. (11): the task-diversity limit
# ----------------------------------------------------------------------------
def task_diversity_limit(kappa, rho_nonlinear, a1=1.0, ratio=0.5) -> float:
    """Limit of Result 1 as alpha, tau -> infinity with tau = ratio * alpha, C = I (Eq. 11, p. 3-4).

    Derived (here, from the isotropic tau > 1 closed form; see
    :func:`derive_task_diversity`):

    * kappa >= 1: ``rho_nonlinear`` (the paper's Eq. 11; it holds at kappa = 1 too);
    * kappa < 1: ``rho_nonlinear + a1^2 (1 - kappa) (1 + rho_nonlinear / (rho_f * ratio))``,
      ``rho_f = a1^2 + rho_nonlinear``: the unseen fraction 1 - kappa of the task
      directions costs its signal a1^2 (1 - kappa), plus a term that depends on how
      fast tau grows relative to alpha (ratio = tau/alpha).

    >>> task_diversity_limit(2.0, 0.127415, a1=0.6)
    0.127415
    >>> round(task_diversity_limit(0.5, 0.1, a1=1.0, ratio=1.0), 12)   # 0.1 + 0.5 (1 + 0.1/1.1)
    0.645454545455
    """
    if kappa <= 0 or ratio <= 0 or rho_nonlinear < 0:
        raise ICLError("need kappa > 0, ratio = tau/alpha > 0 and rho_nonlinear >= 0")
    if kappa >= 1:
        return float(rho_nonlinear)
    c = float(a1) ** 2
    rho_f = c + rho_nonlinear
    return float(rho_nonlinear + c * (1 - kappa) * (1 + rho_nonlinear / (rho_f * ratio)))


def task_diversity_sequence(kappa, rho_nonlinear, a1=1.0, ratio=0.5, alphas=(1e1, 1e2, 1e3, 1e4, 1e5)):
    """Result 1 (C = I) along alpha -> infinity with tau = ratio * alpha: list of (alpha, tau, e).

    Numerical side of Eq. (11), p. 3-4: the values approach :func:`task_diversity_limit`.
    """
    out = []
    for al in alphas:
        ta = ratio * al
        if is_peak(ta):
            ta = math.nextafter(1.0, 2.0)
        e = float(e_nonlinear(ratios=Ratios(alpha=al, kappa=kappa, tau=ta), a1=a1, rho_nonlinear=rho_nonlinear))
        out.append((float(al), float(ta), e))
    return out


@dataclass(frozen=True)
class TaskDiversityDerivation:
    """SymPy limits of the isotropic linear error as alpha, tau -> infinity, tau = t alpha (Eq. 11).

    In the normalised units of Result 1 (C = I, noise rho = rho_nonlinear/a1^2; multiply
    by a1^2 for the nonlinear error): ``limit_above`` (kappa > 1), ``limit_at_one``
    (kappa = 1), ``limit_below`` (kappa < 1, as a function of kappa, rho, t).
    """

    symbols: dict
    error: object  # the tau > 1 isotropic error with x = (1+rho) s, tau = t/s, s = 1/alpha
    limit_above: object
    limit_at_one: object
    limit_below: object
    paper_eq11_holds: bool  # limit_above == rho (i.e. rho_nonlinear after the map)
    matches_closed_form: bool  # limit_below == rho + (1-kappa)(1 + rho/((1+rho) t))


def derive_task_diversity() -> TaskDiversityDerivation:
    """Symbolic Eq. (11), p. 3-4: lim e for alpha, tau -> infinity with tau/alpha = t fixed, C = I.

    Uses the isotropic tau > 1 closed form (tau -> infinity is eventually > 1) with
    s = 1/alpha -> 0+.  kappa > 1 is encoded as kappa = 1 + p, kappa < 1 as
    kappa = 1/(1 + p), p > 0.  Takes about 3 s.
    """

    s, t, rho, p, kappa = sp.symbols("s t rho p kappa", positive=True)

    def error(kap):
        x = (1 + rho) * s
        tau = t / s
        B = x + 1 - 1 / kap
        m = 2 / (B + sp.sqrt(B**2 + 4 * x / kap))
        K = 1 / (1 - kap * (m / (kap + m)) ** 2)
        return (
            (K - 1 / (tau - 1)) * (1 + x) * (x * m) ** 2
            + (3 - 2 * tau) / (tau - 1) * m * x**2
            + ((1 + rho) / (tau - 1) * m + 1) * x
            + rho * m / (tau - 1)
            + rho
        )

    above = sp.simplify(sp.limit(error(1 + p), s, 0, "+"))
    at_one = sp.simplify(sp.limit(error(sp.Integer(1)), s, 0, "+"))
    below = sp.limit(error(1 / (1 + p)), s, 0, "+")
    below = sp.factor(sp.simplify(below.subs(p, 1 / kappa - 1)))
    closed = rho + (1 - kappa) * (1 + rho / ((1 + rho) * t))
    return TaskDiversityDerivation(
        symbols={"s": s, "t": t, "rho": rho, "kappa": kappa},
        error=error(kappa),
        limit_above=above,
        limit_at_one=at_one,
        limit_below=below,
        paper_eq11_holds=bool(sp.simplify(above - rho) == 0),
        matches_closed_form=bool(sp.simplify(below - closed) == 0),
    )
