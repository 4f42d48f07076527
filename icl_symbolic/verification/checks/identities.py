"""Check kinds that are identities decided by SymPy: between quantities of the Hermite
family (from the definitions of Eq. (8), p. 3) and between expressions in a claim's
own symbols.
"""

from __future__ import annotations

import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.diagnosis.scale import family_expr
from icl_symbolic.engine.expr import check_cost
from icl_symbolic.verification.checks.common import pretty
from icl_symbolic.verification.registry import Outcome, Param, check_kind

#: simplify is given at most this many operations (SymPy's count_ops)
MAX_SIMPLIFY_OPS = 2000


@check_kind(
    "family_identity",
    params={
        "lhs": Param("family", True, doc="family expression"),
        "rhs": Param("family", True, doc="family expression"),
    },
)
def check_family_identity(claim) -> Outcome:
    """An identity between family quantities, from the definitions of Eq. (8) alone.

    ``rho_f = rho + E_f2`` and ``rho_nonlinear = rho_f - a1^2`` are substituted
    and ``lhs - rhs`` must cancel to 0 (SymPy), for every f and rho.
    """
    p = claim.parsed
    diff = sympy.simplify(family_expr(p["lhs"]) - family_expr(p["rhs"]))
    if diff == 0:
        return Outcome(
            detail=f"{pretty(p['lhs'])} - ({pretty(p['rhs'])}) cancels to 0 from Eq. (8)", holds=True, residual_expr="0"
        )
    return Outcome(
        detail=f"{pretty(p['lhs'])} - ({pretty(p['rhs'])}) = {pretty(diff)}, not 0",
        holds=False,
        residual_expr=pretty(diff),
    )


@check_kind(
    "symbolic_identity",
    params={
        "symbols": Param("str_list", True, doc="names of the symbols (all real; see 'assume')"),
        "assume": Param("str", False, "real", "real | positive", ("real", "positive")),
        "lhs": Param("symexpr", True, doc="left-hand side"),
        "rhs": Param("symexpr", True, doc="right-hand side"),
        "where": Param("symtable", False, None, "substitutions name = expression, applied before comparing"),
    },
)
def check_symbolic_identity(claim) -> Outcome:
    """``lhs == rhs`` as an identity in the listed symbols (SymPy ``simplify``)."""
    p = claim.parsed
    if p["assume"] not in ("real", "positive"):
        raise ICLError("assume must be 'real' or 'positive'")
    lhs, rhs = p["lhs"], p["rhs"]
    allsyms = {s.name: s for e in [lhs, rhs] + list((p["where"] or {}).values()) for s in e.free_symbols}
    new = {n: sympy.Symbol(n, real=True, positive=(p["assume"] == "positive") or None) for n in allsyms}
    ren = {s: new[n] for n, s in allsyms.items()}
    lhs, rhs = lhs.xreplace(ren), rhs.xreplace(ren)
    where = {new[k] if k in new else sympy.Symbol(k, real=True): v.xreplace(ren) for k, v in (p["where"] or {}).items()}
    for _ in range(10):
        nl, nr = lhs.subs(where), rhs.subs(where)
        if nl == lhs and nr == rhs:
            break
        lhs, rhs = nl, nr
        # substitutions can grow without bound (x = (y+2)**8, y = (z+2)**8, ...): the size
        # limits of the input language apply to what simplify will be given
        check_cost(lhs - rhs)
    if sympy.count_ops(lhs - rhs) > MAX_SIMPLIFY_OPS:
        raise ICLError(
            f"after the 'where' substitutions the identity has {sympy.count_ops(lhs - rhs)} "
            f"operations (limit {MAX_SIMPLIFY_OPS} for simplify, see docs/limits.md)"
        )
    diff = sympy.simplify(lhs - rhs)
    if diff == 0:
        return Outcome(detail=f"{pretty(lhs)} - ({pretty(rhs)}) simplifies to 0", holds=True, residual_expr="0")
    return Outcome(detail=f"lhs - rhs = {pretty(diff)}, not 0", holds=False, residual_expr=pretty(diff))


KINDS = (check_family_identity.kind, check_symbolic_identity.kind)
