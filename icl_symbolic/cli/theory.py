"""``icl-symbolic theory``: asymptotic ICL error curves for a teacher f (Result 1 / Eq. 10).

Paper: Result 1, Eq. (9), p. 3; Eq. (10), p. 3; Appendix A, p. 7.  Parsing and
formatting only; the mathematics is :func:`icl_symbolic.theory.asymptotic.curve`.
"""

from __future__ import annotations

import csv
import io as _io
import sys

import numpy as np

from icl_symbolic.api.theory import DIVERGES, ERRORS, e_finite_d_points, plot_theory, theory_sweep
from icl_symbolic.cli._args import (
    EXIT_OK_BAD_INPUT,
    ICLError,
    add_order_option,
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

_SWEPT = ("rho", "alpha", "kappa", "lam", "tau")
_PAPER = "arXiv:2610.10761v1, Result 1 Eq. (9) p. 3; Eq. (10) p. 3"


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "theory",
        help="asymptotic ICL error curve of a teacher f (Result 1, Eq. 9; a1 = 0: Eq. 10)",
        description="Deterministic d -> infinity ICL error of the reduced linear-attention model "
        "for teacher f: e_linear(a1^2 C_train, a1^2 C_test, rho_nonlinear) (Result 1, "
        "Eq. 9), or Eq. (10) when a1 = 0. Every swept option takes a value, a comma "
        "list, or start:stop:count (geometric with --log); the grid is their product. "
        "A ridgeless point at tau = 1 (the interpolation peak) is reported as diverging: "
        "e = inf in the table and CSV, null with a reason in JSON.",
        epilog=epilog(
            EXIT_OK_BAD_INPUT,
            [
                'icl-symbolic theory "sin(g)" --tau 0.1:4:80 --plot out.png',
                'icl-symbolic theory "tanh(g)" --kappa 0.5:8:30 --log --tau 4 --json',
            ],
        ),
    )
    p.add_argument("expr", metavar="EXPR", help="teacher f(g), e.g. 'tanh(g)' (whitelisted input language)")
    p.add_argument("--rho", default=defaults.RHO, help="label-noise variance rho >= 0")
    p.add_argument("--alpha", default=f"{defaults.ALPHA:g}", help="context length ratio l/d > 0")
    p.add_argument("--kappa", default=f"{defaults.KAPPA:g}", help="task diversity k/d > 0")
    p.add_argument("--tau", default="0.1:4:80", help="pretraining ratio n/d^2 > 0")
    p.add_argument("--lam", default=f"{defaults.LAM:g}", help="ridge lam >= 0 (0: ridgeless)")
    p.add_argument("--log", action="store_true", help="start:stop:count grids are geometric")
    p.add_argument(
        "--ctrain",
        default=defaults.C_TRAIN,
        help="C_train: identity, powerlaw:p, spiked:f:r, lowrank:r, or a .npy matrix/spectrum",
    )
    p.add_argument("--ctest", default=None, help="C_test (same forms; default: same as --ctrain)")
    p.add_argument(
        "--d",
        type=ascii_int,
        default=None,
        help=f"dimension for non-identity covariance families "
        f"(default: the size of a --ctrain/--ctest .npy file, else {defaults.D}; the "
        f"identity theory does not depend on d)",
    )
    p.add_argument("--digits", type=ascii_int, default=defaults.DIGITS, help="digits for the Hermite coefficients")
    add_order_option(p, "print the corrected value at dimension --d next to the limit")
    p.add_argument(
        "--terms",
        default=None,
        help="with --order 1: comma list of finite-d terms to switch on "
        "(default all: sizes, param_count, task_norm, bank_resolvent, radial, population, min_norm_metric, "
        "wishart; docs/finite-d.md)",
    )
    p.add_argument(
        "--error",
        default="icl",
        choices=ERRORS,
        help="icl: fresh test tasks (the paper's ICL error; default); idg: in-distribution "
        "generalisation, the test task is one of the k pretraining tasks; gap: icl - idg "
        "(docs/idg.md)",
    )
    add_output_options(p, csv="write the points as CSV (e = inf at a diverging point)", plot="plot the curve(s)")
    p.set_defaults(func=run)


def _check_args(args) -> None:
    if not 5 <= args.digits <= 200:
        raise ICLError(f"--digits must be between 5 and 200, got {args.digits}")
    if args.d is not None and args.d < 1:
        check_int(args.d, "d", 1)
    check_output_paths(args)


def _is_npy(spec) -> bool:
    return str(spec).strip().lower().endswith(".npy")


def _needs_d(spec) -> bool:
    return str(spec).strip().lower() != "identity" and not _is_npy(spec)


