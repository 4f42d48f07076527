"""Scale-mismatch diagnosis: which related quantity does a claimed number equal?

Paper: Sec. 3, Eq. (8), p. 3 (rho_f, rho_nonlinear); Result 1, Eq. (9), p. 3;
Sec. 3 text on Fig. 1, p. 3 (the 1.447 / 0.447 scale problem).

When a number printed in a paper disagrees with what the derivation requires,
the usual cause is a *scale* slip: a quantity normalised (or not) by a1^2, the
total label second moment written for the effective noise, an offset by 1.
This module searches a fixed family of such quantities built from the three
base numbers of a teacher f and noise variance rho,

    a1 = E[g f(g)],   E_f2 = E[f(g)^2],   rho,
    rho_f = rho + E_f2,   rho_nonlinear = rho_f - a1^2          (Eq. 8)

namely the bases (rho, E[f^2], rho_f, rho_nonlinear, a1, a1^2, and the
residual energy rho_nonlinear - rho = sum_{m != 1} a_m^2), all their pairwise
ratios (this includes every normalisation by a1^2), and every one of those
offset by +1 and -1.  Candidates that are the same rational function of
(a1, E_f2, rho) are merged (so ``rho_f/a1^2`` and ``rho_nonlinear/a1^2 + 1``
are one candidate with two names).  Relations between candidates are proved
with SymPy (``cancel``), not read off the decimals: "differ by exactly 1"
means the symbolic difference simplifies to the integer 1.

Examples
--------
The value in the Sec. 3 text on Fig. 1 (p. 3) for f = sin, rho = 0.1 (a1 = e^{-1/2},
E[sin^2 g] = (1 - e^{-2})/2):

>>> import mpmath
>>> vals = dict(a1=mpmath.exp(-0.5), E_f2=(1 - mpmath.exp(-2)) / 2, rho=mpmath.mpf("0.1"))
>>> d = diagnose_value("1.447029", values=vals, required="rho_nonlinear/a1^2")
>>> d.best.name
'rho_f/a1^2'
>>> d.relation_text()
'exactly 1 more than'
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import mpmath
import sympy

from icl_symbolic.core.caches import memoize
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.numbers import check_decimal
from icl_symbolic.core.values import Value
from icl_symbolic.diagnosis.slips import (
    catalogue,
    diagnose_number,
    rerank,
    teacher_context,
    to_mpf,
    tolerance_from_text,
)
from icl_symbolic.engine.expr import parse_expr
from icl_symbolic.engine.hermite import hermite_coeffs
from icl_symbolic.output.rows import Rows

# Base symbols of the family.  a1 may be negative or zero; E_f2 > 0; rho >= 0.
a1 = sympy.Symbol("a1", real=True)
E_f2 = sympy.Symbol("E_f2", positive=True)
rho = sympy.Symbol("rho", nonnegative=True)
BASE_SYMBOLS = (a1, E_f2, rho)

#: Names a user may write in family expressions, and what they stand for.
FAMILY_NAMES = ("a1", "E_f2", "rho", "rho_f", "rho_nonlinear")
DERIVED = {
    "rho_f": rho + E_f2,  # Eq. (8), p. 3
    "rho_nonlinear": rho + E_f2 - a1**2,  # Eq. (8), p. 3
}

_BASES = (
    ("rho", rho, "label noise variance"),
    ("E[f^2]", E_f2, "second moment of the teacher E[f(g)^2]"),
    ("rho_f", rho + E_f2, "total label second moment rho + E[f^2] (Eq. 8)"),
    (
        "rho_nonlinear",
        rho + E_f2 - a1**2,
        "effective noise variance of the equivalent linear teacher, rho_f - a1^2 (Eq. 8)",
    ),
    ("a1", a1, "first Hermite coefficient E[g f(g)] (Eq. 2)"),
    ("a1^2", a1**2, "first-order signal strength; the MSE normalisation factor of Result 1"),
    ("rho_nonlinear - rho", E_f2 - a1**2, "nonlinear residual energy sum_{m != 1} a_m^2"),
)

_DESCRIPTIONS = {
    "rho_f/a1^2": "the normalised total label second moment (a1^2 + rho_nonlinear)/a1^2",
    "rho_nonlinear/a1^2": "the noise variance of the equivalent linear teacher once its signal is "
    "normalised to unit strength",
    "a1^2/rho_f": "the signal fraction a1^2/rho_f",
    "E[f^2]/a1^2": "E[f^2] normalised by the signal a1^2",
    "(rho_nonlinear - rho)/a1^2": "the residual energy normalised by the signal a1^2",
}
# Extra readable aliases for some canonical forms.
_EXTRA_ALIASES = {
    "rho_f/a1^2": "(a1^2 + rho_nonlinear)/a1^2",
}


@dataclass(frozen=True)
class Candidate:
    """One member of the family: a rational function of (a1, E_f2, rho)."""

    name: str
    expr: sympy.Expr
    aliases: tuple = ()
    description: str = ""

    def label(self) -> str:
        names = (self.name,) + tuple(a for a in self.aliases if a != self.name)
        return " = ".join(names)


def _paren(name: str) -> str:
    return f"({name})" if (" " in name) else name


def expr_key(expr) -> str:
    return sympy.srepr(sympy.cancel(sympy.together(expr)))


@memoize(maxsize=1)
def family() -> tuple:
    """The deduplicated candidate family (symbolic, computed once).

    >>> names = [c.name for c in family()]
    >>> "rho_f/a1^2" in names and "rho_nonlinear/a1^2" in names
    True
    >>> [c for c in family() if c.name == "rho_f/a1^2"][0].aliases
    ('(a1^2 + rho_nonlinear)/a1^2', 'rho_nonlinear/a1^2 + 1')
    """
    raw = [(n, e) for n, e, _ in _BASES]
    for nx, ex, _ in _BASES:
        for ny, ey, _ in _BASES:
            if nx != ny:
                raw.append((f"{_paren(nx)}/{_paren(ny)}", ex / ey))
    first = list(raw)
    for n, e in first:
        raw.append((f"{n} + 1", e + 1))
        raw.append((f"{n} - 1", e - 1))
    desc = {n: d for n, _, d in _BASES}
    desc.update(_DESCRIPTIONS)
    merged: dict[str, list] = {}
    order = []
    for n, e in raw:
        k = expr_key(e)
        if k not in merged:
            merged[k] = [n, sympy.cancel(e), [], ""]
            order.append(k)
            if n in _EXTRA_ALIASES:
                merged[k][2].append(_EXTRA_ALIASES[n])
        elif n != merged[k][0] and n not in merged[k][2]:
            merged[k][2].append(n)
        if not merged[k][3] and n in desc:
            merged[k][3] = desc[n]
    return tuple(
        Candidate(name=merged[k][0], expr=merged[k][1], aliases=tuple(merged[k][2]), description=merged[k][3])
        for k in order
    )


@memoize(maxsize=1)
def _family_keys() -> dict:
    """id(candidate) -> canonical key, computed once."""
    return {id(c): expr_key(c.expr) for c in family()}


@memoize(maxsize=1)
def _compiled() -> tuple:
    """The family as mpmath functions of (a1, E_f2, rho), in :func:`family` order."""
    return tuple(sympy.lambdify(BASE_SYMBOLS, c.expr, modules="mpmath") for c in family())


def family_expr(text_or_expr) -> sympy.Expr:
    """A family expression (names ``a1, E_f2, rho, rho_f, rho_nonlinear``) in base symbols.

    Text goes through the safe parser :func:`icl_symbolic.engine.expr.parse_expr`.
    ``^`` is accepted for powers.

    >>> family_expr("rho_f/a1^2 - rho_nonlinear/a1^2")
    1
    """
    if isinstance(text_or_expr, sympy.Basic):
        expr = text_or_expr
    else:
        expr = parse_expr(str(text_or_expr).replace("^", "**"), variables=FAMILY_NAMES)
    subs = {}
    for s in expr.free_symbols:
        if s.name in DERIVED:
            subs[s] = DERIVED[s.name]
        elif s.name in ("a1", "E_f2", "rho"):
            subs[s] = {"a1": a1, "E_f2": E_f2, "rho": rho}[s.name]
        else:
            raise ICLError(f"unknown name {s.name!r} in family expression; allowed: {', '.join(FAMILY_NAMES)}")
    return sympy.cancel(expr.xreplace(subs))


def match_family(expr) -> Candidate | None:
    """The family candidate that is symbolically equal to ``expr`` (or None)."""
    k = expr_key(family_expr(expr))
    keys = _family_keys()
    for c in family():
        if keys[id(c)] == k:
            return c
    return None


def evaluate(expr, values, digits: int = 30):
    """Evaluate a family expression at ``values`` = {a1, E_f2, rho} (numbers or Values).

    Returns an mpmath number, or None where undefined (division by zero).

    >>> print(evaluate(family_expr("rho_f/a1^2"), dict(a1=1, E_f2=2, rho="0.5")))
    2.5
    """
    fn = sympy.lambdify(BASE_SYMBOLS, family_expr(expr) if isinstance(expr, str) else expr, modules="mpmath")
    with mpmath.workdps(digits + 10):
        try:
            v = fn(*[to_mpf(values[s.name]) for s in BASE_SYMBOLS])
        except ZeroDivisionError:
            return None
        if not isinstance(v, mpmath.mpf):
            v = mpmath.mpmathify(v)
        if not (isinstance(v, mpmath.mpf) and mpmath.isfinite(v)):
            return None
        return +v


@dataclass
class Match:
    candidate: Candidate
    value: object  # mpf
    distance: object  # |claimed - value|
    exact: object = None  # SymPy closed form of the value, when the base values are exact

    def shown(self) -> str:
        """``name = closed form = decimal`` (closed form only when known and short)."""
        v = mpmath.nstr(self.value, 10)
        if self.exact is not None:
            ex = _fmt_expr(self.exact)
            if len(ex) <= 40 and ex != v:
                return f"{ex} = {v}"
        return v

    def to_json(self) -> dict:
        return {
            "name": self.candidate.name,
            "aliases": list(self.candidate.aliases),
            "description": self.candidate.description,
            "expr": str(self.candidate.expr),
            "value": mpmath.nstr(self.value, 15),
            "distance": mpmath.nstr(self.distance, 3),
        }


@dataclass
class Diagnosis(Rows):
    """What a number is, within the family of a teacher's quantities."""

    value: object  # the claimed number (mpf)
    tol: object  # matching tolerance (mpf)
    matches: list  # Matches within tol, closest first
    nearest: list  # the closest candidates overall (for context)
    values: dict  # the base numbers a1, E_f2, rho used
    required: Match | None = None  # what the derivation needs (verify context)
    related: list = field(default_factory=list)  # (Match, relation text): what may have been meant
    subject: str = ""  # what the value is, e.g. "the ratio computed/claimed"
    slips: object = None  # icl_symbolic.diagnosis.slips.SlipReport: the catalogue's error models

    def slip_names(self) -> list:
        """The error models ranked first by the catalogue (several when they tie)."""
        return self.slips.best_names() if self.slips is not None else []

    @property
    def best(self) -> Candidate | None:
        return self.matches[0].candidate if self.matches else None

    def relation(self):
        """Symbolic difference best - required (SymPy), or None."""
        if self.best is None or self.required is None:
            return None
        return sympy.cancel(self.best.expr - self.required.candidate.expr)

    def relation_text(self) -> str:
        """How the best match relates to the required quantity, proved symbolically."""
        if self.best is None or self.required is None:
            return ""
        return _relation_words(self.best.expr, self.required.candidate.expr)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        e = html.escape
        rows = "".join(
            f"<tr><td>{'yes' if p['matches'] else ''}</td><td><code>{e(p['name'])}</code></td>"
            f"<td>{e(p['expr'])}</td><td>{e(p['value'])}</td><td>{e(p['distance'])}</td></tr>"
            for p in self.points()
        )
        return (
            f"<div><p><b>{e(self.summary())}</b></p><table><tr><th>match</th><th>quantity</th>"
            f"<th>formula</th><th>value</th><th>off by</th></tr>{rows}</table></div>"
        )

    def points(self) -> list[dict]:
        """One row per quantity of the family tried (the matches first, then the nearest others):
        ``name``, ``expr``, ``value``, ``distance`` (decimal strings), ``matches`` (within ``tol``)."""
        seen, out = set(), []
        for m, ok in [(m, True) for m in self.matches] + [(m, False) for m in self.nearest]:
            if m.candidate.name not in seen:
                seen.add(m.candidate.name)
                out.append({**m.to_json(), "matches": ok})
        return out

    def summary(self) -> str:
        """One paragraph, as printed by ``verify`` and ``diagnose``."""
        s = self._family_summary()
        if self.slips is not None and self.slips.matches:
            s += "; " + self.slips.summary()
        return s

    def _family_summary(self) -> str:
        v = mpmath.nstr(self.value, 10)
        if self.subject:
            v = f"{self.subject} {v}"
        if not self.matches:
            near = self.nearest[0] if self.nearest else None
            s = f"{v} matches no quantity of the family within {mpmath.nstr(self.tol, 2)}"
            if near is not None:
                s += (
                    f"; nearest: {near.candidate.name} = {mpmath.nstr(near.value, 10)}"
                    f" (off by {mpmath.nstr(near.distance, 3)})"
                )
            if self.required is not None:
                s += f"; the derivation needs {self.required.candidate.name} = {mpmath.nstr(self.required.value, 10)}"
            return s
        b = self.matches[0]
        s = f"{v} is {b.candidate.label()} = {b.shown()}"
        if b.candidate.description:
            s += f", {b.candidate.description}"
        same = [
            m.candidate.name
            for m in self.matches[1:]
            if abs(m.value - b.value) <= mpmath.mpf(10) ** -20 * max(1, abs(b.value))
        ]
        if same:
            s += f" (for this teacher also equal to {', '.join(same[:3])})"
        if self.required is not None:
            if self.required.candidate is b.candidate:
                return s + "; this is the quantity the derivation needs"
            r = self.required
            s += f"; the derivation needs {r.candidate.name} = {r.shown()}" + (
                f" ({r.candidate.description})" if r.candidate.description else ""
            )
            s += f"; the claimed quantity is {self.relation_text()} the required one"
            diff = self.relation()
            s += f" (symbolically: {b.candidate.name} - {r.candidate.name} = {_fmt_expr(diff)})"
        elif self.related:
            m, words = self.related[0]
            s += (
                f"; if you meant {m.candidate.name} ({m.candidate.description or 'related'}),"
                f" that is {mpmath.nstr(m.value, 10)}: {words}"
            )
        return s

    def to_json(self) -> dict:
        out = {
            "value": mpmath.nstr(self.value, 15),
            "tol": mpmath.nstr(self.tol, 3),
            "matches": [m.to_json() for m in self.matches],
            "nearest": [m.to_json() for m in self.nearest],
            "base_values": {k: mpmath.nstr(to_mpf(v), 15) for k, v in self.values.items()},
            "summary": self.summary(),
        }
        if self.required is not None:
            out["required"] = self.required.to_json()
            rel = self.relation()
            out["relation"] = None if rel is None else str(rel)
        if self.related:
            out["related"] = [dict(m.to_json(), relation=w) for m, w in self.related]
        if self.slips is not None:
            out["slips"] = self.slips.to_json()
        return out


