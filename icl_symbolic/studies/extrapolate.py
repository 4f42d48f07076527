r"""Simulations on a ladder of d, extrapolated to d -> infinity, against the theory.

The theory of the paper (Result 1, Eq. (9), p. 3; Eq. (10), p. 3; Eq. (11),
p. 3-4) holds as d -> infinity; a simulation at finite d differs from it by
O(1/d) (the feature count is d(d+1), the task norm |w|^2/d fluctuates at
O(d^-1/2) for Gaussian tasks, the context statistics have O(1/ell) terms:
see docs/appendix-c.md).  Instead of forgiving that gap with a hand-set
allowance, :func:`extrapolate` simulates at several d and fits

    e(d) = e_inf + c1/d            (model "c1/d")
    e(d) = e_inf + c1/d + c2/d^2   (model "c1/d+c2/d^2", only when the data need it)

by weighted least squares (weights 1/SE_d^2, SE_d the seed-to-seed standard
error at each d), then compares e_inf with the theory in units of its
standard error.

Model choice (:func:`fit_ladder`): the 1/d model is kept unless its chi^2 is
improbable (p < ``P_MODEL`` = 0.05 on n - 2 dof) *and* the 1/d^2 term lowers
chi^2 by more than the 95 % quantile of chi^2_1 (3.84; a likelihood-ratio test
for one extra parameter) with at least one dof left.  The chosen model, its
chi^2, dof and the reason are reported.  If even the chosen model fits badly
(p < ``P_MODEL``), the standard error of e_inf is inflated by sqrt(chi^2/dof)
(the Birge ratio) and the output says so.

Standard error and its degrees of freedom.  e_inf = sum_i c_i m_i is linear
in the per-d means m_i; its variance is sum_i c_i^2 SE_i^2.  Each SE_i is
estimated from S_i seeds, so the z-score is referred to a Student t with the
Welch-Satterthwaite dof  (sum c_i^2 SE_i^2)^2 / sum (c_i^2 SE_i^2)^2/(S_i - 1)
(:func:`welch_dof`); points with a known SE (``seeds=None``) count as
infinite dof.  That formula treats the weights c_i as known, but they are
estimated from the same seeds, and on planted ladders it covers a nominal
90 % interval only 82-86 % of the time with 10 seeds per d (docs/power.md).
So when every point carries its per-seed values (``LadderPoint.values``, as
:func:`run_ladder` returns them), the SE is the delete-one-seed jackknife
(:func:`icl_symbolic.core.stats.jackknife_se`: seed j left out at every d, the fit
and its weights redone) with S - 1 dof, which covers at or above the nominal
rate there; ``Fit.se_method`` says which was used.  A ladder may put more seeds
where they are cheap (small d): then seed j of every point is in group
j mod min(S_i) and the delete-a-group jackknife leaves one group out at every d
(:func:`icl_symbolic.core.stats.grouped_jackknife_se`, min(S_i) - 1 dof).

This is the one ladder engine: the ``extrapolate`` command, ``verify``'s
``simulation_extrapolated`` claims and the kernel learner's gap ladder
(:mod:`icl_symbolic.kernel_learner.ladder`) all fit and judge through
:func:`extrapolate` (a :class:`LadderTest`: the command's false-alarm budget or a
claim's z), and run their seeds through
:class:`icl_symbolic.studies.ladder_runs.SeedRunner`.  Nothing here knows about the
model of the paper: :func:`run_ladder` takes the simulator from
:mod:`icl_symbolic.simulation.simulator`, and the fit is tested on planted ladders
(tests/test_extrapolate.py); tests/test_ladder_engine.py holds ``verify`` and the
command to the same numbers.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy import stats

from icl_symbolic.core.cost import Estimate
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import grouped_jackknife_se, sample_se, seed_mean_se, t_limit
from icl_symbolic.core.verdict import DEFAULT_MDE_PCT, RowTest, Verdict, decide, mde_with_seeds
from icl_symbolic.model.setting import FIELDS, PARAMETERS, Setting, SettingView, as_setting
from icl_symbolic.output.plotting import FitLine, LadderAxes, extrapolation_figure
from icl_symbolic.simulation.simulator import (  # noqa: F401  (seed_error: re-exported, it moved to the simulator)
    check_memory,
    resolve_convention,
    run_estimate,
    seed_error,
    sized_plan,
    sizes,
)
from icl_symbolic.studies.ladder_runs import LADDER_REDUCE, SeedRunner
from icl_symbolic.theory.asymptotic import Ratios, TaskCovariances, check_error, e_nonlinear

#: p-value below which a fit model is rejected (model choice, Birge inflation).
P_MODEL = 0.05
#: chi^2_1 quantile the extra 1/d^2 term must beat (likelihood ratio at 5 %).
LR_CHI2_1 = float(stats.chi2.isf(P_MODEL, 1))
MODELS = ("c1/d", "c1/d+c2/d^2")
#: Monte-Carlo test prompts per seed of a ladder run (the exact functional is what is fitted)
LADDER_N_TEST = 2000


@dataclass(frozen=True)
class LadderPoint:
    """The simulated error at one d: mean over seeds, its SE, the seeds (None: SE known exactly).

    ``values``: the per-seed values (in the order of ``seeds``), optional; when every
    point of a ladder has them, over the same number of seeds, :func:`fit_ladder`
    takes the SE of e_inf from the delete-one-seed jackknife (see there).
    """

    d: int
    e_mean: float
    e_se: float
    seeds: tuple | None = None
    seconds: float | None = None
    values: tuple | None = None

    @property
    def n_seeds(self) -> int | None:
        return None if self.seeds is None else len(self.seeds)

    @classmethod
    def from_values(cls, d: int, values, seeds, seconds: float | None = None) -> "LadderPoint":
        """The point of per-seed ``values`` at ``d``: mean, SE = sd/sqrt(S)
        (:func:`icl_symbolic.core.stats.seed_mean_se`), the seeds, and the values themselves (so
        :func:`fit_ladder`'s SE is the jackknife over seeds).

        >>> p = LadderPoint.from_values(16, [1.0, 2.0, 3.0, 6.0], (0, 1, 2, 3))
        >>> p.e_mean, round(p.e_se, 6), p.values
        (3.0, 1.080123, (1.0, 2.0, 3.0, 6.0))
        """
        vals = tuple(float(v) for v in np.asarray(values, dtype=float).ravel())
        mean, se, _ = seed_mean_se(vals)
        return cls(int(d), mean, se, tuple(seeds), seconds, vals)

    def to_json(self) -> dict:
        return {
            "d": int(self.d),
            "e_mean": float(self.e_mean),
            "e_se": float(self.e_se),
            "seeds": None if self.seeds is None else [int(s) for s in self.seeds],
            "seconds": None if self.seconds is None else round(float(self.seconds), 3),
        }


@dataclass(frozen=True)
class Fit:
    """A weighted fit of e(d) in powers of 1/d."""

    model: str
    e_inf: float
    e_inf_se: float
    coef: tuple  # (e_inf, c1[, c2])
    chi2: float
    dof: int
    p_value: float | None
    se_inflation: float  # Birge ratio applied to the SE (1.0: none)
    e_inf_dof: float  # Welch-Satterthwaite dof of the SE (inf: known SEs)
    reason: str
    alternatives: tuple = ()  # ((model, chi2, dof, p_value), ...) of the models considered
    coef_se: tuple = ()  # SEs of coef (Birge-inflated like e_inf_se)
    se_method: str = "welch"  # "welch": sqrt(sum c_i^2 SE_i^2), Welch dof; "jackknife": over seeds, S - 1 dof

    def predict(self, d):
        x = 1.0 / np.asarray(d, dtype=float)
        return sum(c * x**k for k, c in enumerate(self.coef))


def _wls(ds, means, ses, order):
    x = 1.0 / np.asarray(ds, dtype=float)
    X = np.column_stack([x**k for k in range(order + 1)])
    w = 1.0 / np.asarray(ses, dtype=float) ** 2
    XtW = X.T * w
    cov = np.linalg.inv(XtW @ X)
    coef = cov @ (XtW @ np.asarray(means, dtype=float))
    resid = np.asarray(means) - X @ coef
    chi2 = float(np.sum(w * resid**2))
    dof = len(ds) - (order + 1)
    p = float(stats.chi2.sf(chi2, dof)) if dof > 0 else None
    # e_inf as a linear combination of the means: row 0 of cov X^T W
    c = (cov @ XtW)[0]
    return coef, cov, chi2, dof, p, c


def welch_dof(c, ses, n_seeds) -> float:
    """Welch-Satterthwaite dof of sum_i c_i m_i with SE_i estimated from n_seeds[i] seeds (None: known)."""
    v = (np.asarray(c) * np.asarray(ses)) ** 2
    den = 0.0
    for vi, n in zip(v, n_seeds):
        if n is not None:
            if n < 2:
                return 0.0
            den += vi**2 / (n - 1)
    return math.inf if den == 0 else float(v.sum() ** 2 / den)


def _choose_model(ds, means, ses, model: str):
    """The weighted fits and the model choice of :func:`fit_ladder`: (chosen fit, its name, why, alternatives)."""
    lin = _wls(ds, means, ses, 1)
    alts = [("c1/d", lin[2], lin[3], lin[4])]
    quad = _wls(ds, means, ses, 2) if len(ds) >= 3 else None
    if quad is not None:
        alts.append(("c1/d+c2/d^2", quad[2], quad[3], quad[4]))
    if model == "c1/d+c2/d^2":
        if quad is None:
            raise ICLError("the 1/d^2 model needs at least three dimensions")
        chosen, name, reason = quad, model, "model forced by the caller"
    elif model == "c1/d":
        chosen, name, reason = lin, model, "model forced by the caller"
    else:
        lin_ok = lin[4] is None or lin[4] >= P_MODEL
        drop = lin[2] - quad[2] if quad is not None else 0.0
        if lin_ok:
            chosen, name = lin, "c1/d"
            reason = f"e_inf + c1/d fits: chi2 = {lin[2]:.3g} on {lin[3]} dof" + (
                f" (p = {lin[4]:.3g} >= {P_MODEL})" if lin[4] is not None else " (exact fit)"
            )
        elif quad is not None and quad[3] >= 1 and drop > LR_CHI2_1:
            chosen, name = quad, "c1/d+c2/d^2"
            reason = (
                f"e_inf + c1/d rejected (chi2 = {lin[2]:.3g} on {lin[3]} dof, p = {lin[4]:.3g} < {P_MODEL}); "
                f"the c2/d^2 term lowers chi2 by {drop:.3g} > {LR_CHI2_1:.3g} (likelihood ratio, 5%)"
            )
        else:
            chosen, name = lin, "c1/d"
            why = (
                "too few dimensions for a 1/d^2 term with a dof left"
                if quad is None or quad[3] < 1
                else f"the c2/d^2 term lowers chi2 only by {drop:.3g} <= {LR_CHI2_1:.3g}"
            )
            reason = f"e_inf + c1/d fits poorly (chi2 = {lin[2]:.3g} on {lin[3]} dof, p = {lin[4]:.3g}) but {why}"
    return chosen, name, reason, alts


def fit_ladder(points: Sequence[LadderPoint], model: str = "auto") -> Fit:
    """Weighted fit e(d) = e_inf + c1/d (+ c2/d^2 when the data support it); see the module docstring.

    ``model``: ``"auto"`` (choose), ``"c1/d"`` or ``"c1/d+c2/d^2"`` (force).

    >>> pts = [LadderPoint(d, 0.7 + 1.3 / d, 0.01) for d in (32, 48, 64, 96, 128)]
    >>> f = fit_ladder(pts)
    >>> f.model, round(f.e_inf, 12), f.chi2 < 1e-20
    ('c1/d', 0.7, True)
    """
    pts = sorted(points, key=lambda p: p.d)
    ds = [p.d for p in pts]
    if len(set(ds)) != len(ds):
        raise ICLError(f"the ladder has repeated dimensions: {ds}")
    if len(ds) < 2:
        raise ICLError("a ladder needs at least two dimensions d")
    ses = [p.e_se for p in pts]
    if not all(math.isfinite(s) and s > 0 for s in ses):
        raise ICLError("every point needs a positive finite standard error (at least two seeds per d)")
    means = [p.e_mean for p in pts]
    if model not in ("auto",) + MODELS:
        raise ICLError(f"unknown model {model!r}; expected auto, {', '.join(MODELS)}")
    chosen, name, reason, alts = _choose_model(ds, means, ses, model)
    coef, cov, chi2, dof, p, c = chosen
    V = _per_seed_values(pts)
    jk = None if V is None else _jackknife_coef_se(ds, V, len(coef) - 1, model)
    if jk is not None:
        G = min(len(v) for v in V)
        equal = all(len(v) == G for v in V)
        base_se, nu, method = jk, float(G - 1), "jackknife"
        reason += (
            f"; SE by the delete-one-seed jackknife over {G} seeds "
            if equal
            else f"; SE by the delete-a-group jackknife over {G} seed groups (seeds per d "
            f"{'/'.join(str(len(v)) for v in V)}; seed j in group j mod {G}) "
        ) + f"(weights{' and model choice' if model == 'auto' else ''} redone; Student t with {G - 1} dof)"
    else:
        base_se, method = np.sqrt(np.diag(cov)), "welch"
        nu = welch_dof(c, ses, [p_.n_seeds for p_ in pts])
    infl = 1.0
    if p is not None and p < P_MODEL and dof > 0:
        infl = math.sqrt(chi2 / dof)
        reason += f"; SE inflated by the Birge ratio sqrt(chi2/dof) = {infl:.3g}"
    coef_se = tuple(float(base_se[k] * infl) for k in range(len(coef)))
    return Fit(
        name,
        float(coef[0]),
        coef_se[0],
        tuple(float(x) for x in coef),
        float(chi2),
        int(dof),
        p,
        infl,
        nu,
        reason,
        tuple(alts),
        coef_se,
        method,
    )


def _per_seed_values(pts) -> list | None:
    """The per-seed values of every point (a list of arrays, one per point, lengths may differ),
    when every point has at least three; else None.

    Each point's mean must be the mean of its values (a gap point's values are the
    per-seed gaps): a mismatch is refused rather than silently ignored.
    """
    if any(p.values is None or len(p.values) < 3 for p in pts):
        return None
    V = [np.asarray(p.values, dtype=float) for p in pts]
    for p, row in zip(pts, V):
        if not math.isclose(float(row.mean()), p.e_mean, rel_tol=1e-9, abs_tol=1e-12):
            raise ICLError(
                f"ladder point d = {p.d}: e_mean {p.e_mean!r} is not the mean of its per-seed values "
                f"({float(row.mean())!r})"
            )
    return V


def _jackknife_coef_se(ds, V: list, order: int, model: str = "auto") -> np.ndarray | None:
    """Jackknife SEs of the fit coefficients: seed j left out at every d (equal seed counts), or,
    when the counts differ, seed group g = j mod min(count) left out at every d
    (:func:`icl_symbolic.core.stats.grouped_jackknife_se`); the SEs, the weights and, for
    ``model="auto"``, the model choice redone in every replicate.

    Why the weights: they are estimated from the same seeds as the means, so the
    weighted fit leans on the points whose SE came out small by chance, and
    sqrt(sum c_i^2 SE_i^2) understates the spread of e_inf.  Why the model choice:
    the 1/d^2 model is picked exactly when the noise happens to bend the ladder, and
    those fits extrapolate far off (docs/power.md measures both).  A replicate that
    picks the other model contributes its e_inf and c1 (c2 = 0 for the 1/d model).
    None when a replicate has a point without spread (no weights).
    """

    def coef_of(vs):
        m = np.array([v.mean() for v in vs])
        se = np.array([sample_se(v) for v in vs])
        if not np.all(se > 0):
            return np.full(order + 1, np.nan)
        coef = _choose_model(ds, m, se, model)[0][0]
        return np.concatenate([coef, np.zeros(max(0, order + 1 - len(coef)))])[: order + 1]

    G = min(len(v) for v in V)
    se = grouped_jackknife_se(V, coef_of, G) if G >= 3 else None
    return se if se is not None and np.all(np.isfinite(se)) else None


@dataclass(frozen=True)
class PowerLaw:
    """A weighted power-law fit y = c x^-p of positive ladder values (:func:`fit_power_law`)."""

    c: float
    p: float
    p_se: float
    chi2: float
    dof: int
    n_used: int
    n_dropped: int  # points with y <= 0 (no logarithm), left out
    se_inflation: float = 1.0  # Birge ratio sqrt(chi2/dof) when > 1, already applied to p_se

    def to_json(self) -> dict:
        return {
            "c": float(self.c),
            "p": float(self.p),
            "p_se": float(self.p_se),
            "chi2": float(self.chi2),
            "dof": int(self.dof),
            "n_used": int(self.n_used),
            "n_dropped": int(self.n_dropped),
            "se_inflation": float(self.se_inflation),
            "method": "weighted least squares of log y on log x, weights (y/SE)^2 (1/var of log y); "
            "p_se from the weights, inflated by the Birge ratio sqrt(chi2/dof) when that "
            "exceeds 1 (as fit_ladder does)",
        }


def fit_power_law(points: Sequence[LadderPoint]) -> PowerLaw | None:
    """Fit y(x) = c x^-p to the ladder points (x = ``point.d``, y = ``point.e_mean``) with y > 0.

    Weighted least squares of log y on log x with weights (y/SE)^2, the inverse
    variance of log y to first order; the SE of p is from those weights, inflated
    by the Birge ratio sqrt(chi^2/dof) when the points scatter more than their SEs
    say (the same rule as :func:`fit_ladder`).  Points
    with y <= 0 have no logarithm and are dropped (counted in ``n_dropped``).
    None when fewer than two points remain.  Used for the decay rate of the
    kernel learner's finite-size gap (docs/kernel.md).

    >>> pts = [LadderPoint(x, 18.0 * x ** -0.9, 0.01) for x in (14, 27, 44, 65)]
    >>> f = fit_power_law(pts)
    >>> round(f.c, 9), round(f.p, 12), f.dof
    (18.0, 0.9, 2)
    """
    good = [p for p in points if p.e_mean > 0]
    if len(good) < 2:
        return None
    for p in good:
        if not (math.isfinite(p.e_se) and p.e_se > 0):
            raise ICLError("every point needs a positive finite standard error (at least two seeds per d)")
    x = np.log([float(p.d) for p in good])
    y = np.log([p.e_mean for p in good])
    w = np.array([(p.e_mean / p.e_se) ** 2 for p in good])
    A = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.inv(A.T @ (w[:, None] * A))
    beta = cov @ (A.T @ (w * y))
    chi2 = float(np.sum(w * (y - A @ beta) ** 2))
    dof = len(good) - 2
    infl = math.sqrt(chi2 / dof) if dof > 0 and chi2 > dof else 1.0
    return PowerLaw(
        float(math.exp(beta[0])),
        float(-beta[1]),
        float(math.sqrt(cov[1, 1])) * infl,
        chi2,
        dof,
        len(good),
        len(points) - len(good),
        infl,
    )


def bonferroni_z(false_alarm: float, m: int = 1) -> float:
    """Two-sided normal quantile for a false-alarm budget split over m comparisons.

    >>> round(bonferroni_z(1e-3), 2), round(bonferroni_z(1e-3, 10), 2)
    (3.29, 3.89)
    """
    if not 0 < false_alarm < 1 or m < 1:
        raise ICLError("false-alarm budget must be in (0, 1) and m >= 1")
    return float(stats.norm.isf(false_alarm / (2 * m)))


@dataclass(frozen=True)
class LadderTest:
    """How a ladder's limit is tested: the fit ``model`` (``auto``, ``c1/d``, ``c1/d+c2/d^2``), the
    two-sided false-alarm budget (``false_alarm`` split over ``m`` comparisons by Bonferroni, or a
    claim's normal quantile ``z`` given directly), and the verdict's MDE target ``mde`` (a fraction
    of ``reference``; None: of the compared value).  The z-score is referred to Student t at the dof
    of e_inf's SE (:func:`icl_symbolic.core.stats.t_limit`).

    >>> LadderTest(false_alarm=1e-3, m=10).z_budget == bonferroni_z(1e-3, 10)
    True
    >>> round(LadderTest(z=3.29).false_alarm, 4)
    0.001
    """

    false_alarm: float = 1e-3
    m: int = 1
    model: str = "auto"
    mde: float = DEFAULT_MDE_PCT / 100
    reference: float | None = None
    z: float | None = None

    def __post_init__(self):
        if self.model not in ("auto",) + MODELS:
            raise ICLError(f"unknown model {self.model!r}; expected auto, {', '.join(MODELS)}")
        if not 0 < self.mde <= 1:
            raise ICLError(f"the MDE target must be a fraction in (0, 1], got {self.mde!r}")
        if self.z is None:
            if isinstance(self.m, bool) or int(self.m) != self.m:
                raise ICLError("false-alarm budget must be in (0, 1) and m >= 1")
            bonferroni_z(self.false_alarm, self.m)  # refuses a budget outside (0, 1) or m < 1
        elif not (math.isfinite(self.z) and self.z > 0):
            raise ICLError(f"the z budget must be a positive number, got {self.z!r}")
        else:
            object.__setattr__(self, "false_alarm", float(2 * stats.norm.sf(self.z)))

    @property
    def z_budget(self) -> float:
        """The normal quantile of the budget (before the Student-t limit)."""
        return bonferroni_z(self.false_alarm, self.m) if self.z is None else float(self.z)


#: what an Extrapolation of bare numbers (no Setting) reports as its setting
BARE = types.SimpleNamespace(
    label="",
    d=None,
    alpha=math.nan,
    kappa=math.nan,
    tau=math.nan,
    rho=math.nan,
    lam=0.0,
    C_train="identity",
    C_test="identity",
    features="identity",
    n_test=None,
    tasks="gaussian",
    convention=resolve_convention(),
)


@dataclass(frozen=True)
class Extrapolation(SettingView):
    """Result of :func:`extrapolate`: the ladder, the fit, the theory and the z-score.

    ``setting``: the :class:`~icl_symbolic.model.setting.Setting` of every rung (``d`` None: the
    ladder's dimensions are in ``points``), or None for a ladder given as bare numbers; its
    fields read as attributes too (``res.tau``, ``res.teacher``; ``res.convention`` as a dict)."""

    setting: Setting | None
    points: tuple
    fit: Fit
    e_theory: float | None
    theory_note: str
    z: float | None
    z_limit: float | None
    false_alarm: float
    seconds: float
    estimator: str = "exact"
    extra: dict = field(default_factory=dict)
    error: str = "icl"
    mde_target: float = DEFAULT_MDE_PCT / 100  # the MDE target of the verdict (a fraction)
    reference: float | None = None  # what mde_rel divides by (None: e_theory)
    seconds_per_seed: float | None = None  # one more seed at every d, by the simulator's cost model
    z_budget: float | None = None  # normal quantile of the false-alarm budget (before the Student-t limit)

    def view(self):
        """The stored setting, or for bare numbers the fields of none (teacher "", NaN ratios)."""
        return BARE if self.setting is None else self.setting

    convention = property(lambda self: self.view().convention.to_json(), doc="the convention, as a dict")

    @property
    def holds(self) -> bool | None:
        """|z| within its limit (None: no theory value); the verdict with power is :attr:`judgement`."""
        if self.z is None:
            return None
        return abs(self.z) <= self.z_limit

    @property
    def test(self) -> RowTest | None:
        """e_inf - e_theory against e_inf's SE at its dof, with its power (None: no theory value)."""
        if self.z is None:
            return None
        ref = self.e_theory if self.reference is None else self.reference
        return RowTest(self.fit.e_inf - self.e_theory, self.fit.e_inf_se, self.z_budget, self.fit.e_inf_dof, ref)

    @property
    def judgement(self) -> Verdict | None:
        """The shared verdict (:func:`icl_symbolic.core.verdict.decide`): agrees only when |z| is within its
        limit and the MDE is at most :attr:`mde_target`; the seed advice scales the SE as 1/sqrt(S) and the
        dof as S - 1 (the jackknife over seeds)."""
        t = self.test
        if t is None:
            return None
        n = min((p.n_seeds or 2) for p in self.points)
        return decide(
            [t],
            self.mde_target,
            mde_at=mde_with_seeds([t], n),
            n_seeds=n,
            seconds_per_seed=self.seconds_per_seed,
            unit="seeds per d",
        )

    @property
    def misfit(self) -> str:
        """Why the fitted model does not describe the ladder ('' when it does): its chi^2 p-value is
        below the two-sided false-alarm rate of the test (a model that misses the ladder's shape
        extrapolates to a number nobody should compare)."""
        f, p_min = self.fit, float(2 * stats.norm.sf(self.z_budget)) if self.z_budget else 0.0
        if f.p_value is not None and f.p_value < p_min:
            return f"the fitted model must describe the ladder (chi2 p-value {f.p_value:.2g} < {p_min:.2g})"
        return ""

    def verdict_json(self) -> dict:
        """``status``, ``mde_abs``, ``mde_rel``, ``mde_target`` and the seed advice of :attr:`judgement`
        (``status`` None when there is no theory value to compare with)."""
        j, t = self.judgement, self.test
        if j is None:
            return {"status": None, "mde_abs": None, "mde_rel": None, "mde_target": self.mde_target}
        return {**j.to_json(), "mde_abs": t.to_json()["mde_abs"]}

    def to_json(self) -> dict:
        f = self.fit

        def num(x):
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            **self.setting_items("teacher", "tasks", "error", "convention", *PARAMETERS, "C_train", "C_test"),
            "estimator": self.estimator,
            "e_inf": num(f.e_inf),
            "e_inf_se": num(f.e_inf_se),
            "e_inf_dof": num(f.e_inf_dof),
            "e_inf_se_method": f.se_method,
            "e_theory": num(self.e_theory),
            "theory_note": self.theory_note,
            "z": num(self.z),
            "z_limit": num(self.z_limit),
            "false_alarm": self.false_alarm,
            "holds": self.holds,
            **self.verdict_json(),
            "model": f.model,
            "model_reason": f.reason,
            "coef": [num(c) for c in f.coef],
            "chi2": num(f.chi2),
            "dof": f.dof,
            "p_value": num(f.p_value),
            "se_inflation": num(f.se_inflation),
            "models_considered": [
                {"model": m, "chi2": num(c), "dof": k, "p_value": num(p)} for m, c, k, p in f.alternatives
            ],
            "points": [p.to_json() for p in self.points],
            "seconds": round(self.seconds, 3),
            **self.extra,
        }


def ladder_figure(res: Extrapolation, title: str, axes: LadderAxes | None = None, model: str | None = None):
    """The ladder against 1/d with the fit, its SE band and the compared value (``extrapolate --plot``,
    a claim's ``plot = true``, the kernel learner's gap against 1/D); ``axes``: the names
    (:class:`icl_symbolic.output.plotting.LadderAxes`, None: the ICL error against 1/d); ``model``: the
    fit's name in the legend (None: the fit's own)."""
    f, pts = res.fit, res.points
    return extrapolation_figure(
        title,
        [p.d for p in pts],
        [p.e_mean for p in pts],
        [p.e_se for p in pts],
        FitLine(f.coef, f.e_inf_se, model or f.model),
        res.e_theory,
        min(len(p.seeds) for p in pts),
        axes,
    )


def theory_value(setting: Setting, error: str = "icl", d: int | None = None, digits: int = 30):
    """The d -> infinity theory of ``setting`` (Result 1, Eq. (9), p. 3; Eq. (10) when a1 = 0), with its
    provenance; ``error``: ``icl``, ``idg`` or ``gap`` (docs/idg.md); ``d`` sizes an array covariance;
    ``digits``: the working digits of the theory's quadratures."""
    st = setting
    v = e_nonlinear(st.f, Ratios.of(st), TaskCovariances(st.C_train, st.C_test, d), digits=digits, error=error)
    return float(v.value), (v.note or "theory.e_nonlinear")


def extrapolate(
    points: Sequence[LadderPoint],
    e_theory: float | None = None,
    *,
    test: LadderTest | None = None,
    setting: Setting | None = None,
    error: str = "icl",
    theory_note: str = "",
    seconds: float = 0.0,
    seconds_per_seed: float | None = None,
) -> Extrapolation:
    """Fit a ladder and compare e_inf with ``e_theory``: the one place of the fit, the z test, the
    MDE and the verdict of every ladder (the ``extrapolate`` command, ``verify``'s simulation claims,
    the kernel learner's gap ladder).

    ``test``: a :class:`LadderTest` (the model, the false-alarm budget, the MDE target); the
    normal quantile is converted to Student t at the dof of e_inf's SE.  ``setting``: the
    :class:`Setting` of the ladder (for the output; None for bare numbers), ``error``: ``icl``,
    ``idg`` or ``gap``.  ``seconds_per_seed``: one seed at every rung by the cost model (for the
    verdict's seed advice).
    """
    test = LadderTest() if test is None else test
    fit = fit_ladder(points, test.model)
    z = zl = zb = None
    if e_theory is not None:
        z = (fit.e_inf - e_theory) / fit.e_inf_se
        zb = test.z_budget
        zl = t_limit(zb, fit.e_inf_dof)
    return Extrapolation(
        setting=setting,
        points=tuple(sorted(points, key=lambda p: p.d)),
        fit=fit,
        e_theory=e_theory,
        theory_note=theory_note,
        z=z,
        z_limit=zl,
        false_alarm=test.false_alarm,
        seconds=seconds,
        error=check_error(str(error)),
        mde_target=float(test.mde),
        reference=test.reference,
        seconds_per_seed=seconds_per_seed,
        z_budget=zb,
    )


def check_ladder(ds) -> list[int]:
    out = []
    for d in ds:
        if isinstance(d, bool) or int(d) != d or d < 2:
            raise ICLError(f"every d of the ladder must be an integer >= 2, got {d!r}")
        out.append(int(d))
    if len(set(out)) != len(out) or len(out) < 2:
        raise ICLError(f"the ladder needs at least two distinct dimensions, got {list(ds)}")
    return sorted(out)


def ladder_memory_check(ds, alpha, kappa, tau, n_test: int = 2000) -> None:
    """Refuse (ICLError) before any work when the largest d of the ladder would not fit in memory."""
    check_memory(sizes(max(ds), alpha, kappa, tau), n_test=n_test)


def ladder_estimate(
    ds, alpha, kappa, tau, n_seeds: int, n_test: int = 2000, lam: float = 0.0, jobs: int = 1
) -> Estimate:
    """What a ladder costs before it starts: :func:`icl_symbolic.simulation.simulator.run_estimate`
    of ``n_seeds`` seeds at every d of ``ds`` (the simulator's cost model, ``cost.SECONDS_PER``)."""
    plans = [sized_plan(sizes(int(d), alpha, kappa, tau), n_seeds, n_test, lam) for d in ds]
    return run_estimate(plans, jobs, None, "extrapolate", LADDER_REDUCE)


def run_ladder(
    f,
    ds,
    *,
    seeds=(0, 1, 2, 3),
    error: str = "icl",
    per_seed: bool = False,
    runner: SeedRunner | None = None,
    **loose,
):
    """Simulate every (d, seed) of the ladder (the same seeds at every d) and return the points.

    ``f``: a :class:`~icl_symbolic.model.setting.Setting` (its ``d`` is ignored: the ladder is
    ``ds``), or the teacher with the setting's fields as keywords (``loose``; ``tasks`` sets both
    task laws; ``n_test`` default 2000).  The runs go through ``runner``
    (:class:`icl_symbolic.studies.ladder_runs.SeedRunner`; or one built from the keywords ``jobs``,
    ``scheduler``, ``progress``): every (d, seed) an independent
    :func:`icl_symbolic.simulation.simulator.simulate` run (its random streams depend only on the
    seed) in ``jobs`` worker processes or on a Dask ``scheduler`` (BLAS pinned to one thread per
    run), so the numbers are those of one process.  The per-seed error is
    :func:`icl_symbolic.simulation.simulator.seed_error` (``error``: ``icl`` the exact test functional
    of the trained Gamma, else its Monte-Carlo estimate; ``idg`` the same Gamma on its k pretraining
    tasks; ``gap`` icl - idg per seed); a point is the mean over seeds with SE = std/sqrt(S) and keeps
    the per-seed values (:meth:`LadderPoint.from_values`, so :func:`fit_ladder` uses the jackknife
    over seeds).  ``per_seed=True`` also returns ``{d: [values]}``.
    """
    check_error(error)
    runner = SeedRunner.from_options(loose) if runner is None else runner
    st = ladder_setting(f, **loose)
    ds = check_ladder(ds)
    seeds = tuple(int(s) for s in seeds)
    if len(seeds) < 2:
        raise ICLError("need at least two seeds per d for a standard error")
    rungs = runner.ladder(st, dict.fromkeys(ds, seeds), error)
    points = [LadderPoint.from_values(d, rungs[d].values, seeds, float(rungs[d].seconds)) for d in ds]
    values = {d: [float(v) for v in rungs[d].values] for d in ds}
    return (points, values) if per_seed else points


def ladder_setting(f, tasks=None, **loose) -> Setting:
    """The :class:`Setting` of a ladder (``d`` None; ``n_test`` default 2000): ``f`` a Setting, or the
    teacher with the loose fields; ``tasks`` sets both task laws of its convention."""
    unknown = sorted(set(loose) - set(FIELDS))
    if unknown:
        raise ICLError(f"unknown option(s) {', '.join(unknown)} of a ladder")
    st = as_setting(f, **loose)
    st = st.replace(
        d=None,
        n_test=LADDER_N_TEST if st.n_test is None else st.n_test,
        convention=resolve_convention(st.convention, tasks),
    )
    return st


__all__ = [
    "LadderPoint",
    "LadderTest",
    "Fit",
    "Extrapolation",
    "PowerLaw",
    "fit_ladder",
    "fit_power_law",
    "welch_dof",
    "bonferroni_z",
    "check_ladder",
    "extrapolate",
    "run_ladder",
    "ladder_estimate",
    "LADDER_REDUCE",
    "ladder_setting",
    "ladder_memory_check",
    "theory_value",
    "ladder_figure",
    "P_MODEL",
    "LR_CHI2_1",
    "MODELS",
]
