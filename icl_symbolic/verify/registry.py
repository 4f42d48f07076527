"""Check kinds: the registry that maps a claim's ``check`` name to library code.

A claim file names a check (``check = "hermite_value"``) and gives its
parameters; the check computes a :class:`~icl_symbolic.values.Value` from the
library (never re-deriving the mathematics here) and the claimed value, and
:func:`icl_symbolic.claims.compare` applies the claim's tolerance.  Each kind
declares

* ``params``: name -> :class:`Param` (type, required, default), validated and
  parsed at load time, so a malformed claim fails before anything runs;
* ``needs``: the library modules it calls; a claim whose module has not landed
  is reported ``unavailable: needs ...`` (never skipped silently).

Expressions are parsed by :func:`icl_symbolic.expr.parse_expr` with an explicit
variable whitelist per parameter type:

``teacher``  an expression in ``g`` (the teacher f or an integrand F(g));
``const``    a constant expression (``"0.1"``, ``"(1 - exp(-2))/2"``); TOML
             numbers are accepted and read exactly from their decimal text;
``family``   an expression in ``a1, E_f2, rho, rho_f, rho_nonlinear`` (and
             ``a0 ... a9`` where a check evaluates Hermite coefficients);
``symexpr``  an expression in the claim's own ``symbols`` list.

``python -c "from icl_symbolic.checks import describe; print(describe())"``
lists the kinds and their parameters (also in ``docs/claims-format.md``).

This module holds the registry, the parameter parsing and the kinds that need
only the Hermite family (``hermite_value``, ``family_identity``,
``symbolic_identity``, ``gauss_expectation``, ``mc_expectation``); the kinds
backed by moments, theory, the a1 = 0 derivation, Appendix A and simulations
are in :mod:`icl_symbolic.checks_model`, imported at the end of this module.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import mpmath
import sympy

from .errors import ICLError
from .values import Value

HERMITE_NAMES = ("a1", "E_f2", "rho", "rho_f", "rho_nonlinear") + tuple(f"a{m}" for m in range(31) if m != 1)


@dataclass(frozen=True)
class Param:
    """One parameter of a check kind."""

    type: str                 # teacher | const | family | symexpr | int | number | bool | str | str_list | table
    required: bool = False
    default: Any = None
    doc: str = ""
    choices: tuple = ()


@dataclass
class Outcome:
    """What a check returns to the runner."""

    computed: Value | None = None
    claimed: Value | None = None
    detail: str = ""
    holds: bool | None = None              # set only by checks that judge themselves (symbolic)
    residual_expr: str | None = None       # symbolic residual ("0" when it holds)
    diagnosis_fn: Callable | None = None   # lazily computes a Diagnosis on mismatch
    figures: list = field(default_factory=list)
    also_required: tuple | None = None     # (bool, reason): a further condition for "holds"


@dataclass(frozen=True)
class CheckKind:
    name: str
    func: Callable
    params: dict
    needs: tuple = ()          # ((module, what it provides), ...)
    needs_attrs: dict = field(default_factory=dict)
    doc: str = ""

    def validate(self, params: dict, where: str) -> dict:
        """Type-check and parse ``params``; returns the parsed values."""
        from .claims import ClaimFileError

        unknown = sorted(set(params) - set(self.params))
        if unknown:
            raise ClaimFileError(f"{where}: unknown key(s) {', '.join(unknown)} for check "
                                 f"{self.name!r}; allowed: {', '.join(sorted(self.params))}")
        parsed = {}
        ctx = {n: sp.default for n, sp in self.params.items() if sp.default is not None}
        ctx.update(params)
        for name, spec in self.params.items():
            if name not in params:
                if spec.required:
                    raise ClaimFileError(f"{where}: check {self.name!r} needs key {name!r} ({spec.doc})")
                parsed[name] = spec.default
                continue
            try:
                parsed[name] = _parse_param(spec, params[name], ctx)
            except ICLError as exc:
                raise ClaimFileError(f"{where}: {name} = {params[name]!r}: {exc}") from None
        return parsed


REGISTRY: dict[str, CheckKind] = {}


def register(name, params, needs=(), needs_attrs=None):
    """Decorator: add a check kind to :data:`REGISTRY`."""

    def deco(func):
        REGISTRY[name] = CheckKind(name=name, func=func, params=params, needs=tuple(needs),
                                   needs_attrs=dict(needs_attrs or {}),
                                   doc=(func.__doc__ or "").strip())
        return func

    return deco


def describe() -> str:
    """Plain-text list of the check kinds and their parameters."""
    lines = []
    for name in sorted(REGISTRY):
        k = REGISTRY[name]
        lines.append(f"{name}: {k.doc.splitlines()[0] if k.doc else ''}")
        if k.needs:
            lines.append("  needs: " + ", ".join(f"icl_symbolic.{m}" for m, _ in k.needs))
        for p, spec in k.params.items():
            req = "required" if spec.required else f"default {spec.default!r}"
            lines.append(f"  {p} ({spec.type}, {req}): {spec.doc}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Parameter parsing (safe: only through expr.parse_expr)
# ---------------------------------------------------------------------------

def _text(v) -> str:
    if isinstance(v, bool):
        raise ICLError("expected an expression, got a boolean")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ICLError("not a finite number")
        return repr(v)
    if isinstance(v, str):
        return v
    raise ICLError(f"expected an expression string or a number, got {type(v).__name__}")


def _parse(text, variables):
    from .expr import parse_expr
    return parse_expr(_text(text), variables=tuple(variables))


def _parse_param(spec: Param, v, params):
    t = spec.type
    if t == "teacher":
        return _parse(v, ("g",))
    if t == "const":
        e = _parse(v, ())
        if e.free_symbols:
            raise ICLError("must be a constant")
        return e
    if t == "family":
        return _parse(v, HERMITE_NAMES)
    if t == "sweepfamily":
        return _parse(v, HERMITE_NAMES + SWEEP_NAMES)
    if t == "symexpr":
        syms = params.get("symbols")
        if not isinstance(syms, list) or not all(isinstance(s, str) for s in syms):
            raise ICLError("needs a 'symbols' list of names")
        return _parse(v, syms)
    if t == "formtable":
        syms = params.get("symbols", list(MOMENT_SYMBOLS))
        if not isinstance(v, dict) or not v:
            raise ICLError("must be a non-empty table of name = expression")
        return {k: _parse(e, syms) for k, e in v.items()}
    if t == "symtable":
        syms = params.get("symbols")
        if not isinstance(v, dict):
            raise ICLError("must be a table of name = expression")
        if not isinstance(syms, list):
            raise ICLError("needs a 'symbols' list of names")
        out = {}
        for k, e in v.items():
            if k not in syms:
                raise ICLError(f"substitution for {k!r}, which is not in 'symbols'")
            out[k] = _parse(e, syms)
        return out
    if t == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            raise ICLError("must be an integer")
        return v
    if t == "number":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ICLError("must be a number")
        return float(v)
    if t == "bool":
        if not isinstance(v, bool):
            raise ICLError("must be true or false")
        return v
    if t == "str":
        if not isinstance(v, str):
            raise ICLError("must be a string")
        if spec.choices and v not in spec.choices:
            raise ICLError(f"must be one of {', '.join(spec.choices)}")
        return v
    if t == "int_list":
        if not isinstance(v, list) or len(v) < 2 or not all(isinstance(x, int) and not isinstance(x, bool)
                                                            for x in v):
            raise ICLError("must be a list of at least two integers")
        return list(v)
    if t == "str_list":
        if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
            raise ICLError("must be a list of strings")
        return list(v)
    if t == "call":
        return _parse_call(v)
    if t == "table":
        if not isinstance(v, dict):
            raise ICLError("must be a table")
        return dict(v)
    raise AssertionError(t)


# ---------------------------------------------------------------------------
# Helpers shared by the checks
# ---------------------------------------------------------------------------

def _teacher_text(claim, key="f"):
    return _text(claim.params[key])


@functools.lru_cache(maxsize=256)
def _hermite_cached(f_text: str, rho_text: str, M: int, digits: int):
    """hermite_coeffs, once per (teacher text, rho, M, digits) in a run (results are immutable)."""
    from .hermite import hermite_coeffs
    return hermite_coeffs(f_text, M=M, rho=rho_text, digits=digits)


def hermite_values(claim, M: int = 2, digits: int = 30):
    """HermiteResult for the claim's (f, rho), and a name -> Value map (Eq. 2, Eq. 8)."""
    p = claim.parsed
    res = _hermite_cached(_teacher_text(claim), str(p["rho"]), max(M, 2), digits)
    rho_v = Value.from_exact(p["rho"], digits=digits, note="rho (claim input)")
    vals = {"a1": res.a1, "E_f2": res.E_f2, "rho": rho_v, "rho_f": res.rho_f,
            "rho_nonlinear": res.rho_nonlinear}
    for m, am in enumerate(res.a):
        if m != 1 and m <= 30:
            vals[f"a{m}"] = am
    return res, vals


