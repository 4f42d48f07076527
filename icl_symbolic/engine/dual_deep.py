r"""NNGP and NTK kernels of a deep fully connected network, with a certified maximum error.

Recursion (depth L hidden layers, weight and bias variances sigma_w^2, sigma_b^2, inputs in R^d):

    K^0(x, y)       = sigma_w^2 <x, y> / d + sigma_b^2,           Theta^0 = K^0,
    K^(l+1)(x, y)   = sigma_w^2 K_f(K^l(x,x), K^l(y,y), K^l(x,y)) + sigma_b^2,
    Theta^(l+1)     = K^(l+1) + sigma_w^2 Kdot_f(K^l(x,x), K^l(y,y), K^l(x,y)) Theta^l,

with K_f and Kdot_f the single-layer maps of :mod:`icl_symbolic.engine.dual` (the dual kernel of the
teacher f, Sec. 2, Eq. (2), p. 2 of arXiv:2610.10761, is the case q1 = q2 = 1).

Two entry points:

* :func:`deep_pair` -- one pair of inputs, every layer certified in mpmath: exact nested closed
  forms when f has one (relu, erf, ...), else each layer's value carries the bound of its own
  route plus the propagated error of the layer below (Lipschitz constants |d K/d c| <= E[f'^2],
  |d Kdot/d c| <= E[f''^2] by Cauchy-Schwarz, and |d K / d q_i| <= sqrt(E[f''^2] E[f^2]) / 2 by the
  heat equation, all certified one-dimensional expectations).
* :func:`deep_gram` -- a Gram matrix in float64 for inputs on a common sphere: per layer the
  Hermite coefficients of f(sqrt(q) g) (certified) give K and Kdot as polynomials in the
  correlation, evaluated by Horner's rule in numpy; the bound adds the Cauchy-Schwarz tail at the
  largest off-diagonal |correlation|, the float64 rounding (gamma_(2M+2) times the sum of the
  absolute terms) and the propagated error of the layer below.  Where the tail cannot be made small
  (|correlation| too close to 1 for the coefficient decay) the call refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
import sympy
from flint import arb
from mpmath.libmp import to_fixed

from icl_symbolic.core.caches import memoize
from icl_symbolic.core.errors import ICLError, ValidityError
from icl_symbolic.core.values import Value
from icl_symbolic.engine.dual import closed_form, dual_map, split_derivative, tail_weight, value_error
from icl_symbolic.engine.dual_ball import evaluate, from_rational, to_mpmath, working_precision
from icl_symbolic.engine.dual_gram_closed import closed_family, closed_gram, scale_rows
from icl_symbolic.engine.expr import Teacher, g, teacher
from icl_symbolic.engine.gauss import Integrands, expect, mp_expect_vector, mp_value, quadrature_plan, to_rational
from icl_symbolic.engine.hermite import hermite_parity, hermite_sums

__all__ = ["DeepPair", "DeepGram", "deep_pair", "deep_gram"]

EPS = np.finfo(float).eps


def _check(depth, sigma_w2, sigma_b2):
    if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= 100:
        raise ICLError(f"depth must be an integer between 1 and 100, got {depth!r}")
    sw, sb = to_rational(sigma_w2, "sigma_w2"), to_rational(sigma_b2, "sigma_b2")
    if not sw.is_positive or sb.is_negative:
        raise ICLError(f"need sigma_w2 > 0 and sigma_b2 >= 0, got {sigma_w2}, {sigma_b2}")
    return sw, sb


def _moment(expr, q, k: int, digits: int):
    """Upper bound of E[(f^(k)(sqrt(q) g))^2] (k = 0, 1, 2); inf when f^(k) has point masses."""
    e = expr
    for _ in range(k):
        e, masses = split_derivative(teacher(e))
        if masses:
            return mpmath.inf
    if e == 0:
        return mpmath.mpf(0)
    v = expect(sympy.expand(e.subs(g, sympy.sqrt(q) * g) ** 2), 1, digits)
    return abs(mpmath.mpf(v.value)) + value_error(v)


@dataclass(frozen=True)
class DeepPair:
    """Layer-by-layer (q1, q2, c) of the NNGP and the NTK Theta for one pair of inputs."""

    nngp: tuple  # Values K^l(x, y), l = 0..L
    ntk: tuple  # Values Theta^l(x, y)
    q1: tuple
    q2: tuple
    method: str


def _rat(v: mpmath.mpf, digits: int):
    return sympy.Rational(mpmath.nstr(v, digits + 10, min_fixed=-mpmath.inf, max_fixed=mpmath.inf))


def deep_pair(f, x, y, depth: int, sigma_w2=1, sigma_b2=0, digits: int = 20) -> DeepPair:
    """NNGP K^L(x, y) and NTK Theta^L(x, y) of a depth-L fully connected network, certified.

    Orthogonal inputs, no bias: K^0 = Theta^0 = 0, so K^1 = sigma_w^2 E[relu(u)]^2 = 2/(2 pi) and
    Theta^1 = K^1 + sigma_w^2 Kdot^1 Theta^0 = K^1.

    >>> r = deep_pair("relu(g)", [1, 0], [0, 1], depth=1, sigma_w2=2, digits=15)
    >>> r.nngp[-1].exact, r.ntk[-1].exact
    (1/pi, 1/pi)
    """
    sw, sb = _check(depth, sigma_w2, sigma_b2)
    T = teacher(f)
    x = [to_rational(v, "x") for v in x]
    y = [to_rational(v, "y") for v in y]
    if len(x) != len(y) or not x:
        raise ICLError("x and y must be non-empty vectors of the same length")
    d = len(x)
    q1 = sw * sum(a * a for a in x) / d + sb
    q2 = sw * sum(b * b for b in y) / d + sb
    c = sw * sum(a * b for a, b in zip(x, y)) / d + sb
    if depth <= EXACT_DEPTH:
        exact = _exact_recursion(T, q1, q2, c, depth, sw, sb, digits)
        if exact is not None:
            return exact
    ball = _ball_recursion(T, (q1, q2, c), depth, sw, sb, digits)
    if ball is not None:
        return ball
    return _mp_recursion(T, q1, q2, c, depth, sw, sb, digits)


#: the exact nested closed forms are kept up to this depth (their SymPy size grows with depth);
#: deeper closed-form recursions run in ball arithmetic
EXACT_DEPTH = 2


def _ball_recursion(T, cov, depth, sw, sb, digits):
    """The closed-form recursion in Arb ball arithmetic (:mod:`icl_symbolic.engine.dual_ball`):
    rigorous enclosures at every layer.  None when f has no closed form; ValidityError when a ball
    leaves a map's domain (|rho| = 1) even at the largest working precision."""
    Q1, Q2, C, Q = sympy.symbols("Q1 Q2 C Q", positive=True)
    try:
        k = closed_form(T, Q1, Q2, C)
        kd = closed_form(T, Q1, Q2, C, derivative=True)
        kq = closed_form(T, Q, Q, Q)
    except ValidityError:
        return None
    if k is None or kd is None or kq is None:
        return None
    kq = sympy.simplify(kq)  # acos(Q / sqrt(Q^2)) -> 0: the diagonal never meets acos at a ball round 1
    bits = int(3.33 * (digits + 20)) + 8 * depth
    for _attempt in range(4):
        with working_precision(bits):
            layers = _ball_layers((k, kd, kq), (Q1, Q2, C, Q), cov, depth, (sw, sb))
            ok = all(x.is_finite() for lay in layers for x in lay)
            if ok and all(_tight(x, digits) for lay in layers for x in lay):
                return _ball_pair(layers, digits, bits)
        bits *= 2
    if not ok:
        raise ValidityError(
            f"no certified deep kernel for {T.label}: a layer's ball leaves the map's domain (|rho| = 1)"
        )
    with working_precision(bits // 2):
        return _ball_pair(layers, digits, bits // 2)


def _ball_layers(maps, syms, cov, depth, weights):
    """[(K^l, Theta^l, q1^l, q2^l)] for l = 0..depth as arb balls."""
    k, kd, kq = maps
    Q1, Q2, C, Q = syms
    sw, sb = (from_rational(x) for x in weights)
    q1, q2, c = (from_rational(x) for x in cov)
    th = c
    out = [(c, th, q1, q2)]
    for _ in range(depth):
        env = {Q1: q1, Q2: q2, C: c}
        kv, kdv = evaluate(k, env), evaluate(kd, env)
        q1, q2 = sw * evaluate(kq, {Q: q1}) + sb, sw * evaluate(kq, {Q: q2}) + sb
        c = sw * kv + sb
        th = c + sw * kdv * th
        out.append((c, th, q1, q2))
    return out


def _ball_pair(layers, digits, bits):
    with mpmath.workprec(bits + 64):
        cols = list(zip(*layers))
        names = ("K", "Theta", "q1", "q2")

        def vals(col, name):
            out = []
            for i, x in enumerate(col):
                mid, rad = to_mpmath(x)
                out.append(mp_value(mid, rad, digits, note=f"{name}^{i}; Arb ball arithmetic on the closed forms"))
            return tuple(out)

        return DeepPair(*(vals(col, n) for col, n in zip(cols, names)), "ball")


def _tight(x, digits: int) -> bool:
    """The ball certifies ``digits`` significant digits (or pins a value below 10^-(digits+20))."""
    tol = arb(10) ** -(digits + 2)
    return bool(x.rad() <= abs(x.mid()) * tol or x.rad() <= tol * arb(10) ** -18)


def _exact_recursion(T, q1, q2, c, depth, sw, sb, digits):
    try:
        Ks, Ts, Q1, Q2 = [c], [c], [q1], [q2]
        th = c
        for _ in range(depth):
            k = closed_form(T, q1, q2, c)
            kd = closed_form(T, q1, q2, c, derivative=True)
            if k is None or kd is None:
                return None
            nq1 = sw * closed_form(T, q1, q1, q1) + sb
            nq2 = sw * closed_form(T, q2, q2, q2) + sb
            c = sw * k + sb
            th = c + sw * kd * th
            q1, q2 = nq1, nq2
            Ks.append(c)
            Ts.append(th)
            Q1.append(q1)
            Q2.append(q2)
    except ValidityError:
        return None

    def val(e, name):
        return Value.from_exact(e, digits, note=name)

    return DeepPair(
        tuple(val(e, f"K^{i}") for i, e in enumerate(Ks)),
        tuple(val(e, f"Theta^{i}") for i, e in enumerate(Ts)),
        tuple(val(e, f"q1^{i}") for i, e in enumerate(Q1)),
        tuple(val(e, f"q2^{i}") for i, e in enumerate(Q2)),
        "exact",
    )


def _mp_recursion(T, q1, q2, c, depth, sw, sb, digits):
    wd = digits + 10
    with mpmath.workdps(wd):
        swm, sbm = mpmath.mpf(sympy.N(sw, wd)), mpmath.mpf(sympy.N(sb, wd))
        cur = {k: (mpmath.mpf(sympy.N(v, wd)), mpmath.mpf(0)) for k, v in (("q1", q1), ("q2", q2), ("c", c))}
        th = cur["c"]
        out = {"K": [cur["c"]], "T": [th], "q1": [cur["q1"]], "q2": [cur["q2"]]}
        for _ in range(depth):
            # the map is evaluated at rational points near the enclosure's centres; the distance
            # is added to the enclosure radius
            pts = {k: _rat(v, digits) for k, (v, _e) in cur.items()}
            rad = {k: e + abs(mpmath.mpf(sympy.N(pts[k], wd)) - v) for k, (v, e) in cur.items()}
            if pts["c"] ** 2 > pts["q1"] * pts["q2"]:
                pts["c"] = sympy.sign(pts["c"]) * sympy.sqrt(pts["q1"] * pts["q2"])
            lips = {}
            for key in ("q1", "q2"):
                q = pts[key]
                lips[key] = tuple(_moment(T.expr, q, k, digits) for k in range(4))
            if not all(mpmath.isfinite(lips[k][1]) and mpmath.isfinite(lips[k][2]) for k in lips):
                raise ValidityError(
                    f"no certified deep kernel for {T.label}: f' or f'' has a jump (the layer map is not Lipschitz) "
                    "and no closed form is recognised"
                )
            (a0, a1, a2, a3), (b0, b1, b2, b3) = lips["q1"], lips["q2"]
            L_c = mpmath.sqrt(a1 * b1)
            L_cd = mpmath.sqrt(a2 * b2)
            L_q = mpmath.sqrt(a2 * b0) / 2 + mpmath.sqrt(b2 * a0) / 2
            drift = L_c * rad["c"] + L_q * max(rad["q1"], rad["q2"])
            # heat equation on Kdot = E[f'(u) f'(v)]: |d Kdot / d q1| = |E[f'''(u) f'(v)]| / 2
            L_qd = mpmath.sqrt(a3 * b1) / 2 + mpmath.sqrt(b3 * a1) / 2
            rq = max(rad["q1"], rad["q2"])
            drift_d = L_cd * rad["c"] + (L_qd * rq if rq else 0)  # inf (uncertified) only when needed
            p = dual_map(T, pts["q1"], pts["q2"], pts["c"], digits + 5)
            d1 = dual_map(T, pts["q1"], pts["q1"], pts["q1"], digits + 5, derivative=False)
            d2 = dual_map(T, pts["q2"], pts["q2"], pts["q2"], digits + 5, derivative=False)
            k, ek = mpmath.mpf(p.nngp.value), value_error(p.nngp) + drift
            kd, ekd = mpmath.mpf(p.derivative.value), value_error(p.derivative) + drift_d
            nq1 = (
                swm * mpmath.mpf(d1.nngp.value) + sbm,
                swm * (value_error(d1.nngp) + 2 * L_q * rad["q1"] + a1 * rad["q1"]),
            )
            nq2 = (
                swm * mpmath.mpf(d2.nngp.value) + sbm,
                swm * (value_error(d2.nngp) + 2 * L_q * rad["q2"] + b1 * rad["q2"]),
            )
            nc = (swm * k + sbm, swm * ek)
            tv, te = th
            th = (nc[0] + swm * kd * tv, nc[1] + swm * (abs(kd) * te + abs(tv) * ekd + ekd * te))
            cur = {"q1": nq1, "q2": nq2, "c": nc}
            out["K"].append(nc)
            out["T"].append(th)
            out["q1"].append(nq1)
            out["q2"].append(nq2)

        def vals(lst, name):
            return tuple(mp_value(v, e, digits, note=f"{name}^{i}") for i, (v, e) in enumerate(lst))

        return DeepPair(
            vals(out["K"], "K"), vals(out["T"], "Theta"), vals(out["q1"], "q1"), vals(out["q2"], "q2"), "mpmath"
        )


@dataclass(frozen=True)
class DeepGram:
    """float64 Gram matrices of the NNGP and NTK with their certified maximum absolute errors."""

    nngp: np.ndarray
    ntk: np.ndarray
    nngp_err: float
    ntk_err: float
    q: tuple  # the common diagonal q^l, l = 0..L (floats)
    orders: tuple  # the Hermite order used per layer


def _horner(coef: np.ndarray, r: np.ndarray) -> np.ndarray:
    out = np.full_like(r, coef[-1])
    for a in coef[-2::-1]:
        out *= r
        out += a
    return out


#: the Hermite orders a Gram layer may use: the first whose tail at the layer's largest
#: off-diagonal |correlation| is below GRAM_TAIL of the scale (one shared quadrature each)
GRAM_ORDERS = (32, 48, 72, 120, 200)
GRAM_TAIL = 1e-16


def _derivative_chain(expr, n: int) -> list:
    """[f, f', ..., f^(n)] (smooth parts; None from the first derivative with point masses on)."""
    out = [expr]
    for _ in range(n):
        if out[-1] is None:
            out.append(None)
            continue
        smooth, masses = split_derivative(teacher(out[-1]))
        out.append(None if masses else smooth)
    return out


@memoize(maxsize=64)
def layer_pass(expr, q, M: int, digits: int):
    """One shared quadrature for a Gram layer at diagonal q (an exact rational), cached.

    Returns ``(a, R_hi, moments)``: a = [(a_m, err)] the Hermite coefficients of f(sqrt(q) x),
    m <= M; R_hi a certified upper bound of the Parseval remainder E[f(sqrt(q) g)^2] - sum a_m^2;
    moments[k] = (value, err) of E[(f^(k)(sqrt(q) g))^2], k = 0..3 (None when f^(k) has point
    masses).  All integrands share the nodes of :func:`mp_expect_vector` (two precisions), so f and
    its derivatives are evaluated once per node, and all h_m at a node come from one Arb power
    series (:func:`icl_symbolic.engine.hermite.hermite_sums`); for an odd or even f only [0, inf)
    is integrated (exact symmetry).  Each error is the larger of the two runs'
    difference and mpmath's estimates (the rule of ``coeffs``).  Paper: a_m of Eq. (2), p. 2.
    """
    fns = [None if d is None else teacher(d).mp for d in _derivative_chain(expr, 3)]
    live = [k for k, fn in enumerate(fns) if fn is not None]
    T = teacher(expr)
    plan = quadrature_plan(T, digits, q, T.label, M + 5)
    if not plan.scale.covered:
        raise ValidityError(f"no certified Gram layer for {T.label}: {plan.scale.reason}")
    with mpmath.workdps(digits + 30):
        rq = 1 / mpmath.sqrt(mpmath.mpf(sympy.N(q, digits + 30)))

    def fbatch(us, ss, Q):
        # the Hermite sums of s f(u) at x = u / sqrt(q), the Hermite variable of u ~ N(0, q), with
        # Q fractional bits (hermite_sums), then the squares of f and its derivatives
        vals = [[fns[k](u) for k in live] for u in us]
        out = hermite_sums([u * rq for u in us], [s * v[0] for s, v in zip(ss, vals)], M, Q)
        return out + [sum(to_fixed((s * v[j] * v[j])._mpf_, Q) for s, v in zip(ss, vals)) for j in range(len(live))]

    # an odd or even f: f h_m has the parity of f times (-1)^m, the squares are even
    par = hermite_parity(expr, M)
    ints = Integrands(
        fbatch,
        M + 1 + len(live),
        scaled=True,
        fixed=True,
        batch=True,
        parity=None if par is None else par + (1,) * len(live),
    )
    res = mp_expect_vector(ints, q, digits, plan.points)
    with mpmath.workdps(digits + 20):
        a = [(v, e) for v, e, _c in res[: M + 1]]
        moms = [None] * 4
        for j, k in enumerate(live):
            v, e, _c = res[M + 1 + j]
            moms[k] = (v, e)
        low = sum(max(abs(v) - e, 0) ** 2 for v, e in a)  # a lower bound of sum a_m^2
        R_hi = max(moms[0][0] + moms[0][1] - low, mpmath.mpf(0))
    return a, R_hi, tuple(moms)


def _gram_layer(T: Teacher, q, rmax_hi: float, digits: int):
    """The first order of GRAM_ORDERS whose tails (K and Kdot) are small: (M, a, moments, tails).

    After a pass at order M falls short, the next order tried is the first whose tail would pass
    with the current remainder R_M (a remainder only shrinks with the order), skipping the rest.
    """
    tail = tailD = np.inf
    M = GRAM_ORDERS[0]
    while True:
        a, R_hi, moms = layer_pass(T.expr, q, M + 1, digits)
        if moms[1] is None:
            raise ValidityError(f"no certified deep Gram for {T.label}: f has a jump (its NTK map is not Lipschitz)")
        scale = max(float(moms[0][0]), 1.0)
        with mpmath.workdps(digits + 10):
            r, qm = mpmath.mpf(rmax_hi), mpmath.mpf(sympy.N(q, digits + 10))

            def tails(order, r=r, qm=qm, R_hi=R_hi):
                t0 = float(tail_weight(order + 1, r, 0) * R_hi)
                return t0, (float(tail_weight(order + 1, r, 1) / r * R_hi / qm) if r else 0.0)

            tail, tailD = tails(M)
            if max(tail, tailD) <= GRAM_TAIL * scale:
                return M, a, moms, tail, tailD
            bigger = [m for m in GRAM_ORDERS if m > M]
            if not bigger:
                break
            M = next((m for m in bigger if max(tails(m)) <= GRAM_TAIL * scale), bigger[-1])
    raise ValidityError(
        f"the Hermite tail of {T.label} at |correlation| {rmax_hi:.4f} is {max(tail, tailD):.1e} at order "
        f"{GRAM_ORDERS[-1]}: no certified float64 Gram (less correlated inputs)"
    )


def _sphere_correlations(X):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 1 or not np.all(np.isfinite(X)):
        raise ICLError("X must be a finite 2-D array (rows are inputs)")
    norms = np.linalg.norm(X, axis=1)
    if np.any(norms == 0):
        raise ICLError("X has a zero row: it has no direction on the sphere")
    U = X / norms[:, None]
    R = np.clip(U @ U.T, -1, 1)
    np.fill_diagonal(R, 1)
    return R, X.shape[1]


def deep_gram(f, X, depth: int, sigma_w2=1, sigma_b2=0, digits: int = 20) -> DeepGram:
    """NNGP and NTK Gram matrices of the rows of X (each taken on the sphere of radius sqrt(d):
    x -> sqrt(d) x / |x|), float64, with certified maximum errors over all entries.

    Per layer the map of the correlation is the certified Hermite polynomial of f(sqrt(q) g), its
    order the first of GRAM_ORDERS whose tail at the largest off-diagonal |correlation| is below
    1e-16 of the scale, evaluated by Horner's rule.  Refuses (ValidityError) when no order reaches
    that, or when f' has jumps.  Paper: the dual kernel of Sec. 2, Eq. (2), p. 2, layer by layer.
    """
    sw, sb = _check(depth, sigma_w2, sigma_b2)
    if not isinstance(digits, int) or isinstance(digits, bool) or not 17 <= digits <= 60:
        raise ICLError(f"digits (of the coefficient passes) must be an integer between 17 and 60, got {digits!r}")
    T: Teacher = teacher(f)
    if T.expr is None:
        raise ICLError("deep kernels need a teacher in the input language, not a Python callable")
    if closed_family(T) is not None:  # relu, relu^2, erf (step, sign refused): engine/dual_gram_closed.py
        K, Th, eK, eT, qs = closed_gram(T, *_sphere_correlations(scale_rows(X)), depth, sw, sb)
        return DeepGram(K, Th, eK, eT, qs, ())  # orders () = the closed-form route, no Hermite order
    R, d = _sphere_correlations(X)
    n = R.shape[0]
    swf, sbf = float(sw), float(sb)
    q = sw + sb  # exact: <x, x>/d = 1 on the sphere
    e_q = mpmath.mpf(0)  # |q used - true diagonal| (rational rounding and quadrature errors)
    K = swf * R + sbf
    Th = K.copy()
    # float64 error of the input correlations: a dot product of unit vectors, gamma_(d+2)
    eK = swf * (d + 4) * EPS + 4 * EPS * (swf + sbf)
    eT = eK
    qs, orders = [float(q)], []
    off = ~np.eye(n, dtype=bool)
    for _ in range(depth):
        qf = float(q)
        rho_l = K / qf
        rmax = float(np.max(np.abs(rho_l[off]))) if n > 1 else 0.0
        rmax_hi = min(1.0, rmax + (eK + 2 * EPS) / qf * 2)
        if rmax_hi >= 1:
            raise ValidityError(f"a pair of inputs is (numerically) parallel at layer {len(qs)}: no certified tail")
        M, a, moms, tail, tailD = _gram_layer(T, q, rmax_hi, digits)
        st = _layer_terms(a, moms, q, e_q, digits)
        ec = eK + 2 * EPS * qf  # the covariance error, with the rounding of rho = K / q
        # Horner's rounding on the off-diagonal entries (|rho| <= rmax_hi there; the diagonal is set
        # below): gamma_(2n) sum_m |c_m| rmax_hi^m for degree n (Higham, Accuracy and Stability, 5.1)
        rndK, rndD = (_horner_rounding(st[key], rmax_hi) for key in ("cK", "cD"))
        kmap = _horner(st["cK"], rho_l)
        dmap = _horner(st["cD"], rho_l)
        # the diagonal is the map at rho = 1: E[f^2] and E[f'^2]
        np.fill_diagonal(kmap, st["f0"])
        np.fill_diagonal(dmap, st["f1v"])
        # |dK/dc| <= E[f'^2], |dKdot/dc| <= E[f''^2] (Cauchy-Schwarz), c = q rho moved by eK
        eK_map = tail + st["coef_err"] + rndK + st["f1"] * ec + st["dq_K"]
        eD_map = tailD + st["coefD_err"] + rndD + st["f2"] * ec + st["dq_D"]
        newK = swf * kmap + sbf
        newT = newK + swf * dmap * Th
        eK_new = swf * eK_map + 2 * EPS * float(np.max(np.abs(newK))) + EPS * swf * float(np.max(np.abs(kmap)))
        eT = eK_new + swf * (st["f1"] * eT + float(np.max(np.abs(Th))) * eD_map + eD_map * eT)
        # the float64 operations of newT = newK + sw * dmap * Th: the two products and the sum
        eT += 4 * EPS * float(np.max(np.abs(newT))) + 2 * EPS * swf * float(np.max(np.abs(dmap))) * float(
            np.max(np.abs(Th))
        )
        K, Th, eK = newK, newT, eK_new
        q, e_q = _next_q(sw, sb, moms[0], digits)
        qs.append(float(q))
        orders.append(M)
        if not np.isfinite(eT):
            raise ValidityError(
                f"no certified NTK Gram for {T.label}: f'' is not square-integrable (a kink); "
                "deep_pair certifies pairs of closed-form activations in ball arithmetic"
            )
    return DeepGram(K, Th, float(eK), float(eT), tuple(qs), tuple(orders))


def _horner_rounding(coef: np.ndarray, r: float) -> float:
    """A bound on the float64 rounding of Horner's rule for sum_m coef_m x^m at every |x| <= r:
    gamma_(2n) sum_m |coef_m| r^m, n the degree, u = 2^-53 (the sum taken in mpmath, rounded up)."""
    n = len(coef) - 1
    u = mpmath.mpf(2) ** -53
    with mpmath.workdps(30):
        absum = mpmath.fsum(abs(mpmath.mpf(float(c))) * mpmath.mpf(r) ** m for m, c in enumerate(coef))
        return float(2 * n * u / (1 - 2 * n * u) * absum * (1 + mpmath.mpf(10) ** -12))


def _layer_terms(a, moms, q, e_q, digits):
    """float64 coefficients of K and Kdot in rho at diagonal q, their errors, the moments (upper
    bounds, as floats) and the effect of the diagonal's own error e_q (heat equation:
    |dK/dq_i| <= sqrt(E f''^2 E f^2) / 2 and |dKdot/dq_i| <= sqrt(E f'''^2 E f'^2) / 2, both
    variances moving)."""
    with mpmath.workdps(digits + 10):
        qm = mpmath.mpf(sympy.N(q, digits + 10))
        up = [mpmath.inf if m is None else abs(m[0]) + m[1] for m in moms]
        ak = [v for v, _e in a]
        ea = [e for _v, e in a]
        M = len(a) - 2
        cK = np.array([float(v**2) for v in ak])
        cD = np.array([float((m + 1) * ak[m + 1] ** 2 / qm) for m in range(M + 1)])
        coef_err = float(sum(2 * abs(v) * e + e * e for v, e in zip(ak, ea))) + EPS * float(np.abs(cK).sum())
        coefD_err = float(sum((m + 1) * (2 * abs(ak[m + 1]) * ea[m + 1] + ea[m + 1] ** 2) for m in range(M + 1)) / qm)
        coefD_err += EPS * float(np.abs(cD).sum())
        # the diagonals E[f^2], E[f'^2] carry their own quadrature errors
        coef_err += float(moms[0][1])
        coefD_err += float(moms[1][1])
        dq_K = float(mpmath.sqrt(up[2] * up[0]) * e_q) if e_q else 0.0
        dq_D = float(mpmath.sqrt(up[3] * up[1]) * e_q) if e_q else 0.0
        return {
            "cK": cK,
            "cD": cD,
            "coef_err": coef_err,
            "coefD_err": coefD_err,
            "f0": float(moms[0][0]),
            "f1v": float(moms[1][0]),
            "f1": float(up[1]),
            "f2": float(up[2]) if mpmath.isfinite(up[2]) else np.inf,
            "dq_K": dq_K,
            "dq_D": dq_D,
        }


def _next_q(sw, sb, m0, digits):
    """The next diagonal sigma_w^2 E[f^2] + sigma_b^2 as a rational, and a bound on its distance
    to the true diagonal (the rational rounding plus the quadrature error)."""
    v, e = m0
    with mpmath.workdps(digits + 20):
        swm, sbm = (mpmath.mpf(sympy.N(x, digits + 20)) for x in (sw, sb))
        qn = sw * _rat(v, digits + 5) + sb
        dist = abs(mpmath.mpf(sympy.N(qn, digits + 20)) - (swm * v + sbm))
        return qn, dist + swm * e
