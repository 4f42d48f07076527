"""Exact finite-size ICL test error e(Gamma) (Sec. 2, p. 2-3 with Lemma 1, Appendix B, p. 8-9).

Monte-Carlo comparisons: two-sided false-alarm budget 1e-3 per test, split
Bonferroni over the m comparisons of the test (z = Phi^-1(1 - 1e-3/(2m))).
When both sides are random the standard error is sqrt(SE_1^2 + SE_2^2).
"""

import numpy as np
import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.expr import teacher
from icl_symbolic.engine.gauss import expect
from icl_symbolic.model import gamma_error as E
from icl_symbolic.model import moments as M
from icl_symbolic.model.moments import MonteCarlo

from _examples import examples
from _stats import z_bonferroni


def random_gamma(d, rng, scale=0.3):
    """A Gamma near the isotropic optimum shape (A ~ c I + noise, small b)."""
    A = 0.7 * np.eye(d) + scale * rng.standard_normal((d, d)) / np.sqrt(d)
    b = 0.3 * rng.standard_normal(d) / np.sqrt(d)
    return A, b


# ---------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("f", ["tanh(g)", "relu(g)", "abs(g) + sign(g - 0.5)", "g^3 - g", "sin(2*g)"])
def test_float_functionals_agree_with_gauss(f):
    """functionals_float (float64 Gauss-Legendre) vs gauss.expect (exact or mpmath, 20 digits),
    within the float error estimate it reports (plus 1e-14 relative)."""
    t = teacher(f)
    omegas = ["0.3", "1", "2.5", "9"]
    vals, errs = E.functionals_float(t, [float(sympy.Rational(o)) for o in omegas])
    for i, om in enumerate(omegas):
        for name in M.FUNCTIONAL_NAMES:
            ref = float(expect(M.functional_integrand(name, t.expr), omega=om, digits=20))
            assert abs(vals[name][i] - ref) <= errs[name][i] + 1e-14 * max(1, abs(ref)), (f, om, name)
            assert errs[name][i] < 1e-11 * max(1, abs(ref))


def test_e_gamma_symbolic_in_functionals_is_the_moment_formula():
    e = E.e_gamma_symbolic(in_functionals=True)
    assert e.has(M._FUNC["E_f4"](M.omega)) and e.has(M._FUNC["E_zf3"](M.omega))


def test_linear_teacher_exact_against_the_known_formula():
    """Linear teacher, |w|^2 = d: with the finite-ell moments of docs/linear-theory.md
    (E[uu^T] = (1+rho)/alpha I + (1+1/ell) ww^T, E[us] = (1+rho)(1+2/ell) w,
    E[s^2] = (1+rho)^2 (1+2/ell)), e(Gamma|w) is written out here independently
    and must agree EXACTLY (integer Gamma and w, rational rho)."""
    d, ell = 4, 6
    rho = sympy.Rational(1, 5)
    A = np.array([[1, 0, 2, 0], [0, 1, 0, -1], [1, 1, 1, 0], [0, 0, 0, 2]], dtype=float)
    b = np.array([1, 0, -1, 2], dtype=float)
    w = np.array([1, -1, 1, 1], dtype=float)  # |w|^2 = d
    Ai, bi, wi = (sympy.Matrix(x.astype(int).tolist()) for x in (A, b, w))
    alpha = sympy.Rational(ell, d)
    wAw = (wi.T * Ai * wi)[0]
    Aw2 = ((Ai * wi).T * (Ai * wi))[0]
    bAw = (bi.T * Ai * wi)[0]
    bw = (bi.T * wi)[0]
    trAtA = sum(x**2 for x in Ai)
    b2 = (bi.T * bi)[0]
    expected = (
        (1 + rho)
        - 2 * sympy.Rational(1, d) * (wAw + (1 + rho) * bw)
        + sympy.Rational(1, d)
        * (
            (1 + rho) / alpha * trAtA
            + (1 + sympy.Rational(1, ell)) * Aw2
            + 2 * (1 + rho) * (1 + sympy.Rational(2, ell)) * bAw
            + (1 + rho) ** 2 * (1 + sympy.Rational(2, ell)) * b2
        )
    )
    v = E.e_gamma_given_w(A, b, "g", "0.2", w, ell)
    assert v.method == "exact"
    assert sympy.simplify(v.exact - expected) == 0


def test_isotropic_equals_given_w_when_error_is_linear_in_omega():
    """Linear teacher, b = 0: e(Gamma|omega) after the direction average is linear in omega
    (polynomial teachers give polynomials in omega), so the chi^2_d/d average with
    E[omega] = 1 equals the exact value at omega = 1 averaged over directions."""
    d, ell = 3, 5
    A = np.diag([0.5, 0.8, 1.1])
    iso = E.e_gamma_isotropic(A, None, "g", 0.3, d, ell)
    # direction average at omega = 1 of the exact e(Gamma|w), by the 2d coordinate directions
    vals = []
    for i in range(d):
        for sgn in (1, -1):
            w = np.zeros(d)
            w[i] = sgn * np.sqrt(d)
            vals.append(float(E.e_gamma_given_w(A, None, "g", "0.3", w, ell)))
    # for diagonal A the coordinate directions give the exact sphere average of w^T A w and |Aw|^2
    assert abs(float(iso) - np.mean(vals)) < 1e-12 + iso.abs_err


