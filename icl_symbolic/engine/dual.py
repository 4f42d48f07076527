r"""Certified dual kernels of a teacher: the NNGP map and its derivative map.

For an activation (teacher) f and a centred Gaussian pair (u, v) with covariance
[[q1, c], [c, q2]]:

* NNGP map            K_f(q1, q2, c)    = E[f(u) f(v)];
* derivative map      Kdot_f(q1, q2, c) = E[f'(u) f'(v)], f' the distributional derivative
  (relu' = heaviside, sign' = 2 delta: a jump contributes the bivariate density).

With unit variances and correlation rho, K_f(1, 1, rho) = sum_m a_m^2 rho^m is the dual
kernel of f in the Hermite basis of the paper (Sec. 2, Eq. (2), p. 2): its value at
rho = 1 is E[f^2], its linear part is a1^2 rho and Kdot_f(1, 1, 0) = a1^2, so that
rho_nonlinear = rho + K_f(1, 1, 1) - Kdot_f(1, 1, 0) (Eq. (8), p. 3).

Three routes, tried in this order; every number is a :class:`Value` saying which one gave it:

1. ``closed form`` (``exact``): f = alpha B(beta g) for B in :data:`CLOSED_FORMS` (arc-cosine
   kernels of Cho and Saul 2009 for step, relu, relu^2; Williams 1997 for erf; sign, exp, sin,
   cos, linear, constant).  K_f = alpha^2 K_B(beta^2 q1, beta^2 q2, beta^2 c).
2. ``series`` (``mpmath``): with f_i(x) = f(sqrt(q_i) x) and a_m, b_m their Hermite coefficients
   (:func:`icl_symbolic.engine.hermite.hermite_coeffs`, exact or certified),
   K_f = sum_m a_m b_m rho^m and Kdot_f = sum_m (m+1) a_(m+1) b_(m+1) rho^m / sqrt(q1 q2).
   By Cauchy-Schwarz the tail after order M is at most
   max_(m > M) w_m |rho|^m x sqrt(R1 R2), with R_i = E[f_i^2] - sum_(m <= M) a_m^2 the certified
   Parseval remainders (w_m = 1 for K, the derivative's weights for Kdot); the errors of the
   coefficients are added as bounds.
3. ``quadrature`` (``mpmath``): u = sqrt(q1) x, v = (c/sqrt(q1)) x + s z with
   s^2 = q2 - c^2/q1: an outer tanh-sinh integral in x (split at the kinks of f) of f(u) times an
   inner one in z (split where the argument of f crosses a kink), run at digits + 10 and
   digits + 20 working digits; the error is the largest of mpmath's error estimates and the
   difference of the two runs (the rule of ``coeffs``' numerical path, docs/hermite.md).  Jumps
   of f add the conditional one-dimensional integrals and the bivariate density of the
   derivative map.  This route is used near |rho| = 1, where the series converges slowly.

Where no bound can be given (a teacher whose narrow features the scale analysis does not cover,
a delta squared at |rho| = 1) the call raises :class:`ValidityError` with one line.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import mpmath
import sympy
from flint import arb, arf

from icl_symbolic.core.caches import memoize, store
from icl_symbolic.core.errors import ICLError, ValidityError
from icl_symbolic.core.values import Value
from icl_symbolic.engine.dual_ball import taylor, to_mpmath, working_precision
from icl_symbolic.engine.expr import MAX_HERMITE_ORDER, Teacher, g, teacher
from icl_symbolic.engine.gauss import (
    Integrands,
    expect,
    mp_expect_vector,
    mp_value,
    parity,
    quadrature_plan,
    to_rational,
)
from icl_symbolic.engine.hermite import hermite_coeffs

__all__ = [
    "CLOSED_FORMS",
    "DualPoint",
    "closed_form",
    "dual_map",
    "hermite_pair",
    "split_derivative",
]

PAPER = "arXiv:2610.10761, Sec. 2, Eq. (2) p. 2 and Eq. (8) p. 3"

#: the Hermite orders the series route may use (each is one coefficient pass of hermite_coeffs)
SERIES_ORDERS = (24, 60, 120, MAX_HERMITE_ORDER - 1)
#: up to this |rho| a failed series goes on to the largest order before the endpoint route
SERIES_REACH = mpmath.mpf("0.975")
#: mpmath's tanh-sinh degree cap in the 2-D route (its cost is nested: the digits it reaches are
#: what it certifies; a capped run reports fewer digits, never wrong ones)
QUAD_DEGREE = 5


# ---------------------------------------------------------------------------
# closed forms
# ---------------------------------------------------------------------------


def _theta(q1, q2, c):
    d = sympy.sqrt(q1 * q2)
    return sympy.acos(c / d) if d != 0 else sympy.pi / 2, (c / d if d != 0 else sympy.Integer(0))


def _density0(q1, q2, c):
    det = q1 * q2 - c**2
    if det == 0:
        return None  # a delta squared: infinite
    return 1 / (2 * sympy.pi * sympy.sqrt(det))


def _arccos(n):
    """E[relu(u)^n relu(v)^n] = (q1 q2)^(n/2) J_n(theta) / (2 pi) (Cho and Saul 2009, Eq. (6))."""

    def k(q1, q2, c):
        th, r = _theta(q1, q2, c)
        s = sympy.sqrt(1 - r**2)
        J = {
            0: sympy.pi - th,
            1: s + (sympy.pi - th) * r,
            2: 3 * s * r + (sympy.pi - th) * (1 + 2 * r**2),
        }[n]
        return (q1 * q2) ** sympy.Rational(n, 2) * J / (2 * sympy.pi)

    return k


def _erf(q1, q2, c):
    return 2 / sympy.pi * sympy.asin(2 * c / sympy.sqrt((1 + 2 * q1) * (1 + 2 * q2)))


def _erf_dot(q1, q2, c):
    return 4 / sympy.pi / sympy.sqrt((1 + 2 * q1) * (1 + 2 * q2) - 4 * c**2)


def _sign(q1, q2, c):
    _, r = _theta(q1, q2, c)
    return 2 / sympy.pi * sympy.asin(r)


def _sign_dot(q1, q2, c):
    d = _density0(q1, q2, c)
    return None if d is None else 4 * d


def _exp(q1, q2, c):
    return sympy.exp((q1 + q2) / 2 + c)


def _sin(q1, q2, c):
    return sympy.exp(-(q1 + q2) / 2) * sympy.sinh(c)


def _cos(q1, q2, c):
    return sympy.exp(-(q1 + q2) / 2) * sympy.cosh(c)


def _four(k):
    return lambda q1, q2, c: 4 * k(q1, q2, c)


#: name -> (B(x) builder, K_B, Kdot_B, source).  K_B(q1, q2, c) = E[B(u) B(v)],
#: Kdot_B = E[B'(u) B'(v)] (None where it is infinite).
CLOSED_FORMS = {
    "heaviside": (
        lambda x: sympy.Heaviside(x, sympy.Rational(1, 2)),
        _arccos(0),
        _density0,
        "Cho and Saul 2009, arc-cosine kernel n = 0",
    ),
    "relu": (lambda x: sympy.Max(x, 0), _arccos(1), _arccos(0), "Cho and Saul 2009, arc-cosine kernel n = 1"),
    "relu^2": (
        lambda x: sympy.Max(x, 0) ** 2,
        _arccos(2),
        _four(_arccos(1)),
        "Cho and Saul 2009, arc-cosine kernel n = 2",
    ),
    "sign": (sympy.sign, _sign, _sign_dot, "arcsine law (Sheppard 1899)"),
    "erf": (sympy.erf, _erf, _erf_dot, "Williams 1997, Eq. (11)"),
    "exp": (sympy.exp, _exp, _exp, "Gaussian moment generating function"),
    "sin": (sympy.sin, _sin, _cos, "Gaussian characteristic function"),
    "cos": (sympy.cos, _cos, _sin, "Gaussian characteristic function"),
}


@dataclass(frozen=True)
class _Match:
    name: str
    alpha: object
    beta: object


def _recognise(expr) -> _Match | None:
    """f = alpha B(beta g) for a table entry B, a linear alpha g, or a constant alpha."""
    if expr is None:
        return None
    if not expr.has(g):
        return _Match("constant", expr, sympy.Integer(1))
    if expr.is_polynomial(g) and sympy.degree(expr, g) == 1 and expr.subs(g, 0) == 0:
        return _Match("linear", sympy.expand(expr / g), sympy.Integer(1))
    for name, (build, *_rest) in CLOSED_FORMS.items():
        head = build(g).func if name != "relu^2" else sympy.Max
        for atom in expr.atoms(head):
            args = [a for a in atom.args if a.has(g)]
            if len(args) != 1:
                continue
            beta = sympy.simplify(args[0] / g)
            if beta.has(g) or beta == 0 or not beta.is_real:
                continue
            alpha = sympy.simplify(expr / build(beta * g))
            if not alpha.has(g) and alpha.is_real:
                return _Match(name, alpha, beta)
    return None


def closed_form(f, q1, q2, c, derivative: bool = False):
    """The closed form of K_f (or Kdot_f) at exact (q1, q2, c) as a SymPy number, or None.

    None when f is not of the form alpha B(beta g) with B in :data:`CLOSED_FORMS`, linear or
    constant.  Raises :class:`ValidityError` for a derivative map that is infinite (a jump at
    |rho| = 1).
    """
    T = teacher(f)
    m = _recognise(T.expr)
    if m is None:
        return None
    if m.name == "constant":
        return sympy.Integer(0) if derivative else m.alpha**2
    if m.name == "linear":
        return m.alpha**2 if derivative else m.alpha**2 * c
    _, K, Kdot, _src = CLOSED_FORMS[m.name]
    b2 = m.beta**2
    if derivative:
        val = Kdot(b2 * q1, b2 * q2, b2 * c)
        if val is None:
            raise ValidityError(
                f"the derivative map of {T.label} is infinite at |rho| = 1 (a jump: E[delta(u) delta(v)] diverges)"
            )
        return m.alpha**2 * b2 * val
    return m.alpha**2 * K(b2 * q1, b2 * q2, b2 * c)


def closed_form_source(f) -> str | None:
    """The literature source of the recognised closed form of f (None if not recognised)."""
    m = _recognise(teacher(f).expr)
    if m is None:
        return None
    return {"constant": "constant", "linear": "E[uv] = c"}.get(m.name) or CLOSED_FORMS[m.name][3]


# ---------------------------------------------------------------------------
# the Hermite series route
# ---------------------------------------------------------------------------


def _scaled_expr(T: Teacher, q):
    if T.expr is None:
        raise ICLError("dual kernels need a teacher in the input language (a Python callable has no kinks to split at)")
    return T.expr.subs(g, sympy.sqrt(q) * g)


@memoize(maxsize=64)
def scaled_coeffs(expr, M: int, digits: int):
    r = hermite_coeffs(expr, M=M, digits=digits)
    with mpmath.workdps(digits + 20):
        a = [(mpmath.mpf(v.value), value_error(v)) for v in r.a]
        R = mpmath.mpf(r.parseval_residual.value)
        R_hi = max(R, mpmath.mpf(0)) + value_error(r.parseval_residual)
    return a, R_hi, r.method


def value_error(v: Value):
    if v.method == "exact":
        return abs(mpmath.mpf(v.value)) * mpmath.mpf(10) ** -((v.digits or 15) + 4)
    e = v.abs_err
    return mpmath.inf if e is None else mpmath.mpf(e)


def hermite_pair(f, q1, q2, M: int, digits: int):
    """Hermite coefficients of f(sqrt(q1) g) and f(sqrt(q2) g) up to order M with errors,
    and the two certified upper bounds of their Parseval remainders (shared when q1 = q2)."""
    T = teacher(f)
    e1 = _scaled_expr(T, q1)
    c1 = scaled_coeffs(e1, M, digits)
    c2 = c1 if q1 == q2 else scaled_coeffs(_scaled_expr(T, q2), M, digits)
    return c1, c2


def _enough(val, err, digits) -> bool:
    """The bound certifies the requested digits (or pins a value below 10^-digits)."""
    return err <= abs(val) * mpmath.mpf(10) ** -digits / 2 or err <= mpmath.mpf(10) ** -(digits + 1)


def tail_weight(J: int, r, power: int):
    """max over m >= J of m^power r^m (power 0 or 1), r in [0, 1): the tail's largest weight."""
    if r == 0:
        return mpmath.mpf(0) if J > 0 else mpmath.mpf(1)
    if power == 0:
        return r**J
    # m r^m decreases once m >= r/(1-r)
    top = max(J, int(mpmath.ceil(r / (1 - r))) + 1)
    return max(m * r**m for m in range(J, top + 1))


