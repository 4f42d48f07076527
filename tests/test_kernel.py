"""Kernel learner theory (icl_symbolic.kernel_learner.theory): mode split, block spectrum, identity = Result 1.

The independent route: the teacher is projected onto the multivariate Hermite
basis by exact Gaussian integration in SymPy (product moments E[z^gamma H_alpha(z)]),
with the task v = w/sqrt(d) kept symbolic, and the task average is taken with exact
Gaussian (or uniform-sphere) moments.  None of this uses the addition theorem, the
harmonic decomposition or the lambda_{m,l} formula that the module implements.
"""

import math

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.hermite import h
from icl_symbolic.kernel_learner import theory as kernel
from icl_symbolic.theory import asymptotic as theory
from icl_symbolic.theory.asymptotic import Ratios

from _reference import gauss_poly, normal_moment

Z = sympy.symbols("z0:3", real=True)
V = sympy.symbols("v0:3", real=True)
_t = sympy.Symbol("t", real=True)


def _h1d_moment(n, a):
    """E[t^n h_a(t)], t ~ N(0, 1), exactly."""
    return gauss_poly(_t**n * h(a, _t), _t)


def _projection(f_expr, d, K):
    """theta_alpha(v) = E_z[f(z.v) H_alpha(z)] for all 1 <= |alpha| <= K (feature order), and E_z[f^2]."""
    zs, vs = Z[:d], V[:d]
    s = sum(z * v for z, v in zip(zs, vs))
    fz = sympy.Poly(sympy.expand(f_expr.subs(_t, s)), *zs)
    out = []
    for m in range(1, K + 1):
        for tup in kernel.multi_indices(d, m):
            alpha = [tup.count(i) for i in range(d)]
            tot = 0
            for expo, c in fz.terms():
                tot += c * math.prod(_h1d_moment(expo[i], alpha[i]) for i in range(d))
            out.append(sympy.expand(tot))
    f2 = sympy.Poly(sympy.expand(f_expr.subs(_t, s) ** 2), *zs)
    ef2 = sympy.expand(sum(c * math.prod(normal_moment(e) for e in expo) for expo, c in f2.terms()))
    return out, ef2


