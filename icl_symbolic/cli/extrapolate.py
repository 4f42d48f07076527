"""``icl-symbolic extrapolate``: simulations on a ladder of d, fitted in 1/d, against the theory.

    icl-symbolic extrapolate "sin(g)" --d 32,48,64,96,128 --alpha 2 --kappa 2 --tau 2 --rho 0.1 --seeds 4 --json

A thin layer over :func:`icl_symbolic.api.extrapolation.extrapolate` (the ladder of
simulations, the fit, the model choice, the z-score: :mod:`icl_symbolic.studies.extrapolate`).  ``--json`` prints one object
with ``e_inf``, ``e_inf_se``, ``e_theory``, ``z``, ``z_limit``, ``holds`` (|z| within the
limit), ``status`` (the verdict: agrees, disagrees, inconclusive), ``mde_abs``, ``mde_rel``
(a fraction of e_theory), ``mde_target``, ``seeds_to_target``, ``seconds_to_target``, ``model``, ``model_reason``, ``chi2``, ``dof``, ``tasks``, ``points``
(``[{d, e_mean, e_se, seeds, seconds}]``) and the inputs.

``--features hermite:K`` (the kernel learner, our extension; docs/kernel.md) runs
:func:`icl_symbolic.kernel_learner.ladder.extrapolate_kernel` instead (through the same API function): the per-seed gap
e_sim(d) - e_pred(d) fitted against 1/D, gap_inf tested against 0; ``--json``
then has ``gap_inf``, ``gap_inf_se``, ``z``, ``z_limit``, ``holds``, ``status``, ``mde_rel`` (a
fraction of the prediction at the largest D), ``mde_target``, ``model``,
``power_law`` and ``points`` (``[{d, D, e_mean, e_se, e_pred, gap_mean, gap_se, ...}]``).
``--features identity`` is plain attention: exactly the command without ``--features``.
"""

from __future__ import annotations

import argparse

from icl_symbolic.api.extrapolation import (
    DEFAULT_N_TEST_KERNEL,
    ERRORS,
    MODELS,
    extrapolate,
    parse_features,
    plot_extrapolation,
)
from icl_symbolic.cli._args import (
    CONVENTION_COLUMNS,
    MAX_D,
    MAX_N_TEST,
    MAX_SEEDS,
    ICLError,
    add_convention_options,
    add_output_options,
    add_parallel_options,
    check_output_paths,
    convention_row,
    defaults,
    document,
    emit_json,
    epilog,
    parse_convention,
    parse_int,
    parse_number,
    parse_parallel,
    parse_parameter,
    progress_printer,
    save_figure,
    split_list,
    write_csv,
)
from icl_symbolic.cli._verdict import DEFAULT_MDE_PCT, exit_text, mde_help, parse_mde, pct

