"""Finite-d (O(1/d)) corrections to the asymptotic ICL error.

The theory of the paper (Letey et al., arXiv:2610.10761, Result 1, Eq. (9), p. 3;
Eq. (10), p. 3 for a1 = 0) and of the linear theory it reuses (Lu et al.,
arXiv:2405.11751; docs/linear-theory.md) is a limit d -> infinity at fixed
alpha = ell/d, kappa = k/d, tau = n/d^2.  A simulation at d = 32-64 sits a few
percent (up to 30 % for the a1 = 0 teacher) away from it (docs/finite-size.md).
This module adds, on top of the limit, each finite-d effect that can be derived
or cited, each with its own switch, so a user sees which piece explains what.

Terms (applied in this order; each term's contribution is the change of the
error when it is switched on after the ones before it):

``sizes`` (exact)
    The simulator's integer sizes ell = round(alpha d), k = round(kappa d),
    n = round(tau d^2) (``simulation.sizes``): alpha, kappa, tau are replaced by
    ell/d, k/d, n/d^2.  Zero when the products are integers.
``param_count`` (derived here)
    The model has p = d(d+1) trained parameters (A: d x d and b: d; paper Eq. (5),
    p. 2), not d^2: the interpolation threshold of the min-norm / least-squares
    fit is n = p, i.e. tau = (d+1)/d.  The limit recipe depends on n and the
    parameter count only through their ratio (its xi equation
    ``xi M(xi + r) = 1 - tau`` is the interpolation constraint n/p = tau), so
    tau is replaced by tau_eff = n/(d(d+1)).  The b-column features x_test s
    are d pure-noise directions (E[y_test x_test s] = 0 for a fresh task):
    this is how they enter at O(1/d).
``task_norm`` (derived here)
    Gaussian tasks w ~ N(0, I): omega = |w|^2/d ~ chi^2_d/d (E omega = 1,
    E omega^2 = 1 + 2/d).  Given omega the teacher is f(sqrt(omega) g), whose
    linear coefficient is beta(omega) = E[f(sqrt(omega) g) g]/sqrt(omega) and
    nonlinear remainder rho_nl(omega) = E f(sqrt(omega) g)^2 - omega beta^2 + rho.
    Result 1 (Eq. (9)) is applied with the task-averaged second moments
    a1_eff^2 = E[omega beta(omega)^2], rho_nl_eff = E[E f^2 | omega] - a1_eff^2 + rho
    (``task_norm_average``: inner Gaussian expectations split at the kinks and jumps of f, Gauss-Laguerre
    in omega, error stated; at d -> infinity the Hermite engine's a1 and E f^2, the values of
    ``theory --order 0``).  Zero for the linear teacher (beta = 1), whose
    Gaussian task norms are already inside the limit's Marchenko-Pastur law;
    for f = (g^2-1)/sqrt 2 it gives rho_nl_eff = rho + 1 + 3/d exactly.
    Neglected: the heteroscedasticity of rho_nl(omega) across tasks, and the
    non-Gaussian norm law of the equivalent tasks beta(omega) w.
``bank_resolvent`` (cited: Bai and Silverstein 2004)
    The task-bank resolvent has a finite-k mean shift:
    E (1/d) tr (S + nu)^-1 = M_kappa(nu) + g(-nu)/d + o(1/d) for S = W W^T/k, W
    with i.i.d. N(0, 1) entries, with (real Gaussian case, population I)
    g(z) = c m^3 (1+m)^-3 / (1 - c m^2 (1+m)^-2)^2, c = d/k, m = -(1-c)/z + c M
    the companion transform (Z. D. Bai and J. W. Silverstein, "CLT for linear
    spectral statistics of large-dimensional sample covariance matrices",
    Ann. Probab. 32 (2004) 553-605, Thm 1.1, Eq. (1.6)).  The recipe is
    evaluated with M -> M + g/d and M' -> M' + g'/d (the traces (1/d) tr F =
    M, (1/d) tr F2 = -M' for C = I).  The fluctuation of M is O(1/d^2) in the
    mean error and is not included.
``radial`` (derived here)
    The features h = x_test (x) [u; s] are Kronecker products: after whitening,
    the squared norm r^2 = |x_test|^2 (v^T E[vv^T]^-1 v)/(d+1) fluctuates with a
    relative variance of O(1/d) (2/d from |x_test|^2 alone, more from |u|^2
    and the heavy-tailed s), whereas a Gaussian vector in p = d(d+1) dimensions
    has O(1/d^2).  The ridgeless fit on h = r z is the fit on z with targets
    y/r (min-norm, n < p) or the r^2-weighted least-squares fit on z with
    targets y/r (n > p).

    *a1 = 0.*  The target is pure (heteroscedastic) noise for the regression
    (E[y_test h] = 0), and the leave-one-out deterministic equivalent of an
    elliptical design (El Karoui, Ann. Appl. Probab. 19 (2009) 2362; Couillet
    and Liao, Random Matrix Methods for Machine Learning, CUP 2022, Sec. 2.2.3)
    gives, with (r^2, y^2) of one prompt (Gaussian tasks):

    * n < p (min-norm interpolation): e = E[y^2] + n E[y^2/r^2]/(p - n);
    * n > p (least squares): delta solves E[1/(1 + r^2 delta)] = 1 - p/n and
      e = E[y^2] + delta E[y^2 r^2/(1+r^2 delta)^2] / E[r^2/(1+r^2 delta)^2].

    With r = 1 these are Eq. (10) with p = d(d+1).  Replaces the Eq. (10)
    value (so it contains ``param_count`` and ``task_norm`` for a1 = 0).
    Checked against brute-force Kronecker regressions in tests/test_finite_d.py.

    *a1 != 0* (:func:`e_radial_signal`).  The signal and its misfit scale with
    r_x = |x_test| (so r_x drops out of the min-norm fit), the label noise
    does not; r_v is taken within a task (tasks on the sphere |w|^2 = d: the
    spread of |w| across tasks is already inside the limit's Marchenko-Pastur
    law and in ``task_norm``).  The targets y/r then carry the signal times
    E[1/r_v] (n < p) or E[r_v] (n > p) plus an extra residual, which enters
    the recipe as label noise (the recipe is affine in it), and the test
    prediction r_t z^T gamma picks up E[r_v] and E[r_v^2] factors.  Less
    certain than the a1 = 0 branch: the choice of the within-task law was made
    after comparing with d = 32 simulations (docs/finite-d.md says so).  Its
    n > p branch is superseded by ``population`` (it ignores the finite bank's
    exact population fit and keeps a spurious tau -> infinity part).

    The one-prompt expectations are Monte Carlo (``radial_moments``, with SE).
    Assumption stated: the whitened direction h/r behaves like an isotropic
    vector for the resolvent (quadratic forms of the leave-one-out resolvent
    fluctuate only through r).
``population`` (derived here; a1 != 0, n > p only)
    Least squares (n > p) on the training prompts of a bank W of k tasks converges, as
    n -> infinity at fixed d, to the population fit Gamma*_W = d C_W Sigma_W^-1 (C_W = E[x y v^T],
    Sigma_W = E[v v^T], v = [u; s], averages over the bank and the prompts), whose moments are
    the exact finite-d, finite-ell Lemma 1 moments (Appendix B, Eqs. (12)-(14), p. 8-9;
    ``model.moments``).  Its test error on fresh Gaussian tasks is exact
    (``model.gamma_error.e_gamma_isotropic``).  This tau -> infinity value contains every
    finite-d effect of the population problem at once, among them one the other terms miss:
    s is nearly constant (s = 1 + rho + O(d^-1/2)), so the column b acts as a free intercept
    x^T b s that memorises the bank's mean task w_bar (|w_bar|^2/d = 1/k), an O(1/k) = O(1/(kappa d))
    effect (about 1.8/d of the linear teacher's error at kappa = 1/2, alpha = 2).  The finite-n excess
    is the elliptical leave-one-out variance of the a1 = 0 branch applied to the residual
    e = y - <Gamma*_W, H> of the population fit:
    delta E[e^2 r^2/(1 + r^2 delta)^2]/E[r^2/(1 + r^2 delta)^2] x tr(Sigma_test Sigma_W^-1)/(d + 1),
    with r^2 = |x_test|^2 v^T Sigma_W^-1 v/(d + 1) whitened by the bank and
    E[1/(1 + r^2 delta)] = 1 - p/n (the test-train factor is exact for Gaussian features:
    sigma^2 tr(Sigma_test Sigma_train^-1)/(n - p - 1)).  Banks and one-prompt expectations by
    Monte Carlo (:func:`e_population_ols`, with SE; each bank from its own random stream, the same at every
    n, its n-independent parts cached, the prompt average with the exact E[e^2] as control variate).  Replaces the value for a1 != 0 and
    n > p (so it supersedes ``param_count``, ``task_norm``, ``bank_resolvent`` and ``radial``
    there).  Not applied to a1 = 0 (there Gamma* = 0 and ``radial`` already agrees with the
    simulations; the bank-whitened variant overshoots, docs/finite-d.md) nor to n < p (the
    min-norm fit does not converge to a population fit).
``min_norm_metric`` (derived here; a1 = 0, n < p only)
    Below the peak the ridgeless fit is the minimum-norm interpolator of the *raw* parameters
    Gamma = [A, b] (the lam -> 0 limit of the penalty lam |Gamma|_F^2, paper Eq. (6)), not of the
    whitened ones that ``radial`` assumes.  The two differ because the raw feature covariance
    E[h h^T] = E[x x^T] (x) E[v v^T] is not a multiple of the identity: E[v v^T] = c_u I (+) E[s^2]
    (the u-s block vanishes by the symmetry x -> -x), and s = (1/ell) sum y_i^2 is not centred,
    so E[s^2]/c_u is large (about 11 at d = 32, alpha = 8, for the a1 = 0 teacher): the d
    parameters b are cheap for the min-norm fit.  With h = r Sigma^1/2 z the min-norm fit on h is
    the min-norm fit on Sigma^1/2 z with targets y/r, whose variance for a design of covariance
    Sigma with eigenvalues s_i is E[(y/r)^2] df2/(n - df2), df2 = sum s_i^2/(s_i + k)^2, k from
    n = sum s_i/(s_i + k) (Hastie, Montanari, Rosset and Tibshirani, Ann. Statist. 50 (2022) 949,
    the ridgeless variance with a general covariance); with equal s_i this is n/(p - n), the
    ``radial`` factor.  The eigenvalues are those of E[v v^T] (from the ``radial`` Monte Carlo),
    each d times.  Found by brute force: min-norm fits on sampled prompts in the raw metric
    reproduce the simulator (d = 32: 2.506 +- 0.024 against 2.5075 +- 0.0145), in the whitened
    metric they reproduce the terms before this one (2.429 +- 0.022 against 2.443);
    docs/finite-d.md.  Not applied with a1 != 0 (the signal part's dependence on the metric is not
    derived) nor above the peak (least squares does not depend on the metric).
``wishart`` (classical, exact for Gaussian features)
    Exact finite-n inverse-Wishart means E[W^-1] = I/(m - q - 1): the min-norm
    and least-squares variance factors n/(p - n) and p/(n - p) become
    n/(p - n - 1) and p/(n - p - 1).  O(1/d^2); applied to the a1 = 0 branch.

Scope (:func:`finite_d_scope`, docs/finite-d.md "Scope").  The ``radial``, ``population`` and
``min_norm_metric`` terms were checked against simulations in a region only; outside it
:func:`e_nonlinear_finite` returns the limit with the reason (``FiniteD.scope_note``) and no corrected
value: n/p inside (0.7, 2.4) around the peak; a1 != 0 with rho_nonlinear/a1^2 > 0.5, kurtosis > 6,
or, below the peak, alpha < 2 or alpha/kappa > 4 (the a1 != 0 radial term under-predicts there: its split of the label
into a part scaling with |x_test| and label noise, and its law of v = [u; s], were checked at
alpha = 2 and small noise only; a nonlinear residual is not label noise at O(1/d)); a1 = 0 at
alpha != 8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.interpolate import BarycentricInterpolator
from scipy.optimize import brentq

from icl_symbolic.core.caches import memoize
from icl_symbolic.core.cost import SECONDS_PER, Estimate
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.parallel import map_sweep
from icl_symbolic.engine.expr import teacher
from icl_symbolic.engine.gauss import float_expect
from icl_symbolic.engine.omega_rule import omega_rule
from icl_symbolic.model.gamma_error import e_gamma_isotropic, functionals_float
from icl_symbolic.model.moments import FUNCTIONAL_NAMES, moment_functions
from icl_symbolic.model.prompts import sample_prompts
from icl_symbolic.model.sizes import clamped_sizes, round_half_up
from icl_symbolic.theory.asymptotic import teacher_moments
from icl_symbolic.theory.linear_recipe import Resolvent, linear_error
from icl_symbolic.theory.stieltjes import stieltjes_isotropic

#: The correction terms, in the order they are applied.
TERMS = ("sizes", "param_count", "task_norm", "bank_resolvent", "radial", "population", "min_norm_metric", "wishart")

SOURCES = {
    "sizes": "exact: the simulator's integer sizes ell, k, n (simulation.sizes)",
    "param_count": "derived here: p = d(d+1) parameters (paper Eq. (5)), tau -> n/(d(d+1))",
    "task_norm": "derived here: Gaussian task norms omega ~ chi^2_d/d, a1_eff^2 and rho_nl_eff by Gauss-Laguerre "
    "in omega of kink-split Gaussian expectations, error below 1e-10 (Result 1, Eq. (9)); E omega^2 = 1 + 2/d",
    "bank_resolvent": "cited: Bai & Silverstein, Ann. Probab. 32 (2004) 553, Thm 1.1 Eq. (1.6), mean of "
    "tr (S + nu)^-1 at finite k (real Gaussian)",
    "radial": "derived here: the Kronecker features' norm fluctuation; elliptical leave-one-out deterministic "
    "equivalent (El Karoui 2009; Couillet & Liao 2022) for a1 = 0, target rescaling y/r for a1 != 0; "
    "one-prompt expectations by Monte Carlo",
    "population": "derived here: least squares (n > p) = exact finite-d population fit on the bank (Lemma 1 "
    "moments at finite d, ell; Appendix B, Eqs. (12)-(14)) + elliptical leave-one-out variance of its residual; "
    "banks and prompts by Monte Carlo",
    "min_norm_metric": "derived here: the ridgeless fit interpolates with the least Frobenius norm of the raw "
    "Gamma, whose feature covariance E[x x^T] (x) E[v v^T] has two levels (x (x) u and x (x) s); min-norm variance "
    "of a design with a general covariance (Hastie, Montanari, Rosset & Tibshirani, Ann. Statist. 50 (2022) 949)",
    "wishart": "classical: exact inverse-Wishart means, n/(p-n-1) and p/(n-p-1) (a1 = 0 branch)",
}


@dataclass(frozen=True)
class Term:
    """One correction: its name, its contribution (error with it minus error without it, the
    terms before it switched on), its source, and a note on how the number was obtained."""

    name: str
    delta: float
    source: str
    note: str = ""


@dataclass(frozen=True)
class FiniteD:
    """The d -> infinity limit, the corrected value, and the contribution of each term."""

    d: int
    limit: float
    corrected: float
    terms: tuple
    inputs: dict = field(default_factory=dict)
    stderr: float = 0.0  # Monte-Carlo SE of the corrected value (the last radial/population term), 0 otherwise
    scope_note: str = ""  # why the corrected value is withheld (outside the checked scope); "" inside

    @property
    def in_scope(self) -> bool:
        """True when the corrected value is inside the scope the theory was checked in (:func:`finite_d_scope`)."""
        return not self.scope_note

    @property
    def gap(self) -> float:
        """Relative correction (corrected/limit - 1)."""
        return self.corrected / self.limit - 1.0

    @property
    def method(self) -> str:
        """How the corrected value was obtained (what its printed digits can claim)."""
        if self.stderr:
            return f"limit + O(1/d) terms (docs/finite-d.md), Monte-Carlo SE {self.stderr:.1e}"
        if any(t.name == "radial" for t in self.terms):
            return (
                "limit + O(1/d) terms (docs/finite-d.md); the radial term averages one prompt's law by Monte Carlo "
                "(no SE given): 4 significant digits"
            )
        return "limit + O(1/d) terms (docs/finite-d.md), deterministic"

    def value_text(self) -> str:
        """The corrected value with the digits it has: to the SE's leading digit with the SE when a Monte
        Carlo gave one (:func:`e_nonlinear_finite` always gives one where ``population`` or ``radial``
        enters: over banks above the peak, over prompts below it); 4 significant digits for a radial value
        built without an SE; 6 significant digits when deterministic."""
        if not self.in_scope:
            return "refused"
        x = self.corrected
        if self.stderr:
            decimals = max(0, 1 - int(math.floor(math.log10(self.stderr))))
            return f"{x:.{decimals}f} +- {self.stderr:.1g}"
        if any(t.name == "radial" for t in self.terms):
            return f"{x:#.4g}"
        return f"{x:#.6g}"

    def json_fields(self) -> dict:
        """The JSON fields of this point, the same keys in ``theory --order 1`` and ``simulate --order 1``:
        the limit (``e_theory``), the corrected value, its Monte-Carlo SE, how it was obtained, the value
        with the digits it has (``e_theory_finite_d_text``), the gap in percent of the limit, and each term
        with its source."""
        if not self.in_scope:
            return {
                "e_theory": self.limit,
                "e_theory_finite_d": None,
                "e_theory_finite_d_se": None,
                "e_theory_finite_d_method": "withheld: " + self.scope_note,
                "e_theory_finite_d_text": "refused",
                "finite_d_gap_pct": None,
                "finite_d_terms": {},
                "finite_d_sources": {},
                "finite_d_scope": self.scope_note,
                "reason": self.scope_note,
            }
        return {
            "e_theory": self.limit,
            "e_theory_finite_d": self.corrected,
            "e_theory_finite_d_se": self.stderr,
            "e_theory_finite_d_method": self.method,
            "e_theory_finite_d_text": self.value_text(),
            "finite_d_gap_pct": 100 * self.gap,
            "finite_d_terms": {t.name: t.delta for t in self.terms},
            "finite_d_sources": {t.name: t.source for t in self.terms},
        }

    def table(self) -> str:
        """A plain-text table of the terms."""
        rows = [f"d -> infinity limit           {self.limit:.6f}"]
        if not self.in_scope:
            return "\n".join(rows + [f"corrected at d = {self.d}: refused ({self.scope_note})"])
        for t in self.terms:
            rows.append(f"  + {t.name:<26}{t.delta:+.6f}   [{t.source}]" + (f" ({t.note})" if t.note else ""))
        rows.append(f"corrected at d = {self.d:<12}{self.value_text()}   ({100 * self.gap:+.2f} % vs limit)")
        rows.append(f"  ({self.method})")
        return "\n".join(rows)

    def __repr__(self) -> str:
        return self.table()


def _resolve_terms(order: int, terms) -> tuple:
    if order not in (0, 1):
        raise ICLError(f"order must be 0 (the limit) or 1 (the O(1/d) terms), got {order!r}")
    if order == 0:
        return ()
    if terms is None:
        return TERMS
    terms = tuple(terms)
    bad = [t for t in terms if t not in TERMS]
    if bad:
        raise ICLError(f"unknown finite-d term(s) {bad}; known: {', '.join(TERMS)}")
    return tuple(t for t in TERMS if t in terms)


def _check_d(d) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ICLError(f"d must be an integer >= 2, got {d!r}")
    return int(d)


def finite_sizes(d: int, alpha: float, kappa: float, tau: float) -> tuple:
    """(ell, k, n) as the simulator draws them at dimension d (its default ``paper`` rounding), each held at
    1 or more: :func:`icl_symbolic.model.sizes.clamped_sizes`, the one sizes function's clamped reading."""
    sz = clamped_sizes(d, alpha, kappa, tau)
    return (sz.ell, sz.k, sz.n)


