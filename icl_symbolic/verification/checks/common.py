"""Helpers shared by the check kinds: claim parameters as text, the teacher's
Hermite family as named Values, evaluating family expressions with error
propagation, and the scale-mismatch diagnosis hook.
"""

from __future__ import annotations

import sympy

from icl_symbolic.core.caches import memoize, store
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.propagation import evaluate_at
from icl_symbolic.core.values import Value
from icl_symbolic.diagnosis.scale import diagnose_value, slip_report
from icl_symbolic.engine.hermite import hermite_coeffs
from icl_symbolic.model.setting import FIELD_DOCS, Setting
from icl_symbolic.theory.a1zero import derive
from icl_symbolic.verification.registry import Param, param_text


def pretty(e) -> str:
    return str(e).replace("**", "^")


_A1Z_CACHE = store(__name__ + "._A1Z_CACHE", list)


def a1zero_derivation():
    """:func:`icl_symbolic.theory.a1zero.derive` (about a second), once per run; its result is immutable."""
    if not _A1Z_CACHE:
        _A1Z_CACHE.append(derive())
    return _A1Z_CACHE[0]


def _teacher_text(claim, key="f"):
    return param_text(claim.params[key])


@memoize(maxsize=256)
def _hermite_cached(f_text: str, rho_text: str, M: int, digits: int):
    """hermite_coeffs, once per (teacher text, rho, M, digits) in a run (results are immutable)."""
    return hermite_coeffs(f_text, M=M, rho=rho_text, digits=digits)


def hermite_values(claim, M: int = 2, digits: int = 30):
    """HermiteResult for the claim's (f, rho), and a name -> Value map (Eq. 2, Eq. 8)."""
    p = claim.parsed
    res = _hermite_cached(_teacher_text(claim), str(p["rho"]), max(M, 2), digits)
    rho_v = Value.from_exact(p["rho"], digits=digits, note="rho (claim input)")
    vals = {"a1": res.a1, "E_f2": res.E_f2, "rho": rho_v, "rho_f": res.rho_f, "rho_nonlinear": res.rho_nonlinear}
    for m, am in enumerate(res.a):
        if m != 1 and m <= 30:
            vals[f"a{m}"] = am
    return res, vals


def evaluate_with(expr, vals: dict, digits: int = 30, note: str = "") -> Value:
    """Evaluate ``expr`` at named Values (``vals``: symbol name -> Value) by
    :func:`icl_symbolic.core.propagation.evaluate_at`: exact when every input is exact
    (simplified), else with first-order error propagation."""
    syms = {s.name: s for s in expr.free_symbols}
    missing = [n for n in syms if n not in vals]
    if missing:
        raise ICLError(f"no value for {', '.join(sorted(missing))}")
    return evaluate_at(expr, {s: vals[n] for n, s in syms.items()}, digits, note, canonical=sympy.simplify)


def const_value(e, digits: int = 30, note: str = "claimed") -> Value:
    return Value.from_exact(e, digits=digits, note=note)


def _is_family(expr) -> bool:
    return all(s.name in ("a1", "E_f2", "rho", "rho_f", "rho_nonlinear") for s in expr.free_symbols)


def _diag_tol(claim, claimed: Value):
    """Matching tolerance for a diagnosis: the claim's own absolute tolerance."""
    t = claim.tolerance
    if t.kind == "abs":
        return t.value
    if t.kind == "rel":
        return t.value * abs(float(claimed))
    return None


def family_diagnosis(claim, claimed: Value, vals, required_expr):
    base = {k: vals[k] for k in ("a1", "E_f2", "rho")}
    req = required_expr if (required_expr is not None and _is_family(required_expr)) else None

    def fn():
        tol = _diag_tol(claim, claimed)
        d = diagnose_value(claimed.value, values=base, tol=tol, required=req)
        if required_expr is not None and "f" in claim.params:
            d.slips = slip_report(
                claimed.value, param_text(claim.params["f"]), claim.parsed["rho"], required=required_expr, tol=tol
            )
        return d

    return fn


def numeric_value(e, vals_fn) -> float:
    if not e.free_symbols:
        return float(sympy.N(e, 20))
    vals = vals_fn()
    return float(evaluate_with(e, vals, 20).value)


def lazy_family(claim):
    """name -> Value of the claim's teacher family (computed once, on first use)."""
    box = []

    def get():
        if not box:
            if "f" not in claim.params:
                raise ICLError("this claim uses a1/rho_f/rho_nonlinear but gives no teacher f")
            box.append(hermite_values(claim)[1])
        return box[0]

    return get


def setting_params(dimension: tuple, *, middle: dict | None = None, learner: bool = False, lam_doc: str = "") -> dict:
    """The claim keys of a setting (``f``, ``rho``, the dimension, ``alpha``, ``kappa``, ``tau``, ``lam``),
    documented from :data:`icl_symbolic.model.setting.FIELD_DOCS` (one table for every simulation kind).

    ``dimension``: ``(key, Param)``, e.g. ``("d", Param("int", True, doc="dimension"))`` or the ladder
    ``("d_list", ...)``; ``middle``: keys placed between ``rho`` and the dimension (the kernel learner's
    ``features``); ``learner``: the ratios are the kernel learner's own (ell/D, k/D, n/D^2).
    """
    own = " (the kernel learner's own ratio: d stands for D)" if learner else ""
    return {
        "f": Param("teacher", True, doc=FIELD_DOCS["f"]),
        "rho": Param("const", True, doc=FIELD_DOCS["rho"]),
        **(middle or {}),
        dimension[0]: dimension[1],
        **{k: Param("number", True, doc=FIELD_DOCS[k] + own) for k in ("alpha", "kappa", "tau")},
        "lam": Param("number", False, 0.0, lam_doc or FIELD_DOCS["lam"]),
    }


def claim_setting(claim, **fields) -> Setting:
    """The :class:`~icl_symbolic.model.setting.Setting` of a claim's parsed setting keys (``rho`` read at 17
    digits), with ``fields`` (``d``, ``features``, ``C_train``, ``n_test``, ...) on top."""
    p = claim.parsed
    return Setting(
        param_text(claim.params["f"]),
        rho=float(sympy.N(p["rho"], 17)),
        alpha=p["alpha"],
        kappa=p["kappa"],
        tau=p["tau"],
        lam=p["lam"],
        **fields,
    )
