"""``icl-symbolic simulate``: a thin layer over :func:`icl_symbolic.api.simulation.simulate`.

    icl-symbolic simulate "sin(g)" --d 64 --alpha 2 --kappa 2 --tau 2 --rho 0.1 --seeds 5
    icl-symbolic simulate "tanh(g)" --d 32 --tau 0.5,2,4 --json

``simulate --json`` prints one object whose ``points`` hold, per point, the
inputs and ``e_mean``, ``e_se`` (exact functional, mean and SE over seeds),
``e_mc_mean``, ``e_mc_se`` (Monte-Carlo test error), ``e_theory`` (Result 1 /
Eq. (10) from :mod:`icl_symbolic.theory.asymptotic`; null at the ridgeless peak tau = 1,
with ``e_theory_reason`` saying so), ``z``, ``gap_rel``, ``expected_gap_rel`` and the
``comparison`` in words (:mod:`icl_symbolic.studies.compare`), and ``seconds``.  Progress goes to stderr.

With ``--order 1`` each point also carries the finite-d theory at its own d and a z test against it
(``finite_d_z``, ``finite_d_z_limit``, ``finite_d_agrees``, ``mde_abs``, ``mde_rel``: a fraction of
the corrected value), and the document the shared verdict (``verdict``, ``status``, ``mde_rel`` of the
run, ``mde_target``, ``seeds_to_target``, ``seconds_to_target``; :mod:`icl_symbolic.core.verdict`).
"""

from __future__ import annotations

import textwrap

from icl_symbolic.api.simulation import (
    DEFAULT_N_TEST_KERNEL,
    PARAMETERS,
    check_finite_d_points,
    check_finite_d_scope,
    finite_d_fields,
    finite_d_judgement,
    finite_d_theory,
    plot_simulation,
    simulate,
)
from icl_symbolic.cli._args import (
    CONVENTION_COLUMNS,
    EXIT_OK_BAD_INPUT,
    MAX_D,
    MAX_N_TEST,
    MAX_SEEDS,
    ICLError,
    add_convention_options,
    add_order_option,
    add_output_options,
    add_parallel_options,
    check_output_paths,
    check_parameter,
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
    write_csv,
)
from icl_symbolic.cli._verdict import DEFAULT_MDE_PCT, exit_text, mde_help, parse_mde, pct

