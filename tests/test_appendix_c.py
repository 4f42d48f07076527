"""The proof step of Result 1 (Appendix C, p. 10) with f generic: icl_symbolic.theory.appendix_c.

The mutation cases (rho_f for rho_nonlinear, a1 for a1^2, a dropped 1/alpha term)
run through `verify` in tests/test_mutations.py; here the library itself.
"""

import pytest
import sympy

from icl_symbolic.theory import appendix_c as C

from _reference import gauss_poly


def _gauss(expr, g):
    """E[expr(g)], g ~ N(0, 1): polynomials by their Gaussian moments, others by icl_symbolic.engine.gauss."""
    if expr.is_polynomial(g):
        return gauss_poly(expr, g)
    from icl_symbolic.engine.expr import g as g0
    from icl_symbolic.engine.gauss import expect

    return expect(expr.subs(g, g0)).exact


def _functionals(f, g):
    return {
        C.a1: _gauss(g * f, g),
        C.E_g2f2: _gauss(g**2 * f**2, g),
        C.E_gf3: _gauss(g * f**3, g),
        C.E_f4: _gauss(f**4, g),
        C.E_g3f: _gauss(g**3 * f, g),
        C.rho_f: C.rho + _gauss(f**2, g),
    }


def test_result1_mapping_holds_and_the_paper_forms_come_out():
    r = C.reduce_to_linear()
    assert r.holds
    assert r.nonlinear["E_uuT_I"] == C.rho_f / C.alpha and r.nonlinear["E_s2"] == C.rho_f**2
    assert r.nonlinear["E_uuT_w"] == C.a1**2 and r.nonlinear["E_us"] == C.a1 * C.rho_f


@pytest.mark.parametrize(
    "cov_scale, rho_eq, what",
    [
        (C.a1**2, C.rho_f, "rho_f for rho_nonlinear"),
        (C.a1, C.rho_f - C.a1**2, "a1 for a1^2"),
        (sympy.Integer(1), C.rho_f - C.a1**2, "covariance not scaled (only the noise)"),
        (C.a1**2, C.rho, "noise rho (non-linear part ignored)"),
    ],
)
@pytest.mark.heavy
def test_wrong_equivalent_teacher_is_refuted(cov_scale, rho_eq, what):
    r = C.reduce_to_linear(cov_scale, rho_eq)
    assert not r.moments_agree, what
    assert not r.error_agrees, what


def test_breaking_terms_vanish_for_a_linear_teacher_only():
    g, c = sympy.symbols("g c", positive=True)
    r = C.reduce_to_linear()
    assert r.breaking, "there are finite-size terms"
    lin = _functionals(c * g, g)
    for b in r.breaking:
        assert sympy.simplify(b.term.subs(lin)) == 0, (b.coefficient, b.term)
    # a constant offset is not Gaussian noise: E[f^4] - 3 E[f^2]^2 = -2 a0^4 + ... for f = 1 + g
    off = _functionals(1 + g, g)
    s2 = [b for b in r.breaking if b.coefficient == "E_s2" and b.order.startswith("O(1/ell)")]
    assert sympy.simplify(s2[0].term.subs(off)) != 0
    # the a1 = 0 teacher g^2 - 1 breaks the uu^T term at 1/ell: (E[g^2 f^2] - E f^2 - 0)/ell = (10 - 2)/ell
    sq = _functionals(g**2 - 1, g)
    uu = [b for b in r.breaking if b.coefficient == "E_uuT_w" and b.order.startswith("O(1/ell)")]
    assert sympy.simplify(uu[0].term.subs(sq) - 8 / C.ell) == 0


def test_omega_terms_involve_the_cubic_hermite_coefficient():
    """E[u|w] at first order in omega - 1 carries E[g^3 f] - 3 a1 = sqrt(6) a3."""
    r = C.reduce_to_linear()
    (u,) = [b for b in r.breaking if b.coefficient == "E_u"]
    from icl_symbolic.engine.expr import g

    f = sympy.sin(g)
    a3 = _gauss(f * (g**3 - 3 * g) / sympy.sqrt(6), g)
    val = sympy.simplify(u.term.subs(_functionals(f, g)) / sympy.Symbol("(omega - 1)"))
    assert sympy.simplify(val - sympy.sqrt(6) * a3 / 2) == 0


def test_error_functional_matches_egamma_template():
    e = C.error_functional({"E_y2": 1, "E_yx": 0, "E_u": 0, "E_uuT_I": 0, "E_uuT_w": 0, "E_us": 0, "E_s": 0, "E_s2": 1})
    assert e == 1 + sympy.Symbol("b2", real=True) / C.d