def _fmt_expr(e) -> str:
    return str(e).replace("**", "^")


def _relation_words(found, required) -> str:
    """Words for found vs required, from the symbolic difference and ratio."""
    diff = sympy.cancel(found - required)
    if diff == 0:
        return "identical to"
    if diff.is_number:
        return f"exactly {_fmt_expr(abs(diff))} {'more' if diff > 0 else 'less'} than"
    ratio = sympy.cancel(found / required)
    if ratio.free_symbols <= {a1} or ratio.is_number:
        if ratio.is_Pow and ratio.exp.is_negative:
            return f"exactly 1/{_fmt_expr(1 / ratio)} times"
        return f"exactly {_fmt_expr(ratio)} times"
    return f"different from (difference {_fmt_expr(diff)})"


def base_values(f, rho_value, digits: int = 30) -> dict:
    """a1, E_f2, rho for teacher ``f`` (via :func:`icl_symbolic.engine.hermite.hermite_coeffs`)."""
    res = hermite_coeffs(f, M=2, rho=rho_value, digits=digits)
    rho_v = rho_value
    if not isinstance(rho_v, sympy.Basic):
        rho_v = parse_expr(str(rho_value), variables=())
    return {"a1": res.a1, "E_f2": res.E_f2, "rho": Value.from_exact(rho_v, digits=digits)}


