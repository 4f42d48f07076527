"""Result objects show themselves briefly: text repr, HTML (MathML) and LaTeX tables."""

import re

import sympy

from icl_symbolic.core.values import Value
from icl_symbolic.engine.hermite import hermite_coeffs
from icl_symbolic.model.moments import conditional_moments
from icl_symbolic.output.display import Quantity, html_table, latex_table, text_table
from icl_symbolic.theory.asymptotic import Ratios, curve


def test_tables_show_only_certified_digits_and_say_how():
    v = Value(0.123456789, "mc", stderr=0.001, n_samples=100, seeds=(3,))
    rows = [Quantity("x", "x", v), Quantity("u", "u", None)]
    t = text_table("T", rows, digits=16)
    assert "x = 0.12345679  [Monte Carlo, n=100, SE=0.001, seed=3]" in t  # MC: at most 8 digits
    assert "u = undefined (see notes)" in t
    h = html_table("T", rows)
    assert h.count("<tr>") == 3 and "<math" in h and "undefined" in h
    assert latex_table("T", rows).count("\\\\") == 3


def test_hermite_result_repr_is_short_and_complete():
    r = hermite_coeffs("sin(g)", rho="0.1")
    text = repr(r)
    assert len(text) < 700 and "rho_nonlinear/a1^2 = 0.447029376489706  = " in text
    assert "a1                 = 0.6065306597126334  = exp(-1/2)  [exact]" in text
    html = r._repr_html_()
    # closed forms drawn as MathML: e^{-1/2}
    assert re.search(r"<msup><mi>e</mi><mrow><mo>&#x02212;</mo><mfrac><mrow><mn>1</mn></mrow><mrow><mn>2</mn>", html)
    assert "\\rho_{\\rm nonlinear} & 0.1644529172102513 & - \\frac{1}{e}" in r._repr_latex_()
    undefined = repr(hermite_coeffs("g**2 - 1"))
    assert "rho_nonlinear/a1^2 = undefined (see notes)" in undefined and "1 note(s)" in undefined


def test_curve_and_moments_reprs():
    cv = curve("sin(g)", Ratios(rho=0.1, alpha=2, kappa=2, tau=[0.5, 1.0, 2.0]))
    lines = repr(cv).splitlines()
    assert len(lines) == 4 and "diverges" in lines[2] and lines[1].startswith("  tau=0.5 = ")
    many = curve("sin(g)", Ratios(rho=0.1, tau=list(range(2, 32))))
    assert repr(many).endswith("... 18 more points (.points(), .columns)")
    m = conditional_moments("g**3", "0.1", 16, 32)
    assert "E_uuT_w = 11.53125  = 369/32  [exact]" in repr(m) and len(repr(m).splitlines()) == 11
    assert sympy.Rational(369, 32) == m.E_uuT_w.exact
