"""The input language for teacher functions f(g), and :class:`Teacher` objects.

User-supplied text is never executed: :func:`parse_expr` is a whitelist
tokenizer plus a Pratt (precedence-climbing) parser that builds SymPy objects
directly.  It does not call ``eval``, ``compile``, ``sympify`` or SymPy's
``parse_expr`` on the raw string.  See ``docs/input-language.md``.

Grammar (precedence low to high)::

    expr    := term (('+' | '-') term)*
    term    := unary (('*' | '/') unary)*
    unary   := ('+' | '-') unary | power
    power   := atom (('**' | '^') unary)?          # right-associative
    atom    := NUMBER | NAME | NAME '(' args ')' | '(' expr ')'

Numbers are exact: ``0.1`` is ``1/10`` and ``1e-3`` is ``1/1000``.
Names are the allowed variables (``g`` by default), the constants ``pi`` and
``E``, and the whitelisted functions ``sin cos exp log sqrt tanh erf erfc abs
sign relu heaviside sigmoid softplus gelu silu max min He h``.

Examples
--------
>>> parse_expr("sin(g) + 0.1*g**2")
g**2/10 + sin(g)
>>> parse_expr("h(2, g)")
sqrt(2)*(g**2 - 1)/2
>>> parse_expr("__import__('os')")
Traceback (most recent call last):
...
icl_symbolic.core.errors.ParseError: unexpected character '_' (at column 1: "__import__('os')")
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import mpmath
import numpy as np
import sympy

from icl_symbolic.core.caches import memoize
from icl_symbolic.core.cost import composed_hermite_cost, degree, expand_terms
from icl_symbolic.core.errors import ICLError, ParseError, ValidityError
from icl_symbolic.core.symbols import g
from icl_symbolic.engine.orthopoly import h, he

MAX_LENGTH = 10_000
MAX_DEPTH = 64
MAX_POWER = 64
MAX_HERMITE_ORDER = 200
MAX_NUMBER_DIGITS = 200
#: bound on the polynomial degree of a parsed expression (after Hermite composition)
MAX_DEGREE = 256
#: bound on the number of terms a full ``sympy.expand`` of the expression could create
MAX_EXPAND_TERMS = 5000

CONSTANTS = {"pi": sympy.pi, "E": sympy.E}


def _relu(x):
    return sympy.Max(x, 0)


def _heaviside(x):
    return sympy.Heaviside(x, sympy.S.Half)


def _sigmoid(x):
    return 1 / (1 + sympy.exp(-x))


def _softplus(x):
    return sympy.log(1 + sympy.exp(x))


def _gelu(x):
    return x * (1 + sympy.erf(x / sympy.sqrt(2))) / 2


def _silu(x):
    return x / (1 + sympy.exp(-x))


# name -> (SymPy builder, minimum arity, maximum arity or None)
FUNCTIONS: dict[str, tuple[Callable, int, int | None]] = {
    "sin": (sympy.sin, 1, 1),
    "cos": (sympy.cos, 1, 1),
    "exp": (sympy.exp, 1, 1),
    "log": (sympy.log, 1, 1),
    "sqrt": (sympy.sqrt, 1, 1),
    "tanh": (sympy.tanh, 1, 1),
    "erf": (sympy.erf, 1, 1),
    "erfc": (sympy.erfc, 1, 1),
    "abs": (sympy.Abs, 1, 1),
    "sign": (sympy.sign, 1, 1),
    "relu": (_relu, 1, 1),
    "heaviside": (_heaviside, 1, 1),
    "sigmoid": (_sigmoid, 1, 1),
    "softplus": (_softplus, 1, 1),
    "gelu": (_gelu, 1, 1),
    "silu": (_silu, 1, 1),
    "max": (sympy.Max, 2, None),
    "min": (sympy.Min, 2, None),
    "He": (None, 2, 2),
    "h": (None, 2, 2),
}

# ASCII only: Python's \d would also accept other scripts' digits ('٣', full-width '３')
_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<num>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<name>[A-Za-z][A-Za-z0-9_]*)
  | (?P<op>\*\*|[-+*/^(),])
""",
    re.VERBOSE | re.ASCII,
)


@dataclass(frozen=True)
class _Tok:
    kind: str  # num | name | op | end
    text: str
    pos: int


def _tokenize(text: str) -> list[_Tok]:
    toks, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ParseError(f"unexpected character {text[pos]!r}", text, pos)
        kind = m.lastgroup
        if kind != "ws":
            # a name glued to a number or a name followed by '.' or '_' is suspicious
            toks.append(_Tok(kind, m.group(), pos))
        pos = m.end()
    toks.append(_Tok("end", "", len(text)))
    return toks


def _exact_number(tok: _Tok, text: str) -> sympy.Rational:
    s = tok.text
    mant = s.split("e")[0].split("E")[0]
    if len(mant.replace(".", "")) > MAX_NUMBER_DIGITS:
        raise ParseError(f"number has more than {MAX_NUMBER_DIGITS} digits", text, tok.pos)
    m = re.match(r"^(.*?)(?:[eE]([+-]?[0-9]+))?$", s, re.ASCII)
    # compare the exponent's length before int(): Python refuses int() of > 4300 digits
    if m.group(2) is not None and (len(m.group(2).lstrip("+-").lstrip("0")) > 4 or abs(int(m.group(2))) > 1000):
        raise ParseError("number exponent out of range (|e| <= 1000)", text, tok.pos)
    frac = Fraction(s)  # exact decimal -> rational conversion of a validated literal
    return sympy.Rational(frac.numerator, frac.denominator)


