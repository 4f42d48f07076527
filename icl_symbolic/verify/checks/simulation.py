"""Check kinds backed by the model's mathematics: Lemma 1 moments, the theory, the a1 = 0
derivation, Appendix A and the simulations.

Paper: Appendix B, Lemma 1, Eqs. (12)-(14), p. 8-9; Result 1, Eq. (9), p. 3; Eqs. (10), (11),
p. 3-4; Eq. (15), p. 10; Appendix A, p. 7; Sec. 2, Eqs. (1)-(7), p. 2-3.

Registered into :data:`icl_symbolic.checks.REGISTRY` on import (``checks`` imports this
module at its end).  The registry, parameter parsing and the Hermite-family kinds are in
:mod:`icl_symbolic.checks`; the claim format in ``docs/claims-format.md``.
"""

from __future__ import annotations

import sympy

from .checks import (MOMENT_SYMBOLS, SWEEP_NAMES, THEORY_FUNCTIONS, _PASS_THROUGH, Outcome, Param,
                     _pretty, _text, evaluate_with, hermite_values, register)
from .errors import ICLError
from .values import Value


@register("moments_leading", params={
    "forms": Param("formtable", True, doc="table: moment name -> the paper's leading-order form, "
                   "names from moments.PAPER_LEADING (E_y2, d*E_yx written dE_yx, E_u, E_uuT_I, ...)"),
    "symbols": Param("str_list", False, list(MOMENT_SYMBOLS), "symbols of the forms"),
}, needs=(("moments", "Lemma 1 moments, issue 3"),), needs_attrs={"moments": ("leading_order",)})
def check_moments_leading(claim) -> Outcome:
    """Lemma 1 (Appendix B, Eqs. 12-14, p. 8-9): leading-order moments equal the paper's forms.

    The limits come from :func:`icl_symbolic.moments.leading_order` (exact
    finite-size moments reduced symbolically with ell = alpha d, d -> infinity,
    omega -> 1); ``forms`` (in a1, rho_f, rho, alpha) is what the paper writes,
    one entry per coefficient (a block of E[h h^T | w] is several entries).
    The dropped terms and their orders are listed in the detail.
    """
    lo = _leading_order()
    parts, bad = [], []
    for key, paper in claim.parsed["forms"].items():
        name = "d*E_yx" if key == "dE_yx" else key
        if name not in lo.limits:
            raise ICLError(f"unknown moment {key!r}; known: "
                           f"{', '.join(sorted(k.replace('d*', 'd') for k in lo.limits))}")
        lim = lo.limits[name]
        ren = {s.name: s for s in lim.free_symbols}
        paper = paper.xreplace({s: ren.get(s.name, s) for s in paper.free_symbols})
        diff = sympy.simplify(lim - paper)
        n_drop = sum(1 for t in lo.dropped if t.moment == name)
        orders = sorted({t.order for t in lo.dropped if t.moment == name})
        drop = f" (drops {n_drop} term(s): {', '.join(orders)})" if n_drop else ""
        if diff == 0:
            parts.append(f"{key} -> {_pretty(lim)}{drop}")
        else:
            parts.append(f"{key}: limit {_pretty(lim)} but paper {_pretty(paper)}")
            bad.append(f"{key}: {_pretty(diff)}")
    if not bad:
        return Outcome(detail="leading order matches: " + "; ".join(parts), holds=True, residual_expr="0")
    return Outcome(detail="; ".join(parts) + "; differences " + "; ".join(bad), holds=False,
                   residual_expr="; ".join(bad))


_LO_CACHE: list = []


def _leading_order():
    if not _LO_CACHE:
        from .moments import leading_order
        _LO_CACHE.append(leading_order())
    return _LO_CACHE[0]