# command-line limits: core.limits (docs/limits.md); the simulator refuses what does not fit in memory


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "simulate",
        help="train linear attention on a teacher f and measure its ICL error (Eqs. 1-7)",
        description="Simulate the ridge-trained reduced linear-attention model with teacher f "
        "(Sec. 2, Eqs. (1)-(7), p. 2-3) and compare with the theory. --alpha, --kappa, --tau "
        "accept a value, a list a,b,c, or start:stop:count; the points are their product.",
        epilog=epilog(
            EXIT_OK_BAD_INPUT
            + "; with --order 1 the verdict against the finite-d theory: "
            + exit_text(rows="every point", one="some point"),
            [
                'icl-symbolic simulate "sin(g)" --d 64 --tau 2 --seeds 5',
                'icl-symbolic simulate "tanh(g)" --d 32 --tau 0.5,2,4 --json',
            ],
        ),
    )
    p.add_argument("f", metavar="EXPR", help='teacher f(g), e.g. "sin(g)", "tanh(g)", "(g^2-1)/sqrt(2)"')
    p.add_argument("--d", default=str(defaults.D), help="dimension d (integer >= 2)")
    p.add_argument("--alpha", default=f"{defaults.ALPHA:g}", help="context ratio ell/d")
    p.add_argument("--kappa", default=f"{defaults.KAPPA:g}", help="task diversity k/d")
    p.add_argument("--tau", default=f"{defaults.TAU:g}", help="pretraining ratio n/d^2")
    p.add_argument("--rho", default=defaults.RHO, help="noise variance rho")
    p.add_argument("--lam", default=f"{defaults.LAM:g}", help="ridge lambda, regulariser (n/d) lam (0: min-norm)")
    p.add_argument("--seeds", default=str(defaults.SEEDS), help="number of seeds")
    p.add_argument("--seed", default="0", help="first seed (seeds are seed, seed+1, ...)")
    p.add_argument(
        "--n-test",
        default=None,
        help="fresh test prompts per seed for the Monte-Carlo error "
        f"(default {defaults.N_TEST}; {DEFAULT_N_TEST_KERNEL} with --features)",
    )
    p.add_argument(
        "--ctrain",
        "--C-train",
        dest="C_train",
        default=defaults.C_TRAIN,
        help="task covariance (identity, powerlaw:p, spiked:f:r, lowrank:r, or a .npy file)",
    )
    p.add_argument(
        "--ctest", "--C-test", dest="C_test", default=None, help="test task covariance (default: same as --ctrain)"
    )
    p.add_argument(
        "--tasks",
        default=None,
        choices=("gaussian", "sphere"),
        help="task law of training and test tasks: gaussian w ~ N(0, C) (the paper's; default) or "
        "sphere (rescaled to |w|^2 = tr C); sets both --train-tasks and --test-tasks",
    )
    add_convention_options(p)
    p.add_argument(
        "--solver",
        default="auto",
        choices=("auto", "gram", "kernel", "cg"),
        help="training solver: auto (cost model; dense fallback when CG stalls), gram (dense normal "
        "equations), kernel (dense dual), cg (matrix-free conjugate gradients); default auto",
    )
    add_parallel_options(p, "the seeds and sweep points")
    p.add_argument(
        "--sampler",
        default="fast",
        choices=("fast", "direct"),
        help="prompt sampler: fast (conditional Gaussian) or direct (docs/simulation.md)",
    )
    p.add_argument("--no-exact", action="store_true", help="skip the exact test functional (Monte Carlo only)")
    add_order_option(
        p,
        "print the corrected value at this d next to the limit, as e_theory_finite_d in the JSON/CSV and drawn in --plot",
    )
    p.add_argument(
        "--mde",
        default=f"{DEFAULT_MDE_PCT:g}",
        help="with --order 1: " + mde_help(DEFAULT_MDE_PCT) + "; the false-alarm budget is 1e-3 split over the points",
    )
    add_output_options(
        p,
        csv="write one row per point (inputs, e_mean, e_se, e_mc_mean, e_mc_se, e_theory) as CSV",
        plot="plot the points with e_theory",
    )
    p.add_argument(
        "--features",
        default=None,
        help="train the kernel learner on features identity or hermite:K (K <= 3) instead of plain "
        "attention; --alpha, --kappa, --tau are then ell/D, k/D, n/D^2 (docs/kernel.md); "
        "Gaussian tasks, C = I, direct sampler",
    )
    p.add_argument(
        "--control",
        default=None,
        choices=("features", "gaussian"),
        help="with --features: a control with Gaussian inputs (features: true task law; "
        "gaussian: Gaussian tasks with the same second moment, K <= 2)",
    )
    p.set_defaults(func=run)


CSV_KEYS = (
    "teacher",
    "d",
    "ell",
    "k",
    "n",
    *PARAMETERS,
    "C_train",
    "C_test",
    "e_mean",
    "e_se",
    "e_mc_mean",
    "e_mc_se",
    "e_idg_mean",
    "e_idg_se",
    "e_idg_theory",
    *CONVENTION_COLUMNS,
    "z",
    "expected_gap_rel",
    "e_theory",
)