def run(args) -> int:

    _check_args(args)
    grids = {name: parse_parameter(getattr(args, name), name, args.log) for name in _SWEPT}
    if getattr(args, "order", 0) == 1:
        return _run_finite_d(args, grids)
    d = args.d
    specs = [args.ctrain] + ([args.ctest] if args.ctest is not None else [])
    if d is None and any(_needs_d(sp) for sp in specs) and not any(_is_npy(sp) for sp in specs):
        d = defaults.D  # a .npy file sets d for a named family next to it
    # the grid's size and the covariances are checked (one-line errors) before anything is computed
    cv, warnings = theory_sweep(
        args.expr,
        args.ctrain,
        args.ctest,
        d=d,
        digits=args.digits,
        error=args.error,
        progress=progress_printer(args.quiet),
        moments_progress=progress_printer(args.quiet),
        **grids,
    )
    for w in warnings:
        print(f"icl-symbolic: warning: Appendix A: {w}", file=sys.stderr)

    doc = json_document(cv, args, d, warnings)
    # all computation is done: now write files (atomically) and print
    if args.plot:
        save_figure(plot_theory(cv, log=args.log), args.plot)
    if args.csv:
        write_text(args.csv, curve_csv(cv))
    emit_json(args, doc)
    if not args.json:
        print(curve_table(cv, doc))
    return 0


#: Largest grid --order 1 evaluates (each a1 = 0 or radial point may run a Monte Carlo over prompts).
MAX_FINITE_D_POINTS = 50


def _run_finite_d(args, grids) -> int:
    """``theory EXPR --d D --order 1``: limit and corrected value per point (icl_symbolic.theory.finite_d)."""
    if args.d is None:
        raise ICLError("--order 1 needs --d (the dimension the correction is for)")
    check_int(args.d, "d", 2)  # the finite-d terms exist for d >= 2 (docs/finite-d.md)
    if args.ctrain.strip().lower() != "identity" or (
        args.ctest is not None and args.ctest.strip().lower() != "identity"
    ):
        raise ICLError("--order 1 is implemented for identity task covariances only")
    if np.any(np.asarray(grids["lam"].values if hasattr(grids["lam"], "values") else grids["lam"]) != 0):
        raise ICLError(
            "--order 1 is implemented for the ridgeless fit (--lam 0) only: the O(1/d) terms with a ridge "
            "(the radial and population terms at lam > 0) are not derived (docs/finite-d.md)"
        )
    terms = None if args.terms is None else [t.strip() for t in args.terms.split(",") if t.strip()]
    pts = [
        (float(r), float(a), float(k), float(t))
        for r in np.ravel(_values(grids["rho"]))
        for a in np.ravel(_values(grids["alpha"]))
        for k in np.ravel(_values(grids["kappa"]))
        for t in np.ravel(_values(grids["tau"]))
    ]
    if len(pts) > MAX_FINITE_D_POINTS:
        raise ICLError(f"--order 1 evaluates at most {MAX_FINITE_D_POINTS} points, the grid has {len(pts)}")
    rows = []
    fds = e_finite_d_points(args.expr, pts, d=args.d, terms=terms, progress=progress_printer(args.quiet))
    for (rho, alpha, kappa, tau), fd in zip(pts, fds):
        if isinstance(fd, ICLError):  # no value at this point (e.g. the peak): the row says why
            rows.append(
                {
                    "rho": rho,
                    "alpha": alpha,
                    "kappa": kappa,
                    "tau": tau,
                    "e_theory": None,
                    "e_theory_finite_d": None,
                    "reason": str(fd),
                }
            )
            continue
        rows.append({"rho": rho, "alpha": alpha, "kappa": kappa, "tau": tau, **fd.json_fields()})
    doc = document(
        "theory",
        rows,
        expr=args.expr,
        d=args.d,
        order=1,
        method="d -> infinity limit (Result 1, Eq. (9); Eq. (10) for a1 = 0) plus the O(1/d) terms "
        "of icl_symbolic.theory.finite_d (docs/finite-d.md); ridgeless, C = I, Gaussian tasks; the "
        "radial term averages over one prompt's law by Monte Carlo, the population term over banks (the SE of "
        "the last one that enters: e_theory_finite_d_se); e_theory_finite_d_text holds the digits each value has",
    )
    emit_json(args, doc)
    if not args.json:
        print(
            f"ICL error of f(g) = {args.expr} at d = {args.d}: d -> infinity limit and finite-d correction "
            f"(docs/finite-d.md)"
        )
        print(f"{'rho':>6} {'alpha':>7} {'kappa':>7} {'tau':>7} {'limit':>10} {'corrected':>18} {'gap %':>8}  terms")
        for r in rows:
            if r["e_theory_finite_d"] is None:
                lim = "-" if r.get("e_theory") is None else f"{r['e_theory']:.6f}"
                print(
                    f"{r['rho']:6g} {r['alpha']:7g} {r['kappa']:7g} {r['tau']:7g} {lim:>10} {'-':>18} {'-':>8}  "
                    f"{r['reason']}"
                )
                continue
            terms_txt = ", ".join(f"{k} {v:+.4f}" for k, v in r["finite_d_terms"].items())
            print(
                f"{r['rho']:6g} {r['alpha']:7g} {r['kappa']:7g} {r['tau']:7g} {r['e_theory']:10.6f} "
                f"{r['e_theory_finite_d_text']:>18} {r['finite_d_gap_pct']:+8.2f}  {terms_txt}"
            )
        print(
            "corrected: +- is the Monte-Carlo SE (the population term's over banks above the peak, the radial "
            "term's over prompts below it); without +-, deterministic; "
            "'-' with a reason: no corrected value there (outside the checked scope: the limit alone is printed)"
        )
    return 0