def diagnose_value(
    value, f=None, rho_value=None, *, values=None, tol=None, digits: int = 30, required=None, n_nearest: int = 5
) -> Diagnosis:
    """Name what ``value`` is among the quantities of teacher ``f`` at noise ``rho``.

    Paper: Eq. (8), p. 3; Result 1, Eq. (9), p. 3; Sec. 3 text on Fig. 1, p. 3.

    Parameters
    ----------
    value : str or number
        The claimed number; as a string its printed digits set the default
        tolerance (half a unit in the last place).
    f : str, SymPy expression or callable, optional
        The teacher (needs :mod:`icl_symbolic.engine.hermite`).  Alternatively give
        ``values``.
    rho_value : number or str
        Label noise variance rho.
    values : dict, optional
        ``{"a1": ..., "E_f2": ..., "rho": ...}`` (numbers or Values) instead of ``f``.
    tol : number, optional
        Absolute matching tolerance (default from the printed digits of ``value``,
        or 1e-12 relative for a non-string value).
    required : str, optional
        A family expression: the quantity the derivation needs.  The diagnosis
        then states how the match relates to it, proved symbolically.

    Returns
    -------
    Diagnosis
    """
    if values is None:
        if f is None:
            raise ICLError("diagnose needs a teacher f or the base values a1, E_f2, rho")
        if rho_value is None:
            rho_value = 0
        values = base_values(f, rho_value, digits=digits)
    with mpmath.workdps(digits + 10):
        if isinstance(value, str):
            if tol is None:
                tol = tolerance_from_text(value)
            v = mpmath.mpf(check_decimal(value, "--value"))
        else:
            v = to_mpf(value)
            if tol is None:
                tol = mpmath.mpf("1e-12") * max(1, abs(v))
        tol = mpmath.mpf(tol)
        scored = []
        args = [to_mpf(values[sym.name]) for sym in BASE_SYMBOLS]
        for c, fn in zip(family(), _compiled()):
            try:
                cv = fn(*args)
            except ZeroDivisionError:
                continue
            if not mpmath.isfinite(cv):
                continue
            scored.append(Match(c, +cv, abs(v - cv)))
        scored.sort(key=lambda m: (m.distance, len(m.candidate.name)))
        matches = [m for m in scored if m.distance <= tol]
        nearest = scored[:n_nearest]
        req = None
        if required is not None:
            rexpr = family_expr(required)
            cand = match_family(rexpr) or Candidate(name=str(required), expr=rexpr)
            rv = evaluate(rexpr, values, digits)
            if rv is None:
                raise ICLError(f"required quantity {required} is undefined for these values")
            req = Match(cand, rv, abs(v - rv))
        related = []
        if matches:
            related = _related(matches[0].candidate, scored)
            _attach_exact(matches[0], values)
        if req is not None:
            _attach_exact(req, values)
    return Diagnosis(
        value=v, tol=tol, matches=matches, nearest=nearest, values=dict(values), required=req, related=related
    )