def run(args) -> int:
    kernel = args.features is not None or args.control is not None
    d = parse_int(args.d, "d", 2, None if kernel else MAX_D)
    alphas = parse_parameter(args.alpha, "alpha")
    kappas = parse_parameter(args.kappa, "kappa")
    taus = parse_parameter(args.tau, "tau")
    rho = parse_number(args.rho, "rho")
    lam = parse_number(args.lam, "lam")
    check_parameter("rho", rho, args.rho)
    check_parameter("lam", lam, args.lam)
    n_seeds = parse_int(args.seeds, "seeds", 1, None if kernel else MAX_SEEDS)
    seed0 = parse_int(args.seed, "seed", 0)
    n_test_default = DEFAULT_N_TEST_KERNEL if kernel else defaults.N_TEST
    n_test = parse_int(args.n_test if args.n_test is not None else str(n_test_default), "n-test", 2, MAX_N_TEST)
    convention = parse_convention(args)
    target = parse_mde(args.mde)
    if args.order == 1 and n_seeds < 2:
        raise ICLError("--order 1 judges the simulation against the finite-d theory: it needs --seeds >= 2 (an SE)")
    if args.order == 1:  # the kernel learner and its controls are outside the finite-d theory
        features = args.features if args.control is None else "control"
        scope = dict(lam=lam, C_train=args.C_train, C_test=args.C_test, convention=convention)
        check_finite_d_scope(**scope, features=features, f=args.f, rho=rho)  # before any training
        check_finite_d_points(d, taus)  # before the simulation: no training for a value that cannot exist
    check_output_paths(args)
    jobs, scheduler = parse_parallel(args)
    res = simulate(
        args.f,
        rho=rho,
        alpha=alphas.tolist(),
        kappa=kappas.tolist(),
        tau=taus.tolist(),
        lam=lam,
        d=d,
        C_train=args.C_train,
        C_test=args.C_test,
        seeds=n_seeds,
        seed=seed0,
        n_test=n_test,
        progress=progress_printer(args.quiet),
        convention=convention,
        features=args.features,
        control=args.control,
        jobs=jobs,
        scheduler=scheduler,
        solver=args.solver,
        sampler=args.sampler,
        exact=not args.no_exact,
    )
    out = res.points()
    fds = (
        finite_d_theory(res, jobs=jobs, scheduler=scheduler, progress=progress_printer(args.quiet))
        if args.order == 1
        else None
    )
    verdict = None
    if fds is not None:
        tests, verdict = finite_d_judgement(res, fds, mde=target)
        for o, fd, t in zip(out, fds, tests):
            o.update(finite_d_fields(fd))
            if t is not None:  # None: the theory withheld its corrected value (outside its checked scope)
                o.update(finite_d_z=t.z, finite_d_z_limit=t.limit, finite_d_agrees=t.agrees, **t.to_json())
    if not args.json:
        for o in out:
            (_print_kernel_point if kernel else _print_point)(o)
    # all computation is done: now write files (atomically) and print
    if args.plot:
        save_figure(plot_simulation(res, finite_d=fds), args.plot)
    if args.csv:
        keys = KERNEL_CSV_KEYS if kernel else CSV_KEYS + (("e_theory_finite_d",) if fds is not None else ())
        write_csv(args.csv, keys, [_csv_row(o, kernel, keys) for o in out])
    extra = dict(features=args.features, control=args.control) if kernel else {}
    if verdict is not None:
        extra.update(verdict=_finite_d_sentence(verdict), **verdict.to_json())
        if not args.json:
            print(extra["verdict"])
    emit_json(args, document("simulate", out, f=args.f, **extra))
    return 0 if verdict is None else verdict.exit_code


def _finite_d_sentence(verdict) -> str:
    return "against the finite-d theory (limit + O(1/d) terms at each point's d): " + verdict.sentence(what="points")


def _csv_row(o, kernel: bool, keys) -> list:
    if kernel:
        return ["" if o[k] is None else o[k] for k in keys]
    row = {**o, **dict(zip(CONVENTION_COLUMNS, convention_row(o["convention"])))}
    return [
        "inf" if k in ("e_theory", "e_idg_theory") and row[k] is None else ("" if row[k] is None else row[k])
        for k in keys
    ]


def _fmt(x, se=None):
    if x is None:
        return "n/a"
    return f"{x:.6g}" + ("" if se is None else f" +- {se:.2g}")


