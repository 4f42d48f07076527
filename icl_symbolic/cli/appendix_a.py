"""``icl-symbolic appendix-a``: the Appendix A concentration facts and Result 1's conditions.

Paper: Appendix A, p. 7.  Parsing and formatting only; the mathematics is
:func:`icl_symbolic.covariance.appendix_a`.
"""

from __future__ import annotations

import json

from ..covariance import appendix_a, resolve_covariance
from ..errors import ICLError


def register(subparsers) -> None:
    q = subparsers.add_parser(
        "appendix-a", help="Appendix A: E[sigma_w], Var(sigma_w), r_eff and Result 1's conditions for covariances",
        description="For tasks w ~ N(0, C): sigma_w = |w|^2/d has E = tr(C)/d and Var = 2 tr(C^2)/d^2; "
                    "Result 1 needs tr C = d and tr C^2 = o(d^2), i.e. r_eff = tr(C)^2/tr(C^2) -> infinity "
                    "(arXiv:2610.10761, Appendix A, p. 7).")
    q.add_argument("specs", nargs="+", metavar="COV",
                   help="identity, powerlaw:p, spiked:f:r, lowrank:r, or a .npy file (matrix or spectrum)")
    q.add_argument("--d", type=int, default=64, help="dimension for named families (default 64)")
    q.add_argument("--json", action="store_true", help="print a JSON list instead of lines")
    q.set_defaults(func=run)


def run(args) -> int:
    """One line (or JSON object) per covariance, from :func:`icl_symbolic.covariance.appendix_a`."""
    if args.d < 1:
        raise ICLError(f"--d must be a positive integer, got {args.d}")
    results = [appendix_a(resolve_covariance(spec, args.d)) for spec in args.specs]
    if args.json:
        print(json.dumps([{"name": a.name, "d": a.d, "mean_sigma": a.mean_sigma, "var_sigma": a.var_sigma,
                           "effective_rank": a.effective_rank, "trace_ok": a.trace_ok,
                           "concentration": a.concentration, "holds": a.holds, "reason": a.reason}
                          for a in results], indent=2))
    else:
        for a in results:
            print(a.message())
    return 0 if all(a.holds is not False for a in results) else 1
