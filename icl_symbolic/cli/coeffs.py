"""``icl-symbolic coeffs``: Hermite coefficients, a1 and rho_nonlinear of a teacher.

Paper: Eq. (2), p. 2 and Eq. (8), p. 3.  Parsing and formatting only; the
mathematics is :func:`icl_symbolic.engine.hermite.hermite_coeffs`.
"""

from __future__ import annotations

import json

from icl_symbolic.api.coeffs import hermite_coeffs, library, plot_spectrum
from icl_symbolic.cli._args import (
    EXIT_OK_BAD_INPUT,
    ICLError,
    add_output_options,
    ascii_int,
    check_exact_rho,
    check_output_paths,
    defaults,
    document,
    emit_json,
    epilog,
    progress_printer,
    save_figure,
    write_text,
)

_FIELDS = (
    ("E_f2", "E[f^2]"),
    ("a1_sq", "a1^2"),
    ("rho_f", "rho_f = rho + E[f^2]"),
    ("rho_nonlinear", "rho_nonlinear = rho_f - a1^2"),
    ("noise_normalized", "rho_nonlinear / a1^2"),
    ("signal_fraction", "a1^2 / E[f^2]"),
    ("parseval_residual", "Parseval residual"),
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "coeffs",
        help="Hermite coefficients a_m, a1, rho_f, rho_nonlinear of a teacher f(g)",
        description="Hermite coefficients a_m = E[f(g) h_m(g)] (orthonormal probabilists' "
        "Hermite) and the effective noise rho_nonlinear = rho + E[f^2] - a1^2 "
        "(arXiv:2610.10761, Eq. 2 and Eq. 8). Exact where a closed form exists, "
        "else mpmath quadrature with an error estimate.",
        epilog=epilog(
            EXIT_OK_BAD_INPUT,
            [
                'icl-symbolic coeffs "tanh(g)" --rho 0.1 --digits 40',
                "icl-symbolic coeffs --library --json-out teachers.json",
            ],
        ),
    )
    p.add_argument(
        "expr",
        nargs="?",
        metavar="EXPR",
        help="teacher in the input language, e.g. 'tanh(g)' (see docs/input-language.md)",
    )
    p.add_argument("--rho", default=defaults.RHO, help="label-noise variance rho >= 0 (read exactly: 0.1 = 1/10)")
    p.add_argument("--digits", type=ascii_int, default=defaults.DIGITS, help="significant digits")
    p.add_argument("--M", type=ascii_int, default=defaults.M, help="highest Hermite order")
    p.add_argument("--library", action="store_true", help="the built-in teacher table instead of EXPR")
    add_output_options(
        p,
        csv="write the spectrum (teacher, m, a_m, a_m^2, method) as CSV",
        plot="draw the Hermite energy spectrum a_m^2 against m",
    )
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
    check_exact_rho(args.rho)
    check_output_paths(args)


def run(args) -> int:
    _check_args(args)
    if args.library:
        say = progress_printer(args.quiet)
        results = library(
            M=args.M,
            rho=args.rho,
            digits=args.digits,
            progress=None if say is None else (lambda i, n, name: say(f"[{i + 1}/{n}] {name}")),
        )
    else:
        results = [
            (
                args.expr,
                hermite_coeffs(
                    args.expr, M=args.M, rho=args.rho, digits=args.digits, progress=progress_printer(args.quiet)
                ),
            )
        ]

    # all computation is done: now write files (atomically) and print
    if args.plot:
        save_figure(plot_spectrum(*results), args.plot)
    if args.csv:
        write_text(args.csv, spectrum_csv(results))
    emit_json(args, json_document(results, args))
    if not args.json:
        print(library_table(results, args.digits) if args.library else result_table(results[0][1]))
    return 0


def json_document(results, args) -> dict:
    """The --json object: ``rho``, ``digits``, ``M`` and one point per teacher
    (:meth:`HermiteResult.to_json` plus its ``name``)."""
    return document(
        "coeffs",
        [r.to_json() | {"name": name} for name, r in results],
        rho=str(results[0][1].rho),
        digits=args.digits,
        M=args.M,
    )


# -- formatting ---------------------------------------------------------------


def _short(expr, width=34) -> str:
    s = str(expr)
    return s if len(s) <= width else s[: width - 3] + "..."


def result_table(r) -> str:
    """Human-readable table: exact form and decimal side by side, and provenance."""
    lines = [
        f"f(g) = {r.label}    rho = {r.rho}    digits = {r.digits}    method: {r.method}",
        "convention: a_m = E[f(g) h_m(g)], h_m = He_m/sqrt(m!) (arXiv:2610.10761 Eq. 2, Eq. 8)",
        "",
    ]
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
    head = (
        f"{'name':<10} {'f(g)':<14} {'a1':<{w}} {'E[f^2]':<{w}} {'rho_nonlinear':<{w}} "
        f"{'rho_nl/a1^2':<{w}} {'residual':<{w}} method"
    )
    rows = [
        f"rho = {results[0][1].rho}, a_0..a_{results[0][1].M}; decimals shown to {n} digits "
        f"(use --json for all {digits})",
        head,
    ]
    for name, r in results:

        def s(v):
            return "undefined" if v is None else v.to_str(n)

        rows.append(
            f"{name:<10} {_short(r.label, 14):<14} {s(r.a1):<{w}} {s(r.E_f2):<{w}} "
            f"{s(r.rho_nonlinear):<{w}} {s(r.noise_normalized):<{w}} "
            f"{s(r.parseval_residual):<{w}} {r.method}"
        )
    return "\n".join(rows)


def spectrum_csv(results) -> str:
    lines = ["teacher,m,a_m,a_m_squared,method"]
    for name, r in results:
        for m, (v, e2) in enumerate(zip(r.a, r.spectrum_values())):
            lines.append(f"{json.dumps(name)},{m},{v.to_str(r.digits)},{e2.to_str(r.digits)},{v.method}")
    return "\n".join(lines) + "\n"
