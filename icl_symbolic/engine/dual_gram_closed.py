r"""Deep NNGP / NTK Gram matrices of closed-form activations in float64, with a proven error bound.

For f = alpha B(beta g) with B = relu (arc-cosine kernels n = 1, 0), relu^2 (n = 2, 1; Cho and Saul
2009) or erf (Williams 1997), on inputs on the sphere of radius sqrt(d) (every layer has one diagonal
q^l), the layer maps are functions of the correlation rho = K^l / q^l alone:

    relu:    K_f = A b q J1(rho) / (2 pi),         Kdot_f = A b J0(rho) / (2 pi),
    relu^2:  K_f = A b^2 q^2 J2(rho) / (2 pi),     Kdot_f = 4 A b^2 q J1(rho) / (2 pi),
    erf:     K_f = A (2 / pi) asin(kappa rho),     Kdot_f = 4 A b / (pi (1 + 2 b q)) (1 - kappa^2 rho^2)^(-1/2),

with A = alpha^2, b = beta^2, kappa = 2 b q / (1 + 2 b q), J0 = pi - acos(rho),
J1 = sqrt(1 - rho^2) + (pi - acos(rho)) rho, J2 = 3 rho sqrt(1 - rho^2) + (pi - acos(rho)) (1 + 2 rho^2).
The NTK recursion is Theta^(l+1) = K^(l+1) + sigma_w^2 Kdot_f Theta^l (Jacot et al. 2018; Arora et
al. 2019, "On exact computation with an infinitely wide neural net").

The matrices are computed in numpy float64; every array operation carries an absolute error bound
(one number per matrix, the maximum over the entries) by the standard model fl(a op b) = (a op b)(1 + d),
|d| <= u = 2^-53 (IEEE 754 round to nearest; sqrt and division correctly rounded).  The bounds are
accumulated in mpmath at 30 digits and the final bound is enlarged by a factor 1 + 1e-20.  The one
assumption that is not IEEE 754: numpy's arccos and arcsin are within LIBM_ULPS = 4 units in the last
place of the exact value (numpy documents a maximum ULP error of 4 for its SVML-backed AVX-512 loops;
glibc's manual lists smaller measured maxima).  That assumption is documented, not proven; each layer
therefore also re-evaluates a sample of entries (those with the largest |rho| and a seeded random
sample) from the SymPy closed forms of :mod:`icl_symbolic.engine.dual` in Arb ball arithmetic and
refuses if any float entry lies outside its claimed rounding bound.

Propagation: the error of layer l enters the correlation of layer l + 1 (with the rounding of
rho = K / q and the diagonal's own error) and passes through each map by its Lipschitz constant on
|rho| <= r, r the largest off-diagonal |correlation| enlarged by its error: J0' = (1 - rho^2)^(-1/2),
J1' = pi - acos(rho) <= pi, J2' = 4 J1, asin(kappa rho)' = kappa (1 - kappa^2 r^2)^(-1/2).  J0' blows up
at |rho| -> 1: the call refuses when r >= 1.  The diagonal q^l, Theta^l(x, x) is carried in Arb balls.
Paper: the dual kernel of Sec. 2, Eq. (2), p. 2 of arXiv:2610.10761, layer by layer.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
import sympy
from flint import arb

from icl_symbolic.core.errors import ValidityError
from icl_symbolic.engine.dual import closed_form, closed_form_source
from icl_symbolic.engine.dual_ball import evaluate, from_rational, to_mpmath, working_precision

__all__ = ["CLOSED_GRAM_FAMILIES", "LIBM_ULPS", "closed_family", "closed_gram", "scale_rows"]

#: the activations B of f = alpha B(beta g) this route evaluates
CLOSED_GRAM_FAMILIES = ("relu", "relu^2", "erf")
#: the assumed accuracy of numpy's arccos / arcsin in units in the last place (documented, not proven)
LIBM_ULPS = 4
#: entries per layer re-evaluated in Arb (half the largest |rho|, half seeded random)
SPOT_CHECKS = 32

U = mpmath.mpf(2) ** -53
ETA = mpmath.mpf(2) ** -1074  # the smallest subnormal: an absolute floor for underflow
BITS = 160


def _gamma(k) -> mpmath.mpf:
    """gamma_k = k u / (1 - k u) (Higham, Accuracy and Stability of Numerical Algorithms, Sec. 3.1)."""
    return k * U / (1 - k * U)


def _up(x) -> mpmath.mpf:
    return mpmath.mpf(float(x))


def _hi(x: arb) -> mpmath.mpf:
    """An upper bound of |x| for a ball x (midpoint plus radius, the sum at 30 digits)."""
    mid, rad = to_mpmath(x)
    return abs(mid) + rad


def _maxabs(v) -> mpmath.mpf:
    return mpmath.mpf(float(np.max(np.abs(v))))


@dataclass
class _Tracked:
    """A float64 array (or scalar) v, an absolute error bound e of every entry against the exact
    value it stands for, and m = max |v|."""

    v: object
    e: mpmath.mpf
    m: mpmath.mpf

    @classmethod
    def of(cls, v, e=0):
        return cls(v, mpmath.mpf(e), _maxabs(v))


def _round(v):
    """The rounding of one correctly rounded operation whose float results are v: u/(1-u) max |v|."""
    return U / (1 - U) * _maxabs(v) + ETA


def _add(a: _Tracked, b: _Tracked, sign: int = 1) -> _Tracked:
    v = a.v + b.v if sign > 0 else a.v - b.v
    return _Tracked.of(v, a.e + b.e + _round(v))


def _mul(a: _Tracked, b: _Tracked) -> _Tracked:
    v = a.v * b.v
    return _Tracked.of(v, a.e * (b.m + b.e) + a.m * b.e + _round(v))


def _div(a: _Tracked, b: _Tracked) -> _Tracked:
    """a / b for a scalar b > b.e: |A/B - a/b| <= a.e/|b| + |A| |B - b| / (|B| |b|)."""
    v = a.v / b.v
    bl = abs(_up(b.v)) - b.e
    return _Tracked.of(v, a.e / abs(_up(b.v)) + (a.m + a.e) * b.e / (bl * abs(_up(b.v))) + _round(v))


def _libm(fn, a: _Tracked) -> _Tracked:
    """fn (arccos or arcsin) at the exact float inputs a.v (a.e must be 0), LIBM_ULPS ulps assumed:
    |fl - f| <= 2 LIBM_ULPS u |f| (one ulp of y is at most 2u|y| for a normal y), plus a subnormal floor."""
    assert a.e == 0
    v = fn(a.v)
    rel = 2 * LIBM_ULPS * U
    return _Tracked.of(v, rel / (1 - rel) * _maxabs(v) + LIBM_ULPS * ETA)


def _const(x) -> _Tracked:
    """A float64 scalar standing for the Arb ball (or exact number) x, with its distance."""
    if not isinstance(x, arb):
        x = from_rational(x) if not isinstance(x, float) else arb(x)
    f = float(x.mid())
    return _Tracked.of(f, _hi(arb(f) - x))


def _rho_parts(rho: _Tracked):
    """t = pi - acos(rho) and s = sqrt((1 - rho)(1 + rho)) at exact float inputs (rho.e = 0).
    s: the argument has relative error gamma_3, sqrt of it at most gamma_3 more, the sqrt's rounding
    u: relative gamma_4 in all, a relative bound (no blow-up at |rho| -> 1)."""
    a = _libm(np.arccos, rho)
    t = _add(_const(arb.pi()), a, sign=-1)
    s_v = np.sqrt((1.0 - rho.v) * (1.0 + rho.v))
    g4 = _gamma(4)
    s = _Tracked.of(s_v, g4 / (1 - g4) * _maxabs(s_v) + 4 * ETA)
    return t, s


def _J(n: int, rho: _Tracked, parts) -> _Tracked:
    t, s = parts
    if n == 0:
        return t
    if n == 1:
        return _add(s, _mul(t, rho))
    two_rho2 = _mul(_Tracked.of(2.0), _mul(rho, rho))
    return _add(_mul(_mul(_Tracked.of(3.0), rho), s), _mul(t, _add(_Tracked.of(1.0), two_rho2)))


def _lip_J(n: int, r) -> mpmath.mpf:
    """max |J_n'| on |rho| <= r (r < 1 for n = 0)."""
    r = mpmath.mpf(r)
    J1 = mpmath.sqrt(1 - r**2) + (mpmath.pi - mpmath.acos(r)) * r
    return {0: 1 / mpmath.sqrt(1 - r**2), 1: mpmath.pi - mpmath.acos(r), 2: 4 * J1}[n]


