"""Check kinds for the asymptotic theory: Result 1 (Eq. (9), p. 3), the a1 = 0 branch
(Eq. (10), p. 3) and the task-diversity limit (Eq. (11), p. 4), as calls of library
functions compared with a claimed expression or with a second call.
"""

from __future__ import annotations

import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.values import Value
from icl_symbolic.diagnosis.scale import explain_ratio, expr_key, slip_report_sweep
from icl_symbolic.output.plotting import check_sweep_figure, png_bytes
from icl_symbolic.verification.checks.common import lazy_family, numeric_value, pretty
from icl_symbolic.verification.judge import compare
from icl_symbolic.verification.registry import (
    PASS_THROUGH,
    SWEEP_NAMES,
    Outcome,
    Param,
    call_theory,
    check_kind,
    param_text,
)


def _call_points(call, vals_fn):
    """Evaluate a parsed call at every point of its sweep; returns (list of floats, sweep)."""
    n = call["length"] or 1
    results, sweep = [], {}
    for i in range(n):
        kwargs = {}
        for k, a in call["args"].items():
            item = a[i] if isinstance(a, list) else a
            if k in PASS_THROUGH:
                kwargs[k] = item
            else:
                kwargs[k] = int(item) if item.is_Integer else numeric_value(item, vals_fn)
                if isinstance(a, list):
                    sweep.setdefault(k, []).append(kwargs[k])
        out = call_theory(call["function"], kwargs)
        x = float(out.value) if isinstance(out, Value) else float(out)
        results.append(x * numeric_value(call["scale"], vals_fn))
    return results, sweep


def _judge_points(claim, xs, ys):
    """Worst point of a sweep under the claim's tolerance: (index, holds_all)."""
    worst, worst_score, all_hold = 0, -1.0, True
    for i, (x, y) in enumerate(zip(xs, ys)):
        h, res, _, _ = compare(Value(x, "numeric"), Value(y, "numeric"), claim.tolerance)
        bound = claim.tolerance.value * (abs(y) if claim.tolerance.kind == "rel" else 1.0)
        score = float(res) / bound if bound > 0 else float("inf")
        all_hold &= h
        if score > worst_score:
            worst, worst_score = i, score
    return worst, all_hold


@check_kind(
    "theory_value",
    params={
        "f": Param("teacher", False, None, "teacher whose a1, rho_f, rho_nonlinear the expressions may use"),
        "rho": Param("const", False, sympy.Integer(0), "label noise variance for the family values"),
        "call": Param("call", True, doc="{function, args, scale}: the computed side"),
        "versus": Param("call", False, None, "{function, args, scale}: the other side (or give claimed)"),
        "claimed": Param(
            "sweepfamily",
            False,
            None,
            "claimed value (may use a1, rho_f, rho_nonlinear, ... and the swept argument names alpha, kappa, tau, lam)",
        ),
        "plot": Param("bool", False, False, "embed a figure of the sweep in reports"),
    },
    needs=(("theory.asymptotic", "asymptotic ICL error"), ("theory.a1zero", "a1 = 0 branch")),
    needs_attrs={"theory.asymptotic": ("e_linear", "e_nonlinear")},
)
def check_theory_value(claim) -> Outcome:
    """A value of the asymptotic theory (Result 1 Eq. 9; Eq. 10; Eq. 11) against a claim.

    ``call`` names a theory function (``e_linear``, ``e_nonlinear``,
    ``e_nonlinear_normalized``, ``e_a1zero``, ``task_diversity_limit``, ...) with
    ``args``; string arguments are family expressions (``"rho_nonlinear/a1^2"``)
    evaluated for the claim's teacher ``f`` and noise ``rho``; ``scale``
    multiplies the result.  The other side is ``claimed`` (an expression) or
    ``versus`` (a second call).  List-valued arguments sweep; the worst point
    decides.  A mismatch is diagnosed by the ratio of the two sides against
    the family (e.g. a1^2: the MSE normalisation of Result 1).
    """
    p = claim.parsed
    if (p["versus"] is None) == (p["claimed"] is None):
        raise ICLError("give exactly one of 'claimed' and 'versus'")
    fam = lazy_family(claim)
    xs, sweep = _call_points(p["call"], fam)
    if p["versus"] is not None:
        ys, _ = _call_points(p["versus"], fam)
        if len(ys) == 1 and len(xs) > 1:
            ys = ys * len(xs)
        other = _describe_call(p["versus"])
    else:
        ce = p["claimed"]
        ys = []
        for j in range(len(xs)):
            point = {k: v[j] for k, v in sweep.items()}
            for k, a in p["call"]["args"].items():  # scalar arguments too
                if k in SWEEP_NAMES and k not in point and not isinstance(a, list):
                    point[k] = numeric_value(a, fam)
            e = ce.xreplace(
                {
                    s: sympy.Float(point[s.name], 17)
                    for s in ce.free_symbols
                    if s.name in SWEEP_NAMES and s.name in point
                }
            )
            left = [s.name for s in e.free_symbols if s.name in SWEEP_NAMES]
            if left:
                raise ICLError(f"claimed uses {', '.join(left)}, which the call does not set")
            ys.append(numeric_value(e, fam))
        other = pretty(ce)
    if len(ys) != len(xs):
        raise ICLError("the two sides sweep different numbers of points")
    i, _ = _judge_points(claim, xs, ys)
    at = ", ".join(f"{k}={v[i]:g}" for k, v in sweep.items())
    note = "deterministic equivalent, d -> infinity (float64)"
    computed = Value(xs[i], "numeric", note=note)
    claimed = Value(ys[i], "numeric", note=note)
    detail = f"{_describe_call(p['call'])} = {xs[i]:.10g} vs {other} = {ys[i]:.10g}" + (
        f" (worst of {len(xs)} points, at {at})" if len(xs) > 1 else ""
    )
    figs = []
    if p["plot"] and sweep:
        figs.append(
            (
                f"{claim.id}: {_describe_call(p['call'])} vs {other}",
                png_bytes(check_sweep_figure(claim.id, sweep, xs, ys, _describe_call(p["call"]), other)),
            )
        )
    diag_fn = None
    if "f" in claim.params:

        def diag_fn():
            vals = fam()
            base = {k: vals[k] for k in ("a1", "E_f2", "rho")}
            d, what = explain_ratio(xs[i], ys[i], base, tol=_ratio_tol(claim, xs[i], ys[i]))
            if d is not None:
                d.slips = slip_report_sweep(
                    [(x, y, _claimed_tol(claim, x, y)) for x, y in zip(xs, ys)],
                    param_text(claim.params["f"]),
                    claim.parsed["rho"],
                    i,
                )
            if d is None or d.best is None:
                return d
            # the same relation must hold at every point of a sweep, not only the worst one
            for x, y in zip(xs, ys):
                dj, wj = explain_ratio(x, y, base, tol=_ratio_tol(claim, x, y))
                if dj is None or dj.best is None or wj != what or expr_key(dj.best.expr) != expr_key(d.best.expr):
                    # no single family quantity explains the whole sweep: no diagnosis
                    d.subject = (
                        f"the {what} is not the same family quantity at every point of the sweep; at the worst point it"
                    )
                    d.nearest = d.matches[:1] + d.nearest
                    d.matches = []
                    return d
            d.subject = f"the {what} (the same at all {len(xs)} points)" if len(xs) > 1 else f"the {what}"
            return d

    return Outcome(computed, claimed, detail, diagnosis_fn=diag_fn, figures=figs)


