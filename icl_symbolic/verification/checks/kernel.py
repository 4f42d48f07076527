"""Check kinds for the kernel learner (OUR extension beyond the paper; docs/kernel.md):
values of the D-dimensional prediction (:mod:`icl_symbolic.kernel_learner.theory`) and simulations
of linear attention on Hermite features (:mod:`icl_symbolic.kernel_learner.simulation`).

These back claims of icl-symbolic's own (derivations/12_kernel_learner.toml), not
claims of arXiv:2610.10761; the identity-feature claim ties them to Result 1
(Eq. (9), p. 3).
"""

from __future__ import annotations

import sympy
from scipy import stats

from icl_symbolic.core.caches import store
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import MIN_SEEDS, t_limit
from icl_symbolic.core.values import Value
from icl_symbolic.kernel_learner.ladder import POWER, extrapolate_kernel, judge_gap_decay
from icl_symbolic.kernel_learner.simulation import simulate_kernel
from icl_symbolic.kernel_learner.theory import kernel_curve, kernel_spectrum
from icl_symbolic.studies.ladder_runs import SeedRunner
from icl_symbolic.theory.asymptotic import Ratios, e_nonlinear
from icl_symbolic.verification.checks.common import claim_setting, lazy_family, numeric_value, pretty, setting_params
from icl_symbolic.verification.registry import Outcome, Param, check_kind, param_text

QUANTITIES = ("rho_eff", "captured_power", "e")
_SIM_CACHE = store(__name__ + "._SIM_CACHE", kind="simulation")


@check_kind(
    "kernel_value",
    params={
        "f": Param("teacher", True, doc="teacher"),
        "rho": Param("const", True, doc="label noise variance"),
        "features": Param("str", True, doc="identity or hermite:K"),
        "d": Param("int", False, 0, "input dimension (0: d -> infinity, identity only)"),
        "tasks": Param("str", False, "gaussian", "task law", choices=("gaussian", "sphere")),
        "quantity": Param("str", True, doc="rho_eff, captured_power, or e (the prediction)", choices=QUANTITIES),
        "alpha": Param("number", False, 16.0, "ell/D (quantity e)"),
        "kappa": Param("number", False, 4.0, "k/D (quantity e)"),
        "tau": Param("number", False, 4.0, "n/D^2 (quantity e)"),
        "lam": Param("number", False, 0.0, "ridge (quantity e)"),
        "claimed": Param("family", False, None, "claimed value (may use a1, a2, ..., rho_f, rho_nonlinear, rho)"),
        "versus": Param(
            "str",
            False,
            "",
            "'theory': Result 1 (e_nonlinear) at the same alpha, kappa, tau, lam",
            choices=("", "theory"),
        ),
    },
    needs=(("kernel_learner.theory", "kernel learner theory"),),
    needs_attrs={"kernel_learner.theory": ("kernel_curve", "kernel_spectrum")},
)
def check_kernel_value(claim) -> Outcome:
    """A number of the kernel learner's theory (rho_eff, captured power, predicted error) vs a claim."""
    p = claim.parsed
    if (p["versus"] == "") == (p["claimed"] is None):
        raise ICLError("give exactly one of 'claimed' and 'versus'")
    f = param_text(claim.params["f"])
    rho = float(sympy.N(p["rho"], 17))
    d = p["d"] or None
    note = "kernel learner theory (docs/kernel.md), float64"
    if p["quantity"] == "e":
        x = float(
            kernel_curve(
                f,
                p["features"],
                Ratios(rho, p["alpha"], p["kappa"], p["tau"], p["lam"]),
                d=d,
                tasks=p["tasks"],
                plain=False,
            ).columns["e"][0]
        )
    else:
        ks = kernel_spectrum(f, p["features"], rho, d, p["tasks"])
        x = float(getattr(ks, p["quantity"]))
    if p["versus"] == "theory":
        y = float(e_nonlinear(f, Ratios(rho, p["alpha"], p["kappa"], p["tau"], p["lam"])))
        other = "Result 1, e_nonlinear, same alpha, kappa, tau, lam"
    else:
        y = numeric_value(p["claimed"], lazy_family(claim))
        other = pretty(p["claimed"])
    where = f"{p['features']}, d={d if d else 'inf'}, tasks={p['tasks']}"
    return Outcome(
        Value(x, "numeric", note=note),
        Value(y, "numeric", note=other),
        f"{p['quantity']} ({where}) = {x:.12g} vs {other} = {y:.12g}",
    )