@register("moments_mc", params={
    "f": Param("teacher", True, doc="teacher f(g)"),
    "rho": Param("const", True, doc="label noise variance"),
    "d": Param("int", True, doc="dimension"),
    "ell": Param("int", True, doc="context length"),
    "omega": Param("const", False, sympy.Integer(1), "|w|^2/d of the fixed task"),
    "moment": Param("str", True, doc="coefficient name, e.g. E_uuT_w, E_us, E_s2"),
    "n": Param("int", False, 40000, "number of sampled prompts"),
    "seed": Param("int", True, doc="seed of numpy.random.default_rng"),
    "max_rel_se": Param("number", False, 0.05, "the SE must be below this fraction of |exact|"),
}, needs=(("moments", "Lemma 1 moments, issue 3"),), needs_attrs={"moments": ("conditional_moments", "mc_moments")})
def check_moments_mc(claim) -> Outcome:
    """Lemma 1 at finite size (Appendix B, p. 8-9): exact conditional moment vs Monte Carlo.

    :func:`icl_symbolic.moments.conditional_moments` gives the exact
    finite-(d, ell) coefficient, including the 1/ell terms the paper drops;
    :func:`icl_symbolic.moments.mc_moments` estimates it from sampled prompts
    with the task w = sqrt(omega) (1, ..., 1) fixed.  Judged in SE (kind z).
    """
    import numpy as np
    from .moments import conditional_moments, mc_moments

    p = claim.parsed
    if not 2 <= p["n"] <= 2_000_000:
        raise ICLError("n must be between 2 and 2e6")
    ftxt = _text(claim.params["f"])
    ex = conditional_moments(ftxt, str(p["rho"]), p["d"], p["ell"], omega=str(p["omega"]))
    name = p["moment"]
    if not hasattr(ex, name):
        raise ICLError(f"unknown moment {name!r}")
    exact = getattr(ex, name)
    w = np.full(p["d"], float(sympy.sqrt(p["omega"])))
    est = mc_moments(ftxt, float(p["rho"]), p["d"], p["ell"], w, p["n"], np.random.default_rng(p["seed"]))
    mc = est[name]
    mc = Value(mc.value, "mc", stderr=mc.stderr, n_samples=p["n"], seeds=(p["seed"],), note=mc.note)
    if mc.stderr > p["max_rel_se"] * abs(float(exact)):
        raise ICLError(f"Monte-Carlo SE {mc.stderr:.3g} exceeds {p['max_rel_se']:g} x |exact|; increase n")
    return Outcome(mc, exact, f"{name} at d={p['d']}, ell={p['ell']}: MC {float(mc.value):.6g} "
                   f"(SE {mc.stderr:.2g}, n={p['n']}, seed={p['seed']}) vs exact {exact.to_str(10)} "
                   f"[{exact.provenance()}]")


def _call_points(call, vals_fn):
    """Evaluate a parsed call at every point of its sweep; returns (list of floats, sweep)."""
    import importlib

    mod = importlib.import_module(f"icl_symbolic.{THEORY_FUNCTIONS[call['function']]}")
    fn = getattr(mod, call["function"])
    n = call["length"] or 1
    results, sweep = [], {}
    for i in range(n):
        kwargs = {}
        for k, a in call["args"].items():
            item = a[i] if isinstance(a, list) else a
            if k in _PASS_THROUGH:
                kwargs[k] = item
            else:
                kwargs[k] = int(item) if item.is_Integer else _num(item, vals_fn)
                if isinstance(a, list):
                    sweep.setdefault(k, []).append(kwargs[k])
        out = fn(**kwargs)
        x = float(out.value) if isinstance(out, Value) else float(out)
        results.append(x * _num(call["scale"], vals_fn))
    return results, sweep


def _num(e, vals_fn) -> float:
    if not e.free_symbols:
        return float(sympy.N(e, 20))
    vals = vals_fn()
    return float(evaluate_with(e, vals, 20).value)


def _lazy_family(claim):
    """name -> Value of the claim's teacher family (computed once, on first use)."""
    box = []

    def get():
        if not box:
            if "f" not in claim.params:
                raise ICLError("this claim uses a1/rho_f/rho_nonlinear but gives no teacher f")
            box.append(hermite_values(claim)[1])
        return box[0]
    return get


