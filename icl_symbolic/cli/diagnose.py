"""``icl-symbolic diagnose``: which slip turns what the derivation needs into what was claimed.

Parsing and formatting only.  Numbers are named within the teacher's family by
:func:`icl_symbolic.diagnosis.scale.diagnose_value`; the error models of the
catalogue are tried by :mod:`icl_symbolic.diagnosis.slips` (numbers, formulas) and
:mod:`icl_symbolic.diagnosis.curves` (curves).  See docs/diagnose.md.
"""

from __future__ import annotations

import argparse
import math

import mpmath

from icl_symbolic.api.diagnosis import (
    catalogue,
    diagnose_formula,
    diagnose_number,
    diagnose_value,
    explain_curve,
    parse_quantity,
    plot_curve_explanation,
    read_curve,
    teacher_context,
    to_mpf,
    tolerance_from_text,
)
from icl_symbolic.cli._args import (
    ICLError,
    add_output_options,
    check_exact_rho,
    check_output_paths,
    check_parameter,
    defaults,
    document,
    emit_json,
    epilog,
    parse_int,
    parse_number,
    save_figure,
    write_points_csv,
)
from icl_symbolic.cli._verdict import DEFAULT_MDE_PCT, parse_mde

STATUSES = (
    "0 the claim is explained by an error model, is consistent with the requirement, or (--value "
    "alone) is a quantity of the family; 1 nothing in the family or the catalogue explains it; 2 bad input "
    "(including a malformed --catalogue file; one line on stderr, nothing computed, no files written); "
    "3 (--curve) inconclusive: the theory without a slip fits the curve, but its MDE is above --mde (the "
    "curve could not have shown a slip of that size)"
)
EXAMPLES = [
    'icl-symbolic diagnose "sin(g)" --rho 0.1 --value 1.447',
    'icl-symbolic diagnose "sin(g)" --rho 0.1 --value 1.447029 --required "rho_nonlinear/a1^2"',
    'icl-symbolic diagnose "sin(g)" --rho 0.1 --formula "(a1^2 + rho_nonlinear)/a1^2" --required "rho_nonlinear/a1^2"',
    'icl-symbolic diagnose "sin(g)" --rho 0.1 --alpha 2 --kappa 2 --curve data.csv --plot fit.png',
    "(the catalogue of error models and the ranking criteria: docs/diagnose.md)",
]


