"""``icl-symbolic verify``: parsing and formatting only.

The work is done by :mod:`icl_symbolic.verify` (claim files, checks,
verdicts) and :mod:`icl_symbolic.verify.report` (Markdown/HTML).
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import io
from ..errors import ICLError
from ..verify.claimfile import load_claims, select
from ..verify.evidence import format_tally, tally
from ..verify.report import render, report_format
from ..verify.runner import format_line, run_claims, summarize, summary_line

EPILOG_VERIFY = """exit status: 0 every claim has its expected verdict; 1 some claim failed, errored or
is unavailable; 2 bad input (malformed claim file, unknown id, ...).
Examples:
  icl-symbolic verify
  icl-symbolic verify --full --report report.html
  icl-symbolic verify derivations/04_lemma1.toml --only 'lemma1.*'
  icl-symbolic verify my_claims.toml --json-out results.json"""


def register(subparsers) -> None:
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
    p.set_defaults(func=run)


def run(args) -> int:
    report_path = args.report
    if report_path:
        report_format(report_path)          # reject a bad suffix before running anything
    if args.json_out and not str(args.json_out).endswith(".json"):
        raise ICLError(f"--json-out: {args.json_out} must end in .json")
    claims = select(load_claims(args.files or None), args.only)
    if args.list:
        for c in claims:
            print(f"{c.id:<36} {c.method:<8} {c.evidence:<12} {'full ' if c.full else '     '}{c.expected:<9} "
                  f"{c.source}")
        return 0
    progress = None if args.quiet else sys.stderr
    results = run_claims(claims, full=args.full, progress=progress)
    summary = summarize(results)
    payload = [r.to_json() for r in results]
    if not args.json:
        width = max([len(r.claim.id) for r in results] + [10])
        for r in results:
            print(format_line(r, width))
        print(format_tally(tally(results)))
        print(summary_line(summary))
    else:
        print(json.dumps(payload, indent=2, default=str))
        if not args.quiet:
            print(format_tally(tally(results)), file=sys.stderr)
        print(summary_line(summary), file=sys.stderr)
    if args.json_out:
        io.write_json(args.json_out, payload)
    if report_path:
        meta = {"mode": "full" if args.full else "quick", "files": list(args.files or [])}
        io.write_text(report_path, render(report_path, results, summary, meta))
    return 0 if summary["ok"] else 1