def _judge_points(claim, xs, ys):
    """Worst point of a sweep under the claim's tolerance: (index, holds_all)."""
    from .claims import compare
    worst, worst_score, all_hold = 0, -1.0, True
    for i, (x, y) in enumerate(zip(xs, ys)):
        h, res, _, _ = compare(Value(x, "numeric"), Value(y, "numeric"), claim.tolerance)
        bound = claim.tolerance.value * (abs(y) if claim.tolerance.kind == "rel" else 1.0)
        score = float(res) / bound if bound > 0 else float("inf")
        all_hold &= h
        if score > worst_score:
            worst, worst_score = i, score
    return worst, all_hold


def _sweep_figure(title, sweep, xs, ys, lab_x, lab_y):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from .report import figure_png

    key = next(iter(sweep))
    grid = sweep[key]
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    ax.plot(grid, xs, "o-", label=lab_x)
    ax.plot(grid, ys, "s--", mfc="none", label=lab_y)
    if min(grid) > 0 and max(grid) / min(grid) > 10:
        ax.set_xscale("log")
    ax.set_xlabel(key)
    ax.set_yscale("log")
    from matplotlib.ticker import FormatStrFormatter, LogLocator
    axes = [ax.yaxis] + ([ax.xaxis] if ax.get_xscale() == "log" else [])
    for axis in axes:
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FormatStrFormatter("%g"))
        axis.set_minor_formatter(FormatStrFormatter(""))
    ax.set_ylabel("ICL error (d -> infinity theory)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    return figure_png(fig)


@register("theory_value", params={
    "f": Param("teacher", False, None, "teacher whose a1, rho_f, rho_nonlinear the expressions may use"),
    "rho": Param("const", False, sympy.Integer(0), "label noise variance for the family values"),
    "call": Param("call", True, doc="{function, args, scale}: the computed side"),
    "versus": Param("call", False, None, "{function, args, scale}: the other side (or give claimed)"),
    "claimed": Param("sweepfamily", False, None, "claimed value (may use a1, rho_f, rho_nonlinear, ... "
                     "and the swept argument names alpha, kappa, tau, lam)"),
    "plot": Param("bool", False, False, "embed a figure of the sweep in reports"),
}, needs=(("theory", "asymptotic ICL error, issue 4"), ("a1zero", "a1 = 0 branch, issue 4")),
   needs_attrs={"theory": ("e_linear", "e_nonlinear")})
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
    fam = _lazy_family(claim)
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
            for k, a in p["call"]["args"].items():   # scalar arguments too
                if k in SWEEP_NAMES and k not in point and not isinstance(a, list):
                    point[k] = _num(a, fam)
            e = ce.xreplace({s: sympy.Float(point[s.name], 17) for s in ce.free_symbols
                             if s.name in SWEEP_NAMES and s.name in point})
            left = [s.name for s in e.free_symbols if s.name in SWEEP_NAMES]
            if left:
                raise ICLError(f"claimed uses {', '.join(left)}, which the call does not set")
            ys.append(_num(e, fam))
        other = _pretty(ce)
    if len(ys) != len(xs):
        raise ICLError("the two sides sweep different numbers of points")
    i, _ = _judge_points(claim, xs, ys)
    at = ", ".join(f"{k}={v[i]:g}" for k, v in sweep.items())
    note = "deterministic equivalent, d -> infinity (float64)"
    computed = Value(xs[i], "numeric", note=note)
    claimed = Value(ys[i], "numeric", note=note)
    detail = (f"{_describe_call(p['call'])} = {xs[i]:.10g} vs {other} = {ys[i]:.10g}"
              + (f" (worst of {len(xs)} points, at {at})" if len(xs) > 1 else ""))
    figs = []
    if p["plot"] and sweep:
        figs.append((f"{claim.id}: {_describe_call(p['call'])} vs {other}",
                     _sweep_figure(claim.id, sweep, xs, ys, _describe_call(p["call"]), other)))
    diag_fn = None
    if "f" in claim.params:
        def diag_fn():
            from .diagnose import _key, explain_ratio
            vals = fam()
            base = {k: vals[k] for k in ("a1", "E_f2", "rho")}
            d, what = explain_ratio(xs[i], ys[i], base, tol=_ratio_tol(claim, xs[i], ys[i]))
            if d is None or d.best is None:
                return d
            # the same relation must hold at every point of a sweep, not only the worst one
            for x, y in zip(xs, ys):
                dj, wj = explain_ratio(x, y, base, tol=_ratio_tol(claim, x, y))
                if dj is None or dj.best is None or wj != what or _key(dj.best.expr) != _key(d.best.expr):
                    # no single family quantity explains the whole sweep: no diagnosis
                    d.subject = (f"the {what} is not the same family quantity at every point of the "
                                 f"sweep; at the worst point it")
                    d.nearest = d.matches[:1] + d.nearest
                    d.matches = []
                    return d
            d.subject = f"the {what} (the same at all {len(xs)} points)" if len(xs) > 1 else f"the {what}"
            return d
    return Outcome(computed, claimed, detail, diagnosis_fn=diag_fn, figures=figs)


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
        s = f"{_pretty(call['scale'])} * {s}"
    return s


def _short(v):
    if isinstance(v, list):
        return f"[{_short(v[0])} .. {_short(v[-1])}]" if len(v) > 1 else f"[{_short(v[0])}]"
    return _pretty(v) if not isinstance(v, str) else v


# -- a1 = 0 derivation --------------------------------------------------------

_A1Z_CACHE: list = []


@register("a1zero_limit", params={
    "quantity": Param("str", True, doc="'error' (Eq. 10) or 'lam_tilde' (Eq. 15)", choices=("error", "lam_tilde")),
    "symbols": Param("str_list", False, ["q", "tau", "rho_nl", "lam", "alpha", "kappa"],
                     "symbols of the paper's forms"),
    "below": Param("symexpr", True, doc="the paper's form for tau < 1 (lam -> 0)"),
    "above": Param("symexpr", True, doc="the paper's form for tau > 1 (lam -> 0)"),
}, needs=(("a1zero", "a1 = 0 derivation, issue 4"),), needs_attrs={"a1zero": ("derive",)})
def check_a1zero_limit(claim) -> Outcome:
    """The a1 = 0 branch (Eq. 10, p. 3; Eq. 15, p. 10) derived in SymPy vs the paper's forms.

    :func:`icl_symbolic.a1zero.derive` solves the fixed point for chi0, takes
    lam -> 0 for tau < 1 and tau > 1, and evaluates the linear recipe with zero
    task covariance; both branches must equal the forms the claim writes.
    """
    if not _A1Z_CACHE:
        from .a1zero import derive
        _A1Z_CACHE.append(derive())
    D = _A1Z_CACHE[0]
    p = claim.parsed
    q = p["quantity"]
    if q == "error":
        got = (D.error_limit_below, D.error_limit_above)
    elif q == "lam_tilde":
        got = (D.lam_tilde_limit_below, D.lam_tilde_limit_above)
    else:
        raise ICLError("quantity must be 'error' or 'lam_tilde'")
    syms = {n: s for n, s in D.symbols.items()} if isinstance(D.symbols, dict) else {}
    by_name = {getattr(s, "name", n): s for n, s in syms.items()}
    res = []
    for lab, derived, paper in (("tau < 1", got[0], p["below"]), ("tau > 1", got[1], p["above"])):
        paper = paper.xreplace({s: by_name.get(s.name, s) for s in paper.free_symbols})
        res.append((lab, derived, paper, sympy.simplify(sympy.together(derived - paper))))
    bad = [r for r in res if r[3] != 0]
    txt = "; ".join(f"{lab}: derived {_pretty(dv)}, paper {_pretty(pp)}" for lab, dv, pp, _ in res)
    if not bad:
        return Outcome(detail=f"{q}: {txt}", holds=True, residual_expr="0")
    return Outcome(detail=f"{q}: {txt}; residual " + "; ".join(f"{lab}: {_pretty(r)}" for lab, _, _, r in bad),
                   holds=False, residual_expr="; ".join(_pretty(r[3]) for r in bad))


# -- Appendix A ----------------------------------------------------------------

@register("appendix_a", params={
    "C": Param("str", True, doc="covariance: identity, powerlaw:p, spiked:f:r, lowrank:r"),
    "d": Param("int", True, doc="dimension"),
    "statistic": Param("str", True, doc="'mean' (E[sigma_w]) or 'var' (Var(sigma_w)), sigma_w = |w|^2/d",
                       choices=("mean", "var")),
    "formula": Param("symexpr", True, doc="claimed formula in tr_C, tr_C2, d"),
    "symbols": Param("str_list", False, ["tr_C", "tr_C2", "d"], "symbols of formula"),
    "n_tasks": Param("int", False, 20000, "tasks sampled"),
    "seed": Param("int", True, doc="seed of numpy.random.default_rng"),
}, needs=(("covariance", "task covariances, lead"),), needs_attrs={"covariance": ("resolve_covariance",)})
def check_appendix_a(claim) -> Outcome:
    """Appendix A, p. 7: moments of sigma_w = |w|^2/d for w ~ N(0, C), by Monte Carlo.

    Tasks come from :func:`icl_symbolic.covariance.sample_tasks`; the sample
    mean (SE = std/sqrt(n)) or the sample variance (SE from the fourth central
    moment, sqrt((m4 - s^4)/n)) is compared with the claimed formula evaluated
    at tr(C), tr(C^2) in standard errors (tolerance kind z).
    """
    import numpy as np
    from .covariance import resolve_covariance, sample_tasks

    p = claim.parsed
    cov = resolve_covariance(p["C"], p["d"])
    n = p["n_tasks"]
    if not 100 <= n <= 2_000_000:
        raise ICLError("n_tasks must be between 100 and 2e6")
    rng = np.random.default_rng(p["seed"])
    W = sample_tasks(cov, n, rng)
    W = W if W.shape[0] == n else W.T
    sig = np.einsum("ij,ij->i", W, W) / cov.d
    if p["statistic"] == "mean":
        est, se = float(sig.mean()), float(sig.std(ddof=1) / np.sqrt(n))
    elif p["statistic"] == "var":
        c = sig - sig.mean()
        s2 = float(np.mean(c ** 2)) * n / (n - 1)
        m4 = float(np.mean(c ** 4))
        est, se = s2, float(np.sqrt(max(m4 - s2 * s2, 0.0) / n))
    else:
        raise ICLError("statistic must be 'mean' or 'var'")
    env = {"tr_C": sympy.Float(cov.trace, 17), "tr_C2": sympy.Float(cov.trace_sq, 17), "d": cov.d}
    f = p["formula"]
    val = float(sympy.N(f.xreplace({s: env[s.name] for s in f.free_symbols if s.name in env}), 17))
    computed = Value(est, "mc", stderr=se, n_samples=n, seeds=(p["seed"],),
                     note=f"{p['statistic']} of |w|^2/d, w ~ N(0, {p['C']}), d={cov.d}")
    claimed = Value(val, "numeric", note=f"{_pretty(f)} at tr C = {cov.trace:.6g}, tr C^2 = {cov.trace_sq:.6g}")
    if se > 0.05 * abs(val):
        raise ICLError(f"SE {se:.3g} is more than 5% of the claimed {val:.3g}; increase n_tasks")
    return Outcome(computed, claimed, f"{p['statistic']}(|w|^2/d) = {est:.6g} (SE {se:.2g}) vs "
                   f"{_pretty(f)} = {val:.6g} for C = {p['C']}, d = {cov.d}")


@register("appendix_a_condition", params={
    "C": Param("str", True, doc="covariance family"),
    "d": Param("int", True, doc="dimension"),
    "claimed": Param("bool", True, doc="whether Result 1's conditions hold (tr C = d, tr C^2 = o(d^2))"),
}, needs=(("covariance", "task covariances, lead"),), needs_attrs={"covariance": ("appendix_a",)})
def check_appendix_a_condition(claim) -> Outcome:
    """Result 1's conditions (p. 3; Appendix A, p. 7) for a covariance family: true or false."""
    from .covariance import appendix_a, resolve_covariance

    p = claim.parsed
    a = appendix_a(resolve_covariance(p["C"], p["d"]))
    got = a.holds
    if got is None:
        raise ICLError(f"{p['C']}: the conditions cannot be decided from one matrix")
    holds = bool(got) == p["claimed"]
    return Outcome(detail=f"{a.message()}; claimed {'hold' if p['claimed'] else 'fail'}",
                   holds=holds, residual_expr="0" if holds else "verdict differs")


# -- simulation ----------------------------------------------------------------

_SIM_CACHE: dict = {}
#: Where simulation progress lines go (set by :func:`icl_symbolic.claims.run_claims`; None: silent).
PROGRESS = {"stream": None}


def _simulate(f, rho, d, alpha, kappa, tau, seeds, lam, n_test):
    key = (f, rho, d, alpha, kappa, tau, tuple(seeds), lam, n_test)
    if key not in _SIM_CACHE:
        from .simulate import simulate
        stream = PROGRESS["stream"]
        progress = None if stream is None else (lambda s: print(f"    {s}", file=stream, flush=True))
        _SIM_CACHE[key] = simulate(f, d=d, alpha=alpha, kappa=kappa, tau=tau, rho=rho, lam=lam,
                                   seeds=tuple(seeds), n_test=n_test, progress=progress)
    return _SIM_CACHE[key]


@register("simulation", params={
    "f": Param("teacher", True, doc="teacher of the simulated side"),
    "rho": Param("const", True, doc="noise variance of the simulated side"),
    "d": Param("int", True, doc="dimension"),
    "alpha": Param("number", True, doc="ell/d"),
    "kappa": Param("number", True, doc="k/d"),
    "tau": Param("number", True, doc="n/d^2"),
    "lam": Param("number", False, 0.0, "ridge lam (0: the ridgeless limit, min-norm solution)"),
    "n_seeds": Param("int", False, 4, "number of seeds (seed0, seed0 + 1, ...)"),
    "seed0": Param("int", False, 20261007, "first seed"),
    "n_test": Param("int", False, 2000, "test prompts per seed"),
    "versus": Param("str", True, doc="'theory' (e_nonlinear for versus_f) or 'simulation'",
                    choices=("theory", "simulation")),
    "versus_f": Param("teacher", False, None, "teacher of the other side (default f)"),
    "versus_rho": Param("family", False, None, "noise of the other side (family expression; default rho)"),
    "scale": Param("family", False, 1, "multiplies the other side (e.g. a1^2)"),
    "plot": Param("bool", False, False, "embed a per-seed figure in reports"),
}, needs=(("simulate", "simulation, issue 5"), ("theory", "theory, issue 4")),
   needs_attrs={"simulate": ("simulate",)})
def check_simulation(claim) -> Outcome:
    """Simulated ICL error (Eq. 6-7) vs theory or a second simulation on the same seeds.

    Tolerance: |diff| <= z SE + bias_rel |other side|; the SE combines the
    seed-to-seed spread of both sides (independent, conservative for paired
    seeds); ``bias_rel`` is the finite-d bias budget (theory is d -> infinity;
    see shared/reference/finite-size.md: a few percent at d = 32-64 away from
    tau = 1).  Family expressions (``rho_nonlinear/a1^2``, ``a1^2``) are
    evaluated for the teacher ``f`` at noise ``rho``.
    """
    p = claim.parsed
    import numpy as np

    seeds = [p["seed0"] + i for i in range(p["n_seeds"])]
    rho_f = float(sympy.N(p["rho"], 17))
    ftxt = _text(claim.params["f"])
    sim = _simulate(ftxt, rho_f, p["d"], p["alpha"], p["kappa"], p["tau"], seeds, p["lam"], p["n_test"])
    mine = sim.e if sim.e is not None else sim.e_mc
    fam = _lazy_family(claim)
    scale = _num(p["scale"], fam) if not isinstance(p["scale"], int) else float(p["scale"])
    vf = _text(claim.params["versus_f"]) if p["versus_f"] is not None else ftxt
    vr = _num(p["versus_rho"], fam) if p["versus_rho"] is not None else rho_f
    per_seed = [float((r.e if r.e is not None else r.e_mc).value) for r in sim.runs]
    sc_txt = "" if p["scale"] == 1 else f"{_pretty(p['scale'])} * "
    if p["versus"] == "theory":
        from .theory import e_nonlinear
        th = e_nonlinear(vf, rho=vr, alpha=p["alpha"], kappa=p["kappa"], tau=p["tau"])
        other = Value(scale * float(th.value), "numeric", note="theory, d -> infinity")
        what = f"{sc_txt}theory e_nonlinear({vf}, rho={vr:.6g})"
        ratios = [x / float(other.value) for x in per_seed]
        other_seed = None
        pair_note = ""
    elif p["versus"] == "simulation":
        s2 = _simulate(vf, vr, p["d"], p["alpha"], p["kappa"], p["tau"], seeds, p["lam"], p["n_test"])
        o = s2.e if s2.e is not None else s2.e_mc
        other_seed = [scale * float((r.e if r.e is not None else r.e_mc).value) for r in s2.runs]
        # Paired by seed: the SE is that of the per-seed differences, carried by the
        # simulated side; the other side is then treated as a reference (stderr 0).
        diffs = [a - b for a, b in zip(per_seed, other_seed)]
        se_pair = float(np.std(diffs, ddof=1) / np.sqrt(len(diffs))) if len(diffs) > 1 else None
        mine = Value(float(np.mean(per_seed)), "sim", stderr=se_pair, n_samples=len(seeds),
                     seeds=tuple(seeds), note="mean over seeds; stderr = SE of the per-seed paired differences")
        other = Value(float(np.mean(other_seed)), "numeric", note=f"{_pretty(p['scale'])} x simulation, same seeds")
        what = f"{sc_txt}simulated e({vf}, rho={vr:.6g}) on the same seeds"
        ratios = [a / b for a, b in zip(per_seed, other_seed)]
        pair_note = "; SE from paired per-seed differences"
    else:
        raise ICLError("versus must be 'theory' or 'simulation'")
    detail = (f"simulated e({ftxt}, rho={rho_f:g}) = {float(mine.value):.5g} (SE {float(mine.stderr or 0):.2g}, "
              f"{len(seeds)} seeds {seeds[0]}..{seeds[-1]}, d={p['d']}) vs {what} = {float(other.value):.5g}"
              + pair_note)
    bias_rel = claim.tolerance.bias_rel or 0.0
    z_lim = claim.tolerance.value

    def diag_fn():
        from .claims import z_to_t
        from .diagnose import explain_ratio
        vals = fam()
        base = {k: vals[k] for k in ("a1", "E_f2", "rho")}
        r = float(np.mean(ratios))
        r_se = float(np.std(ratios, ddof=1) / np.sqrt(len(ratios))) if len(ratios) > 1 else 0.0
        d, what2 = explain_ratio(r, 1.0, base, tol=z_to_t(z_lim, len(ratios) - 1) * r_se + bias_rel * abs(r))
        if d is not None:
            d.subject = f"the mean per-seed ratio simulated/{'theory' if p['versus'] == 'theory' else 'other'}"
        return d
    figs = []
    if p["plot"]:
        figs.append((f"{claim.id}: per-seed simulated errors",
                     _seed_figure(claim.id, seeds, per_seed,
                                  other_seed if p["versus"] == "simulation" else [float(other.value)] * len(seeds),
                                  f"e_sim({ftxt}, rho={rho_f:g})", what)))
    return Outcome(mine, other, detail, diagnosis_fn=diag_fn, figures=figs)


def _seed_figure(title, seeds, mine, other, lab_mine, lab_other):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from .report import figure_png

    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    x = list(range(len(seeds)))
    ax.plot(x, mine, "o", label=lab_mine)
    ax.plot(x, other, "s", mfc="none", label=lab_other)
    ax.set_xticks(x, [str(s) for s in seeds], fontsize=7)
    ax.set_xlabel("seed")
    ax.set_ylabel("ICL test error")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    return figure_png(fig)


@register("simulation_extrapolated", params={
    "f": Param("teacher", True, doc="teacher"),
    "rho": Param("const", True, doc="noise variance"),
    "d_list": Param("int_list", True, doc="dimensions, e.g. [24, 32, 48]"),
    "alpha": Param("number", True, doc="ell/d"),
    "kappa": Param("number", True, doc="k/d"),
    "tau": Param("number", True, doc="n/d^2"),
    "lam": Param("number", False, 0.0, "ridge lam"),
    "n_seeds": Param("int", False, 6, "seeds per dimension (seed0, seed0 + 1, ...)"),
    "seed0": Param("int", False, 20261007, "first seed"),
    "n_test": Param("int", False, 2000, "test prompts per seed"),
    "plot": Param("bool", False, False, "embed the fit in reports"),
}, needs=(("simulate", "simulation, issue 5"), ("theory", "theory, issue 4")),
   needs_attrs={"simulate": ("simulate",)})
def check_simulation_extrapolated(claim) -> Outcome:
    """Simulations at several d, extrapolated in 1/d, vs the d -> infinity theory (no bias budget).

    The finite-d gap of the simulations is O(1/d) (shared/reference/finite-size.md).
    A weighted least-squares fit e(d) = e_inf + c/d (weights 1/SE_d^2, SE_d the
    seed spread at each d) gives e_inf with its SE; it is compared with
    :func:`icl_symbolic.theory.e_nonlinear` in SE (Student-t for the seeds per d).
    The claim also requires the gap to shrink: |e(d_max) - theory| < |e(d_min) - theory|.
    """
    import numpy as np
    from .theory import e_nonlinear

    p = claim.parsed
    seeds = [p["seed0"] + i for i in range(p["n_seeds"])]
    rho_f = float(sympy.N(p["rho"], 17))
    ftxt = _text(claim.params["f"])
    ds = sorted(set(p["d_list"]))
    means, ses = [], []
    for d in ds:
        sim = _simulate(ftxt, rho_f, d, p["alpha"], p["kappa"], p["tau"], seeds, p["lam"], p["n_test"])
        v = sim.e if sim.e is not None else sim.e_mc
        means.append(float(v.value))
        ses.append(float(v.stderr or 0.0))
    if min(ses) <= 0:
        raise ICLError("need at least two seeds per d for standard errors")
    X = np.column_stack([np.ones(len(ds)), 1.0 / np.asarray(ds, float)])
    W = np.diag(1.0 / np.asarray(ses) ** 2)
    cov = np.linalg.inv(X.T @ W @ X)
    coef = cov @ X.T @ W @ np.asarray(means)
    e_inf, se_inf = float(coef[0]), float(np.sqrt(cov[0, 0]))
    th = float(e_nonlinear(ftxt, rho=rho_f, alpha=p["alpha"], kappa=p["kappa"], tau=p["tau"]).value)
    gaps = [m - th for m in means]
    shrinks = abs(gaps[-1]) < abs(gaps[0])
    computed = Value(e_inf, "sim", stderr=se_inf, n_samples=len(seeds), seeds=tuple(seeds),
                     note=f"WLS extrapolation e(d) = e_inf + c/d over d = {ds}")
    claimed = Value(th, "numeric", note="theory, d -> infinity")
    gap_txt = ", ".join(f"d={d}: {m:.5g} ({100 * g / th:+.1f}%)" for d, m, g in zip(ds, means, gaps))
    detail = (f"simulated {gap_txt}; extrapolated e_inf = {e_inf:.5g} (SE {se_inf:.2g}, slope c = {coef[1]:.3g}) "
              f"vs theory {th:.5g}; gap {'shrinks' if shrinks else 'does NOT shrink'} with d")
    figs = []
    if p["plot"]:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from .report import figure_png
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        inv = 1.0 / np.asarray(ds, float)
        ax.errorbar(inv, means, yerr=ses, fmt="o", label=f"simulation ({len(seeds)} seeds per d)")
        grid = np.linspace(0, inv.max() * 1.05, 50)
        ax.plot(grid, coef[0] + coef[1] * grid, "-", label="fit e_inf + c/d")
        ax.plot([0], [th], "k*", ms=10, label="theory (d -> infinity)")
        ax.set_xlabel("1/d")
        ax.set_ylabel("ICL test error")
        ax.set_title(claim.id, fontsize=9)
        ax.legend(fontsize=7)
        figs.append((f"{claim.id}: extrapolation in 1/d", figure_png(fig)))
    return Outcome(computed, claimed, detail, figures=figs,
                   also_required=(shrinks, "the finite-d gap must shrink as d grows"))