def _task_average(expr, d, law):
    """E over v = w/sqrt(d): Gaussian w ~ N(0, I_d), or uniform v on the unit sphere."""
    poly = sympy.Poly(sympy.expand(expr), *V[:d])
    tot = sympy.Integer(0)
    for expo, c in poly.terms():
        if any(e % 2 for e in expo):
            continue
        n = sum(expo)
        num = math.prod(normal_moment(e) for e in expo)
        if law == "gaussian":
            den = d ** (n // 2)
        else:
            den = math.prod(d + 2 * i for i in range(n // 2))
        tot += c * sympy.Rational(num, den)
    return sympy.nsimplify(tot) if tot.is_Float else tot


def _teacher(coeffs):
    return sum(sympy.Integer(c) * _t**k for k, c in enumerate(coeffs))


def _label(coeffs):
    return " + ".join(f"({c})*g**{k}" for k, c in enumerate(coeffs) if c) or "0*g"


poly_teachers = st.lists(st.integers(-3, 3), min_size=2, max_size=5).filter(lambda c: any(c[1:]))


@pytest.mark.heavy
@settings(max_examples=6)
@given(coeffs=poly_teachers, K=st.integers(1, 3), law=st.sampled_from(["gaussian", "sphere"]))
def test_mode_split_spectrum_and_residual_are_exact(coeffs, K, law):
    """Random polynomial teachers, d = 3: the projection's task second moment has exactly the
    spectrum kernel_spectrum reports, and the residual energy is rho_eff - rho."""
    d = 3
    fe = _teacher(coeffs)
    theta, ef2 = _projection(fe, d, K)
    Dn = len(theta)
    assert Dn == kernel.feature_count(d, K)
    second = np.array([[float(_task_average(theta[i] * theta[j], d, law)) for j in range(Dn)] for i in range(Dn)])
    ks = kernel.kernel_spectrum(_label(coeffs), f"hermite:{K}", rho=0.25, d=d, tasks=law)
    got = np.sort(np.concatenate([np.full(b.multiplicity, b.eigenvalue) for b in ks.blocks]))
    want = np.sort(np.linalg.eigvalsh(Dn * second))
    assert got.size == want.size == Dn
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * max(1.0, want.max()))
    captured = float(_task_average(sum(t * t for t in theta), d, law))
    total = float(_task_average(ef2, d, law))
    assert ks.rho_eff == pytest.approx(0.25 + total - captured, rel=1e-12, abs=1e-12)
    assert ks.captured_power == pytest.approx(captured, rel=1e-12, abs=1e-12)


@pytest.mark.heavy
@settings(max_examples=6)
@given(coeffs=poly_teachers, p=st.integers(-5, 5), q=st.integers(1, 5))
def test_projection_recovers_a_m_blocks_on_the_sphere(coeffs, p, q):
    """For a rational unit task direction u, theta_alpha = a_m sqrt(m!/alpha!) u^alpha with a_m from
    the Hermite engine, for every degree m <= 3, and E[f^2] - sum_(m<=3) a_m^2 = a_0^2 + sum_(m>3) a_m^2."""
    from icl_symbolic.engine.hermite import hermite_coeffs

    d, K = 3, 3
    tt = sympy.Rational(p, q)
    u = [
        (1 - tt**2) / (1 + tt**2) * sympy.Rational(3, 5),
        2 * tt / (1 + tt**2) * sympy.Rational(3, 5),
        sympy.Rational(4, 5),
    ]
    assert sum(x * x for x in u) == 1
    fe = _teacher(coeffs)
    theta, ef2 = _projection(fe, d, K)
    hc = hermite_coeffs(_label(coeffs), M=6)
    a = [v.exact for v in hc.a]
    coef = kernel.direction_coefficients(np.array([float(x) for x in u]), K)
    col = 0
    for m in range(1, K + 1):
        for tup in kernel.multi_indices(d, m):
            exact = theta[col].subs(dict(zip(V, u)))
            alpha = [tup.count(i) for i in range(d)]
            formula = (
                a[m]
                * sympy.sqrt(sympy.factorial(m) / math.prod(math.factorial(x) for x in alpha))
                * math.prod(ui**ai for ui, ai in zip(u, alpha))
            )
            assert sympy.simplify(exact - formula) == 0
            assert float(exact) == pytest.approx(float(a[m]) * coef[col], rel=1e-12, abs=1e-12)
            col += 1
    resid = sympy.simplify(ef2.subs(dict(zip(V, u))) - sum(sympy.simplify(t.subs(dict(zip(V, u)))) ** 2 for t in theta))
    assert sympy.simplify(resid - (a[0] ** 2 + sum(x**2 for x in a[4:]))) == 0


@pytest.mark.parametrize("coeffs", [[0, 1, 2], [1, -1, 0, 1], [0, 0, 1, 0, 1]])
def test_mode_coefficients_match_projection_for_any_task_norm(coeffs):
    """beta_m(r) T_m(u) equals the exact projection at a non-unit task v = r u."""
    d, K = 3, 3
    fe = _teacher(coeffs)
    theta, _ = _projection(fe, d, K)
    betas = kernel.mode_coefficients(_label(coeffs), K)
    v = [sympy.Rational(1, 2), sympy.Rational(-3, 4), sympy.Rational(5, 4)]
    r = sympy.sqrt(sum(x * x for x in v))
    u = np.array([float(x / r) for x in v])
    coef = kernel.direction_coefficients(u, K)
    sl = kernel.degree_slices(d, K)
    for m in range(1, K + 1):
        b = float(betas[m].subs(kernel._r, r))
        for col in range(sl[m - 1].start, sl[m - 1].stop):
            assert float(theta[col].subs(dict(zip(V, v)))) == pytest.approx(b * coef[col], rel=1e-12, abs=1e-12)


def test_hermite_features_are_the_sympy_polynomials():
    rng = np.random.default_rng(3)
    zv = rng.standard_normal((4, 3))
    feats = kernel.hermite_features(zv, 3)
    col = 0
    for m in range(1, 4):
        for tup in kernel.multi_indices(3, m):
            alpha = [tup.count(i) for i in range(3)]
            Hs = math.prod(h(a, _t).subs(_t, Z[i]) for i, a in enumerate(alpha))
            for row in range(4):
                val = float(Hs.subs(dict(zip(Z, zv[row]))))
                assert feats[row, col] == pytest.approx(val, rel=1e-12, abs=1e-12)
            col += 1
    assert col == feats.shape[1] == kernel.feature_count(3, 3)


def test_sphere_eigenvalues_sum_to_one_per_degree():
    for d in (2, 3, 7, 20):
        for m in (1, 2, 3):
            tot = sum(kernel.harmonic_dim(d, l) * kernel.sphere_eigenvalue(d, m, l) for l in range(m + 1))
            assert tot == 1
        assert sum(kernel.harmonic_dim(d, l) for l in (1, 3)) == math.comb(d + 2, 3)


@pytest.mark.parametrize("f", ["tanh(g)", "sin(g)", "g + (g^2-1)/sqrt(2)", "(g^2-1)/sqrt(2)", "relu(g)"])
def test_identity_features_reproduce_theory_exactly(f):
    grid = dict(alpha=[0.5, 2, 16], kappa=[0.5, 2], tau=[0.5, 3])
    cv = theory.curve(f, theory.Ratios(rho=0.1, lam=0.0, **grid))
    kc = kernel.kernel_curve(f, "identity", Ratios(rho=0.1, lam=0.0, **grid))
    assert np.array_equal(kc.columns["e"], cv.e)
    ks = kc.spectrum
    assert ks.rho_eff == cv.columns["rho_nonlinear"][0]
    # the sphere law at any finite d is the same computation (D = d, eigenvalue a1^2)
    kc8 = kernel.kernel_curve(f, "hermite:1", Ratios(rho=0.1, lam=0.0, **grid), d=8, tasks="sphere", plain=False)
    assert np.array_equal(kc8.columns["e"], cv.e)


def test_identity_with_ridge_reproduces_theory():
    cv = theory.curve("sin(g)", theory.Ratios(rho=0.2, alpha=[1, 4], kappa=2, tau=[0.5, 1.0, 2], lam=[0.01, 0.1]))
    kc = kernel.kernel_curve(
        "sin(g)", "identity", Ratios(rho=0.2, alpha=[1, 4], kappa=2, tau=[0.5, 1.0, 2], lam=[0.01, 0.1])
    )
    assert np.array_equal(kc.columns["e"], cv.e)


def test_gaussian_law_offset_and_trace_fraction():
    """f = g + h_2(g), Gaussian tasks: the constant-mode offset has variance a2^2/d; the quadratic
    block is an isotropic covariance plus a rank-one mean along the trace direction, and the mean
    carries 1/(d+2) of the block's power.  (beta_2(r) = r^2, so E beta_2 = 1 and the mean is
    vecs(I)/d, of squared norm 1/d.)"""
    d = 10
    ks = kernel.kernel_spectrum("g + (g^2-1)/sqrt(2)", "hermite:2", rho=0.1, d=d, tasks="gaussian")
    assert ks.rho_eff == pytest.approx(0.1 + 1 / d, rel=1e-14)
    D = ks.D
    quad = [b for b in ks.blocks if 2 in b.degrees]
    power = sum(b.eigenvalue * b.multiplicity for b in quad) / D
    trace = [b for b in quad if b.l == 0][0]
    assert power == pytest.approx(1 + 2 / d, rel=1e-14)
    traceless = [b for b in quad if b.l == 2][0]
    mean_power = 1 / d
    assert trace.eigenvalue / D - mean_power == pytest.approx(traceless.eigenvalue / D, rel=1e-13)
    assert mean_power / power == pytest.approx(1 / (d + 2), rel=1e-14)


def test_numeric_gaussian_law_agrees_with_exact_for_a_polynomial():
    """The quadrature path (non-polynomial teachers) against the exact path on g^3 - g."""
    d = 7
    exact = kernel.block_moments("g^3 - g", 3, d, "gaussian")
    T = kernel._polynomial_teacher("g^3 - g")[1]
    B, Berr, ef2, ef2_err = kernel._numeric_gaussian_law(T, 3, d)
    np.testing.assert_allclose(B, exact.B, rtol=1e-11, atol=1e-12)
    assert ef2 == pytest.approx(exact.E_f2_float, rel=1e-11)
    assert np.all(Berr < 1e-9)


def test_homogeneous_teacher_is_task_law_free():
    """relu(r g) = r relu(g): Gaussian tasks give the same B = a a^T as the sphere (E r^2 = 1)."""
    g_ = kernel.block_moments("relu(g)", 2, 9, "gaussian")
    s_ = kernel.block_moments("relu(g)", 2, 9, "sphere")
    np.testing.assert_allclose(g_.B, s_.B, rtol=1e-10, atol=1e-12)


def test_kernel_learner_floor_and_crossover():
    """As alpha, tau grow (kappa > 1) the prediction tends to rho_eff; at small alpha = ell/D plain
    attention is better, at large alpha the kernel learner is (f = g + h_2)."""
    f = "g + (g^2-1)/sqrt(2)"
    kc = kernel.kernel_curve(f, "hermite:2", Ratios(rho=0.1, alpha=[0.1, 1e4], kappa=4, tau=[1e4]), d=12)
    e, ep = kc.columns["e"], kc.columns["e_plain"]
    assert e[0] > ep[0] and e[1] < ep[1]
    assert e[1] == pytest.approx(kc.spectrum.rho_eff, rel=2e-3)


def test_bad_input_is_refused():
    with pytest.raises(ICLError):
        kernel.parse_features("hermite:4")
    with pytest.raises(ICLError):
        kernel.parse_features("poly:2")
    with pytest.raises(ICLError):
        kernel.kernel_spectrum("g", "hermite:2", rho=0.1, d=None)
    with pytest.raises(ICLError):
        kernel.kernel_spectrum("g", "hermite:3", rho=0.1, d=400)
    with pytest.raises(ICLError):
        kernel.block_moments("g", 2, 5, "cube")
