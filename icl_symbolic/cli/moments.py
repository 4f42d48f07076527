"""``icl-symbolic moments``: Lemma 1 population moments, exact / leading order / Monte Carlo.

Paper: Appendix B, Lemma 1, Eqs. (12)-(14), p. 8-9.  Parsing and formatting
only; the mathematics is :mod:`icl_symbolic.model.moments`.
"""

from __future__ import annotations

import sys

import numpy as np

from icl_symbolic.api.moments import (
    MEANING,
    conditional_moments,
    finite_ell_gaps,
    leading_order,
    mc_estimate,
    mc_moments,
    plot_finite_ell,
)
from icl_symbolic.cli._args import (
    EXIT_OK_BAD_INPUT,
    ICLError,
    add_output_options,
    ascii_int,
    check_exact_rho,
    check_int,
    check_output_paths,
    defaults,
    document,
    emit_json,
    epilog,
    progress_printer,
    save_figure,
    write_text,
)

#: The JSON keys scripts rely on: one per scalar coefficient.
JSON_KEYS = ("E_y2", "E_u", "E_uuT_I", "E_uuT_w", "E_us", "E_s2")
#: The table rows (the JSON keys plus the other coefficients of Lemma 1).
TABLE_KEYS = ("E_y2", "E_yx", "E_u", "E_uuT_I", "E_uuT_w", "E_us", "E_s", "E_s2", "E_yH_ww", "E_yH_w")
DEFAULT_SEED = 20261129


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "moments",
        help="Lemma 1 moments of u, s, y for a teacher: exact, leading order, Monte Carlo",
        description="Conditional moments of the context statistics u = (d/ell) sum y_i x_i and "
        "s = (1/ell) sum y_i^2 for a fixed task w with |w|^2 = d omega "
        "(arXiv:2610.10761, Appendix B, Lemma 1, Eqs. 12-14): exact at finite d and ell, "
        "the paper's leading order (ell = alpha d, d -> infinity, omega -> 1), and an "
        "optional Monte-Carlo check with z-scores. Defaults d = 64, ell = 2d (Fig. 1).",
        epilog=epilog(
            EXIT_OK_BAD_INPUT,
            [
                'icl-symbolic moments "tanh(g)" --d 8 --ell 5 --omega 0.7 --mc 200000',
                'icl-symbolic moments "sin(g)" --leading --json',
            ],
        ),
    )
    p.add_argument("expr", metavar="EXPR", help="teacher f(g) in the input language, e.g. 'tanh(g)'")
    p.add_argument("--rho", default=defaults.RHO, help="label-noise variance rho >= 0 (read exactly: 0.1 = 1/10)")
    p.add_argument("--d", type=ascii_int, default=defaults.D, help="dimension d")
    p.add_argument("--ell", type=ascii_int, default=None, help="context length ell (default 2d, alpha = 2)")
    p.add_argument("--omega", default="1", help="omega = |w|^2/d of the fixed task (exact)")
    p.add_argument(
        "--mc", type=ascii_int, default=None, metavar="N", help="also estimate every coefficient from N sampled prompts"
    )
    p.add_argument(
        "--seed", type=ascii_int, default=DEFAULT_SEED, help="seed of the Monte Carlo (task direction and prompts)"
    )
    p.add_argument(
        "--leading", action="store_true", help="show the leading-order reduction symbolically, with the dropped terms"
    )
    p.add_argument("--digits", type=ascii_int, default=defaults.DIGITS, help="significant digits")
    add_output_options(
        p,
        plot="plot |exact - leading order| against ell (1 ... 1000) at the given d and omega",
        csv="write the same curves (ell, coefficient, exact, leading) as CSV",
    )
    p.set_defaults(func=run)