# ---------------------------------------------------------------------------
# exact vs Monte Carlo on fresh prompts
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("f", ["g", "tanh(g)", "g^2 - 1 + 0.5*g", "relu(g)"])
def test_given_w_agrees_with_prompt_monte_carlo(f):
    """Fixed task w (omega != 1), random Gamma: exact e(Gamma|w) within z SE of the
    Monte-Carlo test error on 200000 fresh prompts.  Budget over the 4 teachers:
    m = 4, z = 3.48; the SE must be below 1% of e (power)."""
    z = z_bonferroni(4)
    rng = np.random.default_rng(20261140)
    d, ell = 5, 7
    A, b = random_gamma(d, rng)
    w = rng.standard_normal(d)
    ex = E.e_gamma_given_w(A, b, f, "0.1", w, ell, digits=20)
    mc = E.e_gamma_mc_prompts(A, b, f, 0.1, ell, MonteCarlo(200_000, rng), w=w)
    assert mc.stderr < 0.01 * float(ex)
    assert abs(float(mc) - float(ex)) <= z * mc.stderr, (f, float(ex), float(mc), mc.stderr)


@pytest.mark.parametrize("f", ["g", "tanh(g)", "sin(g)"])
def test_isotropic_agrees_with_prompt_monte_carlo(f):
    """w ~ N(0, I) fresh per prompt: e_gamma_isotropic within z SE of the prompt Monte
    Carlo (m = 3, z = 3.59), SE below 1% of e."""
    z = z_bonferroni(3)
    rng = np.random.default_rng(20261141)
    d, ell = 6, 4
    A, b = random_gamma(d, rng)
    ex = E.e_gamma_isotropic(A, b, f, 0.2, d, ell)
    mc = E.e_gamma_mc_prompts(A, b, f, 0.2, ell, MonteCarlo(200_000, rng))
    assert ex.abs_err < 1e-9
    assert mc.stderr < 0.01 * float(ex)
    assert abs(float(mc) - float(ex)) <= z * mc.stderr, (f, float(ex), float(mc), mc.stderr)


@pytest.mark.parametrize("C_test", ["powerlaw:1", "spiked:0.5:2"])
def test_mc_tasks_agrees_with_prompt_monte_carlo(C_test):
    """Anisotropic C_test: Monte Carlo over tasks of the exact e(Gamma|w) vs prompt Monte
    Carlo, independent streams, combined SE (m = 2, z = 3.48); the interpolation
    error must be negligible against the SE."""
    z = z_bonferroni(2)
    rng = np.random.default_rng(20261142)
    d, ell = 6, 5
    A, b = random_gamma(d, rng)
    seeds = np.random.SeedSequence(20261143).spawn(2)
    ex = E.e_gamma_mc_tasks(A, b, "tanh(g)", 0.1, ell, C_test, MonteCarlo(20_000, np.random.default_rng(seeds[0])))
    mc = E.e_gamma_mc_prompts(
        A, b, "tanh(g)", 0.1, ell, MonteCarlo(200_000, np.random.default_rng(seeds[1])), C_test=C_test
    )
    se = np.hypot(ex.stderr, mc.stderr)
    assert ex.abs_err < 0.01 * ex.stderr
    assert se < 0.01 * float(ex)
    assert abs(float(mc) - float(ex)) <= z * se, (C_test, float(ex), ex.stderr, float(mc), mc.stderr)
    # the exact-per-task estimator is much less noisy than the prompt one at equal count
    assert ex.stderr * np.sqrt(20_000) < 0.5 * mc.stderr * np.sqrt(200_000)


def test_mc_tasks_identity_agrees_with_isotropic():
    """Same target two ways (m = 1, z = 3.29): C_test = I by task Monte Carlo vs quadrature."""
    rng = np.random.default_rng(20261144)
    d, ell = 8, 16
    A, b = random_gamma(d, rng)
    iso = E.e_gamma_isotropic(A, b, "abs(g) - 0.5", 0.1, d, ell)
    mc = E.e_gamma_mc_tasks(A, b, "abs(g) - 0.5", 0.1, ell, "identity", MonteCarlo(50_000, rng))
    assert mc.stderr < 0.005 * float(iso)
    assert abs(float(mc) - float(iso)) <= z_bonferroni(1) * mc.stderr