EPILOG = epilog(
    exit_text(rows="e_inf (with --features hermite:K: gap_inf against 0)", one="it is"),
    [
        'icl-symbolic extrapolate "sin(g)" --d 32,48,64,96,128 --alpha 2 --kappa 2 --tau 2 --rho 0.1 --seeds 4 --json',
        'icl-symbolic extrapolate "(g^2-1)/sqrt(2)" --d 16,24,32,48 --tasks sphere --plot e.png',
        'icl-symbolic extrapolate "g + (g^2-1)/sqrt(2)" --features hermite:2 --d 4,6,8,10 --alpha 16 --kappa 2 '
        "--tau 4 --rho 0.1 --seeds 3",
    ],
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "extrapolate",
        help="simulate on a ladder of d and extrapolate the ICL error to d -> infinity",
        description="Simulate the model of Eqs. (1)-(7) at several d with the same seeds, fit "
        "e(d) = e_inf + c1/d (+ c2/d^2 when the data need it) weighted by the per-d "
        "standard errors, and compare e_inf with the d -> infinity theory (Result 1, "
        "Eq. (9); Eq. (10) when a1 = 0) in standard errors. The verdict says 'agrees' only when |z| is "
        "within its limit AND the minimum detectable error (MDE, 90 % power, in % of e_theory) is at most "
        "--mde (default 5 %); else 'DISAGREES' or 'inconclusive' with the seeds per d that would reach the "
        "target and their estimated time.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("f", metavar="EXPR", help='teacher f(g), e.g. "sin(g)", "(g^2-1)/sqrt(2)"')
    p.add_argument("--d", default="32,48,64,96,128", help="the ladder of dimensions, a,b,c")
    p.add_argument("--alpha", default=str(defaults.ALPHA), help="context ratio ell/d")
    p.add_argument("--kappa", default=str(defaults.KAPPA), help="task diversity k/d")
    p.add_argument("--tau", default=str(defaults.TAU), help="pretraining ratio n/d^2")
    p.add_argument("--rho", default=defaults.RHO, help="noise variance rho")
    p.add_argument("--lam", default=str(defaults.LAM), help="ridge lambda, regulariser (n/d) lam (0: min-norm)")
    p.add_argument("--seeds", default=str(defaults.SEEDS), help="seeds per d (the same seeds at every d)")
    p.add_argument("--seed", default="0", help="first seed (seeds are seed, seed+1, ...)")
    p.add_argument(
        "--tasks",
        default=None,
        choices=("gaussian", "sphere"),
        help="task law of training and test tasks: gaussian w ~ N(0, C) (the paper's; default) or "
        "sphere (|w|^2 = tr C)",
    )
    p.add_argument(
        "--error",
        default="icl",
        choices=ERRORS,
        help="which error is extrapolated: icl (fresh test tasks; default), idg (the same Gamma on its "
        "k pretraining tasks), gap (icl - idg per seed); docs/idg.md",
    )
    add_convention_options(p)
    p.add_argument(
        "--ctrain",
        dest="C_train",
        default="identity",
        help="task covariance (identity, powerlaw:p, spiked:f:r, lowrank:r, or a .npy file)",
    )
    p.add_argument("--ctest", dest="C_test", default=None, help="test task covariance (default: --ctrain)")
    p.add_argument(
        "--n-test",
        default=None,
        help=f"Monte-Carlo test prompts per seed (default {defaults.N_TEST}; {DEFAULT_N_TEST_KERNEL} with --features)",
    )
    p.add_argument(
        "--features",
        default=None,
        help="identity (= plain attention, the default) or hermite:K (K <= 3): the kernel learner "
        "(our extension, docs/kernel.md); --alpha, --kappa, --tau are then ell/D, k/D, n/D^2 "
        "and the per-seed gap to the prediction at each d is fitted against 1/D and tested "
        "against 0 (Gaussian tasks, C = I; in --model, d stands for D)",
    )
    p.add_argument(
        "--model",
        default="auto",
        choices=("auto",) + MODELS,
        help="fit model: auto adds the 1/d^2 term only when the data need it",
    )
    p.add_argument("--false-alarm", default="1e-3", help="two-sided false-alarm budget of the z test")
    p.add_argument("--m", default="1", help="number of comparisons the budget is split over (Bonferroni)")
    p.add_argument("--mde", default=f"{DEFAULT_MDE_PCT:g}", help=mde_help(DEFAULT_MDE_PCT))
    add_parallel_options(p, "the (d, seed) runs")
    add_output_options(
        p,
        csv="write the ladder points (d, e_mean, e_se, seeds; with --features also D, e_pred, gap_mean, gap_se) as CSV",
        plot="plot e against 1/d with the fit and the theory point (with --features: the gap "
        "against 1/D with its fit and 0)",
    )
    p.set_defaults(func=run)


def _one(text, name):
    vals = parse_parameter(text, name)
    if vals.size != 1:
        raise ICLError(f"--{name}: expected one value (extrapolate runs one setting), got {text!r}")
    return float(vals[0])


def run(args) -> int:
    ds = [parse_int(x, "d", 2, MAX_D) for x in split_list(args.d, "d")]
    if len(set(ds)) < 2 or len(set(ds)) != len(ds):
        raise ICLError(f"--d: expected at least two distinct dimensions, got {args.d!r}")
    alpha, kappa, tau = _one(args.alpha, "alpha"), _one(args.kappa, "kappa"), _one(args.tau, "tau")
    rho, lam = _one(args.rho, "rho"), _one(args.lam, "lam")
    n_seeds, seed0 = parse_int(args.seeds, "seeds", 2, MAX_SEEDS), parse_int(args.seed, "seed", 0)
    fm = parse_features(args.features) if args.features is not None else None
    kernel = fm is not None and not fm.is_identity
    n_test_default = str(DEFAULT_N_TEST_KERNEL) if kernel else str(defaults.N_TEST)
    n_test = parse_int(args.n_test if args.n_test is not None else n_test_default, "n-test", 2, MAX_N_TEST)
    (jobs, scheduler), m = parse_parallel(args), parse_int(args.m, "m", 1)
    fa = parse_number(args.false_alarm, "false-alarm")
    if not 0 < fa < 1:
        raise ICLError("--false-alarm must be in (0, 1)")
    convention = parse_convention(args)
    target = parse_mde(args.mde)
    check_output_paths(args)
    res = extrapolate(
        args.f,
        d=ds,
        rho=rho,
        alpha=alpha,
        kappa=kappa,
        tau=tau,
        lam=lam,
        C_train=args.C_train,
        C_test=args.C_test,
        seeds=n_seeds,
        seed=seed0,
        n_test=n_test,
        false_alarm=fa,
        m=m,
        mde=target,
        model=args.model,
        jobs=jobs,
        scheduler=scheduler,
        progress=progress_printer(args.quiet),
        convention=convention,
        error=args.error,
        features=None if fm is None or fm.is_identity else str(fm),
    )
    js = res.to_json()
    points = js.pop("points")
    doc = document("extrapolate", points, **js)
    if args.csv:
        write_csv(args.csv, *(_kernel_csv(res) if kernel else _csv(res)))
    if args.plot:
        save_figure(plot_extrapolation(res), args.plot)
    emit_json(args, doc)
    if not args.json:
        if kernel:
            _print_kernel(res, js)
        else:
            _print(res)
    return _judgement(res).exit_code


def _judgement(res):
    return res.gap.core.judgement if hasattr(res, "gap") else res.judgement


def _verdict_line(res, agree: str, disagree: str) -> str:
    """The shared verdict sentence (core.verdict) for the one compared value, with its MDE."""
    j = _judgement(res)
    t = (res.gap.core if hasattr(res, "gap") else res).test
    head = f"MDE {t.mde_abs:.3g} = {pct(t.mde_rel)} (90 % power): "
    return head + j.sentence(agree=agree, disagree=disagree)


def _csv(res):
    keys = [
        "d",
        "e_mean",
        "e_se",
        "n_seeds",
        "seeds",
        "seconds",
        "error",
        *CONVENTION_COLUMNS,
    ]
    rows = [
        [
            p.d,
            repr(p.e_mean),
            repr(p.e_se),
            len(p.seeds),
            " ".join(map(str, p.seeds)),
            f"{p.seconds:.3f}",
            res.error,
            *convention_row(res.convention),
        ]
        for p in res.points
    ]
    return keys, rows


def _kernel_csv(res):
    keys = ["d", "D", "ell", "k", "n", "e_mean", "e_se", "e_pred", "gap_mean", "gap_se", "n_seeds", "seeds", "seconds"]
    rows = [
        [
            p.d,
            p.D,
            p.ell,
            p.k,
            p.n,
            repr(p.e_mean),
            repr(p.e_se),
            repr(p.e_pred),
            repr(p.gap_mean),
            repr(p.e_se),
            len(p.seeds),
            " ".join(map(str, p.seeds)),
            f"{p.seconds:.3f}",
        ]
        for p in res.points
    ]
    return keys, rows


def _print(res) -> None:
    f = res.fit
    print(
        f"teacher {res.teacher}: alpha={res.alpha:g} kappa={res.kappa:g} tau={res.tau:g} rho={res.rho:g} "
        f"lam={res.lam:g}, C_train={res.C_train}, C_test={res.C_test}, {res.tasks} tasks"
    )
    c = res.convention
    print(
        f"  error {res.error}; convention {c['name']}: assignment={c['assignment']}, train tasks={c['train_tasks']}, "
        f"test tasks={c['test_tasks']}, rounding={c['rounding']}, ridge floor={c['ridge_floor']:g}"
    )
    for p in res.points:
        print(
            f"  d = {p.d:>4}: e = {p.e_mean:.6g} +- {p.e_se:.2g}  ({len(p.seeds)} seeds, {p.seconds:.1f} s)"
            + (f"  gap {100 * (p.e_mean - res.e_theory) / res.e_theory:+.1f}%" if res.e_theory else "")
        )
    print(f"  fit {f.model}: {f.reason}")
    print(f"  e_inf = {f.e_inf:.6g} +- {f.e_inf_se:.2g} (SE; {f.e_inf_dof:.1f} dof)")
    print(f"  e_theory (d -> infinity) = {res.e_theory:.6g}  [{res.theory_note}]")
    print(f"  z = {res.z:+.2f}, limit {res.z_limit:.3g} (two-sided false alarm {res.false_alarm:g})")
    print(f"  {_verdict_line(res, 'agrees', 'DISAGREES')}")
    print(f"  {res.seconds:.1f} s")


def _print_kernel(res, js) -> None:
    f = res.gap.core.fit
    core = res.gap.core
    print(
        f"kernel learner ({res.features}; our extension, docs/kernel.md), teacher {res.teacher}: "
        f"ell/D={res.alpha:g} k/D={res.kappa:g} n/D^2={res.tau:g} rho={res.rho:g} lam={res.lam:g}, "
        f"Gaussian tasks, C = I"
    )
    print(
        "  e_sim: query-exact test error (Monte Carlo over n_test contexts/tasks), mean +- SE over seeds; "
        "e_pred: kernel_curve at the same d"
    )
    for p in res.points:
        print(
            f"  d = {p.d:>3} (D = {p.D:>4}): e_sim = {p.e_mean:.5g} +- {p.e_se:.2g}, e_pred = {p.e_pred:.5g}, "
            f"gap = {p.gap_mean:+.4g} +- {p.e_se:.2g} ({100 * p.gap_mean / p.e_pred:+.1f}%; D x gap = "
            f"{p.D * p.gap_mean:.3g})  ({len(p.seeds)} seeds, {p.seconds:.1f} s)"
        )
    print(f"  fit {js['model']} (weighted, against 1/D): {js['model_reason']}")
    print(
        f"  gap_inf = {f.e_inf:.4g} +- {f.e_inf_se:.2g} (SE; {f.e_inf_dof:.1f} dof); c1 = {f.coef[1]:.4g} +- "
        f"{f.coef_se[1]:.2g}"
    )
    pl = res.gap.power_law
    if pl is not None:
        print(
            f"  power law gap = c D^-p (weighted fit of log gap on log D, {pl.n_used} points): "
            f"c = {pl.c:.3g}, p = {pl.p:.3f} +- {pl.p_se:.2g} (chi2 = {pl.chi2:.3g} on {pl.dof} dof"
            + (f"; SE inflated x{pl.se_inflation:.2f}" if pl.se_inflation > 1 else "")
            + ")"
        )
    else:
        print("  power law: fewer than two positive gaps, no fit")
    print(
        f"  z = gap_inf/SE = {core.z:+.2f}, limit {core.z_limit:.3g} (two-sided false alarm {core.false_alarm:g}); "
        f"MDE relative to the prediction at the largest D"
    )
    print(f"  {_verdict_line(res, 'gap_inf consistent with 0', 'gap_inf NOT consistent with 0')}")
    print(f"  {res.seconds:.1f} s")
