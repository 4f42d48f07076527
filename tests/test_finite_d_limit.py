"""One limit: the finite-d module's d -> infinity value is the one ``theory --order 0`` prints, for every
teacher of the input language (kinks and jumps included), and its task-norm averages are exact where a
closed form exists (docs/finite-d.md, ``task_norm``).

The teachers are drawn from a grammar of the input language: smooth atoms, kinks (relu, abs, max, min)
and jumps (sign, heaviside) with random shifts and scales, combined by + and *.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from icl_symbolic.api.theory import theory_sweep
from icl_symbolic.theory import finite_d as FD
from tests._examples import examples

shift = st.sampled_from(["0", "1/2", "-1", "3/4"])
scale = st.sampled_from(["1", "2", "-1/2", "3"])
atom = st.one_of(
    st.tuples(scale, shift).map(lambda t: f"sign({t[0]}*g - {t[1]})"),
    st.tuples(scale, shift).map(lambda t: f"heaviside({t[0]}*g - {t[1]})"),
    st.tuples(scale, shift).map(lambda t: f"relu({t[0]}*g - {t[1]})"),
    st.tuples(scale, shift).map(lambda t: f"abs({t[0]}*g - {t[1]})"),
    shift.map(lambda c: f"max(g, {c} - g)"),
    shift.map(lambda c: f"min(g**2 - {c}, g)"),
    scale.map(lambda a: f"tanh({a}*g)"),
    scale.map(lambda a: f"sin({a}*g)"),
    st.sampled_from(["g", "g**2", "g**3 - 3*g"]),
)


@st.composite
def teachers(draw):
    a, b = draw(atom), draw(atom)
    op = draw(st.sampled_from(["+", "-", "*"]))
    c = draw(scale)
    return f"{c}*({a}) {op} {b}"


@settings(max_examples=examples(12), deadline=None)
@given(teachers(), st.sampled_from([(2.0, 2.0, 0.5), (4.0, 4.0, 0.7), (0.5, 1.0, 3.0), (1.0, 4.0, 2.0)]))
@example("sign(g)", (2.0, 2.0, 2.0))
@example("heaviside(g) + relu(g - 1)", (4.0, 0.5, 0.7))
@example("(g^2-1)/sqrt(2)", (8.0, 2.0, 0.5))
def test_order1_limit_is_order0(f, point):
    """The ``limit`` of ``e_nonlinear_finite`` (what ``--order 1`` prints as limit) equals the value of
    ``theory_sweep`` (what ``--order 0`` prints) to 1e-12 relative."""
    alpha, kappa, tau = point
    cv, _ = theory_sweep(f, rho=0.1, alpha=alpha, kappa=kappa, tau=tau, lam=0.0)
    e0 = float(cv.to_json()["points"][0]["e"])
    fd = FD.e_nonlinear_finite(f, rho=0.1, alpha=alpha, kappa=kappa, tau=tau, d=64, order=1, terms=("task_norm",))
    assert fd.limit == pytest.approx(e0, rel=1e-12, abs=0), (f, fd.limit, e0)
    assert FD.e_nonlinear_finite(f, rho=0.1, alpha=alpha, kappa=kappa, tau=tau, d=64, order=0).corrected == fd.limit


@settings(max_examples=examples(12), deadline=None)
@given(teachers())
def test_task_norm_tends_to_the_hermite_values(f):
    """The chi^2_d/d average (kink-split inner quadrature, Gauss-Laguerre in omega) tends to the Hermite
    engine's a1^2 and rho_nonlinear as d grows: at d = 10^6 the O(1/d) shift is below 1e-4 relative of
    E f^2 (a smooth rule would miss a jump's a1^2 by ~1 %: sign(g) gave 0.6410 against 2/pi)."""
    lim = FD.task_norm_average(f, 0.1, None)
    big = FD.task_norm_average(f, 0.1, 10**6)
    size = lim.a1sq + lim.rho_nl
    assert abs(big.a1sq - lim.a1sq) <= 1e-4 * size, (f, big, lim)
    assert abs(big.rho_nl - lim.rho_nl) <= 1e-4 * size, (f, big, lim)
    assert big.err <= 1e-10 * max(big.a1sq, big.rho_nl)


@pytest.mark.parametrize("d", [8, 32, 64])
def test_task_norm_kinked_closed_forms(d):
    """Teachers positively homogeneous of degree 0 or 1 have omega-independent beta, E f^2 / omega: sign(g)
    gives a1_eff^2 = 2/pi and E f^2 = 1 at every d; relu(g) gives a1_eff^2 = E omega/4 = 1/4 and
    E f^2 = E omega/2 = 1/2; abs(g) gives 0 and 1.  Heaviside(g - 1) is not homogeneous: its
    omega beta(omega)^2 = phi(1/sqrt(omega))^2 is averaged against the chi^2 density by mpmath."""
    import mpmath

    for f, a1sq, ef2 in [("sign(g)", 2 / math.pi, 1.0), ("relu(g)", 0.25, 0.5), ("abs(g)", 0.0, 1.0)]:
        tn = FD.task_norm_average(f, 0.1, d)
        assert tn.a1sq == pytest.approx(a1sq, rel=1e-12, abs=1e-15)
        assert tn.rho_nl == pytest.approx(ef2 - a1sq + 0.1, rel=1e-12)
    tn = FD.task_norm_average("heaviside(g - 1)", 0.0, d)
    k = d / 2.0

    def dens(t):  # Gamma(d/2) density of t = d omega/2
        return mpmath.exp((k - 1) * mpmath.log(t) - t - mpmath.loggamma(k))

    def a1sq_of(t):  # omega beta^2 = E[z 1(z > 1)]^2/omega, E[z 1(z > 1)] = sqrt(omega) phi(1/sqrt(omega))
        om = 2 * t / d
        return mpmath.npdf(1 / mpmath.sqrt(om)) ** 2

    def ef2_of(t):
        om = 2 * t / d
        return mpmath.ncdf(-1 / mpmath.sqrt(om))

    with mpmath.workdps(30):
        ref_a = mpmath.quad(lambda t: dens(t) * a1sq_of(t), [0, k, 2 * k, mpmath.inf])
        ref_f = mpmath.quad(lambda t: dens(t) * ef2_of(t), [0, k, 2 * k, mpmath.inf])
    assert tn.a1sq == pytest.approx(float(ref_a), rel=1e-12)
    assert tn.rho_nl == pytest.approx(float(ref_f - ref_a), rel=1e-12)