def _series(c1, c2, rho, rho_err, derivative: bool, scale):
    """(value, bound) of the truncated series with its proven tail, at the caller's precision."""
    (a, R1, _), (b, R2, _) = c1, c2
    M = len(a) - 1
    r = abs(rho)
    total = mpmath.mpf(0)
    err = mpmath.mpf(0)
    lip = mpmath.mpf(0)
    if derivative:
        terms = [(m + 1, a[m + 1], b[m + 1], m) for m in range(M)]
    else:
        terms = [(1, a[m], b[m], m) for m in range(M + 1)]
    for w, (am, ea), (bm, eb), m in terms:
        p = rho**m if m else mpmath.mpf(1)
        total += w * am * bm * p
        err += w * (abs(am) * eb + abs(bm) * ea + ea * eb) * abs(p)
        if m:
            lip += w * abs(am * bm) * m * r ** (m - 1)
    # tail: |sum_(m > last) w_m a b rho^m| <= max w_m |rho|^m sqrt(R1 R2); for the derivative
    # the order-m term uses a_(m+1), so the remainder after a_M is sum_(j > M) a_j^2 = R
    if derivative:
        tail = tail_weight(M + 1, r, 1) / r * mpmath.sqrt(R1 * R2) if r else mpmath.mpf(0)
    else:
        tail = tail_weight(M + 1, r, 0) * mpmath.sqrt(R1 * R2)
    err += tail + lip * rho_err  # rho itself is known to rho_err
    return total * scale, err * scale, tail * scale


