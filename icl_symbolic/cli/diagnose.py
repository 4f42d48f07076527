"""``icl-symbolic diagnose``: name what a number is among a teacher's quantities.

Parsing and formatting only; the search is
:func:`icl_symbolic.verification.diagnose.diagnose_value`.
"""

from __future__ import annotations

import mpmath

from .. import defaults
from ..errors import ICLError
from ..expr import parse_expr
from ..verification.diagnose import diagnose_value, to_mpf, tolerance_from_text
from ._args import add_output_options, check_output_paths, document, emit_json, epilog, parse_number


def register(subparsers) -> None:
    d = subparsers.add_parser(
        "diagnose", help="name what a number is among a teacher's quantities (scale mismatch)",
        description="Search rho, E[f^2], rho_f, rho_nonlinear, a1, a1^2, their ratios, the "
                    "normalisations by a1^2 and offsets by +-1 for VALUE, ranked by closeness.",
        epilog=epilog("0 VALUE matches a quantity within the tolerance; 1 it matches none (the closest "
                      "are listed); 2 bad input",
                      ['icl-symbolic diagnose "sin(g)" --rho 0.1 --value 1.447']))
    d.add_argument("f", metavar="EXPR", help="the teacher f(g), e.g. 'sin(g)'")
    d.add_argument("--rho", default=defaults.RHO, help="label noise variance rho")
    d.add_argument("--value", required=True, help="the number to identify (its printed digits set --tol)")
    d.add_argument("--tol", help="absolute matching tolerance (default: half a unit in the last digit of VALUE)")
    d.add_argument("--required", metavar="QUANTITY",
                   help="what the derivation needs, e.g. 'rho_nonlinear/a1^2'; the relation is proved symbolically")
    add_output_options(d, quiet=False)
    d.set_defaults(func=run)


def run(args) -> int:
    rho = parse_expr(args.rho, variables=())
    if rho.free_symbols or not rho.is_real or rho < 0:
        raise ICLError(f"--rho: {args.rho!r} must be a non-negative number")
    tolerance_from_text(args.value)     # validates VALUE as a decimal
    tol = None
    if args.tol is not None:
        tol = parse_number(args.tol, "tol")
        if tol <= 0:
            raise ICLError("--tol: must be positive")
    check_output_paths(args)
    d = diagnose_value(args.value, f=args.f, rho_value=rho, tol=tol, required=args.required)
    doc = d.to_json()
    emit_json(args, document("diagnose", doc.pop("nearest"), **doc))
    if args.json:
        return 0 if d.matches else 1
    print(d.summary())
    print(f"base values: a1 = {mpmath.nstr(to_mpf(d.values['a1']), 12)}, E[f^2] = "
          f"{mpmath.nstr(to_mpf(d.values['E_f2']), 12)}, rho = {args.rho}")
    print("closest quantities:")
    for m in d.nearest:
        flag = "=" if m.distance <= d.tol else " "
        print(f"  {flag} {m.candidate.label():<60} {mpmath.nstr(m.value, 12):>16}  "
              f"off by {mpmath.nstr(m.distance, 3)}")
    for m, words in d.related:
        print(f"  related: {m.candidate.name} = {mpmath.nstr(m.value, 12)}  ({words})")
    return 0 if d.matches else 1