class _Parser:
    def __init__(self, text: str, variables: dict[str, sympy.Symbol]):
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.depth = 0
        self.variables = variables

    # -- helpers ------------------------------------------------------
    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def error(self, msg: str, tok: _Tok | None = None):
        tok = tok or self.tok
        raise ParseError(msg, self.text, tok.pos)

    def accept(self, *ops: str) -> _Tok | None:
        t = self.tok
        if t.kind == "op" and t.text in ops:
            self.i += 1
            return t
        return None

    def expect(self, op: str):
        if not self.accept(op):
            t = self.tok
            what = "end of input" if t.kind == "end" else repr(t.text)
            self.error(f"expected {op!r}, found {what}")

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.error(f"expression nested deeper than {MAX_DEPTH} levels")

    # -- grammar ------------------------------------------------------
    def parse(self) -> sympy.Expr:
        if self.tok.kind == "end":
            raise ParseError("empty expression", self.text, 0)
        e = self.expr()
        if self.tok.kind != "end":
            self.error(f"unexpected {self.tok.text!r} after a complete expression")
        try:
            check_cost(e)
        except ICLError as exc:
            raise ParseError(str(exc), self.text, 0) from None
        return e

    def expr(self):
        left = self.term()
        while True:
            if self.accept("+"):
                left = left + self.term()
            elif self.accept("-"):
                left = left - self.term()
            else:
                break
        return left

    def term(self):
        left = self.unary()
        while True:
            if self.accept("*"):
                left = left * self.unary()
            elif t := self.accept("/"):
                right = self.unary()
                if right == 0:
                    self.error("division by zero", t)
                left = left / right
            else:
                break
        return left

    # nesting levels (MAX_DEPTH) are what a reader sees: a parenthesis, a call, a unary sign,
    # an exponent; sin(sin(...)) nests one level per call, not one per grammar rule
    def unary(self):
        if self.accept("-"):
            self.enter()
            out = -self.unary()
            self.depth -= 1
        elif self.accept("+"):
            self.enter()
            out = self.unary()
            self.depth -= 1
        else:
            out = self.power()
        return out

    def power(self):
        base = self.atom()
        t = self.accept("**", "^")
        if not t:
            return base
        exp_tok = self.tok
        self.enter()
        expo = self.unary()
        self.depth -= 1
        return self._checked_pow(base, expo, exp_tok)

    def _checked_pow(self, base, expo, tok):
        if expo.free_symbols:
            # a non-constant exponent is only allowed on a positive constant base (2**g)
            if base.free_symbols or base.is_positive is not True:
                self.error("a variable exponent needs a positive constant base (use exp(...))", tok)
            return sympy.Pow(base, expo)
        if not expo.is_real:
            self.error("exponent is not a real number", tok)
        try:
            ev = float(sympy.N(expo, 20))
        except (TypeError, ValueError):
            self.error("exponent cannot be evaluated", tok)
        if not math.isfinite(ev) or abs(ev) > MAX_POWER:
            self.error(f"exponent too large (|exponent| <= {MAX_POWER})", tok)
        if not base.free_symbols:
            # constant ** constant: bound the size of the result (no 9**64**...)
            try:
                lb = abs(float(sympy.N(sympy.log(sympy.Abs(base), 10), 20))) if base != 0 else 0.0
            except (TypeError, ValueError):
                lb = 0.0
            if lb * abs(ev) > 10_000:
                self.error("constant power too large", tok)
            if base == 0 and ev < 0:
                self.error("division by zero (0 to a negative power)", tok)
        out = sympy.Pow(base, expo)
        if (
            isinstance(out, sympy.Pow)
            and out.exp.is_Number
            and out.base.free_symbols
            and abs(float(out.exp)) > MAX_POWER
        ):
            self.error(f"power tower too large (combined exponent {out.exp}; at most {MAX_POWER})", tok)
        return out

    def atom(self):
        t = self.tok
        if t.kind == "num":
            self.i += 1
            return _exact_number(t, self.text)
        if t.kind == "op" and t.text == "(":
            self.i += 1
            self.enter()
            e = self.expr()
            self.expect(")")
            self.depth -= 1
            return e
        if t.kind == "name":
            self.i += 1
            name = t.text
            nxt = self.tok
            if nxt.kind == "op" and nxt.text == "(":
                if name not in FUNCTIONS:
                    self.error(f"unknown function {name!r} (allowed: {', '.join(FUNCTIONS)})", t)
                return self.call(name, t)
            if name in self.variables:
                return self.variables[name]
            if name in CONSTANTS:
                return CONSTANTS[name]
            if name in FUNCTIONS:
                self.error(f"function {name!r} needs arguments in parentheses", t)
            allowed = ", ".join(list(self.variables) + list(CONSTANTS))
            self.error(f"unknown name {name!r} (allowed names: {allowed})", t)
        if t.kind == "end":
            self.error("unexpected end of input")
        self.error(f"unexpected {t.text!r}")

    def call(self, name: str, name_tok: _Tok):
        self.expect("(")
        self.enter()
        args, arg_toks = [], []
        if not (self.tok.kind == "op" and self.tok.text == ")"):
            while True:
                arg_toks.append(self.tok)
                args.append(self.expr())
                if not self.accept(","):
                    break
        self.expect(")")
        self.depth -= 1
        builder, lo, hi = FUNCTIONS[name]
        if len(args) < lo or (hi is not None and len(args) > hi):
            n = f"{lo}" if lo == hi else f"at least {lo}"
            self.error(f"{name}() takes {n} argument(s), got {len(args)}", name_tok)
        if name in ("He", "h"):
            m = args[0]
            if m.free_symbols or not m.is_integer or m < 0:
                self.error(f"{name}(m, x): m must be a non-negative integer", arg_toks[0])
            if m > MAX_HERMITE_ORDER:
                self.error(f"{name}(m, x): order m <= {MAX_HERMITE_ORDER}", arg_toks[0])
            deg, terms = composed_hermite_cost(int(m), args[1])
            if deg > MAX_DEGREE or terms > MAX_EXPAND_TERMS:
                self.error(
                    f"{name}({int(m)}, ...) of this argument would be a polynomial of degree {deg} "
                    f"with up to {_big(terms)} terms (limits: degree {MAX_DEGREE}, "
                    f"{MAX_EXPAND_TERMS} terms)",
                    name_tok,
                )
            return (he if name == "He" else h)(int(m), args[1])
        return builder(*args)


