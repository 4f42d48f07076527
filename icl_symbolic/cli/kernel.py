"""``icl-symbolic kernel``: which Hermite modes a query-side feature map turns into signal (our extension).

    icl-symbolic kernel "g + (g^2-1)/sqrt(2)" --features hermite:2 --rho 0.1 --alpha 16 --kappa 4 --tau 4

Parsing and formatting only; the mathematics is :mod:`icl_symbolic.kernel_learner.theory`
(mode split, block spectrum, rho_eff) on top of the linear theory engine
(:func:`icl_symbolic.theory.asymptotic.e_linear`).  Not a result of the paper: the paper
(Result 1, Eq. (9), p. 3) covers ``--features identity``, which reproduces
``icl-symbolic theory`` exactly.
"""

from __future__ import annotations

import csv
import io as _io
import math

import numpy as np

from icl_symbolic.api.kernel_learner import DEFAULT_D, kernel, plot_kernel
from icl_symbolic.api.theory import DIVERGES
from icl_symbolic.cli._args import (
    EXIT_OK_BAD_INPUT,
    ICLError,
    add_output_options,
    ascii_int,
    check_int,
    check_output_paths,
    defaults,
    document,
    emit_json,
    epilog,
    parse_parameter,
    progress_printer,
    save_figure,
    write_text,
)

_SWEPT = ("alpha", "kappa", "lam", "tau")
_WHAT = "our extension of arXiv:2610.10761 (kernel learner); identity features = Result 1, Eq. (9), p. 3"


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "kernel",
        help="kernel learner: Hermite modes a feature map turns into signal, and its predicted ICL error",
        description="Linear attention on fixed features phi of the input (identity, or hermite:K = orthonormal "
        "multivariate Hermite polynomials of z = sqrt(d) x of degree 1..K, K <= 3). Prints which "
        "Hermite modes of f are signal and which are noise, the task spectrum of the equivalent "
        "D-dimensional linear problem, rho_eff, and the predicted ICL error (linear deterministic "
        "equivalent in D dimensions). --alpha, --kappa, --tau are the LEARNER'S ratios ell/D, k/D, "
        "n/D^2 (D = feature count); plain attention at the same ell, k, n is shown alongside.",
        epilog=epilog(
            EXIT_OK_BAD_INPUT, ['icl-symbolic kernel "g + (g^2-1)/sqrt(2)" --features hermite:2 --tau 4 --json']
        ),
    )
    p.add_argument("expr", metavar="EXPR", help="teacher f(g), e.g. 'g + (g^2-1)/sqrt(2)' (whitelisted input language)")
    p.add_argument("--features", default="hermite:2", help="identity or hermite:K, K = 1, 2, 3 (default hermite:2)")
    p.add_argument(
        "--d",
        type=ascii_int,
        default=None,
        help=f"input dimension d (default {DEFAULT_D} for hermite:K; identity without --d is the "
        f"d -> infinity theory of the paper)",
    )
    p.add_argument(
        "--tasks",
        default="gaussian",
        choices=("gaussian", "sphere"),
        help="task law: gaussian w ~ N(0, I_d) (the paper's; default) or sphere |w|^2 = d",
    )
    p.add_argument("--rho", default=defaults.RHO, help="label-noise variance rho >= 0")
    p.add_argument("--alpha", default="16", help="context ratio ell/D > 0 (default 16)")
    p.add_argument("--kappa", default="4", help="task diversity k/D > 0 (default 4)")
    p.add_argument(
        "--tau",
        default="4",
        help="pretraining ratio n/D^2 > 0; a ridgeless tau = 1 (the "
        "interpolation peak) is reported as e = inf with the reason, as in theory (default 4)",
    )
    p.add_argument("--lam", default="0", help="ridge lam >= 0, regulariser (n/D) lam (default 0)")
    p.add_argument("--log", action="store_true", help="start:stop:count grids are geometric")
    p.add_argument("--digits", type=ascii_int, default=defaults.DIGITS, help="digits for the Hermite coefficients")
    add_output_options(p, csv="write the grid points as CSV", plot="plot e against the first swept ratio")
    p.set_defaults(func=run)


