"""``icl-symbolic appendix-a``: the Appendix A concentration facts and Result 1's conditions.

Paper: Appendix A, p. 7.  Parsing and formatting only; the mathematics is
:func:`icl_symbolic.model.covariance.appendix_a`.
"""

from __future__ import annotations

import csv
import io as _io

from icl_symbolic.api.covariance import appendix_a
from icl_symbolic.cli._args import (
    add_output_options,
    ascii_int,
    check_int,
    check_output_paths,
    defaults,
    document,
    emit_json,
    epilog,
    write_text,
)


def register(subparsers) -> None:
    q = subparsers.add_parser(
        "appendix-a",
        help="Appendix A: E[sigma_w], Var(sigma_w), r_eff and Result 1's conditions for covariances",
        description="For tasks w ~ N(0, C): sigma_w = |w|^2/d has E = tr(C)/d and Var = 2 tr(C^2)/d^2; "
        "Result 1 needs tr C = d and tr C^2 = o(d^2), i.e. r_eff = tr(C)^2/tr(C^2) -> infinity "
        "(arXiv:2610.10761, Appendix A, p. 7).",
        epilog=epilog(
            "0 Result 1's conditions hold or cannot be decided for every COV; 1 they fail for some COV; 2 bad input",
            ["icl-symbolic appendix-a powerlaw:0.9 spiked:0.5:5 --d 500"],
            no_plot="the result is four numbers and a verdict per covariance (use --csv)",
        ),
    )
    q.add_argument(
        "specs",
        nargs="+",
        metavar="COV",
        help="identity, powerlaw:p, spiked:f:r, lowrank:r, or a .npy file (matrix or spectrum)",
    )
    q.add_argument("--d", type=ascii_int, default=defaults.D, help="dimension for named families")
    add_output_options(q, csv="write one row per covariance as CSV")
    q.set_defaults(func=run)


FIELDS = ("name", "d", "mean_sigma", "var_sigma", "effective_rank", "trace_ok", "concentration", "holds", "reason")


def run(args) -> int:
    """One line (or JSON point) per covariance, from :func:`icl_symbolic.model.covariance.appendix_a`."""
    check_int(args.d, "d", 1)
    check_output_paths(args)
    results = appendix_a(*args.specs, d=args.d)
    points = [{k: getattr(a, k) for k in FIELDS} for a in results]
    if args.csv:
        buf = _io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(FIELDS)
        w.writerows([[p[k] for k in FIELDS] for p in points])
        write_text(args.csv, buf.getvalue())
    emit_json(args, document("appendix-a", points, d=args.d))
    if not args.json:
        for a in results:
            print(a.message())
    return 0 if all(a.holds is not False for a in results) else 1
