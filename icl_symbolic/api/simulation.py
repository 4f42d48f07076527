"""Eqs. (1)-(7): the simulation, with its comparison with the theory, and its plot."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icl_symbolic.api._args import MAX_SIM_POINTS, settings_of
from icl_symbolic.api._args import seeds_of as _seeds
from icl_symbolic.core import defaults as D
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.verdict import DEFAULT_MDE_PCT
from icl_symbolic.engine.expr import check_float64, teacher
from icl_symbolic.kernel_learner.simulation import (
    DEFAULT_N_TEST_KERNEL,
    KernelSimResult,
    check_kernel_run,
    kernel_setting,
    simulate_kernel,
)
from icl_symbolic.model.gamma_error import check_teacher
from icl_symbolic.model.setting import CONVENTIONS, PARAMETERS, Convention, Setting, resolve_convention
from icl_symbolic.model.sizes import clamped_sizes
from icl_symbolic.output.display import Quantity, html_table, latex_table, text_table
from icl_symbolic.output.plotting import sweep_figure
from icl_symbolic.output.rows import Rows
from icl_symbolic.simulation.simulator import SimResult, memory_share, seed_seconds, simulate_many
from icl_symbolic.studies.compare import finite_d_verdict, theory_grid, with_theory
from icl_symbolic.theory.finite_d import e_finite_d_many
from icl_symbolic.theory.finite_d_guard import check_finite_d_teacher


@dataclass(frozen=True)
class SimSweep(Rows):
    """Simulations over a grid of (alpha, kappa, tau): ``results`` in grid order."""

    results: tuple

    def __len__(self):
        return len(self.results)

    def __getitem__(self, i) -> SimResult:
        return self.results[i]

    def points(self) -> list[dict]:
        """One row per point: :meth:`SimResult.to_json` (with the comparison with the theory)."""
        return [r.to_json() for r in self.results]

    def to_json(self) -> dict:
        """``{"points": [SimResult.to_json(), ...]}``: the shape of ``simulate --json``."""
        return {"points": self.points()}

    def _rows(self):
        return [
            Quantity(
                f"alpha={r.alpha:g} kappa={r.kappa:g} tau={r.tau:g}",
                f"\\alpha={r.alpha:g},\\ \\kappa={r.kappa:g},\\ \\tau={r.tau:g}",
                r.e if r.e is not None else r.e_mc,
            )
            for r in self.results
        ]

    def _title(self):
        r = self.results[0]
        return f"Simulated ICL error e, f(g) = {r.teacher}, d = {r.d}, rho = {r.rho:g}, {len(r.seeds)} seeds per point"

    def __repr__(self):
        return text_table(self._title(), self._rows(), 6)

    def _repr_html_(self):
        return html_table(self._title(), self._rows(), 6)

    def _repr_latex_(self):
        return latex_table(self._title(), self._rows(), 6)


def simulate(
    f,
    *,
    rho=D.RHO,
    alpha=D.ALPHA,
    kappa=D.KAPPA,
    tau=D.TAU,
    lam=D.LAM,
    d: int = D.D,
    C_train=D.C_TRAIN,
    C_test=None,
    seeds=D.SEEDS,
    seed: int = 0,
    n_test: int | None = None,
    progress=None,
    convention=None,
    tasks: str | None = None,
    features: str | None = None,
    control: str | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    **options,
):
    """Train the reduced linear-attention model on teacher ``f`` and measure its ICL error
    (Sec. 2, Eqs. (1)-(7), p. 2-3).

    ``f`` is the teacher, with the setting's fields as keywords (a list for any of ``alpha, kappa,
    tau`` sweeps their product), or a :class:`~icl_symbolic.model.setting.Setting` (then leave the
    setting keywords at their defaults).  ``seeds`` is a count (seeds ``seed, seed+1, ...``) or a
    list of seeds.  With one point, a :class:`SimResult` (``.e``: exact test functional, mean and SE
    over seeds; ``.e_idg``: the IDG error of the same Gamma on its k pretraining tasks;
    ``.e_mc``: Monte-Carlo test error; ``.e_theory``, ``.z`` and ``.theory`` (with
    ``e_idg_theory``): the comparison with the d -> infinity theory, as ``simulate`` prints
    it; ``.setting``); with a list, a :class:`SimSweep`.  ``convention`` = ``"default"`` |
    ``"letey2024"`` | a dict of the convention fields (docs/conventions.md; ``tasks`` sets both
    task laws).  ``features`` (``identity`` or ``hermite:K``) trains the kernel learner instead
    (docs/kernel.md; alpha, kappa, tau are then ell/D, k/D, n/D^2; ``control``: its Gaussian-input
    controls), giving ``KernelSimResult`` s.  The points' seeds run on ``jobs`` processes or a Dask
    ``scheduler``, the same numbers for any ``jobs``.  ``options`` go to
    :func:`icl_symbolic.simulation.simulator.simulate` (``solver``, ``sampler``, ``exact``, ...).
    """
    kernel = features is not None or (isinstance(f, Setting) and f.features != "identity")
    if control is not None and not kernel:
        raise ICLError("a control needs the kernel learner's features (--control needs --features)")
    check_simulable(f.f if isinstance(f, Setting) else f)
    settings = settings_of(
        f,
        rho=rho,
        alpha=alpha,
        kappa=kappa,
        tau=tau,
        lam=lam,
        d=d,
        C_train=C_train,
        C_test=C_test,
        n_test=n_test,
        convention=convention,
        tasks=tasks,
        **({} if features is None else {"features": features}),
    )
    seeds = _seeds(seeds, seed)
    if kernel:
        results = _simulate_kernel(settings, seeds, control, jobs, scheduler, progress, **options)
    else:
        specs = [dict(f=st, seeds=seeds, **options) for st in settings]
        runs = simulate_many(specs, jobs=jobs, scheduler=scheduler, progress=progress)
        results = tuple(with_theory(r, idg=True) for r in runs)
    swept = any(np.ndim(x) > 0 and not isinstance(x, str) for x in (alpha, kappa, tau))
    return SimSweep(results) if swept else results[0]


def check_simulable(f) -> None:
    """Refuse (ICLError) before anything is computed a teacher the simulator cannot take: not finite in
    float64 arithmetic, or with E[f^4] infinite (poles such as 1/g), as the exact functional needs."""
    t = teacher(f)
    check_float64(t)
    check_teacher(t)


def _simulate_kernel(settings, seeds, control, jobs, scheduler, progress, solver="auto", **options):
    """The kernel learner at every setting (``simulate(features=...)``); every point checked before the first run."""
    if (
        options.get("sampler", "fast") != "fast"
        or not options.get("exact", True)
        or set(options) - {"sampler", "exact"}
    ):
        raise ICLError(
            "the kernel learner (--features) always uses the direct sampler and the query-exact error; "
            "drop --sampler/--no-exact"
        )
    settings = [kernel_setting(st) for st in settings]
    limit = memory_share(None, jobs, len(seeds), scheduler)
    for st in settings:  # every point's sizes and memory, before the first run
        check_kernel_run(st.d, st.alpha, st.kappa, st.tau, st.features, st.n_test, solver, limit)
    return tuple(
        simulate_kernel(
            st, seeds=seeds, control=control, solver=solver, progress=progress, jobs=jobs, scheduler=scheduler
        )
        for st in settings
    )


def check_finite_d_scope(
    *, lam=0.0, C_train=None, C_test=None, convention=None, features=None, f=None, rho=None
) -> None:
    """Refuse (ICLError) a simulation outside the finite-d theory's scope (docs/finite-d.md): identity
    covariances, ridgeless (lam = 0), Gaussian tasks with the default convention, plain attention;
    with ``f`` and ``rho``, also a label law the finite-d terms cannot evaluate
    (:func:`icl_symbolic.theory.finite_d_guard.check_finite_d_teacher`), before any training."""
    if f is not None and rho is not None:
        check_finite_d_teacher(f, [rho])
    why = []
    if float(lam) != 0.0:
        why.append("lam = 0 (ridgeless)")
    if str(C_train or "identity") != "identity" or str(C_test or "identity") != "identity":
        why.append("identity covariances")
    if convention is not None and resolve_convention(convention) != Convention():
        why.append("the default convention (Gaussian tasks, round-robin assignment)")
    if features not in (None, "identity"):
        why.append("plain attention (no --features, no --control)")
    if why:
        raise ICLError(
            "the finite-d theory (--order 1, docs/finite-d.md) covers only "
            + ", ".join(why)
            + ": its terms for a ridge, tasks on the sphere (no task-norm spread) or other conventions are not derived"
        )


def check_finite_d_points(d: int, taus) -> None:
    """Refuse (ICLError), before anything is simulated, a point where the finite-d theory has no value:
    the ridgeless error diverges at the interpolation peak tau = 1 of the d -> infinity limit (Result 1,
    Eq. (9), p. 3) and at n = d(d+1) (the effective tau = 1 of the finite-d terms, docs/finite-d.md).
    ``taus``: the swept pretraining ratios at dimension ``d``."""
    p = int(d) * (int(d) + 1)
    for tau in np.ravel(np.asarray(taus, dtype=float)):
        n = clamped_sizes(int(d), 1.0, 1.0, float(tau)).n  # the finite-d theory's n = round(tau d^2)
        if tau == 1.0 or n == p:
            raise ICLError(
                f"--order 1: the ridgeless error diverges at tau = {tau:g} (d = {d}: n = {n}, "
                f"d(d+1) = {p}): no finite-d value; choose a tau away from 1 (checked before the simulation)"
            )


def finite_d_theory(sim, *, terms=None, jobs: int = 1, scheduler=None, progress=None) -> list:
    """The d -> infinity theory plus its O(1/d) terms (:mod:`icl_symbolic.theory.finite_d`, docs/finite-d.md)
    at each simulated point's own d: one :class:`~icl_symbolic.theory.finite_d.FiniteD` per point (the
    limit, the corrected value with its Monte-Carlo SE, each term), what ``simulate --order 1`` prints.
    Refuses points outside the theory's scope (:func:`check_finite_d_scope`).  ``jobs``/``scheduler``:
    the points in parallel; ``progress``: the time estimate when long, then a line per point."""
    results = list(sim) if isinstance(sim, SimSweep) else [sim]
    if not results or not all(isinstance(r, SimResult) for r in results):
        raise ICLError("finite_d_theory takes a SimResult or a SimSweep (from simulate)")
    for r in results:
        st = r.setting
        check_finite_d_scope(
            lam=st.lam, C_train=st.C_train, C_test=st.C_test, convention=st.convention, f=r.teacher, rho=st.rho
        )
    specs = [
        dict(
            f=r.teacher,
            rho=r.setting.rho,
            alpha=r.setting.alpha,
            kappa=r.setting.kappa,
            tau=r.setting.tau,
            d=r.setting.d,
            terms=terms,
        )
        for r in results
    ]
    return e_finite_d_many(specs, jobs=jobs, scheduler=scheduler, progress=progress, reduce="fewer points, smaller d")


def finite_d_judgement(sim, finite_d, *, mde: float = DEFAULT_MDE_PCT / 100, false_alarm: float = 1e-3):
    """The verdict of simulated points against their finite-d theory (``simulate --order 1``):
    ``(tests, verdict)`` of :func:`icl_symbolic.studies.compare.finite_d_verdict` for ``sim`` (a
    SimResult or SimSweep) and its :func:`finite_d_theory` ``finite_d``; "agrees" only when every
    point is within its limit and every point's MDE is at most ``mde`` (a fraction of the corrected
    value); the seed advice is priced by the simulator's cost model."""
    results = list(sim) if isinstance(sim, SimSweep) else [sim]
    if len(results) != len(finite_d):
        raise ICLError("finite_d_judgement: one finite-d theory per simulated point")
    return finite_d_verdict(
        [r.to_json() for r in results],
        finite_d,
        mde=mde,
        false_alarm=false_alarm,
        seconds_per_seed=sum(seed_seconds(r) for r in results),
    )


