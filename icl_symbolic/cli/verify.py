"""``icl-symbolic verify``: parsing and formatting only.

Its output ends with what the run found in the paper (errata, scale slips, unstated conventions,
each with its claim ids), built from the claims' ``finding`` fields; ``--json`` carries the same
list as its top-level ``findings``.

The work is done by :mod:`icl_symbolic.verification` (claim files, checks,
verdicts) and :mod:`icl_symbolic.verification.report` (Markdown/HTML).
"""

from __future__ import annotations

import sys
from pathlib import Path

from icl_symbolic.api.verification import (
    PAPERS,
    TIERS,
    default_files,
    format_line,
    format_tally,
    shipped_name,
    summary_line,
    tally,
    verify,
)
from icl_symbolic.api.verification import claims as select_claims
from icl_symbolic.cli._args import (
    add_output_options,
    add_parallel_options,
    check_output_paths,
    document,
    emit_json,
    epilog,
    parse_parallel,
    write_points_csv,
)

EPILOG_VERIFY = epilog(
    "0 every claim has its expected verdict; 1 some claim failed, errored or is unavailable; "
    "2 bad input (malformed claim file, unknown id, bad output suffix, ...)",
    [
        "icl-symbolic verify",
        "icl-symbolic verify --full --report report.html",
        "icl-symbolic verify --full --jobs 2",
        "icl-symbolic verify lemma1 --only 'lemma1.*' --verbose",
        "icl-symbolic verify --paper-file 08 --list",
        "icl-symbolic verify my_claims.toml --json-out results.json",
    ],
    no_plot="a claim's verdict is not a curve; --report writes the tables, with any figures of the claims",
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "verify",
        help="check the paper's equations and numbers (claim files)",
        description="Run claim files (default: the shipped derivations/) and print one line per claim, "
        "as soon as its verdict is decided: id, verdict, residual or z-score, reason; then "
        "a summary and, last, what the run found in the paper (errata, scale slips, unstated conventions, "
        "with their claim ids).",
        epilog=EPILOG_VERIFY,
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="claim files, folders or globs (default: the shipped derivations); a name that is no "
        "file here names a shipped file, from any folder: lemma1, 04, derivations/04_lemma1.toml",
    )
    p.add_argument(
        "--paper",
        default=None,
        choices=tuple(PAPERS) + ("all",),
        help="whose claims to run: letey2026 (arXiv:2610.10761, the paper checked; the default when no "
        "FILE is given), lu2024 (arXiv:2405.11751, derivations/lu2024/) or all; with FILEs, keeps that "
        "paper's files among them (a folder includes its subfolders, so derivations/ is every paper's "
        "claims unless --paper says which); the evidence tally groups the results by paper",
    )
    p.add_argument(
        "--paper-file",
        action="append",
        metavar="NN",
        help="run the shipped claim file with this number or name (04, lemma1; repeatable; --list shows them)",
    )
    p.add_argument(
        "--only", action="append", metavar="ID", help="run only this claim id (glob patterns allowed; repeatable)"
    )
    p.add_argument(
        "--full", action="store_true", help="also run the simulation-backed claims (slower; the same as --tier full)"
    )
    p.add_argument(
        "--tier",
        choices=TIERS,
        default=None,
        help="quick (default), full (= --full) or deep (adds the paper-scale ladders: hours on "
        "2 cores, so it needs a budget such as --max-seconds 90000; use --jobs or --scheduler, and "
        "--cache DIR to resume a killed run)",
    )
    p.add_argument(
        "--cache",
        metavar="DIR",
        default=None,
        help="store every simulated seed in DIR and reuse stored ones: a killed run continues "
        "where it stopped (keyed by every input, the seed and the simulator's source)",
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="full details per claim: the whole reason, computed and claimed numbers with "
        "their provenance, the tolerance and why",
    )
    p.add_argument(
        "--list",
        action="store_true",
        help="list the selected claims without running them, under a '#' line per file naming it",
    )
    add_parallel_options(p, "the claims (one claim per process; verdicts print in claim order)")
    add_output_options(
        p, report="write a self-contained report", csv="write one row per claim (the keys of the JSON points) as CSV"
    )
    p.set_defaults(func=run)


def run(args) -> int:
    check_output_paths(args)  # reject a bad suffix before running anything
    jobs, scheduler = parse_parallel(args)
    claims = select_claims(args.files, only=args.only, paper_files=args.paper_file, paper=args.paper)
    if args.list:
        shipped = {str(p) for p in default_files("all")}
        last = None
        for c in claims:
            if c.file != last:
                last = c.file
                name = shipped_name(c.file)
                how = (
                    f" (icl-symbolic verify {name}, or --paper-file {Path(c.file).name[:2]})"
                    if str(c.file) in shipped
                    else ""
                )
                print(f"# {c.file}{how}")
            print(f"{c.id:<36} {c.method:<8} {c.evidence:<12} {c.tier:<6}{c.expected:<9} {c.source}")
        return 0
    progress = None if args.quiet else sys.stderr
    width = max([len(c.id) for c in claims] + [10])

    def show(r):
        print(format_line(r, width, verbose=args.verbose), flush=True)

    res = verify(
        selected=claims,
        full=args.full,
        tier=args.tier,
        progress=progress,
        on_result=None if args.json else show,
        jobs=jobs,
        scheduler=scheduler,
        cache=args.cache,
    )
    table = format_tally(tally(res.results))
    if not args.json:
        print(table)
        print(summary_line(res.summary))
        print(res.format_findings())
    elif not args.quiet:
        print(table, file=sys.stderr)
        print(summary_line(res.summary), file=sys.stderr)
        print(res.format_findings(), file=sys.stderr)
    points = res.points()
    emit_json(args, document("verify", points, summary=res.summary, findings=res.findings, evidence=tally(res.results)))
    if args.csv:
        write_points_csv(args.csv, points)
    if args.report:
        res.report(args.report, files=args.files)
    return 0 if res.ok else 1
