r"""Gaussian expectations E[F(z)], z ~ N(0, omega): exact (SymPy) or mpmath.

Paper: the Hermite coefficients a_m = E[f(g) h_m(g)] (Eq. 2, p. 2), the
effective noise (Eq. 8, p. 3) and the Lemma 1 moments (Appendix B, Eqs.
(12)-(14), p. 8-9) are all one-dimensional Gaussian integrals; this module
computes them.

Exact rules
-----------
After substituting ``z = sqrt(omega) g`` every supported integrand is, on
each interval between its kinks/jumps, a finite sum of terms

.. math::  c\, g^k \exp(a g^2 + b g) \prod_i \operatorname{erf}(c_i g + d_i),

with ``b`` possibly complex (``sin``/``cos`` are rewritten through ``exp(±i u)``)
and ``a < 1/2``.  Without erf factors the integral over any interval ``(lo,
hi)`` is closed form: complete the square, ``g = mu + s t`` with ``A = 1/2 - a``,
``mu = b/(2A)``, ``s = 1/sqrt(2A)``, and use the truncated standard Gaussian
moments ``J_j(l,u) = int_l^u t^j phi(t) dt``, which satisfy
``J_j = l^{j-1} phi(l) - u^{j-1} phi(u) + (j-1) J_{j-2}``,
``J_0 = (erf(u/sqrt 2) - erf(l/sqrt 2))/2``.  Erf factors (full line only)
are removed by Stein's lemma ``E[t^j F(t)] = (j-1) E[t^{j-2} F] + E[t^{j-1} F']``
(the derivative of ``erf(alpha t + beta)`` is a Gaussian exponential), down to
the base cases ``E[erf(alpha t + beta)] = erf(beta / sqrt(1 + 2 alpha^2))`` and
``E[erf(alpha_1 t) erf(alpha_2 t)] = (2/pi) asin(2 alpha_1 alpha_2 /
sqrt((1 + 2 alpha_1^2)(1 + 2 alpha_2^2)))``.  Anything else (tanh, sigmoid,
log, compositions, erf on a half-line, three erfs, ...) is not "supported"
and goes to mpmath.

Numerical rule
--------------
Tanh-sinh quadrature (mpmath's nodes) on ``(-inf, b_1], [b_1, b_2], ...,
[b_k, inf)`` with the breakpoints ``b_i`` of F and 0 added, at ``digits + 10``
and again at ``digits + 20`` working digits; the error estimate is the larger
of mpmath's extrapolated quadrature error and the difference of the two runs
(the ``autoprec`` idea).  Several integrands sharing one expensive F are
integrated together (:func:`mp_expect_vector`).

Validity
--------
:func:`check_integrable` raises :class:`~icl_symbolic.core.errors.ValidityError`
for non-integrable singularities on the real line (``1/g``) and for growth at
infinity that beats the Gaussian (``exp(g**2)`` squared, ``exp(g**3)``), by
evaluating ``F`` at a handful of points: no timeouts are needed.

Examples
--------
>>> from icl_symbolic.engine.expr import parse_expr
>>> v = expect(parse_expr("g*sin(g)"))
>>> v.exact, v.method
(exp(-1/2), 'exact')
>>> v = expect(parse_expr("g*tanh(g)"), digits=20)
>>> v.method, mpmath.nstr(v.value, 15)
('mpmath', '0.605705509602159')
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Callable

import mpmath
import numpy as np
import sympy
from mpmath.calculus.quadrature import TanhSinh

from icl_symbolic.core.caches import memoize
from icl_symbolic.core.cost import Estimate, announced, expand_terms, poly_degree
from icl_symbolic.core.errors import ICLError, ValidityError
from icl_symbolic.core.values import Value, certified_digits
from icl_symbolic.engine import scales
from icl_symbolic.engine.expr import (
    HugeArgument,
    KinkError,
    Teacher,
    ae_diff,
    ae_simplify,
    breakpoints_of,
    g,
    parse_expr,
    real_zeros,
    resolve_kinks,
    teacher,
)

__all__ = [
    "expect",
    "Integrands",
    "quadrature_plan",
    "magnitude_bits",
    "QuadraturePlan",
    "uncertified_value",
    "callable_digits",
    "oscillation_splits",
    "singular_mass_bound",
    "check_panels",
    "exact_expectation",
    "exact_moments",
    "exact_work",
    "mp_expect_vector",
    "mp_value",
    "check_integrable",
    "gaussian_rate",
    "to_rational",
    "float_expect",
    "parity",
]

_I = sympy.I
#: the functions the exact rules rewrite as two exponentials of their argument (:func:`_trig_to_exp`)
_TWO_EXP = (sympy.sin, sympy.cos, sympy.sinh, sympy.cosh)
_SQRT2PI = sympy.sqrt(2 * sympy.pi)


class _Unsupported(Exception):
    """The integrand is outside the exact rules (falls back to mpmath)."""


def to_rational(x, name="omega"):
    """The package's one reading of a user number as an exact SymPy number.

    Accepts int, str (parsed by :func:`icl_symbolic.engine.expr.parse_expr`, never
    evaluated), SymPy numbers, floats and NumPy scalars (floats through their
    shortest repr, so 0.1 is 1/10, the number the user typed), mpmath numbers,
    and :class:`~icl_symbolic.core.values.Value` (its exact form when it has one).
    Anything else, or a non-real or non-finite number, is a one-line ICLError
    naming ``name``.

    >>> to_rational("0.1"), to_rational(0.3), to_rational(2)
    (1/10, 3/10, 2)
    """
    if isinstance(x, Value):
        x = x.exact if x.exact is not None else x.value
    if isinstance(x, sympy.Basic):
        val = x
    elif isinstance(x, (bool, np.bool_)):
        raise ICLError(f"{name}: expected a number, got {x!r}")
    elif isinstance(x, (int, np.integer)):
        val = sympy.Integer(int(x))
    elif isinstance(x, (float, np.floating)):
        if not math.isfinite(x):
            raise ICLError(f"{name}: {x!r} is not finite")
        val = sympy.Rational(repr(float(x)))
    elif isinstance(x, str):
        try:
            val = parse_expr(x, variables=())
        except ICLError as exc:
            raise ICLError(f"{name}: {exc}") from None
    else:
        try:
            val = sympy.Rational(str(mpmath.mpf(x)))
        except Exception:
            raise ICLError(f"{name}: cannot use {x!r} as a number") from None
    if val.free_symbols or val.is_real is not True:
        raise ICLError(f"{name}: {x!r} is not a real number")
    return val


# ---------------------------------------------------------------------------
# exact rules
# ---------------------------------------------------------------------------


def _phi(t):
    if t in (sympy.oo, -sympy.oo):
        return sympy.S.Zero
    return sympy.exp(-(t**2) / 2) / _SQRT2PI


def _Phi_diff(lo, hi):
    def erf_(t):
        if t == sympy.oo:
            return sympy.S.One
        if t == -sympy.oo:
            return -sympy.S.One
        return sympy.erf(t / sympy.sqrt(2))

    return (erf_(hi) - erf_(lo)) / 2


def _pow_lim(t, n):
    """t**n for a limit t (0 when t is infinite: it is multiplied by phi(t) = 0)."""
    if t in (sympy.oo, -sympy.oo):
        return sympy.S.Zero
    return t**n


def _trunc_moments(k, lo, hi):
    """J_j = int_lo^hi t^j phi(t) dt for j = 0..k (standard normal phi)."""
    J = [_Phi_diff(lo, hi)]
    if k >= 1:
        J.append(_phi(lo) - _phi(hi))
    for j in range(2, k + 1):
        J.append(_pow_lim(lo, j - 1) * _phi(lo) - _pow_lim(hi, j - 1) * _phi(hi) + (j - 1) * J[j - 2])
    return J


def _shift_limit(x, mu, s):
    if x in (sympy.oo, -sympy.oo):
        return x
    return sympy.expand((x - mu) / s)


@memoize(maxsize=4096)
def _gauss_exp_integral(k, a, b, lo, hi):
    """int_lo^hi g^k exp(a g^2 + b g) phi(g) dg, exact (a < 1/2 required)."""
    A = sympy.Rational(1, 2) - a
    # a complex a (sin(10*g**2) = Im exp(10 i g^2)) converges when Re A > 0; the completed square
    # then has a complex shift and scale, and the formulas continue analytically (arg s in (-pi/4, pi/4),
    # so erf at the infinite limits is still +-1)
    if not sympy.re(A).is_positive:
        raise ValidityError(
            f"divergent Gaussian integral: exp({a}*g**2) grows at least like the Gaussian weight decays"
        )
    mu = b / (2 * A)
    s = 1 / sympy.sqrt(2 * A)
    tl, tu = _shift_limit(lo, mu, s), _shift_limit(hi, mu, s)
    J = _trunc_moments(k, tl, tu)
    tot = sum(sympy.binomial(k, j) * mu ** (k - j) * s**j * J[j] for j in range(k + 1))
    return s * sympy.exp(b**2 / (4 * A)) * tot


@memoize(maxsize=4096)
def _std_erf_moment(j, erfs):
    """E[t^j prod erf(alpha_i t + beta_i)], t ~ N(0,1), by Stein's lemma (memoised: the recursion in j
    and the moments of every order of a Hermite pass share their lower moments; ``erfs`` a tuple)."""
    if not erfs:
        return _gauss_exp_integral(j, 0, 0, -sympy.oo, sympy.oo)
    if j >= 1:
        out = (j - 1) * _std_erf_moment(j - 2, erfs) if j >= 2 else sympy.S.Zero
        for i, (al, be) in enumerate(erfs):
            rest = erfs[:i] + erfs[i + 1 :]
            # d/dt erf(al t + be) = 2 al/sqrt(pi) exp(-(al t + be)^2)
            c = 2 * al / sympy.sqrt(sympy.pi) * sympy.exp(-(be**2))
            out += c * _term_integral(j - 1, -(al**2), -2 * al * be, rest, -sympy.oo, sympy.oo)
        return out
    if len(erfs) == 1:
        al, be = erfs[0]
        return sympy.erf(be / sympy.sqrt(1 + 2 * al**2))
    if len(erfs) == 2 and erfs[0][1] == 0 and erfs[1][1] == 0:
        a1, a2 = erfs[0][0], erfs[1][0]
        return 2 / sympy.pi * sympy.asin(2 * a1 * a2 / sympy.sqrt((1 + 2 * a1**2) * (1 + 2 * a2**2)))
    raise _Unsupported("E[prod erf] without a closed form")


def _term_integral(k, a, b, erfs, lo, hi):
    """int_lo^hi g^k exp(a g^2 + b g) prod erf(c_i g + d_i) phi(g) dg."""
    if not erfs:
        return _gauss_exp_integral(k, a, b, lo, hi)
    if not (lo == -sympy.oo and hi == sympy.oo):
        raise _Unsupported("erf on a half-line")
    if len(erfs) > 2:
        raise _Unsupported("more than two erf factors")
    A = sympy.Rational(1, 2) - a
    if not sympy.re(A).is_positive:
        raise ValidityError(f"divergent Gaussian integral: exp({a}*g**2) against the Gaussian weight")
    mu = b / (2 * A)
    s = 1 / sympy.sqrt(2 * A)
    new = tuple((sympy.expand(c * s), sympy.expand(c * mu + d)) for c, d in erfs)
    if any(not al.is_real for al, _ in new):
        raise _Unsupported("erf with a complex slope")
    tot = sum(sympy.binomial(k, j) * mu ** (k - j) * s**j * _std_erf_moment(j, new) for j in range(k + 1))
    return s * sympy.exp(b**2 / (4 * A)) * tot


def _trig_to_exp(e):
    """Rewrite sin, cos, sinh, cosh, erfc and positive-constant powers through exp/erf."""

    def rw(node):
        if node.is_Atom:
            return node
        args = [rw(a) for a in node.args]
        f = node.func
        if f is sympy.sin:
            u = args[0]
            return (sympy.exp(_I * u) - sympy.exp(-_I * u)) / (2 * _I)
        if f is sympy.cos:
            u = args[0]
            return (sympy.exp(_I * u) + sympy.exp(-_I * u)) / 2
        if f is sympy.sinh:
            u = args[0]
            return (sympy.exp(u) - sympy.exp(-u)) / 2
        if f is sympy.cosh:
            u = args[0]
            return (sympy.exp(u) + sympy.exp(-u)) / 2
        if f is sympy.erfc:
            return 1 - sympy.erf(args[0])
        if f is sympy.Pow and not args[0].has(g) and args[1].has(g):
            if not args[0].is_positive:
                raise _Unsupported("power with a variable exponent")
            return sympy.exp(args[1] * sympy.log(args[0]))
        return f(*args) if args != list(node.args) else node

    return rw(e)


def _decompose_term(term):
    """(coef, k, a, b, erfs, frac) for coef * g^k * exp(a g^2 + b g + c0) * prod erf(c g + d) * frac.

    ``frac`` is None or ``(sigma, s)`` for a factor ``(sigma g)**s`` with a
    non-integer rational s (from ``abs(g)**s`` resolved on a half-line).
    """
    coef = sympy.S.One
    k = 0
    expo = sympy.S.Zero
    erfs = []
    frac = None
    for fac in sympy.Mul.make_args(term):
        if not fac.has(g):
            coef *= fac
        elif fac == g:
            k += 1
        elif fac.is_Pow and fac.base == g and fac.exp.is_Integer and fac.exp > 0:
            k += int(fac.exp)
        elif fac.is_Pow and fac.base in (g, -g) and fac.exp.is_Rational and not fac.exp.is_Integer:
            if frac is not None:
                raise _Unsupported("two fractional powers")
            frac = (1 if fac.base == g else -1, fac.exp)
        elif isinstance(fac, sympy.exp):
            expo += fac.args[0]
        elif fac.is_Pow and isinstance(fac.base, sympy.exp) and fac.exp.is_Integer:
            expo += fac.base.args[0] * fac.exp
        elif isinstance(fac, sympy.erf) or (
            fac.is_Pow and isinstance(fac.base, sympy.erf) and fac.exp.is_Integer and fac.exp > 0
        ):
            base, n = (fac, 1) if isinstance(fac, sympy.erf) else (fac.base, int(fac.exp))
            try:
                p = sympy.Poly(base.args[0], g)
            except sympy.PolynomialError:
                raise _Unsupported("erf of a non-polynomial argument") from None
            if p.degree() != 1:
                raise _Unsupported("erf of a non-linear argument")
            c, d = p.all_coeffs()
            erfs.extend([(c, d)] * n)
        else:
            raise _Unsupported(f"factor {fac}")
    try:
        p = sympy.Poly(sympy.expand(expo), g)
    except sympy.PolynomialError:
        raise _Unsupported("exp of a non-polynomial argument") from None
    if p.degree() > 2:
        lead = p.LC()
        raise (
            ValidityError(f"exp of a degree-{p.degree()} polynomial in g is not integrable against the Gaussian")
            if lead.is_real and lead > 0
            else _Unsupported("exp of high degree")
        )
    cs = p.all_coeffs()[::-1] + [sympy.S.Zero] * 3
    c0, b, a = cs[0], cs[1], cs[2]
    if any(ci.has(g) for ci in (c0, b, a)):
        raise _Unsupported("exp argument")
    return coef * sympy.exp(c0), k, a, b, tuple(erfs), frac


def _frac_integral(k, frac, a, b, erfs, lo, hi):
    """int_lo^hi g^k (sigma g)^s exp(a g^2) phi(g) dg on the half-line where sigma g > 0, exact.

    With x = sigma g: sigma^k int_0^inf x^(k+s) exp(-A x^2) dx / sqrt(2 pi), A = 1/2 - a,
    and int_0^inf x^q exp(-A x^2) dx = Gamma((q+1)/2) / (2 A^((q+1)/2)) for q > -1.
    The integrable singularity of |g|^s at 0 (s > -1) is thereby exact, however close
    s is to -1 (where quadrature cannot resolve it).
    """
    sigma, s = frac
    if erfs or b != 0:
        raise _Unsupported("fractional power with a linear exponent or erf")
    if (sigma, lo, hi) not in ((1, 0, sympy.oo), (-1, -sympy.oo, 0)):
        raise _Unsupported("fractional power away from a half-line at 0")
    A = sympy.Rational(1, 2) - a
    q = k + s
    if not A.is_positive or not q > -1:
        raise ValidityError(f"divergent integral of |g|^{q} against the Gaussian weight")
    return sympy.S(sigma) ** k * sympy.gamma((q + 1) / 2) / (2 * A ** ((q + 1) / 2)) / _SQRT2PI


def _resolve(e, mid):
    """The branch of e valid at g = mid (see :func:`icl_symbolic.engine.expr.resolve_kinks`)."""
    try:
        return resolve_kinks(e, mid)
    except KinkError as exc:
        raise _Unsupported(str(exc)) from None


def _regions(F, bps):
    """[(lo, hi, smooth expression)] covering the real line."""
    if not bps:
        return [(-sympy.oo, sympy.oo, F)]
    if any(isinstance(b, sympy.Float) or not b.is_real for b in bps):
        raise _Unsupported("breakpoints without closed form")
    edges = [-sympy.oo, *bps, sympy.oo]
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        if lo == -sympy.oo:
            mid = hi - 1
        elif hi == sympy.oo:
            mid = lo + 1
        else:
            mid = (lo + hi) / 2
        out.append((lo, hi, _resolve(F, mid)))
    return out


#: the exact rules give up (and the mpmath path is used) beyond this many expanded terms ...
MAX_EXACT_TERMS = 2000
#: ... or this many (interval x term) integrals for a function with kinks
MAX_EXACT_WORK = 20000


def _terms(smooth):
    n = expand_terms(smooth, trig=2)
    if n > MAX_EXACT_TERMS:
        raise _Unsupported(f"expansion into up to {n} terms")
    # The rules integrate exp(a g^2 + b g) only: sin(u), cos(u), ... of a non-polynomial u have no
    # closed form here, and rewriting them doubles u at every level (64 nested sin: 2^64 nodes).
    for node in sympy.preorder_traversal(smooth):
        if isinstance(node, _TWO_EXP) and node.args[0].has(g) and not node.args[0].is_polynomial(g):
            raise _Unsupported(f"{node.func.__name__} of a non-polynomial argument")
    e = _trig_to_exp(smooth)
    e = sympy.expand(e, power_exp=True, power_base=False, log=False, deep=True)
    return sympy.Add.make_args(e)


def _imag_erf_to_erfi(e):
    """erf(i x) = i erfi(x) for real x (SymPy leaves erf(I*x) as it is)."""

    def is_imag_erf(node):
        return isinstance(node, sympy.erf) and node.args[0].has(_I) and (node.args[0] / _I).is_real

    return e.replace(is_imag_erf, lambda node: _I * sympy.erfi(sympy.expand(node.args[0] / _I)))


def _euler(e):
    """exp(a + i b) -> exp(a) (cos b + i sin b) for constant a, b (so conjugate pairs cancel)."""

    def is_complex_exp(node):
        return isinstance(node, sympy.exp) and node.args[0].has(_I) and not node.args[0].free_symbols

    def rewrite(node):
        re_, im_ = node.args[0].as_real_imag()
        return sympy.exp(re_) * (sympy.cos(im_) + _I * sympy.sin(im_))

    return e.replace(is_complex_exp, rewrite)


def _finish(total):
    """Simplify a sum of closed forms; the result must be real (sin/cos come in conjugate pairs)."""
    total = sympy.expand(sympy.powsimp(sympy.expand(total)))
    if total.has(_I):
        total = sympy.expand(_imag_erf_to_erfi(_euler(total)))
    if total.has(_I):
        # erf of a genuinely complex argument (sin/cos on a finite or half-line interval
        # starting away from 0): keep Re(...) as the closed form, after checking Im = 0
        val = sympy.N(total, 60)
        im_ = sympy.im(val)
        if not im_.is_number or abs(im_) > sympy.Float(10) ** -45 * max(1, abs(val)):
            raise _Unsupported("complex result")
        total = sympy.re(total, evaluate=False)
    return total


def _prepared(F, omega):
    omega = to_rational(omega)
    if not omega.is_positive:
        raise ICLError(f"omega must be positive, got {omega}")
    if omega != 1:
        F = F.xreplace({g: sympy.sqrt(omega) * g})
    return F, omega


def _piecewise_polynomial(e) -> bool:
    """True when e is built from g, numbers, +, *, integer powers and abs/sign/heaviside/max/min."""
    for node in sympy.preorder_traversal(e):
        if node.is_Pow and not (node.exp.is_Integer and node.exp >= 0):
            return False
        if isinstance(node, sympy.Function) and not isinstance(
            node, (sympy.Abs, sympy.sign, sympy.Heaviside, sympy.Max, sympy.Min)
        ):
            return False
    return True


def _split_kinks(F, M, bps):
    """(smooth part, [(kinky term, its breakpoints)], work) of F for :func:`exact_moments`.

    Terms free of kinks are integrated over the whole line (so that erf(g) + abs(g)
    does not put erf on half-lines); by linearity each kinky term is split at its own
    breakpoints only (300 terms abs(g - k/100) give 600 intervals, not 300 x 301).
    ``work`` counts (interval x (degree + M + 1)) closed-form integrals: the cost model of
    the exact path (:data:`MAX_EXACT_WORK`; ``cost.SECONDS_PER["exact_unit"]``).
    """
    kinky = (sympy.Abs, sympy.sign, sympy.Heaviside, sympy.Max, sympy.Min, sympy.Piecewise)
    smooth_part, kink_part = sympy.S.Zero, sympy.S.Zero
    for t in sympy.Add.make_args(F):
        if t.has(*kinky):
            kink_part += t
        else:
            smooth_part += t
    if kink_part == 0:
        return smooth_part, [], 0
    groups = (
        [(kink_part, tuple(bps))]
        if len(sympy.Add.make_args(kink_part)) == 1
        else [(t, breakpoints_of(t)) for t in sympy.Add.make_args(kink_part)]
    )
    work = 0
    for t, tb in groups:
        per_piece = (poly_degree(t) + M + 1) if _piecewise_polynomial(t) else expand_terms(t, trig=2) * (M + 1)
        work += (len(tb) + 1) * per_piece
    return smooth_part, groups, work


def _exact_input(F, omega, bps):
    F = parse_expr(F) if isinstance(F, str) else sympy.S(F)  # never sympify a raw string
    F, omega = _prepared(ae_simplify(F), omega)
    if bps is None:
        bps = breakpoints_of(F)
    elif omega != 1:
        bps = tuple(sympy.nsimplify(b) / sympy.sqrt(omega) for b in bps)
    return F, bps


def exact_work(F, M=0, omega=1) -> int:
    """The number of closed-form integrals of the kink split of :func:`exact_moments` (0 without
    kinks, or when F is outside the exact rules): what the exact path will cost, known before it runs.

    >>> exact_work(sum(abs(g - sympy.Rational(k, 37)) for k in range(1, 71)), 8)
    1260
    """
    try:
        F, bps = _exact_input(F, omega, None)
        return _split_kinks(F, M, bps)[2]
    except (_Unsupported, KinkError, RecursionError):
        return 0


def _integrate_piece(acc, lo, hi, smooth, M):
    """Append the closed forms of int_lo^hi g^j smooth(g) phi(g) dg, j = 0..M, to ``acc[j]``."""
    if smooth == 0:
        return
    if smooth.is_polynomial(g) and not (smooth.free_symbols - {g}):
        # polynomial piece: sum_k c_k int_lo^hi g^(k+j) phi (no expansion into terms)
        p = sympy.Poly(smooth, g)
        J = _trunc_moments(p.degree() + M, lo, hi)
        for (k,), c in p.terms():
            for j in range(M + 1):
                acc[j].append(c * J[k + j])
        return
    for term in _terms(smooth):
        coef, k, a, b, erfs, frac = _decompose_term(term)
        for j in range(M + 1):
            if frac is None:
                acc[j].append(coef * _term_integral(k + j, a, b, erfs, lo, hi))
            else:
                acc[j].append(coef * _frac_integral(k + j, frac, a, b, erfs, lo, hi))


def exact_moments(F, M=0, omega=1, bps=None, on_piece=None):
    """Closed forms of E[g^j F(g)] for j = 0..M under g ~ N(0, 1) after z = sqrt(omega) g.

    Returns a list of SymPy expressions, or None when F is outside the exact
    rules (then use the mpmath path).  Raises ValidityError for provably
    divergent integrals.  ``on_piece(units)`` is called after each interval of the kink
    split with its share of :func:`exact_work` (progress of a long exact integration).

    >>> exact_moments(sympy.sin(g), 3)
    [0, exp(-1/2), 0, 2*exp(-1/2)]
    """
    try:
        F, bps = _exact_input(F, omega, bps)
        smooth_part, groups, work = _split_kinks(F, M, bps)
        if work > MAX_EXACT_WORK:
            raise _Unsupported("too many intervals x terms")
        pieces = [(-sympy.oo, sympy.oo, smooth_part, 0)]
        for t, tb in groups:
            per = work / 2 / max(1, sum(len(b) + 1 for _, b in groups))  # half the work: the intervals
            pieces += [(lo, hi, e, per) for lo, hi, e in _regions(t, tb)]
        acc = [[] for _ in range(M + 1)]  # summed once at the end (repeated += is quadratic)
        for lo, hi, smooth, units in pieces:
            _integrate_piece(acc, lo, hi, smooth, M)
            if on_piece is not None and units:
                on_piece(units)
        out = []
        for x in acc:  # the other half: simplifying each sum
            out.append(_finish(sympy.Add(*x)))
            if on_piece is not None and work:
                on_piece(work / 2 / (M + 1))
        return out
    except _Unsupported:
        return None
    except RecursionError:
        return None


def exact_expectation(F, omega=1):
    """Closed form of E[F(z)], z ~ N(0, omega), or None when no exact rule applies.

    >>> exact_expectation(sympy.sin(g)**2)
    1/2 - exp(-2)/2
    >>> exact_expectation(sympy.Max(g, 0)**2, omega=2)
    1
    >>> exact_expectation(sympy.tanh(g)) is None
    True
    """
    out = exact_moments(F, 0, omega)
    return None if out is None else out[0]


# ---------------------------------------------------------------------------
# validity
# ---------------------------------------------------------------------------


def singular_candidates(F):
    """Real points where F may blow up: zeros of denominators and of log arguments."""
    cands = set()
    for node in sympy.preorder_traversal(F):
        u = None
        if node.is_Pow and node.exp.is_negative and node.base.has(g):
            u = node.base
        elif isinstance(node, sympy.log) and node.args[0].has(g):
            u = node.args[0]
        elif isinstance(node, (sympy.tan, sympy.cot, sympy.sec, sympy.csc)):
            raise ValidityError(f"{node.func.__name__} has poles on the real line; E[F] diverges")
        while u is not None and (isinstance(u, sympy.Abs) or (u.is_Pow and u.exp.is_positive)):
            u = u.args[0] if isinstance(u, sympy.Abs) else u.base  # 1/|g - c|, 1/(g - c)**2
        if u is not None:
            for r in real_zeros(u):
                cands.add(r)
    return sorted(cands, key=float)


def gaussian_rate(e):
    """An upper bound r on limsup log|e(g)| / g^2 as |g| -> inf, read from the tree, or None.

    Bounded and polynomially growing pieces have r = 0; ``exp(u)`` with u a polynomial of
    degree <= 2 has the real part of u's g^2 coefficient; a product adds, a sum takes the
    largest, a positive integer power multiplies.  Anything else (a non-polynomial exponent,
    a negative power) gives None.  Then e(g) <= C (1 + |g|)^k exp(r g^2) for some C, k, so
    E[|e|] under N(0, omega) is finite exactly when the tail test r < 1/(2 omega) passes:
    the L^2 test of exp(c g^2) is exact at c < 1/4.

    >>> gaussian_rate(parse_expr("exp(0.2499*g**2)**2 * tanh(g)"))
    2499/5000
    >>> gaussian_rate(parse_expr("exp(g**3)")) is None
    True
    """
    e = sympy.S(e)
    if not e.has(g):
        return sympy.S.Zero
    if e == g:
        return sympy.S.Zero
    if e.is_Add:
        rates = [gaussian_rate(a) for a in e.args]
        return None if any(r is None for r in rates) else max(rates)
    if e.is_Mul:
        rates = [gaussian_rate(a) for a in e.args]
        return None if any(r is None for r in rates) else sympy.Add(*rates)
    if e.is_Pow:
        if e.exp.is_Integer and e.exp > 0:
            r = gaussian_rate(e.base)
            return None if r is None else r * e.exp
        if not e.base.has(g) and e.base.is_positive:
            return gaussian_rate(sympy.exp(e.exp * sympy.log(e.base)))
        return None
    if isinstance(e, sympy.exp):
        try:
            p = sympy.Poly(e.args[0], g)
        except sympy.PolynomialError:
            return None
        if p.degree() > 2 or not all(c.is_real for c in p.all_coeffs()):
            return None
        return max(sympy.S.Zero, p.coeff_monomial(g**2)) if p.degree() == 2 else sympy.S.Zero
    if (
        isinstance(
            e, (sympy.tanh, sympy.erf, sympy.erfc, sympy.sin, sympy.cos, sympy.sign, sympy.Heaviside, sympy.atan)
        )
        and e.args[0].is_real is not False
    ):
        return sympy.S.Zero
    if isinstance(e, (sympy.Abs, sympy.Max, sympy.Min)):
        rates = [gaussian_rate(a) for a in e.args]
        return None if any(r is None for r in rates) else max(rates)
    return None


def check_integrable(fmp, omega=1, label="F", singular=(), expr=None):
    """Raise ValidityError unless F is integrable against the N(0, omega) density.

    * each point of ``singular`` is probed at distances 1e-8 and 1e-16: a
      local power |F| ~ |g - r|^-p with p >= 0.99 is non-integrable;
    * growth at infinity: with L = 64 sqrt(omega) (and two nearby points, to
      dodge zeros of oscillating F), F is rejected when
      log|F(±L)| - L^2/(2 omega) + log L > -1, i.e. the weighted integrand has
      not decayed faster than 1/|g|.  Borderline tails such as 1/|g|^1.2
      times exp(+g^2/2) are misjudged as divergent (documented limitation).
      When ``expr`` (the SymPy form of F) has a structural growth bound
      (:func:`gaussian_rate`) below 1/(2 omega), the tail is integrable and
      this probe is skipped: exp(0.2499*g**2) is in L^2.
    """
    om = mpmath.mpf(str(sympy.N(to_rational(omega), 30))) if not isinstance(omega, mpmath.mpf) else omega
    with mpmath.workdps(40):
        for r in singular:
            r = mpmath.mpf(str(sympy.N(r, 45)))
            vals = []
            for side in (1, -1):
                try:
                    v1 = abs(fmp(r + side * mpmath.mpf("1e-8")))
                    v2 = abs(fmp(r + side * mpmath.mpf("1e-16")))
                except ICLError:  # a user-facing error (ICLError is a ValueError) keeps its message
                    raise
                except (ZeroDivisionError, ValueError):
                    raise ValidityError(f"E[{label}] diverges: singular at g = {mpmath.nstr(r, 10)}") from None
                vals.append((v1, v2))
            for v1, v2 in vals:
                if v2 > 1 and v2 > 10 * v1:
                    p = mpmath.log(v2 / v1, 10) / 8
                    if p >= 0.99:
                        raise ValidityError(
                            f"E[{label}] diverges: non-integrable singularity at g = {mpmath.nstr(r, 10)} "
                            f"(|F| ~ |g - {mpmath.nstr(r, 6)}|^-{mpmath.nstr(p, 3)})"
                        )
        if expr is not None:
            rate = gaussian_rate(expr)
            if rate is not None and rate < 1 / (2 * to_rational(om if not isinstance(om, mpmath.mpf) else omega)):
                return
        sq = mpmath.sqrt(om)
        for side in (1, -1):
            worst = -mpmath.inf
            L = 64 * sq
            for fac in ("1", "1.0137", "1.0293"):
                t = side * L * mpmath.mpf(fac)
                try:
                    v = fmp(t)
                except ICLError:  # a user-facing error (ICLError is a ValueError) keeps its message
                    raise
                except (ZeroDivisionError, ValueError, OverflowError):
                    raise ValidityError(f"E[{label}] cannot be evaluated at g = {mpmath.nstr(t, 5)}") from None
                if isinstance(v, mpmath.mpc):
                    v = abs(v)
                if mpmath.isnan(v) or mpmath.isinf(v):
                    raise ValidityError(f"E[{label}] diverges: F is not finite at g = {mpmath.nstr(t, 5)}")
                av = abs(v)
                if av == 0:
                    continue
                worst = max(worst, mpmath.log(av) - t**2 / (2 * om) + mpmath.log(abs(t)))
            if worst > -1:
                where = "+inf" if side > 0 else "-inf"
                raise ValidityError(
                    f"E[{label}] diverges: F grows at {where} at least as fast as the "
                    f"Gaussian weight exp(-z^2/(2 omega)) decays (omega = {mpmath.nstr(om, 6)})"
                )


# ---------------------------------------------------------------------------
# mpmath quadrature
# ---------------------------------------------------------------------------


@memoize(maxsize=1)
def _rule():
    return TanhSinh(mpmath.mp)


def magnitude_bits(fmp, points, power=1, omega=1):
    """Extra fractional bits that make fixed-point sums relative to the size of ``f``, not to 1.

    The fixed-point pass (:func:`_vector_pass`) keeps Q fractional bits of
    ``s * F``, an absolute precision: ``1e-200*tanh(g)`` would be summed as 0.
    The magnitude of ``|f| phi`` (and of ``|f|^power phi`` for integrands up to that power) is probed at
    the split points and on a grid; the returned shift is ``-log2`` of the
    smallest of them (negative when f is large).  It only lengthens the integers;
    a probe that misses the peak only makes the shift larger, never the digits wrong.
    ``power`` may be a sequence (one integrand per entry, |f|^power its size):
    then one shift per integrand is returned.
    """
    om = mpmath.mpf(str(sympy.N(to_rational(omega), 20)))
    with mpmath.workdps(20):
        probes = [
            mpmath.mpf(p) if not isinstance(p, sympy.Basic) else mpmath.mpf(str(sympy.N(p, 25))) for p in points
        ] + [mpmath.mpf(k) / 8 for k in range(-64, 65)]
        best = mpmath.mpf(0)
        for t in probes:
            try:
                v = abs(fmp(t))
            except (ZeroDivisionError, ValueError, OverflowError, HugeArgument):
                continue
            if isinstance(v, mpmath.mpc):
                v = abs(v)
            if mpmath.isfinite(v):
                best = max(best, mpmath.mpf(v) * mpmath.exp(-t * t / (2 * om)))
        powers = (power,) if isinstance(power, int) else tuple(power)
        # negative for a huge f (1e30*g): the convergence test is then relative too, instead of
        # asking every panel for an absolute 10^-(digits+20) it can never reach
        out = [0 if best == 0 else int(mpmath.floor(-mpmath.log(best**p, 2))) for p in powers]
        return out[0] if isinstance(power, int) else out


def _estimate_error(rule, results, prec, eps, extra_bits):
    """mpmath's extrapolated error estimate (Borwein-Bailey-Girgensohn), made scale-free.

    mpmath's formula works with decimal exponents of absolute differences and
    floors the estimate at 10^-prec, which is meaningless for an integrand of
    size 2^-extra_bits; the results are rescaled by 2^extra_bits first.  When
    the last result equals the one two levels back but not the previous one,
    mpmath's formula divides by log(0) and returns 1; the last difference is
    returned instead.
    """
    rs = [mpmath.ldexp(r, extra_bits) for r in results]
    if len(rs) >= 3 and rs[-1] == rs[-3] and rs[-1] != rs[-2]:
        return abs(results[-1] - results[-2])
    return mpmath.ldexp(rule.estimate_error(rs, prec, mpmath.ldexp(eps, extra_bits)), -extra_bits)


#: CPU time of a pass over the time of its integrand calls alone (tanh at 200 digits, He_200 tanh)
NODE_OVERHEAD = 3


@dataclass(frozen=True)
class Integrands:
    """The n integrands of one :func:`mp_expect_vector` call, evaluated together at each node.

    ``fn(z)`` returns the list ``[F_0(z), ..., F_{n-1}(z)]`` (mpmath numbers); with ``scaled=True``
    the call is ``fn(z, s)`` and returns ``[s * F_i(z)]``; with ``fixed=True`` (and ``scaled``) it
    is ``fn(z, s, Q)`` returning integers ``s * F_i(z) * 2**Q`` (:func:`_vector_pass`).
    ``extra_bits``: more fractional bits (an int, or one per integrand; :func:`magnitude_bits`);
    ``label``: the integrands' name in a progress line.

    ``batch=True`` (with ``fixed``): the call is ``fn(xs, ss, Q)`` on all the new nodes of one
    level of a panel at once and returns the n integer SUMS over them (a node where f raises
    :class:`HugeArgument` is then retried alone).  ``parity``: one of +1 (even) or -1 (odd) per
    integrand, exactly (from the symbolic f, :func:`parity`): the integrals are then taken over
    [0, inf) alone, doubled for an even integrand and exactly 0 for an odd one (same nodes as the
    right half of the full line, so the same values and error estimates, at half the cost)."""

    fn: Callable
    n: int
    scaled: bool = False
    fixed: bool = False
    extra_bits: object = 0
    label: str = "F"
    batch: bool = False
    parity: tuple | None = None

    def as_scaled(self) -> "Integrands":
        """The same integrands in the scaled form ``fn(z, s) = [s * F_i(z)]`` (itself when it is)."""
        if self.scaled:
            return self
        fn = self.fn
        return dataclasses.replace(self, fn=lambda x, s: [s * v for v in fn(x)], scaled=True)


def _announce_estimate(ints: Integrands, omega, digits, breakpoints, say):
    """The :class:`~icl_symbolic.core.cost.Progress` of the two passes of the (scaled) integrands ``ints``,
    after saying through ``say``, before they start, how long they may take when that is more than a
    few seconds.

    The cost of one node (the integrands, times the weight) is measured at the
    second pass's precision on a few points; the estimate is that times the
    worst-case node count (every panel to the rule's last level, both passes),
    times :data:`NODE_OVERHEAD` (node generation, the fixed-point sums).  It is
    an upper estimate: smooth panels stop earlier; a busy machine runs slower.
    """
    fs, fixed, extra_bits, label = ints.fn, ints.fixed, ints.extra_bits, ints.label
    dps = digits + 20
    with mpmath.workdps(dps):
        om = mpmath.mpf(str(sympy.N(to_rational(omega), dps + 5)))
        panels = len(_points(breakpoints, om)) - 1
        nodes = 2 ** (_rule().guess_degree(mpmath.mp.prec) + 2)
        Q = mpmath.mp.prec + 80 + max(0, *(extra_bits if not isinstance(extra_bits, int) else [extra_bits]))
        t0 = time.perf_counter()
        xs = [mpmath.mpf(k) / 3 for k in (1, 2, 4, 7)]
        for x in xs:
            w = mpmath.exp(-x * x / (2 * om))
            try:
                if ints.batch:
                    fs([x], [w], Q)
                else:
                    fs(x, w, Q) if fixed else fs(x, w)
            except Exception:  # the real pass reports errors; the estimate just skips the point
                pass
        per_node = (time.perf_counter() - t0) / len(xs)
    evaluations = nodes * panels * 2
    est = Estimate(
        NODE_OVERHEAD * per_node * evaluations,
        evaluations,
        f"integrand evaluations at {per_node * 1e3:.2g} ms",
        f"E[{label}]: quadrature at {digits} digits on {panels} panels, two passes",
        "fewer --digits, a smaller --M, fewer kinks",
    )
    # the second pass, at 10 more digits, is counted 1.5 times
    return announced(say, est, total=2.5 * panels)


def _vector_pass(ints: Integrands, points, dps, density, far=None, on_panel=None):
    """One tanh-sinh pass at ``dps`` digits for the n integrands ``ints`` (scaled form); (values, errors).

    ``fscaled(x, s)`` (``ints.fn``) returns ``[s * F_i(x)]``: the node weight times the
    Gaussian density ``s`` is applied by the caller's function, so that a
    shared factor is multiplied once per node, not once per integrand.
    With ``ints.fixed`` the call is ``fscaled(x, s, Q)`` and returns Python
    integers ``round(s * F_i(x) * 2**Q)`` (fixed point, Q = working bits + 60),
    which are summed exactly; this is several times faster than mpf sums.
    """
    n, fixed, extra_bits = ints.n, ints.fixed, ints.extra_bits
    rule = _rule()
    with mpmath.workdps(dps):
        prec = mpmath.mp.prec
        bits = [extra_bits] * n if isinstance(extra_bits, int) else list(extra_bits)
        # the convergence test of each integrand is relative to its own size
        eps = [mpmath.ldexp(mpmath.mp.eps / 8, -b) for b in bits]
        max_degree = rule.guess_degree(prec) + 1
        totals = [mpmath.mpf(0)] * n
        errs = [mpmath.mpf(0)] * n
        mpmath.mp.prec += 20
        try:
            for a, b in zip(points[:-1], points[1:]):
                results = []  # per degree, list of n partial results
                err = [mpmath.mpf(0)] * n
                Q = prec + 60 + max(0, *bits)  # h_m keeps its own precision
                S = [0] * n if fixed else [mpmath.mpf(0)] * n  # running sums, carried across degrees
                worst = 0  # the integrand that failed the test last: tested first at the next level
                for degree in range(1, max_degree + 1):
                    nodes = rule.get_nodes(a, b, degree, prec)
                    hstep = mpmath.mpf(2) ** (-degree)
                    for i, v in enumerate(_level_sums(ints, nodes, density, Q, far)):
                        S[i] += v
                    if fixed:
                        results.append([hstep * mpmath.ldexp(mpmath.mpf(v), -Q) for v in S])
                    else:
                        results.append([hstep * v for v in S])
                    if degree > 1:
                        got, worst = _panel_errors(rule, results, prec, eps, bits, worst)
                        if got is not None:
                            err = got
                            break
                else:
                    if max_degree > 1:  # not converged: every estimate at the last level
                        err = [_estimate_error(rule, [r[i] for r in results], prec, eps[i], bits[i]) for i in range(n)]
                for i in range(n):
                    totals[i] += results[-1][i]
                    errs[i] += err[i]
                if on_panel is not None:
                    on_panel()
        finally:
            mpmath.mp.prec -= 20
        return [+t for t in totals], errs


def _level_sums(ints: Integrands, nodes, density, Q, far):
    """The n sums over the new nodes of one level (scaled integrands; integers when fixed).

    A node where f raises HugeArgument (sin/cos of an astronomically large inner argument) far
    outside the tail-checked region, where the Gaussian weight is below exp(-far^2/2), contributes
    nothing; inside it the error propagates."""
    fscaled, n, fixed = ints.fn, ints.n, ints.fixed
    if ints.batch:
        try:
            return fscaled([x for x, _w in nodes], [w * density(x) for x, w in nodes], Q)
        except HugeArgument:
            pass  # node by node below
    S = [0] * n if fixed else [mpmath.mpf(0)] * n
    for x, w in nodes:
        s = w * density(x)
        try:
            if ints.batch:
                vals = fscaled([x], [s], Q)
            else:
                vals = fscaled(x, s, Q) if fixed else fscaled(x, s)
        except HugeArgument:
            if far is None or abs(x) <= far:
                raise
            continue
        for i in range(n):
            S[i] += vals[i]
    return S


def _panel_errors(rule, results, prec, eps, bits, first: int):
    """(every integrand's error estimate, first) when all pass their test, else (None, the index
    of one that fails).  The test stops at the first failure (the estimates of the others are not
    needed at a level that is not the last); ``first`` (the last failure) is tested first."""
    n = len(eps)
    errs = [None] * n
    for i in [first, *range(first), *range(first + 1, n)]:
        errs[i] = _estimate_error(rule, [r[i] for r in results], prec, eps[i], bits[i])
        if errs[i] > eps[i]:
            return None, i
    return errs, first


def parity(expr) -> int:
    """+1 when expr(-g) = expr(g), -1 when expr(-g) = -expr(g) (structurally, after expansion; a
    sufficient test), 0 otherwise (or for a callable, None)."""
    if expr is None or not isinstance(expr, sympy.Basic):
        return 0
    if not expr.has(g):
        return 1
    m = expr.subs(g, -g)
    if m == expr or sympy.expand(m - expr) == 0:
        return 1
    if sympy.expand(m + expr) == 0:
        return -1
    return 0


def _half_line(points):
    """The split points on [0, inf) when they are symmetric about 0 (else None)."""
    finite = [p for p in points if mpmath.isfinite(p)]
    if sorted(finite) != sorted(-p for p in finite):
        return None
    return [p for p in points if p >= 0]


def _points(breakpoints, omega_mp):
    """Split points: the breakpoints, 0 and +-12 sqrt(omega) (beyond which the
    Gaussian weight is below 1e-31; splitting there halves the node count)."""
    sq = mpmath.sqrt(omega_mp)
    pts = {mpmath.mpf(0), 12 * sq, -12 * sq}
    for b in breakpoints or ():
        pts.add(mpmath.mpf(str(sympy.N(b, mpmath.mp.dps + 10))) if isinstance(b, sympy.Basic) else mpmath.mpf(b))
    return [mpmath.ninf, *sorted(pts), mpmath.inf]


def mp_expect_vector(ints: Integrands, omega=1, digits=30, breakpoints=None, progress=None):
    """E[F_i(z)], i < n, z ~ N(0, omega), by tanh-sinh at two precisions, for the :class:`Integrands` ``ints``.

    One call of ``ints.fn`` gives all n integrands at a node, so an expensive f is evaluated once
    per node for all of them (e.g. all Hermite coefficients).
    ``progress``: a callable taking one line; long integrals report through it
    (:class:`~icl_symbolic.core.cost.Progress`).

    Returns a list of ``(value, abs_err, certified_digits)``; ``abs_err`` is the
    larger of mpmath's error estimate and the difference between the runs at
    ``digits + 10`` and ``digits + 20`` working digits.

    >>> [(v, d) for v, e, d in mp_expect_vector(Integrands(lambda z: [z**2, z**4], 2), omega=2, digits=20)]
    [(mpf('2.0'), 20), (mpf('12.0'), 20)]
    """
    runs = []
    sc = ints.as_scaled()
    n = sc.n
    watch = None
    if progress is not None:
        watch = _announce_estimate(sc, omega, digits, breakpoints, progress)
    done = [0.0]

    def on_panel(pass_index):
        done[0] += 1.0 if pass_index == 0 else 1.5
        if watch is not None:
            watch.update(done[0])

    for pass_index, extra in enumerate((10, 20)):
        dps = digits + extra
        with mpmath.workdps(dps):
            om = mpmath.mpf(str(sympy.N(to_rational(omega), dps + 5)))
            norm = 1 / mpmath.sqrt(2 * mpmath.pi * om)
            pts = _points(breakpoints, om)

            def density(t, om=om, norm=norm):
                return mpmath.exp(-t * t / (2 * om)) * norm

            half = _half_line(pts) if sc.parity is not None else None
            vals, errs = _vector_pass(
                sc,
                pts if half is None else half,
                dps,
                density,
                far=64 * mpmath.sqrt(om),
                # a half-line panel stands for itself and its mirror in the progress count
                on_panel=lambda i=pass_index, k=1 + (half is not None): [on_panel(i) for _ in range(k)],
            )
            if half is not None:  # an even integrand is twice its half, an odd one exactly 0
                vals = [(1 + p) * v for p, v in zip(sc.parity, vals)]
                errs = [(1 + p) * e for p, e in zip(sc.parity, errs)]
            runs.append((vals, errs))
    (v1, e1), (v2, e2) = runs
    out = []
    with mpmath.workdps(digits + 20):
        for i in range(n):
            val = v2[i]
            if isinstance(val, mpmath.mpc):
                if abs(val.imag) > max(abs(val.real), 1) * mpmath.mpf(10) ** (-digits):
                    raise ValidityError("the integrand is complex-valued")
                val = val.real
            err = max(abs(v1[i] - v2[i]), e1[i], e2[i], abs(val) * mpmath.mpf(10) ** (-(digits + 15)))
            out.append((val, err, certified_digits(val, err, digits)))
    return out


#: the quadrature splits the line so that each panel holds about this many oscillations
OSCILLATIONS_PER_PANEL = 2
#: at most this many panels (kinks + oscillation splits); beyond, the integral is refused
MAX_PANELS = 600


def _effective_range(digits, omega_mp) -> float:
    """|z| beyond which the N(0, omega) density is below 10^-(digits + 20)."""
    return float(mpmath.sqrt(2 * (digits + 20) * mpmath.log(10) * omega_mp))


def in_range(points, digits, omega=1) -> tuple:
    """The split points inside the effective range (plus a margin of 1); kinks far out in
    the tail, where the weight is below 10^-(digits+20), are not worth a panel each."""
    om = mpmath.mpf(str(sympy.N(to_rational(omega), 20)))
    R = _effective_range(digits, om) + 1
    return tuple(p for p in points if abs(float(p)) <= R)


def oscillation_splits(expr, digits, omega=1, label="F") -> list:
    """Split points that give each quadrature panel at most a couple of oscillations.

    Tanh-sinh's error estimate is fooled by an integrand that oscillates many
    times within one panel (``sin(1000*g)*tanh(g)`` gave 0.0401 "2 digits" for
    a value below 1e-600).  The phase of every ``sin(u)``/``cos(u)`` in
    ``expr`` advances at the rate |u'(z)|; its integral over the range where
    the Gaussian weight matters (:func:`_effective_range`) is computed on a
    fine float64 grid and split every :data:`OSCILLATIONS_PER_PANEL` periods.
    More than :data:`MAX_PANELS` panels is refused with an :class:`ICLError`
    that gives the estimated number of oscillations.
    """
    if expr is None:
        return []
    args = [
        node.args[0]
        for node in sympy.preorder_traversal(expr)
        if isinstance(node, (sympy.sin, sympy.cos)) and node.args[0].has(g)
    ]
    if not args:
        return []
    om = mpmath.mpf(str(sympy.N(to_rational(omega), 20)))
    R = _effective_range(digits, om)
    z = np.linspace(-R, R, 20001)
    rate = np.zeros_like(z)
    # one function for all the rates, common sub-expressions shared (64 nested sin: 64 chain-rule
    # products of up to 64 factors; one lambdify each took 20 s before the quadrature was announced)
    rates = sympy.lambdify(g, [ae_diff(u, g) for u in dict.fromkeys(args)], modules=["numpy", "scipy"], cse=True)
    with np.errstate(all="ignore"):
        values = rates(z)
    for du in values:
        r = np.abs(np.broadcast_to(np.asarray(du, dtype=float), z.shape))
        rate += np.where(np.isfinite(r), r, np.inf)
    if not np.all(np.isfinite(rate)):
        raise ICLError(
            f"E[{label}]: a sin/cos argument has an infinite slope where the Gaussian weight "
            "matters; the quadrature cannot certify it"
        )
    phase = np.concatenate([[0.0], np.cumsum((rate[1:] + rate[:-1]) / 2 * np.diff(z))])
    periods = phase[-1] / (2 * np.pi)
    panels = int(periods // OSCILLATIONS_PER_PANEL)
    if panels > MAX_PANELS:
        raise ICLError(
            f"E[{label}]: the integrand oscillates about {periods:.3g} times where the Gaussian "
            f"weight matters (|z| <= {R:.3g}); the quadrature certifies at most "
            f"{MAX_PANELS * OSCILLATIONS_PER_PANEL} (see docs/limits.md)"
        )
    if panels < 1:
        return []
    targets = np.arange(1, panels + 1) * (2 * np.pi * OSCILLATIONS_PER_PANEL)
    return [float(t) for t in np.interp(targets, phase, z)]


#: bound on (panels x worst-case nodes per panel x 2 passes x operations per evaluation)
MAX_QUAD_WORK = 2 * 10**8


def check_panels(breakpoints, label="F", expr=None, digits=30, n=1) -> None:
    """ICLError when the quadrature would exceed :data:`MAX_PANELS` or :data:`MAX_QUAD_WORK`.

    Breakpoints beyond the effective range are not counted (they are dropped
    by :func:`_points`).  The work estimate is the worst case of
    :func:`_vector_pass`: every panel runs to the rule's last level.
    """
    panels = len(breakpoints) + 3
    if panels > MAX_PANELS:
        raise ICLError(
            f"E[{label}]: {panels} quadrature panels (kinks, oscillations and narrow features) "
            f"exceed the limit {MAX_PANELS} (see docs/limits.md)"
        )
    ops = sympy.count_ops(expr) + 1 if expr is not None else 10
    with mpmath.workdps(digits + 20):
        nodes = 2 ** (_rule().guess_degree(mpmath.mp.prec) + 2)
    work = panels * nodes * 2 * (ops + n)
    if work > MAX_QUAD_WORK:
        raise ICLError(
            f"E[{label}]: the quadrature would need up to ~{work:.2g} operations ({panels} panels, "
            f"{ops} operations per evaluation, {digits} digits); limit {MAX_QUAD_WORK:.0e} "
            "(see docs/limits.md)"
        )


class QuadraturePlan(tuple):
    """``(points, singular, scale)``: the split points of the line, the integrable singular
    points, and the :class:`~icl_symbolic.engine.scales.ScaleAnalysis` that decides whether the
    quadrature's error estimate is certified."""

    __slots__ = ()

    @property
    def points(self):
        return self[0]

    @property
    def singular(self):
        return self[1]

    @property
    def scale(self):
        return self[2]


def quadrature_plan(
    T: Teacher, digits: int, omega=1, label: str = "F", n: int = 1, extra=(), expr=None
) -> QuadraturePlan:
    """Where the tanh-sinh panels break for E[F], F built from teacher ``T`` (one place for all callers).

    The split points are the kinks of T and ``extra`` (within the effective
    range), the singular candidates, the oscillation splits, and the narrow
    features found by :func:`icl_symbolic.engine.scales.analyze` (steps, bumps,
    Lorentzians: graded meshes at their locations).  ``expr`` is the integrand
    analysed (default ``T.expr``; a polynomial factor such as h_m changes no
    feature).  :func:`check_panels` bounds the work; ``n`` integrands share it.
    """
    expr = T.expr if expr is None else expr
    om = to_rational(omega)
    om_mp = mpmath.mpf(str(sympy.N(om, 30)))
    singular = tuple(singular_candidates(expr)) if expr is not None else ()
    base = in_range(
        tuple(T.breakpoints) + tuple(extra) + singular + tuple(oscillation_splits(expr, digits, om, label)), digits, om
    )
    scale = scales.analyze(expr, _effective_range(digits, om_mp), digits, om)
    bps = tuple(base) + tuple(scale.points)
    check_panels(bps, label, expr, digits, n)
    return QuadraturePlan((bps, singular, scale))


def uncertified_value(val, err, reason: str, note: str = "") -> Value:
    """A quadrature result that no argument certifies: the number is kept, no digit is claimed.

    ``abs_err`` is infinite (so every quantity derived from it is uncertified too);
    the quadrature's own estimate ``err`` is kept in the note, marked as not a bound.
    """
    est = mpmath.nstr(mpmath.mpf(err), 2)
    return Value(
        value=val,
        method="mpmath",
        digits=None,
        abs_err=mpmath.inf,
        note=(note + f"; uncertified: {reason} (the quadrature's own estimate {est} is not a bound)").strip("; "),
    )


def singular_mass_bound(fmp, singular, digits, omega=1):
    """Bound on the part of E[F] that tanh-sinh cannot sample near integrable singularities.

    The nodes of a panel ending at a singular point r come no closer to r than
    delta (the rule's smallest node distance at the first pass's precision,
    times the panel width <= 64).  With |F(z)| ~ C |z - r|^-p measured at
    |z - r| = 1e-16 and 1e-8, the mass within delta of r is
    C delta^(1-p) / (1-p) per side, times the density at r; the bound returned
    is twice the sum (a safety factor).  For p = 0.98 at 15 digits this is
    ~7: the quadrature alone certifies no digit there (the audit's case
    ``abs(g)**(-0.49)``, which the exact rules now integrate in closed form).
    """
    total = mpmath.mpf(0)
    if not singular:
        return total
    rule = _rule()
    with mpmath.workdps(digits + 10):
        prec = mpmath.mp.prec
        nodes = rule.get_nodes(0, 1, rule.guess_degree(prec) + 1, prec)
        delta = 64 * min(x for x, _ in nodes if x > 0)
    om = mpmath.mpf(str(sympy.N(to_rational(omega), 30)))
    with mpmath.workdps(40):
        for r in singular:
            r = mpmath.mpf(str(sympy.N(r, 45)))
            dens = mpmath.exp(-r * r / (2 * om)) / mpmath.sqrt(2 * mpmath.pi * om)
            for side in (1, -1):
                try:
                    v1 = abs(fmp(r + side * mpmath.mpf("1e-8")))
                    v2 = abs(fmp(r + side * mpmath.mpf("1e-16")))
                except ICLError:  # a user-facing error (ICLError is a ValueError) keeps its message
                    raise
                except (ZeroDivisionError, ValueError):
                    continue
                if not (v2 > 0 and v1 > 0) or v2 <= v1:
                    continue
                p = min(mpmath.log(v2 / v1, 10) / 8, mpmath.mpf("0.999"))
                C = v2 * mpmath.mpf("1e-16") ** p
                total += 2 * dens * C * delta ** (1 - p) / (1 - p)
    return total


def mp_value(val, err, digits, note=""):
    """A ``Value(method="mpmath")`` with the digits that ``err`` certifies.

    A value not distinguishable from 0 (``|val| <= err``) is reported as 0 with
    its error bound.  An infinite ``err`` (an input no argument certifies) gives an
    uncertified value.
    """
    if not mpmath.isfinite(err):
        return Value(
            value=val,
            method="mpmath",
            digits=None,
            abs_err=mpmath.inf,
            note=(note + "; uncertified: computed from an uncertified quadrature").strip("; "),
        )
    if abs(val) <= err:
        # "0" is only printed when the bound pins it to the requested decimal places
        small = err <= mpmath.mpf(10) ** -digits
        return Value(
            value=mpmath.mpf(0),
            method="mpmath",
            digits=digits if small else None,
            abs_err=err,
            note=(note + "; zero within the error bound").strip("; "),
        )
    return _value_from_quad(val, err, certified_digits(val, err, digits), digits, note)


def _value_from_quad(val, err, cert, digits, note=""):
    extra = "" if cert >= digits else f"; only {cert} of {digits} requested digits certified"
    return Value(
        value=val, method="mpmath", digits=cert if cert > 0 else None, abs_err=err, note=(note + extra).strip("; ")
    )


def probe_callable(T: Teacher) -> None:
    """ICLError unless a callable teacher accepts an mpmath number and returns a real number."""
    try:
        with mpmath.workdps(20):
            v = T.mp(mpmath.mpf("0.5"))
            mpmath.mpf(v.real if isinstance(v, (complex, mpmath.mpc)) else v)
    except ValidityError:
        raise
    except Exception as exc:
        raise ICLError(
            f"the callable {T.label} must accept an mpmath number and return a number "
            f"for the high-precision path ({type(exc).__name__}: {exc})"
        ) from None


def callable_digits(T: Teacher):
    """Significant digits a Python-callable teacher delivers, or None (SymPy teacher or full precision).

    A callable that returns Python/NumPy floats for mpmath input (``math.sin``)
    gives float64 values whatever the working precision: 15 digits.  One that
    returns mpmath numbers is compared at 50 and 80 working digits at an
    irrational point.  The quadrature's two-precision check usually notices
    float-precision integrands too, but not always, so the cap is explicit.
    """
    if T.expr is not None:
        return None
    probe_callable(T)
    x = "0.31415926535897932384626433832795028841971693993751058209749445923"
    try:
        with mpmath.workdps(50):
            v50 = T.mp(mpmath.mpf(x))
        with mpmath.workdps(80):
            v80 = T.mp(mpmath.mpf(x))
    except Exception:
        return 15
    if not isinstance(v50, (mpmath.mpf, mpmath.mpc)) or not isinstance(v80, (mpmath.mpf, mpmath.mpc)):
        return 15
    with mpmath.workdps(80):
        diff = abs(v80 - v50)
        if diff == 0 or diff <= abs(v80) * mpmath.mpf(10) ** -48:
            return None
        return max(1, int(mpmath.floor(-mpmath.log10(diff / max(abs(v80), mpmath.mpf(10) ** -80)))))


def expect(F, omega=1, digits=30, breakpoints=None, exact=True) -> Value:
    """E[F(z)] for z ~ N(0, omega): exact when the rules apply, else mpmath.

    Paper: the building block of Eq. (2) (a_m), Eq. (8) (rho_f) and the
    Lemma 1 moments (Appendix B, Eqs. (12)-(14), p. 8-9).

    Parameters
    ----------
    F : sympy.Expr in g | str | Teacher | callable
        The integrand.  A callable must accept mpmath numbers; pass its
        kinks/jumps as ``breakpoints``.
    omega : number, str or Rational
        Variance of z (``"0.3"`` is read exactly as 3/10).
    digits : int
        Significant digits wanted (mpmath path) / used to print (exact path).
    breakpoints : iterable, optional
        Extra split points (SymPy teachers find their own).
    exact : bool
        Try the closed-form rules first (default True).

    Returns
    -------
    Value
        ``method="exact"`` with ``.exact`` the closed form, or ``"mpmath"`` with
        ``abs_err`` and the certified ``digits``.

    Raises
    ------
    ValidityError
        When E[|F|] diverges (``1/g``, ``exp(g**2)`` under omega >= 1/2, ...).

    Examples
    --------
    >>> expect("g**4", omega="1/2").exact
    3/4
    >>> v = expect("tanh(g)**2", digits=25)
    >>> v.method, mpmath.nstr(v.value, 20), v.digits
    ('mpmath', '0.39429449039784117442', 25)
    >>> expect("exp(g**2)")
    Traceback (most recent call last):
    ...
    icl_symbolic.core.errors.ValidityError: E[exp(g**2)] diverges: F grows at +inf at least as fast as the Gaussian weight exp(-z^2/(2 omega)) decays (omega = 1.0)
    """
    if not isinstance(digits, int) or isinstance(digits, bool) or not 1 <= digits <= 1000:
        raise ICLError(f"digits must be an integer between 1 and 1000, got {digits!r}")
    om = to_rational(omega)
    if not om.is_positive:
        raise ICLError(f"omega must be positive, got {omega}")
    if isinstance(F, Teacher):
        T = F
    elif callable(F) and not isinstance(F, sympy.Basic):
        T = teacher(F, breakpoints=breakpoints)
    else:
        T = teacher(F)
    label = T.label
    if T.expr is not None:
        singular = tuple(singular_candidates(T.expr))
        if not T.expr.is_polynomial(g):  # polynomials are integrable whatever their coefficients
            check_integrable(T.mp, om, label, singular, expr=T.expr)
        if exact:
            ex = exact_expectation(T.expr, om)
            if ex is not None:
                return Value.from_exact(ex, digits=digits, note=f"E[{label}], z ~ N(0, {om})")
    else:
        probe_callable(T)
        check_integrable(T.mp, om, label, ())
    plan = quadrature_plan(T, digits, om, label, extra=tuple(breakpoints or ()))
    ((val, err, _),) = mp_expect_vector(
        Integrands(lambda t: [T.mp(t)], 1, extra_bits=magnitude_bits(T.mp, plan.points, omega=om)),
        om,
        digits,
        plan.points,
    )
    err += singular_mass_bound(T.mp, plan.singular, digits, om)
    note = f"E[{label}], z ~ N(0, {om})"
    cap = callable_digits(T)
    if cap is not None:
        err = max(err, mpmath.mpf(10) ** -cap * max(abs(val), 1))
        note += f"; the callable delivers about {cap} digits"
    if not plan.scale.covered:
        return uncertified_value(val, err, plan.scale.reason, note)
    return mp_value(val, err, digits, note=note)


# ---------------------------------------------------------------------------
# float64 tier: many omega at once, for e(Gamma) and simulations
# ---------------------------------------------------------------------------

_GL = {n: np.polynomial.legendre.leggauss(n) for n in (12, 20)}


def float_expect(integrands, omegas, breakpoints=(), L: float = 16.0, label: str = "F"):
    """Float64 Gaussian expectations E[F_k(z)], z ~ N(0, omega), for several F_k and many omega.

    ``integrands(z)`` maps a float array of z values to a dict ``name -> F_name(z)``
    (so that an expensive f is evaluated once for all integrands).  For each
    omega: E[F(z)] = int phi(g) F(sqrt(omega) g) dg over g in [-L, L], split into
    panels of unit width in z (floored at 1/64 in g) and at the kinks
    ``b / sqrt(omega)`` of F, with 20-point Gauss-Legendre per panel.  The error
    estimate is |20-point - 12-point| + 1e-15 * int |F| phi (rounding) + the
    truncated tail, bounded by max_k |F_k(+-L sqrt(omega))| * 2 phi(L) / L; L is
    doubled up to 128 while that tail is above 1e-17 of the largest int |F_k| phi.

    This is the fast tier (microseconds per integrand) used where thousands of
    omega values are needed; :func:`expect` is the certified tier (exact or mpmath).

    Returns ``(values, errors)``: dicts name -> float array over ``omegas``.

    >>> vals, errs = float_expect(lambda z: {"z2": z * z}, [1.0, 2.0])
    >>> np.round(vals["z2"], 13).tolist(), bool(errs["z2"].max() < 1e-13)
    ([1.0, 2.0], True)
    """
    om = np.atleast_1d(np.asarray(omegas, dtype=float))
    if np.any(~np.isfinite(om)) or np.any(om <= 0):
        raise ICLError("omega values must be finite and > 0")
    bps = np.array([float(b) for b in breakpoints], dtype=float)
    vals: dict = {}
    errs: dict = {}
    for i, o in enumerate(om):
        sq = np.sqrt(o)
        Li = L
        while True:
            width = 1.0 / min(max(1.0, sq), 64.0)
            edges = np.arange(-Li, Li + 0.5 * width, width)
            kinks = bps / sq
            edges = np.unique(np.concatenate([edges, kinks[np.abs(kinks) < Li]]))
            res = []
            for n in (12, 20):
                x, wq = _GL[n]
                lo, hi = edges[:-1, None], edges[1:, None]
                gg = (0.5 * (hi - lo) * x + 0.5 * (hi + lo)).ravel()
                wt = ((0.5 * (hi - lo)) * wq).ravel() * np.exp(-0.5 * gg * gg) / np.sqrt(2 * np.pi)
                ints = integrands(sq * gg)
                res.append({k: (float(np.dot(wt, v)), float(np.dot(wt, np.abs(v)))) for k, v in ints.items()})
            at_edges = integrands(np.array([-Li, Li]) * sq)
            edge = max(float(np.max(np.abs(v))) for v in at_edges.values())
            tail = edge * np.exp(-0.5 * Li * Li) * 2 / Li
            scale = max(max(a for _, a in res[1].values()), 1e-300)
            if tail <= 1e-17 * scale or Li >= 128:
                break
            Li *= 2
        for k, (v20, a20) in res[1].items():
            if not np.isfinite(v20):
                raise ICLError(f"{label} is not finite where the Gaussian weight matters (omega = {o:g})")
            vals.setdefault(k, np.empty(om.shape))[i] = v20
            errs.setdefault(k, np.empty(om.shape))[i] = abs(v20 - res[0][k][0]) + 1e-15 * a20 + tail
    return vals, errs
