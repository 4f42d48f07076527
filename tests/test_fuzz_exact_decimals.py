"""Every decimal printed as "exact (SymPy)" is right to every printed digit.

Closed forms are drawn with extreme parameters (scales 1e-15 .. 1e15, arguments next to the
branch points of asin/acos/log/sqrt, cancellations such as exp(x) - 1 and 1 - cos(x) at tiny x)
and evaluated by :func:`icl_symbolic.core.values.certified_decimal` and by
:meth:`Value.from_exact`; the reference is the same function evaluated by mpmath at twice the
precision (plus a margin) from the exact rational parameter.  The printed string (``to_str``) must
equal the reference rounded to the same number of significant digits.  One end-to-end case runs
``hermite_coeffs("erf(g/s)")``, whose E[f^2] = (2/pi) asin(2 a^2/(1 + 2 a^2)), a = 1/s, lost
digits to cancellation near asin(1).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import sympy
from hypothesis import example, given
from hypothesis import strategies as st

from icl_symbolic.core.values import Value, certified_decimal
from icl_symbolic.engine.hermite import hermite_coeffs

# (SymPy form, mpmath form) of one exact positive rational parameter a
_FORMS = {
    "asin_near_1": (
        lambda a: 2 * sympy.asin(2 * a**2 / (1 + 2 * a**2)) / sympy.pi,
        lambda a: 2 * mpmath.asin(2 * a**2 / (1 + 2 * a**2)) / mpmath.pi,
    ),
    "acos_near_1": (lambda a: sympy.acos(1 / (1 + a)), lambda a: mpmath.acos(1 / (1 + a))),
    "one_minus_asin": (
        lambda a: 1 - 2 * sympy.asin(a / (1 + a)) / sympy.pi,
        lambda a: 1 - 2 * mpmath.asin(a / (1 + a)) / mpmath.pi,
    ),
    "expm1": (lambda a: sympy.exp(1 / a) - 1, lambda a: mpmath.exp(1 / a) - 1),
    "one_minus_cos": (lambda a: 1 - sympy.cos(1 / a), lambda a: 1 - mpmath.cos(1 / a)),
    "log_near_1": (lambda a: sympy.log(1 + 1 / a), lambda a: mpmath.log(1 + 1 / a)),
    "sqrt_cancel": (lambda a: sympy.sqrt(a**2 + 1) - a, lambda a: mpmath.sqrt(a**2 + 1) - a),
    "erf_tail": (lambda a: 1 - sympy.erf(sympy.log(a + 2)), lambda a: mpmath.erfc(mpmath.log(a + 2))),
    "atan_gap": (lambda a: sympy.pi / 2 - sympy.atan(a), lambda a: mpmath.pi / 2 - mpmath.atan(a)),
}

_SCALE = st.builds(
    lambda m, k: Fraction(m, 1000) * Fraction(10) ** k,
    st.integers(1000, 9999),
    st.integers(-15, 15),
)


def _reference(form, a: Fraction, digits: int):
    """``form(a)`` by mpmath at twice the precision plus a margin that covers the cancellation."""
    with mpmath.workdps(2 * digits + 80):
        return form(mpmath.mpf(a.numerator) / a.denominator)


def _rounded(x, digits: int) -> str:
    return mpmath.nstr(x, digits)


@given(name=st.sampled_from(sorted(_FORMS)), a=_SCALE, digits=st.integers(5, 40))
def test_certified_decimal_is_right_to_every_digit(name, a, digits):
    sym, mp = _FORMS[name]
    expr = sym(sympy.Rational(a.numerator, a.denominator))
    got = certified_decimal(expr, digits)
    ref = _reference(mp, a, digits)
    with mpmath.workdps(2 * digits + 80):
        # correct to `digits` significant digits: relative error below half a unit of the last digit
        assert abs(got - ref) <= abs(ref) * mpmath.mpf(10) ** (1 - digits) / 2, (name, a, got, ref)


@given(name=st.sampled_from(sorted(_FORMS)), a=_SCALE, digits=st.integers(5, 30))
def test_exact_value_prints_the_reference_digits(name, a, digits):
    sym, mp = _FORMS[name]
    v = Value.from_exact(sym(sympy.Rational(a.numerator, a.denominator)), digits=digits)
    ref = _reference(mp, a, digits)
    with mpmath.workdps(2 * digits + 80):
        assert v.to_str() == _rounded(ref, digits), (name, a)


@given(k=st.integers(-15, 15))
@example(k=-15)  # the reported case: wrong from the 16th digit before
def test_erf_scale_teacher_prints_the_reference_digits(k):
    """coeffs "erf(g/s)" at s = 10^k: E[f^2], a1^2 / E[f^2] and rho_f at 20 digits."""
    s = sympy.Integer(10) ** k
    res = hermite_coeffs(f"erf(g/({s}))", rho=sympy.Rational(1, 10), digits=20)
    assert res.E_f2.method == "exact"
    with mpmath.workdps(120):
        a = 1 / mpmath.mpf(10) ** k
        ef2 = 2 * mpmath.asin(2 * a**2 / (1 + 2 * a**2)) / mpmath.pi
        a1_sq = 4 * a**2 / (mpmath.pi * (1 + 2 * a**2))  # a1 = E[f'(g)] = 2 a / sqrt(pi (1 + 2 a^2))
        assert res.E_f2.to_str() == _rounded(ef2, 20)
        assert res.signal_fraction.to_str() == _rounded(a1_sq / ef2, 20)
        assert res.rho_f.to_str() == _rounded(mpmath.mpf(1) / 10 + ef2, 20)
        assert res.rho_nonlinear.to_str() == _rounded(mpmath.mpf(1) / 10 + ef2 - a1_sq, 20)
