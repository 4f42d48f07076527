"""A ladder of simulations in d, extrapolated to d -> infinity and compared with the theory."""

from __future__ import annotations

import time

from icl_symbolic.api._args import seeds_of, settings_of
from icl_symbolic.core import defaults as D
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.verdict import DEFAULT_MDE_PCT
from icl_symbolic.kernel_learner.ladder import KernelExtrapolation, extrapolate_kernel
from icl_symbolic.kernel_learner.simulation import DEFAULT_N_TEST_KERNEL
from icl_symbolic.kernel_learner.theory import parse_features
from icl_symbolic.model.setting import resolve_convention
from icl_symbolic.output.plotting import KERNEL_GAP_AXES
from icl_symbolic.studies.extrapolate import (
    MODELS,
    Extrapolation,
    LadderTest,
    ladder_estimate,
    ladder_figure,
    ladder_memory_check,
    ladder_setting,
    run_ladder,
    theory_value,
)
from icl_symbolic.studies.extrapolate import extrapolate as _fit
from icl_symbolic.studies.ladder_runs import SeedRunner
from icl_symbolic.theory.asymptotic import ERRORS
from icl_symbolic.theory.peak import DIVERGES, is_peak

#: the default ladder of dimensions (the command's --d)
LADDER = (32, 48, 64, 96, 128)


def extrapolate(
    f,
    *,
    d=LADDER,
    rho=D.RHO,
    alpha=D.ALPHA,
    kappa=D.KAPPA,
    tau=D.TAU,
    lam=D.LAM,
    C_train=D.C_TRAIN,
    C_test=None,
    tasks: str | None = None,
    seeds=D.SEEDS,
    seed: int = 0,
    n_test: int | None = None,
    false_alarm: float = 1e-3,
    m: int = 1,
    mde: float = DEFAULT_MDE_PCT / 100,
    model: str = "auto",
    jobs: int = 1,
    scheduler: str | None = None,
    progress=None,
    convention=None,
    error: str = "icl",
    features: str | None = None,
):
    """Simulate teacher ``f`` at every d of the ladder (the same seeds at each), fit
    e(d) = e_inf + c1/d (``model``), and compare e_inf with the d -> infinity theory in SE
    (``z`` within ``z_limit`` at the two-sided ``false_alarm`` budget split over ``m``), with the
    shared verdict (``.judgement``, :mod:`icl_symbolic.core.verdict`): "agrees" only when z is within
    its limit AND the minimum detectable error is at most ``mde`` (a fraction of e_theory; with
    ``features``, of the prediction at the largest D), else "disagrees" or "inconclusive".

    ``f``: the teacher with the setting's fields as keywords, or a
    :class:`~icl_symbolic.model.setting.Setting` (its ``d`` is ignored: the ladder is ``d``).
    ``n_test`` defaults to 20000 test prompts per seed.  ``convention`` (docs/conventions.md;
    ``tasks`` sets both task laws) is the same at every d; ``error``: ``icl``, ``idg`` (the same
    Gamma on its k pretraining tasks) or ``gap`` (docs/idg.md).  ``features="hermite:K"`` runs
    the kernel learner's gap ladder instead (:func:`extrapolate_kernel`; docs/kernel.md) and
    returns its ``KernelExtrapolation``.  The library side of ``icl-symbolic extrapolate``;
    refuses the ridgeless tau = 1 (there is no finite e_inf to extrapolate to; docs/cli.md, "tau = 1").
    """
    (st,) = settings_of(
        f,
        swept=(),
        rho=rho,
        alpha=alpha,
        kappa=kappa,
        tau=tau,
        lam=lam,
        C_train=C_train,
        C_test=C_test,
        n_test=n_test,
        convention=convention,
        tasks=tasks,
        **({} if features is None else {"features": features}),
    )
    if is_peak(st.tau, st.lam):
        raise ICLError(f"tau: {DIVERGES}; there is no finite e_inf to extrapolate to (use lam > 0 or tau != 1)")
    ds = [int(x) for x in d]
    seeds = seeds_of(seeds, seed)
    runner = SeedRunner(jobs, scheduler, progress)
    test = LadderTest(false_alarm, m, model, mde)
    if st.features != "identity":
        if st.convention != resolve_convention() or error != "icl":
            raise ICLError(
                "--features hermite:K runs the default convention and the ICL error only "
                "(drop --convention, the convention options and --error)"
            )
        return extrapolate_kernel(st, ds, seeds=seeds, test=test, runner=runner)
    st = ladder_setting(st.replace(n_test=D.N_TEST if st.n_test is None else st.n_test))
    # everything that can be refused is refused before the first simulation
    e_th, note = theory_value(st, error, d=max(ds))
    ladder_memory_check(ds, st.alpha, st.kappa, st.tau, st.n_test)
    t0 = time.monotonic()
    points = run_ladder(st, ds, seeds=seeds, error=error, runner=runner)
    return _fit(
        points,
        e_th,
        test=test,
        setting=st,
        error=error,
        theory_note=note,
        seconds=time.monotonic() - t0,
        seconds_per_seed=ladder_estimate(ds, st.alpha, st.kappa, st.tau, 1, st.n_test, st.lam or 0.0).seconds,
    )


def plot_extrapolation(res):
    """e(d) against 1/d with the fit and the theory point (the plot of ``extrapolate --plot``); for the
    kernel learner's ladder (``features="hermite:K"``), :func:`plot_kernel_gap`."""
    if isinstance(res, KernelExtrapolation):
        return plot_kernel_gap(res)
    f = res.fit
    title = (
        f"{res.teacher} ({res.error}): alpha={res.alpha:g} kappa={res.kappa:g} tau={res.tau:g} rho={res.rho:g}, "
        f"{res.tasks} tasks, convention {res.convention['name']}; "
        f"e_inf = {f.e_inf:.4g} +- {f.e_inf_se:.2g} vs theory {res.e_theory:.4g} (z = {res.z:+.2f})"
    )
    return ladder_figure(res, title)


def plot_kernel_gap(res):
    """The kernel learner's gap e_sim - e_pred against 1/D with its fit and 0 (``extrapolate --features
    hermite:K --plot``); ``res`` from :func:`extrapolate_kernel`."""
    f = res.gap.core.fit
    title = (
        f"kernel learner ({res.features}; our extension), {res.teacher}: ell/D={res.alpha:g} "
        f"k/D={res.kappa:g} n/D^2={res.tau:g} rho={res.rho:g}; gap_inf = {f.e_inf:.3g} +- {f.e_inf_se:.2g} "
        f"(z = {res.gap.core.z:+.2f})"
    )
    return ladder_figure(
        res.gap.core,
        title,
        KERNEL_GAP_AXES,
        model=res.to_json()["model"],
    )


__all__ = [
    "extrapolate",
    "extrapolate_kernel",
    "plot_extrapolation",
    "plot_kernel_gap",
    "parse_features",
    "Extrapolation",
    "KernelExtrapolation",
    "ERRORS",
    "LADDER",
    "MODELS",
    "DEFAULT_N_TEST_KERNEL",
]