# ---------------------------------------------------------------------------
# the endpoint series: Taylor expansion of rho^m at |rho| = 1 (near |rho| = 1)
# ---------------------------------------------------------------------------

#: the expansion orders n the endpoint route tries (each needs n one-dimensional integrals)
ENDPOINT_ORDERS = (4, 8, 12, 16, 20, 24, 28)
#: the moments are computed in stages (derivatives to order 12, 16, 20, 28): cheap cases stay cheap
ENDPOINT_STAGES = (12, 16, 20, 28)


#: expr -> [F, F', ...] computed so far, and whether a delta stopped them (extended on demand)
_DERIVATIVES = store("icl_symbolic.engine.dual._DERIVATIVES")


def _next_derivative(expr):
    """d/dg of ``expr``, kept small: expanded (a polynomial in tanh stays one), except a rational
    function of an Add (softplus, sigmoid: 1/(1 + exp(g))^k), which is put over one denominator
    instead: expanding it multiplies the powers out (softplus: 19 s at order 8, 28 orders in 4 s)."""
    d = sympy.diff(expr, g)
    if any(p.exp.is_negative and p.base.is_Add for p in d.atoms(sympy.Pow)):
        return sympy.cancel(d)
    return sympy.expand(d)


def _derivatives(expr, n_max: int) -> tuple:
    """(F, F', ..., F^(n)) while each derivative is a function (no delta), n <= n_max."""
    out, stopped = _DERIVATIVES.get(expr, ([expr], False))
    while len(out) <= n_max and not stopped:
        d = _next_derivative(out[-1])
        if d.has(sympy.DiracDelta):
            stopped = True
            break
        out = [*out, d]
    _DERIVATIVES[expr] = (out, stopped)
    return tuple(out[: n_max + 1])


