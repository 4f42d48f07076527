"""Fast inner features under a saturated outer function are certified, and huge arguments do not crash.

``exp(-exp(exp(g)))`` was certified before the narrow-feature analysis and "uncertified" after it:
the rate of the inner ``exp(exp(g))`` (e^g per unit of g) needs thousands of cells on [5, 9], where
the outer bump is below e^-sat and nothing inside it matters.  A node whose every occurrence sits
inside a saturated step or bump is now skipped on that cell (``scales._shields``).  And mpmath's own
tanh/erfc of astronomically large arguments (tanh(exp(g)) at a far node: MemoryError;
tanh(exp(exp(g))): "too many digits"; erfc(exp(exp(g))): OverflowError) are replaced by their
saturated values (``expr._safe_tanh``, ``expr._safe_erfc``).

Generated outer(inner) teachers: outer in exp(-u), tanh(u), erfc(u), erf(u); inner increasing and
fast (double exponentials, exp(c g), exp(g^2)).  ``expect`` must certify at least 12 digits and
agree with an independent mpmath integral (panels on [-40, 4], plus the saturated value times
P(g > 4); the inner is above 1e5 there, so the outer is constant to far below 1e-30).
"""

from __future__ import annotations

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icl_symbolic.engine.gauss import expect

_OUTER = {
    "exp(-({u}))": (lambda u: mpmath.exp(-u), 0),
    "tanh({u})": (mpmath.tanh, 1),
    "erfc({u})": (mpmath.erfc, 0),
    "erf({u})": (mpmath.erf, 1),
}
_INNER = {
    "exp(exp(g))": lambda x: mpmath.exp(mpmath.exp(x)),
    "exp(3*g)": lambda x: mpmath.exp(3 * x),
    "exp(g^2) + g": lambda x: mpmath.exp(x**2) + x,
    "exp(exp(g)) + exp(g)": lambda x: mpmath.exp(mpmath.exp(x)) + mpmath.exp(x),
}


def _reference(outer, inner, limit):
    with mpmath.workdps(30):

        def F(x):
            u = inner(x)
            # past 1e8 every outer function here is its limit to far below 30 digits (erfc(1e8) ~ e^-1e16);
            # mpmath's own erf/erfc raise OverflowError at arguments like exp(exp(4))
            return (limit if u > 10**8 else outer(u)) * mpmath.npdf(x)

        pts = [-40, -5, -2, -1, 0, mpmath.mpf("0.5"), 1, mpmath.mpf("1.5"), 2, 3, 4]
        return mpmath.quad(F, pts) + limit * mpmath.ncdf(-4)


@pytest.mark.heavy
@given(outer=st.sampled_from(sorted(_OUTER)), inner=st.sampled_from(sorted(_INNER)))
def test_saturated_nesting_is_certified_and_right(outer, inner):
    text = outer.format(u=inner)
    fn, limit = _OUTER[outer]
    v = expect(text, digits=15)
    assert v.digits is not None and v.digits >= 12, (text, v)
    ref = _reference(fn, _INNER[inner], limit)
    with mpmath.workdps(30):
        assert abs(mpmath.mpf(v.value) - ref) <= mpmath.mpf(v.abs_err) + abs(ref) * mpmath.mpf(10) ** -14, (
            text,
            v,
            ref,
        )
        assert abs(mpmath.mpf(v.to_str()) - ref) <= abs(ref) * mpmath.mpf(10) ** (1 - v.digits), (text, v, ref)


@pytest.mark.heavy
@pytest.mark.parametrize(
    "text", ["tanh(exp(g))", "tanh(exp(exp(g)))", "erfc(exp(exp(g)))", "erfc(-exp(exp(g)))", "erf(exp(exp(g)))"]
)
def test_huge_arguments_of_tanh_and_erfc_do_not_crash(text):
    v = expect(text, digits=15)
    assert v.digits is not None