def register(subparsers) -> None:
    d = subparsers.add_parser(
        "diagnose",
        help="name the slip behind a mismatched number, formula or curve",
        description="Try every error model of the catalogue (offset by one, rho_f for rho_nonlinear, "
        "a1^2 normalisation, Hermite conventions, finite-d scalings of tau/alpha/kappa, ridge "
        "normalisation, misplaced parenthesis, ...) on what the derivation requires and "
        "rank those that give what was claimed.",
        epilog=epilog(STATUSES, EXAMPLES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d.add_argument("f", metavar="EXPR", help="the teacher f(g), e.g. 'sin(g)'")
    d.add_argument("--rho", default=defaults.RHO, help="label noise variance rho")
    what = d.add_mutually_exclusive_group(required=True)
    what.add_argument("--value", help="a claimed number (its printed digits set --tol)")
    what.add_argument(
        "--formula",
        metavar="EXPR",
        help="a claimed formula in a1, E_f2, rho, rho_f, rho_nonlinear, a0, ... (needs --required)",
    )
    what.add_argument(
        "--curve",
        metavar="FILE.csv",
        help="a claimed curve: CSV with columns tau,e (or kappa,e or alpha,e), optionally se",
    )
    d.add_argument("--required", metavar="QUANTITY", help="what the derivation needs, e.g. 'rho_nonlinear/a1^2'")
    d.add_argument("--tol", help="absolute tolerance for --value (default: half a unit in its last digit)")
    d.add_argument("--alpha", help="alpha = ell/d (for formulas that use it, and curves not over alpha)")
    d.add_argument("--kappa", help="kappa = k/d (for formulas that use it, and curves not over kappa)")
    d.add_argument("--tau", help="tau = n/d^2 (for formulas that use it, and curves not over tau)")
    d.add_argument("--lam", default=str(defaults.LAM), help="ridge lam of Eq. (6)")
    d.add_argument(
        "--d",
        default=str(defaults.D),
        help="dimension d, for the finite-d error models (tau (d+1)/d, kappa rounding, ...)",
    )
    d.add_argument(
        "--mde",
        default=None,
        help="with --curve: target minimum detectable error in percent (default 5): 'consistent' needs the "
        "curve's MDE (the smallest relative shift of every point its chi2 test flags with 90 %% power) at or "
        "below it, otherwise the verdict is 'inconclusive' (exit 3)",
    )
    d.add_argument(
        "--rel-err", help="relative standard error of each curve point when the CSV has no se column (default 0.02)"
    )
    d.add_argument(
        "--catalogue",
        metavar="FILE.toml",
        help="extra error models (same format as the shipped catalogue; docs/diagnose.md)",
    )
    add_output_options(
        d,
        plot="with --curve: plot data, theory and the best explanation",
        csv="write the points (one row per error model tried) as CSV",
    )
    d.set_defaults(func=run)


def _setting(args) -> dict:
    out = {}
    for name in ("alpha", "kappa", "tau", "lam"):
        text = getattr(args, name)
        if text is not None:
            v = parse_number(text, name)
            check_parameter(name, v, text)
            out[name] = v
    if args.d is not None:
        out["d"] = parse_int(args.d, "d", 1)
    return out


def _validate(args):
    """Everything checked before any computation (one-line errors, exit 2)."""
    rho = check_exact_rho(args.rho)
    check_output_paths(args)
    if args.plot and args.curve is None:
        raise ICLError("--plot: needs --curve")
    if args.formula is not None and args.required is None:
        raise ICLError("--formula: needs --required (the quantity the derivation needs)")
    if args.curve is not None and args.required is not None:
        raise ICLError("--required: not used with --curve (the theory curve is the requirement)")
    if args.rel_err is not None and args.curve is None:
        raise ICLError("--rel-err: only with --curve")
    if args.mde is not None and args.curve is None:
        raise ICLError("--mde: only with --curve")
    parse_mde(args.mde if args.mde is not None else f"{DEFAULT_MDE_PCT:g}")
    tol = None
    if args.value is not None:
        tolerance_from_text(args.value)  # validates VALUE as a decimal
        if args.tol is not None:
            tol = parse_number(args.tol, "tol")
            if tol <= 0:
                raise ICLError("--tol: must be positive")
    elif args.tol is not None:
        raise ICLError("--tol: only with --value")
    if args.required is not None:
        parse_quantity(args.required)
    if args.formula is not None:
        parse_quantity(args.formula, what="--formula")
    cat = catalogue(args.catalogue)
    setting = _setting(args)
    rel = parse_number(args.rel_err, "rel-err") if args.rel_err is not None else None
    data = read_curve(args.curve, rel) if args.curve is not None else None
    return rho, tol, cat, setting, data


def run(args) -> int:
    rho, tol, cat, setting, data = _validate(args)
    if data is not None:
        return _run_curve(args, rho, cat, setting, data)
    ctx = teacher_context(args.f, rho, **{k: v for k, v in setting.items()})
    if args.formula is not None:
        rep = diagnose_formula(args.formula, args.required, ctx, cat)
        doc = document("diagnose", _number_points(rep), **rep.to_json())
        _emit(args, doc, lambda: _print_formula(rep))
        return 0 if rep.verdict() != "unexplained" else 1
    fam = diagnose_value(
        args.value, f=args.f, rho_value=rho, tol=tol, required=args.required if _in_family(args.required) else None
    )
    rep = diagnose_number(args.value, ctx, required=args.required, tol=tol, cat=cat)
    doc = document("diagnose", _number_points(rep), **rep.to_json(), family=fam.to_json())
    _emit(args, doc, lambda: _print_number(args, fam, rep))
    return 0 if (fam.matches or rep.verdict() != "unexplained") else 1


def _in_family(required) -> bool:
    if required is None:
        return False
    names = {s.name for s in parse_quantity(required).free_symbols}
    return names <= {"a1", "E_f2", "rho", "rho_f", "rho_nonlinear"}


#: The keys of every point of diagnose's JSON, whatever the mode (null where a key does not apply).
POINT_KEYS = (
    "model",
    "transform",
    "rank",
    "explains",
    "exact",
    "distance",
    "value",
    "intended",
    "applied",
    "score",
    "chi2",
    "k",
    "p_value",
    "params",
)


def _point(**kw) -> dict:
    return {k: kw.get(k) for k in POINT_KEYS}


def _number_points(rep) -> list:
    """One point per error model that matched (ranked) or came closest without matching."""
    out = []
    for m, ok in [(m, True) for m in rep.matches] + [(m, False) for m in rep.nearest]:
        j = m.to_json()
        out.append(
            _point(
                model=j["model"],
                transform=j["transform"],
                rank=j["rank"] if ok else None,
                explains=ok,
                exact=j["exact"],
                distance=j["distance"],
                value=j["value"],
                intended=j["intended"],
                applied=j["applied"],
            )
        )
    return out


def _curve_points(rep) -> list:
    """One point per curve model fitted (the theory without a slip included), in rank order."""
    out = []
    for x in rep.explanations:
        j = x.to_json()
        out.append(
            _point(
                model=j["model"],
                transform=j["transform"],
                rank=j["rank"],
                explains=j["explains"],
                score=j["score"],
                chi2=j["chi2"],
                k=j["k"],
                p_value=j["p_value"],
                params=j["params"],
            )
        )
    return out


def _emit(args, doc, printer) -> None:
    emit_json(args, doc)
    if args.csv:
        write_points_csv(args.csv, doc["points"], POINT_KEYS)
    if not args.json:
        printer()


def _print_matches(rep) -> None:
    if rep.matches:
        print("error models that explain it (rank, model, transform, result, match):")
        for m in rep.matches:
            how = "symbolic identity" if m.exact else f"distance {mpmath.nstr(m.distance, 3)}"
            on = f" on {m.intended}" if m.intended and rep.required is None else ""
            res = f" = {m.applied}" if m.applied else ""
            tie = f"  [tied with {', '.join(m.tied_with)}]" if m.tied_with else ""
            print(
                f"  {m.rank}. {m.model.name:<28} {m.model.written()}{on}{res}: "
                f"{mpmath.nstr(m.value, 12) if m.value is not None else ''} ({how}){tie}"
            )
    c = rep.coincidence()
    print(
        f"candidates tried: {rep.tried}"
        + (
            f" at tolerance {mpmath.nstr(rep.tol, 2)}; chance that some wrong candidate lands this close ~{c:.2g}"
            if c is not None
            else ""
        )
    )
    if rep.indistinguishable:
        print(f"same as no slip here: {', '.join(rep.indistinguishable)}")
    if rep.unavailable:
        print("not available: " + "; ".join(f"{n} ({r})" for n, r in rep.unavailable))


def _print_number(args, fam, rep) -> None:
    print(fam.summary())
    print(
        f"base values: a1 = {mpmath.nstr(to_mpf(fam.values['a1']), 12)}, E[f^2] = "
        f"{mpmath.nstr(to_mpf(fam.values['E_f2']), 12)}, rho = {args.rho}"
    )
    print("closest quantities:")
    for m in fam.nearest:
        flag = "=" if m.distance <= fam.tol else " "
        print(f"  {flag} {m.candidate.label():<60} {mpmath.nstr(m.value, 12):>16}  off by {mpmath.nstr(m.distance, 3)}")
    for m, words in fam.related:
        print(f"  related: {m.candidate.name} = {mpmath.nstr(m.value, 12)}  ({words})")
    if args.required is not None:
        print(rep.summary())
    _print_matches(rep)


def _print_formula(rep) -> None:
    print(rep.summary())
    _print_matches(rep)


def _run_curve(args, rho, cat, setting, data) -> int:
    ctx = teacher_context(args.f, rho, d=setting.get("d"))
    rep = explain_curve(data, ctx, setting, cat, mde=parse_mde(args.mde or f"{DEFAULT_MDE_PCT:g}"))
    b = rep.best
    rows = [
        {
            "x": float(x),
            "e": float(e),
            "se": float(se),
            "theory": float(t),
            "best": float(p),
            "mde_rel": float(m) if math.isfinite(m) else None,
        }
        for x, e, se, t, p, m in zip(data.x, data.e, data.se, rep.theory.pred, b.pred, rep.point_mde_rel)
    ]
    doc = document("diagnose", _curve_points(rep), **rep.to_json(), data=rows, best=b.name)
    if args.plot:
        save_figure(plot_curve_explanation(rep, ctx, data.x, f"{args.f}, rho = {args.rho}: {rep.verdict()}"), args.plot)

    def show():
        print(rep.summary())
        print("rank  model                         score(BIC)     chi2  k  p-value  explains  params")
        for x in rep.explanations:
            ps = ", ".join(f"{k}={v:.6g}" for k, v in x.params.items())
            print(
                f"{x.rank:>4}  {x.name:<28} {x.score:>10.4g} {x.chi2:>8.4g} {x.k:>2}  {x.p_value:>7.3g}  "
                f"{'yes' if x.explains else 'no ':<8}  {ps}"
            )
        if rep.indistinguishable:
            print(f"same as the theory here: {', '.join(rep.indistinguishable)}")
        if rep.not_applicable:
            print("not applicable: " + "; ".join(f"{n} ({r})" for n, r in rep.not_applicable))
        if rep.unavailable:
            print("not available: " + "; ".join(f"{n} ({r})" for n, r in rep.unavailable))

    _emit(args, doc, show)
    return {"consistent": 0, "explained": 0, "unexplained": 1, "inconclusive": 3}[rep.verdict()]