def _values(g):
    return getattr(g, "values", g)


# -- formatting ---------------------------------------------------------------
def json_document(cv, args, d, warnings) -> dict:
    """The --json object: ``a1``, ``E_f2`` and, one entry per rho of the grid, the lists
    ``rho``, ``rho_f``, ``rho_nonlinear``; ``points`` (alpha, kappa, tau, lam, rho,
    rho_nonlinear, e, reason: e is null at a diverging point and reason says why)."""
    j = cv.to_json()
    points = j.pop("points")
    fields = {k: j[k] for k in ("a1", "E_f2", "rho", "rho_f", "rho_nonlinear", "branch")}
    return document(
        "theory",
        points,
        expr=args.expr,
        **fields,
        error=cv.error,
        C_train=args.ctrain,
        C_test=args.ctest if args.ctest is not None else args.ctrain,
        d=d,
        method=j["method"],
        provenance=j["provenance"],
        appendix_a_warnings=warnings,
        paper=_PAPER,
    )


def curve_csv(cv) -> str:
    buf = _io.StringIO()
    keys = ("alpha", "kappa", "tau", "lam", "rho", "rho_nonlinear", "e")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(keys[:-1] + ("error", "e"))  # which error (icl, idg, gap) the column e holds
    for i in range(len(cv)):
        w.writerow([repr(float(cv.columns[k][i])) for k in keys[:-1]] + [cv.error, repr(float(cv.columns["e"][i]))])
    return buf.getvalue()


def curve_table(cv, doc) -> str:
    tm = cv.moments
    rnl = doc["rho_nonlinear"]
    lines = [
        f"f(g) = {doc['expr']}    C_train = {doc['C_train']}    C_test = {doc['C_test']}"
        + (f"    d = {doc['d']}" if doc["d"] else ""),
        f"a1 = {tm.a1.to_str(16)}  ({tm.a1.provenance()})",
        f"E[f^2] = {tm.E_f2.to_str(16)}  ({tm.E_f2.provenance()})",
        "rho_nonlinear = rho + E[f^2] - a1^2 = " + ", ".join(f"{x:.12g}" for x in rnl),
        {
            "icl": "error: ICL (fresh test tasks)",
            "idg": "error: IDG (the test task is one of the k pretraining tasks; docs/idg.md)",
            "gap": "error: ICL - IDG gap (docs/idg.md)",
        }[cv.error],
        (
            "branch: Result 1, Eq. (9): e_linear(a1^2 C_train, a1^2 C_test, rho_nonlinear); "
            "deterministic equivalent, d -> infinity, float64"
            if cv.branch == "result1"
            else "branch: a1 = 0, Eq. (10) (lam > 0: Eq. (15) ridge curve); alpha, kappa do not matter at lam = 0"
        ),
        "",
    ]
    lines.append(f"{'alpha':>10} {'kappa':>10} {'tau':>10} {'lam':>10} {'rho':>8} {'e':>16}")
    c = cv.columns
    for i in range(len(cv)):
        lines.append(
            f"{c['alpha'][i]:>10.5g} {c['kappa'][i]:>10.5g} {c['tau'][i]:>10.5g} "
            f"{c['lam'][i]:>10.5g} {c['rho'][i]:>8.4g} {c['e'][i]:>16.10g}"
        )
    if np.isinf(c["e"]).any():
        lines.append(f"inf: {DIVERGES}")
    return "\n".join(lines)
