"""Check kinds for Appendix A (p. 7) and Result 1's conditions on the task covariance:
moments of sigma_w = |w|^2/d by Monte Carlo, and whether tr C = d, tr C^2 = o(d^2) hold.
"""

from __future__ import annotations

import numpy as np
import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import sample_se
from icl_symbolic.core.values import Value
from icl_symbolic.model.covariance import appendix_a, resolve_covariance, sample_tasks
from icl_symbolic.verification.checks.common import pretty
from icl_symbolic.verification.registry import Outcome, Param, check_kind


@check_kind(
    "appendix_a",
    params={
        "C": Param("str", True, doc="covariance: identity, powerlaw:p, spiked:f:r, lowrank:r"),
        "d": Param("int", True, doc="dimension"),
        "statistic": Param(
            "str", True, doc="'mean' (E[sigma_w]) or 'var' (Var(sigma_w)), sigma_w = |w|^2/d", choices=("mean", "var")
        ),
        "formula": Param("symexpr", True, doc="claimed formula in tr_C, tr_C2, d"),
        "symbols": Param("str_list", False, ["tr_C", "tr_C2", "d"], "symbols of formula"),
        "n_tasks": Param("int", False, 20000, "tasks sampled"),
        "seed": Param("int", True, doc="seed of numpy.random.default_rng"),
    },
    needs=(("model.covariance", "task covariances"),),
    needs_attrs={"model.covariance": ("resolve_covariance",)},
)
def check_appendix_a(claim) -> Outcome:
    """Appendix A, p. 7: moments of sigma_w = |w|^2/d for w ~ N(0, C), by Monte Carlo.

    Tasks come from :func:`icl_symbolic.model.covariance.sample_tasks`; the sample
    mean (SE = std/sqrt(n)) or the sample variance (SE from the fourth central
    moment, sqrt((m4 - s^4)/n)) is compared with the claimed formula evaluated
    at tr(C), tr(C^2) in standard errors (tolerance kind z).
    """
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
        est, se = float(sig.mean()), float(sample_se(sig))
    elif p["statistic"] == "var":
        c = sig - sig.mean()
        s2 = float(np.mean(c**2)) * n / (n - 1)
        m4 = float(np.mean(c**4))
        est, se = s2, float(np.sqrt(max(m4 - s2 * s2, 0.0) / n))
    else:
        raise ICLError("statistic must be 'mean' or 'var'")
    env = {"tr_C": sympy.Float(cov.trace, 17), "tr_C2": sympy.Float(cov.trace_sq, 17), "d": cov.d}
    f = p["formula"]
    val = float(sympy.N(f.xreplace({s: env[s.name] for s in f.free_symbols if s.name in env}), 17))
    computed = Value(
        est,
        "mc",
        stderr=se,
        n_samples=n,
        seeds=(p["seed"],),
        note=f"{p['statistic']} of |w|^2/d, w ~ N(0, {p['C']}), d={cov.d}",
    )
    claimed = Value(val, "numeric", note=f"{pretty(f)} at tr C = {cov.trace:.6g}, tr C^2 = {cov.trace_sq:.6g}")
    if se > 0.05 * abs(val):
        raise ICLError(f"SE {se:.3g} is more than 5% of the claimed {val:.3g}; increase n_tasks")
    return Outcome(
        computed,
        claimed,
        f"{p['statistic']}(|w|^2/d) = {est:.6g} (SE {se:.2g}) vs {pretty(f)} = {val:.6g} for C = {p['C']}, d = {cov.d}",
    )


@check_kind(
    "appendix_a_condition",
    params={
        "C": Param("str", True, doc="covariance family"),
        "d": Param("int", True, doc="dimension"),
        "claimed": Param("bool", True, doc="whether Result 1's conditions hold (tr C = d, tr C^2 = o(d^2))"),
    },
    needs=(("model.covariance", "task covariances"),),
    needs_attrs={"model.covariance": ("appendix_a",)},
)
def check_appendix_a_condition(claim) -> Outcome:
    """Result 1's conditions (p. 3; Appendix A, p. 7) for a covariance family: true or false."""
    p = claim.parsed
    a = appendix_a(resolve_covariance(p["C"], p["d"]))
    got = a.holds
    if got is None:
        raise ICLError(f"{p['C']}: the conditions cannot be decided from one matrix")
    holds = bool(got) == p["claimed"]
    return Outcome(
        detail=f"{a.message()}; claimed {'hold' if p['claimed'] else 'fail'}",
        holds=holds,
        residual_expr="0" if holds else "verdict differs",
    )


KINDS = (check_appendix_a.kind, check_appendix_a_condition.kind)
