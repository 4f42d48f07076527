"""The catalogue of error models ("slips") and their use on numbers and formulas.

Paper: Sec. 3, Eq. (8), p. 3 (rho_f, rho_nonlinear); Eq. (2), p. 2 (Hermite
coefficients a_m = E[f h_m]); Eq. (6), p. 2 (the ridge (n/d) lam); Result 1,
Eq. (9), p. 3 and the Sec. 3 text on Fig. 1, p. 3 (the 1.447 offset by one and the
a1^2 normalisation of the curves).

An *error model* is a slip this literature makes, written as data in
``icl_symbolic/data/slips.toml`` (a user adds models with a file of the same
format, see docs/diagnose.md).  A model maps the quantity the derivation
*requires* to the quantity that was *claimed*, by up to three steps, applied in
this order:

``rewrite``     replace a sub-expression of the required formula
                (``(1 + rho)^2 -> 1 + rho^2``);
``substitute``  replace names where they appear (``rho_nonlinear -> rho_f``);
``transform``   a function of the result ``x`` (``x -> x + 1``).

Every expression is parsed by the whitelist parser :func:`icl_symbolic.engine.expr.parse_expr`;
nothing is evaluated as Python.  Curves are handled by
:mod:`icl_symbolic.diagnosis.curves` with the same catalogue.

Examples
--------
The Sec. 3 text on Fig. 1 (p. 3): the number 1.447029 where rho_nonlinear/a1^2 = 0.447029 is
required (f = sin, rho = 0.1) is explained by the offset by one, tied with
"rho_f written for rho_nonlinear" (the two are the same formula here):

>>> ctx = teacher_context("sin(g)", "0.1")
>>> rep = diagnose_number("1.447029", ctx, required="rho_nonlinear/a1^2")
>>> [(m.model.name, m.rank) for m in rep.matches]
[('plus_one', 1), ('total_for_residual', 1)]
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from importlib import resources

import mpmath
import sympy

from icl_symbolic.core.caches import memoize
from icl_symbolic.core.errors import ICLError, ParseError
from icl_symbolic.core.limits import MAX_CATALOGUE_BYTES, read_text_limited
from icl_symbolic.core.numbers import check_decimal
from icl_symbolic.core.symbols import g
from icl_symbolic.engine.expr import parse_expr
from icl_symbolic.engine.gauss import expect
from icl_symbolic.engine.hermite import hermite_coeffs

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: Names of the teacher's quantities an expression may use (Eq. 2 and Eq. 8).
TEACHER_NAMES = ("a0", "a1", "a2", "E_f2", "Efp", "res_He", "rho", "rho_f", "rho_nonlinear")
#: Names of the setting (Sec. 2, p. 2) and derived task counts.
SETTING_NAMES = ("d", "alpha", "kappa", "tau", "lam", "k_round", "k_floor")
CONTEXT_NAMES = TEACHER_NAMES + SETTING_NAMES
KINDS = ("number", "formula", "curve")
_MODEL_KEYS = {"name", "description", "applies", "transform", "substitute", "rewrite", "params", "available", "reason"}
_PARAM_KEYS = {"init", "lo", "hi"}
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
MAX_MODELS = 500

X = sympy.Symbol("x", real=True)
CONTEXT_SYMBOLS = {n: sympy.Symbol(n, real=True) for n in CONTEXT_NAMES}
#: Eq. (8), p. 3: the derived names in terms of a1, E_f2, rho.
DERIVED = {
    CONTEXT_SYMBOLS["rho_f"]: CONTEXT_SYMBOLS["rho"] + CONTEXT_SYMBOLS["E_f2"],
    CONTEXT_SYMBOLS["rho_nonlinear"]: CONTEXT_SYMBOLS["rho"] + CONTEXT_SYMBOLS["E_f2"] - CONTEXT_SYMBOLS["a1"] ** 2,
}


class CatalogueError(ICLError):
    """A malformed error-model catalogue (one line, exit 2 in the CLI)."""


@dataclass(frozen=True)
class FitParam:
    """A parameter fitted to a curve: initial value and bounds."""

    name: str
    init: float
    lo: float
    hi: float


@dataclass(frozen=True)
class SlipModel:
    """One error model: required -> claimed by rewrite, substitute, transform (in that order)."""

    name: str
    description: str
    applies: tuple
    transform: sympy.Expr | None = None
    substitute: tuple = ()  # ((Symbol, Expr), ...)
    rewrite: tuple = ()  # ((Expr, Expr), ...)
    params: tuple = ()  # FitParam, ...
    available: bool = True
    reason: str = ""
    source: str = "shipped"

    @property
    def param_symbols(self) -> dict:
        return {p.name: sympy.Symbol(p.name, real=True) for p in self.params}

    def written(self) -> str:
        """The transform written out, e.g. ``rho_nonlinear -> rho_f`` or ``x -> x + 1``."""
        parts = [f"{_fmt(a)} -> {_fmt(b)}" for a, b in self.rewrite]
        parts += [f"{s.name} -> {_fmt(e)}" for s, e in self.substitute]
        if self.transform is not None:
            parts.append(f"x -> {_fmt(self.transform)}")
        return "; ".join(parts) if parts else "(none)"

    def needs(self) -> set:
        """Context names the model itself uses (beyond those of the formula)."""
        out = set()
        exprs = [e for _, e in self.substitute] + [b for _, b in self.rewrite]
        if self.transform is not None:
            exprs.append(self.transform)
        for e in exprs:
            out |= {s.name for s in e.free_symbols if s.name in CONTEXT_NAMES}
        return out

    def apply(self, formula: sympy.Expr) -> sympy.Expr | None:
        """The claimed formula this slip makes of ``formula``; None when the slip cannot act on it.

        >>> m = catalogue().get("total_for_residual")
        >>> m.apply(sympy.sympify("rho_nonlinear/a1**2", locals=CONTEXT_SYMBOLS))
        rho_f/a1**2
        """
        e = formula
        for a, b in self.rewrite:
            new = e.subs(a, b)
            if new == e:
                return None
            e = new
        if self.substitute:
            new = e.xreplace(dict(self.substitute))
            if new == e:
                return None
            e = new
        if self.transform is not None:
            e = self.transform.xreplace({X: e})
        return e


@dataclass(frozen=True)
class Catalogue:
    """The error models and the quantities a bare number is compared with."""

    models: tuple
    quantities: tuple  # (text, Expr)

    def get(self, name: str) -> SlipModel:
        for m in self.models:
            if m.name == name:
                return m
        raise ICLError(f"no error model named {name!r} in the catalogue")

    def names(self) -> list:
        return [m.name for m in self.models]

    def for_kind(self, kind: str) -> list:
        return [m for m in self.models if kind in m.applies]

    def to_json(self) -> list:
        return [
            {
                "name": m.name,
                "description": m.description,
                "applies": list(m.applies),
                "transform": m.written(),
                "params": [p.name for p in m.params],
                "available": m.available,
                "reason": m.reason or None,
                "source": m.source,
            }
            for m in self.models
        ]


def _fmt(e) -> str:
    return str(e).replace("**", "^")


def parse(text: str, allowed, where: str) -> sympy.Expr:
    """An expression of the catalogue or the command line, through the whitelist parser."""
    if not isinstance(text, str) or not text.strip():
        raise CatalogueError(f"{where}: expected a non-empty expression string")
    try:
        return sympy.sympify(0) + _parse(text, tuple(allowed))
    except ParseError as exc:
        raise CatalogueError(f"{where}: {exc}") from None
    except ICLError as exc:
        raise CatalogueError(f"{where}: {exc}") from None


def _parse(text, allowed):
    return parse_expr(text.replace("^", "**"), variables=allowed)


def _model_header(raw, where: str) -> tuple:
    """(name, description, applies, available, reason) of a model table, checked."""
    if not isinstance(raw, dict):
        raise CatalogueError(f"{where}: a model must be a table")
    unknown = set(raw) - _MODEL_KEYS
    if unknown:
        raise CatalogueError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))} (allowed: {', '.join(sorted(_MODEL_KEYS))})"
        )
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise CatalogueError(f"{where}: 'name' must be letters, digits and underscores, got {name!r}")
    where = f"{where} ({name})"
    desc = raw.get("description")
    if not isinstance(desc, str) or not desc.strip():
        raise CatalogueError(f"{where}: needs a 'description'")
    applies = raw.get("applies")
    if (
        not isinstance(applies, list)
        or not applies
        or any(a not in KINDS for a in applies)
        or len(set(applies)) != len(applies)
    ):
        raise CatalogueError(f"{where}: 'applies' must be a non-empty list of {', '.join(KINDS)}")
    available = raw.get("available", True)
    if not isinstance(available, bool):
        raise CatalogueError(f"{where}: 'available' must be true or false")
    reason = raw.get("reason", "")
    if not isinstance(reason, str) or (not available and not reason.strip()):
        raise CatalogueError(f"{where}: an unavailable model needs a 'reason' string")
    return name, desc, applies, available, reason


def _model_params(raw, where: str, applies) -> list:
    """The fitted parameters (FitParam) of a curve model, checked."""
    params = []
    rawp = raw.get("params", {})
    if not isinstance(rawp, dict):
        raise CatalogueError(f"{where}: 'params' must be a table name = {{init, lo, hi}}")
    for pn, spec in rawp.items():
        if not _NAME_RE.fullmatch(pn) or pn in CONTEXT_NAMES or pn == "x":
            raise CatalogueError(f"{where}: parameter name {pn!r} is invalid or clashes with a context name")
        if not isinstance(spec, dict) or set(spec) - _PARAM_KEYS or not _PARAM_KEYS <= set(spec):
            raise CatalogueError(f"{where}: parameter {pn} needs exactly init, lo, hi")
        try:
            init, lo, hi = (float(spec[k]) for k in ("init", "lo", "hi"))
        except (TypeError, ValueError):
            raise CatalogueError(f"{where}: parameter {pn}: init, lo, hi must be numbers") from None
        if not all(math.isfinite(v) for v in (init, lo, hi)) or not lo <= init <= hi or lo == hi:
            raise CatalogueError(f"{where}: parameter {pn} needs finite lo <= init <= hi, lo < hi")
        params.append(FitParam(pn, init, lo, hi))
    if params and applies != ["curve"]:
        raise CatalogueError(f'{where}: fitted params are only for curve models (applies = ["curve"])')
    return params


def _model_substitutions(raw, where: str, allowed) -> list:
    """The (context symbol, expression) substitutions of a model, checked and parsed."""
    subs = []
    rawsub = raw.get("substitute", {})
    if not isinstance(rawsub, dict):
        raise CatalogueError(f"{where}: 'substitute' must be a table name = \"expression\"")
    for sn, se in rawsub.items():
        if sn not in CONTEXT_NAMES:
            raise CatalogueError(f"{where}: substitute: {sn!r} is not a context name ({', '.join(CONTEXT_NAMES)})")
        subs.append((CONTEXT_SYMBOLS[sn], parse(se, allowed, f"{where}: substitute {sn}")))
    return subs


def _model_rewrites(raw, where: str, allowed) -> list:
    """The (from, to) rewrites of a model, checked and parsed."""
    rew = []
    rawrew = raw.get("rewrite", [])
    if not isinstance(rawrew, list):
        raise CatalogueError(f"{where}: 'rewrite' must be a list of [from, to] pairs")
    for pair in rawrew:
        if not (isinstance(pair, list) and len(pair) == 2):
            raise CatalogueError(f'{where}: each rewrite is a pair ["from", "to"]')
        a = parse(pair[0], allowed, f"{where}: rewrite from")
        b = parse(pair[1], allowed, f"{where}: rewrite to")
        if a.is_Symbol or a.is_number:
            raise CatalogueError(f"{where}: rewrite 'from' must be a compound expression (use substitute for names)")
        rew.append((a, b))
    return rew


def _model_from(raw, where: str, source: str) -> SlipModel:
    """One catalogue model from its TOML table: the header, the fitted parameters, the transform,
    the substitutions and the rewrites, each checked by its own step (one-line CatalogueError)."""
    name, desc, applies, available, reason = _model_header(raw, where)
    where = f"{where} ({name})"
    params = _model_params(raw, where, applies)
    allowed = CONTEXT_NAMES + tuple(p.name for p in params)
    transform = None
    if "transform" in raw:
        transform = parse(raw["transform"], allowed + ("x",), f"{where}: transform")
        if X not in transform.free_symbols:
            raise CatalogueError(f"{where}: transform must use x (the required value)")
    subs = _model_substitutions(raw, where, allowed)
    rew = _model_rewrites(raw, where, allowed)
    if available and transform is None and not subs and not rew:
        raise CatalogueError(f"{where}: needs a transform, substitute or rewrite (or available = false)")
    if "curve" in applies and rew:
        raise CatalogueError(f"{where}: rewrite models act on formulas, not curves")
    return SlipModel(
        name=name,
        description=desc.strip(),
        applies=tuple(applies),
        transform=transform,
        substitute=tuple(subs),
        rewrite=tuple(rew),
        params=tuple(params),
        available=available,
        reason=reason.strip(),
        source=source,
    )


def _read_toml(text: str, where: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{where}: not valid TOML: {str(exc).splitlines()[0]}") from None


def _models_from_doc(doc: dict, where: str, source: str):
    unknown = set(doc) - {"model", "quantities"}
    if unknown:
        raise CatalogueError(
            f"{where}: unknown top-level key(s) {', '.join(sorted(unknown))} (allowed: model, quantities)"
        )
    raws = doc.get("model", [])
    if not isinstance(raws, list):
        raise CatalogueError(f"{where}: models are [[model]] tables")
    if len(raws) > MAX_MODELS:
        raise CatalogueError(f"{where}: more than {MAX_MODELS} models")
    models = [_model_from(r, f"{where}: model {i + 1}", source) for i, r in enumerate(raws)]
    qs = []
    rawq = doc.get("quantities", [])
    if not isinstance(rawq, list) or not all(isinstance(q, str) for q in rawq):
        raise CatalogueError(f"{where}: 'quantities' must be a list of expression strings")
    for q in rawq:
        e = parse(q, TEACHER_NAMES, f"{where}: quantity {q!r}")
        qs.append((q, e))
    return models, qs


@memoize(maxsize=1)
def _shipped():
    text = resources.files("icl_symbolic").joinpath("data/slips.toml").read_text(encoding="utf-8")
    return _models_from_doc(_read_toml(text, "slips.toml"), "slips.toml", "shipped")


def catalogue(path=None) -> Catalogue:
    """The shipped catalogue, extended by the models of the TOML file ``path`` (if given).

    A malformed file raises :class:`CatalogueError` with one line saying where.

    >>> "plus_one" in catalogue().names()
    True
    """
    models, qs = _shipped()
    models, qs = list(models), list(qs)
    if path is not None:
        where = str(path)
        text = read_text_limited(path, MAX_CATALOGUE_BYTES, "--catalogue")
        more, moreq = _models_from_doc(_read_toml(text, where), where, where)
        have = {m.name for m in models}
        for m in more:
            if m.name in have:
                raise CatalogueError(f"{where}: model name {m.name!r} is already in the catalogue")
            have.add(m.name)
        models += more
        qs += [q for q in moreq if q[0] not in {t for t, _ in qs}]
    return Catalogue(tuple(models), tuple(qs))


# ---------------------------------------------------------------------------
# The context: the numbers a model's expressions are evaluated at
# ---------------------------------------------------------------------------
@dataclass
class Context:
    """Values of the context names (mpmath numbers), their closed forms and error bounds."""

    values: dict
    exact: dict = field(default_factory=dict)
    abs_err: dict = field(default_factory=dict)
    label: str = ""

    def missing(self, expr) -> list:
        return sorted({s.name for s in expr.free_symbols if s.name not in self.values})

    def evaluate(self, expr, params=None):
        """Value of ``expr`` at this context (mpmath), or None where undefined.

        Raises KeyError (the missing name) when the context lacks a name.
        """
        env = dict(self.values)
        if params:
            env.update(params)
        syms = sorted(expr.free_symbols, key=lambda s: s.name)
        for s in syms:
            if s.name not in env:
                raise KeyError(s.name)
        fn = _lambdify(tuple(syms), expr)
        try:
            v = fn(*[env[s.name] for s in syms])
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        v = mpmath.mpmathify(v)
        if not isinstance(v, mpmath.mpf) or not mpmath.isfinite(v):
            return None
        return +v

    def error_of(self, expr) -> mpmath.mpf:
        """First-order bound on the error of ``expr`` from the errors of the context values."""
        err = mpmath.mpf(0)
        for s in expr.free_symbols:
            e = self.abs_err.get(s.name)
            if e:
                try:
                    dv = self.evaluate(sympy.diff(expr, s))
                except KeyError:
                    dv = None
                err += abs(dv if dv is not None else 1) * e
        return err


@memoize(maxsize=4096)
def _lambdify(syms, expr):
    return sympy.lambdify(syms, expr, modules="mpmath")


def to_mpf(v):
    """A number, SymPy number, decimal string or :class:`Value` as an mpmath number."""
    if hasattr(v, "value") and hasattr(v, "method"):  # a Value
        v = v.value
    if isinstance(v, sympy.Basic):
        return mpmath.mpf(str(sympy.N(v, mpmath.mp.dps + 5)))
    return mpmath.mpf(v)


def setting_values(d=None, alpha=None, kappa=None, tau=None, lam=None) -> dict:
    """The setting names that are given (and the task counts when kappa and d are)."""
    out = {}
    for n, v in (("d", d), ("alpha", alpha), ("kappa", kappa), ("tau", tau), ("lam", lam)):
        if v is not None:
            out[n] = mpmath.mpf(v)
    if d is not None and kappa is not None:
        kd = mpmath.mpf(kappa) * mpmath.mpf(d)
        out["k_floor"] = mpmath.floor(kd)
        out["k_round"] = mpmath.floor(kd + mpmath.mpf(1) / 2)
    return out


HERMITE_ORDER = 16


@memoize(maxsize=64)
def _teacher_numbers(f: str, digits: int):
    """a0, a1, a2, E_f2, res_He (with its tail bound) and Efp for teacher text ``f``."""
    with mpmath.workdps(digits + 10):
        return _teacher_numbers_at(f, digits)


def _teacher_numbers_at(f, digits):
    M = HERMITE_ORDER
    res = hermite_coeffs(f, M=M, rho=0, digits=digits)
    a = [to_mpf(v) for v in res.a]
    vals = {"a0": a[0], "a1": a[1], "a2": a[2], "E_f2": to_mpf(res.E_f2)}
    exact = {}
    for n, v in (("a0", res.a[0]), ("a1", res.a[1]), ("a2", res.a[2]), ("E_f2", res.E_f2)):
        if getattr(v, "method", None) == "exact" and v.exact is not None:
            exact[n] = v.exact
    err = {
        n: mpmath.mpf(v.abs_err)
        for n, v in (("a0", res.a[0]), ("a1", res.a[1]), ("a2", res.a[2]), ("E_f2", res.E_f2))
        if v.abs_err
    }
    # res_He = a0^2 + sum_{m >= 2} a_m^2/m!; tail: a_m^2 <= E_f2 - a1^2, so
    # sum_{m > M} a_m^2/m! <= (E_f2 - a1^2) * 2/(M+1)!  (ratio of terms <= 1/(M+2) <= 1/2).
    rh = a[0] ** 2 + mpmath.fsum(a[m] ** 2 / mpmath.factorial(m) for m in range(2, M + 1))
    vals["res_He"] = rh
    err["res_He"] = (vals["E_f2"] - a[1] ** 2) * 2 / mpmath.factorial(M + 1) + sum(
        2 * abs(a[m]) * mpmath.mpf(res.a[m].abs_err or 0) for m in range(0, M + 1)
    )
    efp = _efp(res.expr, digits)
    if efp is not None:
        vals["Efp"] = to_mpf(efp)
        if getattr(efp, "abs_err", None):
            err["Efp"] = mpmath.mpf(efp.abs_err)
    return vals, exact, err, res.label


def _efp(expr, digits):
    """E[f'(g)] with the almost-everywhere derivative (jumps dropped), or None."""
    if expr is None:
        return None
    d = sympy.diff(expr, g).replace(lambda e: isinstance(e, sympy.DiracDelta), lambda e: sympy.S.Zero)
    try:
        return expect(d, digits=digits)
    except ICLError:
        return None


def teacher_context(f, rho, digits: int = 30, **setting) -> Context:
    """The context of teacher ``f`` (expression text) at noise variance ``rho`` and a setting.

    >>> ctx = teacher_context("relu(g)", "0.1")
    >>> float(ctx.values["a1"]), round(float(ctx.values["a0"] ** 2), 12)   # a0^2 = 1/(2 pi)
    (0.5, 0.159154943092)
    """
    with mpmath.workdps(digits + 10):
        return _teacher_context(f, rho, digits, setting)


def _teacher_context(f, rho, digits, setting):
    if isinstance(f, sympy.Basic):
        f = str(f)
    vals, exact, err, label = _teacher_numbers(str(f), digits)
    rho_e = rho if isinstance(rho, sympy.Basic) else parse_expr(str(rho), variables=())
    values = dict(vals)
    values["rho"] = to_mpf(rho_e)
    exact = dict(exact)
    exact["rho"] = rho_e
    values["rho_f"] = values["rho"] + values["E_f2"]
    values["rho_nonlinear"] = values["rho_f"] - values["a1"] ** 2
    err = dict(err)
    if "E_f2" in err or "a1" in err:
        err["rho_f"] = err.get("E_f2", 0)
        err["rho_nonlinear"] = err.get("E_f2", 0) + 2 * abs(values["a1"]) * err.get("a1", 0)
    values.update(setting_values(**setting))
    return Context(values, exact, err, label)


def context_from_values(values: dict, **setting) -> Context:
    """A context from given a1, E_f2, rho (numbers or Values), e.g. inside ``verify``."""
    with mpmath.workdps(40):
        return _context_from_values(values, setting)


def _context_from_values(values, setting):
    v = {k: to_mpf(values[k]) for k in ("a1", "E_f2", "rho")}
    err = {k: mpmath.mpf(values[k].abs_err) for k in ("a1", "E_f2", "rho") if getattr(values[k], "abs_err", None)}
    v["rho_f"] = v["rho"] + v["E_f2"]
    v["rho_nonlinear"] = v["rho_f"] - v["a1"] ** 2
    v.update(setting_values(**setting))
    return Context(v, {}, err)


# ---------------------------------------------------------------------------
# Numbers and formulas
# ---------------------------------------------------------------------------
@dataclass
class SlipMatch:
    """A model whose version of the required quantity equals the claimed one."""

    model: SlipModel
    value: object  # mpf: the slipped value
    distance: object  # |claimed - value| (mpf); 0 for a symbolic identity
    exact: bool  # True: symbolic identity for every teacher; False: numeric match
    applied: str = ""  # the slipped formula, written out
    intended: str = ""  # the required quantity the slip acted on
    rank: int = 0
    tied_with: list = field(default_factory=list)
    expr: object = field(default=None, repr=False)  # the slipped formula (SymPy), if any

    def to_json(self) -> dict:
        return {
            "model": self.model.name,
            "transform": self.model.written(),
            "exact": self.exact,
            "distance": float(self.distance),
            "value": mpmath.nstr(self.value, 15) if self.value is not None else None,
            "applied": self.applied or None,
            "intended": self.intended or None,
            "rank": self.rank,
            "tied_with": list(self.tied_with),
            "description": self.model.description,
        }


@dataclass
class SlipReport:
    """What the catalogue says about a claimed number or formula."""

    mode: str  # "number" or "formula"
    claimed: str
    required: str | None
    required_value: object  # mpf or None
    tol: object  # mpf (number mode) or None
    consistent: bool  # the claim equals the required quantity: no slip needed
    matches: list  # SlipMatch, ranked
    indistinguishable: list  # model names equal to "no slip" here
    not_applicable: list  # (model name, reason)
    unavailable: list  # (model name, reason)
    tried: int
    nearest: list = field(default_factory=list)  # closest non-matching (SlipMatch), for context

    @property
    def best(self):
        return self.matches[0] if self.matches else None

    def best_names(self) -> list:
        """The models ranked first (several when they tie)."""
        return [m.model.name for m in self.matches if m.rank == 1]

    def coincidence(self):
        """Look-elsewhere estimate: chance that some wrong candidate lands within tol by accident.

        ``tried * 2 tol / (|claimed| ln 10)``: each of the ``tried`` candidate values treated as
        a number whose log10 is uniform over one decade around the claimed value.  None for
        symbolic identities (no tolerance) or a claimed value of 0.
        """
        if self.tol is None:
            return None
        v = abs(mpmath.mpf(self.claimed)) if self.mode == "number" else None
        if not v:
            return None
        return min(1.0, float(self.tried * 2 * self.tol / (v * mpmath.log(10))))

    def verdict(self) -> str:
        if self.consistent:
            return "consistent"
        return "explained" if self.matches else "unexplained"

    def summary(self) -> str:
        if self.consistent:
            s = f"{self.claimed} equals the required {self.required}: no slip needed"
            if self.indistinguishable:
                s += f" (indistinguishable here: {', '.join(self.indistinguishable)})"
            return s
        if not self.matches:
            s = (
                f"no error model of the catalogue maps {self.required or 'a named quantity'} to "
                f"{self.claimed} ({self.tried} candidates tried"
            )
            return s + (f" at tolerance {mpmath.nstr(self.tol, 2)})" if self.tol is not None else ")")
        b = self.matches[0]
        how = (
            "symbolic identity"
            if b.exact
            else f"numeric match, distance {mpmath.nstr(b.distance, 2)} <= tol {mpmath.nstr(self.tol, 2)}"
        )
        s = (
            f"error model {b.model.name}: {b.model.description}; transform {b.model.written()}"
            f"{f' on {b.intended}' if b.intended else ''}"
            f"{f' gives {b.applied}' if b.applied else ''} ({how})"
        )
        if b.tied_with:
            same = "the same formula" if b.exact else "the same value here"
            s += f"; tied with {', '.join(b.tied_with)} ({same}: indistinguishable)"
        others = [m.model.name for m in self.matches if m.rank > 1]
        if others:
            s += f"; also within tolerance: {', '.join(others[:4])}"
        c = self.coincidence()
        if c is not None:
            s += f"; {self.tried} candidates tried, chance of a coincidence ~{c:.2g}"
        return s

    def to_json(self) -> dict:
        return {
            "mode": self.mode,
            "claimed": self.claimed,
            "required": self.required,
            "required_value": None if self.required_value is None else mpmath.nstr(self.required_value, 15),
            "tol": None if self.tol is None else float(self.tol),
            "verdict": self.verdict(),
            "matches": [m.to_json() for m in self.matches],
            "nearest": [m.to_json() for m in self.nearest],
            "indistinguishable": list(self.indistinguishable),
            "not_applicable": [{"model": n, "reason": r} for n, r in self.not_applicable],
            "unavailable": [{"model": n, "reason": r} for n, r in self.unavailable],
            "tried": self.tried,
            "coincidence": self.coincidence(),
            "summary": self.summary(),
        }


def tolerance_from_text(text: str) -> mpmath.mpf:
    """Half a unit in the last printed decimal place (``"1.447"`` -> 5e-4).

    ``text`` is read by the one number grammar of the package
    (:func:`icl_symbolic.core.numbers.check_decimal`: ASCII digits, bounded length, finite).

    >>> print(tolerance_from_text("0.447029"))
    5.0e-7
    """
    dec = Decimal(check_decimal(text, "--value"))
    return mpmath.mpf(f"5e{dec.as_tuple().exponent - 1}")


def parse_quantity(text, allowed=TEACHER_NAMES + SETTING_NAMES, what="--required") -> sympy.Expr:
    """A required/claimed formula in the context names, through the whitelist parser."""
    if isinstance(text, sympy.Basic):
        return _rename(text)
    try:
        return _parse(str(text), tuple(allowed))
    except ICLError as exc:
        raise ICLError(f"{what}: {exc}") from None


def _rename(expr):
    """Map the symbols of another module (same names, other assumptions) to ours."""
    rep = {}
    for s in expr.free_symbols:
        if s.name not in CONTEXT_SYMBOLS:
            raise ICLError(f"unknown name {s.name!r} (allowed: {', '.join(CONTEXT_NAMES)})")
        rep[s] = CONTEXT_SYMBOLS[s.name]
    return expr.xreplace(rep)


def _tie_groups(matches, same) -> None:
    """Rank matches (already sorted); equal-valued models share a rank and name each other."""
    rank = 0
    for i, m in enumerate(matches):
        prev = [p for p in matches[:i] if same(p, m)]
        if prev:
            m.rank = prev[0].rank
        else:
            rank = max([p.rank for p in matches[:i]] + [0]) + 1
            m.rank = rank
    for m in matches:
        m.tied_with = [p.model.name for p in matches if p is not m and p.rank == m.rank]


def rerank(matches) -> None:
    """Ranks and ties again after matches were removed (numeric values, as in diagnose_number)."""
    _tie_groups(matches, lambda a, b: a.exact == b.exact and abs(a.value - b.value) <= _tiny(a.value))


def _candidates(cat, kind, ctx, required_exprs, x_value):
    """(model, intended text, slipped expr or None, slipped value or None, reason)."""
    out = []
    for m in cat.for_kind(kind):
        if not m.available:
            continue
        if required_exprs is None:  # a bare required value: transform-only models
            if m.substitute or m.rewrite:
                out.append((m, "", None, None, "needs the required formula (substitute/rewrite model)"))
                continue
            miss = sorted(m.needs() - set(ctx.values)) if ctx else sorted(m.needs())
            if miss:
                out.append((m, "", None, None, f"needs {', '.join(miss)}"))
                continue
            v = ctx.evaluate(m.transform, {"x": x_value})
            out.append(
                (
                    m,
                    "",
                    m.transform.xreplace({X: sympy.Float(str(x_value), 20)}),
                    v,
                    "undefined here" if v is None else "",
                )
            )
            continue
        for text, req in required_exprs:
            e = m.apply(req)
            if e is None:
                out.append((m, text, None, None, f"nothing to act on in {text}"))
                continue
            if ctx is None:
                out.append((m, text, e, None, ""))
                continue
            miss = ctx.missing(e)
            if miss:
                out.append((m, text, e, None, f"needs {', '.join(miss)}"))
                continue
            v = ctx.evaluate(e)
            out.append((m, text, e, v, "undefined here" if v is None else ""))
    return out


#: Relative distance below which two values computed at 30+ digits count as the same number.
SAME = mpmath.mpf("1e-24")


def _tiny(v):
    return SAME * max(1, abs(v))


def diagnose_number(
    claimed, ctx: Context, required=None, *, x_value=None, tol=None, cat: Catalogue | None = None, n_nearest: int = 3
) -> SlipReport:
    """Which error model maps the required quantity to the claimed number?

    Parameters
    ----------
    claimed : str or number
        The claimed number; as text, its printed digits set the default tolerance.
    ctx : Context
        The teacher and setting (:func:`teacher_context`).
    required : str or sympy.Expr, optional
        The quantity the derivation needs (context names).  Without it (and
        without ``x_value``) every quantity of the catalogue's ``quantities`` list
        is tried as the intended one.
    x_value : number, optional
        The required VALUE when no formula is known (only ``transform`` models apply).
    tol : number, optional
        Absolute tolerance (default: half a unit in the last printed digit, or 1e-12 relative).

    Returns
    -------
    SlipReport
        Matches ranked by distance, then number of parameters, then catalogue order;
        models with the same value here tie (share a rank).
    """
    cat = cat or catalogue()
    with mpmath.workdps(40):
        if isinstance(claimed, str):
            if tol is None:
                tol = tolerance_from_text(claimed)
            shown = check_decimal(claimed, "--value")
            v = mpmath.mpf(shown)
        else:
            v = to_mpf(claimed)
            shown = mpmath.nstr(v, 15)
            if tol is None:
                tol = mpmath.mpf("1e-12") * max(1, abs(v))
        tol = mpmath.mpf(tol)
        if required is not None:
            req = parse_quantity(required)
            miss = ctx.missing(req)
            if miss:
                raise ICLError(f"--required uses {', '.join(miss)}, which is not given")
            reqs = [(_fmt(req) if not isinstance(required, str) else required, req)]
            rv = ctx.evaluate(req)
            if rv is None:
                raise ICLError(f"the required quantity {required} is undefined here")
        elif x_value is not None:
            reqs, rv = None, to_mpf(x_value)
        else:
            reqs = [(t, e) for t, e in cat.quantities if not ctx.missing(e)]
            rv = None
        cands = _candidates(cat, "number", ctx, reqs, rv)
        consistent = rv is not None and abs(v - rv) <= tol
        if rv is None:  # bare number: "no slip" = it is one of the quantities
            base = [(t, ctx.evaluate(e)) for t, e in reqs]
        else:
            base = [(reqs[0][0] if reqs else "x", rv)]
        matches, nearest, indist, notap, tried = [], [], [], [], 0
        for m, text, e, val, why in cands:
            if val is None:
                notap.append((m.name + (f" on {text}" if text and rv is None else ""), why))
                continue
            ref = dict(base).get(text, rv) if rv is None else rv
            if ref is not None and abs(val - ref) <= _tiny(ref) + ctx.error_of(e) * 2:
                indist.append(m.name + (f" on {text}" if rv is None else ""))
                continue
            tried += 1
            dist = abs(v - val)
            sm = SlipMatch(m, val, dist, False, applied=_fmt(e) if reqs else "", intended=text, expr=e)
            (matches if dist <= tol + ctx.error_of(e) else nearest).append(sm)
        order = {n: i for i, n in enumerate(cat.names())}
        key = lambda s: (s.distance, len(s.model.params), order[s.model.name])  # noqa: E731
        matches.sort(key=key)
        nearest.sort(key=key)
        _tie_groups(matches, lambda a, b: abs(a.value - b.value) <= _tiny(a.value))
        if rv is None:  # bare number: naming WHICH quantity it is is the family search's job
            indist = []
        return SlipReport(
            "number",
            shown,
            None if reqs is None else (reqs[0][0] if required is not None else None),
            rv,
            tol,
            consistent,
            matches,
            sorted(set(indist)),
            notap,
            [(m.name, m.reason) for m in cat.for_kind("number") if not m.available],
            tried,
            nearest[:n_nearest],
        )


def expand_derived(expr) -> sympy.Expr:
    """rho_f and rho_nonlinear written in a1, E_f2, rho (Eq. 8)."""
    return expr.xreplace(DERIVED)


def _symbolically_equal(a, b) -> bool:
    diff = expand_derived(a) - expand_derived(b)
    if sympy.cancel(sympy.together(diff)) == 0:
        return True
    # cheap screen: a difference that is non-zero at a random positive point is not an identity
    syms = sorted(diff.free_symbols, key=lambda s: s.name)
    for seed in (0.3711, 0.5923):
        at = {s: sympy.Float(seed + 0.137 * i, 30) for i, s in enumerate(syms)}
        try:
            val = complex(diff.xreplace(at).evalf(30))
        except (TypeError, ValueError, ZeroDivisionError):
            break
        if abs(val) > 1e-20:
            return False
    try:
        return sympy.simplify(diff) == 0
    except Exception:  # pragma: no cover - SymPy failures mean "not proved"
        return False


def diagnose_formula(claimed, required, ctx: Context | None = None, cat: Catalogue | None = None) -> SlipReport:
    """Which error model maps the required formula to the claimed formula?

    A symbolic identity (after writing rho_f and rho_nonlinear in a1, E_f2, rho,
    Eq. 8) is ``exact``; otherwise, with a teacher context, a numeric match at
    that teacher (distance within 1e-20 relative) is reported with ``exact = False``.

    >>> rep = diagnose_formula("(a1^2 + rho_nonlinear)/a1^2", "rho_nonlinear/a1^2")
    >>> [(m.model.name, m.exact, m.rank) for m in rep.matches]
    [('plus_one', True, 1), ('total_for_residual', True, 1)]
    """
    cat = cat or catalogue()
    cl = parse_quantity(claimed, what="--formula")
    rq = parse_quantity(required)
    rtext = required if isinstance(required, str) else _fmt(rq)
    ctext = claimed if isinstance(claimed, str) else _fmt(cl)
    with mpmath.workdps(40):
        consistent = _symbolically_equal(cl, rq)
        cv = rv = None
        if ctx is not None and not ctx.missing(cl) and not ctx.missing(rq):
            cv, rv = ctx.evaluate(cl), ctx.evaluate(rq)
        cands = _candidates(cat, "formula", ctx if ctx is not None else None, [(rtext, rq)], None)
        matches, nearest, indist, notap, tried = [], [], [], [], 0
        for m, text, e, val, why in cands:
            if e is None:
                notap.append((m.name, why))
                continue
            if _symbolically_equal(e, rq):
                indist.append(m.name)
                continue
            if _symbolically_equal(e, cl):
                tried += 1
                matches.append(SlipMatch(m, val, mpmath.mpf(0), True, applied=_fmt(e), intended=rtext, expr=e))
                continue
            if val is None or cv is None:
                tried += 1  # tried symbolically only
                continue
            if rv is not None and abs(val - rv) <= _tiny(rv):
                indist.append(m.name)
                continue
            tried += 1
            dist = abs(val - cv)
            sm = SlipMatch(m, val, dist, False, applied=_fmt(e), intended=rtext, expr=e)
            (matches if dist <= _tiny(cv) * 1e10 else nearest).append(sm)
        order = {n: i for i, n in enumerate(cat.names())}
        key = lambda s: (not s.exact, s.distance, len(s.model.params), order[s.model.name])  # noqa: E731
        matches.sort(key=key)
        nearest.sort(key=lambda s: (s.distance, order[s.model.name]))

        def same(a, b):  # a symbolic identity outranks a match at this teacher only
            if a.exact != b.exact:
                return False
            if a.exact:
                return _symbolically_equal(a.expr, b.expr)
            return a.value is not None and b.value is not None and abs(a.value - b.value) <= _tiny(a.value)

        _tie_groups(matches, same)
        return SlipReport(
            "formula",
            ctext,
            rtext,
            rv,
            None,
            consistent,
            matches,
            sorted(set(indist)),
            notap,
            [(m.name, m.reason) for m in cat.for_kind("formula") if not m.available],
            tried,
            nearest[:3],
        )