def _print_point(o):
    print(
        f"teacher {o['teacher']}: d={o['d']} ell={o['ell']} k={o['k']} n={o['n']} "
        f"(alpha={o['alpha']:g}, kappa={o['kappa']:g}, tau={o['tau']:g}), rho={o['rho']:g}, lam={o['lam']:g}, "
        f"C_train={o['C_train']}, C_test={o['C_test']}, tasks={o['tasks']}"
    )
    c = o["convention"]
    print(
        f"  convention {c['name']}: assignment={c['assignment']}, train tasks={c['train_tasks']}, "
        f"test tasks={c['test_tasks']}, rounding={c['rounding']}, ridge floor={c['ridge_floor']:g}"
    )
    for r in o["per_seed"]:
        print(
            f"  seed {r['seed']}: e = {_fmt(r['e'])}  e_idg = {_fmt(r['e_idg'])}  e_mc = {_fmt(r['e_mc'], r['e_mc_se'])}  "
            f"[{r['solver']}, {r['iterations']} it, residual {_fmt(r['residual'])}, {r['seconds']:.2f} s]"
        )
    print(f"  e (exact functional, mean over {len(o['seeds'])} seeds) = {_fmt(o['e_mean'], o['e_se'])}")
    print(f"  e_mc (Monte Carlo, {o['n_test']} fresh prompts/seed)     = {_fmt(o['e_mc_mean'], o['e_mc_se'])}")
    theory_text = _fmt(o["e_theory"]) if o["e_theory"] is not None else "inf (the interpolation peak)"
    print(f"  e_theory (d -> infinity, Result 1 / Eq. (10))         = {theory_text}")
    if o.get("e_theory_finite_d") is not None:
        value, how = o["e_theory_finite_d_text"], o["e_theory_finite_d_method"]
        print(f"  e_theory + O(1/d) terms at d = {o['d']}                = {value}")
        print(textwrap.fill(how, 100, initial_indent="    (", subsequent_indent="     ") + ")")
        print(
            f"  against it: z = {o['finite_d_z']:+.2f} (limit {o['finite_d_z_limit']:.3g}), "
            f"{'within' if o['finite_d_agrees'] else 'BEYOND'} its limit; MDE {pct(o['mde_rel'])} (90 % power)"
        )
    elif o.get("finite_d_scope"):
        print(f"  e_theory + O(1/d) terms at d = {o['d']}                = refused")
        print(textwrap.fill(o["finite_d_scope"], 100, initial_indent="    (", subsequent_indent="     ") + ")")
    if o["e_idg_mean"] is not None:
        idg_th = _fmt(o["e_idg_theory"]) if o["e_idg_theory"] is not None else "inf"
        print(
            f"  e_idg (IDG: same Gamma on its k pretraining tasks)    = {_fmt(o['e_idg_mean'], o['e_idg_se'])}"
            f"  theory {idg_th}"
        )
    if o["comparison"]:
        print(textwrap.fill(o["comparison"], 100, initial_indent="  ", subsequent_indent="    "))
    print(f"  {o['seconds']:.2f} s")


def _print_kernel_point(obj) -> None:
    what = f"{obj['control']} control for " if obj["control"] else ""
    print(
        f"{what}kernel learner {obj['features']} on f = {obj['teacher']}: d={obj['d']} D={obj['D']} "
        f"ell={obj['ell']} k={obj['k']} n={obj['n']} (ell/D={obj['alpha']:g}, k/D={obj['kappa']:g}, "
        f"n/D^2={obj['tau']:g}), rho={obj['rho']:g}, lam={obj['lam']:g}, rho_eff={obj['rho_eff']:.6g}"
    )
    for r in obj["per_seed"]:
        print(
            f"  seed {r['seed']}: e = {_fmt(r['e'], r['e_se'])}  e_mc = {_fmt(r['e_mc'], r['e_mc_se'])}  "
            f"[{r['solver']}, {r['seconds']:.2f} s]"
        )
    print(f"  e (query-exact, mean over {len(obj['seeds'])} seeds) = {_fmt(obj['e_mean'], obj['e_se'])}")
    print(f"  e_mc (Monte Carlo)                        = {_fmt(obj['e_mc_mean'], obj['e_mc_se'])}")
    print(f"  e_theory (linear deterministic equivalent in D dims) = {_fmt(obj['e_theory'])}")


KERNEL_CSV_KEYS = (
    "teacher",
    "features",
    "control",
    "d",
    "D",
    "ell",
    "k",
    "n",
    *PARAMETERS,
    "rho_eff",
    "e_mean",
    "e_se",
    "e_mc_mean",
    "e_mc_se",
    "e_theory",
)