def finite_d_fields(fd) -> dict:
    """The JSON fields of one point's finite-d theory (a :class:`~icl_symbolic.theory.finite_d.FiniteD`),
    :meth:`~icl_symbolic.theory.finite_d.FiniteD.json_fields` without ``e_theory`` (a simulated point has
    its own): the corrected value, its Monte-Carlo SE, how it was obtained, the value printed with the
    digits it has (``e_theory_finite_d_text``), the gap and each term with its source."""
    fields = fd.json_fields()
    fields.pop("e_theory")
    return fields


def plot_simulation(sim, *, digits: int = D.DIGITS, finite_d=None):
    """Simulated ICL error (mean +- SE over seeds) of a :class:`SimResult` or :class:`SimSweep`
    against the swept parameter, with the d -> infinity theory on its own dense grid and at the
    simulated points (the plot of ``simulate --plot``; the ridgeless tau = 1 marked as an asymptote).
    ``finite_d``: the :func:`finite_d_theory` of the same points, drawn at the simulated points
    (``simulate --order 1 --plot``)."""
    results = list(sim) if isinstance(sim, SimSweep) else [sim]
    if results and all(isinstance(r, KernelSimResult) for r in results):  # the kernel learner: its own theory
        return sweep_figure([r.to_json() for r in results])
    if not results or not all(isinstance(r, SimResult) for r in results):
        raise ICLError("plot_simulation takes a SimResult or a SimSweep (from simulate)")
    points = [(r if r.theory is not None else with_theory(r, digits)).to_json() for r in results]
    if finite_d is not None:
        if len(finite_d) != len(points):
            raise ICLError("plot_simulation: finite_d must have one entry per simulated point")
        for p, fd in zip(points, finite_d):
            p.update(finite_d_fields(fd))
    return sweep_figure(points, theory_grid(results[0].teacher, points, digits=digits))


__all__ = [
    "simulate",
    "plot_simulation",
    "finite_d_theory",
    "finite_d_fields",
    "finite_d_judgement",
    "check_finite_d_scope",
    "check_finite_d_points",
    "check_simulable",
    "settings_of",
    "SimResult",
    "SimSweep",
    "KernelSimResult",
    "Setting",
    "Convention",
    "CONVENTIONS",
    "resolve_convention",
    "DEFAULT_N_TEST_KERNEL",
    "MAX_SIM_POINTS",
    "PARAMETERS",
]