def _check_args(args):
    check_int(args.d, "d", 1)
    check_exact_rho(args.rho)
    if args.ell is None:
        args.ell = 2 * args.d
    check_int(args.ell, "ell", 1)
    if not 1 <= args.digits <= 100:
        raise ICLError(f"--digits must be between 1 and 100, got {args.digits}")
    if args.mc is not None and not 2 <= args.mc <= 10**9:
        raise ICLError(f"--mc must be between 2 and 10^9 prompts, got {args.mc}")
    if args.seed < 0:
        raise ICLError(f"--seed must be >= 0, got {args.seed}")
    check_output_paths(args)
    if args.mc is not None:
        # refused past the documented limits (one line), else announced when long, before any work
        mc_estimate(args.d, args.ell, args.mc, args.expr).announce(progress_printer(args.quiet))


def _task(d, omega, seed):
    """The fixed task: a seeded uniform direction scaled to |w|^2 = d omega."""
    w_seq, mc_seq = np.random.SeedSequence(seed).spawn(2)
    w = np.random.default_rng(w_seq).standard_normal(d)
    w *= np.sqrt(d * omega) / np.linalg.norm(w)
    return w, np.random.default_rng(mc_seq)


def compute(args) -> dict:
    """All numbers for the table / JSON (library calls only)."""

    ex = conditional_moments(args.expr, rho=args.rho, d=args.d, ell=args.ell, omega=args.omega, digits=args.digits)
    lo = leading_order(args.expr, rho_value=ex.rho, alpha_value=ex.alpha, digits=args.digits)
    lead = dict(lo.values)
    lead["E_yx"] = None  # the paper's form is a1 w / d; shown through d*E_yx
    out = {"moments": ex, "leading": lo, "lead_values": lead, "mc": None, "w": None}
    if args.mc is not None:
        w, rng = _task(args.d, float(ex.omega), args.seed)
        out["w"] = w
        out["mc"] = mc_moments(
            args.expr,
            float(ex.rho),
            args.d,
            args.ell,
            w,
            args.mc,
            rng,
            progress=progress_printer(args.quiet),
            announce=False,
        )
    return out


def _json(args, res) -> dict:
    """The --json object: ``inputs`` and one point per coefficient of :data:`JSON_KEYS` with
    ``name``, ``exact``, ``leading``, ``mc``, ``mc_se`` (null without --mc) and ``leading_form``,
    ``dropped`` (null without --leading)."""
    ex, mc = res["moments"], res["mc"]
    inputs = {
        "f": ex.f,
        "rho": str(ex.rho),
        "d": ex.d,
        "ell": ex.ell,
        "alpha": str(ex.alpha),
        "omega": str(ex.omega),
        "digits": args.digits,
        "mc": args.mc,
        "seed": args.seed if args.mc is not None else None,
        "w": None if res["w"] is None else [float(x) for x in res["w"]],
    }
    points = []
    for k in JSON_KEYS:
        item = {
            "name": k,
            "exact": getattr(ex, k).to_str(args.digits),
            "leading": res["lead_values"][k].to_str(args.digits),
            "mc": None,
            "mc_se": None,
            "leading_form": None,
            "dropped": None,
        }
        if mc is not None and k in mc:  # d = 1: I and w w^T coincide, no separate estimate
            item["mc"], item["mc_se"] = float(mc[k]), float(mc[k].stderr)
        if args.leading:
            item["leading_form"] = str(res["leading"].limits[k])
            item["dropped"] = [{"term": str(t.term), "order": t.order} for t in res["leading"].dropped if t.moment == k]
        points.append(item)
    return document("moments", points, inputs=inputs)