def _vector_mp(exprs):
    """One mpmath function returning [e(x) for e in exprs], common subexpressions evaluated once
    (tanh(g) in every derivative of tanh), with the guarded functions of the teacher parser."""
    exprs = [
        e.replace(
            lambda n: n.is_Pow and not n.base.has(g) and n.exp.has(g),
            lambda n: sympy.exp(n.exp * sympy.log(n.base), evaluate=False),
        )
        for e in exprs
    ]
    return sympy.lambdify(g, exprs, modules=[_guarded(), "mpmath"], cse=True)


def _vector_taylor(F, n: int, fallback):
    """x -> [F(x), F'(x), ..., F^(n-1)(x)] (for a pair (F1, F2): both lists, concatenated) from one
    Arb Taylor series of F at x (:func:`icl_symbolic.engine.dual_ball.taylor`), far cheaper than the
    n SymPy derivatives evaluated in mpmath.  Each value is the ball's midpoint; at a node where a
    ball's radius exceeds 2^-prec max(1, |value|) (prec = mpmath's working precision), or for an F
    without series enclosures, ``fallback()`` (the mpmath evaluation of the derivatives, built on
    first use: lambdifying them costs more than most passes) is used."""
    Fs = F if isinstance(F, tuple) else (F,)
    if any(taylor(f, g, arb(0), 1) is None for f in Fs):
        return fallback()

    def vec(x):
        prec = mpmath.mp.prec
        tol = mpmath.mpf(2) ** -prec
        out = []
        # guard bits: the cancellation in 1 - 2/(exp(2x) + 1) and the factorials (n! < 2^(n log2 n))
        with working_precision(prec + 40 + n * n.bit_length(), series_length=n):
            bx = _to_ball(x)
            for f in Fs:
                for j, c in enumerate(taylor(f, g, bx, n)):
                    if not c.is_finite():
                        return fallback()(x)
                    mid, rad = to_mpmath(c * arb.fac_ui(j))
                    if rad > tol * max(1, abs(mid)):
                        return fallback()(x)
                    out.append(mid)
        return out

    return vec


def _to_ball(x) -> arb:
    sign, man, exp, _bc = mpmath.mpf(x)._mpf_
    return arb(arf((-man if sign else man, exp)))  # exact


@memoize(maxsize=1)
def _guarded() -> dict:
    """The teacher parser's guarded mpmath functions (far quadrature nodes: tanh(1e30) is +-1, not a
    huge-integer computation), taken from the one-function teachers themselves."""
    return {name: teacher(getattr(sympy, name)(g)).mp for name in ("exp", "sin", "cos", "tanh", "erf", "erfc")}


def _square_bits(vec, pts, n: int) -> list:
    """Per entry j < n of vec, -log2 of the largest probed |F_j|^2 phi: the fixed-point shift that
    makes the convergence test of E[F_j^2] relative (as :func:`magnitude_bits`, one call per probe)."""
    best = [mpmath.mpf(0)] * n
    with mpmath.workdps(20):
        for t in [mpmath.mpf(p) for p in pts] + [mpmath.mpf(k) / 8 for k in range(-64, 65)]:
            vals = vec(t)
            w = mpmath.exp(-t * t / 2)
            best = [max(b, abs(v) ** 2 * w) if mpmath.isfinite(v) else b for b, v in zip(best, vals)]
        return [0 if b == 0 else int(mpmath.floor(-mpmath.log(b, 2))) for b in best]


@memoize(maxsize=32)
def _endpoint_moments(d1, d2, n_max: int, digits: int):
    """One shared quadrature for the endpoint route: [(D_j, err)] with D_j = E[F1^(j) F2^(j)],
    j <= n_max, and [(E[(F_i^(j))^2], err)] for i = 1, 2 (the same list when F1 = F2).

    The integrands are scaled by their own probed magnitudes, so that the convergence test of a
    large derivative is relative; errors follow the two-precision rule of ``coeffs``
    (:func:`mp_expect_vector`)."""
    same = d1 == d2
    n = n_max + 1
    exprs = list(d1[:n]) if same else list(d1[:n]) + list(d2[:n])
    vec = _vector_taylor(d1[0] if same else (d1[0], d2[0]), n, functools.cache(lambda: _vector_mp(exprs)))
    T = teacher(d1[0])
    pts = sorted({mpmath.mpf(str(sympy.N(p, 40))) for p in _plan_points(T, T.label, digits, 1)[1]})
    if not same:
        T2 = teacher(d2[0])
        pts = sorted(set(pts) | {mpmath.mpf(str(sympy.N(p, 40))) for p in _plan_points(T2, T.label, digits, 1)[1]})
    bits = _square_bits(vec, pts, n if same else 2 * n)

    def fvec(x, s):
        v = vec(x)
        if same:
            return [s * u * u for u in v]
        a, b = v[:n], v[n:]
        return [s * u * w for u, w in zip(a, b)] + [s * u * u for u in v]

    extra = bits if same else [min(b1, b2) for b1, b2 in zip(bits[:n], bits[n:])] + bits
    # squares are even, and F1^(j) F2^(j) has the parity of F1 F2 (each derivative flips both):
    # with exact parities only [0, inf) is integrated
    p12 = parity(d1[0]) * parity(d2[0])
    par = (1,) * len(extra) if same else ((p12,) * n + (1,) * (2 * n) if p12 else None)
    res = mp_expect_vector(Integrands(fvec, len(extra), scaled=True, extra_bits=extra, parity=par), 1, digits, pts)
    D = [(v, e) for v, e, _c in res[:n]]
    if same:
        return D, D, D
    return D, [(v, e) for v, e, _c in res[n : 2 * n]], [(v, e) for v, e, _c in res[2 * n :]]


