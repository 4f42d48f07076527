"""Check kinds for the Hermite family of a teacher (Sec. 2, Eq. (2), p. 2; Eq. (8), p. 3)
and for Gaussian expectations E[F(g)], exact, mpmath, or Monte Carlo.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.values import Value
from icl_symbolic.engine.expr import teacher
from icl_symbolic.engine.gauss import expect
from icl_symbolic.verification.checks.common import const_value, evaluate_with, family_diagnosis, hermite_values, pretty
from icl_symbolic.verification.registry import Outcome, Param, check_kind, param_text


@check_kind(
    "hermite_value",
    params={
        "f": Param("teacher", True, doc="the teacher f(g)"),
        "rho": Param("const", False, sympy.Integer(0), "label noise variance rho"),
        "quantity": Param("family", True, doc="expression in a1, E_f2, rho, rho_f, rho_nonlinear, a0..a30"),
        "claimed": Param("const", True, doc="the paper's number or closed form"),
        "M": Param("int", False, None, "highest Hermite order computed (default: from the quantity)"),
        "digits": Param("int", False, 30, "working digits"),
    },
    needs=(("engine.hermite", "Hermite coefficients"),),
    needs_attrs={"engine.hermite": ("hermite_coeffs",)},
)
def check_hermite_value(claim) -> Outcome:
    """A quantity of the Hermite family of f at noise rho (Eq. 2, p. 2; Eq. 8, p. 3).

    Values come from :func:`icl_symbolic.engine.hermite.hermite_coeffs` (exact when
    SymPy finds closed forms, mpmath quadrature otherwise); the quantity is
    evaluated exactly or with first-order error propagation.  On a mismatch the
    claimed number is diagnosed against the family.
    """
    p = claim.parsed
    q = p["quantity"]
    orders = [int(s.name[1:]) for s in q.free_symbols if s.name[0] == "a" and s.name[1:].isdigit()]
    M = p["M"] if p["M"] is not None else max(orders + [2])
    res, vals = hermite_values(claim, M=M, digits=p["digits"])
    computed = evaluate_with(q, vals, p["digits"], note=f"{q} for f = {claim.params['f']}")
    claimed = const_value(p["claimed"], p["digits"])
    detail = (
        f"{pretty(q)} = {computed.to_str(12)} [{computed.provenance()}] vs claimed "
        f"{param_text(claim.params['claimed'])}"
    )
    return Outcome(computed, claimed, detail, diagnosis_fn=family_diagnosis(claim, claimed, vals, q))


@check_kind(
    "gauss_expectation",
    params={
        "F": Param("teacher", True, doc="integrand F(g), g ~ N(0, 1)"),
        "claimed": Param("const", True, doc="claimed value of E[F(g)]"),
        "digits": Param("int", False, 30, "digits"),
    },
    needs=(("engine.gauss", "Gaussian expectations"),),
    needs_attrs={"engine.gauss": ("expect",)},
)
def check_gauss_expectation(claim) -> Outcome:
    """E[F(g)] for g ~ N(0, 1) by :func:`icl_symbolic.engine.gauss.expect` (exact or mpmath)."""
    p = claim.parsed
    computed = expect(param_text(claim.params["F"]), digits=p["digits"])
    claimed = const_value(p["claimed"], p["digits"])
    return Outcome(computed, claimed, f"E[{claim.params['F']}] = {computed.to_str(12)} [{computed.provenance()}]")


@check_kind(
    "mc_expectation",
    params={
        "F": Param("teacher", True, doc="integrand F(g), g ~ N(0, 1)"),
        "claimed": Param("const", True, doc="claimed value of E[F(g)]"),
        "n": Param("int", False, 400_000, "number of draws"),
        "seed": Param("int", True, doc="seed of numpy.random.default_rng"),
        "max_rel_se": Param("number", False, 0.01, "the SE must be below this fraction of |claimed|"),
    },
)
def check_mc_expectation(claim) -> Outcome:
    """E[F(g)] by seeded Monte Carlo, judged in standard errors (tolerance kind z).

    The SE is the sample standard deviation / sqrt(n).  A run whose SE exceeds
    ``max_rel_se`` x |claimed| is an error (too noisy to decide), so a claim
    cannot pass merely because the test has no power.
    """
    p = claim.parsed
    n = p["n"]
    if not 100 <= n <= 50_000_000:
        raise ICLError("n must be between 100 and 5e7")
    F = teacher(param_text(claim.params["F"]))
    rng = np.random.default_rng(p["seed"])
    total, total2, done = 0.0, 0.0, 0
    while done < n:
        m = min(1_000_000, n - done)
        y = F.numpy(rng.standard_normal(m))
        total += float(y.sum())
        total2 += float((y * y).sum())
        done += m
    mean = total / n
    var = max(total2 / n - mean * mean, 0.0) * n / (n - 1)
    se = (var / n) ** 0.5
    claimed = const_value(p["claimed"])
    if se > p["max_rel_se"] * abs(float(claimed)):
        raise ICLError(f"Monte-Carlo SE {se:.3g} exceeds {p['max_rel_se']:g} x |claimed|; increase n")
    computed = Value(
        value=mpmath.mpf(mean), method="mc", stderr=se, n_samples=n, seeds=(p["seed"],), note=f"E[{claim.params['F']}]"
    )
    return Outcome(computed, claimed, f"MC mean {mean:.6g} (SE {se:.2g}, n={n}, seed={p['seed']})")


KINDS = (check_hermite_value.kind, check_gauss_expectation.kind, check_mc_expectation.kind)