@dataclass(frozen=True)
class _Family:
    name: str
    A: object  # alpha^2 (exact); for relu and relu^2 only the products A b, A b^2 enter
    b: object  # beta^2 (exact)


#: closed_form_source of the table entry -> family name (None: NTK infinite on the diagonal)
_SOURCES = {
    "arc-cosine kernel n = 1": "relu",
    "arc-cosine kernel n = 2": "relu^2",
    "Williams 1997": "erf",
    "arc-cosine kernel n = 0": "heaviside",
    "arcsine law": "sign",
}


def closed_family(T) -> _Family | None:
    """The family of f = alpha B(beta g) when B is one of CLOSED_GRAM_FAMILIES (or one whose NTK is
    infinite on the diagonal: heaviside, sign, which the route refuses), else None.  alpha^2 and
    beta^2 are read off the closed forms: relu: K_f(1, 1, 1) = A b / 2; relu^2: Kdot_f(1, 1, 1) = 2 A b^2;
    erf: Kdot_f(0, 0, 0) / Kdot_f(1, 1, 0) = 1 + 2 b, Kdot_f(0, 0, 0) = 4 A b / pi."""
    src = closed_form_source(T) or ""
    name = next((v for k, v in _SOURCES.items() if k in src), None)
    if name is None:
        return None
    if name in ("heaviside", "sign"):
        return _Family(name, None, None)
    one = sympy.Integer(1)
    if name == "relu":
        return _Family(name, sympy.nsimplify(2 * closed_form(T, one, one, one)), one)
    if name == "relu^2":
        return _Family(name, sympy.nsimplify(closed_form(T, one, one, one, derivative=True) / 2), one)
    k0 = closed_form(T, 0, 0, 0, derivative=True)
    b = sympy.nsimplify(sympy.simplify((k0 / closed_form(T, one, one, 0, derivative=True) - 1) / 2))
    return _Family(name, sympy.nsimplify(sympy.simplify(k0 * sympy.pi / (4 * b))), b)


