"""``icl-symbolic figure``: a thin layer over :func:`icl_symbolic.api.figures.figure`.

icl-symbolic figure 1 --out fig1/
icl-symbolic figure 1 --quick
"""

from __future__ import annotations

from icl_symbolic.api.figures import CSV_COLUMNS, FIGURES, figure
from icl_symbolic.cli._args import (
    EXIT_OK_BAD_INPUT,
    MAX_D,
    MAX_SEEDS,
    ICLError,
    add_order_option,
    add_output_options,
    add_parallel_options,
    check_output_paths,
    defaults,
    document,
    emit_json,
    epilog,
    parse_int,
    parse_parallel,
    progress_printer,
    write_points_csv,
)


def register(subparsers) -> None:
    q = subparsers.add_parser(
        "figure",
        help="regenerate Fig. 1, Fig. 2 or the a1 = 0 figure (PNG + CSV + JSON)",
        description="Regenerate a figure of the paper with theory overlays: 1 (Fig. 1, p. 4), "
        "2 (Fig. 2, p. 4), a1zero (Eq. (10), p. 3). --quick uses a small d. Writes "
        "figureN.png, figureN.csv and figureN.json (the metadata) into the folder.",
        epilog=epilog(
            EXIT_OK_BAD_INPUT,
            ["icl-symbolic figure 1 --out fig1/", "icl-symbolic figure 2 --quick"],
            no_plot="the figure itself is always written, as figureN.png in the --out folder",
        ),
    )
    q.add_argument("name", metavar="FIGURE", help="1, 2 or a1zero")
    q.add_argument("--out", default=None, help="output folder (default fig1/, fig2/, fig_a1zero/)")
    q.add_argument("--quick", action="store_true", help="small d and a coarser grid: minutes")
    q.add_argument("--seeds", default=str(defaults.SEEDS), help="number of seeds")
    q.add_argument("--d", default=None, help="override the dimension d (default: the paper's, smaller with --quick)")
    q.add_argument(
        "--tasks",
        default="gaussian",
        choices=("gaussian", "sphere"),
        help="task law: gaussian w ~ N(0, C) (the paper's) or sphere (|w|^2 = d exactly)",
    )
    add_order_option(
        q, "draw the corrected theory at each simulated point (open diamonds; rows of kind theory_finite_d)"
    )
    add_parallel_options(q, "the simulation runs and the finite-d theory points")
    add_output_options(q, csv="also write the plotted rows (the folder's figureN.csv) to FILE.csv")
    q.set_defaults(func=run, folder_options=("out",))


def run(args) -> int:
    name = str(args.name)
    if name not in FIGURES:
        raise ICLError(f"unknown figure {name!r}; expected one of {', '.join(FIGURES)}")
    overrides = {}
    if args.d is not None:
        overrides["d"] = parse_int(args.d, "d", 2, MAX_D)
    overrides["jobs"], overrides["scheduler"] = parse_parallel(args)
    seeds = parse_int(args.seeds, "seeds", 1, MAX_SEEDS)
    check_output_paths(args)
    meta = figure(
        name,
        args.out,
        quick=args.quick,
        seeds=seeds,
        progress=progress_printer(args.quiet),
        tasks=args.tasks,
        order=args.order,
        **overrides,
    )
    points = meta.pop("points")
    fields = {("command_line" if k == "command" else k): v for k, v in meta.items()}  # "command" is "figure"
    emit_json(args, document("figure", points, **fields))
    if args.csv:
        write_points_csv(args.csv, points, CSV_COLUMNS)
    if not args.json:
        print(meta["caption"])
        print(f"{meta['seconds']:.1f} s")
    return 0