def _sim(setting, control: str, seeds, progress):
    """The kernel learner's simulation of ``setting`` (``control`` '' for the learner), once per process."""
    key = (setting, control, tuple(seeds))
    if key not in _SIM_CACHE:
        _SIM_CACHE[key] = simulate_kernel(setting, seeds=tuple(seeds), control=control or None, progress=progress)
    return _SIM_CACHE[key]


@check_kind(
    "kernel_simulation",
    params={
        **setting_params(
            ("d", Param("int", True, doc="input dimension")),
            middle={
                "features": Param("str", True, doc="identity or hermite:K"),
                "control": Param(
                    "str",
                    False,
                    "",
                    "'' (the learner), 'features' or 'gaussian' (Gaussian-input controls)",
                    choices=("", "features", "gaussian"),
                ),
            },
            learner=True,
        ),
        "n_seeds": Param("seed_count", False, MIN_SEEDS, f"seeds (seed0, seed0 + 1, ...), at least {MIN_SEEDS}"),
        "seed0": Param("int", False, 20261007, "first seed"),
        "n_test": Param("int", False, 2000, "test prompts per seed"),
        "versus": Param(
            "str",
            True,
            doc="'theory' (the kernel prediction), 'below' or 'above' a bound, or "
            "'above_theory' (above bound x prediction)",
            choices=("theory", "below", "above", "above_theory"),
        ),
        "bound": Param("family", False, None, "the bound for versus = below/above (a factor for above_theory)"),
    },
    needs=(("kernel_learner.simulation", "kernel learner simulation"),),
    needs_attrs={"kernel_learner.simulation": ("simulate_kernel",)},
    reports_progress=True,
)
def check_kernel_simulation(claim, progress=None) -> Outcome:
    """Simulated error of the kernel learner (query-exact, mean and SE over seeds) against its
    prediction (tolerance z SE + bias_rel |prediction|), or below/above a bound by z SE
    (one-sided, Student t with n_seeds - 1 dof)."""
    p = claim.parsed
    seeds = [p["seed0"] + i for i in range(p["n_seeds"])]
    setting = claim_setting(claim, d=p["d"], features=p["features"], n_test=p["n_test"])
    r = _sim(setting, p["control"], seeds, progress)
    mine = r.e_query
    who = f"{p['control'] + ' control of the ' if p['control'] else ''}kernel learner {p['features']}"
    head = (
        f"simulated e ({who}, d={r.d}, D={r.D}, ell={r.ell}, k={r.k}, n={r.n}) = {float(mine):.5g} "
        f"(SE {mine.stderr:.2g}, {len(seeds)} seeds)"
    )
    if p["versus"] == "theory":
        other = Value(r.e_theory, "numeric", note="kernel learner prediction at the same d")
        return Outcome(mine, other, f"{head} vs prediction {r.e_theory:.5g}")
    if p["bound"] is None:
        raise ICLError("versus = below/above needs 'bound'")
    factor = p["versus"] == "above_theory"
    bound = numeric_value(p["bound"], lazy_family(claim))
    bound_txt = pretty(p["bound"])
    if factor:
        bound, bound_txt = bound * r.e_theory, f"{bound_txt} x prediction {r.e_theory:.5g}"
    t = t_limit(claim.tolerance.value, len(seeds) - 1)
    lo, hi = float(mine) - t * mine.stderr, float(mine) + t * mine.stderr
    holds = hi < bound if p["versus"] == "below" else lo > bound
    detail = (
        f"{head}; {'upper' if p['versus'] == 'below' else 'lower'} end of the {t:.3g}-SE band = "
        f"{hi if p['versus'] == 'below' else lo:.5g} vs bound {bound_txt} = {bound:.5g}"
    )
    relation = "<" if p["versus"] == "below" else ">"
    mde = (t + t_limit(stats.norm.isf(1 - POWER), len(seeds) - 1)) * mine.stderr
    false_hold = stats.norm.sf(claim.tolerance.value)
    note = (
        f"a true e on the wrong side of the bound holds with probability <= {false_hold:.1g}; the claim "
        f"holds with {POWER:.0%} power once the true e is {mde:.3g} ({mde / abs(bound):.1%} of the bound) "
        f"beyond it (t {t:.3g} + t_{POWER:g} at {len(seeds) - 1} dof, x SE {mine.stderr:.2g})"
    )
    return Outcome(
        mine,
        Value(bound, "numeric", note="bound"),
        detail,
        holds=holds,
        residual_expr=f"{hi if p['versus'] == 'below' else lo:.5g} {relation} {bound:.5g}: {holds}",
        mde_rel=mde / abs(bound),
        mde_note=note,
    )