def _big(n: int) -> str:
    return str(n) if n < 10**9 else f"~1e{len(str(n)) - 1}"


def check_cost(e) -> None:
    """ICLError when ``e`` is beyond the documented size limits (see ``docs/limits.md``).

    The polynomial degree (largest over sub-expressions, after Hermite
    composition) must be at most :data:`MAX_DEGREE` and a full expansion may
    create at most :data:`MAX_EXPAND_TERMS` terms (:mod:`icl_symbolic.core.cost`).

    >>> check_cost((g + 1)**64)
    >>> check_cost(sum((sympy.sin(k * g) for k in range(1, 6)), sympy.S.Zero)**64)
    Traceback (most recent call last):
    ...
    icl_symbolic.core.errors.ICLError: expression too large: expanding it could create up to 814385 terms (limit 5000)
    """
    deg = degree(e)
    if deg > MAX_DEGREE:
        raise ICLError(f"expression too large: polynomial degree {_big(deg)} (limit {MAX_DEGREE})")
    terms = expand_terms(e)
    if terms > MAX_EXPAND_TERMS:
        raise ICLError(
            f"expression too large: expanding it could create up to {_big(terms)} terms (limit {MAX_EXPAND_TERMS})"
        )


def parse_expr(text: str, variables=("g",)) -> sympy.Expr:
    """Parse ``text`` in the whitelisted input language into a SymPy expression.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"tanh(g)"`` or ``"(1 - exp(-2))/2"``.
    variables : sequence of str
        Allowed variable names; each maps to ``sympy.Symbol(name, real=True)``.

    Raises
    ------
    ParseError
        With the 0-based position of the offending token.

    Examples
    --------
    >>> parse_expr("0.1 + (1 - exp(-2))/2 - exp(-1)")
    -exp(-1) - exp(-2)/2 + 3/5
    >>> parse_expr("rho + a1", variables=("rho", "a1"))
    a1 + rho
    """
    if not isinstance(text, str):
        raise ParseError(f"expected a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ParseError(f"input longer than {MAX_LENGTH} characters ({len(text)})")
    names = {}
    for v in variables:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", v) or v in FUNCTIONS or v in CONSTANTS:
            raise ICLError(f"invalid variable name {v!r}")
        names[v] = g if v == "g" else sympy.Symbol(v, real=True)
    return _Parser(text, names).parse()


# ---------------------------------------------------------------------------
# Teacher objects
# ---------------------------------------------------------------------------

_KINK_FUNCS = (sympy.Abs, sympy.sign, sympy.Heaviside)


def _kink_arguments(e) -> list:
    """Expressions whose real zeros are kinks or jumps of ``e``."""
    out = []
    for node in sympy.preorder_traversal(e):
        if isinstance(node, _KINK_FUNCS):
            out.append(node.args[0])
        elif isinstance(node, (sympy.Max, sympy.Min)):
            a = node.args
            out.extend(a[i] - a[j] for i in range(len(a)) for j in range(i + 1, len(a)))
        elif isinstance(node, sympy.Piecewise):
            for _, cond in node.args:
                for rel in cond.atoms(sympy.core.relational.Relational):
                    out.append(rel.lhs - rel.rhs)
    return out


#: at most this many kinks/jumps (all kink arguments together) are located
MAX_KINKS = 2000
#: at most this many kink arguments (abs/sign/heaviside calls, pairs of max/min arguments)
MAX_KINK_ARGUMENTS = 600
#: the numeric kink scan: grid points on [lo, hi] and refinement levels (16x each)
SCAN_POINTS = 2**15
SCAN_LEVELS = 4
SCAN_MAX_CELLS = 200_000


#: a scanned value |u| at most this many float64 epsilons times the magnitude of its terms
#: (:func:`rounding_magnitude`) is 0 to working precision
ROUNDING_ULPS = 64


def rounding_magnitude(u):
    """An expression bounding the magnitude whose rounding u's float64 evaluation carries: sums
    become sums of the absolute values of their terms (``1 - tanh(g^3)^4`` -> ``1 + tanh(g^3)^4``),
    products and integer powers the products and powers of those magnitudes, anything else its
    absolute value.  A float64 value of u below ``ROUNDING_ULPS`` epsilons of it is 0 to working
    precision (cancellation noise), not a sign.

    >>> rounding_magnitude(parse_expr("1 - tanh(g^3)^4"))
    tanh(g**3)**4 + 1
    """
    if u.is_Add:
        return sympy.Add(*(rounding_magnitude(a) for a in u.args))
    if u.is_Mul:
        return sympy.Mul(*(rounding_magnitude(a) for a in u.args))
    if u.is_Pow and u.exp.is_Integer and u.exp >= 0:
        return rounding_magnitude(u.base) ** u.exp
    return sympy.Abs(u)


#: kinks are located on [-KINK_RANGE, KINK_RANGE]; beyond, the Gaussian weight is below 1e-347
KINK_RANGE = 40


def real_zeros(u, x=None, lo=-KINK_RANGE, hi=KINK_RANGE, digits=40, limit=MAX_KINKS) -> list:
    """Real zeros of ``u(x)`` in [lo, hi] where u changes sign: exact for polynomials, else a scan.

    Polynomial arguments (the usual case: ``g``, ``g - 1``, ``g**2 - 2``) give
    exact SymPy roots.  Other arguments are scanned (:func:`_scan_sign_changes`)
    and each bracket is refined with ``mpmath.findroot`` to ``digits`` digits;
    the roots come back as SymPy ``Float`` with that precision.  Zeros where u
    touches 0 without changing sign are not kinks of ``abs(u)``, ``sign(u)``
    or ``max``/``min`` and are not returned by the scan.  More than ``limit``
    zeros is an :class:`ICLError` (raised before any root is refined).
    """
    x = x if x is not None else g
    u = parse_expr(u, variables=(str(x),)) if isinstance(u, str) else sympy.S(u)
    if x not in u.free_symbols:
        return []
    try:
        poly = sympy.Poly(u, x)
        if all(c.is_rational for c in poly.all_coeffs()) or poly.degree() <= 2:
            if poly.degree() <= 2:
                roots = [r for r in sympy.roots(poly, multiple=True) if r.is_real]
            else:
                roots = sympy.real_roots(poly)
            return sorted(set(roots), key=lambda r: float(r))
    except (sympy.PolynomialError, sympy.polys.polyerrors.GeneratorsNeeded):
        pass
    except NotImplementedError:
        pass
    brackets = _scan_sign_changes(u, x, lo, hi, limit)
    fn = sympy.lambdify(x, u, modules=[_MP_SAFE, "mpmath"])
    roots = []
    with mpmath.workdps(digits + 10):
        for a, b in brackets:
            a, b = mpmath.mpf(a), mpmath.mpf(b)
            if a == b:
                roots.append(a)
                continue
            try:
                r = mpmath.findroot(fn, (a, b), solver="anderson")
                if not a <= r <= b:
                    raise ValueError("left the bracket")
            except ICLError:  # a user-facing error (ICLError is a ValueError) keeps its message
                raise
            except (ZeroDivisionError, ValueError):
                r = mpmath.findroot(fn, (a, b), solver="bisect")
            roots.append(r)
        return sorted({sympy.Float(mpmath.nstr(r, digits + 5), digits + 5) for r in roots}, key=float)


@memoize(maxsize=256)
def _scan_sign_changes(u, x, lo, hi, limit):
    """Brackets [a, b] each holding one sign change of u, found by a refined float64 scan.

    A grid of :data:`SCAN_POINTS` cells on [lo, hi]; a cell is settled when u
    changes sign across it and u' keeps its sign at both ends (one crossing),
    or when the Lipschitz test ``|u(a)| + |u(b)| > 2 max(|u'(a)|, |u'(b)|) h``
    excludes a zero.  Every other cell is split 16-fold, up to
    :data:`SCAN_LEVELS` times (cells of ~4e-8 on [-KINK_RANGE, KINK_RANGE] = [-40, 40]), so the grid follows
    the structure of u (a fast oscillation is resolved, not aliased).  Cells
    still open at the finest level keep their sign-change bracket if they have
    one; without a sign change they are tangential zeros (``1 - cos(g)``),
    which are not kinks.  More than ``limit`` brackets, or more than
    :data:`SCAN_MAX_CELLS` open cells, is refused with an :class:`ICLError`.
    """
    fnp = sympy.lambdify(x, u, modules=["numpy", "scipy"])
    dnp = sympy.lambdify(x, ae_diff(u, x), modules=["numpy", "scipy"])
    mnp = sympy.lambdify(x, rounding_magnitude(u), modules=["numpy", "scipy"])

    def ev(f, z):
        with np.errstate(all="ignore"):
            out = np.asarray(f(z), dtype=float)
        return np.broadcast_to(out, z.shape) if out.shape != z.shape else out

    a = np.linspace(lo, hi, SCAN_POINTS + 1)
    a, b = a[:-1], a[1:]
    brackets = []
    for level in range(SCAN_LEVELS + 1):
        ua, ub, da, db = ev(fnp, a), ev(fnp, b), ev(dnp, a), ev(dnp, b)
        h = b - a
        finite = np.isfinite(ua) & np.isfinite(ub)
        # a value within the rounding of its own evaluation is 0: float noise (1 - tanh(g^3)^4 is
        # 0 or +-1e-16 for |g| > 2) is not a sign change, and a run of such zeros is not a run of kinks
        za = np.abs(ua) <= ROUNDING_ULPS * np.finfo(float).eps * np.abs(ev(mnp, a))
        zb = np.abs(ub) <= ROUNDING_ULPS * np.finfo(float).eps * np.abs(ev(mnp, b))
        at_node = finite & za & ~zb  # a zero at a node, where u leaves 0 (one per zero or flat run)
        change = finite & ~za & ~zb & (np.sign(ua) * np.sign(ub) < 0)
        flat = finite & za & zb  # 0 to working precision at both ends: no sign change can be seen
        mono = np.isfinite(da) & np.isfinite(db) & (np.sign(da) * np.sign(db) > 0)
        lip = 2 * np.maximum(np.abs(da), np.abs(db)) * h
        excluded = finite & ~change & ~at_node & (np.abs(ua) + np.abs(ub) > lip)
        both_inf = ~finite & (np.sign(ua) == np.sign(ub)) & ~np.isnan(ua) & ~np.isnan(ub)
        settled = (change & mono) | excluded | both_inf | flat
        brackets.extend(zip(a[at_node], a[at_node]))
        done = change & mono & ~at_node
        brackets.extend(zip(a[done], b[done]))
        if len(brackets) > limit:
            raise ICLError(
                f"{u} changes sign more than {limit} times in [{lo}, {hi}] "
                f"(at least {len(brackets)} found); too many kinks to locate "
                f"(limit {limit}, see docs/limits.md)"
            )
        openc = ~settled & ~at_node
        if not openc.any():
            break
        if level == SCAN_LEVELS:
            last = openc & change
            brackets.extend(zip(a[last], b[last]))
            break
        n_open = int(openc.sum())
        if n_open * 16 > SCAN_MAX_CELLS:
            raise ICLError(
                f"{u} oscillates faster than the kink scan can resolve "
                f"({n_open} unresolved cells of width {float(h[0]):.2g} in [{lo}, {hi}]); "
                f"too many kinks to locate (see docs/limits.md)"
            )
        a0, h0 = a[openc], h[openc] / 16
        a = (a0[:, None] + h0[:, None] * np.arange(16)).ravel()
        b = a + np.repeat(h0, 16)
    if len(brackets) > limit:
        raise ICLError(
            f"{u} changes sign more than {limit} times in [{lo}, {hi}]; too many kinks "
            f"to locate (limit {limit}, see docs/limits.md)"
        )
    return tuple(sorted(brackets))


_KINKY = (sympy.Abs, sympy.sign, sympy.Heaviside, sympy.Max, sympy.Min, sympy.Piecewise)


class KinkError(Exception):
    """A kink function whose branch cannot be decided at the given point."""


def resolve_kinks(e, point):
    """Replace Abs, sign, Heaviside, Max, Min, Piecewise in e by the branch valid at g = point.

    ``point`` must not be a zero of any kink argument (it is an interior point
    of an interval between breakpoints).

    >>> resolve_kinks(parse_expr("abs(g - 1) + relu(g)"), -2)
    1 - g
    """
    if e.is_Atom or not e.has(*_KINKY):
        return e
    f = e.func
    if f is sympy.Piecewise:
        for ex, cond in e.args:
            c = cond.subs(g, point)
            if c == sympy.true:
                return resolve_kinks(ex, point)
            if c != sympy.false:
                raise KinkError("Piecewise condition")
        raise KinkError("Piecewise without a branch")
    args = [resolve_kinks(a, point) for a in e.args]

    point = sympy.S(point)

    def value(u):
        v = u.xreplace({g: point})
        return v if v.is_Rational else sympy.N(v, 30)  # exact where it can be (fast, no rounding)

    def sgn(u):
        v = value(u)
        if not v.is_real:
            raise KinkError("complex kink argument")
        if abs(v) < 1e-25:
            raise KinkError("kink argument vanishes on an interval")
        return 1 if v > 0 else -1

    if f is sympy.Abs:
        return sgn(args[0]) * args[0]
    if f is sympy.sign:
        return sympy.Integer(sgn(args[0]))
    if f is sympy.Heaviside:
        return sympy.Integer(1 if sgn(args[0]) > 0 else 0)
    if f in (sympy.Max, sympy.Min):
        vals = [value(a) for a in args]
        pick = max if f is sympy.Max else min
        return args[pick(range(len(args)), key=lambda i: vals[i])]
    return f(*args)


def ae_diff(u, x=None):
    """du/dx almost everywhere: the Dirac deltas of jumps (heaviside, sign) dropped.

    Used wherever a derivative is evaluated numerically (kink scan, phase rates,
    scale analysis): ``lambdify`` has no DiracDelta, and a delta sits on a
    measure-zero set that the split points already contain.

    >>> ae_diff(parse_expr("heaviside(sin(g)) + g**2"))
    2*g
    """
    x = x if x is not None else g
    d = sympy.diff(u, x)
    if d.has(sympy.DiracDelta):
        d = d.replace(lambda n: isinstance(n, sympy.DiracDelta), lambda n: sympy.S.Zero)
    return d


def _interior_points(bps):
    edges = [None, *bps, None]
    for lo, hi in zip(edges[:-1], edges[1:]):
        if lo is None and hi is None:
            yield None, None, sympy.Integer(0)
        elif lo is None:
            yield None, hi, hi - 1
        elif hi is None:
            yield lo, None, lo + 1
        else:
            yield lo, hi, (lo + hi) / 2


def _zeros_of_kink_argument(u, limit=MAX_KINKS) -> set:
    """Real zeros of u; a u with kinks of its own (abs(abs(g) - 1)) is resolved
    piece by piece, so that its zeros stay exact when every piece is polynomial."""
    if not u.has(*_KINKY):
        return set(real_zeros(u, limit=limit))
    inner = breakpoints_of(u)
    # piece by piece also when the inner kinks are numeric (Floats): heaviside(sin(g)) is a
    # constant 0 or 1 between the zeros of sin, and a scan of it would see no sign change
    pts = set(inner)
    for lo, hi, mid in _interior_points(inner):
        try:
            piece = resolve_kinks(u, mid)
        except KinkError:
            return set(real_zeros(u, limit=limit))
        # each piece is scanned only on its own interval: (1 - g)**0.7 is not real beyond g = 1
        a = -KINK_RANGE if lo is None else max(-KINK_RANGE, min(KINK_RANGE, float(lo)))
        b = KINK_RANGE if hi is None else max(-KINK_RANGE, min(KINK_RANGE, float(hi)))
        if a >= b:
            continue
        for r in real_zeros(piece, lo=a, hi=b, limit=limit):
            if (lo is None or r > lo) and (hi is None or r < hi):
                pts.add(r)
    return pts


def breakpoints_of(e) -> tuple:
    """Sorted real points where ``e`` (in ``g``) has kinks or jumps.

    >>> breakpoints_of(parse_expr("relu(g - 1) + abs(g) + sign(g**2 - 2)"))
    (-sqrt(2), 0, 1, sqrt(2))
    >>> breakpoints_of(parse_expr("abs(abs(g) - 1)"))
    (-1, 0, 1)
    """
    pts = set()
    args = _kink_arguments(e)
    if len(args) > MAX_KINK_ARGUMENTS:
        raise ICLError(
            f"expression has {len(args)} kink arguments (abs/sign/heaviside calls and "
            f"pairs of max/min arguments; limit {MAX_KINK_ARGUMENTS}, see docs/limits.md)"
        )
    args = list(dict.fromkeys(args))
    # count first (a cheap float64 scan), refine afterwards: a refusal costs no root finding
    numeric = [u for u in args if not u.has(*_KINKY) and not u.is_polynomial(g)]
    total = sum(len(_scan_sign_changes(u, g, -KINK_RANGE, KINK_RANGE, MAX_KINKS)) for u in numeric)
    if total > MAX_KINKS:
        raise ICLError(
            f"about {total} kinks/jumps in [-{KINK_RANGE}, {KINK_RANGE}] (from {len(numeric)} "
            f"non-polynomial kink arguments); limit {MAX_KINKS}, see docs/limits.md"
        )
    for u in args:
        pts |= _zeros_of_kink_argument(u, MAX_KINKS - len(pts))
        if len(pts) > MAX_KINKS:
            raise ICLError(f"more than {MAX_KINKS} kinks/jumps (limit, see docs/limits.md)")
    return tuple(sorted(pts, key=lambda r: float(r)))


@dataclass(frozen=True)
class Teacher:
    """A teacher function f(g) in the sense of Eq. (1)-(2), p. 2.

    Attributes
    ----------
    expr : sympy.Expr or None
        f as a SymPy expression in :data:`g` (None for a Python callable).
    label : str
        Human-readable name (the input text, or the callable's name).
    breakpoints : tuple
        Sorted real g where f has kinks or jumps (exact SymPy numbers for
        SymPy teachers; whatever the user gave for callables).
    """

    expr: Any
    label: str
    breakpoints: tuple = ()
    _numpy: Callable = field(default=None, repr=False, compare=False)
    _mp: Callable = field(default=None, repr=False, compare=False)

    def numpy(self, z):
        """f evaluated elementwise on a float64 array of any shape."""
        z = np.asarray(z, dtype=float)
        out = np.asarray(self._numpy(z), dtype=float)
        if out.shape != z.shape:
            out = np.broadcast_to(out, z.shape).copy()
        return out

    def mp(self, z):
        """f evaluated at an mpmath number (at the caller's working precision)."""
        return self._mp(z)


# mpmath evaluation guards: exp(exp(exp(g))) or sin(exp(g**2)) at a far quadrature node
# would ask mpmath to reduce an argument with astronomically many digits (a hang).
_HUGE = mpmath.mpf("1e5000")


class HugeArgument(ValidityError):
    """sin/cos of an argument beyond 1e5000: not computable to any useful precision."""


def _safe_exp(x):
    if isinstance(x, mpmath.mpf) and abs(x) > _HUGE:
        return mpmath.mpf(0) if x < 0 else mpmath.inf  # far beyond any working precision
    return mpmath.exp(x)


def _safe_trig(name, fn):
    def wrapped(x):
        if isinstance(x, mpmath.mpf) and (mpmath.isinf(x) or abs(x) > _HUGE):
            raise HugeArgument(
                f"cannot evaluate {name} of a number beyond 1e5000 (about {mpmath.nstr(x, 3)}) to any precision"
            )
        return fn(x)

    return wrapped


_ERFC_SATURATED = mpmath.mpf("1e100")


def _safe_tanh(x):
    # beyond |x| = 2 prec (in bits), 1 - |tanh x| = 2 e^(-2|x|)/(1 + e^(-2|x|)) is below 2^(-4 prec): the
    # rounded value is +-1 exactly; mpmath itself builds 2^|x|-sized integers there (MemoryError for
    # tanh(exp(g)) at a far node, "too many digits" for tanh(exp(exp(g))))
    if isinstance(x, mpmath.mpf) and abs(x) > 2 * mpmath.mp.prec:
        return mpmath.mpf(1) if x > 0 else mpmath.mpf(-1)
    return mpmath.tanh(x)


def _safe_erfc(x):
    # erfc(x) < e^(-x^2) is below 10^(-1e200) beyond |x| = 1e100: 0 (or 2 - that) to any working
    # precision; mpmath's series check converts such an x to a float and overflows
    if isinstance(x, mpmath.mpf) and abs(x) > _ERFC_SATURATED:
        return mpmath.mpf(0) if x > 0 else mpmath.mpf(2)
    return mpmath.erfc(x)


def _safe_erf(x):
    if isinstance(x, mpmath.mpf) and abs(x) > _ERFC_SATURATED:
        return mpmath.mpf(1) if x > 0 else mpmath.mpf(-1)  # 1 - erf(x) = erfc(x) below 10^(-1e200)
    return mpmath.erf(x)


_MP_SAFE = {
    "exp": _safe_exp,
    "sin": _safe_trig("sin", mpmath.sin),
    "cos": _safe_trig("cos", mpmath.cos),
    "tanh": _safe_tanh,
    "erfc": _safe_erfc,
    "erf": _safe_erf,
}


def ae_simplify(e):
    """Replace sign(u)**n and heaviside(u)**n (n a positive integer) by what they equal almost everywhere.

    sign(u)**2 = 1 and heaviside(u)**n = heaviside(u) except on the zero set of
    u, which has measure zero for the non-constant analytic arguments of the
    input language (arguments containing sign, heaviside, max or min, which can
    vanish on an interval, are left alone); Gaussian expectations are unchanged, and no kinks need to
    be located (``E[sign(sin(1000*g))**2] = 1`` exactly, although sin(1000 g)
    has more zeros than the kink scan accepts).

    >>> ae_simplify(parse_expr("sign(sin(1000*g))**2 + heaviside(g)**3"))
    Heaviside(g) + 1
    """
    # u must vanish only on a null set: an argument built with sign/heaviside/max/min can be 0 on
    # a whole interval (sign(heaviside(sin(g)))**2 is the indicator of sin(g) > 0, not 1)
    flat = (sympy.sign, sympy.Heaviside, sympy.Max, sympy.Min, sympy.Piecewise)

    def is_target(node):
        return (
            node.is_Pow
            and node.exp.is_Integer
            and node.exp > 0
            and isinstance(node.base, (sympy.sign, sympy.Heaviside))
            and node.base.args[0].has(g)
            and not node.base.args[0].has(*flat)
        )

    def repl(node):
        if isinstance(node.base, sympy.Heaviside) or node.exp % 2 == 1:
            return node.base
        return sympy.S.One

    return e.replace(is_target, repl) if e.has(sympy.sign, sympy.Heaviside) else e


def _from_sympy(e, label: str) -> Teacher:
    if isinstance(e, str):  # never sympify a raw string
        e = parse_expr(e)
    e = sympy.S(e)
    if not isinstance(e, sympy.Expr):
        raise ICLError(f"teacher must be an expression in g, got {type(e).__name__}")
    # accept a plain Symbol('g') without assumptions
    subs = {s: g for s in e.free_symbols if s.name == "g" and s != g}
    if subs:
        e = e.xreplace(subs)
    floats = e.atoms(sympy.Float)
    if floats:  # as in the input language, decimals are read exactly: Float(0.1) -> 1/10
        e = e.xreplace({f: sympy.Rational(str(f)) for f in floats})
    check_cost(e)
    e = ae_simplify(e)
    extra = sorted(s.name for s in e.free_symbols if s != g)
    if extra:
        raise ICLError(f"teacher may only depend on g; it also contains {', '.join(extra)}")
    if e.has(sympy.I) or e.is_real is False:
        raise ValidityError(f"f = {e} is not real-valued")
    if e.has(sympy.zoo, sympy.oo, -sympy.oo, sympy.nan):
        raise ValidityError(f"f = {e} is not finite")
    fnp = sympy.lambdify(g, e, modules=["numpy", "scipy"])
    # b**u with a variable exponent goes through the guarded exp: (1/2)**(2**g) at a far
    # quadrature node would otherwise build a number with ~2**g bits (MemoryError)
    e_mp = e.replace(
        lambda n: n.is_Pow and not n.base.has(g) and n.exp.has(g),
        lambda n: sympy.exp(n.exp * sympy.log(n.base), evaluate=False),
    )
    fmp = sympy.lambdify(g, e_mp, modules=[_MP_SAFE, "mpmath"])
    t = Teacher(expr=e, label=label, breakpoints=breakpoints_of(e), _numpy=fnp, _mp=fmp)
    _check_real_valued(t)
    return t


def _check_real_valued(t: Teacher) -> None:
    """Numerical guard: f must be real at a spread of points (log(g), sqrt(g) are not)."""
    if t.expr is not None and t.expr.is_real:
        return
    pts = ["-7.31", "-3.17", "-1.93", "-0.71", "-0.137", "0.113", "0.59", "1.41", "2.87", "6.53"]
    with mpmath.workdps(30):
        for p in pts:
            try:
                v = t.mp(mpmath.mpf(p))
            except ICLError:  # a user-facing error (ICLError is a ValueError) keeps its message
                raise
            except (ZeroDivisionError, ValueError, TypeError):
                continue
            if isinstance(v, mpmath.mpc) and abs(v.imag) > mpmath.mpf(10) ** -20 * (1 + abs(v.real)):
                raise ValidityError(f"f = {t.label} is complex-valued (at g = {p}: {mpmath.nstr(v, 6)})")


#: float64 paths (simulation, float quadrature) need |f| below this on [-8, 8] (squares and sums stay finite)
FLOAT64_MAX_F = 1e150


def check_float64(t: "Teacher") -> None:
    """ICLError unless f is finite and below :data:`FLOAT64_MAX_F` in float64 on a grid of [-8, 8].

    The float64 paths (the simulator, :func:`icl_symbolic.engine.gauss.float_expect`)
    square and sum f; ``simulate 1e999`` overflowed with a traceback.

    >>> check_float64(teacher("1e999"))
    Traceback (most recent call last):
    ...
    icl_symbolic.core.errors.ICLError: f = 1e999 is not representable in float64 arithmetic (|f| = inf at g = -7.99877; limit 1e+150)
    """
    z = np.linspace(-8.0, 8.0, 1601) + 0.00123  # off 0 and the rationals: kinks and poles are null sets
    with np.errstate(all="ignore"):
        try:
            v = np.abs(t.numpy(z))
        except ICLError:  # a user-facing error (ICLError is a ValueError) keeps its message
            raise
        except (OverflowError, ValueError, TypeError, ZeroDivisionError):
            v = np.full(z.shape, np.inf)
    bad = ~(v < FLOAT64_MAX_F)
    if bad.any():
        i = int(np.argmax(bad))
        raise ICLError(
            f"f = {t.label} is not representable in float64 arithmetic "
            f"(|f| = {v[i]:.3g} at g = {z[i]:g}; limit {FLOAT64_MAX_F:g})"
        )


@memoize(maxsize=256)
def _text_teacher(text: str, label: str) -> Teacher:
    """The Teacher of an input text, parsed and built once per process (a Teacher is immutable)."""
    return _from_sympy(parse_expr(text), label)


@memoize(maxsize=256)
def _expr_teacher(e, label: str) -> Teacher:
    """The Teacher of a SymPy expression, built once per process (keys compare structurally: 1/2 and
    0.5 are different keys, as they are different expressions)."""
    return _from_sympy(e, label)


def teacher(f, label: str | None = None, breakpoints=None) -> Teacher:
    """Build a :class:`Teacher` from a string, SymPy expression, Teacher or callable.

    Parameters
    ----------
    f : str | sympy.Expr | Teacher | callable
        Strings go through :func:`parse_expr` (never evaluated as Python).
        A Python callable gives a numeric-only teacher (``expr`` is None); it
        should accept float64 arrays (otherwise ``np.vectorize`` is used) and
        mpmath numbers for the high-precision path.
    label : str, optional
        Display name.
    breakpoints : iterable of float, optional
        Kinks/jumps of a callable teacher (SymPy teachers find their own).

    Examples
    --------
    >>> t = teacher("relu(g)")
    >>> t.breakpoints
    (0,)
    >>> t.numpy([-1.0, 2.0]).tolist()
    [0.0, 2.0]
    >>> teacher("log(g)")
    Traceback (most recent call last):
    ...
    icl_symbolic.core.errors.ValidityError: f = log(g) is complex-valued (at g = -7.31: (1.98924 + 3.14159j))
    """
    if isinstance(f, Teacher):
        return f
    if isinstance(f, str):
        return _text_teacher(f, label or f.strip())
    if isinstance(f, sympy.Basic):
        return _expr_teacher(f, label or str(f))
    if callable(f):
        name = label or getattr(f, "__name__", "callable")

        def fnp(z, _f=f):
            try:
                out = np.asarray(_f(z), dtype=float)
                if out.shape == np.shape(z):
                    return out
            except Exception:  # not vectorised: fall back
                pass
            return np.vectorize(lambda x: float(_f(float(x))), otypes=[float])(z)

        def fmp(z, _f=f):
            return _f(z)

        bps = tuple(sorted(breakpoints)) if breakpoints is not None else ()
        return Teacher(expr=None, label=name, breakpoints=bps, _numpy=fnp, _mp=fmp)
    raise ICLError(f"cannot make a teacher from {type(f).__name__}")