# ----------------------------------------------------------------------------
# bank_resolvent: Bai-Silverstein mean correction of the resolvent trace
# ----------------------------------------------------------------------------
def bs_mean_correction(nu: float, kappa: float) -> float:
    """g(-nu): lim [E tr (S + nu)^-1 - d M_kappa(nu)] for S = W W^T/k, W d x k i.i.d. N(0, 1).

    Bai and Silverstein, Ann. Probab. 32 (2004) 553, Thm 1.1, Eq. (1.6) (real case, E X^4 = 3,
    population T = I): with c = d/k = 1/kappa and the companion transform
    m = -(1 - c)/z + c M at z = -nu,  g = c m^3 (1+m)^-3 / (1 - c m^2 (1+m)^-2)^2.
    Checked against Monte-Carlo resolvent traces at d = 8-32 in tests/test_finite_d.py.

    >>> round(bs_mean_correction(0.55, 2.0), 6)
    0.128472
    """
    c = 1.0 / kappa
    M = float(stieltjes_isotropic(nu, kappa)[0])
    z = -nu
    m = -(1.0 - c) / z + c * M
    return c * m**3 * (1.0 + m) ** -3 / (1.0 - c * m * m * (1.0 + m) ** -2) ** 2


def _mfun(kappa: float, d: int | None):
    """(M, M') of the isotropic bank at nu; with the Bai-Silverstein mean shift when d is given."""

    def f(nu):
        M, Mp = stieltjes_isotropic(nu, kappa)
        M, Mp = float(M), float(Mp)
        if d is not None:
            h = 1e-5 * max(nu, 1e-3)
            g = bs_mean_correction(nu, kappa)
            gp = (bs_mean_correction(nu + h, kappa) - bs_mean_correction(nu - h, kappa)) / (2 * h)
            M, Mp = M + g / d, Mp + gp / d
        return M, Mp

    return f