def test_prompt_monte_carlo_rejects_the_leading_order_error():
    """Negative control (m = 1, z = 3.29): at d = 4, ell = 2 the error computed from the
    leading-order moments (omega = 1, no 1/ell terms) is rejected by the same prompt
    Monte Carlo that accepts the exact e(Gamma|w) in the tests above."""
    rng = np.random.default_rng(20261145)
    d, ell, f = 4, 2, "g^2 - 1 + 0.5*g"  # strongly nonlinear: large 1/ell terms
    A, b = random_gamma(d, rng)
    b = b + 0.5 / np.sqrt(d)
    w = rng.standard_normal(d)
    w *= np.sqrt(d) / np.linalg.norm(w)
    lo = M.leading_order(f, rho_value="0.1", alpha_value=sympy.Rational(ell, d), digits=15)
    m = {k: float(lo.values[k]) for k in ("E_y2", "E_u", "E_uuT_I", "E_uuT_w", "E_us", "E_s", "E_s2")}
    m["E_yx"] = float(lo.values["d*E_yx"]) / d
    Aw = A @ w
    q = {"wAw": w @ Aw, "bw": b @ w, "Aw2": Aw @ Aw, "bAw": b @ Aw, "trAtA": np.sum(A * A), "b2": b @ b}
    e_lead = E._e_from(m, q, d)
    mc = E.e_gamma_mc_prompts(A, b, f, 0.1, ell, MonteCarlo(200_000, rng), w=w)
    ex = E.e_gamma_given_w(A, b, f, "0.1", w, ell, digits=15)
    assert abs(float(mc) - float(ex)) <= z_bonferroni(1) * mc.stderr
    assert abs(float(mc) - e_lead) > z_bonferroni(1) * mc.stderr
    assert abs(float(ex) - e_lead) > 10 * mc.stderr  # the effect is large, not marginal


N_GAMMA_EXAMPLES = examples(12)
N_GAMMA_PINNED = 2


@pytest.mark.heavy
@settings(max_examples=N_GAMMA_EXAMPLES)
@given(
    f=st.sampled_from(["g", "tanh(g)", "sin(g)", "relu(g) - 0.4", "0.5*g^2 + g", "sign(g)", "erf(g)"]),
    d=st.integers(2, 12),
    ell=st.integers(1, 20),
    rho=st.integers(0, 100),
    scale=st.integers(0, 10),
    seed=st.integers(0, 2**63 - 1),
)
@example(f="g", d=8, ell=16, rho=10, scale=3, seed=20261146)
@example(f="tanh(g)", d=3, ell=1, rho=0, scale=10, seed=20261147)
def test_given_w_property(f, d, ell, rho, scale, seed):
    """Random Gamma (spread `scale/10` around 0.7 I), random task w ~ N(0, I), linear and
    nonlinear teachers: exact e(Gamma|w) within z SE of 100000 fresh prompts.
    Budget: 14 comparisons, z = 3.97."""
    z = z_bonferroni(N_GAMMA_EXAMPLES + N_GAMMA_PINNED)
    rng = np.random.default_rng(seed)
    A, b = random_gamma(d, rng, scale=scale / 10)
    w = rng.standard_normal(d)
    ex = E.e_gamma_given_w(A, b, f, f"{rho / 100}", w, ell, digits=15)
    mc = E.e_gamma_mc_prompts(A, b, f, rho / 100, ell, MonteCarlo(100_000, rng), w=w)
    assert mc.stderr < 0.03 * float(ex)
    assert abs(float(mc) - float(ex)) <= z * mc.stderr, (float(ex), float(mc), mc.stderr)


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------


def test_non_integrable_teachers_are_rejected_not_integrated():
    """The float quadrature alone would return a finite number for 1/g; the gauss checks reject
    it, and a teacher whose E[f^4] diverges at large omega (reached by chi^2_d/d) too."""
    from icl_symbolic.core.errors import ValidityError

    with pytest.raises(ValidityError):
        E.e_gamma_isotropic(np.eye(2), None, "1/g", 0.1, 2, 3)
    with pytest.raises(ValidityError):
        E.e_gamma_isotropic(np.eye(2), None, "exp(g^2/100)", 0.1, 2, 3)
    with pytest.raises(ValidityError):
        E.e_gamma_mc_tasks(np.eye(4), None, "1/g", 0.1, 3, "identity", MonteCarlo(100, 1))


def test_bad_inputs():
    with pytest.raises(ICLError):
        E.e_gamma_given_w(np.eye(3), None, "g", 0.1, np.ones(2), 4)
    with pytest.raises(ICLError):
        E.e_gamma_isotropic(np.ones((3, 2)), None, "g", 0.1, 3, 4)
    with pytest.raises(ICLError):
        E.e_gamma_isotropic(np.eye(3), np.ones(2), "g", 0.1, 3, 4)
    with pytest.raises(ICLError):
        E.e_gamma_isotropic(np.eye(3), None, "g", -0.1, 3, 4)
    with pytest.raises(ICLError):
        E.e_gamma_mc_tasks(np.eye(3), None, "g", 0.1, 0, "identity", MonteCarlo(100, 1))
    with pytest.raises(ICLError):
        E.e_gamma_mc_tasks(np.eye(3), None, "g", 0.1, 4, "nonsense", MonteCarlo(100, 1))
    A, b = E.split_gamma(np.arange(12.0).reshape(3, 4))
    assert A.shape == (3, 3) and b.tolist() == [3.0, 7.0, 11.0]
    with pytest.raises(ICLError):
        E.split_gamma(np.eye(3))