def _claimed_tol(claim, x, y):
    """Absolute tolerance on the claimed side y implied by the claim's tolerance on x - y."""
    t = claim.tolerance
    if t.kind == "rel":
        return t.value * abs(x)
    if t.kind == "abs":
        return t.value
    return None


def _ratio_tol(claim, x, y):
    """Absolute tolerance on the ratio x/y implied by the claim's tolerance on x - y."""
    t = claim.tolerance
    if y == 0:
        return None
    if t.kind == "rel":
        return t.value * abs(x / y)
    if t.kind == "abs":
        return t.value / abs(y)
    return None


def _describe_call(call) -> str:
    args = ", ".join(f"{k}={_short(v)}" for k, v in call["args"].items())
    s = f"{call['function']}({args})"
    if call["scale"] != 1:
        s = f"{pretty(call['scale'])} * {s}"
    return s


def _short(v):
    if isinstance(v, list):
        return f"[{_short(v[0])} .. {_short(v[-1])}]" if len(v) > 1 else f"[{_short(v[0])}]"
    return pretty(v) if not isinstance(v, str) else v


@check_kind(
    "theory_bound",
    params={
        "f": Param("teacher", False, None, "teacher whose a1, rho_f, rho_nonlinear the expressions may use"),
        "rho": Param("const", False, sympy.Integer(0), "label noise variance for the family values"),
        "call": Param("call", True, doc="{function, args, scale}: the bounded side"),
        "bound": Param("call", True, doc="{function, args, scale}: the bound, same sweep"),
        "relation": Param("str", True, doc="'<=' (call <= bound at every point) or '>='", choices=("<=", ">=")),
    },
    needs=(("theory.asymptotic", "asymptotic ICL error"),),
    needs_attrs={"theory.asymptotic": ("e_linear", "e_nonlinear")},
)
def check_theory_bound(claim) -> Outcome:
    """An inequality between two theory calls at every point of a sweep (e.g. e_IDG <= e_ICL).

    The tolerance (``abs`` or ``rel``) is the float64 slack allowed on the wrong side
    of the bound; the claim holds when no point violates the relation by more.  The
    detail reports the point closest to (or furthest beyond) the bound.
    """
    p = claim.parsed
    fam = lazy_family(claim)
    xs, sweep = _call_points(p["call"], fam)
    ys, _ = _call_points(p["bound"], fam)
    if len(ys) == 1 and len(xs) > 1:
        ys = ys * len(xs)
    if len(ys) != len(xs):
        raise ICLError("the two sides sweep different numbers of points")
    sign = 1.0 if p["relation"] == "<=" else -1.0
    tol = claim.tolerance
    slack = [tol.value * (abs(y) if tol.kind == "rel" else 1.0) for y in ys]
    excess = [sign * (x - y) for x, y in zip(xs, ys)]  # > 0: on the wrong side
    i = max(range(len(xs)), key=lambda j: excess[j])
    holds = all(e <= s for e, s in zip(excess, slack))
    at = ", ".join(f"{k}={v[i]:g}" for k, v in sweep.items())
    detail = (
        f"{_describe_call(p['call'])} {p['relation']} {_describe_call(p['bound'])} at all {len(xs)} points: "
        f"{'yes' if holds else 'NO'}; closest at {at or 'the point'}: {xs[i]:.10g} vs {ys[i]:.10g} "
        f"(margin {-excess[i]:.4g})"
    )
    note = "deterministic equivalent, d -> infinity (float64)"
    return Outcome(
        Value(xs[i], "numeric", note=note),
        Value(ys[i], "numeric", note=note),
        detail,
        holds=holds,
        residual_expr="0" if holds else f"violated by {excess[i]:.3g}",
        mde_note="deterministic inequality: no sampling error",
    )


KINDS = (check_theory_value.kind, check_theory_bound.kind)