def scale_rows(X):
    """Each row of X times the power of two that puts its largest |entry| in [1, 2) (exact; the
    direction is unchanged, the squared norms cannot overflow).  Arrays that are not finite 2-D float
    arrays with non-zero rows are returned as they are (the caller refuses them)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 1 or not np.all(np.isfinite(X)):
        return X
    mx = np.max(np.abs(X), axis=1)
    if np.any(mx == 0):
        return X
    _, ex = np.frexp(mx)
    return np.ldexp(X, -(ex - 1)[:, None])


def input_correlation_error(d: int) -> mpmath.mpf:
    """A bound on |fl(rho_ij) - x_i.x_j / (|x_i| |x_j|)| for the correlations of
    :func:`icl_symbolic.engine.dual_deep._sphere_correlations` on rows scaled by :func:`scale_rows`:
    the norms carry relative gamma_(d+1) (a sum of d squares, any order, then sqrt), the unit rows
    delta = (u + gamma_(d+1)) / (1 - gamma_(d+1)), the dot products (BLAS, any summation order)
    gamma_d (1 + delta)^2, and the rows' own error 2 delta + delta^2; plus underflow floors."""
    with mpmath.workdps(30):
        g1 = _gamma(d + 1)
        delta = (U + g1) / (1 - g1) + d * ETA
        return _gamma(d) * (1 + delta) ** 2 + 2 * delta + delta**2 + 4 * d * ETA