def evaluate_with(expr, vals: dict, digits: int = 30, note: str = "") -> Value:
    """Evaluate ``expr`` at named Values; exact when every input is exact.

    Otherwise the absolute error is propagated to first order,
    ``sum_i |d expr / d x_i| err_i``, with ``err_i`` the input's ``abs_err``
    (or one unit in its last certified digit when none is given).
    """
    syms = {s.name: s for s in expr.free_symbols}
    missing = [n for n in syms if n not in vals]
    if missing:
        raise ICLError(f"no value for {', '.join(sorted(missing))}")
    used = {n: vals[n] for n in syms}
    if all(v.method == "exact" and v.exact is not None for v in used.values()):
        ex = sympy.simplify(expr.xreplace({syms[n]: v.exact for n, v in used.items()}))
        if not ex.is_number:
            raise ICLError(f"{expr} did not evaluate to a number")
        if ex.has(sympy.zoo, sympy.nan) or ex.is_finite is False:
            raise ICLError(f"{expr} is undefined here (division by zero?)")
        return Value.from_exact(ex, digits=digits, note=note)
    with mpmath.workdps(digits + 10):
        env = {syms[n]: sympy.Float(mpmath.nstr(mpmath.mpf(v.value), digits + 10), digits + 10)
               for n, v in used.items()}
        val = sympy.N(expr.xreplace(env), digits + 5)
        if not val.is_finite:
            raise ICLError(f"{expr} is undefined here (division by zero?)")
        err = mpmath.mpf(0)
        for n, v in used.items():
            dv = sympy.N(sympy.diff(expr, syms[n]).xreplace(env), 15)
            e_in = v.abs_err if v.abs_err is not None else (
                mpmath.mpf(10) ** (-(v.digits or digits)) * max(1, abs(mpmath.mpf(v.value))))
            err += abs(mpmath.mpf(str(dv))) * mpmath.mpf(e_in)
        methods = {v.method for v in used.values()}
        method = "mpmath" if "mpmath" in methods else ("numeric" if "numeric" in methods else "mpmath")
        dig = min(v.digits or digits for v in used.values())
        return Value(value=mpmath.mpf(str(val)), method=method, digits=dig, abs_err=err, note=note)


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


