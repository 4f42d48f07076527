"""Check kind for the a1 = 0 branch (Eq. (10), p. 3; Eq. (15), p. 10): the SymPy
derivation of the ridgeless limits against the paper's forms.
"""

from __future__ import annotations

import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.verification.checks.common import a1zero_derivation, pretty
from icl_symbolic.verification.registry import Outcome, Param, check_kind


@check_kind(
    "a1zero_limit",
    params={
        "quantity": Param("str", True, doc="'error' (Eq. 10) or 'lam_tilde' (Eq. 15)", choices=("error", "lam_tilde")),
        "symbols": Param(
            "str_list", False, ["q", "tau", "rho_nl", "lam", "alpha", "kappa"], "symbols of the paper's forms"
        ),
        "below": Param("symexpr", True, doc="the paper's form for tau < 1 (lam -> 0)"),
        "above": Param("symexpr", True, doc="the paper's form for tau > 1 (lam -> 0)"),
    },
    needs=(("theory.a1zero", "a1 = 0 derivation"),),
    needs_attrs={"theory.a1zero": ("derive",)},
)
def check_a1zero_limit(claim) -> Outcome:
    """The a1 = 0 branch (Eq. 10, p. 3; Eq. 15, p. 10) derived in SymPy vs the paper's forms.

    :func:`icl_symbolic.theory.a1zero.derive` solves the fixed point for chi0, takes
    lam -> 0 for tau < 1 and tau > 1, and evaluates the linear recipe with zero
    task covariance; both branches must equal the forms the claim writes.
    """
    D = a1zero_derivation()
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
    txt = "; ".join(f"{lab}: derived {pretty(dv)}, paper {pretty(pp)}" for lab, dv, pp, _ in res)
    if not bad:
        return Outcome(detail=f"{q}: {txt}", holds=True, residual_expr="0")
    return Outcome(
        detail=f"{q}: {txt}; residual " + "; ".join(f"{lab}: {pretty(r)}" for lab, _, _, r in bad),
        holds=False,
        residual_expr="; ".join(pretty(r[3]) for r in bad),
    )


KINDS = (check_a1zero_limit.kind,)
