"""Planted-slip recall and precision of the error-model catalogue.

For each error model, teacher and parameter point, plant the slip in a number
(the required quantity with the slip applied, printed to a fixed number of
significant digits) or in a curve (the theory with the slip applied, with seeded
Gaussian relative noise), run the diagnosis, and record where the planted model
ranks.  Unplanted random perturbations of the same quantities measure how often
the catalogue "explains" something that is not a slip.

Used by ``benchmarks/bench_diagnose.py`` (the full table in docs/diagnose.md) and
by the tests (a seeded sample).  Paper: Eq. (8), p. 3; Result 1, Eq. (9), p. 3;
Eq. (10), p. 3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

import mpmath
import numpy as np

from icl_symbolic.diagnosis import curves as SC
from icl_symbolic.diagnosis import slips as S

#: The teachers of the benchmark: smooth odd, smooth saturating, kinked, polynomial,
#: a polynomial with a1 = 0 (and a0 != 0), and a rescaled erf.
TEACHERS = ("sin(g)", "tanh(g)", "relu(g)", "g^3", "(g^2 - 1)/sqrt(2) + g^4/4", "erf(g/2)")

#: Required quantities the number slips are planted in (context names; see slips.CONTEXT_NAMES).
REQUIRED = (
    "rho_nonlinear/a1^2",
    "rho_nonlinear",
    "rho_f",
    "a1^2",
    "rho_nonlinear*tau/(tau - 1)",
    "(1 + rho)^2",
    "1 + rho^2",
    "rho_nonlinear/alpha",
    "a1^2/kappa + rho_nonlinear",
    "tau*lam",
)

#: Parameter points (the setting names a formula may use).
POINTS = (
    dict(rho="0.1", d=20, alpha=2, kappa="1.53", tau="2.5", lam="0.01"),
    dict(rho="0.5", d=50, alpha=3, kappa="1.53", tau="4", lam="0.1"),
)


def printed(v, digits: int) -> str:
    """``v`` printed with ``digits`` significant digits, trailing zeros kept (they set the tolerance)."""
    if v == 0:
        return "0." + "0" * digits
    s = mpmath.nstr(v, digits, min_fixed=-30, max_fixed=30, strip_zeros=False)
    return format(Decimal(s), "f") if "e" in s else s


@dataclass
class Case:
    """One planted (or unplanted) trial and its outcome."""

    kind: str  # "number" or "curve"
    teacher: str
    point: int
    planted: str | None  # model name, or None for an unplanted perturbation
    where: str  # required quantity (numbers) or axis (curves)
    outcome: str  # rank1 | tie | lower | missed | same | na | explained | clean
    best: list = field(default_factory=list)
    effect: float | None = None  # curves: largest |slipped - theory| over the points, in standard errors


def _context(teacher, point):
    p = dict(point)
    rho = p.pop("rho")
    return S.teacher_context(teacher, rho, **{k: (str(v) if isinstance(v, str) else v) for k, v in p.items()})


def _setting_numbers(point):
    return {k: float(mpmath.mpf(v)) for k, v in point.items() if k != "rho"}


def number_cases(
    teachers=TEACHERS,
    points=POINTS,
    required=REQUIRED,
    digits: int = 6,
    models=None,
    cat=None,
    n_unplanted: int = 3,
    rng=None,
) -> list:
    """Plant every number model in every required quantity; plus unplanted perturbations.

    An unplanted perturbation multiplies the required value by ``1 + u``, ``|u|``
    log-uniform in [1e-3, 0.5] with a random sign, and counts as a false
    "explained" when any model matches it.
    """
    cat = cat or S.catalogue()
    rng = rng if rng is not None else np.random.default_rng(0)
    out = []
    for t in teachers:
        for ip, pt in enumerate(points):
            ctx = _context(t, pt)
            for rtext in required:
                req = S.parse_quantity(rtext)
                if ctx.missing(req):
                    continue
                with mpmath.workdps(40):
                    rv = ctx.evaluate(req)
                if rv is None or rv == 0:
                    continue
                for m in cat.for_kind("number"):
                    if not m.available or (models is not None and m.name not in models):
                        continue
                    e = m.apply(req)
                    with mpmath.workdps(40):
                        v = None if (e is None or ctx.missing(e)) else ctx.evaluate(e)
                    if v is None:
                        out.append(Case("number", t, ip, m.name, rtext, "na"))
                        continue
                    rep = S.diagnose_number(printed(v, digits), ctx, required=rtext, cat=cat)
                    out.append(Case("number", t, ip, m.name, rtext, _classify(rep, m.name), rep.best_names()))
                for _ in range(n_unplanted):
                    u = float(np.exp(rng.uniform(np.log(1e-3), np.log(0.5)))) * rng.choice([-1, 1])
                    rep = S.diagnose_number(printed(rv * (1 + mpmath.mpf(u)), digits), ctx, required=rtext, cat=cat)
                    out.append(
                        Case("number", t, ip, None, rtext, "explained" if rep.matches else "clean", rep.best_names())
                    )
    return out


def _classify(rep, planted) -> str:
    if rep.consistent or planted in rep.indistinguishable:
        return "same"
    names = [m.model.name for m in rep.matches]
    if planted not in names:
        return "missed"
    m = rep.matches[names.index(planted)]
    if m.rank != 1:
        return "lower"
    return "tie" if m.tied_with else "rank1"


#: Curve settings: tau axis (Fig. 1-like), kappa axis (Fig. 2-like).
CURVE_POINTS = (
    dict(
        axis="tau",
        x=(0.2, 0.4, 0.6, 0.8, 1.2, 1.5, 2, 3, 5, 8),
        rho="0.1",
        setting=dict(alpha=2.0, kappa=1.53, lam=0.0, d=16),
    ),
    dict(
        axis="kappa",
        x=(0.3, 0.5, 0.8, 1.1, 1.5, 2.2, 3.5, 6, 10),
        rho="0.1",
        setting=dict(alpha=4.0, tau=3.0, lam=0.01, d=16),
    ),
)
#: Values of fitted parameters when planting a model that has them.
PLANT_PARAMS = {"c": 1.7}


def _plant_curve(m, data, ctx, setting):
    env = SC.point_env(ctx, data, setting)
    base = SC.theory_values({k: env[k] for k in SC.THEORY_INPUTS})
    exprs, _ = SC._model_inputs(m)
    if m.params:
        params = {p.name: np.full(len(data.x), PLANT_PARAMS.get(p.name, p.init)) for p in m.params}
        if m.name == "offset_c":
            params["c"] = np.full(len(data.x), 0.3 * float(np.median(base)))
        inputs = {k: SC._vec(exprs[k], env, params) for k in SC.THEORY_INPUTS}
        b2 = SC.theory_values(inputs)
        if b2 is None:
            return None, base
        return (SC._vec(m.transform, dict(env, x=b2), params) if m.transform is not None else b2), base
    got = SC._fit(m, exprs, data, env, base)
    return (None if got is None else got[1]), base


def curve_cases(
    teachers=TEACHERS,
    points=CURVE_POINTS,
    noise: float = 0.01,
    seeds=(0, 1),
    models=None,
    cat=None,
    n_unplanted: int = 2,
) -> list:
    """Plant every curve model in every curve (noise: relative Gaussian, seeded); plus unplanted ones.

    The stated standard error of each point is ``noise * |e|`` (the truth).  An
    unplanted perturbation multiplies the theory by ``exp(s P(log x))`` with ``P`` a
    random cubic with mean 0 over the points (a change of shape: a pure rescale would
    be a slip, ``scale_c``), normalised to max |P| = 1, and ``s`` uniform in
    [0.05, 0.3], plus the same noise; also the bare theory plus noise.  Either
    counts as a false "explained" when the verdict is "explained".
    """
    cat = cat or S.catalogue()
    out = []
    for t in teachers:
        for ip, cp in enumerate(points):
            ctx = S.teacher_context(t, cp["rho"], d=cp["setting"].get("d"))
            x = np.array(cp["x"], dtype=float)
            shell = SC.CurveData(cp["axis"], x, np.ones_like(x), np.ones_like(x), "")
            for m in cat.for_kind("curve"):
                if not m.available or (models is not None and m.name not in models):
                    continue
                planted, base = _plant_curve(m, shell, ctx, cp["setting"])
                if planted is None or not np.all(np.abs(planted) > 0):
                    out.append(Case("curve", t, ip, m.name, cp["axis"], "na"))
                    continue
                if np.all(np.abs(planted - base) <= 1e-9 * np.abs(base)):
                    out.append(Case("curve", t, ip, m.name, cp["axis"], "same"))
                    continue
                for seed in seeds:
                    rng = np.random.default_rng([seed, ip, len(out)])
                    e = planted * (1 + noise * rng.standard_normal(len(x)))
                    data = SC.CurveData(cp["axis"], x, e, noise * np.abs(planted), "planted noise")
                    rep = SC.explain_curve(data, ctx, cp["setting"], cat)
                    out.append(
                        Case(
                            "curve",
                            t,
                            ip,
                            m.name,
                            cp["axis"],
                            _classify_curve(rep, m.name),
                            rep.best_names(),
                            float(np.max(np.abs(planted - base) / data.se)),
                        )
                    )
            env = SC.point_env(ctx, shell, cp["setting"])
            base = SC.theory_values({k: env[k] for k in SC.THEORY_INPUTS})
            for j in range(n_unplanted + 1):
                rng = np.random.default_rng([1000 + j, ip, len(out)])
                if j == 0:
                    shape = np.ones_like(base)
                else:
                    lx = np.log(x)
                    lx = (lx - lx.mean()) / (np.ptp(lx) or 1)
                    P = np.polyval(rng.standard_normal(4), lx)
                    P = P - P.mean()  # a change of shape, not a pure rescale
                    P = P / (np.max(np.abs(P)) or 1)
                    shape = np.exp(rng.uniform(0.05, 0.3) * P)
                e = base * shape * (1 + noise * rng.standard_normal(len(x)))
                data = SC.CurveData(cp["axis"], x, e, noise * np.abs(base * shape), "unplanted")
                rep = SC.explain_curve(data, ctx, cp["setting"], cat)
                out.append(
                    Case(
                        "curve",
                        t,
                        ip,
                        None,
                        cp["axis"] + (" (theory)" if j == 0 else ""),
                        "explained" if rep.verdict() == "explained" else "clean",
                        rep.best_names(),
                    )
                )
    return out


def _classify_curve(rep, planted) -> str:
    if rep.verdict() in ("consistent", "inconclusive"):  # the theory without a slip fits the curve
        return "missed"
    if planted in rep.indistinguishable:
        return "same"
    for x in rep.explanations:
        if x.name == planted:
            if x.rank != 1:
                return "lower"
            if not x.explains:
                return "missed"
            return "tie" if x.tied_with else "rank1"
    return "missed"


def table(cases, min_effect: float = 5.0) -> list:
    """Per (kind, model): counts and recall = (rank1 + tie)/(rank1 + tie + lower + missed).

    ``recall_visible``: the same over the curve cases whose slip moves some point by at least
    ``min_effect`` standard errors (a slip smaller than the noise cannot be found).
    """
    rows = {}
    for c in cases:
        if c.planted is None:
            continue
        r = rows.setdefault(
            (c.kind, c.planted), {k: 0 for k in ("rank1", "tie", "lower", "missed", "same", "na", "vis_n", "vis_hit")}
        )
        r[c.outcome] += 1
        if c.effect is not None and c.effect >= min_effect and c.outcome in ("rank1", "tie", "lower", "missed"):
            r["vis_n"] += 1
            r["vis_hit"] += c.outcome in ("rank1", "tie")
    out = []
    for (kind, name), r in sorted(rows.items()):
        n = r["rank1"] + r["tie"] + r["lower"] + r["missed"]
        out.append(
            dict(
                kind=kind,
                model=name,
                n=n,
                recall=(r["rank1"] + r["tie"]) / n if n else None,
                recall_visible=r["vis_hit"] / r["vis_n"] if r["vis_n"] else None,
                **r,
            )
        )
    return out


def false_explained(cases, kind: str):
    """(number of unplanted trials, how many were 'explained')."""
    u = [c for c in cases if c.planted is None and c.kind == kind]
    return len(u), sum(c.outcome == "explained" for c in u)


def wrong_rank1(cases) -> dict:
    """Per model: how often it was ranked first ALONE when another model was planted."""
    out = {}
    for c in cases:
        if c.planted is not None and c.outcome in ("lower", "missed") and len(c.best) == 1:
            out[c.best[0]] = out.get(c.best[0], 0) + 1
    return out