class _Maps:
    """The SymPy closed forms of K_f and Kdot_f (off the diagonal and on it), for Arb evaluation."""

    def __init__(self, T):
        self.Q, self.C = sympy.symbols("Q C", positive=True)
        Q, C = self.Q, self.C
        self.k = closed_form(T, Q, Q, C)
        self.kd = closed_form(T, Q, Q, C, derivative=True)
        self.kq = sympy.simplify(closed_form(T, Q, Q, Q))
        try:
            self.kdq = sympy.simplify(closed_form(T, Q, Q, Q, derivative=True))
        except ValidityError as exc:
            raise ValidityError(
                f"no deep NTK Gram for {T.label}: its derivative map is infinite on the diagonal (a jump)"
            ) from exc

    def diag(self, q: arb):
        return evaluate(self.kq, {self.Q: q}), evaluate(self.kdq, {self.Q: q})

    def pair(self, q: arb, c: arb):
        return evaluate(self.k, {self.Q: q, self.C: c}), evaluate(self.kd, {self.Q: q, self.C: c})


def _layer_maps(fam: _Family, q: arb, sw: arb, rho: _Tracked, r_hi):
    """(sigma_w^2 K_f, sigma_w^2 Kdot_f) at the float correlations rho.v as tracked arrays with
    their rounding only (rho taken exact), and the Lipschitz constants (in rho) of both."""
    A, b = from_rational(fam.A), from_rational(fam.b)
    pi = arb.pi()
    if fam.name in ("relu", "relu^2"):
        parts = _rho_parts(rho)
        n = 1 if fam.name == "relu" else 2
        cK = sw * A * b**n * q**n / (2 * pi)
        cD = sw * A * b * (1 if n == 1 else 4 * b * q) / (2 * pi)
        GK, GD = _J(n, rho, parts), _J(n - 1, rho, parts)
        return (_mul(_const(cK), GK), _mul(_const(cD), GD)), (_lip_J(n, r_hi), _lip_J(n - 1, r_hi)), (cK, cD)
    kappa = 2 * b * q / (1 + 2 * b * q)
    x = _mul(_const(kappa), rho)
    GK = _libm(np.arcsin, _Tracked.of(x.v))
    GK.e += x.e / mpmath.sqrt(1 - (x.m + x.e) ** 2)  # asin' on |x| <= x.m + x.e < kappa-ish < 1
    one = _Tracked.of(1.0)
    y = _mul(_add(one, x, sign=-1), _add(one, x))
    ylo = mpmath.mpf(float(np.min(y.v))) - y.e
    z_v = 1.0 / np.sqrt(y.v)
    # sqrt and the division correctly rounded: relative 2u/(1-u) <= gamma_2; y's error by the
    # Lipschitz constant of y^(-1/2) on [ylo, 1]
    GD = _Tracked.of(z_v, _gamma(2) / (1 - _gamma(2)) * _maxabs(z_v) + y.e / (2 * ylo**1.5))
    cK = sw * A * 2 / pi
    cD = sw * A * b * 4 / (pi * (1 + 2 * b * q))
    km = _hi(kappa)
    r = mpmath.mpf(r_hi)
    lips = (km / mpmath.sqrt(1 - km**2 * r**2), km**2 * r / (1 - km**2 * r**2) ** 1.5)
    return (_mul(_const(cK), GK), _mul(_const(cD), GD)), lips, (cK, cD)


def _spot_check(maps: _Maps, q: arb, sw: arb, rho_v, kmap: _Tracked, dmap: _Tracked, seed: int) -> None:
    """The layer's float map values at SPOT_CHECKS off-diagonal entries against the SymPy closed forms
    in Arb balls (exact float correlation, the ball q): outside the claimed rounding bound -> refuse."""
    n = rho_v.shape[0]
    if n < 2:
        return
    flat = np.abs(rho_v).ravel()
    half = SPOT_CHECKS // 2
    top = np.argpartition(flat, -half)[-half:] if flat.size > half else np.arange(flat.size)
    rnd = np.random.default_rng(seed).integers(0, flat.size, half)
    for idx in np.concatenate([top, rnd]):
        i, j = divmod(int(idx), n)
        if i == j:
            continue
        k, kd = maps.pair(q, q * arb(float(rho_v[i, j])))
        for val, tr in ((sw * k, kmap), (sw * kd, dmap)):
            err = abs(arb(float(tr.v[i, j])) - val)
            if not err.lower() <= arb(mpmath.nstr(tr.e, 25)):
                raise ValidityError(
                    f"a float64 layer map at rho = {float(rho_v[i, j])!r} is outside its rounding bound "
                    "(the libm accuracy assumption failed): no certified Gram"
                )


