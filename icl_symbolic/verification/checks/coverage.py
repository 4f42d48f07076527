"""Check kinds that reach library values a user-facing command prints and no other kind reads
(derivations/13_library_coverage.toml; benchmarks/mutation_harness.py measures which claims
catch which library errors).

``hermite_field``: a field of :class:`icl_symbolic.engine.hermite.HermiteResult` as ``icl-symbolic
coeffs`` prints it (``noise_normalized``, the Fig. 1 legend value rho_nonlinear/a1^2 of
Sec. 3, p. 3-4; ``signal_fraction`` a1^2/E[f^2]; ``a1_sq``; ``parseval_residual``) against
a family expression or a number.  The other kinds evaluate family expressions from a1, E[f^2]
and rho_nonlinear themselves, so a wrong printed field would pass them.

``a1zero_derivation``: a step of :func:`icl_symbolic.theory.a1zero.derive` (Eq. (10), p. 3; Eq. (15),
p. 10) that the lam -> 0 limits of ``a1zero_limit`` do not read: the ridge curve e(lam) from the
linear recipe with zero task covariance equals the pure-noise ridge variance, Result 1 with
C = a1^2 I tends to Eq. (10) as a1 -> 0, and the ridge keeps e finite at tau = 1.
"""

from __future__ import annotations

import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.values import Value
from icl_symbolic.verification.checks.common import (
    a1zero_derivation,
    evaluate_with,
    family_diagnosis,
    hermite_values,
    pretty,
)
from icl_symbolic.verification.registry import Outcome, Param, check_kind, param_text

FIELDS = ("noise_normalized", "signal_fraction", "a1_sq", "rho_f", "rho_nonlinear", "parseval_residual")


@check_kind(
    "hermite_field",
    params={
        "f": Param("teacher", True, doc="the teacher f(g)"),
        "rho": Param("const", False, sympy.Integer(0), "label noise variance rho"),
        "field": Param("str", True, doc="the HermiteResult field coeffs prints", choices=FIELDS),
        "claimed": Param(
            "family",
            True,
            doc="its definition or value: expression in a1, E_f2, rho, rho_f, rho_nonlinear, a0..a30, or a number",
        ),
        "M": Param("int", False, 2, "highest Hermite order computed (only parseval_residual depends on it)"),
        "digits": Param("int", False, 30, "working digits"),
    },
    needs=(("engine.hermite", "Hermite coefficients"),),
    needs_attrs={"engine.hermite": ("hermite_coeffs",)},
)
def check_hermite_field(claim) -> Outcome:
    """A printed field of :func:`icl_symbolic.engine.hermite.hermite_coeffs` (Eq. 2, p. 2; Eq. 8, p. 3)
    against ``claimed``, evaluated from the same result's a1, E[f^2], rho_f, rho_nonlinear, a_m
    (exact, or with first-order error propagation)."""
    p = claim.parsed
    res, vals = hermite_values(claim, M=p["M"], digits=p["digits"])
    computed = getattr(res, p["field"])
    if not isinstance(computed, Value):
        raise ICLError(f"{p['field']} is not defined for f = {claim.params['f']} (a1 = 0 or E[f^2] = 0)")
    claimed = evaluate_with(p["claimed"], vals, p["digits"], note=f"{pretty(p['claimed'])}")
    detail = (
        f"hermite_coeffs({param_text(claim.params['f'])}).{p['field']} = {computed.to_str(12)} "
        f"[{computed.provenance()}] vs {pretty(p['claimed'])} = {claimed.to_str(12)}"
    )
    # on a mismatch, say what the printed number is in the family (e.g. rho_nonlinear, a1^2 missing)
    return Outcome(computed, claimed, detail, diagnosis_fn=family_diagnosis(claim, computed, vals, p["claimed"]))


#: step -> (attribute of A1ZeroDerivation, what it establishes)
A1ZERO_STEPS = {
    "ridge_from_linear_recipe": (
        "error_ridge_matches_pure_noise",
        "the linear recipe (steps 4-5) with C = 0 at eps = lam_tilde (the root of the C = 0 "
        "ridge equation, residual 0) equals rho_nl/(1 - q^2/(tau (q + lam_tilde)^2)), the "
        "pure-noise ridge variance",
    ),
    "continuity_from_result1": (
        "continuity_from_result1",
        "M_{cI}(nu) -> 1/nu, M' -> -1/nu^2 as c = a1^2 -> 0, and the ridgeless recipe with "
        "them gives Eq. (10) on both sides of tau = 1",
    ),
    "ridge_removes_peak": (
        "ridge_removes_peak",
        "at tau = 1 and lam > 0 the denominator of e(lam) is 4 q^2 - X^2 with X > 2 q (finite), "
        "and e -> infinity as lam -> 0",
    ),
}


@check_kind(
    "a1zero_derivation",
    params={
        "step": Param("str", True, doc="the step of a1zero.derive() that must hold", choices=tuple(A1ZERO_STEPS)),
    },
    needs=(("theory.a1zero", "a1 = 0 derivation"),),
    needs_attrs={"theory.a1zero": ("derive",)},
)
def check_a1zero_derivation(claim) -> Outcome:
    """A symbolic step of the a1 = 0 derivation (Eq. 10, p. 3; Eq. 15, p. 10) that the lam -> 0
    limits do not read (:func:`icl_symbolic.theory.a1zero.derive`, SymPy)."""
    step = claim.parsed["step"]
    attr, what = A1ZERO_STEPS[step]
    holds = bool(getattr(a1zero_derivation(), attr))
    detail = f"{step}: {what}" + ("" if holds else " -- does NOT simplify as stated")
    return Outcome(detail=detail, holds=holds, residual_expr="0" if holds else f"{attr} is False")


KINDS = (check_hermite_field.kind, check_a1zero_derivation.kind)