def _check_args(args) -> None:
    if not 5 <= args.digits <= 200:
        raise ICLError(f"--digits must be between 5 and 200, got {args.digits}")
    if args.d is not None:
        check_int(args.d, "d", 2)
    check_output_paths(args)


def run(args) -> int:
    _check_args(args)
    grids = {name: parse_parameter(getattr(args, name), name, args.log) for name in _SWEPT}
    rho = parse_parameter(args.rho, "rho")
    if rho.size != 1:
        raise ICLError("--rho: give one value (sweep the ratios instead)")
    kc = kernel(
        args.expr,
        features=args.features,
        rho=float(rho[0]),
        alpha=grids["alpha"],
        kappa=grids["kappa"],
        tau=grids["tau"],
        lam=grids["lam"],
        d=args.d,
        tasks=args.tasks,
        digits=args.digits,
        progress=progress_printer(args.quiet),
    )
    doc = json_document(kc, args, kc.spectrum.d)
    if args.plot:
        save_figure(plot_kernel(kc), args.plot)
    if args.csv:
        write_text(args.csv, curve_csv(kc))
    emit_json(args, doc)
    if not args.json:
        print(table(kc, doc))
    return 0


# -- the document -------------------------------------------------------------
def _num(x):
    x = float(x)
    return x if math.isfinite(x) else None


def mode_rows(kc) -> list[dict]:
    """One row per Hermite mode m = 0..K+2 with its role for this feature map, plus the rest."""
    ks = kc.spectrum
    bm = ks.moments
    K = ks.features.K
    rows = []
    for m, v in enumerate(bm.a):
        if m == 0:
            role = "noise (constant mode: not a feature)"
        elif m <= K:
            role = (
                f"signal (degree-{m} features)"
                if float(v) != 0.0 or v.method != "exact"
                else f"absent (a_{m} = 0; degree-{m} features fit nothing)"
            )
        else:
            role = f"noise (degree {m} > K = {K})"
        rows.append({"m": m, "a_m": float(v), "a_m_sq": float(v) ** 2, "role": role, "provenance": v.provenance()})
    rest = bm.E_f2_limit - sum(float(v) ** 2 for v in bm.a)
    rows.append(
        {
            "m": f">{len(bm.a) - 1}",
            "a_m": None,
            "a_m_sq": max(rest, 0.0) if rest > -1e-12 else rest,
            "role": "noise",
            "provenance": "E[f^2] - sum of the modes above",
        }
    )
    return rows


def json_document(kc, args, d) -> dict:
    """The --json object: modes, spectrum, rho_eff, floors and the grid points (one stable shape)."""
    ks = kc.spectrum
    bm = ks.moments
    K = ks.features.K
    return document(
        "kernel",
        kc.points(),
        **{
            "expr": args.expr,
            "features": str(ks.features),
            "d": d,
            "D": ks.D,
            "tasks": bm.tasks,
            "ratios": "alpha = ell/D, kappa = k/D, tau = n/D^2 (the learner's); plain attention at the same "
            "ell, k, n uses ell/d, k/d, n/d^2",
            "rho": ks.rho,
            "modes": mode_rows(kc),
            "block_moments": {f"B{m}{mp}": bm.B_values[(m, mp)].to_json() for (m, mp) in sorted(bm.B_values)},
            "E_f2_tasks": bm.E_f2.to_json(),
            "spectrum": [
                {
                    "l": b.l,
                    "degrees": list(b.degrees),
                    "eigenvalue": b.eigenvalue,
                    "multiplicity": b.multiplicity,
                    "description": b.description,
                }
                for b in ks.blocks
            ],
            "captured_power": ks.captured_power,
            "rho_eff": ks.rho_eff,
            "floor_kernel": ks.rho_eff,
            "floor_plain": ks.rho + bm.E_f2_limit - bm.a1_float**2,
            "floor_kernel_limit": ks.rho + bm.E_f2_limit - sum(float(bm.a[m]) ** 2 for m in range(1, K + 1)),
            "branch": kc.branch,
            "method": "linear deterministic equivalent in D dimensions (general-C engine), float64; spectrum "
            "exact in d (O(d)-invariant blocks)",
            "what": _WHAT,
        },
    )


