"""Check kinds for the dual kernel of a teacher (Sec. 2, Eq. (2), p. 2; Eq. (8), p. 3).

The dual kernel K_f(rho) = E[f(u) f(v)] = sum_m a_m^2 rho^m (unit variances) and its derivative
map Kdot_f carry the paper's quantities: K_f(1) = E[f^2], Kdot_f(0) = a1^2 and
rho_nonlinear = rho + K_f(1) - Kdot_f(0).  Values come from
:func:`icl_symbolic.engine.dual.dual_map` with the closed-form table switched off by default, so a
literature closed form is checked against the series / quadrature routes, not against itself.
"""

from __future__ import annotations

import sympy

from icl_symbolic.engine.dual import dual_map
from icl_symbolic.verification.checks.common import const_value
from icl_symbolic.verification.registry import Outcome, Param, check_kind, param_text


@check_kind(
    "dual_value",
    params={
        "f": Param("teacher", True, doc="the teacher (activation) f(g)"),
        "quantity": Param(
            "str",
            True,
            doc="K (NNGP map), Kdot (derivative map) or rho_nonlinear",
            choices=("K", "Kdot", "rho_nonlinear"),
        ),
        "q1": Param("const", False, sympy.Integer(1), "variance of u"),
        "q2": Param("const", False, sympy.Integer(1), "variance of v"),
        "c": Param("const", False, sympy.Integer(0), "covariance of (u, v)"),
        "rho": Param("const", False, sympy.Integer(0), "label noise variance (rho_nonlinear only)"),
        "claimed": Param("const", True, doc="the claimed value (a closed form or a number)"),
        "closed": Param("bool", False, False, "allow the closed-form table (default: the numerical routes only)"),
        "digits": Param("int", False, 30, "digits"),
    },
    needs=(("engine.dual", "dual kernels"),),
    needs_attrs={"engine.dual": ("dual_map",)},
)
def check_dual_value(claim) -> Outcome:
    """A value of the NNGP / derivative map of f, or rho_nonlinear = rho + K_f(1) - Kdot_f(0)."""
    p = claim.parsed
    f = param_text(claim.params["f"])
    what = p["quantity"]
    d = p["digits"]
    if what == "rho_nonlinear":
        one = dual_map(f, 1, 1, 1, d, derivative=False, closed=p["closed"]).nngp
        zero = dual_map(f, 1, 1, 0, d, closed=p["closed"]).derivative
        computed = (one - zero) + p["rho"]
        detail = f"rho + K_f(1) - Kdot_f(0) = {computed.to_str(12)} [{computed.provenance()}]"
    else:
        pt = dual_map(f, p["q1"], p["q2"], p["c"], d, derivative=what == "Kdot", closed=p["closed"])
        computed = pt.nngp if what == "K" else pt.derivative
        detail = (
            f"{what}_f({p['q1']}, {p['q2']}, {p['c']}) = {computed.to_str(12)} [{', '.join(r for r in pt.routes if r)}]"
        )
    claimed = const_value(p["claimed"], d)
    return Outcome(computed, claimed, detail + f" vs claimed {param_text(claim.params['claimed'])}")


KINDS = (check_dual_value.kind,)
