"""``icl-symbolic dual``: certified dual kernels (NNGP and derivative maps) of a teacher.

Paper: the Hermite expansion of Sec. 2, Eq. (2), p. 2 (K_f(rho) = sum_m a_m^2 rho^m).  Parsing and
formatting only; the mathematics is :mod:`icl_symbolic.engine.dual`.
"""

from __future__ import annotations

from icl_symbolic.api.dual import (
    check_deep_options,
    check_gram_output,
    deep_gram,
    deep_pair,
    dual_kernel,
    load_gram_input,
    plot_dual,
    read_exact,
    read_vector,
    save_gram,
)
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
                'icl-symbolic dual "relu(g)" --depth 5 --sigma-w2 2 --sigma-b2 0.1 --x 1,0,0 --y 0.6,0.8,0',
                'icl-symbolic dual "relu(g)" --depth 5 --sigma-w2 2 --gram data.npy --out ntk.npy --kernel ntk',
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
    p.add_argument("--depth", type=ascii_int, default=None, help="deep kernels of a depth-L network (1..100)")
    p.add_argument("--sigma-w2", default="1", help="weight variance sigma_w^2 > 0 (deep kernels; read exactly)")
    p.add_argument("--sigma-b2", default="0", help="bias variance sigma_b^2 >= 0 (deep kernels; read exactly)")
    p.add_argument("--x", default=None, help="first input of a pair, comma-separated (with --depth)")
    p.add_argument("--y", default=None, help="second input of a pair, comma-separated (with --depth)")
    p.add_argument("--gram", default=None, help="a .npy data set (rows are inputs): the deep Gram (with --depth)")
    p.add_argument("--out", default=None, help="write the Gram matrix (float64) to this .npy file")
    p.add_argument("--kernel", choices=("nngp", "ntk"), default="ntk", help="the Gram written by --out")
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


def _check_deep(args):
    parse_expr(args.expr)
    if args.corr is not None or args.c is not None:
        raise ICLError("--depth takes --x/--y or --gram, not --corr or --c")
    check_deep_options(args.depth, args.sigma_w2, args.sigma_b2)
    if (args.gram is None) == (args.x is None and args.y is None):
        raise ICLError("--depth needs either --x and --y (one pair) or --gram (a data set)")
    if args.gram is None:
        if args.x is None or args.y is None:
            raise ICLError("give both --x and --y")
        x, y = read_vector(args.x, "--x"), read_vector(args.y, "--y")
        if len(x) != len(y):
            raise ICLError(f"--x and --y must have the same length, got {len(x)} and {len(y)}")
        if not 1 <= args.digits <= 200:
            raise ICLError(f"--digits must be between 1 and 200, got {args.digits}")
        return x, y
    if args.out is not None:
        check_gram_output(args.out)
    check_output_paths(args)
    return load_gram_input(args.gram), None


def _run_deep(args) -> int:
    a, b = _check_deep(args)
    if b is not None:
        r = deep_pair(args.expr, a, b, args.depth, args.sigma_w2, args.sigma_b2, args.digits)
        points = [{"layer": args.depth, "nngp": r.nngp[-1].to_str(args.digits), "ntk": r.ntk[-1].to_str(args.digits)}]
        emit_json(args, document("dual", points, expr=args.expr, depth=args.depth, method=r.method))
        if not args.json:
            how = {"exact": "exact nested closed forms", "ball": "Arb ball arithmetic"}.get(r.method, r.method)
            print(f"f(g) = {args.expr}; depth {args.depth}, sigma_w^2 = {args.sigma_w2}, sigma_b^2 = {args.sigma_b2}")
            print(f"NNGP K^L(x, y)     = {r.nngp[-1].to_str(args.digits)}  [{how}; certified digits]")
            print(f"NTK  Theta^L(x, y) = {r.ntk[-1].to_str(args.digits)}  [{how}; certified digits]")
        return 0
    G = deep_gram(args.expr, a, args.depth, args.sigma_w2, args.sigma_b2)
    if args.out is not None:
        save_gram(args.out, G, args.kernel)
    doc = {"n": a.shape[0], "nngp_max_err": G.nngp_err, "ntk_max_err": G.ntk_err, "out": args.out}
    emit_json(args, document("dual", [doc], expr=args.expr, depth=args.depth))
    if not args.json:
        route = "closed forms in float64" if G.orders == () else f"Hermite orders {list(G.orders)}"
        print(f"f(g) = {args.expr}; depth {args.depth}; {a.shape[0]} x {a.shape[0]} Gram ({route})")
        how = (
            "rounding analysis; numpy's arccos/arcsin assumed within 4 ulps, spot-checked in Arb"
            if G.orders == ()
            else "certified Hermite series"
        )
        print(f"certified max |error| of the float64 entries: NNGP {G.nngp_err:.2e}, NTK {G.ntk_err:.2e} ({how})")
        if args.out is not None:
            print(f"{args.kernel.upper()} written to {args.out}")
    return 0


def run(args) -> int:
    if args.depth is not None:
        return _run_deep(args)
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
