"""Check kinds that reach library values a user-facing command prints and no other kind reads
(derivations/13_library_coverage.toml; benchmarks/mutation_harness.py measures which claims
catch which library errors).

``hermite_field``: a field of :class:`icl_symbolic.hermite.HermiteResult` as ``icl-symbolic
coeffs`` prints it (``noise_normalized``, the Fig. 1 legend value rho_nonlinear/a1^2 of
Sec. 3, p. 3-4; ``signal_fraction`` a1^2/E[f^2]; ``a1_sq``; ``parseval_residual``) against
a family expression or a number.  The other kinds evaluate family expressions from a1, E[f^2]
and rho_nonlinear themselves, so a wrong printed field would pass them.
"""

from __future__ import annotations

import sympy

from ...errors import ICLError
from ...values import Value
from ..registry import Param, Outcome, _text, check_kind
from .common import _family_diagnosis, _pretty, evaluate_with, hermite_values

FIELDS = ("noise_normalized", "signal_fraction", "a1_sq", "rho_f", "rho_nonlinear", "parseval_residual")


@check_kind("hermite_field", params={
    "f": Param("teacher", True, doc="the teacher f(g)"),
    "rho": Param("const", False, sympy.Integer(0), "label noise variance rho"),
    "field": Param("str", True, doc="the HermiteResult field coeffs prints", choices=FIELDS),
    "claimed": Param("family", True, doc="its definition or value: expression in a1, E_f2, rho, rho_f, "
                     "rho_nonlinear, a0..a30, or a number"),
    "M": Param("int", False, 2, "highest Hermite order computed (only parseval_residual depends on it)"),
    "digits": Param("int", False, 30, "working digits"),
}, needs=(("hermite", "Hermite coefficients"),), needs_attrs={"hermite": ("hermite_coeffs",)})
def check_hermite_field(claim) -> Outcome:
    """A printed field of :func:`icl_symbolic.hermite.hermite_coeffs` (Eq. 2, p. 2; Eq. 8, p. 3)
    against ``claimed``, evaluated from the same result's a1, E[f^2], rho_f, rho_nonlinear, a_m
    (exact, or with first-order error propagation)."""
    p = claim.parsed
    res, vals = hermite_values(claim, M=p["M"], digits=p["digits"])
    computed = getattr(res, p["field"])
    if not isinstance(computed, Value):
        raise ICLError(f"{p['field']} is not defined for f = {claim.params['f']} (a1 = 0 or E[f^2] = 0)")
    claimed = evaluate_with(p["claimed"], vals, p["digits"], note=f"{_pretty(p['claimed'])}")
    detail = (f"hermite_coeffs({_text(claim.params['f'])}).{p['field']} = {computed.to_str(12)} "
              f"[{computed.provenance()}] vs {_pretty(p['claimed'])} = {claimed.to_str(12)}")
    # on a mismatch, say what the printed number is in the family (e.g. rho_nonlinear, a1^2 missing)
    return Outcome(computed, claimed, detail, diagnosis_fn=_family_diagnosis(claim, computed, vals, p["claimed"]))


KINDS = (check_hermite_field.kind,)