def _endpoint(F1, F2, c1, c2, r, digits):
    """(value, bound) of sum_m a_m b_m r^m, 0 < r < 1, from the derivatives at r = 1.

    With D_j = E[F1^(j)(x) F2^(j)(x)] = j! sum_m C(m, j) a_m b_m (Stein's lemma, j <= n):
    sum_m a_m b_m r^m = sum_(j<n) D_j (r-1)^j/j! + sum_(m<=M) a_m b_m [r^m - T_(n-1,m)(r)] + tail,
    T the Taylor polynomial of r^m at 1, |r^m - T_(n-1,m)(r)| <= C(m, n) (1-r)^n (Lagrange), so
    |tail| <= (1-r)^n sqrt(P1 P2), P_i = E[(F_i^(n))^2]/n! - sum_(m<=M) C(m, n) a_m^2 (certified).
    All the one-dimensional integrals share one quadrature (:func:`_endpoint_moments`).
    Returns None when no order n reaches the requested digits.
    """
    # a cost heuristic only (the bound decides): skip the stages whose (1 - r)^n alone is not yet
    # far below the requested accuracy (their remainders P_n are >= 1 for slowly decaying a_m)
    small = mpmath.mpf(10) ** -(digits + 6)
    stages = [st for st in ENDPOINT_STAGES if (1 - r) ** st < small] or [ENDPOINT_STAGES[-1]]
    for stage in stages:
        d1, d2 = _derivatives(F1, stage), _derivatives(F2, stage)
        top = min(len(d1), len(d2)) - 1  # derivatives stop before the first delta
        orders = [n for n in ENDPOINT_ORDERS if n <= top]
        if not orders:
            return None
        got = _endpoint_at(d1, d2, c1, c2, r, digits, orders, top)
        if got is not None or top < stage:
            return got
    return None


def _mirror_signs(d1, d2):
    """[s_j] with d2[j] = s_j d1[j], s_j = +-1 (structurally, after expansion), or None."""
    out = []
    for a, b in zip(d1, d2):
        if b == a:
            out.append(1)
        elif sympy.expand(a + b) == 0:
            out.append(-1)
        else:
            return None
    return out


def _endpoint_at(d1, d2, c1, c2, r, digits, orders, stage):
    """The endpoint sum at the given orders n, the moments computed to order ``stage``."""
    M = min(len(c1), len(c2)) - 1
    d1, d2 = tuple(d1[: stage + 1]), tuple(d2[: stage + 1])
    signs = _mirror_signs(d1, d2)
    if signs is None:
        D, S1, S2 = _endpoint_moments(d1, d2, stage, digits + 5)
    else:  # F2^(j) = +-F1^(j) (f odd or even, rho < 0): the moments of F1 alone, shared with rho > 0
        S1 = S2 = _endpoint_moments(d1, d1, stage, digits + 5)[0]
        D = [(sg * v, e) for sg, (v, e) in zip(signs, S1)]
    for n in orders:
        P = []
        for (v, e), co in ((S1[n], c1), (S2[n], c2)):
            s = sum(
                mpmath.binomial(m, n) * max(abs(am) - ea, 0) ** 2  # a lower bound: P is an upper bound
                for m, (am, ea) in enumerate(co[: M + 1])
            )
            P.append(max(v / mpmath.factorial(n) - s, 0) + e / mpmath.factorial(n))
        tail = (1 - r) ** n * mpmath.sqrt(P[0] * P[1])
        total, err = mpmath.mpf(0), mpmath.mpf(0)
        for j in range(n):
            v, e = D[j]
            w = (r - 1) ** j / mpmath.factorial(j)
            total += v * w
            err += e * abs(w)
        for m in range(M + 1):
            (am, ea), (bm, eb) = c1[m], c2[m]
            bracket = r**m - sum(mpmath.binomial(m, j) * (r - 1) ** j for j in range(min(n, m + 1)))
            total += am * bm * bracket
            err += (abs(am) * eb + abs(bm) * ea + ea * eb) * abs(bracket)
        err += tail
        if _enough(total, err, digits):
            return total, err, n
    return None


# ---------------------------------------------------------------------------
# the quadrature route
# ---------------------------------------------------------------------------


def split_derivative(T: Teacher):
    """f' as (smooth part, [(location, weight)]): the DiracDelta terms of SymPy's derivative
    become point masses (a jump of size J at b gives (b, J)).  Raises ValidityError for
    derivatives of deltas or deltas at non-linear arguments."""
    d = sympy.expand(sympy.diff(T.expr, g))
    smooth, masses = sympy.Integer(0), []
    for term in sympy.Add.make_args(d):
        deltas = [a for a in term.atoms(sympy.DiracDelta)]
        if not deltas:
            smooth += term
            continue
        if len(deltas) != 1 or len(deltas[0].args) != 1:
            raise ValidityError(
                f"the derivative of {T.label} has a derivative of a delta: its kernel is not a function"
            )
        arg = deltas[0].args[0]
        if not (arg.is_polynomial(g) and sympy.degree(arg, g) == 1):
            raise ValidityError(f"a jump of {T.label} at a non-linear argument {arg} is not supported")
        slope, off = sympy.Poly(arg, g).all_coeffs()
        loc = -off / slope
        coeff = (term / deltas[0]).subs(g, loc)
        masses.append((loc, coeff / abs(slope)))
    return smooth, masses


def _bps(T_or_expr_bps, scale):
    return [mpmath.mpf(str(sympy.N(b, 40))) / scale for b in T_or_expr_bps]


