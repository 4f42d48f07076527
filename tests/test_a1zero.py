"""Tests of the a1 = 0 branch (Eq. 10 p. 3, Eq. 15 p. 10): icl_symbolic.theory.a1zero."""

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from icl_symbolic.core.errors import ICLError
from icl_symbolic.theory import a1zero
from icl_symbolic.theory import asymptotic as T


@pytest.fixture(scope="module")
def D():
    return a1zero.derive()


def test_derivation_verdicts(D):
    assert D.all_hold
    q, tau, lam, chi = (D.symbols[k] for k in ("q", "tau", "lam", "chi0"))
    # the physical root satisfies the fixed point and is positive at sample points
    for vals in (
        {q: 1, tau: sympy.Rational(1, 2), lam: sympy.Rational(1, 10)},
        {q: 3, tau: 4, lam: sympy.Rational(1, 1000)},
    ):
        c0 = D.chi0.subs(vals)
        assert c0 > 0
        assert sympy.simplify(D.fixed_point.lhs.subs(chi, c0) - D.fixed_point.rhs.subs(vals).subs(chi, c0)) == 0
    other = [r for r in D.roots if r != D.chi0][0]
    assert other.subs({q: 1, tau: sympy.Rational(1, 2), lam: sympy.Rational(1, 10)}) < 0
    assert sympy.simplify(D.lam_tilde_limit_below - q * (1 - tau) / tau) == 0
    assert D.lam_tilde_limit_above == 0
    assert D.eps_equation_residual == 0
    assert sympy.simplify(D.error_limit_below - D.boxed_below) == 0
    assert sympy.simplify(D.error_limit_above - D.boxed_above) == 0
    assert D.M_limit_c0 == 1 / sympy.Symbol("nu", positive=True)


def test_symbolic_ridge_error_equals_numeric(D):
    f = sympy.lambdify([D.symbols[k] for k in ("q", "tau", "lam", "rho_nl")], D.error_ridge)
    for q, tau, lam, rho in ((0.3, 0.5, 0.1, 0.3), (1.2, 1.0, 0.01, 2.4), (0.05, 3.0, 2.0, 0.2)):
        assert f(q, tau, lam, rho) == pytest.approx(a1zero.e_a1zero(rho, alpha=rho / q, tau=tau, lam=lam), rel=1e-12)


def test_paper_values():
    """tau = 0.5 and 2 give 2 rho_nl, tau = 0.9 gives 10 rho_nl; alpha does not matter at lam = 0."""
    for alpha in (0.1, 1.0, 50.0):
        assert a1zero.e_a1zero(0.7, alpha=alpha, tau=0.5, lam=0.0) == pytest.approx(1.4, rel=1e-15)
        assert a1zero.e_a1zero(0.7, alpha=alpha, tau=2.0, lam=0.0) == pytest.approx(1.4, rel=1e-15)
        assert a1zero.e_a1zero(0.7, alpha=alpha, tau=0.9, lam=0.0) == pytest.approx(7.0, rel=1e-14)
    with pytest.raises(ICLError):
        a1zero.e_a1zero(0.7, tau=1.0)


@pytest.mark.parametrize("tau", [0.3, 0.9, 1.0, 1.5, 6.0])
@pytest.mark.parametrize("lam", [1e-3, 0.1, 3.0])
def test_ridge_curve_equals_linear_recipe_with_zero_covariance(tau, lam):
    """Eq. (15)'s closed form vs the general ridge recipe with C_train = C_test = 0 (bracketed M)."""
    rho, alpha = 0.9, 1.7
    ref = T.e_linear(
        T.Ratios(rho=rho, alpha=alpha, kappa=3.0, tau=tau, lam=lam), T.TaskCovariances(C_train=np.zeros(5), C_test=None)
    )
    assert a1zero.e_a1zero(rho, alpha=alpha, tau=tau, lam=lam) == pytest.approx(ref, rel=1e-11)


@pytest.mark.parametrize("tau", [0.5, 0.9, 2.0])
def test_ridge_tends_to_eq10(tau):
    """e(lam) -> Eq. (10) linearly in lam (constant grows like 1/(1-tau)^2 near the peak)."""
    target = a1zero.e_a1zero(1.3, tau=tau)
    gaps = [abs(a1zero.e_a1zero(1.3, alpha=2.0, tau=tau, lam=lam) - target) for lam in (1e-4, 1e-7)]
    assert gaps[1] < 1e-4 * target and gaps[1] < 2e-3 * gaps[0]  # O(lam): ratio 1e-3


@given(rho=st.floats(1e-3, 10), tau=st.floats(0.05, 20), lam=st.floats(1e-6, 1e3), alpha=st.floats(0.05, 100))
def test_ridge_properties(rho, tau, lam, alpha):
    """chi0 > 0 solves Eq. (15); rho_nl < e(lam) and e decreases in lam (pure-noise labels: more ridge helps)."""
    c0 = a1zero.chi0_value(rho, alpha=alpha, tau=tau, lam=lam)
    q = rho / alpha
    assert c0 > 0
    assert c0 == pytest.approx(q / (q * tau / (1 + c0) + tau * lam), rel=1e-10)
    e1 = a1zero.e_a1zero(rho, alpha=alpha, tau=tau, lam=lam)
    e2 = a1zero.e_a1zero(rho, alpha=alpha, tau=tau, lam=2 * lam)
    assert rho <= e2 <= e1 * (1 + 1e-12)


def test_negative_control_wrong_root(D):
    """The negative root of the quadratic gives a wrong (non-physical) lam_tilde: the check can fail."""
    q, tau, lam = (D.symbols[k] for k in ("q", "tau", "lam"))
    wrong = [r for r in D.roots if r != D.chi0][0]
    lt_wrong = sympy.limit((lam * (1 + wrong)).subs({tau: sympy.Rational(1, 2), q: 1}), lam, 0, "+")
    assert lt_wrong != 1  # the physical root gives q (1 - tau)/tau = 1 here