def _attach_exact(match: Match, values) -> None:
    """Give ``match`` its closed form when all base values are exact SymPy numbers."""
    env = {}
    for sym in BASE_SYMBOLS:
        v = values[sym.name]
        if hasattr(v, "method"):
            if v.method != "exact" or v.exact is None:
                return
            v = v.exact
        elif not isinstance(v, sympy.Basic):
            return
        env[sym] = v
    try:
        match.exact = sympy.expand(match.candidate.expr.xreplace(env))
    except Exception:  # pragma: no cover - display only
        match.exact = None


def _related(best: Candidate, scored) -> list:
    """Candidates one scale slip away from ``best``: offset by +-1 or scaled by a1^2.

    Offsets come first (the classic off-by-one), then normalisations; only
    candidates with a description (named quantities) are offered.
    """
    keys = _family_keys()
    by_key = {keys[id(m.candidate)]: m for m in scored}
    out = []
    for e in (best.expr - 1, best.expr + 1, best.expr * a1**2, best.expr / a1**2):
        m = by_key.get(expr_key(e))
        if m is not None and m.candidate.description and m.candidate is not best:
            out.append((m, f"{best.name} is {_relation_words(best.expr, m.candidate.expr)} {m.candidate.name}"))
    return out


def explain_ratio(computed, claimed, values, digits: int = 30, tol=None):
    """Diagnose a mismatch of two values by their ratio and difference.

    Used for curves (Result 1's MSE normalisation): when ``computed`` and
    ``claimed`` differ, is computed/claimed (or its inverse, or the difference)
    a family quantity such as a1^2?  Returns ``(Diagnosis, what)`` with
    ``what`` in ``("ratio computed/claimed", "ratio claimed/computed",
    "difference")``, or ``(None, None)``.
    """
    c, k = to_mpf(computed), to_mpf(claimed)
    trials = []
    if k != 0:
        trials.append(("ratio computed/claimed", c / k))
    if c != 0:
        trials.append(("ratio claimed/computed", k / c))
    trials.append(("difference computed - claimed", c - k))
    for what, x in trials:
        t = tol if tol is not None else mpmath.mpf("1e-9") * max(1, abs(x))
        d = diagnose_value(x, values=values, tol=t, digits=digits)
        if d.matches:
            return d, what
    return None, None


