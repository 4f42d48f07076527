"""``icl-symbolic coeffs``: Hermite coefficients, a1 and rho_nonlinear of a teacher.

Paper: Eq. (2), p. 2 and Eq. (8), p. 3.  Parsing and formatting only; the
mathematics is :func:`icl_symbolic.hermite.hermite_coeffs`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mpmath

from ..errors import ICLError
from ..hermite import hermite_coeffs
from ..io import save_figure, write_text
from ..library import library_coeffs
from ..plotting import spectrum_figure

_FIELDS = (("E_f2", "E[f^2]"), ("a1_sq", "a1^2"), ("rho_f", "rho_f = rho + E[f^2]"),
           ("rho_nonlinear", "rho_nonlinear = rho_f - a1^2"),
           ("noise_normalized", "rho_nonlinear / a1^2"), ("signal_fraction", "a1^2 / E[f^2]"),
           ("parseval_residual", "Parseval residual"))


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "coeffs", help="Hermite coefficients a_m, a1, rho_f, rho_nonlinear of a teacher f(g)",
        description="Hermite coefficients a_m = E[f(g) h_m(g)] (orthonormal probabilists' "
                    "Hermite) and the effective noise rho_nonlinear = rho + E[f^2] - a1^2 "
                    "(arXiv:2610.10761, Eq. 2 and Eq. 8). Exact where a closed form exists, "
                    "else mpmath quadrature with an error estimate.")
    p.add_argument("expr", nargs="?", metavar="EXPR",
                   help="teacher in the input language, e.g. 'tanh(g)' (see docs/input-language.md)")
    p.add_argument("--rho", default="0", help="label-noise variance rho >= 0 (read exactly: 0.1 = 1/10)")
    p.add_argument("--digits", type=int, default=30, help="significant digits (default 30)")
    p.add_argument("--M", type=int, default=8, help="highest Hermite order (default 8)")
    p.add_argument("--json", action="store_true", help="print a JSON document instead of the table")
    p.add_argument("--plot", metavar="FILE.png", help="draw the Hermite energy spectrum a_m^2 vs m")
    p.add_argument("--csv", metavar="FILE.csv", help="write the spectrum (m, a_m, a_m^2) as CSV")
    p.add_argument("--library", action="store_true", help="the built-in teacher table")
    p.set_defaults(func=run)


def _check_args(args) -> None:
    if args.library and args.expr:
        raise ICLError("give either EXPR or --library, not both")
    if not args.library and not args.expr:
        raise ICLError("missing EXPR (e.g. 'tanh(g)'), or use --library")
    if not 1 <= args.digits <= 1000:
        raise ICLError(f"--digits must be between 1 and 1000, got {args.digits}")
    if not 0 <= args.M <= 200:
        raise ICLError(f"--M must be between 0 and 200, got {args.M}")
    for opt, suffixes in (("plot", (".png", ".pdf", ".svg")), ("csv", (".csv",))):
        path = getattr(args, opt)
        if path is not None and Path(path).suffix.lower() not in suffixes:
            raise ICLError(f"--{opt}: {path!r} must end in {' or '.join(suffixes)}")


def _progress(i, n, name):
    print(f"[{i + 1}/{n}] {name}", file=sys.stderr, flush=True)


def run(args) -> int:

    _check_args(args)
    if args.library:
        results = library_coeffs(M=args.M, rho=args.rho, digits=args.digits, progress=_progress)
    else:
        results = [(args.expr, hermite_coeffs(args.expr, M=args.M, rho=args.rho, digits=args.digits))]

    # all computation is done: now write files (atomically) and print
    if args.plot:
        save_figure(spectrum_figure(results), args.plot)
    if args.csv:
        write_text(args.csv, spectrum_csv(results))
    if args.json:
        docs = [r.to_json() | {"name": name} for name, r in results]
        print(json.dumps(docs if args.library else docs[0], indent=2))
    elif args.library:
        print(library_table(results, args.digits))
    else:
        print(result_table(results[0][1]))
    return 0


# -- formatting ---------------------------------------------------------------

def _short(expr, width=34) -> str:
    s = str(expr)
    return s if len(s) <= width else s[:width - 3] + "..."


def result_table(r) -> str:
    """Human-readable table: exact form and decimal side by side, and provenance."""
    lines = [f"f(g) = {r.label}    rho = {r.rho}    digits = {r.digits}    method: {r.method}",
             "convention: a_m = E[f(g) h_m(g)], h_m = He_m/sqrt(m!) (arXiv:2610.10761 Eq. 2, Eq. 8)",
             ""]
    w = r.digits + 8
    lines.append(f"{'m':>3}  {'a_m (decimal)':<{w}}  {'exact form':<34}  how obtained")
    for m, v in enumerate(r.a):
        ex = _short(v.exact) if v.method == "exact" else "-"
        lines.append(f"{m:>3}  {v.to_str(r.digits):<{w}}  {ex:<34}  {v.provenance()}")
    lines.append("")
    lines.append(f"{'quantity':<30}  {'decimal':<{w}}  {'exact form':<34}  how obtained")
    for key, name in _FIELDS:
        v = getattr(r, key)
        if key == "parseval_residual":
            name = f"E[f^2] - sum_(m<={r.M}) a_m^2"
        if v is None:
            lines.append(f"{name:<30}  {'undefined':<{w}}  {'-':<34}  see note")
            continue
        ex = _short(v.exact) if v.method == "exact" else "-"
        lines.append(f"{name:<30}  {v.to_str(r.digits):<{w}}  {ex:<34}  {v.provenance()}")
    for note in r.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def library_table(results, digits) -> str:
    n = min(digits, 12)
    w = n + 8
    head = (f"{'name':<10} {'f(g)':<14} {'a1':<{w}} {'E[f^2]':<{w}} {'rho_nonlinear':<{w}} "
            f"{'rho_nl/a1^2':<{w}} {'residual':<{w}} method")
    rows = [f"rho = {results[0][1].rho}, a_0..a_{results[0][1].M}; decimals shown to {n} digits "
            f"(use --json for all {digits})", head]
    for name, r in results:
        def s(v):
            return "undefined" if v is None else v.to_str(n)
        rows.append(f"{name:<10} {_short(r.label, 14):<14} {s(r.a1):<{w}} {s(r.E_f2):<{w}} "
                    f"{s(r.rho_nonlinear):<{w}} {s(r.noise_normalized):<{w}} "
                    f"{s(r.parseval_residual):<{w}} {r.method}")
    return "\n".join(rows)


def spectrum_csv(results) -> str:
    lines = ["teacher,m,a_m,a_m_squared,method"]
    for name, r in results:
        for m, (v, e2) in enumerate(zip(r.a, r.spectrum)):
            lines.append(f"{json.dumps(name)},{m},{v.to_str(r.digits)},{mpmath.nstr(e2, r.digits)},{v.method}")
    return "\n".join(lines) + "\n"
