"""Hermite coefficients and the Eq. (8) quantities.

Paper: Eq. (2), p. 2; Eq. (8), p. 3; the Sec. 3 text on Fig. 1, p. 3 (sin, rho = 0.1);
Fig. 2 p. 4 (tanh, rho = 0.1).
"""

import math

import mpmath
import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from icl_symbolic.core.errors import ICLError, ValidityError
from icl_symbolic.engine.expr import g, parse_expr
from icl_symbolic.engine.gauss import exact_expectation
from icl_symbolic.engine.hermite import h, he, hermite_coeffs, stein_coefficient

from _examples import examples

S = sympy.Rational


def _is_zero(expr):
    return sympy.simplify(sympy.expand(expr)) == 0


# -- the convention ---------------------------------------------------------------------


def test_h_is_orthonormal_probabilists_not_physicists():
    for m in range(6):
        for j in range(m + 1):
            assert exact_expectation(h(m) * h(j)) == (1 if m == j else 0)
    assert he(4) == g**4 - 6 * g**2 + 3  # monic He_4
    assert sympy.Poly(he(5), g).LC() == 1
    assert he(2) != sympy.hermite(2, g)  # physicists' H_2 = 4g^2 - 2
    assert h(3) == (g**3 - 3 * g) / sympy.sqrt(6)


# -- the paper's checks -----------------------------------------------------------------


