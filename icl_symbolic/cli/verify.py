"""``icl-symbolic verify`` and ``icl-symbolic diagnose``: parsing and formatting only.

The work is done by :mod:`icl_symbolic.claims` (load, run, judge),
:mod:`icl_symbolic.report` (Markdown/HTML) and :mod:`icl_symbolic.diagnose`.
"""

from __future__ import annotations

import json
import sys

from ..errors import ICLError

EPILOG_VERIFY = """exit status: 0 every claim has its expected verdict; 1 some claim failed, errored or
is unavailable; 2 bad input (malformed claim file, unknown id, ...).
Examples:
  icl-symbolic verify
  icl-symbolic verify --full --report report.html
  icl-symbolic verify derivations/04_lemma1.toml --only 'lemma1.*'
  icl-symbolic verify my_claims.toml --json-out results.json"""


def register(subparsers) -> None:
    import argparse

    p = subparsers.add_parser(
        "verify", help="check the paper's equations and numbers (claim files)",
        description="Run claim files (default: the shipped derivations/) and print one line per claim: "
                    "id, verdict, residual or z-score, reason; then a summary.",
        epilog=EPILOG_VERIFY, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="claim files, folders or globs (default: the shipped derivations)")
    p.add_argument("--only", action="append", metavar="ID",
                   help="run only this claim id (glob patterns allowed; repeatable)")
    p.add_argument("--full", action="store_true",
                   help="also run the simulation-backed claims (slower)")
    p.add_argument("--json", action="store_true",
                   help="print the results as a JSON list to stdout (summary goes to stderr)")
    p.add_argument("--json-out", metavar="FILE", help="also write the JSON results to FILE")
    p.add_argument("--report", metavar="FILE.md|FILE.html",
                   help="write a self-contained Markdown or HTML report")
    p.add_argument("--list", action="store_true", help="list the selected claims without running them")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run_verify)

    d = subparsers.add_parser(
        "diagnose", help="name what a number is among a teacher's quantities (scale mismatch)",
        description="Search rho, E[f^2], rho_f, rho_nonlinear, a1, a1^2, their ratios, the "
                    "normalisations by a1^2 and offsets by +-1 for VALUE, ranked by closeness.",
        epilog='example: icl-symbolic diagnose "sin(g)" --rho 0.1 --value 1.447')
    d.add_argument("f", metavar="EXPR", help="the teacher f(g), e.g. 'sin(g)'")
    d.add_argument("--rho", required=True, help="label noise variance rho")
    d.add_argument("--value", required=True, help="the number to identify (its printed digits set --tol)")
    d.add_argument("--tol", help="absolute matching tolerance (default: half a unit in the last digit of VALUE)")
    d.add_argument("--required", metavar="QUANTITY",
                   help="what the derivation needs, e.g. 'rho_nonlinear/a1^2'; the relation is proved symbolically")
    d.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    d.set_defaults(func=run_diagnose)


def run_verify(args) -> int:
    from .. import claims as C

    report_path = args.report
    if report_path:
        from ..report import report_format
        report_format(report_path)          # reject a bad suffix before running anything
    if args.json_out and not str(args.json_out).endswith(".json"):
        raise ICLError(f"--json-out: {args.json_out} must end in .json")
    claims = C.select(C.load_claims(args.files or None), args.only)
    if args.list:
        for c in claims:
            print(f"{c.id:<36} {c.method:<8} {'full ' if c.full else '     '}{c.expected:<9} {c.source}")
        return 0
    progress = None if args.quiet else sys.stderr
    results = C.run_claims(claims, full=args.full, progress=progress)
    summary = C.summarize(results)
    payload = [r.to_json() for r in results]
    if not args.json:
        width = max([len(r.claim.id) for r in results] + [10])
        for r in results:
            print(C.format_line(r, width))
        print(C.summary_line(summary))
    else:
        print(json.dumps(payload, indent=2, default=str))
        print(C.summary_line(summary), file=sys.stderr)
    from .. import io
    if args.json_out:
        io.write_json(args.json_out, payload)
    if report_path:
        from ..report import render
        meta = {"mode": "full" if args.full else "quick", "files": list(args.files or [])}
        io.write_text(report_path, render(report_path, results, summary, meta))
    return 0 if summary["ok"] else 1


def run_diagnose(args) -> int:
    import mpmath

    from ..cli._args import parse_number
    from ..diagnose import diagnose_value, tolerance_from_text
    from ..expr import parse_expr

    rho = parse_expr(args.rho, variables=())
    if rho.free_symbols or not rho.is_real or rho < 0:
        raise ICLError(f"--rho: {args.rho!r} must be a non-negative number")
    tolerance_from_text(args.value)     # validates VALUE as a decimal
    tol = None
    if args.tol is not None:
        tol = parse_number(args.tol, "tol")
        if tol <= 0:
            raise ICLError("--tol: must be positive")
    d = diagnose_value(args.value, f=args.f, rho_value=rho, tol=tol, required=args.required)
    if args.json:
        print(json.dumps(d.to_json(), indent=2))
        return 0 if d.matches else 1
    print(d.summary())
    print(f"base values: a1 = {mpmath.nstr(_v(d.values['a1']), 12)}, E[f^2] = "
          f"{mpmath.nstr(_v(d.values['E_f2']), 12)}, rho = {args.rho}")
    print("closest quantities:")
    for m in d.nearest:
        flag = "=" if m.distance <= d.tol else " "
        print(f"  {flag} {m.candidate.label():<60} {mpmath.nstr(m.value, 12):>16}  "
              f"off by {mpmath.nstr(m.distance, 3)}")
    for m, words in d.related:
        print(f"  related: {m.candidate.name} = {mpmath.nstr(m.value, 12)}  ({words})")
    return 0 if d.matches else 1


def _v(x):
    import mpmath
    return mpmath.mpf(x.value) if hasattr(x, "method") else mpmath.mpf(x)
