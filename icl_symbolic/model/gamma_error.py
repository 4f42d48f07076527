r"""Exact finite-size ICL test error of a given Gamma = [A, b].

Paper: the prediction ``y_hat = <Gamma, H>_F = x_test^T (A u + s b)`` (Sec. 2,
Eqs. (3)-(5), p. 2-3); the ICL error is the mean squared error on fresh test
prompts; the moments are those of Lemma 1 (Appendix B, Eqs. (12)-(14), p. 8-9),
computed exactly at finite d, ell, omega by :mod:`icl_symbolic.model.moments`.

Given the task w the query (x_test, y_test) is independent of the context, and
``E[x_test x_test^T] = I/d``, so with ``v' = A u + s b``::

    e(Gamma|w) = E[y^2|w] - 2 E[y_test x_test|w]^T E[v'|w] + (1/d) E[|v'|^2 | w]
               = E_y2 - 2 E_yx (E_u w^T A w + E_s b^T w)
                 + (1/d) (E_uuT_I tr(A^T A) + E_uuT_w |A w|^2 + 2 E_us b^T A w + E_s2 |b|^2)

(:func:`e_gamma_symbolic`).  Only the quadratic forms ``w^T A w``, ``|A w|^2``,
``b^T w``, ``b^T A w`` and omega = |w|^2/d enter, so:

* :func:`e_gamma_given_w` -- exact for one task (closed form when the
  Gaussian functionals are, else mpmath with a propagated error bound);
* :func:`e_gamma_isotropic` -- ``w ~ N(0, I_d)``, i.e. ``w = sqrt(d omega) e``
  with e uniform on the sphere and ``omega ~ chi^2_d / d`` independent.  The
  direction average is exact (``E[w^T A w|omega] = omega tr A``,
  ``E[|Aw|^2|omega] = omega tr(A^T A)``, the linear forms average to 0); the
  omega average is generalised Gauss-Laguerre quadrature in ``t = d omega/2``
  (weight ``t^(d/2-1) e^-t``), error estimated from two rule sizes;
* :func:`e_gamma_mc_tasks` -- ``w ~ N(0, C_test)``: Monte Carlo over tasks
  (exact given each task), with standard error.

The Gaussian functionals at many omega come from :func:`functionals_float`, a
vectorised float64 composite Gauss-Legendre rule split at the kinks of f,
cross-checked against :func:`icl_symbolic.engine.gauss.expect` in the tests.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from icl_symbolic.core.caches import memoize
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import sample_se
from icl_symbolic.core.values import Value
from icl_symbolic.engine.expr import teacher
from icl_symbolic.engine.gauss import check_integrable, expect, float_expect, to_rational
from icl_symbolic.engine.omega_rule import omega_rule
from icl_symbolic.model.covariance import resolve_covariance, sample_tasks
from icl_symbolic.model.moments import (
    FUNCTIONAL_NAMES,
    MonteCarlo,
    check_inputs,
    evaluate,
    functional_integrand,
    gaussian_functionals,
    moment_functions,
    rng_and_seeds,
    symbolic_moments,
)
from icl_symbolic.model.moments import d as d_sym
from icl_symbolic.model.moments import ell as ell_sym
from icl_symbolic.model.moments import omega as omega_sym
from icl_symbolic.model.moments import rho as rho_sym
from icl_symbolic.model.prompts import sample_prompts

# Quadratic-form symbols of e(Gamma|w)
qA, qb, nAw2, bAw, trAtA, b2 = sympy.symbols("wAw bw Aw2 bAw trAtA b2", real=True)


def e_gamma_symbolic(in_functionals: bool = False):
    """The exact e(Gamma|w) as a SymPy expression.

    In the coefficient names (``E_y2``, ``E_yx``, ...) and the quadratic forms
    ``wAw = w^T A w``, ``bw = b^T w``, ``Aw2 = |A w|^2``, ``bAw = b^T A w``,
    ``trAtA = tr(A^T A)``, ``b2 = |b|^2``; with ``in_functionals=True`` the
    coefficients are replaced by their Lemma 1 expressions.

    >>> e_gamma_symbolic()
    E_y2 - 2*E_yx*(E_s*bw + E_u*wAw) + (Aw2*E_uuT_w + E_s2*b2 + 2*E_us*bAw + E_uuT_I*trAtA)/d
    """
    c = {k: sympy.Symbol(k) for k in ("E_y2", "E_yx", "E_u", "E_uuT_I", "E_uuT_w", "E_us", "E_s", "E_s2")}
    e = (
        c["E_y2"]
        - 2 * c["E_yx"] * (c["E_u"] * qA + c["E_s"] * qb)
        + (c["E_uuT_I"] * trAtA + c["E_uuT_w"] * nAw2 + 2 * c["E_us"] * bAw + c["E_s2"] * b2) / d_sym
    )
    if in_functionals:
        sym = symbolic_moments()
        e = e.subs({c[k]: sym[k] for k in c})
    return e


def _e_from(m: dict, q: dict, d):
    """e(Gamma|w) from coefficient values m and quadratic forms q (scalars or arrays alike)."""
    return (
        m["E_y2"]
        - 2 * m["E_yx"] * (m["E_u"] * q["wAw"] + m["E_s"] * q["bw"])
        + (m["E_uuT_I"] * q["trAtA"] + m["E_uuT_w"] * q["Aw2"] + 2 * m["E_us"] * q["bAw"] + m["E_s2"] * q["b2"]) / d
    )


def _check_gamma(A, b, d=None):
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ICLError(f"A must be a square d x d array, got shape {A.shape}")
    dd = A.shape[0]
    if d is not None and dd != int(d):
        raise ICLError(f"A is {dd}x{dd} but d = {d}")
    b = np.zeros(dd) if b is None else np.asarray(b, dtype=float).reshape(-1)
    if b.shape != (dd,):
        raise ICLError(f"b must have length d = {dd}, got shape {b.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise ICLError("Gamma = [A, b] contains NaN or infinite entries")
    return A, b, dd


def split_gamma(Gamma):
    """(A, b) from Gamma = [A, b] of shape d x (d+1) (Sec. 2, p. 2)."""
    G = np.asarray(Gamma, dtype=float)
    if G.ndim != 2 or G.shape[1] != G.shape[0] + 1:
        raise ICLError(f"Gamma must have shape d x (d+1), got {G.shape}")
    return G[:, :-1], G[:, -1]


# ---------------------------------------------------------------------------
# one task, exact
# ---------------------------------------------------------------------------


def _fractions(x):
    return [Fraction(float(v)) for v in np.asarray(x, dtype=float).reshape(-1)]


def _rat(x: Fraction):
    return sympy.Rational(x.numerator, x.denominator)


def _dot(a, b):
    return sum((x * y for x, y in zip(a, b)), Fraction(0))


def e_gamma_given_w(A, b, f, rho, w, ell, digits: int = 30) -> Value:
    """Exact e(Gamma|w) for one task w (Lemma 1 moments, Appendix B, p. 8-9).

    The float inputs A, b, w are taken as the exact binary numbers they hold;
    the quadratic forms are computed in exact rational arithmetic.  The result
    is ``exact`` when the five Gaussian functionals at omega = |w|^2/d have
    closed forms, otherwise ``mpmath`` with the propagated error.

    Examples
    --------
    Linear teacher, |w|^2 = d, A = I, b = 0, d = 2, ell = 4, rho = 1/10:
    e = (1+rho) - 2 + (1/d)((1+rho) d/alpha + (1 + 1/ell) d) = 11/10 - 2 + 9/5 = 9/10

    >>> import numpy as np
    >>> v = e_gamma_given_w(np.eye(2), None, "g", "0.1", np.ones(2), 4)
    >>> v.method, v.exact
    ('exact', 9/10)
    """
    A, b, dd = _check_gamma(A, b)
    w = np.asarray(w, dtype=float).reshape(-1)
    if w.shape != (dd,) or not np.all(np.isfinite(w)) or not np.any(w):
        raise ICLError(f"w must be a finite nonzero vector of length d = {dd}")
    Af = [_fractions(row) for row in A]
    bf, wf = _fractions(b), _fractions(w)
    Aw = [_dot(row, wf) for row in Af]
    qf = {
        "wAw": _dot(wf, Aw),
        "bw": _dot(bf, wf),
        "Aw2": _dot(Aw, Aw),
        "bAw": _dot(bf, Aw),
        "trAtA": sum((x * x for row in Af for x in row), Fraction(0)),
        "b2": _dot(bf, bf),
    }
    om = _dot(wf, wf) / dd
    rho_e = to_rational(rho, "rho")
    check_inputs(rho_e, dd, ell, _rat(om))
    F = gaussian_functionals(f, _rat(om), digits=digits)
    expr = e_gamma_symbolic(in_functionals=True)
    subs = {
        d_sym: dd,
        ell_sym: int(ell),
        rho_sym: rho_e,
        omega_sym: _rat(om),
        qA: _rat(qf["wAw"]),
        qb: _rat(qf["bw"]),
        nAw2: _rat(qf["Aw2"]),
        bAw: _rat(qf["bAw"]),
        trAtA: _rat(qf["trAtA"]),
        b2: _rat(qf["b2"]),
    }
    return evaluate(expr, subs, F, digits=digits, note="e(Gamma|w), exact finite-size (Lemma 1 moments)")


# ---------------------------------------------------------------------------
# Gaussian functionals at many omega (float64)
# ---------------------------------------------------------------------------


def _teacher_key(t):
    return ("expr", t.expr) if t.expr is not None else ("callable", id(t._numpy))


def functionals_float(f, omegas, L: float = 16.0):
    """The five functionals E[z f], E[f^2], E[z^2 f^2], E[z f^3], E[f^4] (z ~ N(0, omega)) in float64.

    One pass of :func:`icl_symbolic.engine.gauss.float_expect` (composite Gauss-Legendre,
    split at the kinks of f, error from two rule sizes plus rounding and tail)
    per omega, sharing the evaluations of f among the five integrands.

    Returns ``(values, errors)``: dicts name -> array over omegas.

    >>> vals, errs = functionals_float("g**3", [1.0, 2.0])
    >>> np.round(vals["E_zf"], 12).tolist(), float(errs["E_zf"].max()) < 1e-12
    ([3.0, 12.0], True)
    """

    t = teacher(f)

    def integrands(z):
        fz = t.numpy(z)
        f2 = fz * fz
        return {"E_zf": z * fz, "E_f2": f2, "E_z2f2": z * z * f2, "E_zf3": z * f2 * fz, "E_f4": f2 * f2}

    return float_expect(integrands, omegas, t.breakpoints, L=L, label=t.label)


@memoize(maxsize=256)
def _functionals_at(key, t_holder, omegas: tuple):
    vals, errs = functionals_float(t_holder[0], np.array(omegas))
    return vals, errs


class _Holder(tuple):
    """A tuple holding a Teacher that hashes by the teacher key (for lru_cache)."""

    def __hash__(self):
        return hash(self[1])

    def __eq__(self, other):
        return isinstance(other, _Holder) and self[1] == other[1]


@memoize(maxsize=256)
def _validated(key, t_holder, om_check: float) -> bool:

    t = t_holder[0]
    F4 = functional_integrand("E_f4", t.expr) if t.expr is not None else (lambda z, _t=t: _t.mp(z) ** 4)
    # singularities (do not depend on omega): the full checks of gauss.expect at omega = 1
    expect(F4, omega=1, digits=5, breakpoints=None if t.expr is not None else t.breakpoints)
    # growth against the Gaussian weight at the largest omega used
    check_integrable(lambda z, _t=t: _t.mp(z) ** 4, sympy.Rational(om_check), f"{t.label}^4")
    return True


def check_teacher(t, om_max: float = 1.0) -> None:
    """Public form of :func:`_validate`: the simulate command runs it before computing anything."""
    _validate(t, om_max)


def _validate(t, om_max: float) -> None:
    """Raise ValidityError unless E[f(z)^4] is finite for z ~ N(0, omega) up to omega_max.

    Uses :func:`icl_symbolic.engine.gauss.expect` at omega = 1 (poles and other
    singularities) and :func:`icl_symbolic.engine.gauss.check_integrable` at the largest
    omega (growth against the Gaussian weight); by Cauchy-Schwarz the other
    four functionals are then finite.  The float quadrature alone would return a
    finite number for ``1/g``.  The check runs at the next power of two above
    omega_max (a stronger growth test), cached per teacher.
    """
    om_check = float(2.0 ** np.ceil(np.log2(max(om_max, 1e-300))))
    key = _teacher_key(t)
    if t.expr is None:
        _validated.__wrapped__(key, (t,), om_check)
    else:
        _validated(key, _Holder((t, key)), om_check)


def _cached_functionals(t, omegas):
    _validate(t, float(np.max(omegas)))
    if t.expr is None:  # Python callables: no reliable cache key
        return functionals_float(t, np.asarray(omegas, dtype=float))
    key = _teacher_key(t)
    return _functionals_at(key, _Holder((t, key)), tuple(float(o) for o in omegas))


def _e_at(t, rho_value, d, ell, omegas, q, functionals=None):
    """e(Gamma|w) at each omega (quadratic forms q) and its first-order error from the functionals' errors.

    The error is propagated by perturbing each functional by its error bound
    and summing the absolute changes (e is smooth in the functionals).
    ``functionals``: optional ``(values, errors)`` at ``omegas`` (else computed).
    """
    vals, errs = functionals if functionals is not None else _cached_functionals(t, omegas)
    fns = moment_functions()
    om = np.asarray(omegas, dtype=float)

    def coeffs(F):
        args = [d, ell, rho_value, om] + [F[k] for k in FUNCTIONAL_NAMES]
        return {k: np.broadcast_to(np.asarray(fn(*args), dtype=float), om.shape) for k, fn in fns.items()}

    e = _e_from(coeffs(vals), q, d)
    err = np.zeros(om.shape)
    for k in FUNCTIONAL_NAMES:
        bumped = dict(vals)
        bumped[k] = vals[k] + np.maximum(errs[k], 1e-300)
        err = err + np.abs(_e_from(coeffs(bumped), q, d) - e)
    return np.broadcast_to(e, om.shape), err


def _traces(A, b):
    return {"trA": float(np.trace(A)), "trAtA": float(np.sum(A * A)), "b2": float(b @ b)}


# ---------------------------------------------------------------------------
# isotropic test tasks: w ~ N(0, I_d)
# ---------------------------------------------------------------------------


def _isotropic_rule(d, ell, n, t, rho_value, tr):
    om, weights = omega_rule(n, d)  # normalised: no Gamma(d/2) overflow at large d
    q = {"wAw": om * tr["trA"], "bw": 0.0, "Aw2": om * tr["trAtA"], "bAw": 0.0, "trAtA": tr["trAtA"], "b2": tr["b2"]}
    e_k, err_k = _e_at(t, rho_value, d, ell, om, q)
    return float(np.dot(weights, e_k)), float(np.dot(weights, err_k))


def finite_or_refuse(v: Value, what: str) -> Value:
    """``v`` unchanged when its value (and error, if any) is finite; else one clear ICLError.

    The guard of every float64 path of this module: a NaN or an infinity would otherwise travel
    into a table as ``nan`` or into JSON as ``null`` where a number is documented.
    """
    parts = [v.value, v.abs_err, v.stderr]
    if all(x is None or np.isfinite(float(x)) for x in parts):
        return v
    raise ICLError(
        f"{what}: the float64 computation gave a non-finite result ({v.value}, error {v.abs_err or v.stderr}); "
        "refusing to report it (overflow of the teacher's moments or of Gamma's entries)"
    )


def e_gamma_isotropic(A, b, f, rho, d, ell, n_nodes: int | None = None) -> Value:
    """e(Gamma) averaged over isotropic Gaussian test tasks w ~ N(0, I_d), exactly up to quadrature.

    Paper: the ICL error (Sec. 2, p. 3) with C_test = I and the exact
    finite-size moments of Lemma 1 (Appendix B, p. 8-9).

    With ``w = sqrt(d omega) e`` (e uniform on the sphere, omega ~ chi^2_d/d,
    independent) the direction average of e(Gamma|w) is exact in closed form
    and the omega average is generalised Gauss-Laguerre quadrature with
    ``n_nodes`` nodes in ``t = d omega/2`` (default 48; the reported value uses
    1.5 n_nodes).  At d = 2 (the hardest case) tanh converges like 1e-7 at 48 nodes.
    ``abs_err`` = |n-node - 1.5n-node result| + the functionals' float64
    error propagated to first order.  Polynomial teachers give
    polynomials in omega, integrated exactly by the rule.

    Returns a ``numeric`` Value.

    Examples
    --------
    Linear teacher, A = I, b = 0: e(Gamma|w) is linear in omega here and
    E[omega] = 1, so the isotropic average equals the omega = 1 value 9/10
    (see :func:`e_gamma_given_w`):

    >>> import numpy as np
    >>> v = e_gamma_isotropic(np.eye(2), None, "g", 0.1, 2, 4)
    >>> round(float(v), 12), v.abs_err < 1e-12
    (0.9, True)
    """

    A, b, dd = _check_gamma(A, b, d)
    t = teacher(f)
    rho_value = float(_rho_float(rho))
    ell_i = _check_ell(ell)
    n = int(n_nodes) if n_nodes is not None else 48
    if n < 2:
        raise ICLError(f"n_nodes must be >= 2, got {n_nodes}")
    tr = _traces(A, b)
    e1, err_f1 = _isotropic_rule(dd, ell_i, n, t, rho_value, tr)
    e2, err_f2 = _isotropic_rule(dd, ell_i, n + n // 2, t, rho_value, tr)
    err = abs(e2 - e1) + max(err_f1, err_f2) + 1e-15 * abs(e2)
    return finite_or_refuse(
        Value(
            value=e2,
            method="numeric",
            abs_err=err,
            note=(
                f"e(Gamma), w ~ N(0, I_{dd}): exact direction average, Gauss-Laguerre over "
                f"omega ~ chi^2_d/d with {n + n // 2} nodes (error vs {n} nodes)"
            ),
        ),
        "e_gamma_isotropic",
    )


def e_gamma_sphere(A, b, f, rho, d, ell) -> Value:
    """e(Gamma) averaged over test tasks uniform on the sphere |w|^2 = d (C_test = I, ``--tasks sphere``).

    omega = |w|^2/d = 1 exactly, and the direction average of e(Gamma|w) is
    exact in closed form (``E[w^T A w] = tr A``, ``E[|A w|^2] = tr(A^T A)``,
    linear forms average to 0), so this is e(Gamma|w) at omega = 1 with those
    averages.  ``abs_err``: the functionals' float64 error propagated.

    >>> import numpy as np
    >>> round(float(e_gamma_sphere(np.eye(2), None, "g", 0.1, 2, 4)), 12)
    0.9
    """
    A, b, dd = _check_gamma(A, b, d)
    t = teacher(f)
    rho_f = float(_rho_float(rho))
    ell_i = _check_ell(ell)
    tr = _traces(A, b)
    om = np.array([1.0])
    q = {"wAw": om * tr["trA"], "bw": 0.0, "Aw2": om * tr["trAtA"], "bAw": 0.0, "trAtA": tr["trAtA"], "b2": tr["b2"]}
    e, err = _e_at(t, rho_f, dd, ell_i, om, q)
    return finite_or_refuse(
        Value(
            value=float(e[0]),
            method="numeric",
            abs_err=float(err[0]) + 1e-15 * abs(float(e[0])),
            note=f"e(Gamma), w uniform on the sphere |w|^2 = {dd}: exact direction average at omega = 1",
        ),
        "e_gamma_sphere",
    )


def _rho_float(rho):
    r = to_rational(rho, "rho")
    if not bool(r >= 0):
        raise ICLError(f"noise variance rho must be >= 0, got {rho}")
    return float(r)


def _check_ell(ell):
    if isinstance(ell, bool) or int(ell) != ell or int(ell) < 1:
        raise ICLError(f"context length ell must be a positive integer, got {ell}")
    return int(ell)


# ---------------------------------------------------------------------------
# general C_test: Monte Carlo over tasks
# ---------------------------------------------------------------------------

CHEB_DEGREE = 64


def _cheb_functionals(t, sig_lo, sig_hi, sigmas):
    """Functionals at sigma = sqrt(omega) values by Chebyshev interpolation (degree 64 vs 32 check).

    Interpolates in sigma (not omega): E[F(sigma g)] is smooth in sigma down to 0
    for the piecewise-smooth teachers of the input language.  Chebyshev-Lobatto
    points of degree 32 are a subset of those of degree 64, so the check costs
    nothing extra; the error estimate is the difference of the two interpolants
    at the requested points (an estimate for the coarse one, so conservative
    for the fine one we use) plus the functionals' own error.
    """
    N = CHEB_DEGREE
    k = np.arange(N + 1)
    x = np.cos(np.pi * k / N)  # Lobatto points in [-1, 1]
    s_nodes = 0.5 * (sig_hi + sig_lo) + 0.5 * (sig_hi - sig_lo) * x
    vals, errs = _cached_functionals(t, s_nodes**2)
    xs = (2 * sigmas - (sig_hi + sig_lo)) / (sig_hi - sig_lo)
    out, err = {}, {}
    for name in FUNCTIONAL_NAMES:
        fine = np.polynomial.chebyshev.Chebyshev.fit(x, vals[name], N)
        coarse = np.polynomial.chebyshev.Chebyshev.fit(x[::2], vals[name][::2], N // 2)
        out[name] = fine(xs)
        err[name] = np.abs(fine(xs) - coarse(xs)) + float(np.max(errs[name]))
    return out, err


def _check_common(A, b, f, rho, ell):
    """Validate the inputs shared by the Monte-Carlo e(Gamma) estimators."""

    A, b, dd = _check_gamma(A, b)
    return A, b, dd, teacher(f), _rho_float(rho), _check_ell(ell)


def _e_per_task(A, b, t, rho_value, ell_i, W, zero_msg):
    """e(Gamma|w_j) for each row w_j of W, exact in d and ell, with its error bound (arrays).

    The Gaussian functionals at omega_j = |w_j|^2/d are computed at each omega_j when there
    are at most ``CHEB_DEGREE + 1`` rows (one value when all omega_j are equal), else taken
    from a Chebyshev interpolant in sqrt(omega) over the range of the rows.
    """
    dd = A.shape[0]
    om = np.einsum("nd,nd->n", W, W) / dd
    if np.any(om <= 0):
        raise ICLError(zero_msg)
    sig = np.sqrt(om)
    lo, hi = float(sig.min()), float(sig.max())
    if hi - lo <= 1e-12 * hi:  # one omega (tasks on a sphere): the functionals directly
        Fv, Fe = _cached_functionals(t, np.array([hi * hi]))
        Fv = {k: np.broadcast_to(v, om.shape) for k, v in Fv.items()}
        Fe = {k: np.broadcast_to(v, om.shape) for k, v in Fe.items()}
    elif om.size <= CHEB_DEGREE + 1:  # fewer tasks than interpolation nodes: directly at each omega
        Fv, Fe = _cached_functionals(t, om)
    else:
        pad = 1e-3 * max(hi - lo, hi)
        lo, hi = max(lo - pad, 0.5 * lo), hi + pad
        Fv, Fe = _cheb_functionals(t, lo, hi, sig)
    AW = W @ A.T
    q = {
        "wAw": np.einsum("nd,nd->n", W, AW),
        "bw": W @ b,
        "Aw2": np.einsum("nd,nd->n", AW, AW),
        "bAw": AW @ b,
        "trAtA": float(np.sum(A * A)),
        "b2": float(b @ b),
    }
    return _e_at(t, rho_value, dd, ell_i, om, q, functionals=(Fv, Fe))


def e_gamma_tasks(A, b, f, rho, ell, W) -> Value:
    """e(Gamma) averaged uniformly over the given finite set of tasks (rows of W), exactly.

    The IDG (in-distribution generalisation) error of a trained Gamma when ``W`` holds
    its k pretraining tasks: a fresh test prompt (fresh x_i, fresh noise, fresh query)
    whose task is one of the k, each with probability 1/k (docs/idg.md).  Each
    e(Gamma|w_j) is exact in d and ell (Lemma 1 moments, Appendix B, p. 8-9) and the
    average over the k tasks is a finite sum, so the result has no sampling error:
    ``numeric``, with ``abs_err`` the functionals' interpolation/quadrature error.

    >>> import numpy as np
    >>> W = np.array([[1.0, 1.0], [np.sqrt(2.0), 0.0]])      # |w|^2 = d = 2
    >>> round(float(e_gamma_tasks(np.eye(2), None, "g", 0.1, 4, W)), 12)   # as e_gamma_sphere
    0.9
    """
    A, b, dd, t, rho_value, ell_i = _check_common(A, b, f, rho, ell)
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[1] != dd or W.shape[0] < 1 or not np.all(np.isfinite(W)):
        raise ICLError(f"W must be a finite k x {dd} array of tasks, got shape {W.shape}")
    e, err = _e_per_task(A, b, t, rho_value, ell_i, W, "a task has w = 0")
    return finite_or_refuse(
        Value(
            value=float(np.mean(e)),
            method="numeric",
            abs_err=float(np.mean(err)) + 1e-15 * abs(float(np.mean(e))),
            n_samples=int(W.shape[0]),
            note=f"e(Gamma) averaged over the {W.shape[0]} given tasks (exact e(Gamma|w) per task)",
        ),
        "e_gamma_tasks",
    )


def e_gamma_mc_tasks(A, b, f, rho, ell, C_test, mc: MonteCarlo, law: str = "gaussian") -> Value:
    """e(Gamma) for test tasks w ~ N(0, C_test): Monte Carlo over tasks, exact given each task.

    Paper: the ICL error with test tasks from N(0, C_test) (Sec. 2, p. 2-3);
    conditional errors from the exact Lemma 1 moments (Appendix B, p. 8-9).

    Each task's e(Gamma|w_j) is evaluated exactly in d and ell (no prompt
    noise); only the average over tasks is random: value = mean_j, ``stderr`` =
    std_j / sqrt(n_tasks).  The Gaussian functionals at omega_j = |w_j|^2/d come
    from a Chebyshev interpolant in sqrt(omega) over the sampled range; its
    estimated error, propagated to the mean, is ``abs_err`` (kept far below
    the standard error in practice; the note says so if not).

    Parameters
    ----------
    C_test : anything :func:`icl_symbolic.model.covariance.resolve_covariance` accepts
    mc : :class:`~icl_symbolic.model.moments.MonteCarlo`
        ``n`` test tasks, ``rng`` (numpy.random.Generator or int seed), ``progress`` (one line
        before the work: True to stderr, or a callable taking the line)
    law : the test tasks' law, ``gaussian`` or ``sphere``

    Examples
    --------
    >>> import numpy as np
    >>> v = e_gamma_mc_tasks(np.eye(4), None, "tanh(g)", 0.1, 8, "identity", MonteCarlo(4000, 20261130))
    >>> v.method, v.stderr < 0.01
    ('mc', True)
    """

    n_tasks = mc.n
    A, b, dd, t, rho_value, ell_i = _check_common(A, b, f, rho, ell)
    if isinstance(n_tasks, bool) or int(n_tasks) != n_tasks or n_tasks < 2:
        raise ICLError(f"n_tasks must be an integer >= 2, got {n_tasks}")
    cov = resolve_covariance(C_test, dd)
    if cov.trace <= 0:
        raise ICLError("C_test is zero: no test tasks")
    gen, seeds = rng_and_seeds(mc.rng)
    W = sample_tasks(cov, int(n_tasks), gen, law=law)
    say = mc.say()
    if say is not None:
        say(f"e_gamma_mc_tasks: {n_tasks} tasks, functionals on {CHEB_DEGREE + 1} Chebyshev nodes")
    e, err = _e_per_task(A, b, t, rho_value, ell_i, W, "a sampled task has w = 0 (C_test too degenerate)")
    mean = float(np.mean(e))
    se = float(sample_se(e))
    abs_err = float(np.mean(err))
    note = f"e(Gamma), w ~ N(0, {cov.name}): mean over {n_tasks} tasks of the exact e(Gamma|w)"
    if se > 0 and abs_err > 0.1 * se:
        note += f"; interpolation error {abs_err:.2g} is not small against SE {se:.2g}"
    return finite_or_refuse(
        Value(value=mean, method="mc", stderr=se, abs_err=abs_err, n_samples=int(n_tasks), seeds=seeds, note=note),
        "e_gamma_mc_tasks",
    )


# ---------------------------------------------------------------------------
# the straightforward alternative: Monte-Carlo test error on fresh prompts
# ---------------------------------------------------------------------------


def e_gamma_mc_prompts(A, b, f, rho, ell, mc: MonteCarlo, C_test="identity", w=None) -> Value:
    """Monte-Carlo ICL test error of Gamma on ``mc.n`` fresh prompts (one fresh task each, or the fixed w).

    The reference the exact results are tested against and the baseline of the
    benchmark: squared error of ``y_hat = x_test^T (A u + s b)`` (Sec. 2, p. 2-3)
    on prompts from :func:`icl_symbolic.model.prompts.sample_prompts`; ``stderr`` =
    std/sqrt(n).  ``mc`` (:class:`~icl_symbolic.model.moments.MonteCarlo`): ``n`` prompts, ``rng``,
    ``progress`` (a line per block of prompts: True to stderr, or a callable taking the line).
    """

    n = mc.n
    A, b, dd, t, rho_value, ell_i = _check_common(A, b, f, rho, ell)
    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ICLError(f"n must be an integer >= 2, got {n}")
    gen, seeds = rng_and_seeds(mc.rng)
    say = mc.say()
    cov = None if w is not None else resolve_covariance(C_test, dd)
    block = max(1, (1 << 22) // (ell_i * dd))
    done = 0
    sq = []
    while done < n:
        mcount = min(block, int(n) - done)
        W = (
            np.broadcast_to(np.asarray(w, dtype=float), (mcount, dd))
            if w is not None
            else sample_tasks(cov, mcount, gen)
        )
        P = sample_prompts(t.numpy, W, ell_i, rho_value, gen)
        yhat = np.einsum("nd,nd->n", P.x_test, P.u @ A.T + P.s[:, None] * b)
        sq.append((P.y_test - yhat) ** 2)
        done += mcount
        if say is not None:
            say(f"e_gamma_mc_prompts: {done}/{n} prompts")
    r = np.concatenate(sq)
    return Value(
        value=float(r.mean()),
        method="mc",
        stderr=float(sample_se(r)),
        n_samples=len(r),
        seeds=seeds,
        note="Monte-Carlo ICL test error on fresh prompts",
    )