def _split_points(points, lo=-40, hi=40):
    inner = sorted({p for p in points if lo < p < hi} | {mpmath.mpf(0), mpmath.mpf(-12), mpmath.mpf(12)})
    return [mpmath.mpf("-inf"), *inner, mpmath.mpf("inf")]


def _plan_points(expr, label, digits, q):
    """Split points of E[F(y)], y ~ N(0, q), from the package's quadrature plan (kinks, narrow
    features); ValidityError where the scale analysis cannot cover F."""
    T = teacher(expr) if not isinstance(expr, Teacher) else expr
    if T.expr is not None and not T.expr.has(g):
        return T, []
    plan = quadrature_plan(T, digits, q if q != 0 else 1, label, 1)
    if not plan.scale.covered:
        raise ValidityError(f"no certified quadrature for {label}: {plan.scale.reason}")
    return T, list(plan.points)


def _quad2(F1, bp1, F2, bp2, q1, q2, c, dps):
    """E[F1(u) F2(v)] for (u, v) ~ N(0, [[q1, c], [c, q2]]) at dps working digits: (value, est)."""
    with mpmath.workdps(dps):
        q1m, q2m, cm = (mpmath.mpf(str(sympy.N(x, dps + 10))) for x in (q1, q2, c))
        two_pi = 2 * mpmath.pi
        if q1m == 0:  # u = 0
            v0 = F1(mpmath.mpf(0))
            val, e = _quad1(F2, bp2, mpmath.mpf(0), mpmath.sqrt(q2m))
            return v0 * val, abs(v0) * e
        sq1 = mpmath.sqrt(q1m)
        m = cm / sq1
        s2 = q2m - cm**2 / q1m
        s = mpmath.sqrt(s2) if s2 > 0 else mpmath.mpf(0)
        weighted_err = {}  # x -> |F1(sq1 x)| phi(x) times the inner estimate at x

        def outer(x):
            fu = F1(sq1 * x)
            if fu == 0:
                weighted_err[x] = mpmath.mpf(0)
                return mpmath.mpf(0)
            iv, ie = _quad1(F2, bp2, m * x, s)
            w = mpmath.exp(-(x**2) / 2) / mpmath.sqrt(two_pi)
            weighted_err[x] = abs(fu) * w * ie
            return fu * iv * w

        def inner_share(x):
            if x not in weighted_err:
                outer(x)
            return weighted_err[x]

        pts = _split_points([b / sq1 for b in bp1])
        val, est = mpmath.quad(outer, pts, error=True, method="tanh-sinh", maxdegree=QUAD_DEGREE)
        # the inner values' errors reach the outer integral through int |F1| phi ie: integrated by the
        # same rule on the same nodes (cached), counted twice since that integral is itself estimated.
        # Their unweighted maximum, used before, sits at nodes far in the tail (x ~ 1e13, where phi is
        # about 10^(-10^8)) and swamps the bound of a teacher that grows like relu; the caller's
        # two-precision rule still compares whole runs.
        share, share_est = mpmath.quad(inner_share, pts, error=True, method="tanh-sinh", maxdegree=QUAD_DEGREE)
        return val, est + 2 * abs(share) + share_est


def _quad1(F, bps, mean, s):
    """E[F(mean + s z)], z ~ N(0, 1): (value, estimate)."""
    if s == 0:
        return F(mean), mpmath.mpf(0)
    pts = _split_points([(b - mean) / s for b in bps])
    val, est = mpmath.quad(
        lambda z: F(mean + s * z) * mpmath.exp(-(z**2) / 2), pts, error=True, method="tanh-sinh", maxdegree=QUAD_DEGREE
    )
    k = 1 / mpmath.sqrt(2 * mpmath.pi)
    return val * k, est * k


def _certified_quad(run, digits):
    """The coeffs rule: the run at digits + 10 and digits + 20; error = max(estimates, difference)."""
    v1, e1 = run(digits + 10)
    v2, e2 = run(digits + 20)
    with mpmath.workdps(digits + 20):
        return v2, max(e1, e2, abs(v2 - v1))


def _density(q1, q2, c, x, y):
    det = q1 * q2 - c**2
    return mpmath.exp(-(q2 * x**2 - 2 * c * x * y + q1 * y**2) / (2 * det)) / (2 * mpmath.pi * mpmath.sqrt(det))


def _quadrature(T: Teacher, q1, q2, c, digits, derivative):
    """(value, error bound) of K_f or Kdot_f by the quadrature route."""
    if not derivative:
        T1, bp = _plan_points(T, T.label, digits, q1)
        _T2, bp2 = (T1, bp) if q2 == q1 else _plan_points(T, T.label, digits, q2)
        return _certified_quad(lambda dps: _quad2(T.mp, bp, T.mp, bp2, q1, q2, c, dps), digits)
    smooth, masses = split_derivative(T)
    label = f"({T.label})'"
    terms = []
    if smooth != 0:
        S, bps = _plan_points(smooth, label, digits, q1)
        _S2, bps2 = (S, bps) if q1 == q2 else _plan_points(smooth, label, digits, q2)
        terms.append(lambda dps: _quad2(S.mp, bps, S.mp, bps2, q1, q2, c, dps))
        for loc, w in masses:
            # E[delta(u - b) s(v)] = p_u(b) E[s(v) | u = b], and symmetrically
            for qa, qb in ((q1, q2), (q2, q1)):
                terms.append(functools.partial(_mass_term, S.mp, bps2 if qa == q1 else bps, loc, w, qa, qb, c))
    if masses:
        if q1 * q2 - c**2 == 0:
            raise ValidityError(
                f"the derivative map of {T.label} is infinite at |rho| = 1 (a jump: E[delta(u) delta(v)] diverges)"
            )
        terms.append(functools.partial(_mass_pairs, masses, q1, q2, c))
    if not terms:
        return mpmath.mpf(0), mpmath.mpf(0)
    total, err = mpmath.mpf(0), mpmath.mpf(0)
    for run in terms:
        v, e = _certified_quad(run, digits)
        total += v
        err += e
    return total, err


