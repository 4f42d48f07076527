"""Value arithmetic: exact stays exact, error bounds stay bounds, standard errors propagate."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from icl_symbolic.core.values import Value


def mp(val, err, digits=30):
    with mpmath.workdps(digits + 10):
        return Value(mpmath.mpf(val), "mpmath", digits=digits, abs_err=mpmath.mpf(err))


def test_exact_op_exact_is_exact_at_the_smaller_digits():
    a = Value.from_exact(sympy.exp(-sympy.Rational(1, 2)), digits=40)
    b = Value.from_exact(sympy.Rational(1, 3), digits=25)
    for r, ex in (
        (a + b, sympy.exp(-sympy.Rational(1, 2)) + sympy.Rational(1, 3)),
        (a - b, sympy.exp(-sympy.Rational(1, 2)) - sympy.Rational(1, 3)),
        (a * b, sympy.exp(-sympy.Rational(1, 2)) / 3),
        (a / b, 3 * sympy.exp(-sympy.Rational(1, 2))),
        (a**2, sympy.exp(-1)),
        (-a, -sympy.exp(-sympy.Rational(1, 2))),
    ):
        assert r.method == "exact" and sympy.simplify(r.exact - ex) == 0
    assert (a + b).digits == 25 and (a + 1).digits == 40
    with mpmath.workdps(60):
        assert (a + 1).to_str() == mpmath.nstr(mpmath.e ** mpmath.mpf(-0.5) + 1, 40)


def test_plain_numbers_are_exact_and_floats_are_read_through_repr():
    a = Value.from_exact(sympy.Integer(2), digits=20)
    assert (a + Fraction(1, 10)).exact == sympy.Rational(21, 10)
    assert (a * 0.5).exact == 1
    assert (a + 0.1).exact == sympy.Rational(21, 10)  # as gauss.to_rational("0.1")
    assert (a + mpmath.mpf(0.1)).exact == 2 + sympy.Rational(3602879701896397, 2**55)
    assert (np.float64(3.0) * a).exact == 6  # numpy defers to Value
    assert (1 - a).exact == -1 and (1 / a).exact == sympy.Rational(1, 2)
    with pytest.raises(TypeError):
        a + "1"
    with pytest.raises(ZeroDivisionError):
        a / 0


@settings(deadline=None)
@given(
    st.floats(-5, 5),
    st.floats(1e-12, 1e-3),
    st.floats(-5, 5),
    st.floats(1e-12, 1e-3),
    st.floats(-1, 1),
    st.floats(-1, 1),
    st.sampled_from("+-*/"),
)
def test_error_bounds_contain_the_truth(x, ex, y, ey, sx, sy, op):
    """Perturb the inputs anywhere inside their bounds: the exact result of the operation on
    the perturbed inputs must lie inside the propagated bound."""
    a, b = mp(x, ex), mp(y, ey)
    if op == "/" and abs(y) <= 2 * ey:
        return
    with mpmath.workdps(60):
        tx, ty = mpmath.mpf(x) + sx * mpmath.mpf(ex), mpmath.mpf(y) + sy * mpmath.mpf(ey)
        ops = {"+": lambda u, v: u + v, "-": lambda u, v: u - v, "*": lambda u, v: u * v, "/": lambda u, v: u / v}
        truth, r = ops[op](tx, ty), ops[op](a, b)
        assert r.method == "mpmath"
        assert abs(truth - mpmath.mpf(r.value)) <= mpmath.mpf(r.abs_err) * (1 + mpmath.mpf(10) ** -20)


@settings(deadline=None)
@given(
    st.floats(0.1, 5),
    st.floats(1e-12, 1e-3),
    st.sampled_from([2, 3, -1, Fraction(1, 2), Fraction(-3, 2)]),
    st.floats(-1, 1),
)
def test_power_bound_contains_the_truth(x, ex, p, s):
    if x <= 2 * ex:
        return
    a = mp(x, ex)
    with mpmath.workdps(60):
        truth = (
            (mpmath.mpf(x) + s * mpmath.mpf(ex)) ** mpmath.mpf(p.numerator if isinstance(p, int) else p.numerator)
            if isinstance(p, int)
            else (mpmath.mpf(x) + s * mpmath.mpf(ex)) ** (mpmath.mpf(p.numerator) / p.denominator)
        )
        r = a**p
        assert abs(truth - mpmath.mpf(r.value)) <= mpmath.mpf(r.abs_err) * (1 + mpmath.mpf(10) ** -20)


def test_cancellation_loses_digits_visibly():
    a, b = mp("1.000001", "1e-30"), mp("1", "1e-30")
    d = a - b
    assert d.method == "mpmath" and d.digits == 23  # floor(-log10(2e-30 / 1e-6))
    assert mp("1", "1e-30", digits=12).__add__(mp("1", "1e-30")).digits == 12


def test_exact_with_mpmath_is_mpmath():
    a = Value.from_exact(sympy.Rational(1, 10), digits=30)
    r = a + mp("0.5", "1e-25")
    assert r.method == "mpmath" and r.to_str() == "0.6" and mpmath.mpf(r.abs_err) < mpmath.mpf("1.0000001e-25")


def test_numeric_without_error_estimate_stays_without():
    v = Value(0.3, "numeric")
    r = v * 2
    assert r.method == "numeric" and r.abs_err is None and float(r) == 0.6
    assert (Value(0.3, "numeric", abs_err=1e-12) * 2).abs_err == pytest.approx(2e-12)


def test_standard_errors_propagate_to_first_order():
    """The delta-method SE of x*y/z matches the spread of the same expression over replicates."""
    rng = np.random.default_rng(20261201)
    mx, my, mz, sx, sy, sz = 2.0, 3.0, 4.0, 0.01, 0.02, 0.015
    x = Value(mx, "mc", stderr=sx, n_samples=1000, seeds=(1,))
    y = Value(my, "mc", stderr=sy, n_samples=1000, seeds=(2,))
    z = Value(mz, "sim", stderr=sz, n_samples=5, seeds=(3, 4))
    r = x * y / z - 1
    assert r.method == "sim" and r.seeds == (1, 2, 3, 4) and r.n_samples == 5
    n = 40_000
    samples = rng.normal(mx, sx, n) * rng.normal(my, sy, n) / rng.normal(mz, sz, n) - 1
    spread = samples.std(ddof=1)
    # relative SE of a sample standard deviation is 1/sqrt(2(n-1)) = 0.35 %; 5 SE plus the
    # second-order (delta-method) bias, which is below 0.1 % at these relative errors
    assert abs(r.stderr / spread - 1) < 5 / np.sqrt(2 * (n - 1)) + 1e-3
    assert abs(float(r) - samples.mean()) < 5 * spread / np.sqrt(n) + 1e-4


def test_random_values_sharing_seeds_are_refused():
    x = Value(2.0, "mc", stderr=0.1, n_samples=10, seeds=(1,))
    with pytest.raises(ValueError, match="share seeds"):
        x - x
    with pytest.raises(ValueError, match="share seeds"):
        x + Value(1.0, "mc", stderr=0.1, n_samples=10)
    assert (x * 2).stderr == pytest.approx(0.2) and (x + 1).method == "mc"


def test_repr_is_short_and_says_how():
    a = Value.from_exact(sympy.exp(-sympy.Rational(1, 2)), digits=40)
    assert repr(a) == "Value(exp(-1/2) = 0.6065306597126334236, exact)"
    m = Value(0.25, "mc", stderr=0.01, n_samples=1000, seeds=(42,))
    assert repr(m) == "Value(0.25, Monte Carlo, n=1000, SE=0.01, seed=42)"
    assert a._repr_latex_() == r"$\displaystyle e^{- \frac{1}{2}} \approx 0.6065306597126334236$"


def test_provenance_of_an_extrapolated_simulation_value_names_seeds_and_dof():
    """n_samples = dof of its SE + 1 for an extrapolated value (the jackknife's): not to be read as a seed count."""
    v = Value(0.1, "sim", stderr=0.01, n_samples=7, seeds=(0, 1, 2, 3))
    assert "over 7 seeds" not in v.provenance() and "6 dof" in v.provenance() and "seeds 0..3" in v.provenance()
    w = Value(0.1, "sim", stderr=0.01, n_samples=4, seeds=(0, 1, 2, 3))
    assert w.provenance().startswith("simulation over 4 seeds")
