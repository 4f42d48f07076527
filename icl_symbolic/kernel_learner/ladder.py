r"""The kernel learner's finite-size gap on a ladder of d, extrapolated to d -> infinity (our extension).

**Our extension, not a result of the paper.**  The kernel learner (linear
attention on Hermite features x~ = phi(sqrt(d) x)/sqrt(D), :mod:`icl_symbolic.kernel_learner.theory`,
docs/kernel.md) has a prediction that itself depends on d: the D-dimensional
linear deterministic equivalent with the block spectrum and rho_eff at that d
(:func:`icl_symbolic.kernel_learner.simulation.kernel_prediction`).  There is no single
d -> infinity number to extrapolate e(d) to, as :mod:`icl_symbolic.studies.extrapolate`
does for plain attention.  What should vanish is the per-seed gap

    gap(d) = e_sim(d) - e_pred(d)

(e_sim: the query-exact test error of one trained Gamma, :func:`simulate_kernel`;
e_pred(d) is deterministic, so the gap's seed-to-seed SE is that of e_sim).

Fit variable: 1/D, D = sum_{m<=K} C(d+m-1, m) the learner's input dimension
(D = d(d+3)/2 for hermite:2).  The learner is linear attention in D dimensions
with D(D+1) parameters, its ratios are ell/D, k/D, n/D^2, and the corrections
of a linear deterministic equivalent are powers of 1/(its dimension); the
measured gap is ~ 18/D at d = 4..12 (docs/kernel.md, "Finite size: a
finding"), which a fit in 1/d would only reach through a large 1/d^2 term.  So

    gap(D) = gap_inf + c1/D   (+ c2/D^2 only when the data need it)

by :func:`icl_symbolic.studies.extrapolate.fit_ladder` (weighted least squares, the same
model choice and Birge inflation; the SE and its dof from the delete-a-group jackknife over
seeds, the smallest seed count per D minus 1, since the kernel ladder keeps its per-seed gaps)
with D as the ladder
variable, and the verdict is the z test of gap_inf against 0
(:func:`icl_symbolic.studies.extrapolate.extrapolate` with e_theory = 0).  The rate is
reported too: a power law gap = c D^-p (:func:`icl_symbolic.studies.extrapolate.fit_power_law`).

What the data support (docs/kernel.md, "Finite size: a finding"): with ten or more
seeds per d the 1/D fit's gap_inf is not 0 and the rate is below 1, so the
claim the project makes is the one :func:`judge_gap_decay` tests: the gap is
resolved and positive at every D of the ladder, and its power-law rate p lies
inside a stated band [rate_min, rate_max] (the whole one-sided Student-t band of
p, not only its centre: a claim cannot hold because its SE is large).

The (d, seed) runs go through the ladder engine's runner
(:meth:`icl_symbolic.studies.ladder_runs.SeedRunner.sweep`: :func:`icl_symbolic.core.parallel.map_sweep`,
``jobs`` processes or a Dask scheduler, BLAS pinned to one thread per run); each seed's
random streams depend only on the seed, so the numbers do not depend on
``jobs``.  Inputs and the memory of ``min(jobs, runs)`` concurrent runs at every
d are checked before anything is computed.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
from scipy import stats

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import seed_mean_se
from icl_symbolic.engine.expr import teacher
from icl_symbolic.kernel_learner.simulation import (
    check_kernel_run,
    kernel_estimate,
    kernel_prediction,
    kernel_setting,
    simulate_kernel,
)
from icl_symbolic.kernel_learner.theory import parse_features
from icl_symbolic.model.setting import Setting, SettingView
from icl_symbolic.simulation.simulator import Sizes, check_seeds, memory_share
from icl_symbolic.studies.extrapolate import (
    Extrapolation,
    LadderPoint,
    LadderTest,
    PowerLaw,
    check_ladder,
    extrapolate,
    fit_power_law,
    welch_dof,
)
from icl_symbolic.studies.ladder_runs import SeedRunner
from icl_symbolic.theory.peak import is_peak

__all__ = [
    "GapPoint",
    "GapFit",
    "GapDecay",
    "KernelExtrapolation",
    "fit_gap",
    "judge_gap_decay",
    "rate_dof",
    "kernel_ladder_check",
    "run_kernel_ladder",
    "extrapolate_kernel",
    "FIT_VARIABLE",
    "POWER",
]

#: The ladder variable of the gap fit (module docstring).
FIT_VARIABLE = "D"
#: The power at which a minimum detectable change is stated (90 %, the project's convention).
POWER = 0.9


def _in_D(text: str) -> str:
    """A fit's model name or reason, written for the gap against D.

    >>> _in_D("e_inf + c1/d rejected; too few dimensions for a 1/d^2 term")
    'gap_inf + c1/D rejected; too few dimensions for a 1/D^2 term'
    """
    return re.sub(r"/d\b", "/D", text.replace("e_inf", "gap_inf"))


@dataclass(frozen=True)
class GapPoint:
    """One d of the ladder: sizes, the per-seed errors, their mean and SE, the prediction, the gap."""

    d: int
    D: int
    ell: int
    k: int
    n: int
    seeds: tuple
    values: tuple  # per-seed query-exact test errors e_sim
    e_pred: float  # kernel_prediction at this d
    seconds: float
    solvers: tuple = ()

    @property
    def e_mean(self) -> float:
        return float(np.mean(self.values))

    @property
    def e_se(self) -> float:
        """Seed-to-seed standard error std/sqrt(S) (S >= 2)."""
        return seed_mean_se(self.values)[1]

    @property
    def gap_mean(self) -> float:
        return self.e_mean - self.e_pred

    def ladder_point(self) -> LadderPoint:
        """The gap as a ladder point in D (the fit variable), with the per-seed gaps (jackknife SE)."""
        return LadderPoint(
            self.D,
            self.gap_mean,
            self.e_se,
            self.seeds,
            self.seconds,
            tuple(float(v) - self.e_pred for v in self.values),
        )

    def to_json(self) -> dict:
        return {
            "d": self.d,
            "D": self.D,
            "ell": self.ell,
            "k": self.k,
            "n": self.n,
            "e_mean": self.e_mean,
            "e_se": self.e_se,
            "e_pred": self.e_pred,
            "gap_mean": self.gap_mean,
            "gap_se": self.e_se,
            "gap_rel": self.gap_mean / self.e_pred,
            "seeds": [int(s) for s in self.seeds],
            "per_seed_e": [float(v) for v in self.values],
            "solvers": list(self.solvers),
            "seconds": round(float(self.seconds), 3),
        }


@dataclass(frozen=True)
class GapFit:
    """The gap against D: the weighted fit and z test (``core``) and the power law."""

    core: Extrapolation  # fit_ladder in D; e_theory = 0, so z = gap_inf / SE
    power_law: PowerLaw | None

    @property
    def holds(self) -> bool | None:
        return self.core.holds

    def to_json(self) -> dict:
        f, c = self.core.fit, self.core

        def num(x):
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            "variable": FIT_VARIABLE,
            "model": "gap_inf + " + _in_D(f.model).replace("+", " + "),
            "model_reason": _in_D(f.reason),
            "gap_inf": num(f.e_inf),
            "gap_inf_se": num(f.e_inf_se),
            "gap_inf_dof": num(f.e_inf_dof),
            "coef": [num(x) for x in f.coef],
            "coef_se": [num(x) for x in f.coef_se],
            "chi2": num(f.chi2),
            "dof": f.dof,
            "p_value": num(f.p_value),
            "se_inflation": num(f.se_inflation),
            "models_considered": [
                {"model": _in_D(m), "chi2": num(ch), "dof": k, "p_value": num(p)} for m, ch, k, p in f.alternatives
            ],
            "z": num(c.z),
            "z_limit": num(c.z_limit),
            "false_alarm": c.false_alarm,
            "holds": c.holds,
            **c.verdict_json(),
            "mde_reference": "the prediction e_pred at the largest D",
            "power_law": None if self.power_law is None else self.power_law.to_json(),
        }


def fit_gap(
    points: Sequence[LadderPoint],
    test: LadderTest | None = None,
    *,
    reference: float | None = None,
    seconds_per_seed: float | None = None,
) -> GapFit:
    """Fit gaps given as ladder points in D (``point.d`` = D, ``e_mean`` = gap, ``e_se`` its SE).

    gap_inf + c1/D (+ c2/D^2) and the z test of gap_inf against 0 by the ladder engine
    (:func:`~icl_symbolic.studies.extrapolate.extrapolate` with e_theory = 0; ``test`` a
    :class:`~icl_symbolic.studies.extrapolate.LadderTest`: the model, the two-sided false-alarm
    budget, Student t at the dof of the fit's SE: the delete-a-group jackknife's, the smallest seed
    count per D minus 1, when the points carry per-seed values; the Welch-Satterthwaite dof only for
    points without them), and the power law c D^-p of the positive gaps.
    The verdict (``core.judgement``) states the
    minimum detectable gap_inf relative to ``reference`` (the prediction at the largest D, from
    :func:`extrapolate_kernel`; None: no relative scale, so never "agrees") against the test's MDE target.

    >>> pts = [LadderPoint(D, 18.0 / D, 0.01, (0, 1, 2)) for D in (14, 27, 44, 65)]
    >>> g = fit_gap(pts)
    >>> round(g.core.fit.coef[1], 9), abs(g.core.fit.e_inf) < 1e-12, g.holds, round(g.power_law.p, 9)
    (18.0, True, True, 1.0)
    """
    test = replace(LadderTest() if test is None else test, reference=0.0 if reference is None else reference)
    core = extrapolate(
        points,
        0.0,
        test=test,
        theory_note="the gap e_sim - e_pred must vanish as D -> infinity",
        seconds_per_seed=seconds_per_seed,
    )
    return GapFit(core, fit_power_law(points))


def rate_dof(points: Sequence[LadderPoint]) -> float:
    """Welch-Satterthwaite dof of the power-law rate p of :func:`~icl_symbolic.studies.extrapolate.fit_power_law`.

    p is a linear combination sum_i c_i log(gap_i) (weighted least squares, weights
    w_i = (gap_i/SE_i)^2), and SE(log gap_i) = SE_i/gap_i is estimated from the
    point's seeds, so p's SE has the Welch dof of those terms (0 when a point has
    fewer than two seeds).  Only positive gaps enter, as in the fit.

    >>> two = [LadderPoint(D, 18.0 / D, 0.01 / D, tuple(range(10))) for D in (14, 65)]
    >>> round(rate_dof(two), 9)     # two points, equal weights: 9 + 9 dof
    18.0
    """
    good = [p for p in points if p.e_mean > 0]
    x = np.log([float(p.d) for p in good])
    w = np.array([(p.e_mean / p.e_se) ** 2 for p in good])
    xc = x - np.sum(w * x) / np.sum(w)
    c = -w * xc / np.sum(w * xc**2)
    return welch_dof(c, [p.e_se / p.e_mean for p in good], [p.n_seeds for p in good])


def _t_one_sided(z: float, dof: float) -> float:
    """The one-sided Student-t quantile with the same tail as normal ``z`` (``z`` itself at infinite dof)."""
    if not math.isfinite(dof) or dof >= 1000:
        return float(z)
    if dof <= 0:
        return math.inf
    return float(stats.t.isf(stats.norm.sf(z), dof))


@dataclass(frozen=True)
class GapDecay:
    """The verdict of :func:`judge_gap_decay` and what it rests on."""

    rate_min: float
    rate_max: float
    z: float  # one-sided normal quantile of each part's false alarm
    resolved: tuple  # per point: (D, gap, SE, seeds, Student-t limit, gap - t SE > 0)
    power_law: PowerLaw | None
    dof: float  # Welch dof of p
    t_rate: float  # one-sided Student-t limit of p's band at that dof
    why: tuple  # reasons it fails ('' entries never)
    mde_rate: float  # smallest change of p caught with POWER: (t_rate + t_POWER) * p_se
    shift: tuple  # (lower, higher): smallest constant shift of e_pred that fails with these data

    @property
    def holds(self) -> bool:
        return not self.why

    @property
    def band(self) -> tuple:
        """p - t SE, p + t SE (the one-sided bands at the claim's z)."""
        pl = self.power_law
        return (pl.p - self.t_rate * pl.p_se, pl.p + self.t_rate * pl.p_se) if pl else (math.nan, math.nan)

    def mde_note(self) -> str:
        pl = self.power_law
        if pl is None:
            return "no power law could be fitted"
        lo, hi = self.shift
        return (
            f"rate p = {pl.p:.3f} +- {pl.p_se:.2g} (Welch dof {self.dof:.1f}); a true rate outside "
            f"[{self.rate_min:g}, {self.rate_max:g}] holds with probability <= {stats.norm.sf(self.z):.1g} at "
            f"the edge; the ladder tells rates {self.mde_rate:.3f} apart with {POWER:.0%} power at the measured "
            f"SE ((t {self.t_rate:.3g} + t_{POWER:g}) x SE); with these data a prediction lower by "
            f"{lo:.3g} or higher by {hi:.3g} (a constant at every D) would fail the claim"
        )


def _decay_parts(points: Sequence[LadderPoint], rate_min: float, rate_max: float, z: float):
    """(resolved rows, power law, dof, t_rate, reasons) of :func:`judge_gap_decay`."""
    why, rows = [], []
    for q in points:
        t = _t_one_sided(z, q.n_seeds - 1 if q.n_seeds else math.inf)
        ok = q.e_mean - t * q.e_se > 0
        rows.append((q.d, q.e_mean, q.e_se, q.n_seeds, t, ok))
        if not ok:
            why.append(f"the gap at D = {q.d} is not resolved above 0 ({q.e_mean:.3g} - {t:.3g} x {q.e_se:.2g})")
    pl = fit_power_law(points)
    if pl is None:
        return rows, None, 0.0, math.inf, why + ["no power law could be fitted (fewer than two positive gaps)"]
    dof = rate_dof(points)
    t = _t_one_sided(z, dof)
    lo, hi = pl.p - t * pl.p_se, pl.p + t * pl.p_se
    if not lo > rate_min:
        why.append(f"the rate's lower band p - {t:.3g} SE = {lo:.3f} is not above {rate_min:g}")
    if not hi < rate_max:
        why.append(f"the rate's upper band p + {t:.3g} SE = {hi:.3f} is not below {rate_max:g}")
    return rows, pl, dof, t, why


def _shift_to_fail(points, rate_min, rate_max, z, sign: int) -> float:
    """Smallest constant delta > 0 with which gap + sign*delta (the prediction moved by -sign*delta)
    fails :func:`judge_gap_decay`, by bisection (inf if none up to 10 x the largest gap)."""

    def fails(delta):
        moved = [LadderPoint(q.d, q.e_mean + sign * delta, q.e_se, q.seeds) for q in points]
        return bool(_decay_parts(moved, rate_min, rate_max, z)[4])

    hi = 10 * max(abs(q.e_mean) for q in points)
    if fails(0.0):
        return 0.0
    if not fails(hi):
        return math.inf
    lo = 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if fails(mid) else (mid, hi)
    return hi


def judge_gap_decay(points: Sequence[LadderPoint], rate_min: float, rate_max: float, z: float = 3.09) -> GapDecay:
    """Test "the gap is resolved and positive at every D, and decays like D^-p with rate_min < p < rate_max".

    ``points``: gaps as ladder points in D (:meth:`GapPoint.ladder_point`).  Each part is a
    one-sided test at normal quantile ``z`` as Student t (a point at its seeds - 1 dof; the
    rate at its Welch dof, :func:`rate_dof`): gap - t SE > 0 at every D, p - t SE > rate_min
    and p + t SE < rate_max, p from :func:`~icl_symbolic.studies.extrapolate.fit_power_law` (SE
    Birge-inflated when the points scatter more than their SEs).  The claim holds only when
    every part does, so if it is false it holds wrongly with at most the probability of one
    part, sf(z) (intersection-union test).  A large SE makes it fail, never hold.

    >>> pts = [LadderPoint(D, 20.0 * D ** -0.85, 0.002, tuple(range(10))) for D in (14, 27, 44, 65)]
    >>> g = judge_gap_decay(pts, 0.7, 0.95)
    >>> g.holds, round(g.power_law.p, 6), judge_gap_decay(pts, 0.9, 1.1).holds
    (True, 0.85, False)
    """
    if not rate_min < rate_max:
        raise ICLError(f"the rate band needs rate_min < rate_max, got [{rate_min}, {rate_max}]")
    rows, pl, dof, t, why = _decay_parts(points, rate_min, rate_max, z)
    mde = (t + _t_one_sided(stats.norm.isf(1 - POWER), dof)) * pl.p_se if pl else math.inf
    shift = tuple(_shift_to_fail(points, rate_min, rate_max, z, s) for s in (+1, -1))
    return GapDecay(
        float(rate_min), float(rate_max), float(z), tuple(rows), pl, float(dof), float(t), tuple(why), float(mde), shift
    )


def kernel_ladder_check(
    setting: Setting, ds, n_seeds: int = 2, *, runner: SeedRunner | None = None, max_memory: int | None = None
) -> dict:
    """Refuse (ICLError) before any work: the ladder, the sizes and the memory of the runs at every d.

    ``setting``: the learner's (``features``, its ratios, ``n_test``).  ``min(jobs, runs)`` runs of
    ``runner`` go at once on this machine (one when a Dask scheduler runs them elsewhere), so each
    gets that share of the memory limit.  Every d is checked, not only the largest: the memory is not
    monotone in D where the solver changes (dense Gram at small D, matrix-free CG above).
    Returns ``{d: Sizes in D}`` in ladder order.
    """
    st, runner = setting, SeedRunner() if runner is None else runner
    ds = check_ladder(ds)
    limit = memory_share(max_memory, runner.jobs, len(ds) * int(n_seeds), runner.scheduler)
    fm = parse_features(st.features)
    return {d: check_kernel_run(d, st.alpha, st.kappa, st.tau, fm, st.n_test, "auto", limit) for d in ds}


def _one_item(item):
    """One seed at one d (the unit of :func:`parallel.map_sweep`): (e_query, solver path, seconds)."""
    st, seed, max_memory = item
    r = simulate_kernel(st, seeds=(seed,), theory=False, max_memory=max_memory)
    run = r.runs[0]
    return float(run.e_query), run.how, float(run.seconds)


def run_kernel_ladder(
    f,
    ds,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    runner: SeedRunner | None = None,
    max_memory: int | None = None,
    **loose,
) -> list[GapPoint]:
    """Simulate the kernel learner at every (d, seed) (the same seeds at every d) and return the points.

    ``f``: a :class:`~icl_symbolic.model.setting.Setting` (its ``d`` is ignored: the ladder is ``ds``)
    or the teacher with the setting's fields as keywords
    (:func:`~icl_symbolic.kernel_learner.simulation.kernel_setting`).  The runs go through ``runner``
    (:class:`~icl_symbolic.studies.ladder_runs.SeedRunner`, or one built from the keywords ``jobs``,
    ``scheduler``, ``progress``), each ``simulate_kernel(setting at d, seeds=(seed,))`` (query-exact
    test error, ``n_test`` fresh prompts); the prediction e_pred(d) is computed first, for every d
    (so a teacher the theory cannot handle is refused before any simulation).
    """
    runner = SeedRunner.from_options(loose) if runner is None else runner
    st = kernel_setting(f, **loose).replace(d=None)
    fm = parse_features(st.features)
    if fm.is_identity:
        raise ICLError(
            "identity features are plain attention: use the plain ladder "
            "(icl_symbolic.studies.extrapolate.run_ladder), whose e(d) has a d -> infinity limit"
        )
    seeds = check_seeds(seeds)
    if len(seeds) < 2:
        raise ICLError(f"need at least two seeds per d for a standard error, got {seeds}")
    if is_peak(st.tau, st.lam):
        raise ICLError("tau = 1 with lam = 0 is the interpolation peak: the prediction diverges there")
    szs = kernel_ladder_check(st, ds, len(seeds), runner=runner, max_memory=max_memory)
    ds = list(szs)
    T = teacher(st.f)
    preds = {d: kernel_prediction(T, fm, d, st.alpha, st.kappa, st.tau, st.rho, st.lam) for d in ds}
    st = st.replace(f=st.f if isinstance(st.f, str) else T)
    pairs = [(d, s) for d in ds for s in seeds]
    est = kernel_estimate(
        szs.values(),
        len(seeds),
        st.n_test,
        st.lam or 0.0,
        runner.jobs,
        runner.scheduler,
        f"extrapolate --features {fm}",
    )
    out = runner.sweep(
        _one_item,
        [(st.replace(d=d), s, max_memory) for d, s in pairs],
        est,
        note=f"{len(pairs)} kernel-learner runs (d x seeds), {fm}, on {runner.jobs} worker(s)",
    )
    points = []
    for d in ds:
        rows = [o for (dd, _), o in zip(pairs, out) if dd == d]
        sz = szs[d]
        points.append(
            GapPoint(
                d,
                sz.d,
                sz.ell,
                sz.k,
                sz.n,
                seeds,
                tuple(r[0] for r in rows),
                preds[d],
                float(sum(r[2] for r in rows)),
                tuple(r[1] for r in rows),
            )
        )
    return points


@dataclass(frozen=True)
class KernelExtrapolation(SettingView):
    """Result of :func:`extrapolate_kernel`: the ladder of gaps, their fit against D and the verdict.
    ``setting``: the :class:`~icl_symbolic.model.setting.Setting` of every rung (``d`` None); its
    fields read as attributes too (``res.tau``, ``res.teacher`` the teacher's label)."""

    setting: Setting
    points: tuple
    gap: GapFit
    seconds: float

    @property
    def holds(self) -> bool | None:
        """gap_inf consistent with 0 within the z limit."""
        return self.gap.holds

    def to_json(self) -> dict:
        return {
            **self.setting_items("teacher", "features"),
            "tasks": "gaussian",
            **self.setting_items(),
            "ratios": "alpha = ell/D, kappa = k/D, tau = n/D^2 (the learner's own)",
            "n_test": self.n_test,
            "extension": "kernel learner: our extension, not the paper's (docs/kernel.md)",
            "quantity": "per-seed gap e_sim(d) - e_pred(d); e_sim query-exact (Monte Carlo over n_test "
            "contexts/tasks), e_pred = kernel_curve at the same d; mean and SE over seeds",
            **self.gap.to_json(),
            "points": [p.to_json() for p in self.points],
            "seconds": round(self.seconds, 3),
        }


def extrapolate_kernel(
    f,
    ds,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    test: LadderTest | None = None,
    runner: SeedRunner | None = None,
    max_memory: int | None = None,
    **loose,
) -> KernelExtrapolation:
    """Run the ladder (:func:`run_kernel_ladder`; ``f`` a Setting or the teacher with the setting's
    fields, ``runner`` or the keywords ``jobs``, ``scheduler``, ``progress``) and fit its gaps against D
    (:func:`fit_gap`; ``test`` the model, false-alarm budget and MDE target, ``model`` with d standing
    for D)."""
    test = LadderTest() if test is None else test
    if test.model == "c1/d+c2/d^2" and len(set(ds)) < 3:
        raise ICLError("the 1/D^2 model needs at least three dimensions")
    runner = SeedRunner.from_options(loose) if runner is None else runner
    st = kernel_setting(f, **loose).replace(d=None)
    t0 = time.monotonic()
    pts = run_kernel_ladder(st, ds, seeds=seeds, runner=runner, max_memory=max_memory)
    top = max(pts, key=lambda p: p.D)
    one_seed = kernel_estimate([Sizes(p.D, p.ell, p.k, p.n) for p in pts], 1, st.n_test, st.lam or 0.0).seconds
    gap = fit_gap([p.ladder_point() for p in pts], test, reference=top.e_pred, seconds_per_seed=one_seed)
    return KernelExtrapolation(st, tuple(pts), gap, time.monotonic() - t0)
