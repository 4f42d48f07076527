"""Check kinds: the registry that maps a claim's ``check`` name to library code.

A claim file names a check (``check = "hermite_value"``) and gives its
parameters; the check computes a :class:`~icl_symbolic.core.values.Value` from the
library (never re-deriving the mathematics here) and the claimed value, and
:func:`icl_symbolic.verification.judge.compare` applies the claim's tolerance.  Each kind
declares

* ``params``: name -> :class:`Param` (type, required, default), validated and
  parsed at load time, so a malformed claim fails before anything runs;
* ``needs``: the library modules it calls; a claim whose module has not landed
  is reported ``unavailable: needs ...`` (never skipped silently).

Expressions are parsed by :func:`icl_symbolic.engine.expr.parse_expr` with an explicit
variable whitelist per parameter type:

``teacher``  an expression in ``g`` (the teacher f or an integrand F(g));
``const``    a constant expression (``"0.1"``, ``"(1 - exp(-2))/2"``); TOML
             numbers are accepted and read exactly from their decimal text;
``family``   an expression in ``a1, E_f2, rho, rho_f, rho_nonlinear`` (and
             ``a0 ... a9`` where a check evaluates Hermite coefficients);
``symexpr``  an expression in the claim's own ``symbols`` list.

``python -c "from icl_symbolic.verification.checks import describe; print(describe())"``
lists the kinds and their parameters (also in ``docs/claims-format.md``).

This module holds what a check kind *is* (:class:`Param`, :class:`Outcome`,
:class:`CheckKind`, the :func:`check_kind` decorator) and the parameter
parsing.  The kinds themselves live in :mod:`icl_symbolic.verification.checks`, one
module per paper unit, and are collected there into an explicit table
(``REGISTRY``); nothing registers itself by being imported.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from icl_symbolic.core.errors import ClaimFileError, ICLError
from icl_symbolic.core.stats import MIN_SEEDS
from icl_symbolic.core.values import Value
from icl_symbolic.engine.expr import parse_expr
from icl_symbolic.theory import a1zero
from icl_symbolic.theory import asymptotic as theory

HERMITE_NAMES = ("a1", "E_f2", "rho", "rho_f", "rho_nonlinear") + tuple(f"a{m}" for m in range(31) if m != 1)


@dataclass(frozen=True)
class Param:
    """One parameter of a check kind."""

    type: str  # teacher | const | family | symexpr | int | number | bool | str | str_list | table
    #                           | seed_count (int >= MIN_SEEDS) | seed_counts (that, or a list of them)
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
    holds: bool | None = None  # set only by checks that judge themselves (symbolic)
    residual_expr: str | None = None  # symbolic residual ("0" when it holds)
    diagnosis_fn: Callable | None = None  # lazily computes a Diagnosis on mismatch
    figures: list = field(default_factory=list)
    also_required: tuple | None = None  # (bool, reason): a further condition for "holds"
    mde_rel: float | None = None  # set by checks that judge themselves: min. detectable rel. error
    mde_note: str = ""  # how mde_rel was obtained (or why there is none)


@dataclass(frozen=True)
class CheckKind:
    name: str
    func: Callable
    params: dict
    needs: tuple = ()  # ((module, what it provides), ...)
    needs_attrs: dict = field(default_factory=dict)
    doc: str = ""
    reports_progress: bool = False  # func takes progress=callable(str) | None

    def validate(self, params: dict, where: str) -> dict:
        """Type-check and parse ``params``; returns the parsed values."""
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            raise ClaimFileError(
                f"{where}: unknown key(s) {', '.join(unknown)} for check "
                f"{self.name!r}; allowed: {', '.join(sorted(self.params))}"
            )
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


def check_kind(name, params, needs=(), needs_attrs=None, reports_progress=False):
    """Decorator: attach a :class:`CheckKind` to a check function as ``func.kind``.

    The function is returned unchanged; :mod:`icl_symbolic.verification.checks`
    lists the kinds explicitly in its table.
    """

    def deco(func):
        func.kind = CheckKind(
            name=name,
            func=func,
            params=params,
            needs=tuple(needs),
            needs_attrs=dict(needs_attrs or {}),
            doc=(func.__doc__ or "").strip(),
            reports_progress=reports_progress,
        )
        return func

    return deco


def describe(registry: dict) -> str:
    """Plain-text list of the check kinds of ``registry`` and their parameters."""
    lines = []
    for name in sorted(registry):
        k = registry[name]
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


def param_text(v) -> str:
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


def parse_claim_expr(text, variables):
    return parse_expr(param_text(text), variables=tuple(variables))


def _parse_const(spec, v, params):
    e = parse_claim_expr(v, ())
    if e.free_symbols:
        raise ICLError("must be a constant")
    return e


def _parse_symexpr(spec, v, params):
    syms = params.get("symbols")
    if not isinstance(syms, list) or not all(isinstance(s, str) for s in syms):
        raise ICLError("needs a 'symbols' list of names")
    return parse_claim_expr(v, syms)


def _parse_formtable(spec, v, params):
    syms = params.get("symbols", list(MOMENT_SYMBOLS))
    if not isinstance(v, dict) or not v:
        raise ICLError("must be a non-empty table of name = expression")
    return {k: parse_claim_expr(e, syms) for k, e in v.items()}


def _parse_symtable(spec, v, params):
    syms = params.get("symbols")
    if not isinstance(v, dict):
        raise ICLError("must be a table of name = expression")
    if not isinstance(syms, list):
        raise ICLError("needs a 'symbols' list of names")
    out = {}
    for k, e in v.items():
        if k not in syms:
            raise ICLError(f"substitution for {k!r}, which is not in 'symbols'")
        out[k] = parse_claim_expr(e, syms)
    return out


def _parse_int(spec, v, params):
    if isinstance(v, bool) or not isinstance(v, int):
        raise ICLError("must be an integer")
    return v


def _parse_number(spec, v, params):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ICLError("must be a number")
    return float(v)


def _parse_bool(spec, v, params):
    if not isinstance(v, bool):
        raise ICLError("must be true or false")
    return v


def _parse_str(spec, v, params):
    if not isinstance(v, str):
        raise ICLError("must be a string")
    if spec.choices and v not in spec.choices:
        raise ICLError(f"must be one of {', '.join(spec.choices)}")
    return v


def _parse_seed_counts(spec, v, params):
    many = spec.type == "seed_counts"
    counts = v if (many and isinstance(v, list)) else [v]
    if not counts or not all(isinstance(x, int) and not isinstance(x, bool) for x in counts):
        raise ICLError("must be an integer" + (" or a list of integers (one per d)" if many else ""))
    if min(counts) < MIN_SEEDS:
        raise ICLError(
            f"must be >= {MIN_SEEDS} seeds per simulated point (got {min(counts)}): with fewer, "
            "the seed-to-seed SE understates skewed spreads (docs/power.md)"
        )
    return list(v) if isinstance(v, list) else v


def _parse_int_list(spec, v, params):
    if not isinstance(v, list) or len(v) < 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise ICLError("must be a list of at least two integers")
    return list(v)


def _parse_str_list(spec, v, params):
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise ICLError("must be a list of strings")
    return list(v)


def _parse_table(spec, v, params):
    if not isinstance(v, dict):
        raise ICLError("must be a table")
    return dict(v)


#: parameter type -> its parser ``(spec, value, the claim's params) -> parsed value`` (one-line ICLError)
_PARSERS = {
    "teacher": lambda spec, v, params: parse_claim_expr(v, ("g",)),
    "const": _parse_const,
    "family": lambda spec, v, params: parse_claim_expr(v, HERMITE_NAMES),
    "sweepfamily": lambda spec, v, params: parse_claim_expr(v, HERMITE_NAMES + SWEEP_NAMES),
    "symexpr": _parse_symexpr,
    "formtable": _parse_formtable,
    "symtable": _parse_symtable,
    "int": _parse_int,
    "number": _parse_number,
    "bool": _parse_bool,
    "str": _parse_str,
    "seed_count": _parse_seed_counts,
    "seed_counts": _parse_seed_counts,
    "int_list": _parse_int_list,
    "str_list": _parse_str_list,
    "call": lambda spec, v, params: _parse_call(v),
    "table": _parse_table,
}


def _parse_param(spec: Param, v, params):
    """One claim parameter of type ``spec.type``, parsed by its entry in :data:`_PARSERS`."""
    parser = _PARSERS.get(spec.type)
    if parser is None:
        raise AssertionError(spec.type)
    return parser(spec, v, params)


MOMENT_SYMBOLS = ("a1", "rho_f", "rho", "alpha")
SWEEP_NAMES = ("alpha", "kappa", "tau", "lam")


#: The library functions a ``call`` parameter may name.
THEORY_FUNCTIONS = {
    "e_linear": theory.e_linear,
    "e_linear_isotropic": theory.e_linear_isotropic,
    "e_nonlinear": theory.e_nonlinear,
    "e_nonlinear_normalized": theory.e_nonlinear_normalized,
    "e_a1zero": theory.e_a1zero,
    "task_diversity_limit": theory.task_diversity_limit,
    "chi0_value": a1zero.chi0_value,
    "lam_tilde_value": a1zero.lam_tilde_value,
    "e_idg_isotropic": theory.e_idg_isotropic,
}
PASS_THROUGH = ("f", "C_train", "C_test", "error")

#: The record parameters of the theory functions (by parameter name): a claim file gives their
#: fields by keyword (``rho = 0.1, alpha = 2, C_train = "powerlaw:1", d = 200``), and
#: :func:`call_theory` builds the record from them.
THEORY_RECORDS = {"ratios": theory.Ratios, "tasks": theory.TaskCovariances}


def _keyword_plan(fn) -> tuple:
    """((parameter, record class or None, its keywords), ...) of a theory function: a record parameter
    takes the keywords of its fields, any other parameter its own name."""
    plan = []
    for name in inspect.signature(fn).parameters:
        cls = THEORY_RECORDS.get(name)
        fields = tuple(f.name for f in dataclasses.fields(cls)) if cls is not None else (name,)
        plan.append((name, cls, fields))
    return tuple(plan)


#: the keyword plan of each theory function, read once from the functions as defined (a patched
#: function, e.g. a mutation of the harness in benchmarks/, is called with the same arguments)
THEORY_KEYWORDS = {name: _keyword_plan(fn) for name, fn in THEORY_FUNCTIONS.items()}


def theory_keywords(fn: str) -> tuple[str, ...]:
    """The keyword arguments a claim file may give ``fn`` (the fields of its records, in order).

    >>> theory_keywords("e_linear")
    ('rho', 'alpha', 'kappa', 'tau', 'lam', 'C_train', 'C_test', 'd', 'error')
    """
    return tuple(k for _, _, fields in THEORY_KEYWORDS[fn] for k in fields)


def call_theory(fn: str, kwargs: dict):
    """``THEORY_FUNCTIONS[fn]`` called with a claim file's keyword arguments: the keywords of a record
    parameter build the record (fields not given keep the record's defaults), the others pass by name.
    Unknown keywords are refused in one line (:func:`check_theory_keywords`).

    >>> round(call_theory("e_linear", {"rho": 0.1, "alpha": 2, "kappa": 2, "tau": 3}), 12)
    0.771805982261
    """
    check_theory_keywords(fn, kwargs)
    args = {}
    for name, cls, fields in THEORY_KEYWORDS[fn]:
        if cls is not None:
            given = {k: kwargs[k] for k in fields if k in kwargs}
            if given:
                args[name] = cls(**given)
        elif name in kwargs:
            args[name] = kwargs[name]
    return THEORY_FUNCTIONS[fn](**args)


def check_theory_keywords(fn: str, kwargs) -> None:
    """Unknown argument names of a theory call: one ICLError line that names them and the known ones."""
    known = theory_keywords(fn)
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        raise ICLError(f"{fn}() has no argument(s) {', '.join(unknown)}; it takes {', '.join(known)}")


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
            if k in PASS_THROUGH:
                if not isinstance(it, str):
                    raise ICLError(f"argument {k} must be a string")
                if k == "f":
                    parse_claim_expr(it, ("g",))
                out.append(it)
            elif isinstance(it, bool):
                raise ICLError(f"argument {k}: booleans are not accepted")
            else:
                out.append(parse_claim_expr(it, HERMITE_NAMES))
        parsed_args[k] = out if isinstance(a, list) else out[0]
    check_theory_keywords(fn, parsed_args)
    scale = parse_claim_expr(v.get("scale", 1), HERMITE_NAMES)
    return {"function": fn, "args": parsed_args, "scale": scale, "length": length}