def curve_csv(kc) -> str:
    buf = _io.StringIO()
    keys = ("alpha", "kappa", "tau", "lam", "ell", "k", "n", "e", "e_plain")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(keys)
    for i in range(len(kc)):
        w.writerow(
            [
                ("inf" if math.isinf(v) else "") if not math.isfinite(v) else repr(v)
                for v in (float(kc.columns[k][i]) for k in keys)
            ]
        )  # inf: the ridgeless peak
    return buf.getvalue()


def table(kc, doc) -> str:
    ks = kc.spectrum
    bm = ks.moments
    law = {"gaussian": "w ~ N(0, I_d)", "sphere": "|w|^2 = d", "limit": "d -> infinity"}[bm.tasks]
    lines = [
        f"f(g) = {doc['expr']}    features = {doc['features']}"
        + (f"    d = {doc['d']}, D = {doc['D']}" if doc["d"] else "    (d -> infinity)")
        + f"    tasks: {law}",
        "alpha = ell/D, kappa = k/D, tau = n/D^2 are the learner's ratios; e_plain is plain linear "
        "attention (Result 1) at the same ell, k, n",
        "",
        "Hermite modes of f (a_m = E[f(g) h_m(g)]):",
        f"{'m':>4} {'a_m':>14} {'a_m^2':>14}  role",
    ]
    for r in doc["modes"]:
        a = "" if r["a_m"] is None else f"{r['a_m']:.10g}"
        lines.append(f"{r['m']:>4} {a:>14} {r['a_m_sq']:>14.10g}  {r['role']}")
    if bm.tasks == "gaussian":
        lines.append("task-law averages at finite d (beta_m(r) = Hermite coefficients of f(r .), r^2 = |w|^2/d):")
        for (m, mp), v in sorted(bm.B_values.items()):
            if m == mp:
                lines.append(f"  E[beta_{m}^2] = {v.to_str(12)}  ({v.provenance()})")
        lines.append(f"  E[f(r g)^2] = {bm.E_f2.to_str(12)}  ({bm.E_f2.provenance()})")
    lines += [
        "",
        "task spectrum of the D-dimensional linear problem, C~ = D E[theta theta^T]:",
        f"{'l':>3} {'degrees':>8} {'eigenvalue':>16} {'multiplicity':>13}  block",
    ]
    for b in ks.blocks:
        lines.append(
            f"{b.l:>3} {','.join(map(str, b.degrees)):>8} {b.eigenvalue:>16.10g} {b.multiplicity:>13}  {b.description}"
        )
    lines += [
        f"captured power sum_(m=1..K) E[beta_m^2] = {ks.captured_power:.12g}",
        f"rho_eff = rho + E[f^2] - captured = {ks.rho_eff:.12g}   (the kernel learner's floor)",
        f"plain-attention floor rho_nonlinear = {doc['floor_plain']:.12g}",
        "",
        (
            "prediction: linear deterministic equivalent in D dimensions, float64"
            if kc.branch == "linear-D"
            else "prediction: nothing captured: the a1 = 0 branch, Eq. (10), in D dimensions"
        ),
        f"{'alpha':>9} {'kappa':>9} {'tau':>9} {'lam':>9} {'ell':>9} {'k':>9} {'n':>11} {'e':>14} {'e_plain':>14}",
    ]
    c = kc.columns

    def fmt(x, spec):
        return format(x, spec) if math.isfinite(x) else "-"

    for i in range(len(kc)):
        lines.append(
            f"{c['alpha'][i]:>9.5g} {c['kappa'][i]:>9.5g} {c['tau'][i]:>9.5g} {c['lam'][i]:>9.5g} "
            f"{fmt(c['ell'][i], '>9.6g')} {fmt(c['k'][i], '>9.6g')} {fmt(c['n'][i], '>11.7g')} "
            f"{c['e'][i]:>14.8g} {c['e_plain'][i]:>14.8g}".replace(" nan", "   -")
        )
    if np.isinf(c["e"]).any() or np.isinf(c["e_plain"]).any():
        lines.append(f"inf: {DIVERGES}")
    return "\n".join(lines)
