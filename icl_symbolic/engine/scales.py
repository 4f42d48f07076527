r"""Scale analysis of an integrand: where its narrow features are, read from the expression tree.

Paper: every quadrature behind Eq. (2) (a_m), Eq. (8) (rho_f, rho_nonlinear)
and the Lemma 1 moments (Appendix B) integrates a teacher f against the
Gaussian weight; this module decides where the quadrature panels must break
so that a narrow feature of f cannot hide between the nodes.

Tanh-sinh quadrature and its error estimate only see the integrand at their
nodes.  ``tanh(g)*exp(-1e6*(g-2.1)**2)`` (a bump of width 1e-3), ``tanh(1e8*(g
- 0.3))`` (a step of width 1e-8) or ``1/(1 + 1e12*(g-0.5)**2)`` (a Lorentzian of
width 1e-6) fall between the nodes of a unit panel: both precision passes agree
on a wrong number and its error estimate is tiny.  No sampling test can exclude
that, so the features are located from the expression itself.

Every sub-expression is classified by the way it can make the integrand vary
fast (``u`` is its inner argument):

* **steps** ``tanh(u)``, ``erf(u)``, ``erfc(u)``, ``atan(u)`` and the logistic
  forms ``1/(c + d exp(v))``, ``log(c + d exp(v))`` (sigmoid, silu, softplus,
  with ``u = v + log(d/c)``): they change by O(1) where ``|u|`` is below the
  saturation level, i.e. at the zeros of u and at critical points of u with
  a small value;
* **bumps** ``exp(u)``: an O(1) relative change when u changes by 1, i.e. at
  the critical points of u (and of ``u - z^2/(2 omega)``, where the weighted
  mass of a steep exponential sits);
* **poles and roots** ``b**p`` (p not a non-negative integer) and ``log(b)``:
  an O(1) relative change when b changes by its own size, i.e. at the critical
  points of b (``1/(1e-12 + (g - 1/4)**2)``: b = 1e-12 at g = 1/4) and at its
  zeros (integrable singularities, treated by :mod:`icl_symbolic.engine.gauss`);
* **oscillations** ``sin(u)``, ``cos(u)``: the phase rate |u'|, split by
  :func:`icl_symbolic.engine.gauss.oscillation_splits`;
* kinks (``abs``, ``sign``, ``heaviside``, ``max``, ``min``): split at their
  zeros by :mod:`icl_symbolic.engine.expr`; their arguments are analysed like any
  other sub-expression.

When u (or b) is a polynomial, or piecewise polynomial between its own kinks,
the feature points are exact (real zeros of polynomials), and the width of a
feature at a point x0 is the distance at which the Taylor expansion of u moves
by the feature's own scale s (1 for steps and bumps, |b(x0)| for poles):

.. math::  w = \min_{k \ge k_0} \bigl(k!\, s / |u^{(k)}(x_0)|\bigr)^{1/k}.

The quadrature then breaks at ``x0`` and at ``x0 +- w 8^j`` up to unit scale
(a graded mesh: every panel is at most 8 times longer than its distance to
the feature, so the nodes resolve it).

When u is not piecewise polynomial, a rigorous bound of the feature's rate
(|u'| for steps, bumps and oscillations, |p b'/b| for poles) is computed on
cells of the effective range with interval arithmetic (``mpmath.iv``, with
monotone enclosures for tanh), bisecting until every cell holds at most
:data:`RATE_PER_PANEL` scale lengths; each cell becomes a panel.  A cell where
the node is saturated (a step with |u| above ``(digits + 20) ln 10``, an
exponential with u below minus that, again by interval arithmetic) needs no
resolution there: the node is constant to 10^-(digits + 20) relative to the
factors it multiplies.  If that
needs more than :data:`MAX_RATE_CELLS` cells, or a sub-expression has no rule
here (an unknown function, a derivative with a Dirac delta), the analysis
does not cover the integrand and the quadrature's value is reported as
uncertified.

Limitation, stated plainly: the analysis covers [-R, R], R the effective range
of the Gaussian weight at the requested digits; beyond it the weight is below
10^-(digits + 20) and the semi-infinite tail panels are trusted to the
two-precision check.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import factorial

import mpmath
import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.expr import KinkError, breakpoints_of, g, real_zeros, resolve_kinks

__all__ = ["GRADING", "MAX_RATE_CELLS", "RATE_PER_PANEL", "ScaleAnalysis", "analyze", "taylor_width"]

#: successive split points around a feature are this factor further out (graded mesh)
GRADING = 8
#: a panel from the rate analysis holds at most this many scale lengths of any feature
RATE_PER_PANEL = 4
#: the interval rate analysis gives up (uncertified) beyond this many cells
MAX_RATE_CELLS = 500
#: polynomial arguments up to this degree get exact feature points (real roots of u and u')
MAX_EXACT_DEGREE = 24
#: features narrower than this (in units of the standard deviation) are not graded further
MIN_WIDTH = mpmath.mpf(10) ** -300

_STEPS = (sympy.tanh, sympy.erf, sympy.erfc, sympy.atan)
_KINKY = (sympy.Abs, sympy.sign, sympy.Heaviside, sympy.Max, sympy.Min, sympy.Piecewise)


@dataclass(frozen=True)
class ScaleAnalysis:
    """Split points for the quadrature, and whether the analysis covers the whole integrand.

    ``points``: mpmath numbers (z-space); ``covered``: False when some
    sub-expression's features could not be bounded, with the reason in ``reason``.
    """

    points: tuple
    covered: bool
    reason: str = ""


class _NotCovered(Exception):
    pass


def taylor_width(poly: sympy.Poly, x0, scale, k0: int = 1):
    """Distance from ``x0`` at which the Taylor terms of ``poly`` of order >= k0 reach ``scale``.

    ``min_k (k! scale / |p^(k)(x0)|)^(1/k)``; ``mpmath.inf`` when every such
    derivative vanishes (a constant or a polynomial of degree < k0).

    >>> from icl_symbolic.engine.expr import g
    >>> float(taylor_width(sympy.Poly(10**8 * (g - 3), g), 3, 1))
    1e-08
    >>> float(taylor_width(sympy.Poly(-10**6 * (g - 2) ** 2, g), 2, 1, k0=2))
    0.001
    """
    best = mpmath.inf
    p = poly
    for k in range(1, poly.degree() + 1):
        p = p.diff(g)
        if k < k0:
            continue
        dk = abs(_at(p, x0))
        if dk == 0:
            continue
        best = min(best, (factorial(k) * scale / dk) ** (mpmath.mpf(1) / k))
    return best


def _at(p: sympy.Poly, x0):
    """p(x0) as an mpmath number (40 digits)."""
    x = sympy.Float(mpmath.nstr(mpmath.mpf(x0), 45), 45) if not isinstance(x0, sympy.Basic) else x0
    return mpmath.mpf(str(sympy.N(p.eval(x), 40)))


def _graded(x0, w, unit) -> list:
    """x0 and x0 +- w GRADING^j while below ``unit``."""
    out = [x0]
    if not w < unit:
        return out
    w = max(w, MIN_WIDTH * unit)
    while w < unit:
        out += [x0 - w, x0 + w]
        w *= GRADING
    return out


def _pieces(u, lo=-mpmath.inf, hi=mpmath.inf):
    """The polynomial branches of u between its own kinks as ``(poly, lo, hi)``, or None when u
    is not piecewise polynomial.  Feature points of a branch count only on its own interval."""
    if not u.has(*_KINKY):
        try:
            p = sympy.Poly(u, g)
        except sympy.PolynomialError:
            return None
        if p.degree() > MAX_EXACT_DEGREE:  # exact real roots get slow: interval rates instead
            return None
        return [(p, lo, hi)] if all(c.is_real for c in p.all_coeffs()) else None
    try:
        bps = breakpoints_of(u)
    except ICLError:
        return None
    edges = [-sympy.oo, *bps, sympy.oo]
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        mid = 0 if len(edges) == 2 else (b - 1 if a == -sympy.oo else (a + 1 if b == sympy.oo else (a + b) / 2))
        try:
            branch = resolve_kinks(u, mid)
        except KinkError:
            return None
        a_mp = -mpmath.inf if a == -sympy.oo else mpmath.mpf(str(sympy.N(a, 40)))
        b_mp = mpmath.inf if b == sympy.oo else mpmath.mpf(str(sympy.N(b, 40)))
        sub = _pieces(branch, max(lo, a_mp), min(hi, b_mp))
        if sub is None:
            return None
        out += [piece for piece in sub if piece[1] <= piece[2]]
    return out


def _exact_points(p: sympy.Poly, which: str, R, lo=-mpmath.inf, hi=mpmath.inf):
    """Real zeros of p (``which='zeros'``) or of p' (``'critical'``) in [-R, R] and in [lo, hi],
    as mpmath numbers."""
    q = p if which == "zeros" else p.diff(g)
    if q.degree() < 1:
        return []
    a, b = max(-mpmath.mpf(R), lo), min(mpmath.mpf(R), hi)
    if a > b:
        return []
    out = []
    for r in real_zeros(q.as_expr(), lo=float(a) - 1e-9, hi=float(b) + 1e-9):
        x = mpmath.mpf(str(sympy.N(r, 40)))
        if a <= x <= b:
            out.append(x)
    return out


def _logistic(b):
    """``(v, shift)`` when b = c + d exp(v) with c, d constants of one sign (so 1/b, log b are steps), else None."""
    terms = sympy.Add.make_args(sympy.expand(b, deep=False))
    const = [t for t in terms if not t.has(g)]
    rest = [t for t in terms if t.has(g)]
    if len(rest) != 1 or not const:
        return None
    c = sympy.Add(*const)
    coef, e = rest[0].as_independent(g, as_Add=False)
    if not isinstance(e, sympy.exp) or not (c.is_real and coef.is_real) or c * coef <= 0:
        return None
    return e.args[0], sympy.log(coef / c)


def _saturation(digits: int):
    """|u| beyond which a step is constant to 10^-(digits + 20): erf and tanh saturate by then."""
    return mpmath.mpf(digits + 20) * mpmath.log(10) + 5


def _poly_features(kind, pieces, unit, R, digits, omega):
    pts = []
    sat = _saturation(digits)
    for p, lo, hi in pieces:
        if kind == "step":
            for x0 in _exact_points(p, "zeros", R, lo, hi):
                pts += _graded(x0, taylor_width(p, x0, 1), unit)
            for x0 in _exact_points(p, "critical", R, lo, hi):
                if abs(_at(p, x0)) <= sat:
                    pts += _graded(x0, taylor_width(p, x0, 1, k0=2), unit)
        elif kind == "bump":
            for x0 in _exact_points(p, "critical", R, lo, hi):
                pts += _graded(x0, taylor_width(p, x0, 1, k0=2), unit)
            # where the weighted mass of a steep exponential sits: critical points of u - z^2/(2 omega)
            q = sympy.Poly(p.as_expr() - g**2 / (2 * omega), g)
            for x0 in _exact_points(q, "critical", 64 * unit, lo, hi):
                pts += _graded(x0, taylor_width(q, x0, 1, k0=2), unit)
        elif kind == "pole":
            for x0 in _exact_points(p, "zeros", R, lo, hi):
                pts.append(x0)  # an integrable singularity: a panel end (gauss adds its mass bound)
            for x0 in _exact_points(p, "critical", R, lo, hi):
                bval = abs(_at(p, x0))
                if bval > 0:
                    pts += _graded(x0, taylor_width(p, x0, bval, k0=2), unit)
        # "osc" with a polynomial phase: gauss.oscillation_splits integrates |u'| exactly enough
    return pts


# ---------------------------------------------------------------------------
# interval enclosures (rigorous rate bounds for non-polynomial arguments)
# ---------------------------------------------------------------------------

_IV = mpmath.iv


def _iv_monotone(fn, x, increasing: bool = True):
    """Enclosure of a monotone function on the interval x: its values at the endpoints, evaluated
    20 bits above the interval precision and widened outward by one unit of that precision.

    mpmath's own interval erf/erfc go through a hypergeometric series that the interval context
    cannot run (``'MPIntervalContext' object has no attribute 'nint_distance'``, mpmath 1.3), so
    every monotone function here takes this route instead."""
    with mpmath.workprec(_IV.prec + 20):
        lo, hi = fn(mpmath.mpf(x.a)), fn(mpmath.mpf(x.b))
        if not increasing:
            lo, hi = hi, lo
        eps = mpmath.mpf(2) ** -_IV.prec
        return _IV.mpf([lo - abs(lo) * eps, hi + abs(hi) * eps])


def _iv_tanh(x):
    return _iv_monotone(mpmath.tanh, x)


def _iv_atan(x):
    return _iv_monotone(mpmath.atan, x)


def _iv_abs(x):
    lo, hi = x.a, x.b
    if lo >= 0:
        return x
    if hi <= 0:
        return -x
    return _IV.mpf([0, max(-lo, hi)])


def _iv_sign(x):
    lo = -1 if x.a < 0 else (0 if x.a == 0 else 1)
    hi = 1 if x.b > 0 else (0 if x.b == 0 else -1)
    return _IV.mpf([lo, hi])


def _iv_heaviside(x):
    lo = 0 if x.a <= 0 else 1
    hi = 1 if x.b >= 0 else 0
    return _IV.mpf([lo, hi])


def _hull(*ivs):
    return _IV.mpf([min(v.a for v in ivs), max(v.b for v in ivs)])


def _const(v):
    v = mpmath.mpf(str(sympy.N(v, 40)))
    return _IV.mpf([v, v])


def _pair(e, x, memo):
    """Enclosures ``(e(g), e'(g))`` for g in the interval x: forward-mode differentiation in
    interval arithmetic, one pass over the tree (a nested tanh^64(g) costs 64 steps, not a
    derivative expression of exponential size).  ``_NotCovered`` when no rule applies."""
    if e in memo:
        return memo[e]
    zero = _IV.mpf([0, 0])
    if e == g:
        out = (x, _IV.mpf([1, 1]))
    elif not e.has(g):
        out = (_const(e), zero)
    elif e.is_Add:
        parts = [_pair(a, x, memo) for a in e.args]
        v, d = parts[0]
        for pv, pd in parts[1:]:
            v, d = v + pv, d + pd
        out = (v, d)
    elif e.is_Mul:
        parts = [_pair(a, x, memo) for a in e.args]
        v, d = parts[0]
        for pv, pd in parts[1:]:
            v, d = v * pv, v * pd + d * pv
        out = (v, d)
    elif e.is_Pow:
        out = _pair_pow(e, x, memo)
    else:
        out = _pair_function(e, x, memo)
    memo[e] = out
    return out


def _pair_pow(e, x, memo):
    ex = e.exp
    if not e.base.has(g):  # c**u = exp(u log c), c > 0
        if not e.base.is_positive:
            raise _NotCovered("a variable exponent")
        u, du = _pair(ex, x, memo)
        lc = _IV.log(_const(e.base))
        v = _IV.exp(u * lc)
        return v, v * lc * du
    if ex.has(g):
        raise _NotCovered("a variable exponent")
    b, db = _pair(e.base, x, memo)
    if ex.is_Integer and ex >= 0:
        n = int(ex)
        return b**n, (_const(n) * b ** (n - 1) * db) if n >= 1 else _IV.mpf([0, 0])
    if b.a <= 0 <= b.b or (not ex.is_Integer and b.a <= 0):
        raise _NotCovered("a negative or fractional power of an interval reaching 0")
    if ex.is_Integer:
        v = 1 / (b ** int(-ex))
    else:
        v = _IV.exp(_const(ex) * _IV.log(b))
    return v, _const(ex) * v / b * db


def _pair_function(e, x, memo):
    f = e.func
    if f in (sympy.Max, sympy.Min):
        parts = [_pair(a, x, memo) for a in e.args]
        pick = max if f is sympy.Max else min
        v = _IV.mpf([pick(p[0].a for p in parts), pick(p[0].b for p in parts)])
        return v, _hull(*(p[1] for p in parts))  # any argument may be the active one
    u, du = _pair(e.args[0], x, memo)
    if f is sympy.exp:
        v = _IV.exp(u)
        return v, v * du
    if f is sympy.log:
        if u.a <= 0:
            raise _NotCovered("log of an interval reaching 0")
        return _IV.log(u), du / u
    if f is sympy.sin:
        return _IV.sin(u), _IV.cos(u) * du
    if f is sympy.cos:
        return _IV.cos(u), -_IV.sin(u) * du
    if f is sympy.tanh:
        t = _iv_tanh(u)
        return t, (1 - t**2) * du
    if f in (sympy.erf, sympy.erfc):
        dv = _const(2 / sympy.sqrt(sympy.pi)) * _IV.exp(-(u**2)) * du
        return (_iv_monotone(mpmath.erf, u), dv) if f is sympy.erf else (_iv_monotone(mpmath.erfc, u, False), -dv)
    if f is sympy.atan:
        return _iv_atan(u), du / (1 + u**2)
    if f is sympy.Abs:
        return _iv_abs(u), _iv_sign(u) * du
    if f is sympy.sign:
        return _iv_sign(u), _IV.mpf([0, 0])  # almost everywhere
    if f is sympy.Heaviside:
        return _iv_heaviside(u), _IV.mpf([0, 0])
    raise _NotCovered(f"no interval rule for {f.__name__}")


def _saturated(kind, u_iv, sat) -> bool:
    """True when the node is constant to e^-sat on the cell: a step with |u| >= sat, an
    exponential with u <= -sat (u_iv: the enclosure of its argument there)."""
    if kind == "bump":
        return u_iv.b <= -sat
    if kind == "step":
        return u_iv.a >= sat or u_iv.b <= -sat
    return False


def _rate_bound(kind, u_iv, du_iv):
    """sup of the node's feature rate on the cell: |u'| (steps, bumps, oscillations), |u'/u| (poles)."""
    if kind == "pole":
        if u_iv.a <= 0 <= u_iv.b:
            return mpmath.inf
        return _iv_abs(du_iv / u_iv).b
    return _iv_abs(du_iv).b


def _shields(expr) -> dict:
    """For every (kind, argument) node of :func:`_nodes`, one frozenset per occurrence in ``expr``: the
    step and bump nodes that enclose that occurrence.  Where one of them is saturated (constant to
    e^-sat whatever its argument does), that occurrence cannot shape the integrand."""
    out: dict = {}

    def key_of(node):
        try:
            found = _nodes(node)
        except _NotCovered:
            return None
        return found[0] if found and not node.is_Add and not node.is_Mul else None

    def walk(node, above):
        if not node.has(g) or node.is_Atom:
            return
        k = None if node.is_Add or node.is_Mul else key_of(node)
        if k is not None and _nodes(node) and _nodes(node)[0] == k:
            out.setdefault(k, []).append(frozenset(above))
            if k[0] in ("step", "bump"):
                above = above | {k}
        for arg in node.args:
            walk(arg, above)

    walk(expr, frozenset())
    return out


def _rate_panels(rates, R, digits, shields=None):
    """Cells of [-R, R] on each of which every node is saturated or sup rate * width <= RATE_PER_PANEL.

    ``rates``: (kind, argument) pairs; bounds by interval arithmetic
    (:func:`_pair`), bisecting where they are too large.  ``shields`` (:func:`_shields`): a node
    whose every occurrence sits inside a step or bump saturated on the cell is skipped there
    (``exp(-exp(exp(g)))``: where the outer bump is below e^-sat, the fast inner exp(exp(g)) does
    not matter).
    """
    shields = shields or {}
    R = mpmath.mpf(R)
    sat = _saturation(digits)
    n0 = max(2, int(mpmath.ceil(2 * R)))
    stack = [(-R + 2 * R * i / n0, -R + 2 * R * (i + 1) / n0) for i in range(n0 - 1, -1, -1)]
    cells = []
    with mpmath.workdps(30):
        _IV.dps = 30
        while stack:
            a, b = stack.pop()
            ok = True
            memo = {}
            x = _IV.mpf([a, b])
            saturated = set()
            for key in {k for occ in shields.values() for above in occ for k in above}:
                try:
                    if _saturated(key[0], _pair(key[1], x, memo)[0], sat):
                        saturated.add(key)
                except (_NotCovered, ZeroDivisionError, ValueError, OverflowError):
                    pass
            for kind, u in rates:
                occ = shields.get((kind, u))
                if occ and all(above & saturated for above in occ):
                    continue
                try:
                    u_iv, du_iv = _pair(u, x, memo)
                    if _saturated(kind, u_iv, sat):
                        continue
                    bound = _rate_bound(kind, u_iv, du_iv)
                except ICLError:  # a user-facing error (ICLError is a ValueError) keeps its message
                    raise
                except (_NotCovered, ZeroDivisionError, ValueError, OverflowError):
                    ok = False
                    break
                if not (bound * (b - a) <= RATE_PER_PANEL):
                    ok = False
                    break
            if ok:
                cells.append(a)
            else:
                if b - a < mpmath.mpf(10) ** -15 or len(cells) + len(stack) > MAX_RATE_CELLS:
                    raise _NotCovered("a feature steeper than the interval rate analysis can bound")
                m = (a + b) / 2
                stack += [(m, b), (a, m)]
    return cells[1:]


def _nodes(expr):
    """(kind, argument) for every sub-expression that can make the integrand vary fast."""
    out = []
    for node in sympy.preorder_traversal(expr):
        if not node.has(g) or node.is_Atom or node.is_Add or node.is_Mul:
            continue
        if node.is_Pow:
            if node.exp.is_Integer and node.exp >= 0:
                continue
            if not node.base.has(g):
                out.append(("bump", node.exp * sympy.log(node.base)))
                continue
            lg = _logistic(node.base)
            out.append(("step", lg[0] + lg[1]) if lg is not None else ("pole", node.base))
            continue
        f = node.func
        if f is sympy.exp:
            out.append(("bump", node.args[0]))
        elif f is sympy.log:
            lg = _logistic(node.args[0])
            out.append(("step", lg[0] + lg[1]) if lg is not None else ("pole", node.args[0]))
        elif f in _STEPS:
            out.append(("step", node.args[0]))
        elif f in (sympy.sin, sympy.cos):
            out.append(("osc", node.args[0]))
        elif f in _KINKY:
            continue
        else:
            raise _NotCovered(f"no scale rule for {f.__name__}")
    return list(dict.fromkeys(out))


def analyze(expr, R, digits: int = 30, omega=1) -> ScaleAnalysis:
    """Split points that put the narrow features of ``expr`` (in z, z ~ N(0, omega)) at panel ends.

    ``R``: the effective range (|z| beyond it carries weight below
    10^-(digits + 20)).  ``covered`` is False (with ``reason``) when some
    sub-expression's features could not be located or bounded.

    >>> from icl_symbolic.engine.expr import parse_expr
    >>> a = analyze(parse_expr("tanh(1e8*(g - 0.3))"), 12)
    >>> nearest = min(abs(p - mpmath.mpf("0.3")) for p in a.points if abs(p - mpmath.mpf("0.3")) > 1e-12)
    >>> a.covered, round(float(nearest) * 1e8, 6)      # the first graded break sits one width away
    (True, 1.0)
    >>> analyze(parse_expr("tanh(g)"), 12).points         # a unit-width step: one break at its centre
    (mpf('0.0'),)
    >>> analyze(parse_expr("exp(-1e6*sin(g)**2)"), 12).covered
    False
    """
    if expr is None:
        return ScaleAnalysis((), False, "a Python callable has no expression to analyse")
    omega = sympy.S(omega)
    unit = mpmath.sqrt(mpmath.mpf(sympy.N(omega, 30)))
    pts = []
    rates = []
    try:
        nodes = _nodes(expr)
        for kind, u in nodes:
            pieces = _pieces(u)
            if pieces is not None:
                pts += _poly_features(kind, pieces, unit, R, digits, omega)
            elif kind != "osc" or not u.is_polynomial(g):
                rates.append((kind, u))
        if rates:
            pts += _rate_panels(rates, R, digits, _shields(expr))
    except _NotCovered as exc:
        return ScaleAnalysis(tuple(sorted(set(pts))), False, str(exc))
    except ICLError as exc:  # e.g. too many zeros of an argument to locate
        return ScaleAnalysis(tuple(sorted(set(pts))), False, f"feature points not located ({exc})")
    return ScaleAnalysis(tuple(sorted(set(pts))), True)