def _next_layer(st: dict, fam: _Family, maps: _Maps, sw: arb, sb_t: _Tracked, seed: int):
    K, Th, q = st["K"], st["Th"], st["q"]
    rho = _div(K, _const(q))
    np.fill_diagonal(rho.v, 0.0)  # the diagonal is set from the Arb balls below
    rho.m = _maxabs(rho.v)
    r_hi = rho.m + rho.e
    if r_hi >= 1:
        raise ValidityError(
            f"a pair of inputs is (numerically) parallel at layer {st['layer']}: |correlation| + error "
            f"{float(r_hi):.17g} >= 1, the NTK map's Lipschitz constant is unbounded; no certified Gram"
        )
    exact_rho = _Tracked(rho.v, mpmath.mpf(0), rho.m)
    (kmap, dmap), (LK, LD), (cK, cD) = _layer_maps(fam, q, sw, exact_rho, r_hi)
    _spot_check(maps, q, sw, rho.v, kmap, dmap, seed)
    # propagation of the correlation's error through the maps' Lipschitz constants
    kmap.e += _hi(cK) * LK * rho.e
    dmap.e += _hi(cD) * LD * rho.e
    newK = _add(kmap, sb_t)
    newT = _add(newK, _mul(dmap, Th))
    kq, kdq = maps.diag(q)
    q_next = sw * kq + from_rational(st["sb"])
    th_next = q_next + sw * kdq * st["th"]
    return {
        "K": _with_diag(newK, q_next),
        "Th": _with_diag(newT, th_next),
        "q": q_next,
        "th": th_next,
        "sb": st["sb"],
        "layer": st["layer"] + 1,
    }


def _with_diag(t: _Tracked, ball: arb) -> _Tracked:
    c = _const(ball)
    np.fill_diagonal(t.v, c.v)
    return _Tracked(t.v, max(t.e, c.e), _maxabs(t.v))


def closed_gram(T, R, d: int, depth: int, sw, sb):
    """(K^L, Theta^L, max error of K^L, max error of Theta^L, (q^0..q^L)) for the float64 input
    correlations R (unit diagonal) of rows in R^d, f of a closed-form family; raises ValidityError
    when f's NTK is infinite on the diagonal, a correlation is too close to +-1, the libm spot check
    fails or a bound is not finite.  ``sw``, ``sb`` exact rationals."""
    fam = closed_family(T)
    if fam is None:
        raise ValidityError(f"{T.label} has no closed-form Gram route")
    maps = _Maps(T)
    with working_precision(BITS), mpmath.workdps(30):
        swa, sba = from_rational(sw), from_rational(sb)
        R_t = _Tracked.of(np.array(R, dtype=float), input_correlation_error(d))
        sb_t = _const(sba)
        K0 = _add(_mul(_const(swa), R_t), sb_t)
        q0 = swa + sba
        st = {"K": _with_diag(K0, q0), "q": q0, "th": q0, "sb": sb, "layer": 0}
        st["Th"] = _Tracked(st["K"].v.copy(), st["K"].e, st["K"].m)
        qs = [float(q0.mid())]
        for layer in range(depth):
            st = _next_layer(st, fam, maps, swa, sb_t, seed=layer)
            qs.append(float(st["q"].mid()))
        eK, eT = (float(x.e * (1 + mpmath.mpf(10) ** -20)) for x in (st["K"], st["Th"]))
    if not (np.isfinite(eK) and np.isfinite(eT)):
        raise ValidityError(f"no certified Gram for {T.label}: the error bound is not finite")
    # float() rounds to nearest: move up by one ulp so the reported bound is an upper bound
    return st["K"].v, st["Th"].v, float(np.nextafter(eK, np.inf)), float(np.nextafter(eT, np.inf)), tuple(qs)