def e_iso(rho: float, alpha: float, kappa: float, tau: float, mfun=None) -> float:
    """Steps 1-5 of the ridgeless recipe (docs/linear-theory.md) for C_train = C_test = I,
    with the traces written through the bank's resolvent: (1/d) tr F = M, (1/d) tr F2 = -M'.

    ``mfun(nu) -> (M, M')``; default the d -> infinity transform M_kappa.  With the default it
    reproduces ``theory.e_linear_isotropic`` (tested to 1e-12).
    """
    if mfun is None:
        mfun = _mfun(kappa, None)
    if tau == 1.0:
        raise ICLError("the ridgeless error diverges at tau_eff = 1 (n = d(d+1)): no finite value")
    rho_tr = 1.0 + rho
    r = rho_tr / alpha
    xi = 0.0
    if tau < 1:
        fun = lambda x: x * mfun(x + r)[0] - (1.0 - tau)  # noqa: E731  increasing in x
        hi = max(r, 1.0)
        while fun(hi) < 0:
            hi *= 2.0
        xi = brentq(fun, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    nu = r + xi
    M, Mp = mfun(nu)
    return float(linear_error(Resolvent(M, Mp, xi, rho_tr, rho_tr, M, -Mp), rho, alpha, tau))


def e_iso_general(
    rho: float, alpha: float, kappa: float, tau: float, mfun, s_test: float = 1.0, extra_train_noise: float = 0.0
) -> float:
    """:func:`e_iso` with C_test = s_test I (rho_te = s_test + rho, traces s_test M and -s_test M') and
    an extra label-noise variance on the TRAINING labels only (the recipe is affine in the label noise
    rho of step 4; the test label noise stays rho).  Used by the a1 != 0 radial term."""
    rho_tr = 1.0 + rho
    r = rho_tr / alpha
    xi = 0.0
    if tau == 1.0:
        raise ICLError("the ridgeless error diverges at tau_eff = 1 (n = d(d+1)): no finite value")
    if tau < 1:
        fun = lambda x: x * mfun(x + r)[0] - (1.0 - tau)  # noqa: E731
        hi = max(r, 1.0)
        while fun(hi) < 0:
            hi *= 2.0
        xi = brentq(fun, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    nu = r + xi
    M, Mp = mfun(nu)
    rl = rho + extra_train_noise
    return float(
        linear_error(Resolvent(M, Mp, xi, rho_tr, s_test + rho, s_test * M, -s_test * Mp), rl, alpha, tau)
        - extra_train_noise
    )


def e_radial_signal(
    rm: "RadialMoments", rho_p: float, rho_eps: float, alpha: float, kappa: float, tau: float, mfun
) -> float:
    """The radial (Kronecker norm) term for a1 != 0, in units of a1^2 (equivalent linear teacher with
    noise rho_p = rho_nl/a1^2, of which rho_eps = rho/a1^2 is label noise that does not scale with
    |x|).  Derived here (docs/finite-d.md, "radial, a1 != 0"); assumptions: r_x = |x_test| and
    r_v = (v^T Sigma_v^-1 v/(d+1))^(1/2) are independent of the whitened feature direction; the signal
    and its misfit scale with r_x, the label noise does not; the residual of the best linear predictor
    acts on the fit as the recipe's label noise (the recipe is affine in it, exact).

    * n < p: min-norm on h = r z equals min-norm on z with targets y/r: signal x m1 = E[1/r_v],
      residual sigma~^2 = P_s Var(1/r_v) + sigma_s^2 E[1/r_v^2] + rho_eps E[1/(r_x^2 r_v^2)];
    * n > p: least squares = weighted least squares on z (weights r^2) with targets y/r: signal x E[r_v],
      residual weighted by r^2/(1 + r^2 delta)^2 and the variance factor delta/delta_0 (as for a1 = 0);
    * test: prediction r_t z^T gamma against r_x s + eps: the cross term scales with E[r_v] x (signal
      factor), the square with E[r_v^2] x (signal factor)^2; t_A = tr(A)/d and q (the prediction's
      second moment) from the recipe with C_test = s I (affine in s, exact).
    """
    if rm.rx2 is None:
        raise ICLError("the a1 != 0 radial term needs |x_test|^2 samples")
    rx2, rv2 = rm.rx2, rm.r2 / rm.rx2
    rv = np.sqrt(rv2)
    Erv, m1, Erv2 = float(rv.mean()), float(np.mean(1.0 / rv)), float(rv2.mean())
    nu0 = (1.0 + rho_p) / alpha
    M0 = mfun(nu0)[0]
    sig_res = rho_p + nu0 - nu0 * nu0 * M0  # residual of the best linear predictor (xi = 0)
    P_s = 1.0 + rho_p - sig_res  # the part it explains
    sig_s = sig_res - rho_eps  # the residual that scales with |x_test|
    if tau < 1:
        resid = (
            P_s * float(np.var(1.0 / rv))
            + sig_s * float(np.mean(1.0 / rv2))
            + rho_eps * float(np.mean(1.0 / (rx2 * rv2)))
        )
        factor = m1
        extra = resid / m1**2 - sig_res
    else:
        r2 = rm.r2
        target = 1.0 - 1.0 / tau
        fun = lambda dl: float(np.mean(1.0 / (1.0 + r2 * dl))) - target  # noqa: E731
        hi = 2.0 / (tau - 1.0) + 1.0
        while fun(hi) > 0:
            hi *= 2.0
        delta = brentq(fun, 0.0, hi, rtol=1e-13)
        w = r2 / (1.0 + r2 * delta) ** 2
        w = w / w.mean()
        resid_r = P_s * (1.0 / rv - Erv) ** 2 + sig_s / rv2 + rho_eps / (rx2 * rv2)
        factor = Erv
        extra = float(np.mean(w * resid_r)) / Erv**2 * delta * (tau - 1.0) - sig_res
    e1, t_A, q1 = recipe_parts(rho_p, alpha, kappa, tau, mfun, extra)
    return e1 - 2.0 * (Erv * factor - 1.0) * t_A + (Erv2 * factor**2 - 1.0) * q1


def e_radial_signal_se(
    rm: "RadialMoments", rho_p: float, rho_eps: float, alpha: float, kappa: float, tau: float, mfun, groups: int = 10
) -> tuple:
    """(:func:`e_radial_signal` on all of ``rm``, its Monte-Carlo SE): the SE by batch means, the term
    recomputed on ``groups`` interleaved subsets of the prompts (sd/sqrt(groups); the subsets' O(groups/N)
    ratio bias is far below it).  ``mfun`` is memoised for the call (the recipe's resolvent solve does
    not depend on the subset)."""
    memo = {}

    def mf(nu):
        if nu not in memo:
            memo[nu] = mfun(nu)
        return memo[nu]

    value = e_radial_signal(rm, rho_p, rho_eps, alpha, kappa, tau, mf)
    vals = []
    for g in range(int(groups)):
        sub = replace(rm, r2=rm.r2[g::groups], y2=rm.y2[g::groups], rx2=rm.rx2[g::groups])
        vals.append(e_radial_signal(sub, rho_p, rho_eps, alpha, kappa, tau, mf))
    return value, float(np.std(vals, ddof=1) / math.sqrt(groups))


def recipe_parts(rho: float, alpha: float, kappa: float, tau: float, mfun, extra_train_noise: float = 0.0):
    """(e, t_A, q): the recipe's error, t_A = tr(A)/d (the prediction's overlap with the signal) and
    q = |A|_F^2/d (1 + (1 + rho)/alpha) (the prediction's second moment) of the trained A, read off the
    recipe evaluated at C_test = I and 2 I: the test error of A is exactly
    rho + s (1 - 2 t_A + q_A) + ((s + rho)/alpha) q_A with q_A = |A|_F^2/d (u = w + noise of variance
    (s + rho)/alpha per coordinate), affine in s; needs rho > 0."""
    if rho <= 0:
        raise ICLError("recipe_parts needs rho > 0 (it separates |A|^2 through the noise term)")
    e1 = e_iso_general(rho, alpha, kappa, tau, mfun, 1.0, extra_train_noise)
    e2 = e_iso_general(rho, alpha, kappa, tau, mfun, 2.0, extra_train_noise)
    slope = e2 - e1  # 1 - 2 t_A + q_A (1 + 1/alpha)
    q_A = alpha * (e1 - rho - slope) / rho
    t_A = (1.0 + q_A * (1.0 + (1.0 + rho) / alpha) - (e1 - rho)) / 2.0
    return e1, t_A, q_A * (1.0 + (1.0 + rho) / alpha)


# ----------------------------------------------------------------------------
# task_norm: chi^2 averages of the teacher's Hermite moments
# ----------------------------------------------------------------------------
def _teacher(f):
    return teacher(f)


@dataclass(frozen=True)
class TaskNorm:
    """The task-norm averages of a teacher and how they were obtained: a1_eff^2, rho_nl_eff and a bound
    on their absolute error (0 for the limit, whose a1, E f^2 come from the Hermite engine)."""

    a1sq: float
    rho_nl: float
    err: float
    method: str


@memoize(maxsize=256)
def _teacher_limit(f: str, rho: float) -> tuple:
    """(a1^2, rho_nonlinear) of Result 1 (Eq. (8)-(9), p. 3) from the Hermite engine (exact or mpmath
    certified, ``asymptotic.teacher_moments``): the same numbers ``theory --order 0`` uses."""
    tm = teacher_moments(f)
    a1 = 0.0 if tm.a1_is_zero else float(tm.a1)
    return a1 * a1, float(tm.rho_nonlinear(rho))


def _omega_average(T, d: int, n_chi: int) -> tuple:
    """(E[omega beta^2], E[E f(sqrt(omega) g)^2], error) over omega ~ chi^2_d/d with the n_chi-node
    generalised Gauss-Laguerre rule (:func:`icl_symbolic.engine.omega_rule.omega_rule`); the inner expectations by ``gauss.float_expect`` (split at the
    kinks and jumps of f, with its error estimate).  omega beta(omega)^2 = E[z f(z)]^2/omega, z ~ N(0, omega)."""
    om, wo = omega_rule(n_chi, d)  # normalised weights: no Gamma(d/2) overflow at large d
    keep = wo > 1e-300 * wo.max()  # nodes whose weight underflows carry nothing
    om, wo = om[keep], wo[keep]

    def integrands(z):
        fz = T.numpy(z)
        return {"zf": z * fz, "f2": fz * fz}

    vals, errs = float_expect(integrands, om, T.breakpoints, label=T.label)
    a1sq = float(np.sum(wo * vals["zf"] ** 2 / om))
    ef2 = float(np.sum(wo * vals["f2"]))
    inner = float(np.sum(wo * (2.0 * np.abs(vals["zf"]) * errs["zf"] / om + errs["f2"])))
    return a1sq, ef2, inner


def task_norm_average(f, rho: float, d: int | None, n_chi: int = 48) -> TaskNorm:
    """a1_eff^2 and rho_nl_eff of teacher f with Gaussian task norms omega = |w|^2/d ~ chi^2_d/d (``task_norm``).

    beta(omega) = E[f(sqrt(omega) g) g]/sqrt(omega), a1_eff^2 = E[omega beta^2],
    rho_nl_eff = E[E f(sqrt(omega) g)^2] - a1_eff^2 + rho.  d None: omega = 1, the values of Result 1
    (Eq. (9), p. 3) from the Hermite engine, identical to ``theory --order 0``.  Finite d: the inner
    Gaussian expectations E[z f(z)] and E[f(z)^2], z ~ N(0, omega), by ``gauss.float_expect``
    (composite Gauss-Legendre split at the kinks and jumps of f: sign, heaviside, relu, abs and their
    compositions are integrated piecewise, not through a smooth rule), and the omega average by the
    generalised Gauss-Laguerre rule of :func:`~icl_symbolic.engine.omega_rule.omega_rule`.  Both omega
    integrands are smooth (analytic) in omega > 0 for any f of the input language, kinks included (a
    Gaussian average of f over N(0, omega) is a heat-kernel smoothing of f), so the rule converges
    geometrically (slower when f has a jump away from 0: the omega -> 0 end then carries exp(-c/omega));
    the rule is doubled from n_chi nodes until two successive rules agree to 1e-10 relative (at most
    8 n_chi nodes); their difference plus the inner quadrature's error estimate is the error stated
    (``TaskNorm.err``), which must be at most 1e-8 relative (far below the digits the O(1/d) terms are
    printed with).  Raises when either is not reached.

    >>> tn = task_norm_average("sign(g)", 0.1, None)
    >>> round(tn.a1sq, 12), tn.err
    (0.636619772368, 0.0)
    """
    label = str(f)
    a1sq0, rnl0 = _teacher_limit(label, float(rho))
    if d is None:
        return TaskNorm(a1sq0, rnl0, 0.0, "Hermite engine (exact or mpmath certified), omega = 1")
    T = _teacher(f)
    a1sq, ef2, inner = _omega_average(T, int(d), n_chi)
    while True:  # double the rule until two successive rules agree (at most 8 n_chi nodes)
        n_chi *= 2
        a1sq2, ef22, inner2 = _omega_average(T, int(d), n_chi)
        rule_err = abs(a1sq2 - a1sq) + abs(ef22 - ef2)
        err = rule_err + inner2
        scale = max(abs(a1sq2), abs(ef22), 1e-300)
        # the omega rule has converged when two successive rules agree to 1e-10; the inner Gaussian
        # expectations' own estimate does not shrink with the rule and is carried in the stated error,
        # which must stay far below the digits an O(1/d) term is printed with (1e-8 relative)
        if rule_err <= 1e-10 * scale and err <= 1e-8 * scale:
            break
        if n_chi >= 8 * 48:
            raise ICLError(
                f"the task-norm averages of {label} at d = {d} are not resolved (estimated error "
                f"{err:.1e} of {scale:.3g} with {n_chi} Gauss-Laguerre nodes); the finite-d terms need the omega "
                "rule to 1e-10 and the whole to 1e-8"
            )
        a1sq, ef2 = a1sq2, ef22
    if a1sq0 == 0.0:  # a1 = 0 teacher (even f): beta(omega) = 0 for every omega, exactly
        a1sq2 = 0.0
    return TaskNorm(
        a1sq2,
        ef22 - a1sq2 + float(rho),
        err,
        f"chi^2_d/d average by {n_chi}-node Gauss-Laguerre (error vs {n_chi // 2} nodes) of kink-split "
        "Gauss-Legendre Gaussian expectations",
    )


def task_norm_moments(f, rho: float, d: int | None, n_chi: int = 48) -> tuple:
    """(a1_eff^2, rho_nl_eff) of :func:`task_norm_average` (the ``task_norm`` term; d None: the limit's
    a1^2 and rho_nonlinear from the Hermite engine)."""
    tn = task_norm_average(f, rho, d, n_chi)
    return tn.a1sq, tn.rho_nl


# ----------------------------------------------------------------------------
# radial: elliptical deterministic equivalent (a1 = 0 branch)
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class RadialMoments:
    """Samples of (r^2, y_test^2) of one prompt (Gaussian task), and their provenance."""

    r2: np.ndarray
    y2: np.ndarray
    d: int
    ell: int
    note: str
    rx2: np.ndarray | None = None  # |x_test|^2 (r^2 = rx2 rv2); None for synthetic laws
    sv_eigs: np.ndarray | None = None  # eigenvalues of E[v v^T], v = [u; s] (the raw metric); None: synthetic

    def mean_se(self, values: np.ndarray, batches: int = 50) -> tuple:
        """Mean and batch-means SE of per-prompt values."""
        v = np.asarray(values, dtype=float)
        m = v.size // batches * batches
        bm = v[:m].reshape(batches, -1).mean(axis=1)
        return float(v.mean()), float(bm.std(ddof=1) / math.sqrt(batches))


def radial_moments(
    f, rho: float, d: int, ell: int, n: int = 400_000, seed: int = 12345, law: str = "gaussian"
) -> RadialMoments:
    """Monte Carlo over one prompt's law (Gaussian task, ``prompts.sample_prompts``, exact sampler):
    r^2 = |x_test|^2 (v^T Sigma_v^-1 v)/(d + 1), v = [u; s], Sigma_v = E[v v^T] (estimated from the
    same samples; it is c_u I (+) E[s^2] plus O(1/d) rank-one parts, which are kept), and y_test^2."""
    T = _teacher(f)
    rng = np.random.default_rng(seed)
    r2, y2 = [], []
    V_all, xt2 = [], []
    chunk = 20_000
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        W = rng.standard_normal((m, d))
        if law == "sphere":
            W *= math.sqrt(d) / np.linalg.norm(W, axis=1)[:, None]
        P = sample_prompts(T.numpy, W, ell, rho, rng, method="fast")
        V_all.append(np.concatenate([P.u, P.s[:, None]], axis=1))
        xt2.append(np.einsum("md,md->m", P.x_test, P.x_test))
        y2.append(P.y_test**2)
    V = np.concatenate(V_all)
    Sv = V.T @ V / V.shape[0]
    L = np.linalg.cholesky(Sv)
    Z = np.linalg.solve(L, V.T)
    rx2 = np.concatenate(xt2)
    r2 = rx2 * np.einsum("ij,ij->j", Z, Z) / (d + 1)
    return RadialMoments(
        r2,
        np.concatenate(y2),
        d,
        ell,
        f"Monte Carlo over {n} prompts (seed {seed}), {law} tasks, exact fast sampler",
        rx2,
        np.linalg.eigvalsh(Sv),
    )


@memoize(maxsize=64)
def _radial_cached(f: str, rho: float, d: int, ell: int, n: int, law: str = "gaussian") -> RadialMoments:
    return radial_moments(f, rho, d, ell, n=n, law=law)


def min_norm_factor(spectrum, n: int) -> float:
    """Variance factor of the minimum-norm interpolator of n < p samples whose features have
    covariance eigenvalues ``spectrum`` (length p): df2/(n - df2), df2 = sum s^2/(s + k)^2, k > 0
    from n = sum s/(s + k) (module docstring, ``min_norm_metric``).  Equal eigenvalues give n/(p - n).

    >>> round(min_norm_factor([1.0] * 10, 4), 12)
    0.666666666667
    """
    s = np.asarray(spectrum, dtype=float)
    if s.ndim != 1 or n <= 0 or n >= s.size or np.any(s <= 0):
        raise ICLError(f"min_norm_factor needs 0 < n < p positive eigenvalues, got n = {n}, p = {s.size}")
    lo, hi = 1e-300, float(s.max()) * s.size
    kap = brentq(lambda k: float(np.sum(s / (s + k))) - n, lo, hi, rtol=1e-14)
    df2 = float(np.sum(s * s / (s + kap) ** 2))
    return df2 / (n - df2)


def e_radial(
    rm: RadialMoments, n: int, p: int, wishart: bool = False, Ey2: float | None = None, spectrum=None
) -> tuple:
    """The a1 = 0 error with elliptical features (module docstring): (value, MC SE).

    n < p: E[y^2] + n E[y^2/r^2]/(p - n [- 1]);  n > p: delta from E[1/(1 + r^2 delta)] = 1 - p/n,
    E[y^2] + delta E[y^2 r^2/(1 + r^2 delta)^2]/E[r^2/(1 + r^2 delta)^2] (times (n-p)/(n-p-1) with
    ``wishart``).  ``Ey2``: the exact E[y^2] (from :func:`task_norm_moments`); then only the small
    terms y^2 (w(r) - 1) are averaged by Monte Carlo (a control variate: E[y^2 w] = Ey2 + E[y^2 (w - 1)]),
    which cuts the SE several-fold.  SE by batch means over the prompt samples (delta held at its
    estimate, whose own MC error enters through the weights only at second order).
    ``spectrum`` (n < p only): the raw feature covariance's eigenvalues; the min-norm factor
    n/(p - n) becomes :func:`min_norm_factor` (``min_norm_metric``).
    """
    r2, y2 = rm.r2, rm.y2
    if n == p:
        raise ICLError("the ridgeless error diverges at n = d(d+1): no finite value")
    if n < p:
        wgt = 1.0 / r2
        factor = n / (p - n - (1 if wishart else 0))
        if spectrum is not None:
            factor *= min_norm_factor(spectrum, n) * (p - n) / n
    else:
        target = 1.0 - p / n
        fun = lambda dl: float(np.mean(1.0 / (1.0 + r2 * dl))) - target  # noqa: E731  decreasing
        hi = 2.0 * p / (n - p) + 1.0
        while fun(hi) > 0:
            hi *= 2.0
        delta = brentq(fun, 0.0, hi, rtol=1e-13)
        wgt = r2 / (1.0 + r2 * delta) ** 2
        wgt = wgt / float(np.mean(wgt))
        factor = delta * ((n - p) / (n - p - 1) if wishart else 1.0)
    if Ey2 is None:
        return rm.mean_se(y2 * (1.0 + factor * wgt))
    m, se = rm.mean_se(y2 * (wgt - 1.0))
    return Ey2 * (1.0 + factor) + factor * m, factor * se


# ----------------------------------------------------------------------------
# population: the exact finite-d population fit on a bank + elliptical variance (a1 != 0, n > p)
# ----------------------------------------------------------------------------
def _task_coeffs(f, rho: float, d: int, ell: int, omegas) -> dict:
    """The exact Lemma 1 coefficients (E_y2, E_yx, E_u, E_uuT_I, E_uuT_w, E_us, E_s, E_s2) of tasks with
    |w|^2 = d omega, at finite d and ell (paper Appendix B, Eqs. (12)-(14), p. 8-9; ``model.moments``)."""
    om = np.asarray(omegas, dtype=float)
    vals, _ = functionals_float(f, om)
    return _coeffs_from(vals, rho, d, ell, om)


def _coeffs_from(vals: dict, rho: float, d: int, ell: int, om: np.ndarray) -> dict:
    args = [d, ell, rho, om] + [vals[k] for k in FUNCTIONAL_NAMES]
    return {k: np.broadcast_to(np.asarray(fn(*args), dtype=float), om.shape) for k, fn in moment_functions().items()}


#: relative accuracy the interpolated Gaussian functionals must reach at the check points (else direct)
INTERP_TOL = 1e-11


def _task_coeffs_many(f, rho: float, d: int, ell: int, omegas) -> dict:
    """:func:`_task_coeffs` at many omegas (all the banks' tasks): the five Gaussian functionals of f at
    z ~ N(0, omega) are analytic in omega > 0 (heat-kernel smoothings of f, kinks and jumps included), so
    they are computed at m + 1 Chebyshev-Lobatto nodes spanning the omegas and interpolated (barycentric);
    the interpolant is accepted only when it reproduces the direct values at the m interleaved Chebyshev
    points to INTERP_TOL relative (m = 24, then 48), else every omega is computed directly."""
    om = np.asarray(omegas, dtype=float)
    lo, hi = float(om.min()), float(om.max())
    if om.size > 100 and hi > lo:
        for m in (24, 48):
            j = np.arange(m + 1)
            nodes = lo + (hi - lo) * (1.0 - np.cos(np.pi * j / m)) / 2.0
            checks = lo + (hi - lo) * (1.0 - np.cos(np.pi * (j[:-1] + 0.5) / m)) / 2.0
            vals, _ = functionals_float(f, np.concatenate([nodes, checks]))
            ok, out = True, {}
            for key in FUNCTIONAL_NAMES:
                v = np.asarray(vals[key], dtype=float)
                interp = BarycentricInterpolator(nodes, v[: m + 1])
                scale = max(float(np.max(np.abs(v))), 1e-300)
                if float(np.max(np.abs(interp(checks) - v[m + 1 :]))) > INTERP_TOL * scale:
                    ok = False
                    break
                out[key] = interp(om)
            if ok:
                return _coeffs_from(out, rho, d, ell, om)
    return _task_coeffs(f, rho, d, ell, om)


@memoize(maxsize=64)
def _test_error_affine(f: str, rho: float, d: int, ell: int) -> tuple:
    """(c0, c1, c2, c3) with e_gamma_isotropic(A, b) = c0 + c1 tr A + c2 |A|_F^2 + c3 |b|^2 (the isotropic
    test error depends on Gamma = [A, b] only through these traces and is affine in them: it is quadratic in
    Gamma, model.gamma_error), read off ``e_gamma_isotropic`` at Gamma = 0, [I, 0], [2I, 0], [0, e_1]."""
    z, eye = np.zeros(d), np.eye(d)
    e0 = float(e_gamma_isotropic(0 * eye, z, f, rho, d, ell).value)
    e1 = float(e_gamma_isotropic(eye, z, f, rho, d, ell).value)
    e2 = float(e_gamma_isotropic(2 * eye, z, f, rho, d, ell).value)
    eb = float(e_gamma_isotropic(0 * eye, eye[0], f, rho, d, ell).value)
    c2 = (e2 - 2 * e1 + e0) / (2 * d)
    return e0, (e1 - e0) / d - c2, c2, eb - e0


def population_fit(f, rho: float, d: int, ell: int, W: np.ndarray) -> tuple:
    """(A, b, e_train, Sigma): the least-squares fit on infinitely many training prompts from the bank W
    (k x d, prompts spread evenly over its tasks), exactly at finite d and ell.

    With v = [u; s] and E[x_test x_test^T] = I/d, the training loss of Gamma = [A, b] (prediction
    x_test^T Gamma v, paper Eq. (5), p. 2) is E[y^2] - 2 tr(Gamma^T C) + tr(Gamma Sigma Gamma^T)/d with
    C = E[y x_test v^T] and Sigma = E[v v^T] averaged over the bank; per task E[u|w] = E_u w,
    E[u u^T|w] = E_uuT_I I + E_uuT_w w w^T, E[u s|w] = E_us w, E[x_test y|w] = E_yx w (Lemma 1,
    exact).  Minimiser Gamma* = d C Sigma^-1; e_train is its training error."""
    W = np.asarray(W, dtype=float)
    return _population_fit_from(_task_coeffs(f, rho, d, ell, np.einsum("kd,kd->k", W, W) / d), W, d)


def _population_fit_from(c: dict, W: np.ndarray, d: int) -> tuple:
    """:func:`population_fit` from the bank's Lemma 1 coefficients ``c`` (:func:`_task_coeffs` at its omegas)."""
    k = W.shape[0]
    S = np.empty((d + 1, d + 1))
    S[:d, :d] = float(np.mean(c["E_uuT_I"])) * np.eye(d) + (W.T * c["E_uuT_w"]) @ W / k
    S[:d, d] = S[d, :d] = c["E_us"] @ W / k
    S[d, d] = float(np.mean(c["E_s2"]))
    C = np.empty((d, d + 1))
    C[:, :d] = (W.T * (c["E_yx"] * c["E_u"])) @ W / k
    C[:, d] = (c["E_yx"] * c["E_s"]) @ W / k
    G = d * np.linalg.solve(S, C.T).T
    e_train = float(np.mean(c["E_y2"])) - 2.0 * float(np.sum(G * C)) + float(np.sum(G * (G @ S))) / d
    return G[:, :d], G[:, d], e_train, S


def fresh_task_second_moment(f, rho: float, d: int, ell: int, n_nodes: int = 60) -> np.ndarray:
    """E[v v^T] over fresh Gaussian tasks w ~ N(0, I_d): diag(c_u I_d, E s^2) (E[u s] = 0 by symmetry),
    c_u = E[E_uuT_I + omega E_uuT_w], omega ~ chi^2_d/d (generalised Gauss-Laguerre, exact for these
    smooth integrands to quadrature accuracy)."""
    om, wt = omega_rule(n_nodes, d)
    c = _task_coeffs(f, rho, d, ell, om)
    return np.diag([float(wt @ (c["E_uuT_I"] + om * c["E_uuT_w"]))] * d + [float(wt @ c["E_s2"])])


@dataclass(frozen=True)
class PopulationOLS:
    """The ``population`` term's estimate: mean over banks of e_pop + variance, its SE, and the parts."""

    value: float
    stderr: float
    e_pop: float  # exact test error of the population fit (mean over banks)
    variance: float  # elliptical leave-one-out variance (mean over banks)
    banks: int
    prompts: int


@dataclass(frozen=True)
class PopulationMC:
    """The Monte-Carlo knobs of the ``population`` term: ``banks`` Gaussian banks (bank i drawn by
    :func:`population_bank` from ``seed`` and i, the same banks at every n, so a curve over tau has
    common random numbers; None: :func:`default_banks` of d), ``prompts`` training prompts per bank for the
    variance part."""

    banks: int | None = None
    prompts: int = 2048
    seed: int = 2026


def population_bank(d: int, k: int, index: int, seed: int = 2026) -> np.ndarray:
    """Bank ``index`` of the ``population`` term: k Gaussian tasks N(0, I_d) (k x d), from its own stream
    ``numpy.random.default_rng([seed, index])`` (independent of n, of the teacher and of the other banks)."""
    return np.random.default_rng([int(seed), int(index)]).standard_normal((int(k), int(d)))


@memoize(maxsize=64)
def _population_banks(f: str, rho: float, d: int, ell: int, k: int, mc: PopulationMC) -> tuple:
    """Everything of the banks that does not depend on n, one tuple per bank: (e_pop, e_train, ratio, r2, e2),
    with e_pop the exact test error of the bank's population fit, e_train its exact training error E[e^2]
    over the bank's prompts, ratio = tr(Sigma_test Sigma^-1)/(d + 1), and per sampled training prompt of the
    bank (round robin over its tasks, exact fast sampler, stream ``default_rng([seed, index, 1])``) the
    whitened squared norm r2 = |x_test|^2 v^T Sigma^-1 v/(d + 1) and the squared residual e2 of the
    population fit.  The Lemma 1 coefficients of all banks' tasks come from one vectorised call."""
    Ws = [population_bank(d, k, i, mc.seed) for i in range(int(mc.banks))]
    om = np.concatenate([np.einsum("kd,kd->k", W, W) / d for W in Ws])
    call = _task_coeffs_many(f, rho, d, ell, om)
    c0, c1, c2, c3 = _test_error_affine(f, rho, d, ell)
    Ste = fresh_task_second_moment(f, rho, d, ell)
    T = _teacher(f)
    out = []
    for i, W in enumerate(Ws):
        A, b, e_train, S = _population_fit_from({key: v[i * k : (i + 1) * k] for key, v in call.items()}, W, d)
        e_pop = c0 + c1 * float(np.trace(A)) + c2 * float(np.sum(A * A)) + c3 * float(b @ b)
        rng = np.random.default_rng([int(mc.seed), i, 1])
        P = sample_prompts(T.numpy, W[np.arange(int(mc.prompts)) % k], ell, rho, rng, method="fast")
        V = np.concatenate([P.u, P.s[:, None]], axis=1)
        e = P.y_test - np.einsum("md,md->m", P.x_test, P.u @ A.T + P.s[:, None] * b[None, :])
        Z = np.linalg.solve(np.linalg.cholesky(S), V.T)
        r2 = np.einsum("md,md->m", P.x_test, P.x_test) * np.einsum("im,im->m", Z, Z) / (d + 1)
        ratio = float(np.trace(np.linalg.solve(S, Ste))) / (d + 1)
        out.append((e_pop, e_train, ratio, r2, e * e))
    return tuple(out)


def _elliptical_delta(r2: np.ndarray, p: int, n: int) -> float:
    """delta > 0 solving E[1/(1 + r^2 delta)] = 1 - p/n over the samples r2 (the leave-one-out equation)."""
    target = 1.0 - p / n
    fun = lambda dl: float(np.mean(1.0 / (1.0 + r2 * dl))) - target  # noqa: E731  decreasing
    hi = 2.0 * p / (n - p) + 1.0
    while fun(hi) > 0:
        hi *= 2.0
    return brentq(fun, 0.0, hi, rtol=1e-13)


def e_population_ols(f, rho: float, d: int, ell: int, k: int, n: int, mc: PopulationMC | None = None) -> PopulationOLS:
    """Least squares (n > p = d(d+1)) at finite d: for each of ``mc.banks`` Gaussian banks (k tasks,
    :func:`population_bank`), the exact test error of the population fit (:func:`population_fit`,
    ``e_gamma_isotropic``) plus the elliptical variance of its residual e over the bank's training prompts:

        V = delta E[e^2 r^2/(1 + r^2 delta)^2]/E[r^2/(1 + r^2 delta)^2] x tr(Sigma_test Sigma^-1)/(d + 1),
        E[1/(1 + r^2 delta)] = 1 - p/n,   r^2 = |x_test|^2 v^T Sigma^-1 v/(d + 1).

    With r = 1 and e independent of the features V is the Gaussian value
    E[e^2] tr(Sigma_test Sigma^-1)/(n - p) (the classical misspecified-OLS excess, up to the
    inverse-Wishart -1).  The weighted mean E[e^2 w]/E[w] (w = r^2/(1 + r^2 delta)^2) is written
    E[e^2] + E[e^2 (w - E w)]/E[w] with E[e^2] = e_train exact (:func:`population_fit`): a control variate,
    so that only the small covariance of e^2 with the O(d^-1/2) fluctuation of w is Monte Carlo
    (``mc.prompts`` prompts per bank; the same expectation as the plain ratio up to its O(1/prompts)
    ratio bias).  Mean and SE over banks (the SE covers the prompt Monte Carlo too).  The per-bank parts
    that do not depend on n are cached, so further n (a curve over tau) cost only the delta equation."""
    mc = PopulationMC() if mc is None else mc
    if mc.banks is None:
        mc = replace(mc, banks=default_banks(d))
    p = d * (d + 1)
    if n <= p:
        raise ICLError(f"the population term needs n > p = d(d+1) (least squares), got n = {n}, p = {p}")
    banks, prompts = int(mc.banks), int(mc.prompts)
    out = np.empty((banks, 2))
    for i, (e_pop, e_train, ratio, r2, e2) in enumerate(_population_banks(str(f), float(rho), d, ell, k, mc)):
        delta = _elliptical_delta(r2, p, n)
        w = r2 / (1.0 + r2 * delta) ** 2
        wbar = float(np.mean(w))
        out[i] = e_pop, delta * (e_train + float(np.mean(e2 * (w - wbar))) / wbar) * ratio
    tot = out.sum(axis=1)
    se = float(tot.std(ddof=1) / math.sqrt(banks)) if banks > 1 else float("nan")
    return PopulationOLS(float(tot.mean()), se, float(out[:, 0].mean()), float(out[:, 1].mean()), banks, prompts)


def intercept_shift(rho: float, alpha: float, kappa: float, d: int) -> float:
    """The column b's share of the population (tau -> infinity) error at finite d, derived for the
    linear teacher (a1 = 1; Result 1's equivalent teacher otherwise): s = 1 + rho + O(d^-1/2) is nearly
    constant, so x^T b s is a free intercept c = b s in the prediction x^T (A u + c).  Least squares
    with an intercept is least squares on centred data: the bank W becomes W - w_bar, a Wishart with
    k - 1 degrees of freedom scaled by (k - 1)/k (Marchenko-Pastur at kappa' = (k - 1)/d), and the test
    error gains |c|^2/d = |(I - A) w_bar|^2/d with I - A = nu (S_c + nu)^-1 and w_bar ~ N(0, I/k)
    independent of S_c (Gaussian tasks), i.e. nu^2 (-M_c'(nu))/k, nu = (1 + rho)/alpha.  Returns
    [e(centred bank) - e(bank)] + nu^2 (-M_c'(nu))/k, an O(1/k) = O(1/(kappa d)) shift.
    Checked against the exact population fit with and without b (tests/test_finite_d.py); it is
    contained in the ``population`` term, not added separately."""
    k = round_half_up(kappa * d)
    cs, kp = (k - 1) / k, (k - 1) / d

    def mc(x):
        M, Mp = stieltjes_isotropic(x / cs, kp)
        return float(M) / cs, float(Mp) / cs**2

    nu = (1.0 + rho) / alpha
    big = 1e12
    return e_iso(rho, alpha, kp, big, mc) - e_iso(rho, alpha, kappa, big) + nu * nu * (-mc(nu)[1]) / k


#: default prompts of the ``radial`` term's one-prompt Monte Carlo, by task law: the a1 = 0 branch (Gaussian
#: tasks, 400 000) and the a1 != 0 branch (tasks on the sphere, 50 000) both report a batch-means SE, printed
#: with the value (its calibration against independent prompt streams: benchmarks/finite_d_speed.py spread,
#: docs/finite-d.md, "Speed and determinism")
RADIAL_PROMPTS = {"gaussian": 400_000, "sphere": 50_000}


def default_banks(d: int) -> int:
    """Banks averaged by the ``population`` term: the bank-to-bank spread of the error is O(1/d)
    (linear spectral statistics of the bank fluctuate at O(1)), so 2048/d banks (at least 8) give a
    Monte-Carlo SE of about 0.2 % at every d."""
    return max(8, 2048 // int(d))


@memoize(maxsize=64)
def _population_cached(f: str, rho: float, d: int, ell: int, k: int, n: int, banks: int) -> PopulationOLS:
    return e_population_ols(f, rho, d, ell, k, n, PopulationMC(banks=banks))


# ----------------------------------------------------------------------------
# scope: where the corrected value was checked against simulations
# ----------------------------------------------------------------------------
#: a1 != 0: the noise-to-signal ratio rho' = rho_nonlinear/a1^2 (Result 1's equivalent linear teacher) at
#: most this; beyond it the a1 != 0 radial term under-predicts (docs/finite-d.md, Scope)
SCOPE_NOISE_TO_SIGNAL = 0.5
#: ... and the teacher's kurtosis E f^4/(E f^2)^2 at most this (Gaussian: 3; heavy tails beyond)
SCOPE_KURTOSIS = 6.0
#: ... and below the peak (n < p) alpha at least this (the radial term's law of v = [u; s] at small alpha)
SCOPE_ALPHA_BELOW_PEAK = 2.0
#: ... and below the peak alpha/kappa at most this (ell/k: tokens per prompt over tasks in the bank)
SCOPE_ALPHA_OVER_KAPPA_BELOW_PEAK = 4.0
#: n/p (p = d(d+1)) outside this band around the peak n = p, where the 1/d expansion holds
SCOPE_PEAK_BAND = (0.7, 2.4)
#: the a1 = 0 branch was checked at this alpha only
SCOPE_A1ZERO_ALPHA = 8.0


@memoize(maxsize=256)
def teacher_shape(f: str) -> tuple:
    """(a1^2, nonlinear share (E f^2 - a1^2)/a1^2 (inf when a1 = 0), kurtosis E f^4/(E f^2)^2) of f(g):
    a1, E f^2 from the Hermite engine, E f^4 by ``gauss.float_expect`` (kink-split)."""
    a1sq, rnl0 = _teacher_limit(f, 0.0)
    T = _teacher(f)
    vals, _ = float_expect(
        lambda z: {"f2": T.numpy(z) ** 2, "f4": T.numpy(z) ** 4}, [1.0], T.breakpoints, label=T.label
    )
    ef2, ef4 = float(vals["f2"][0]), float(vals["f4"][0])
    share = rnl0 / a1sq if a1sq > 0 else math.inf
    if not ef2 > 0:
        return a1sq, share, 0.0
    if not ef4 > 0 or not math.isfinite(ef4):  # f^4 under- or overflows float64 (a teacher scaled by 1e+-100):
        s = math.sqrt(ef2)  # the kurtosis is scale-free, so take it of f / sqrt(E f^2)
        vals, _ = float_expect(lambda z: {"f4": (T.numpy(z) / s) ** 4}, [1.0], T.breakpoints, label=T.label)
        return a1sq, share, float(vals["f4"][0])
    return a1sq, share, ef4 / ef2 / ef2


def finite_d_scope(f, rho: float, alpha: float, kappa: float, tau: float, d: int) -> str:
    """Why the corrected value at this point is outside the scope it was checked in, or "" inside.

    The rule (docs/finite-d.md, "Scope", set from the simulations there): n/p outside SCOPE_PEAK_BAND;
    a1 != 0 teachers with rho_nonlinear/a1^2 <= SCOPE_NOISE_TO_SIGNAL, kurtosis <= SCOPE_KURTOSIS and,
    below the peak, alpha >= SCOPE_ALPHA_BELOW_PEAK and alpha/kappa <= SCOPE_ALPHA_OVER_KAPPA_BELOW_PEAK; the a1 = 0 teacher at alpha = SCOPE_A1ZERO_ALPHA only."""
    a1sq, share, kurt = teacher_shape(str(f))
    _, _, n = finite_sizes(int(d), alpha, kappa, tau)
    p = int(d) * (int(d) + 1)
    why = []
    if a1sq == 0.0:
        if alpha != SCOPE_A1ZERO_ALPHA:
            why.append(f"the a1 = 0 branch was checked at alpha = {SCOPE_A1ZERO_ALPHA:g} only")
    else:
        nts = share + float(rho) / a1sq
        if nts > SCOPE_NOISE_TO_SIGNAL:
            why.append(
                f"rho_nonlinear/a1^2 = {nts:.3g} > {SCOPE_NOISE_TO_SIGNAL:g} (the a1 != 0 radial term under-predicts "
                "with a large nonlinear part or label noise)"
            )
        if kurt > SCOPE_KURTOSIS:
            why.append(f"heavy tails: E f^4/(E f^2)^2 = {kurt:.3g} > {SCOPE_KURTOSIS:g}")
        if n < p and alpha < SCOPE_ALPHA_BELOW_PEAK:
            why.append(
                f"alpha = {alpha:g} < {SCOPE_ALPHA_BELOW_PEAK:g} below the peak (the radial term under-predicts)"
            )
        if n < p and alpha > SCOPE_ALPHA_OVER_KAPPA_BELOW_PEAK * kappa:
            why.append(
                f"alpha/kappa = {alpha / kappa:.3g} > {SCOPE_ALPHA_OVER_KAPPA_BELOW_PEAK:g} below the peak "
                "(the radial term under-predicts)"
            )
    lo, hi = SCOPE_PEAK_BAND
    if lo < n / p < hi:
        why.append(
            f"n/p = {n / p:.3g} is inside ({lo:g}, {hi:g}) around the peak n = p = d(d+1) (1/d expansion unchecked)"
        )
    if not why:
        return ""
    return "outside the checked scope of the finite-d terms: " + "; ".join(why) + " (docs/finite-d.md, Scope)"


# ----------------------------------------------------------------------------
# public entry points
# ----------------------------------------------------------------------------
def e_linear_finite(
    rho: float = 0.1, alpha: float = 1.0, kappa: float = 1.0, tau: float = 0.5, *, d: int, order: int = 1, terms=None
) -> FiniteD:
    """Linear teacher y = x^T w + eps, w ~ N(0, I), ridgeless: the limit plus the O(1/d) terms.

    ``terms``: an iterable of names from :data:`TERMS` (default all that apply);
    ``order = 0`` returns the limit.  Only isotropic tasks (C = I) and lam = 0.
    """
    return e_nonlinear_finite("g", rho=rho, alpha=alpha, kappa=kappa, tau=tau, d=d, order=order, terms=terms)


@dataclass(frozen=True)
class FiniteDKnobs:
    """The numerical knobs of :func:`e_nonlinear_finite` (passed to it as keywords): ``mc_prompts``, the
    prompts of the ``radial`` term's one-prompt Monte Carlo (None: :data:`RADIAL_PROMPTS` of the branch's task
    law); ``banks``, the Monte-Carlo banks of the
    ``population`` term (None: :func:`default_banks`); ``scope`` (default True): with any of ``radial``,
    ``population``, ``min_norm_metric`` switched on, outside the scope those terms were checked in
    (:func:`finite_d_scope`) the corrected value is not computed; the result holds the limit, ``corrected``
    NaN and the reason in ``scope_note``.  ``scope=False`` computes it anyway (research use; the benchmarks
    measure the rule)."""

    mc_prompts: int | None = None
    banks: int | None = None
    scope: bool = True


def e_nonlinear_finite(
    f,
    rho: float = 0.1,
    alpha: float = 1.0,
    kappa: float = 1.0,
    tau: float = 0.5,
    *,
    d: int,
    order: int = 1,
    terms=None,
    **knobs,
) -> FiniteD:
    """Teacher f (Result 1, Eq. (9), p. 3; a1 = 0: Eq. (10)), ridgeless, C = I, Gaussian tasks:
    the d -> infinity limit plus the O(1/d) terms of the module docstring, each switchable.
    ``knobs``: the keywords of :class:`FiniteDKnobs` (``mc_prompts``, ``banks``, ``scope``); any other
    name is refused."""
    try:
        kn = FiniteDKnobs(**knobs)
    except TypeError as exc:
        raise ICLError(
            f"e_nonlinear_finite: unknown option(s) {sorted(knobs)}; known: mc_prompts, banks, scope"
        ) from exc
    mc_prompts, banks, scope = kn.mc_prompts, kn.banks, kn.scope
    if mc_prompts is None:
        mc_prompts = RADIAL_PROMPTS["gaussian" if task_norm_moments(f, rho, None)[0] == 0.0 else "sphere"]
    d = _check_d(d)
    banks = default_banks(d) if banks is None else int(banks)
    use = _resolve_terms(order, terms)
    a1sq0, rnl0 = task_norm_moments(f, rho, None)
    a1_zero = a1sq0 == 0.0  # the Hermite engine decides a1 = 0 (exact or certified)
    ell, k, n = finite_sizes(d, alpha, kappa, tau)
    p = d * (d + 1)

    def evaluate(on: tuple) -> tuple:
        al, ka, ta = (ell / d, k / d, n / d**2) if "sizes" in on else (alpha, kappa, tau)
        if "param_count" in on:
            ta = (n if "sizes" in on else tau * d * d) / p
        a1sq, rnl = task_norm_moments(f, rho, d) if "task_norm" in on else (a1sq0, rnl0)
        if a1_zero:
            if ta == 1.0:
                raise ICLError("the ridgeless a1 = 0 error (Eq. (10)) diverges at n = p: no finite value")
            spectrum = None
            if "min_norm_metric" in on and n < p:
                eigs = _radial_cached(str(f), float(rho), d, ell, int(mc_prompts)).sv_eigs
                spectrum = np.repeat(eigs, d)  # E[x x^T] (x) E[v v^T], E[x x^T] isotropic
            if "radial" in on:
                rm = _radial_cached(str(f), float(rho), d, ell, int(mc_prompts))
                Ey2 = task_norm_moments(f, rho, d)[1]  # a1 = 0: E[y^2] = E f^2 + rho, exact
                return e_radial(rm, n, p, wishart="wishart" in on, Ey2=Ey2, spectrum=spectrum)
            # Eq. (10): pure noise fitting; wishart: exact inverse-Wishart factors at (n, p)
            val = (
                _eq10_wishart(rnl, ta, p)
                if "wishart" in on
                else (rnl / (1.0 - ta) if ta < 1 else rnl * ta / (ta - 1.0))
            )
            if spectrum is not None:  # n < p: the variance part rnl x factor, factor rescaled to the raw metric
                nn = ta * p
                val = rnl + (val - rnl) * min_norm_factor(spectrum, n) * (p - nn) / nn
            return val, 0.0
        if "population" in on and n > p:
            po = _population_cached(str(f), float(rho), d, ell, k, n, banks)
            return po.value, po.stderr
        mf = _mfun(ka, d if "bank_resolvent" in on else None)
        if "radial" in on:
            rm = _radial_cached(str(f), float(rho), d, ell, int(mc_prompts), "sphere")
            val, se = e_radial_signal_se(rm, rnl / a1sq, rho / a1sq, al, ka, ta, mf)
            return a1sq * val, a1sq * se
        return a1sq * e_iso(rnl / a1sq, al, ka, ta, mf), 0.0

    try:
        limit, _ = evaluate(())
    except (ValueError, OverflowError, ZeroDivisionError, FloatingPointError) as exc:  # float64 out of range
        raise ICLError(
            f"{f}: the finite-d evaluation leaves float64's range (a1^2 = {a1sq0:.3g}, rho_nonlinear = {rnl0:.3g}: "
            "a signal this small next to its noise); theory without --d gives the d -> infinity value"
        ) from exc
    info = dict(f=str(f), rho=rho, alpha=alpha, kappa=kappa, tau=tau, ell=ell, k=k, n=n, p=p, a1_zero=a1_zero)
    checked = {"radial", "population", "min_norm_metric"}  # the terms whose scope was measured, not exact
    note = finite_d_scope(f, rho, alpha, kappa, tau, d) if (scope and checked & set(use)) else ""
    if note:
        return FiniteD(d, limit, math.nan, (), info, scope_note=note)
    terms_out, prev, on, se = [], limit, (), 0.0
    for t in use:
        if a1_zero and t == "bank_resolvent":
            continue  # the a1 = 0 error does not depend on the task bank (Eq. (10))
        if not a1_zero and t == "wishart":
            continue  # O(1/d^2); applied to the a1 = 0 branch only
        if t == "population" and (a1_zero or n <= p):
            continue  # least squares with a1 != 0 only (module docstring)
        if t == "min_norm_metric" and (not a1_zero or n >= p):
            continue  # a1 = 0 below the peak only (module docstring)
        on = on + (t,)
        val, se = evaluate(on)
        if t == "population":
            note = "MC over %d banks, SE %.1e" % (banks, se)
        else:
            note = "MC, SE %.1e" % se if se else ("MC over one prompt's law" if t == "radial" else "")
        terms_out.append(Term(t, val - prev, SOURCES[t], note))
        prev = val
    return FiniteD(d, limit, prev, tuple(terms_out), info, stderr=se)


#: single-core seconds per prompt token of the exact fast sampler (one prompt of ell tokens and a d-dimensional
#: remainder costs (ell + d) of them), and per bank of the ``population`` term's exact parts (Lemma 1
#: coefficients, fit, test error); measured with benchmarks/finite_d_speed.py on the 2-core box
SECONDS_PER_PROMPT_TOKEN = 1.2e-7
SECONDS_PER_BANK = 0.01


def evaluation_seconds(f, rho: float, alpha: float, kappa: float, tau: float, d: int) -> float:
    """Rough single-core seconds of :func:`e_nonlinear_finite` (all terms) at one point, for the estimate
    announced before a batch of points: the a1 = 0 radial term from ``core.cost.SECONDS_PER``; the a1 != 0
    radial and ``population`` Monte Carlos from their prompt tokens (:data:`SECONDS_PER_PROMPT_TOKEN`)."""
    if finite_d_scope(f, rho, alpha, kappa, tau, d):
        return 0.5  # outside the checked scope: only the limit is computed
    a1sq0, _ = task_norm_moments(f, rho, None)
    ell, _, n = finite_sizes(int(d), alpha, kappa, tau)
    if a1sq0 == 0.0:
        return 1.0 + SECONDS_PER["finite_d_radial_per_d"] * d
    per_prompt = SECONDS_PER_PROMPT_TOKEN * (ell + d)
    seconds = 1.0 + RADIAL_PROMPTS["sphere"] * per_prompt
    if n > d * (d + 1):
        mc = PopulationMC()
        seconds += default_banks(d) * (SECONDS_PER_BANK + mc.prompts * per_prompt)
    return seconds


def _finite_d_item(spec: dict) -> "FiniteD":
    return e_nonlinear_finite(**spec)


def _finite_d_item_or_error(spec: dict):
    try:
        return e_nonlinear_finite(**spec)
    except ICLError as exc:
        return exc


def e_finite_d_many(
    specs, *, jobs: int = 1, scheduler=None, progress=None, reduce: str = "fewer points", keep_errors: bool = False
) -> list:
    """:func:`e_nonlinear_finite` at several points (``specs``: dicts of its keyword arguments, ``f`` and
    ``d`` included), in order, on ``jobs`` processes or a Dask ``scheduler``
    (:func:`icl_symbolic.core.parallel.map_sweep`).  The time estimate goes to ``progress`` first when the
    work is long, then a line per finished point.  ``keep_errors``: a point without a value (e.g. at
    the peak) gives its :class:`ICLError` in its place instead of stopping the batch."""
    specs = [dict(s) for s in specs]
    if not specs:
        return []
    for s in specs:  # a bad order or term name is bad input: refuse the batch before any point runs
        _resolve_terms(s.get("order", 1), s.get("terms"))
    seconds = sum(
        evaluation_seconds(
            s["f"], s.get("rho", 0.1), s.get("alpha", 1.0), s.get("kappa", 1.0), s.get("tau", 0.5), s["d"]
        )
        for s in specs
    )
    workers = max(1, min(int(jobs), len(specs)))
    est = Estimate(seconds / workers, len(specs), "points", "finite-d theory (--order 1)", reduce)
    est.announce(progress)
    say = None
    if progress is not None and est.long:

        def say(msg):
            progress(f"finite-d theory: {msg}")

    item = _finite_d_item_or_error if keep_errors else _finite_d_item
    return map_sweep(item, specs, jobs=jobs, scheduler=scheduler, progress=say, label="point")


def _eq10_wishart(rnl: float, tau_eff: float, p: int) -> float:
    """Eq. (10) with the exact Gaussian inverse-Wishart factors: n < p: rnl (1 + n/(p - n - 1));
    n > p: rnl (1 + p/(n - p - 1)), n = tau_eff p."""
    nn = tau_eff * p
    return rnl * (1.0 + nn / (p - nn - 1.0)) if nn < p else rnl * (1.0 + p / (nn - p - 1.0))


__all__ = [
    "min_norm_factor",
    "TERMS",
    "SOURCES",
    "Term",
    "FiniteD",
    "e_linear_finite",
    "e_nonlinear_finite",
    "e_iso",
    "e_iso_general",
    "e_radial_signal",
    "e_radial_signal_se",
    "RADIAL_PROMPTS",
    "recipe_parts",
    "bs_mean_correction",
    "task_norm_moments",
    "task_norm_average",
    "finite_d_scope",
    "teacher_shape",
    "TaskNorm",
    "radial_moments",
    "e_radial",
    "RadialMoments",
    "population_fit",
    "fresh_task_second_moment",
    "e_population_ols",
    "PopulationOLS",
    "default_banks",
    "population_bank",
    "PopulationMC",
    "FiniteDKnobs",
    "intercept_shift",
    "finite_sizes",
    "e_finite_d_many",
    "evaluation_seconds",
]
