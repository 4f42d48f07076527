"""``icl-symbolic reproduce TABLE.csv``: simulate each row of a data table at its own d and convention.

    icl-symbolic reproduce docs/reproduce-example.csv --f "(g^2-1)/sqrt(2)" --alpha 2 --tau 2 --rho 0.1 \\
        --convention letey2024 --columns d=d,kappa=kappa,mean=icl_mean,spread=icl_std,runs=runs

A thin layer over :func:`icl_symbolic.api.reproduction.reproduce` (reading the table, the
simulations, the z-scores with their false-alarm budget, the slips tried on disagreeing rows:
:mod:`icl_symbolic.studies.reproduce`).
``--json`` prints one object with ``verdict``, ``status`` (agrees, disagrees,
inconclusive), ``reproduced``, ``mde_rel`` (the run's: the largest row's, a fraction),
``mde_target``, ``seeds_to_target``, ``seconds_to_target``, ``convention``,
``false_alarm``, ``spread_reading`` and ``points`` (one per row: the setting, ``ours``,
``ours_se``, ``theirs``, ``theirs_se``, ``z``, ``z_limit``, ``mde``, ``mde_rel``,
``agrees``, ``e_theory``, ``slips``, ``catalogue_slips``).  docs/reproduce.md.
"""

from __future__ import annotations

import argparse
import csv
import io as _io

from icl_symbolic.api.reproduction import (
    ERRORS,
    MIN_SEEDS,
    PARAMS,
    SPREAD_READING,
    SPREADS,
    parse_columns,
    plot_reproduction,
    reproduce,
)
from icl_symbolic.cli._args import (
    MAX_N_TEST,
    MAX_SEEDS,
    ICLError,
    add_convention_options,
    add_output_options,
    add_parallel_options,
    check_output_paths,
    defaults,
    document,
    emit_json,
    epilog,
    parse_convention,
    parse_int,
    parse_number,
    parse_parallel,
    progress_printer,
    save_figure,
    write_text,
)
from icl_symbolic.cli._verdict import DEFAULT_MDE_PCT, exit_text, mde_help, parse_mde, pct