def _mp(x, dps):
    return mpmath.mpf(str(sympy.N(x, dps + 10)))


def _mass_term(S, bps, loc, w, qa, qb, c, dps):
    with mpmath.workdps(dps):
        qa_, qb_, c_, b, w_ = (_mp(x, dps) for x in (qa, qb, c, loc, w))
        if qa_ == 0:
            raise ValidityError("a jump at a point of a variable with zero variance: its derivative map is infinite")
        dens = mpmath.exp(-(b**2) / (2 * qa_)) / mpmath.sqrt(2 * mpmath.pi * qa_)
        var = qb_ - c_**2 / qa_
        val, est = _quad1(S, bps, c_ * b / qa_, mpmath.sqrt(var) if var > 0 else mpmath.mpf(0))
        return w_ * dens * val, abs(w_ * dens) * est


def _mass_pairs(masses, q1, q2, c, dps):
    with mpmath.workdps(dps):
        q1_, q2_, c_ = (_mp(x, dps) for x in (q1, q2, c))
        tot = mpmath.mpf(0)
        for b1, w1 in masses:
            for b2, w2 in masses:
                tot += _mp(w1, dps) * _mp(w2, dps) * _density(q1_, q2_, c_, _mp(b1, dps), _mp(b2, dps))
        return tot, mpmath.mpf(0)


def _next_order(M: int, R1, R2, r, target):
    """The next series order to try after M fell short: the first larger one of SERIES_ORDERS whose
    tail would pass with the current remainders (they only shrink with the order); else the
    largest order while |rho| <= SERIES_REACH (the remainders at that order are what decide); None
    otherwise (the endpoint route takes over with the coefficients at hand)."""
    R = mpmath.sqrt(R1 * R2)
    bigger = [m for m in SERIES_ORDERS if m > M]
    for m in bigger:
        if R == 0 or r == 0 or tail_weight(m + 1, r, 1) * R <= target:
            return m
    return bigger[-1] if bigger and r <= SERIES_REACH else None


def _endpoint_escalating(T: Teacher, qs, pieces, cs, where, digits, derivative):
    """The endpoint route with the coefficients at hand, then (if it falls short) with the largest
    order of SERIES_ORDERS: (value, bound, n, M) or None."""
    (q1, q2), (c1, c2), (r, negative) = qs, cs, where
    while True:
        M = len(c1[0]) - 2
        got = _endpoint(*pieces, _shifted(c1[0], derivative, False), _shifted(c2[0], derivative, negative), r, digits)
        if got is not None:
            return (*got, M)
        if M >= SERIES_ORDERS[-1]:
            return None
        c1, c2 = hermite_pair(T, q1, q2, SERIES_ORDERS[-1] + 1, digits + 5)


# ---------------------------------------------------------------------------
# the public map
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DualPoint:
    """K_f and Kdot_f at one (q1, q2, c); ``route`` says which route gave each."""

    q1: object
    q2: object
    c: object
    rho: object
    nngp: Value
    derivative: Value | None
    routes: tuple

    def to_json(self, digits: int) -> dict:
        def s(v):
            return None if v is None else v.to_str(digits)

        return {
            "q1": str(self.q1),
            "q2": str(self.q2),
            "c": str(self.c),
            "rho": str(self.rho),
            "rho_decimal": str(sympy.N(self.rho, 17)),
            "nngp": s(self.nngp),
            "derivative": s(self.derivative),
            "routes": list(self.routes),
            "provenance": {
                "nngp": self.nngp.to_json(),
                "derivative": None if self.derivative is None else self.derivative.to_json(),
            },
        }


def _check_cov(q1, q2, c):
    q1, q2, c = (to_rational(x, n) for x, n in ((q1, "q1"), (q2, "q2"), (c, "c")))
    if q1.is_negative or q2.is_negative:
        raise ICLError(f"variances must be >= 0, got q1 = {q1}, q2 = {q2}")
    if c**2 > q1 * q2:
        raise ICLError(f"|c| must be at most sqrt(q1 q2) (a covariance), got c = {c} with q1 = {q1}, q2 = {q2}")
    return q1, q2, c


def _rho(q1, q2, c):
    d = q1 * q2
    return sympy.Integer(0) if d == 0 else sympy.nsimplify(c / sympy.sqrt(d))


def _pieces(T: Teacher, q1, q2, negative: bool, derivative: bool):
    """The two functions whose unit-variance kernel is wanted, F1(x) and F2(+-x), or None when
    F has point masses (the derivative of a jump)."""
    if not derivative:
        F = T.expr
    else:
        F, masses = split_derivative(T)
        if masses:
            return None
    F1 = sympy.sqrt(q1) ** int(derivative) * F.subs(g, sympy.sqrt(q1) * g)
    F2 = sympy.sqrt(q2) ** int(derivative) * F.subs(g, (-1 if negative else 1) * sympy.sqrt(q2) * g)
    return F1, F2


