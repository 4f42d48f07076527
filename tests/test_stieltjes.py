"""Tests of the deterministic Stieltjes transform M(nu), M'(nu) (icl_symbolic.theory.stieltjes)."""

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from icl_symbolic.core.errors import ICLError
from icl_symbolic.model.covariance import resolve_covariance
from icl_symbolic.theory.stieltjes import empirical_stieltjes, solve_a, stieltjes, stieltjes_isotropic

from _stats import z_bonferroni


@pytest.mark.parametrize("c", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("kappa", [0.2, 0.9, 1.0, 1.1, 5.0])
@pytest.mark.parametrize("nu", [1e-6, 1e-2, 0.5, 30.0])
def test_isotropic_closed_form(c, kappa, nu):
    """The bracketed root on the spectrum of c I reproduces the closed form to ~1e-13 relative."""
    st_ = stieltjes(nu, np.full(5, c), kappa)
    M, Mp = stieltjes_isotropic(nu, kappa, c)
    assert st_.M == pytest.approx(float(M), rel=1e-13)
    assert st_.M_prime == pytest.approx(float(Mp), rel=1e-11)


@pytest.mark.parametrize("kappa", [0.4, 3.0])
@pytest.mark.parametrize("nu", [1e-3, 0.1, 3.0])
def test_derivative_against_finite_difference(kappa, nu):
    """M' by implicit differentiation vs a central difference (step h = 1e-4 nu: error O(h^2) ~ 1e-8)."""
    lam = resolve_covariance("powerlaw:0.8", 60).eigvals
    h = 1e-4 * nu
    fd = (stieltjes(nu + h, lam, kappa).M - stieltjes(nu - h, lam, kappa).M) / (2 * h)
    assert stieltjes(nu, lam, kappa).M_prime == pytest.approx(fd, rel=1e-6)
    # negative control: the derivative of a wrong-kappa M differs
    fd_wrong = (stieltjes(nu + h, lam, 1.3 * kappa).M - stieltjes(nu - h, lam, 1.3 * kappa).M) / (2 * h)
    assert abs(fd_wrong / fd - 1) > 1e-3


@given(
    spectrum=st.lists(st.floats(0.0, 50.0), min_size=1, max_size=40),
    kappa=st.floats(0.05, 20.0),
    lognu=st.floats(-8, 3),
)
@example(spectrum=[28.0], kappa=0.125, lognu=-4.0)  # a ~ 5e-7: exposed a badly conditioned check
def test_physical_branch(spectrum, kappa, lognu):
    """a in (0, 1], M in (max(0, (1-kappa)/nu), 1/nu] and the self-consistent equation holds."""
    lam = np.asarray(spectrum)
    nu = 10.0**lognu
    s = stieltjes(nu, lam, kappa)
    assert 0 < s.a <= 1
    assert max(0.0, (1 - kappa) / nu) * (1 - 1e-12) < s.M <= (1 / nu) * (1 + 1e-12)
    # the self-consistent equation in the well-conditioned form g(a) = 0 (absolute scale 1 + kappa;
    # recomputing a from M as 1 - 1/kappa + nu M/kappa would cancel catastrophically when a << 1)
    resid = np.mean(nu / (s.a * lam + nu)) - kappa * (s.a - 1) - 1
    assert abs(resid) <= 1e-12 * (1 + kappa)
    assert s.M == pytest.approx(np.mean(1.0 / (s.a * lam + nu)), rel=1e-14)
    assert nu * s.M == pytest.approx(1 - kappa + kappa * s.a, abs=1e-12 * (1 + kappa))
    assert s.M_prime < 0


def test_zero_covariance_gives_one_over_nu():
    s = stieltjes(0.7, np.zeros(4), 0.5)
    assert s.a == 1.0 and s.M == pytest.approx(1 / 0.7, rel=1e-15)


def test_bad_arguments():
    with pytest.raises(ICLError):
        solve_a(0.0, np.ones(3), 1.0)
    with pytest.raises(ICLError):
        solve_a(1.0, np.ones(3), -1.0)


# -------------------------------------------------------------------------
# deterministic M vs sampled Wishart matrices
# -------------------------------------------------------------------------
_CASES = [
    ("identity", 0.5),
    ("identity", 2.0),
    ("powerlaw:0.8", 0.5),
    ("powerlaw:0.8", 2.0),
    ("spiked:0.3:4", 0.5),
    ("spiked:0.3:4", 2.0),
]
_NUS = np.array([0.05, 0.5])
_M_CMP = len(_CASES) * len(_NUS)  # 12 comparisons
_Z = z_bonferroni(_M_CMP)  # two-sided 1e-3, Bonferroni: z = 3.94
_SEEDS = np.random.SeedSequence(80512345678901234567).spawn(2 * len(_CASES))


@pytest.mark.parametrize("case", range(len(_CASES)))
def test_deterministic_M_matches_sampled_wishart(case):
    """M(nu) vs (1/d) tr (S + nu I)^{-1} averaged over R = 20 sampled Wishart matrices.

    The sampled transform of REAL Gaussian tasks has an O(1/d) bias (measured:
    d * relative bias ~ 0.02-1, i.e. 2-4 standard errors at d = 400 with R = 20-30),
    so a raw d = 400 comparison would false-alarm.  We therefore compare the
    d -> infinity intercept from d = 200 and d = 400 (Richardson: 2 M_400 - M_200,
    residual bias O(1/d^2) ~ 1e-5 relative, well below the SE), with SE from the
    spread across repeats, SE_R = sqrt(4 SE_400^2 + SE_200^2).  Budget: two-sided
    1e-3 over 12 comparisons (6 cases x 2 nu), z = 3.94.  z x SE must be < 1 % of M
    (the test resolves a 1 % error), and a negative control (kappa off by 5 %)
    must be rejected.  The gap itself must shrink with d: |gap_400| is checked
    against the O(1/d) law |gap_200|/2 within the same z budget.
    """
    spec, kappa = _CASES[case]
    R = 20
    est = {}
    for j, d in enumerate((200, 400)):
        cov = resolve_covariance(spec, d)
        rng = np.random.default_rng(_SEEDS[2 * case + j])
        _, per = empirical_stieltjes(_NUS, cov.eigvals, kappa, d, rng, repeats=R)
        est[d] = (per.mean(axis=0), per.std(axis=0, ddof=1) / math.sqrt(R), cov.eigvals)
    m200, se200, _ = est[200]
    m400, se400, lam400 = est[400]
    # the d -> infinity deterministic M is d-independent for these families up to O(1/d)
    # discretisation of the spectrum; evaluate it on the d = 400 spectrum AND the d = 200 one
    det400 = np.array([stieltjes(x, lam400, kappa).M for x in _NUS])
    det200 = np.array([stieltjes(x, est[200][2], kappa).M for x in _NUS])
    det_inf = 2 * det400 - det200  # same extrapolation for the (deterministic) spectrum effect
    m_inf = 2 * m400 - m200
    se_inf = np.sqrt(4 * se400**2 + se200**2)
    assert np.all(_Z * se_inf < 0.01 * det_inf), f"z SE must resolve a 1% error: {_Z * se_inf / det_inf}"
    zs = (m_inf - det_inf) / se_inf
    assert np.all(np.abs(zs) < _Z), f"{spec}, kappa={kappa}, nu={_NUS}: z = {zs}, |z| must be < {_Z:.2f}"
    # negative control: a 5 % error in kappa is detected
    wrong = np.array(
        [2 * stieltjes(x, lam400, 1.05 * kappa).M - stieltjes(x, est[200][2], 1.05 * kappa).M for x in _NUS]
    )
    assert np.max(np.abs((m_inf - wrong) / se_inf)) > _Z
    # the raw finite-d gap shrinks like 1/d
    gap200, gap400 = m200 - det200, m400 - det400
    z_shrink = (gap400 - gap200 / 2) / np.sqrt(se400**2 + se200**2 / 4)
    assert np.all(np.abs(z_shrink) < _Z), f"gap does not shrink like 1/d: {gap200}, {gap400}"