def test_sin_rho_0_1_fig1_values():
    """Fig. 1 (p. 3-4): sin teacher, rho = 0.1."""
    r = hermite_coeffs("sin(g)", M=8, rho="0.1")
    assert r.method == "exact"
    assert r.a1.exact == sympy.exp(-S(1, 2))
    assert _is_zero(r.E_f2.exact - (1 - sympy.exp(-2)) / 2)
    assert _is_zero(r.rho_nonlinear.exact - (S(1, 10) + (1 - sympy.exp(-2)) / 2 - sympy.exp(-1)))
    assert r.rho_nonlinear.to_str(6) == "0.164453"
    assert r.noise_normalized.to_str(6) == "0.447029"
    # the Sec. 3 text's 1.447 is (a1^2 + rho_nonlinear)/a1^2 = rho_f/a1^2, exactly one more
    caption = (r.a1_sq.exact + r.rho_nonlinear.exact) / r.a1_sq.exact
    assert _is_zero(caption - r.noise_normalized.exact - 1)
    assert abs(float(caption) - 1.447029) < 1e-6
    assert abs(float(r.noise_normalized.value) - 1.447029) > 0.9  # negative control
    # odd teacher: even coefficients vanish exactly; a_m = (-1)^((m-1)/2) e^{-1/2}/sqrt(m!)
    for m, v in enumerate(r.a):
        want = 0 if m % 2 == 0 else (-1) ** ((m - 1) // 2) * sympy.exp(-S(1, 2)) / sympy.sqrt(sympy.factorial(m))
        assert _is_zero(v.exact - want), m


def test_tanh_rho_0_1_fig2_values_against_independent_mpmath():
    """Fig. 2 (p. 4): tanh, rho = 0.1.  Reference computed here by a different
    route: Stein's lemma a1 = E[sech^2 g], and tanh^2 = 1 - sech^2 gives
    E[tanh^2] = 1 - E[sech^2]; the integral is Gauss-Legendre on [0, inf) of
    the even integrand (our code uses tanh-sinh on g tanh g)."""
    r = hermite_coeffs("tanh(g)", M=3, rho="0.1", digits=32)
    assert r.method == "mpmath"
    with mpmath.workdps(50):
        s = 2 * mpmath.quad(
            lambda t: mpmath.sech(t) ** 2 * mpmath.npdf(t), [0, 1, 2, 4, 8, 16, mpmath.inf], method="gauss-legendre"
        )
        a1, Ef2 = s, 1 - s
        rho_nl = mpmath.mpf(1) / 10 + Ef2 - a1**2
        # a_3 = E[tanh'''(g)]/sqrt(6), tanh''' = -2 sech^2 (1 - 3 tanh^2)
        a3 = (
            2
            * mpmath.quad(
                lambda t: -2 * mpmath.sech(t) ** 2 * (1 - 3 * mpmath.tanh(t) ** 2) * mpmath.npdf(t),
                [0, 1, 2, 4, 8, 16, mpmath.inf],
                method="gauss-legendre",
            )
            / mpmath.sqrt(6)
        )
        tol = mpmath.mpf(10) ** -31
        for ours, ref in ((r.a1, a1), (r.E_f2, Ef2), (r.rho_nonlinear, rho_nl), (r.a[3], a3)):
            assert ours.digits >= 30
            assert abs(ours.value - ref) < tol, (ours, ref)
        assert abs(r.a[0].value) < tol and abs(r.a[2].value) < tol
    assert r.a1.to_str(6) == "0.605706"  # the paper's rounded figures
    assert r.E_f2.to_str(6) == "0.394294"
    assert r.rho_nonlinear.to_str(6) == "0.127415"


@pytest.mark.parametrize(
    "text, a1, nonlinear_part",
    [
        ("g", 1, 0),
        ("g**2 - 1", 0, 2),
        ("g**3", 3, 6),
        ("2", 0, 4),
        ("-3/7", 0, S(9, 49)),
    ],
)
def test_teaching_table(text, a1, nonlinear_part):
    """rho_nonlinear - rho = sum_{m != 1} a_m^2 (the m = 0 term included)."""
    r = hermite_coeffs(text, M=8, rho="0.1")
    assert r.method == "exact"
    assert r.a1.exact == a1
    assert r.rho_nonlinear.exact - S(1, 10) == nonlinear_part
    assert r.parseval_residual.exact == 0
    if a1 == 0:
        assert r.noise_normalized is None and any("a1 = 0" in n for n in r.notes)
    else:
        assert r.noise_normalized.exact == (S(1, 10) + nonlinear_part) / a1**2


def test_zero_teacher_and_tiny_a1():
    r = hermite_coeffs("0", M=2)
    assert r.signal_fraction is None and r.noise_normalized is None
    # a1 = 0 numerically (tanh(g)^2 is even): below the certified precision -> None, said so
    r = hermite_coeffs("tanh(g)**2", M=2, digits=20)
    assert r.method == "mpmath" and r.noise_normalized is None
    assert any("within its error" in n for n in r.notes)


def test_library_is_all_correct_where_we_know_closed_forms():
    r = hermite_coeffs("relu(g)", M=4)
    assert [v.exact for v in r.a] == [
        1 / sympy.sqrt(2 * sympy.pi),
        S(1, 2),
        1 / (2 * sympy.sqrt(sympy.pi)),
        0,
        -1 / (4 * sympy.sqrt(3 * sympy.pi)),
    ]
    assert _is_zero(hermite_coeffs("sign(g)", M=1).a1.exact - sympy.sqrt(2 / sympy.pi))
    assert _is_zero(hermite_coeffs("erf(g)", M=1).a1.exact - 2 / sympy.sqrt(3 * sympy.pi))
    assert hermite_coeffs("gelu(g)", M=1).a1.exact == S(1, 2)
    assert _is_zero(hermite_coeffs("exp(g)", M=3).a[3].exact - sympy.exp(S(1, 2)) / sympy.sqrt(6))


def test_rho_input_and_errors():
    r = hermite_coeffs("g", rho=0.1)
    assert r.rho == S(1, 10) and r.rho_f.exact == S(11, 10)
    with pytest.raises(ICLError, match="rho"):
        hermite_coeffs("g", rho=-1)
    with pytest.raises(ICLError, match="M must"):
        hermite_coeffs("g", M=-1)
    with pytest.raises(ValidityError, match="not in L\\^2"):
        hermite_coeffs("exp(g**2/4)")  # E[f] finite but E[f^2] is not
    with pytest.raises(ValidityError, match="not in L\\^2"):
        hermite_coeffs("abs(g)**(-0.5)")


def test_callable_teacher_uses_mpmath_and_is_uncertified():
    r = hermite_coeffs(mpmath.tanh, M=1, digits=20)
    assert r.method == "mpmath" and r.expr is None
    assert r.a1.to_str(12) == "uncertified" and r.rho_nonlinear.to_str(12) == "uncertified"
    assert mpmath.nstr(r.a1.value, 12) == "0.605705509602"


def test_to_json_keys():
    d = hermite_coeffs("sin(g)", M=2, rho="0.1").to_json()
    for key in (
        "expr",
        "rho",
        "digits",
        "a",
        "a_exact",
        "E_f2",
        "a1",
        "rho_f",
        "rho_nonlinear",
        "noise_normalized",
        "method",
        "provenance",
    ):
        assert key in d
    assert d["a_exact"][1] == "exp(-1/2)" and d["a"][1].startswith("0.6065306597126334236")
    assert hermite_coeffs("g**2 - 1", M=2).to_json()["noise_normalized"] is None
    assert hermite_coeffs("tanh(g)", M=1, digits=15).to_json()["a_exact"] is None


@pytest.mark.heavy
def test_exact_and_mpmath_agree_on_the_library():
    for text in ("sin(g)", "relu(g)", "gelu(g)", "sign(g)", "exp(g)", "erf(g)"):
        ex = hermite_coeffs(text, M=5, digits=30)
        mp = hermite_coeffs(text, M=5, digits=30, exact=False)
        assert ex.method == "exact" and mp.method == "mpmath"
        for u, v in zip((*ex.a, ex.E_f2), (*mp.a, mp.E_f2)):
            with mpmath.workdps(50):
                ref = mpmath.mpf(str(sympy.N(u.exact, 50)))
                assert abs(ref - v.value) <= mpmath.mpf(10) ** -30 * max(1, abs(ref)), (text, u, v)


# -- property tests (hypothesis) ---------------------------------------------------------

coef = st.fractions(min_value=-5, max_value=5, max_denominator=7).map(lambda q: S(q.numerator, q.denominator))
polys = st.lists(coef, min_size=1, max_size=7).map(lambda cs: sum(c * g**k for k, c in enumerate(cs)))


@settings(max_examples=examples(15))
@given(polys)
@example(g**3)
@example(g**2 - 1)
@example(sympy.Integer(2))
def test_parseval_and_stein_for_random_polynomials(f):
    """Parseval E[f^2] = sum_m a_m^2 holds exactly with M = deg f, coefficients
    above the degree vanish, and a_m = E[f^(m)]/sqrt(m!) (Stein's lemma)."""
    deg = max(sympy.Poly(f, g).degree(), 0)
    r = hermite_coeffs(f, M=deg + 2)
    assert r.method == "exact"
    assert r.parseval_residual.exact == 0
    assert r.a[deg + 1].exact == 0 and r.a[deg + 2].exact == 0
    for m in range(deg + 1):
        assert _is_zero(r.a[m].exact - stein_coefficient(f, m))


ATOMS = ["sin(g)", "cos(2*g + 1)", "exp(g/2)", "erf(g)", "relu(g)", "abs(g - 1)", "sign(g)", "g**3", "heaviside(g)"]


@pytest.mark.heavy
@settings(max_examples=examples(10))
@given(st.sampled_from(ATOMS), st.sampled_from(ATOMS), coef, coef)
@example("sin(g)", "g**3", S(1), S(-2))
def test_linearity(f1, f2, alpha, beta):
    r1, r2 = hermite_coeffs(f1, M=4), hermite_coeffs(f2, M=4)
    r = hermite_coeffs(parse_expr(f"({alpha})*({f1}) + ({beta})*({f2})"), M=4)
    for m in range(5):
        assert _is_zero(r.a[m].exact - alpha * r1.a[m].exact - beta * r2.a[m].exact), m


@pytest.mark.heavy
@settings(max_examples=examples(10))
@given(st.sampled_from(ATOMS + ["tanh(g) + g**2/3", "softplus(g)"]))
@example("sin(g) + exp(g/2)")
@example("tanh(g) + g**2/3")
def test_parity(text):
    """f(-g) has Hermite coefficients (-1)^m a_m (h_m has parity (-1)^m)."""
    f = parse_expr(text)
    r, rm = hermite_coeffs(f, M=5, digits=25), hermite_coeffs(f.subs(g, -g), M=5, digits=25)
    for m in range(6):
        u, v = r.a[m], rm.a[m]
        if u.method == "exact" and v.method == "exact":
            assert _is_zero(v.exact - (-1) ** m * u.exact)
        else:
            with mpmath.workdps(35):
                assert abs(v.value - (-1) ** m * u.value) <= u.abs_err + v.abs_err + mpmath.mpf(10) ** -30


@settings(max_examples=examples(12))
@given(polys, st.sampled_from([S(1, 2), S(2), S(3, 2), S(-1), S(1, 3), sympy.sqrt(2)]))
@example(g**3, S(2))
def test_hermite_scaling_identity_for_polynomials(f, c):
    """He_n(c x) = sum_k c^(n-2k) (c^2-1)^k n!/(k! (n-2k)! 2^k) He_(n-2k)(x), so with
    f = sum_n b_n h_n:  a_j[f(c g)] = sum_k b_(j+2k) c^j (c^2-1)^k sqrt((j+2k)!/j!) / (k! 2^k)."""
    deg = max(sympy.Poly(f, g).degree(), 0)
    b = [v.exact for v in hermite_coeffs(f, M=deg).a]
    scaled = hermite_coeffs(sympy.expand(f.subs(g, c * g)), M=deg).a
    for j in range(deg + 1):
        want = sum(
            b[j + 2 * k]
            * c**j
            * (c**2 - 1) ** k
            * sympy.sqrt(sympy.factorial(j + 2 * k) / sympy.factorial(j))
            / (sympy.factorial(k) * 2**k)
            for k in range((deg - j) // 2 + 1)
        )
        assert _is_zero(scaled[j].exact - want), j


# random expressions in the input language restricted to closed-form cases
lin = st.tuples(st.sampled_from(["1", "2", "1/2", "-1", "3/2"]), st.sampled_from(["0", "1", "-1/3"]))
closed_atom = st.one_of(
    lin.map(lambda t: f"sin({t[0]}*g + {t[1]})"),
    lin.map(lambda t: f"cos({t[0]}*g + {t[1]})"),
    lin.map(lambda t: f"exp({t[0]}*g/2)"),
    lin.map(lambda t: f"erf({t[0]}*g)"),
    lin.map(lambda t: f"relu(g - {t[1]})"),
    st.sampled_from(["abs(g)", "sign(g)", "heaviside(g - 1)", "g", "g**2", "max(g, 1 - g)"]),
)


@st.composite
def closed_exprs(draw):
    a = draw(closed_atom)
    b = draw(closed_atom)
    op = draw(st.sampled_from(["+", "*", "-"]))
    k = draw(st.integers(0, 2))
    c = draw(st.sampled_from(["1", "3", "-1/2"]))
    if "erf" in a and "erf" in b and op == "*":
        op = "+"
    if op == "*" and ("erf" in a or "erf" in b) and any(s in a + b for s in ("relu", "abs", "sign", "heav", "max")):
        op = "+"  # erf on a half-line has no closed form in our rules
    return f"{c}*({a}) {op} g**{k}*({b})"


@pytest.mark.heavy
@settings(max_examples=examples(12))
@given(closed_exprs())
@example("sin(g) + g**2*(relu(g))")
def test_exact_and_mpmath_paths_agree_on_random_expressions(text):
    ex = hermite_coeffs(text, M=4, digits=30)
    mp = hermite_coeffs(text, M=4, digits=30, exact=False)
    assert all(v.method == "exact" for v in ex.a), text
    assert mp.method == "mpmath"
    with mpmath.workdps(50):
        for u, v in zip((*ex.a, ex.E_f2), (*mp.a, mp.E_f2)):
            ref = mpmath.mpf(str(sympy.N(u.exact, 50))) if u.method == "exact" else u.value
            assert abs(ref - v.value) <= mpmath.mpf(10) ** -29 * max(1, abs(ref)), (text, u, v)


def test_float64_callables_are_not_certified():
    """math.sin returns floats whatever the working precision; no callable is certified."""
    r = hermite_coeffs(math.sin, M=2, digits=30)
    assert r.a1.digits is None
    assert any("callable" in n for n in r.notes)
    with mpmath.workdps(40):
        assert abs(r.a1.value - mpmath.exp(-0.5)) <= mpmath.mpf(10) ** -14
    assert hermite_coeffs(mpmath.sin, M=2, digits=30).a1.digits is None


def test_M_zero_still_reports_a1():
    r = hermite_coeffs("g", M=0)
    assert len(r.a) == 1 and r.a1.exact == 1 and r.method == "exact"
    assert r.parseval_residual.exact == 1  # E[g^2] - a_0^2


def test_docs_examples_run():
    """The Python examples in docs/hermite.md are executed (docs cannot rot)."""
    import doctest
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "docs" / "hermite.md"
    res = doctest.testfile(str(path), module_relative=False)
    assert res.attempted >= 4 and res.failed == 0


def test_callable_that_rejects_mpmath_numbers_is_a_clear_error():
    def only_floats(x):
        if not isinstance(x, float):
            raise TypeError("floats only")
        return math.tanh(x)

    with pytest.raises(ICLError, match="must accept an mpmath number"):
        hermite_coeffs(only_floats, M=1)