def _table(args, res) -> str:

    ex, mc, lo = res["moments"], res["mc"], res["leading"]
    lines = [
        f"Lemma 1 moments (Appendix B, Eqs. 12-14, p. 8-9) for f = {ex.f}, rho = {ex.rho}, "
        f"d = {ex.d}, ell = {ex.ell} (alpha = {ex.alpha}), omega = |w|^2/d = {ex.omega}"
    ]
    head = f"{'coefficient':<11}  {'meaning':<42}  {'exact':>20}  {'leading order':>20}"
    if mc is not None:
        head += f"  {'Monte Carlo':>14}  {'SE':>9}  {'z':>6}"
    lines += [head, "-" * len(head)]
    for k in TABLE_KEYS:
        v = getattr(ex, k)
        lv = res["lead_values"].get(k)
        row = (
            f"{k:<11}  {MEANING[k]:<42}  {v.to_str(min(args.digits, 15)):>20}  "
            f"{(lv.to_str(min(args.digits, 15)) if lv is not None else 'a1/d (x w)'):>20}"
        )
        if mc is not None:
            if k in mc:
                m = mc[k]
                zs = (float(m) - float(v)) / m.stderr if m.stderr > 0 else 0.0
                row += f"  {float(m):>14.8g}  {m.stderr:>9.3g}  {zs:>6.2f}"
            else:
                row += f"  {'n/a (d = 1)':>14}"
        lines.append(row)
    vals = list(ex.coefficients().values())
    if all(v.method == "exact" for v in vals):
        prov = "exact (SymPy closed forms)"
    else:
        err = max(float(v.abs_err or 0) for v in vals)
        prov = f"mpmath quadrature, {min(v.digits or 0 for v in vals)} digits, max |err| <= {err:.2g}"
    lines.append(f"exact: {prov}.  leading order: a1 = E[g f(g)], rho_f = rho + E[f(g)^2], g ~ N(0, 1), alpha = ell/d.")
    if mc is not None:
        lines.append(
            f"Monte Carlo: {args.mc} prompts for one task w with |w|^2 = d omega "
            f"(seeded direction), seed {args.seed}; z = (MC - exact)/SE.  With 10 comparisons "
            f"|z| > 3.89 has false-alarm probability 1e-3 (Bonferroni)."
        )
    if args.leading:
        lines += ["", "Leading order: ell = alpha d, d -> infinity, then omega -> 1 (symbolic, SymPy series)"]
        lines.append(f"{'coefficient':<11}  {'limit':<24}  {'paper (Lemma 1)':<24}  agrees")
        for k, lim in lo.limits.items():
            lines.append(f"{k:<11}  {str(lim):<24}  {str(lo.paper[k]):<24}  {'yes' if lo.agrees[k] else 'NO'}")
        lines += ["", "Exact finite-size forms (functionals of f under z ~ N(0, omega)):"]
        for k, e in lo.exact.items():
            lines.append(f"  {k} = {e}")
        lines += ["", "Dropped terms:"]
        for t in lo.dropped:
            lines.append(f"  {t.moment:<9} {t.order:<13} {t.term}")
        lines.append(
            "  O(omega - 1) is O_P(d^-1/2) for w ~ N(0, I) (Appendix A, p. 7); the O(1/d) terms "
            "multiply w w^T or w, whose norms grow with d (see docs/moments.md)."
        )
    return "\n".join(lines)


ELL_GRID = (1, 2, 3, 5, 8, 13, 20, 32, 50, 80, 128, 200, 320, 500, 800, 1000)


def _curves(args):
    return finite_ell_gaps(
        args.expr, args.rho, args.d, ELL_GRID, omega_value=args.omega, digits=min(args.digits, 15), names=JSON_KEYS
    )


def _curves_csv(gaps) -> str:
    lines = ["ell,coefficient,exact,leading,exact_minus_leading"]
    for name, rows in gaps.items():
        for e, ex, lo in rows:
            lines.append(f"{e},{name},{float(ex)!r},{float(lo)!r},{float(ex) - float(lo)!r}")
    return "\n".join(lines) + "\n"


def run(args) -> int:
    _check_args(args)
    res = compute(args)
    if args.plot or args.csv:
        gaps = _curves(args)
        if args.plot:
            title = f"Lemma 1 dropped terms: f = {args.expr}, rho = {args.rho}, d = {args.d}, omega = {args.omega}"
            save_figure(plot_finite_ell(gaps, ELL_GRID, title), args.plot)
        if args.csv:
            write_text(args.csv, _curves_csv(gaps))
    emit_json(args, _json(args, res))
    if not args.json:
        print(_table(args, res))
    sys.stdout.flush()
    return 0