def _family_diagnosis(claim, claimed: Value, vals, required_expr):
    from .diagnose import diagnose_value

    base = {k: vals[k] for k in ("a1", "E_f2", "rho")}
    req = required_expr if (required_expr is not None and _is_family(required_expr)) else None

    def fn():
        return diagnose_value(claimed.value, values=base, tol=_diag_tol(claim, claimed),
                              required=req)
    return fn


# ---------------------------------------------------------------------------
# Check kinds that need only expr / hermite / gauss
# ---------------------------------------------------------------------------

@register("hermite_value", params={
    "f": Param("teacher", True, doc="the teacher f(g)"),
    "rho": Param("const", False, sympy.Integer(0), "label noise variance rho"),
    "quantity": Param("family", True, doc="expression in a1, E_f2, rho, rho_f, rho_nonlinear, a0..a30"),
    "claimed": Param("const", True, doc="the paper's number or closed form"),
    "M": Param("int", False, None, "highest Hermite order computed (default: from the quantity)"),
    "digits": Param("int", False, 30, "working digits"),
}, needs=(("hermite", "Hermite coefficients, issue 2"),), needs_attrs={"hermite": ("hermite_coeffs",)})
def check_hermite_value(claim) -> Outcome:
    """A quantity of the Hermite family of f at noise rho (Eq. 2, p. 2; Eq. 8, p. 3).

    Values come from :func:`icl_symbolic.hermite.hermite_coeffs` (exact when
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
    detail = (f"{_pretty(q)} = {computed.to_str(12)} [{computed.provenance()}] vs claimed "
              f"{_text(claim.params['claimed'])}")
    return Outcome(computed, claimed, detail, diagnosis_fn=_family_diagnosis(claim, claimed, vals, q))


@register("family_identity", params={
    "lhs": Param("family", True, doc="family expression"),
    "rhs": Param("family", True, doc="family expression"),
})
def check_family_identity(claim) -> Outcome:
    """An identity between family quantities, from the definitions of Eq. (8) alone.

    ``rho_f = rho + E_f2`` and ``rho_nonlinear = rho_f - a1^2`` are substituted
    and ``lhs - rhs`` must cancel to 0 (SymPy), for every f and rho.
    """
    from .diagnose import family_expr

    p = claim.parsed
    diff = sympy.simplify(family_expr(p["lhs"]) - family_expr(p["rhs"]))
    if diff == 0:
        return Outcome(detail=f"{_pretty(p['lhs'])} - ({_pretty(p['rhs'])}) cancels to 0 from Eq. (8)",
                       holds=True, residual_expr="0")
    return Outcome(detail=f"{_pretty(p['lhs'])} - ({_pretty(p['rhs'])}) = {_pretty(diff)}, not 0",
                   holds=False, residual_expr=_pretty(diff))


@register("symbolic_identity", params={
    "symbols": Param("str_list", True, doc="names of the symbols (all real; see 'assume')"),
    "assume": Param("str", False, "real", "real | positive", ("real", "positive")),
    "lhs": Param("symexpr", True, doc="left-hand side"),
    "rhs": Param("symexpr", True, doc="right-hand side"),
    "where": Param("symtable", False, None, "substitutions name = expression, applied before comparing"),
})
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
    where = {new[k] if k in new else sympy.Symbol(k, real=True): v.xreplace(ren)
             for k, v in (p["where"] or {}).items()}
    for _ in range(10):
        nl, nr = lhs.subs(where), rhs.subs(where)
        if nl == lhs and nr == rhs:
            break
        lhs, rhs = nl, nr
    diff = sympy.simplify(lhs - rhs)
    if diff == 0:
        return Outcome(detail=f"{_pretty(lhs)} - ({_pretty(rhs)}) simplifies to 0",
                       holds=True, residual_expr="0")
    return Outcome(detail=f"lhs - rhs = {_pretty(diff)}, not 0", holds=False, residual_expr=_pretty(diff))


@register("gauss_expectation", params={
    "F": Param("teacher", True, doc="integrand F(g), g ~ N(0, 1)"),
    "claimed": Param("const", True, doc="claimed value of E[F(g)]"),
    "digits": Param("int", False, 30, "digits"),
}, needs=(("gauss", "Gaussian expectations, issue 2"),), needs_attrs={"gauss": ("expect",)})
def check_gauss_expectation(claim) -> Outcome:
    """E[F(g)] for g ~ N(0, 1) by :func:`icl_symbolic.gauss.expect` (exact or mpmath)."""
    from .gauss import expect

    p = claim.parsed
    computed = expect(_text(claim.params["F"]), digits=p["digits"])
    claimed = const_value(p["claimed"], p["digits"])
    return Outcome(computed, claimed,
                   f"E[{claim.params['F']}] = {computed.to_str(12)} [{computed.provenance()}]")


@register("mc_expectation", params={
    "F": Param("teacher", True, doc="integrand F(g), g ~ N(0, 1)"),
    "claimed": Param("const", True, doc="claimed value of E[F(g)]"),
    "n": Param("int", False, 400_000, "number of draws"),
    "seed": Param("int", True, doc="seed of numpy.random.default_rng"),
    "max_rel_se": Param("number", False, 0.01, "the SE must be below this fraction of |claimed|"),
})
def check_mc_expectation(claim) -> Outcome:
    """E[F(g)] by seeded Monte Carlo, judged in standard errors (tolerance kind z).

    The SE is the sample standard deviation / sqrt(n).  A run whose SE exceeds
    ``max_rel_se`` x |claimed| is an error (too noisy to decide), so a claim
    cannot pass merely because the test has no power.
    """
    import numpy as np
    from .expr import teacher

    p = claim.parsed
    n = p["n"]
    if not 100 <= n <= 50_000_000:
        raise ICLError("n must be between 100 and 5e7")
    F = teacher(_text(claim.params["F"]))
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
    computed = Value(value=mpmath.mpf(mean), method="mc", stderr=se, n_samples=n, seeds=(p["seed"],),
                     note=f"E[{claim.params['F']}]")
    return Outcome(computed, claimed, f"MC mean {mean:.6g} (SE {se:.2g}, n={n}, seed={p['seed']})")


def _pretty(e) -> str:
    return str(e).replace("**", "^")


MOMENT_SYMBOLS = ("a1", "rho_f", "rho", "alpha")
SWEEP_NAMES = ("alpha", "kappa", "tau", "lam")

# -- theory -----------------------------------------------------------------

THEORY_FUNCTIONS = {
    "e_linear": "theory", "e_linear_isotropic": "theory", "e_nonlinear": "theory",
    "e_nonlinear_normalized": "theory", "e_a1zero": "theory", "task_diversity_limit": "theory",
    "chi0_value": "a1zero", "lam_tilde_value": "a1zero",
}
_PASS_THROUGH = ("f", "C_train", "C_test")


def _parse_call(v):
    """A call table ``{function = "...", args = {...}, scale = "..."}`` (validated, parsed)."""
    if not isinstance(v, dict):
        raise ICLError("must be a table {function = ..., args = {...}}")
    extra = set(v) - {"function", "args", "scale"}
    if extra:
        raise ICLError(f"unknown key(s) {', '.join(sorted(extra))} (allowed: function, args, scale)")
    fn = v.get("function")
    if fn not in THEORY_FUNCTIONS:
        raise ICLError(f"function must be one of {', '.join(sorted(THEORY_FUNCTIONS))}, got {fn!r}")
    args = v.get("args", {})
    if not isinstance(args, dict):
        raise ICLError("args must be a table")
    parsed_args, length = {}, None
    for k, a in args.items():
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", k):
            raise ICLError(f"bad argument name {k!r}")
        items = a if isinstance(a, list) else [a]
        if isinstance(a, list):
            if length is not None and len(a) != length:
                raise ICLError("all list-valued arguments must have the same length")
            length = len(a)
            if not a:
                raise ICLError(f"argument {k} is an empty list")
        out = []
        for it in items:
            if k in _PASS_THROUGH:
                if not isinstance(it, str):
                    raise ICLError(f"argument {k} must be a string")
                if k == "f":
                    _parse(it, ("g",))
                out.append(it)
            elif isinstance(it, bool):
                raise ICLError(f"argument {k}: booleans are not accepted")
            else:
                out.append(_parse(it, HERMITE_NAMES))
        parsed_args[k] = out if isinstance(a, list) else out[0]
    _check_signature(fn, parsed_args)
    scale = _parse(v.get("scale", 1), HERMITE_NAMES)
    return {"function": fn, "args": parsed_args, "scale": scale, "length": length}


def _check_signature(fn: str, args: dict) -> None:
    """Unknown argument names are load-time errors (when the theory module is present)."""
    import importlib
    import inspect

    try:
        mod = importlib.import_module(f"icl_symbolic.{THEORY_FUNCTIONS[fn]}")
        func = getattr(mod, fn)
    except Exception:   # missing or broken module: reported as "unavailable"/"error" when the claim runs
        return
    params = inspect.signature(func).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return
    unknown = sorted(set(args) - set(params))
    if unknown:
        raise ICLError(f"{fn}() has no argument(s) {', '.join(unknown)}; it takes {', '.join(params)}")


# Check kinds backed by moments / theory / a1zero / covariance / simulate live in
# checks_model.py; importing it registers them.
from . import checks_model  # noqa: E402,F401