EXAMPLE = (
    'icl-symbolic reproduce docs/reproduce-example.csv --f "(g^2-1)/sqrt(2)" --alpha 2 --tau 2 --rho 0.1 '
    "--convention letey2024 --columns d=d,kappa=kappa,mean=icl_mean,spread=icl_std,runs=runs"
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "reproduce",
        help="simulate each row of a data table at its own d and convention; z per row, verdict",
        description="Read a table of simulated errors (CSV with a header line; lines starting with # are "
        "skipped), simulate every row at the table's own d and convention with the same seeds, and "
        "report per row our value +- SE, theirs +- SE, z and its limit (two-sided false-alarm "
        "budget split over the rows, Student t) and the minimum detectable error (MDE, 90 % power, in % "
        "of their value), with an overall verdict: 'reproduced' only when every row agrees and every "
        "row's MDE is at most --mde (default 5 %), 'NOT reproduced' when some row disagrees, else "
        "'inconclusive' with the seeds per row that would reach the target. On a disagreeing row the "
        "slips catalogue is tried: each convention option flipped, noise std vs variance, "
        "alpha <-> kappa, and the number slips of the catalogue. docs/reproduce.md.",
        epilog=epilog(
            exit_text("reproduced", "NOT reproduced"),
            [EXAMPLE],
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("table", help="the data table (CSV)")
    p.add_argument(
        "--columns",
        required=True,
        help="our names = the table's headers: d=..., mean=..., spread=... (required), runs=... (with "
        "--spread std), and any of alpha, kappa, tau, rho, lam the table sweeps",
    )
    p.add_argument(
        "--spread",
        default="std",
        choices=SPREADS,
        help="what the spread column is: std (per-run sample standard deviation, ddof 1; SE = std/sqrt(runs); "
        "needs runs=), std0 (per-run population standard deviation, ddof 0, as numpy.std; SE = "
        "std/sqrt(runs - 1); needs runs=), published (as the convention's authors publish it: letey2024 "
        "np.std, ddof 0, and the ICL - IDG gap's spread in quadrature; needs runs=) or se (standard error of "
        "the mean). Default: %(default)s",
    )
    p.add_argument("--f", default="g", help="teacher f(g) of the table (default: the linear teacher g)")
    for k, v in (
        ("alpha", defaults.ALPHA),
        ("kappa", defaults.KAPPA),
        ("tau", defaults.TAU),
        ("rho", defaults.RHO),
        ("lam", defaults.LAM),
    ):
        p.add_argument(
            f"--{k}",
            default=str(v) if not isinstance(v, str) else v,
            help=f"{k} of every row that has no {k} column (default: %(default)s)",
        )
    p.add_argument("--error", default="icl", choices=ERRORS, help="which error the table reports (docs/idg.md)")
    p.add_argument(
        "--seeds-per-row",
        default=str(MIN_SEEDS),
        help=f"simulated seeds per row, at least {MIN_SEEDS} (default: %(default)s), or auto: a pilot of "
        f"{MIN_SEEDS}, then the seeds per row that reach --mde (announced with their estimated time first; "
        "at most 2000)",
    )
    p.add_argument("--seed", default="0", help="first seed (seeds are seed, seed+1, ...; default: %(default)s)")
    p.add_argument(
        "--n-test",
        default="100",
        help="Monte-Carlo test prompts per seed (the exact functional is what is compared; default: %(default)s)",
    )
    p.add_argument(
        "--false-alarm", default="1e-3", help="two-sided false-alarm budget over all rows (default: %(default)s)"
    )
    p.add_argument("--mde", default=f"{DEFAULT_MDE_PCT:g}", help=mde_help(DEFAULT_MDE_PCT))
    p.add_argument(
        "--slip-rows",
        default=None,
        help="try the slips on the N worst disagreeing rows only (default: all of them; 0: none)",
    )
    add_convention_options(p)
    add_parallel_options(p, "the (row, seed) runs")
    add_output_options(
        p,
        csv="write one row per table row (setting, ours, theirs, z, limit, agrees, best slip)",
        plot="plot theirs and ours with error bars and the theory curve",
    )
    p.set_defaults(func=run)


CSV_KEYS = (
    ("row",)
    + PARAMS
    + (
        "ell",
        "k",
        "n",
        "ours",
        "ours_se",
        "n_seeds",
        "theirs",
        "theirs_se",
        "z",
        "z_limit",
        "mde",
        "mde_rel",
        "agrees",
        "e_theory",
        "best_slip",
        "convention",
    )
)


def run(args) -> int:
    columns = parse_columns(args.columns)
    fixed = {k: parse_number(getattr(args, k), k) for k in PARAMS[1:]}  # a column overrides its option
    auto = args.seeds_per_row.strip() == "auto"
    n_seeds = "auto" if auto else parse_int(args.seeds_per_row, "seeds-per-row", MIN_SEEDS, MAX_SEEDS)
    seed0 = parse_int(args.seed, "seed", 0)
    n_test = parse_int(args.n_test, "n-test", 2, MAX_N_TEST)
    fa = parse_number(args.false_alarm, "false-alarm")
    if not 0 < fa < 1:
        raise ICLError("--false-alarm must be in (0, 1)")
    slip_rows = None if args.slip_rows is None else parse_int(args.slip_rows, "slip-rows", 0)
    target = parse_mde(args.mde)
    convention = parse_convention(args)
    jobs, scheduler = parse_parallel(args)
    check_output_paths(args)
    res = reproduce(
        args.table,
        columns=columns,
        f=args.f,
        spread=args.spread,
        **fixed,
        convention=convention,
        error=args.error,
        seeds=n_seeds,
        seed=seed0,
        n_test=n_test,
        false_alarm=fa,
        mde=target,
        slip_rows=slip_rows,
        jobs=jobs,
        scheduler=scheduler,
        progress=progress_printer(args.quiet),
    )
    js = res.to_json()
    points = js.pop("points")
    doc = document(
        "reproduce",
        points,
        table=str(args.table),
        columns=columns,
        spread=args.spread,
        spread_reading=SPREAD_READING[args.spread],
        **js,
    )
    # all computation is done: now write files (atomically) and print
    if args.plot:
        save_figure(plot_reproduction(res, table=args.table), args.plot)
    if args.csv:
        buf = _io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_KEYS)
        for pt in points:
            best = next((s["slip"] for s in pt["slips"] if s["explains"]), "")
            w.writerow(
                [
                    pt.get(k)
                    if k not in ("best_slip", "convention")
                    else (best if k == "best_slip" else res.convention.name)
                    for k in CSV_KEYS
                ]
            )
        write_text(args.csv, buf.getvalue())
    emit_json(args, doc)
    if not args.json:
        _print(res, args)
    return res.judgement.exit_code


def _print(res, args) -> None:
    c = res.convention
    print(
        f"{args.table}: f = {res.f}, {res.error} error, convention {c.name} (assignment={c.assignment}, "
        f"train tasks={c.train_tasks}, test tasks={c.test_tasks}, rounding={c.rounding}, "
        f"ridge floor={c.ridge_floor:g}); {len(res.seeds)} seeds per row; false alarm {res.false_alarm:g} "
        f"over {len(res.rows)} rows; MDE target {pct(res.target)}"
    )
    print(f"  their spread ({args.spread}): {SPREAD_READING[args.spread]}")
    for r in res.rows:
        p = r.row.params
        setting = " ".join(f"{k}={p[k]:g}" for k in PARAMS)
        mark = "ok " if r.ok else "BAD"
        print(
            f"  {mark} row {r.row.index}: {setting}: ours {r.ours:.5g} +- {r.ours_se:.2g}, theirs "
            f"{r.row.theirs:.5g} +- {r.row.theirs_se:.2g}, z = {r.z:+.2f} (limit {r.limit:.3g}), "
            f"MDE {r.mde:.3g} = {pct(r.mde_rel)}" + ("" if r.theory is None else f", theory {r.theory:.5g}")
        )
        for s in r.slips[:3]:
            print(
                f"        slip {s['slip']}: {s['value']:.5g} +- {s['se']:.2g}, z = {s['z']:+.2f}"
                f"{'  <- explains the row' if s['explains'] else ''}"
            )
        if r.catalogue:
            print(f"        number slips matching: {', '.join(r.catalogue)}")
    print(res.verdict)