# ---------------------------------------------------------------------------
# The error-model catalogue (icl_symbolic.diagnosis.slips) inside verify
# ---------------------------------------------------------------------------
def slip_report(claimed, f_text, rho, *, required=None, tol=None, cat=None):
    """The catalogue's diagnosis of ``claimed`` against ``required`` for teacher ``f_text``.

    None when the required quantity uses names outside the catalogue's context
    (e.g. a Hermite coefficient a7): then only the family search applies.
    """
    try:
        ctx = teacher_context(f_text, rho)
        return diagnose_number(claimed, ctx, required=required, tol=tol, cat=cat)
    except ICLError:
        return None


def slip_report_sweep(pairs, f_text, rho, worst: int, cat=None):
    """The catalogue on (computed, claimed, tol) pairs of a sweep, ``transform`` models only.

    A model counts only if it maps computed to claimed at EVERY point; the
    report is that of point ``worst`` with the other matches removed (re-ranked).
    """
    try:
        ctx = teacher_context(f_text, rho)
    except ICLError:
        return None
    reps = [diagnose_number(y, ctx, x_value=x, tol=t, cat=cat) for x, y, t in pairs]
    common = set.intersection(*[{m.model.name for m in r.matches} for r in reps]) if reps else set()
    rep = reps[worst]
    rep.matches = [m for m in rep.matches if m.model.name in common]
    rerank(rep.matches)
    return rep


def expected_diagnosis_ok(diag, expected: str) -> bool:
    """Does ``diag`` carry the expected diagnosis of a claim file?

    ``expected`` names an error model of the catalogue (found at rank 1, alone or
    tied) or, as before, a family quantity (``"rho_f/a1^2"``, ``"a1^2"``).
    """
    if diag is None:
        return False
    if expected in catalogue().names():
        return expected in diag.slip_names()
    found = diag.best
    return found is not None and expr_key(found.expr) == expr_key(family_expr(expected))


def validate_expected_diagnosis(text: str) -> None:
    """ICLError unless ``text`` is a catalogue model name or a family expression."""
    if text.strip() in catalogue().names():
        return
    family_expr(text)