def _shifted(co, derivative: bool, negative: bool):
    """Coefficients of F from those of f(sqrt(q) x): F' has sqrt(m+1) a_(m+1); F(-x) has (-1)^m a_m."""
    if derivative:
        co = [(mpmath.sqrt(m + 1) * a, mpmath.sqrt(m + 1) * e) for m, (a, e) in enumerate(co[1:])]
    if negative:
        co = [((-1) ** m * a, e) for m, (a, e) in enumerate(co)]
    return co


def _one(T: Teacher, q1, q2, c, digits, derivative, closed=True) -> tuple[Value, str]:
    what = "E[f'(u) f'(v)]" if derivative else "E[f(u) f(v)]"
    note = f"{what}, (q1, q2, c) = ({q1}, {q2}, {c})"
    cf = closed_form(T, q1, q2, c, derivative) if closed else None
    if cf is not None:
        src = closed_form_source(T)
        return Value.from_exact(sympy.simplify(cf), digits, note=f"{note}; closed form ({src})"), "closed form"
    if derivative and q1 * q2 == 0:
        raise ValidityError(f"the derivative map of {T.label} at a zero variance has no certified route here")
    rho = _rho(q1, q2, c)
    wd = digits + 15
    with mpmath.workdps(wd):
        rho_mp = _mp(rho, wd)
        r = abs(rho_mp)
        scale = 1 / mpmath.sqrt(_mp(q1 * q2, wd)) if derivative else mpmath.mpf(1)
        pieces = _pieces(T, q1, q2, rho_mp < 0, derivative) if q1 * q2 != 0 else None
        if r == 1:
            if pieces is None:
                raise ValidityError(
                    f"the derivative map of {T.label} is infinite at |rho| = 1 (a jump: E[delta(u) delta(v)] diverges)"
                )
            v = expect(sympy.expand(pieces[0] * pieces[1]), 1, digits)
            if v.method == "exact":
                return Value.from_exact(
                    sympy.simplify(v.exact * scale**2 if derivative else v.exact), digits, note=note
                ), ("closed form")
            return mp_value(
                mpmath.mpf(v.value) * scale, value_error(v) * scale, digits, note=f"{note}; 1-D quadrature"
            ), ("quadrature")
        c1 = c2 = None
        M = SERIES_ORDERS[0]
        while True:
            c1, c2 = hermite_pair(T, q1, q2, M + 1, digits + 5)  # shared by both maps
            val, err, tail = _series(c1, c2, rho_mp, mpmath.mpf(10) ** -wd, derivative, scale)
            if not mpmath.isfinite(err):
                break
            if _enough(val, err, digits):
                tail_s = mpmath.nstr(tail, 3)
                return mp_value(val, err, digits, note=f"{note}; Hermite series to order {M} (tail <= {tail_s})"), (
                    "series"
                )
            M = _next_order(M, c1[1], c2[1], r, abs(val) * mpmath.mpf(10) ** -(digits + 1))
            if M is None:
                break
        if pieces is not None and c1 is not None:
            got = _endpoint_escalating(T, (q1, q2), pieces, (c1, c2), (r, rho_mp < 0), digits, derivative)
            if got is not None:
                val, err, n, M = got
                return mp_value(
                    val * scale,
                    err * scale,
                    digits,
                    note=f"{note}; Hermite series to order {M} re-expanded at |rho| = 1 to order {n}",
                ), "endpoint series"
        val, err = _quadrature(T, q1, q2, c, digits, derivative)
    return mp_value(val, err, digits, note=f"{note}; 2-D tanh-sinh quadrature at two precisions"), "quadrature"


def dual_map(f, q1=1, q2=1, c=0, digits: int = 30, derivative: bool = True, *, closed: bool = True) -> DualPoint:
    """K_f(q1, q2, c) = E[f(u) f(v)] and Kdot_f = E[f'(u) f'(v)], (u, v) ~ N(0, [[q1, c], [c, q2]]).

    ``closed=False`` skips the closed-form table (the tests check each closed form against the
    other routes).  Paper: the Hermite expansion of Sec. 2, Eq. (2), p. 2; at q1 = q2 = 1, K_f(1) = E[f^2] and
    Kdot_f(0) = a1^2 (Eq. (8), p. 3).  Every number is exact or certified (module docstring).

    >>> p = dual_map("relu(g)", 1, 1, "1/2", digits=20)
    >>> sympy.simplify(p.nngp.exact - (sympy.sqrt(3) / (4 * sympy.pi) + sympy.Rational(1, 6))), p.derivative.exact
    (0, 1/3)
    """
    if not isinstance(digits, int) or isinstance(digits, bool) or not 1 <= digits <= 200:
        raise ICLError(f"digits must be an integer between 1 and 200, got {digits!r}")
    q1, q2, c = _check_cov(q1, q2, c)
    T = teacher(f)
    if T.expr is None:
        raise ICLError("dual kernels need a teacher in the input language, not a Python callable")
    k, route = _one(T, q1, q2, c, digits, False, closed)
    kd, route_d = (None, None)
    if derivative:
        try:
            kd, route_d = _one(T, q1, q2, c, digits, True, closed)
        except ValidityError as exc:
            if "is infinite" not in str(exc):
                raise
            kd, route_d = None, "infinite (a delta squared)"  # reported, not a number
    return DualPoint(q1, q2, c, _rho(q1, q2, c), k, kd, (route, route_d) if derivative else (route,))
