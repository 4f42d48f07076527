"""``icl-symbolic dual``: certified dual kernels (NNGP and derivative maps) of a teacher.

Paper: the Hermite expansion of Sec. 2, Eq. (2), p. 2 (K_f(rho) = sum_m a_m^2 rho^m).  Parsing and
formatting only; the mathematics is :mod:`icl_symbolic.engine.dual`.
"""

from __future__ import annotations

from icl_symbolic.api.dual import dual_kernel, plot_dual, read_exact
from icl_symbolic.cli._args import (
    EXIT_OK_BAD_INPUT,
    ICLError,
    add_output_options,
    ascii_int,
    check_output_paths,
    defaults,
    document,
    emit_json,
    epilog,
    parse_expr,
    save_figure,
    split_list,
    write_points_csv,
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "dual",
        help="certified dual kernels E[f(u)f(v)] and E[f'(u)f'(v)] of a teacher (NNGP / NTK maps)",
        description="The NNGP map K_f(q1, q2, c) = E[f(u) f(v)], (u, v) ~ N(0, [[q1, c], [c, q2]]), and the "
        "derivative map E[f'(u) f'(v)] (distributional f'), each exact (closed form) or with a proven error "
        "bound (Hermite series with Cauchy-Schwarz tail, its re-expansion at |rho| = 1, or 2-D quadrature).",
        epilog=epilog(
            EXIT_OK_BAD_INPUT,
            [
                'icl-symbolic dual "tanh(g)" --corr 0,0.5,0.9 --digits 20',
                'icl-symbolic dual "relu(g)" --q1 2 --q2 1 --c 0.5 --json',
            ],
        ),
    )
    p.add_argument("expr", metavar="EXPR", help="teacher in the input language, e.g. 'tanh(g)'")
    p.add_argument(
        "--corr", default=None, help="comma-separated correlations rho = c/sqrt(q1 q2) in [-1, 1] (default 0,0.5,1)"
    )
    p.add_argument("--c", default=None, help="one covariance c (instead of --corr)")
    p.add_argument("--q1", default="1", help="variance of u (read exactly)")
    p.add_argument("--q2", default="1", help="variance of v (read exactly)")
    p.add_argument("--digits", type=ascii_int, default=defaults.DIGITS, help="significant digits (1..200)")
    p.add_argument("--no-derivative", action="store_true", help="only the NNGP map")
    add_output_options(
        p, csv="write the rows (q1, q2, c, rho, nngp, derivative, routes) as CSV", plot="draw both maps against rho"
    )
    p.set_defaults(func=run)


def _check(args):
    parse_expr(args.expr)
    if args.corr is not None and args.c is not None:
        raise ICLError("give --corr or --c, not both")
    if not 1 <= args.digits <= 200:
        raise ICLError(f"--digits must be between 1 and 200, got {args.digits}")
    q1, q2 = read_exact(args.q1, "--q1"), read_exact(args.q2, "--q2")
    if q1.is_negative or q2.is_negative:
        raise ICLError("--q1 and --q2 are variances and must be >= 0")
    rhos = None
    if args.c is None:
        rhos = [read_exact(r, "--corr") for r in split_list(args.corr or "0,0.5,1", "--corr")]
        if any(abs(r) > 1 for r in rhos):
            raise ICLError("--corr values must lie in [-1, 1]")
    else:
        c = read_exact(args.c, "--c")
        if c**2 > q1 * q2:
            raise ICLError("--c must satisfy c^2 <= q1 q2")
    check_output_paths(args)
    return rhos


def run(args) -> int:
    rhos = _check(args)
    grid = dual_kernel(
        args.expr, rhos, q1=args.q1, q2=args.q2, c=args.c, digits=args.digits, derivative=not args.no_derivative
    )
    points = grid.points()
    if args.plot:
        save_figure(plot_dual(grid), args.plot)
    if args.csv:
        write_points_csv(args.csv, points, ["q1", "q2", "c", "rho", "nngp", "derivative", "routes"])
    emit_json(args, document("dual", points, expr=args.expr, digits=args.digits))
    if not args.json:
        print(table(grid))
    return 0


def table(grid) -> str:
    w = grid.digits + 8
    lines = [
        f"f(g) = {grid.label}; K = E[f(u) f(v)], Kdot = E[f'(u) f'(v)], (u, v) ~ N(0, [[q1, c], [c, q2]])",
        f"{'q1':>6} {'q2':>6} {'rho':>8}  {'K':<{w}} {'Kdot':<{w}} how obtained",
    ]
    for p in grid.results:
        kd = "-" if p.derivative is None else p.derivative.to_str(grid.digits)
        routes = ", ".join(r for r in p.routes if r)
        if p.nngp.method == "exact":
            how = f"{routes} (exact, SymPy)"
        else:
            errs = [v.abs_err for v in (p.nngp, p.derivative) if v is not None and v.abs_err is not None]
            how = f"{routes}; |err| <= {max(float(e) for e in errs):.1e}" if errs else routes
        lines.append(
            f"{str(p.q1):>6} {str(p.q2):>6} {str(p.rho)[:8]:>8}  {p.nngp.to_str(grid.digits):<{w}} {kd:<{w}} {how}"
        )
    return "\n".join(lines)