@check_kind(
    "kernel_gap_decay",
    params={
        **setting_params(
            ("d_list", Param("int_list", True, doc="the ladder of input dimensions, e.g. [4, 6, 8, 10]")),
            middle={"features": Param("str", True, doc="hermite:K")},
            learner=True,
        ),
        "n_seeds": Param(
            "seed_count", False, MIN_SEEDS, f"seeds per dimension (seed0, seed0 + 1, ...), at least {MIN_SEEDS}"
        ),
        "seed0": Param("int", False, 0, "first seed"),
        "n_test": Param("int", False, 4000, "test prompts per seed"),
        "rate_min": Param("number", True, doc="the power-law rate p of the gap (c D^-p) lies above this ..."),
        "rate_max": Param("number", True, doc="... and below this, with its whole one-sided Student-t band"),
    },
    needs=(("kernel_learner.ladder", "kernel learner gap ladder"),),
    needs_attrs={"kernel_learner.ladder": ("extrapolate_kernel", "judge_gap_decay")},
    reports_progress=True,
)
def check_kernel_gap_decay(claim, progress=None) -> Outcome:
    """The kernel learner's finite-size gap e_sim(d) - e_pred(d) on a ladder of d
    (:func:`icl_symbolic.kernel_learner.ladder.extrapolate_kernel`): resolved and positive at every D,
    and decaying like D^-p with rate_min < p < rate_max
    (:func:`icl_symbolic.kernel_learner.ladder.judge_gap_decay`; each part one-sided at the claim's z
    as Student t).  The 1/D fit gap_inf + c1/D is reported, not judged.  A large SE makes
    the claim fail, never hold; ``mde_rel`` is the relative change of the rate the ladder
    resolves with 90 % power.
    """
    p = claim.parsed
    seeds = [p["seed0"] + i for i in range(p["n_seeds"])]
    ds = sorted(set(p["d_list"]))
    setting = claim_setting(claim, d=None, features=p["features"], n_test=p["n_test"])
    res = extrapolate_kernel(setting, ds, seeds=seeds, runner=SeedRunner(progress=progress))
    dec = judge_gap_decay([q.ladder_point() for q in res.points], p["rate_min"], p["rate_max"], claim.tolerance.value)
    pl, fit, js = dec.power_law, res.gap.core.fit, res.gap.to_json()
    pts = ", ".join(f"D={q.D}: {q.gap_mean:.4g}+-{q.e_se:.2g} (D x gap {q.D * q.gap_mean:.3g})" for q in res.points)
    band = dec.band
    rate = (
        (
            f"power law c D^-p: p = {pl.p:.3f} +- {pl.p_se:.2g} (Welch dof {dec.dof:.1f}"
            + (
                f"; SE Birge-inflated x{pl.se_inflation:.2f}, chi2 {pl.chi2:.2g} on {pl.dof} dof"
                if pl.se_inflation > 1
                else ""
            )
            + f"), band [{band[0]:.3f}, {band[1]:.3f}] at t = {dec.t_rate:.3g}"
        )
        if pl
        else "no power law"
    )
    detail = (
        f"gap e_sim - e_pred ({p['features']}, {len(seeds)} seeds per d, d = {ds}): {pts}; {rate} vs claimed "
        f"({p['rate_min']:g}, {p['rate_max']:g}); reported, not judged: fit {js['model']}: gap_inf = "
        f"{fit.e_inf:.3g} +- {fit.e_inf_se:.2g}, c1 = {fit.coef[1]:.3g} +- {fit.coef_se[1]:.2g}, chi2 "
        f"{fit.chi2:.3g} on {fit.dof} dof" + ("" if dec.holds else "; FAILS: " + "; ".join(dec.why))
    )
    computed = Value(
        pl.p if pl else float("nan"),
        "sim",
        stderr=pl.p_se if pl else float("nan"),
        n_samples=int(min(dec.dof, 1e6)) + 1,
        seeds=tuple(seeds),
        note=f"power-law rate of the gap over d = {ds} (n_samples = Welch dof + 1)",
    )
    claimed = Value(
        0.5 * (p["rate_min"] + p["rate_max"]),
        "numeric",
        note=f"the band ({p['rate_min']:g}, {p['rate_max']:g}) (its centre shown)",
    )
    return Outcome(
        computed,
        claimed,
        detail,
        holds=dec.holds,
        residual_expr=f"{p['rate_min']:g} < [{band[0]:.3f}, {band[1]:.3f}] < {p['rate_max']:g}, "
        f"gap resolved at every D: {dec.holds}",
        mde_rel=dec.mde_rate / pl.p if pl else None,
        mde_note=dec.mde_note(),
    )


KINDS = (check_kernel_value.kind, check_kernel_simulation.kind, check_kernel_gap_decay.kind)
