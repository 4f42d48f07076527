"""Simulating the kernel learner (linear attention on Hermite features) at finite size (our extension).

Model: the paper's reduced linear attention (Sec. 2, Eqs. (1)-(7), p. 2-3) on
the inputs x~ = phi(sqrt(d) x)/sqrt(D) instead of x (:mod:`icl_symbolic.kernel_learner.theory`):
u = (D/ell) sum_i y_i x~_i, s = (1/ell) sum_i y_i^2, y_hat = x~_test^T (A u + s b),
Gamma = [A, b] of size D x (D + 1) fitted by the ridge of Eq. (6) with
regulariser (n/D) lam.  Sizes use the learner's ratios: ell = round(alpha D),
k = round(kappa D), n = round(tau D^2) (:func:`icl_symbolic.simulation.simulator.sizes`
with d replaced by D).  Tasks w ~ N(0, I_d) (Gaussian, the paper's law), drawn
once per seed, round robin over the n prompts; the labels are the teacher's,
y = f(x^T w) + eps, computed from the raw x.

Training reuses :func:`icl_symbolic.simulation.simulator.train` (the direct prompt sampler
with the feature map; Gram or kernel solver).  With ``identity`` features and
the direct sampler this is exactly ``simulate(..., sampler="direct")``: same
draws, same Gamma, same numbers.

Test error, two estimates per seed on ``n_test`` fresh prompts with fresh tasks:

* ``e_query`` (the main one): the squared error averaged EXACTLY over the query
  given the context and the task.  Since E[x~ x~^T] = I/D, E[x~ y | w] =
  theta(w)/sqrt(D) (the exact mode split) and E[y^2 | w] = E_g[f(r g)^2] + rho,
  the per-prompt value is |v|^2/D - 2 v^T theta(w)/sqrt(D) + E[y^2 | w] with
  v = A u + s b; Monte Carlo over contexts and tasks only (SE from their spread).
* ``e_mc``: the plain squared error on one query per prompt (SE), a cross-check.

Controls (``control=``), the same D-dimensional linear problem with Gaussian
inputs x~ ~ N(0, I_D/D) and Gaussian label noise of variance rho_eff
(:func:`icl_symbolic.kernel_learner.theory.kernel_spectrum`):

* ``"features"``: task vectors w~ = sqrt(D) theta(w) of the true task law (for
  K = 2 the quadratic block is a rank-one matrix u u^T: far from Gaussian);
  only the feature non-Gaussianity is removed.
* ``"gaussian"``: task vectors w~ ~ N(0, C~) with the same second moment C~
  (K <= 2): exactly the assumptions of the linear theory, so only its ordinary
  finite-D error remains.

A control's error is |v - w~|^2/D + rho_eff exactly over the query.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from icl_symbolic.core.caches import memoize
from icl_symbolic.core.cost import SECONDS_PER, Estimate
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.parallel import concurrent_runs, resolve_scheduler
from icl_symbolic.core.stats import sample_se
from icl_symbolic.core.values import Value
from icl_symbolic.engine.expr import teacher
from icl_symbolic.kernel_learner.theory import (
    FeatureTransform,
    TeacherBlocks,
    gaussian_task_vectors,
    kernel_curve,
    kernel_spectrum,
    parse_features,
)
from icl_symbolic.model.covariance import resolve_covariance, sample_tasks
from icl_symbolic.model.prompts import sample_prompts
from icl_symbolic.model.setting import FIELDS, Setting, SettingView, as_setting, resolve_convention
from icl_symbolic.simulation.simulator import (
    FitOptions,
    PromptLaw,
    Sizes,
    check_memory,
    check_seeds,
    choose_solver,
    memory_share,
    run_estimate,
    run_seed_tasks,
    seed_mean,
    sized_plan,
    sizes,
    train,
)
from icl_symbolic.studies.ladder_runs import SeedRunner
from icl_symbolic.theory.asymptotic import Ratios
from icl_symbolic.theory.peak import is_peak

__all__ = [
    "KernelSeedRun",
    "KernelSimResult",
    "simulate_kernel",
    "kernel_setting",
    "check_kernel_run",
    "kernel_prediction",
    "kernel_estimate",
    "feature_entries",
    "feature_seconds",
    "DEFAULT_N_TEST_KERNEL",
]

DEFAULT_N_TEST_KERNEL = 4000
CONTROLS = (None, "features", "gaussian")


def _identity(z):
    return z


@dataclass(frozen=True)
class KernelSeedRun:
    seed: int
    e_query: Value
    e_mc: Value
    how: str
    seconds: float


@dataclass(frozen=True)
class KernelSimResult(SettingView):
    """A kernel-learner simulation: its :class:`~icl_symbolic.model.setting.Setting` (``features``
    normalised, ``n_test`` resolved; alpha, kappa, tau are the learner's ratios ell/D, k/D, n/D^2),
    sizes, per-seed runs, means over seeds, and the prediction.  The setting's fields read as
    attributes too (``res.tau``, ``res.teacher`` the teacher's label)."""

    setting: Setting
    control: str | None
    D: int
    ell: int
    k: int
    n: int
    rho_eff: float
    seeds: tuple
    runs: tuple
    e_query: Value
    e_mc: Value
    e_theory: float | None
    seconds: float

    e = property(lambda self: self.e_query, doc="the query-exact error, mean over seeds (as SimResult.e)")

    def points(self) -> list[dict]:
        """``[to_json()]``: the one point of ``simulate --features --json`` for this setting."""
        return [self.to_json()]

    def to_json(self) -> dict:
        def f(x):
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            **self.setting_items("teacher", "features"),
            "control": self.control,
            "d": self.d,
            "D": self.D,
            **self.setting_items(),
            "ell": self.ell,
            "k": self.k,
            "n": self.n,
            "tasks": "gaussian",
            "ratios": "alpha = ell/D, kappa = k/D, tau = n/D^2",
            "seeds": list(self.seeds),
            "n_test": self.n_test,
            "rho_eff": f(self.rho_eff),
            "e_mean": f(self.e_query.value),
            "e_se": f(self.e_query.stderr) if self.e_query.stderr else None,
            "e_mc_mean": f(self.e_mc.value),
            "e_mc_se": f(self.e_mc.stderr) if self.e_mc.stderr else None,
            "e_theory": f(self.e_theory) if self.e_theory is not None else None,
            "per_seed": [
                {
                    "seed": r.seed,
                    "e": f(r.e_query.value),
                    "e_se": f(r.e_query.stderr),
                    "e_mc": f(r.e_mc.value),
                    "e_mc_se": f(r.e_mc.stderr),
                    "solver": r.how,
                    "seconds": round(r.seconds, 3),
                }
                for r in self.runs
            ],
            "seconds": round(self.seconds, 3),
            "method": (
                "e: exact average over the query, Monte Carlo over n_test contexts/tasks per seed; "
                "mean and SE over seeds"
            ),
        }


def _mean_se(x: np.ndarray, seed: int, note: str) -> Value:
    return Value(float(x.mean()), "mc", stderr=float(sample_se(x)), n_samples=int(x.size), seeds=(seed,), note=note)


def kernel_prediction(
    f, features, d: int, alpha: float, kappa: float, tau: float, rho: float, lam: float = 0.0
) -> float | None:
    """The prediction at finite d that :func:`simulate_kernel` compares with (None at tau = 1, lam = 0).

    :func:`icl_symbolic.kernel_learner.theory.kernel_curve` at one point of the learner's ratios, Gaussian
    tasks, the spectrum and rho_eff of dimension d (so it depends on d itself).
    """
    if is_peak(tau, lam):
        return None
    T = teacher(f)
    return float(
        kernel_curve(
            T.expr if T.expr is not None else T,
            parse_features(features),
            Ratios(float(rho), alpha, kappa, tau, lam),
            d=int(d),
            tasks="gaussian",
            plain=False,
        ).columns["e"][0]
    )


def check_kernel_run(
    d: int,
    alpha: float,
    kappa: float,
    tau: float,
    features="hermite:2",
    n_test: int = DEFAULT_N_TEST_KERNEL,
    solver: str = "auto",
    max_memory: int | None = None,
):
    """Refuse (ICLError) before anything is allocated when one seed of the learner at d is invalid or too big.

    Checks d, the sizes (ell, k, n from the learner's ratios), n_test, the solver name, the
    memory of the training run (:func:`icl_symbolic.simulation.simulator.check_memory` with d -> D) and
    the size of the test set.  Returns the :class:`~icl_symbolic.simulation.simulator.Sizes` in D
    (``sz.d`` is D).  :func:`simulate_kernel` calls it; a ladder calls it at its largest d.
    """
    fm = parse_features(features)
    if isinstance(d, bool) or int(d) != d or d < 2:
        raise ICLError(f"d must be an integer >= 2, got {d!r}")
    D = fm.D(int(d))
    sz = sizes(D, alpha, kappa, tau)
    if isinstance(n_test, bool) or int(n_test) != n_test or n_test < 2:
        raise ICLError(f"n_test must be an integer >= 2, got {n_test}")
    n_test = int(n_test)
    choose_solver(sz, solver)
    try:
        check_memory(sz, solver, n_test, max_memory)
    except ICLError as err:  # its sizes are the learner's: say so
        raise ICLError(f"kernel learner at d = {int(d)} ({fm}: D = {D} features; sizes in D): {err}") from None
    if n_test * sz.ell * D > 4e9:
        raise ICLError(
            f"n_test * ell * D = {n_test * sz.ell * D:.3g} feature evaluations for the test set; reduce n_test"
        )
    return sz


#: what shortens a kernel learner's run (the options of ``simulate --features``)
KERNEL_REDUCE = "fewer --seeds, a smaller --d or K of --features hermite:K, a smaller --alpha or --tau"


def feature_entries(sz, n_test: int) -> float:
    """Feature entries one kernel-learner seed computes (sizes ``sz`` in D): every context input of the
    training and test prompts mapped to its D features, (n + n_test) ell D."""
    return float((sz.n + int(n_test)) * sz.ell * sz.d)


def feature_seconds(sz, n_test: int) -> float:
    """Seconds one kernel-learner seed costs on top of the simulator's cost model in D
    (:func:`icl_symbolic.simulation.simulator.seed_cost`): a fixed part and one per
    :func:`feature_entries` (``cost.SECONDS_PER``: ``sim_feature_seed``, ``sim_feature_entry``)."""
    return SECONDS_PER["sim_feature_seed"] + SECONDS_PER["sim_feature_entry"] * feature_entries(sz, n_test)


def kernel_estimate(
    szs, n_seeds: int, n_test: int = DEFAULT_N_TEST_KERNEL, lam: float = 0.0, jobs: int = 1, scheduler=None, what=None
) -> Estimate:
    """What ``n_seeds`` seeds of the kernel learner at each of ``szs`` (its sizes in D, from
    :func:`check_kernel_run`) cost: the simulator's cost model
    (:func:`icl_symbolic.simulation.simulator.run_estimate`) with d -> D, plus the feature maps
    (:func:`feature_seconds`)."""
    szs = list(szs)
    plans = [{**sized_plan(sz, n_seeds, n_test, lam), "extra_seconds": feature_seconds(sz, n_test)} for sz in szs]
    return run_estimate(plans, jobs, scheduler, what or "simulate --features", KERNEL_REDUCE)


@memoize(maxsize=8)
def _setup(f, features: str, d: int, rho: float):
    """The teacher, its exact mode split, the D-dimensional spectrum and the feature map at d
    (computed once per process for a given run: the seeds of a run share them)."""
    fm = parse_features(features)
    T = teacher(f)
    g = T.expr if T.expr is not None else T
    return T, TeacherBlocks(g, fm, d), kernel_spectrum(g, fm, rho, d, "gaussian"), FeatureTransform(fm, d)


@dataclass(frozen=True)
class _KernelSeedTask:
    """One seed of :func:`simulate_kernel` (picklable: sent to worker processes)."""

    f: object
    features: str
    control: str | None
    d: int
    sz: Sizes
    rho: float
    lam: float
    seed: int
    n_test: int
    solver: str
    label: str = ""
    progress: Callable[[str], None] | None = field(default=None, compare=False)


def _run_kernel_seed(task: _KernelSeedTask) -> KernelSeedRun:
    """Train one Gamma (the learner or a control) and test it: the unit of :func:`parallel.map_sweep`."""
    t0 = time.monotonic()
    sz, control, progress, n_test, seed = task.sz, task.control, task.progress, task.n_test, task.seed
    T, blocks, ks, FT = _setup(task.f, task.features, task.d, task.rho)
    D = sz.d
    sqD = math.sqrt(D)
    if progress is not None:
        progress(
            f"{task.label}d={task.d} D={D} ell={sz.ell} k={sz.k} n={sz.n} "
            f"[{f'{control} control' if control else task.features}, {choose_solver(sz, task.solver)}]"
        )
    ss_tasks, ss_train, ss_test_tasks, ss_test = np.random.SeedSequence(seed).spawn(4)
    rng_tasks, rng_test_tasks = np.random.default_rng(ss_tasks), np.random.default_rng(ss_test_tasks)
    if control == "gaussian":
        W = gaussian_task_vectors(ks, sz.k, rng_tasks) / sqD
        theta_test = gaussian_task_vectors(ks, n_test, rng_test_tasks) / sqD
    else:
        cov = resolve_covariance("identity", task.d)
        W = sample_tasks(cov, sz.k, rng_tasks)
        W_test = sample_tasks(cov, n_test, rng_test_tasks)
        theta_test = blocks.theta(W_test)
    if control:
        Gamma, fit_info = train(
            PromptLaw(_identity, sz.ell, ks.rho_eff, "fast"),
            sqD * (W if control == "gaussian" else blocks.theta(W)),
            sz.n,
            np.random.default_rng(ss_train),
            FitOptions(task.lam, task.solver),
            progress=progress,
        )
        P = sample_prompts(
            _identity, sqD * theta_test, sz.ell, ks.rho_eff, np.random.default_rng(ss_test), method="fast"
        )
        power = np.einsum("md,md->m", theta_test, theta_test) + ks.rho_eff
    else:
        Gamma, fit_info = train(
            PromptLaw(T.numpy, sz.ell, task.rho, "direct", features=FT),
            W,
            sz.n,
            np.random.default_rng(ss_train),
            FitOptions(task.lam, task.solver),
            progress=progress,
        )
        P = sample_prompts(
            T.numpy, W_test, sz.ell, task.rho, np.random.default_rng(ss_test), method="direct", features=FT
        )
        power = blocks.label_power(W_test) + task.rho
    A, b = Gamma[:, :D], Gamma[:, D]
    v = P.u @ A.T + P.s[:, None] * b
    e_q = np.einsum("md,md->m", v, v) / D - 2.0 * np.einsum("md,md->m", v, theta_test) / sqD + power
    sq = (np.einsum("md,md->m", P.x_test, v) - P.y_test) ** 2
    return KernelSeedRun(
        seed,
        _mean_se(e_q, seed, "exact over the query, MC over contexts/tasks"),
        _mean_se(sq, seed, "MC test error, one query per prompt"),
        fit_info.solver,
        time.monotonic() - t0,
    )


def kernel_setting(f, **loose) -> Setting:
    """The :class:`Setting` of a kernel-learner run: ``f`` a Setting, or the teacher with the loose fields
    (``features`` default ``hermite:2``, ``n_test`` default :data:`DEFAULT_N_TEST_KERNEL`).  Refused
    (ICLError) unless the setting is one the learner covers: Gaussian tasks in the default convention,
    C_train = C_test = identity."""
    unknown = sorted(set(loose) - set(FIELDS))
    if unknown:
        raise ICLError(f"the kernel learner has no option {', '.join(unknown)}")
    if not isinstance(f, Setting) and loose.get("features") is None:
        loose["features"] = "hermite:2"
    st = as_setting(f, **loose)
    if st.convention != resolve_convention():
        raise ICLError(
            "the kernel learner (--features) simulates the default convention only "
            "(drop --convention, --tasks and the convention options)"
        )
    if st.C_train != "identity" or st.C_test != "identity":
        raise ICLError("the kernel learner (--features) supports isotropic tasks only (--ctrain/--ctest identity)")
    return st if st.n_test is not None else st.replace(n_test=DEFAULT_N_TEST_KERNEL)


#: the options of :func:`simulate_kernel` besides the setting's fields and the runner's, with their defaults
KERNEL_RUN_OPTIONS = {"control": None, "solver": "auto", "theory": True, "max_memory": None}


def simulate_kernel(
    f,
    d: int | None = None,
    alpha: float | None = None,
    kappa: float | None = None,
    tau: float | None = None,
    rho: float | None = None,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    **options,
) -> KernelSimResult:
    """Train and test the kernel learner (or its Gaussian-feature control) on teacher f.

    ``f``: a :class:`~icl_symbolic.model.setting.Setting`, or the teacher with the setting's
    fields as keywords (``features`` default ``hermite:2``, ``lam``, ``n_test`` default
    ``DEFAULT_N_TEST_KERNEL``).  Parameters are those of
    :func:`icl_symbolic.simulation.simulator.simulate` with alpha, kappa,
    tau the learner's ratios ell/D, k/D, n/D^2 (module docstring); ``features`` is
    ``identity`` or ``hermite:K``; tasks are Gaussian, C = I (:func:`kernel_setting`).
    ``options`` besides the setting's fields: ``control`` (None, ``features``, ``gaussian``),
    ``solver``, ``theory`` (True: add the prediction of
    :func:`icl_symbolic.kernel_learner.theory.kernel_curve`, None at tau = 1, lam = 0),
    ``max_memory``, and ``jobs`` / ``scheduler`` / ``progress``: the seeds run through
    :func:`icl_symbolic.core.parallel.map_sweep` (BLAS pinned to one thread per seed, serially too:
    the same numbers for any ``jobs``); the memory check then allows for ``min(jobs, seeds)`` runs at once.
    """
    run = {k: options.pop(k, v) for k, v in KERNEL_RUN_OPTIONS.items()}
    runner = SeedRunner.from_options(options)
    st = kernel_setting(f, d=d, alpha=alpha, kappa=kappa, tau=tau, rho=rho, **options)
    return _simulate_kernel(st, check_seeds(seeds), run, runner)


def _simulate_kernel(st: Setting, seeds: tuple, run: dict, runner: SeedRunner) -> KernelSimResult:
    """:func:`simulate_kernel` of a checked setting (``run``: its :data:`KERNEL_RUN_OPTIONS`)."""
    control, solver, progress, jobs = run["control"], run["solver"], runner.progress, runner.jobs
    fm = parse_features(st.features)
    if control not in CONTROLS:
        raise ICLError(f"unknown control {control!r}; expected one of features, gaussian")
    if control == "gaussian" and fm.K > 2:
        raise ICLError("the all-Gaussian control needs K <= 2")
    address = resolve_scheduler(runner.scheduler)
    sz = check_kernel_run(
        st.d,
        st.alpha,
        st.kappa,
        st.tau,
        fm,
        st.n_test,
        solver,
        memory_share(run["max_memory"], jobs, len(seeds), address),
    )
    d, n_test, rho, lam = st.d, st.n_test, st.rho, st.lam
    T = teacher(st.f)
    spec = st.f if isinstance(st.f, str) else T
    _setup(spec, str(fm), d, rho)  # parse and derive once, before the seeds
    serial = address is None and concurrent_runs(jobs, len(seeds)) == 1
    tasks = [
        _KernelSeedTask(
            spec,
            str(fm),
            control,
            d,
            sz,
            rho,
            lam,
            seed,
            n_test,
            solver,
            f"seed {seed} ({i + 1}/{len(seeds)}): ",
            progress if serial else None,
        )
        for i, seed in enumerate(seeds)
    ]
    est = kernel_estimate([sz], len(seeds), n_test, lam or 0.0, jobs, address, f"simulate --features {fm}")
    runs, seconds = run_seed_tasks(_run_kernel_seed, tasks, est, jobs, address, progress, serial)
    e_query = seed_mean(
        [float(r.e_query) for r in runs], seeds, "query-exact test error of each trained Gamma, mean over seeds"
    )
    e_mc = seed_mean([float(r.e_mc) for r in runs], seeds, f"Monte-Carlo test error ({n_test} prompts/seed)")
    e_th = kernel_prediction(T, fm, d, st.alpha, st.kappa, st.tau, rho, lam) if run["theory"] else None
    ks = _setup(spec, str(fm), d, rho)[2]
    return KernelSimResult(
        st.replace(f=spec),
        control,
        sz.d,
        sz.ell,
        sz.k,
        sz.n,
        ks.rho_eff,
        seeds,
        tuple(runs),
        e_query,
        e_mc,
        e_th,
        seconds,
    )
