"""Check kinds for the dual kernel of a teacher (Sec. 2, Eq. (2), p. 2; Eq. (8), p. 3).

The dual kernel K_f(rho) = E[f(u) f(v)] = sum_m a_m^2 rho^m (unit variances) and its derivative
map Kdot_f carry the paper's quantities: K_f(1) = E[f^2], Kdot_f(0) = a1^2 and
rho_nonlinear = rho + K_f(1) - Kdot_f(0).  Values come from
:func:`icl_symbolic.engine.dual.dual_map` with the closed-form table switched off by default, so a
literature closed form is checked against the series / quadrature routes, not against itself.
"""

from __future__ import annotations

import mpmath
import sympy

from icl_symbolic.core.values import Value
from icl_symbolic.engine.dual import dual_map
from icl_symbolic.engine.dual_deep import deep_pair
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


def _arccos_recursion(x, y, depth: int, sw, sb, dps: int = 50):
    """The literature ReLU recursion written out in mpmath (independent of the closed-form table):
    the arc-cosine kernel of degree 1 and its derivative (degree 0), Cho and Saul 2009, and the NTK
    Theta^(l+1) = K^(l+1) + sigma_w^2 Kdot^(l+1) Theta^l (Arora et al. 2019, Jacot et al. 2018)."""
    with mpmath.workdps(dps):
        sw, sb = (mpmath.mpf(sympy.N(v, dps)) for v in (sw, sb))
        x, y = [mpmath.mpf(sympy.N(v, dps)) for v in x], [mpmath.mpf(sympy.N(v, dps)) for v in y]
        d = len(x)
        q1 = sw * mpmath.fsum(a * a for a in x) / d + sb
        q2 = sw * mpmath.fsum(b * b for b in y) / d + sb
        c = sw * mpmath.fsum(a * b for a, b in zip(x, y)) / d + sb
        th = c
        for _ in range(depth):
            t = mpmath.acos(c / mpmath.sqrt(q1 * q2))
            k = mpmath.sqrt(q1 * q2) * (mpmath.sin(t) + (mpmath.pi - t) * mpmath.cos(t)) / (2 * mpmath.pi)
            c = sw * k + sb
            th = c + sw * (mpmath.pi - t) / (2 * mpmath.pi) * th
            q1, q2 = sw * q1 / 2 + sb, sw * q2 / 2 + sb
        return c, th


@check_kind(
    "deep_relu_literature",
    params={
        "quantity": Param("str", True, doc="K (NNGP) or Theta (NTK) at the last layer", choices=("K", "Theta")),
        "depth": Param("int", True, doc="number of hidden layers L"),
        "sigma_w2": Param("const", False, sympy.Integer(2), "weight variance"),
        "sigma_b2": Param("const", False, sympy.Integer(0), "bias variance"),
        "x": Param("str", True, doc="first input, comma-separated exact numbers"),
        "y": Param("str", True, doc="second input, comma-separated exact numbers"),
        "digits": Param("int", False, 30, "digits"),
    },
    needs=(("engine.dual_deep", "deep kernels"),),
    needs_attrs={"engine.dual_deep": ("deep_pair",)},
)
def check_deep_relu_literature(claim) -> Outcome:
    """deep_pair's depth-L ReLU NNGP / NTK (exact or Arb balls) against the literature arc-cosine
    recursion written out in mpmath at digits + 20 working digits."""
    p = claim.parsed
    x = [sympy.Rational(v.strip()) for v in p["x"].split(",")]
    y = [sympy.Rational(v.strip()) for v in p["y"].split(",")]
    r = deep_pair("relu(g)", x, y, p["depth"], p["sigma_w2"], p["sigma_b2"], p["digits"])
    computed = r.nngp[-1] if p["quantity"] == "K" else r.ntk[-1]
    k, th = _arccos_recursion(x, y, p["depth"], p["sigma_w2"], p["sigma_b2"], p["digits"] + 20)
    ref = k if p["quantity"] == "K" else th
    with mpmath.workdps(p["digits"] + 20):
        claimed = Value.from_exact(sympy.Float(mpmath.nstr(ref, p["digits"] + 15), p["digits"] + 15), p["digits"])
    detail = f"{p['quantity']}^{p['depth']} = {computed.to_str(12)} [deep_pair, {r.method}] vs the arc-cosine recursion"
    return Outcome(computed, claimed, detail)


KINDS = (check_dual_value.kind, check_deep_relu_literature.kind)
