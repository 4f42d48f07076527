"""Gaussian expectations E[F(z)], z ~ N(0, omega): exact rules, mpmath path, validity."""

import math

import mpmath
import pytest
import sympy

from icl_symbolic.core.errors import ICLError, ValidityError
from icl_symbolic.engine.expr import g, parse_expr
from icl_symbolic.engine.gauss import exact_expectation, exact_moments, expect, to_rational

S = sympy.Rational
pi, e = sympy.pi, sympy.E


@pytest.mark.parametrize(
    "text, omega, closed_form",
    [
        ("g**4", 1, 3),
        ("g**4", S(1, 2), S(3, 4)),
        ("g**6 - g", 2, 120),  # 15 omega^3
        ("sin(g)**2", 1, (1 - sympy.exp(-2)) / 2),
        ("g*sin(g)", 1, sympy.exp(-S(1, 2))),
        ("cos(2*g + 1)", 1, sympy.exp(-2) * sympy.cos(1)),
        ("exp(3*g)", S(3, 10), sympy.exp(S(27, 20))),  # e^{c^2 omega / 2}
        ("relu(g)**2", 1, S(1, 2)),
        ("relu(g)", 2, 1 / sympy.sqrt(pi)),  # sqrt(omega/(2 pi))
        ("abs(g)**3", 1, 2 * sympy.sqrt(2 / pi)),
        ("heaviside(g - 1)", 1, sympy.erfc(1 / sympy.sqrt(2)) / 2),
        ("erf(g)**2", 1, 2 / pi * sympy.asin(S(2, 3))),
        ("erf(2*g + 1)", 1, sympy.erf(1 / sympy.sqrt(9))),
        ("g*erf(g)", 1, 2 / sympy.sqrt(3 * pi)),
        ("sin(g)**4", 1, S(3, 8) - sympy.exp(-2) / 2 + sympy.exp(-8) / 8),
        ("exp(g**2/4)", 1, sympy.sqrt(2)),
    ],
)
def test_exact_closed_forms(text, omega, closed_form):
    v = expect(text, omega=omega)
    assert v.method == "exact"
    assert sympy.simplify((v.exact - closed_form).rewrite(sympy.erf)) == 0, (v.exact, closed_form)


# Expressions with closed forms: the exact rules and the mpmath path must agree
# to the requested 30 digits.  Includes omega != 1, kinks, jumps, erf and the
# Lemma-1 moment shapes E[g^2 f^2], E[g f^3], E[f^4] the moments module needs.
AGREE = [
    ("g**2*sin(g)**2", "0.3"),
    ("g*sin(g)**3", "2"),
    ("sin(g)**4", "1.7"),
    ("g**2*relu(g)**2", "0.5"),
    ("g*relu(g - 1)**3", "1"),
    ("abs(g - 1)**4", "0.8"),
    ("sign(g)*g**3", "1"),
    ("g**2*erf(g)**2", "1"),
    ("gelu(g)**2", "0.3"),
    ("exp(g)*cos(g)", "1"),
    ("relu(g)*sin(2*g)", "1"),
    ("heaviside(g + 0.5)*g**2", "1.3"),
    ("max(g, 1 - g)**2", "1"),
    ("erf(g/3)*g**3", "2"),
    ("g**2*abs(abs(g) - 1)**3", "0.7"),
    ("sin(g + 1)*heaviside(g - 1)", "1"),
]


@pytest.mark.parametrize("text, omega", AGREE)
def test_exact_and_mpmath_paths_agree_to_requested_digits(text, omega):
    ex = expect(text, omega=omega, digits=30)
    mp = expect(text, omega=omega, digits=30, exact=False)
    assert ex.method == "exact" and mp.method == "mpmath"
    assert mp.digits == 30
    with mpmath.workdps(50):
        exact50 = mpmath.mpf(str(sympy.N(ex.exact, 50)))  # ex.value itself holds only 35 digits
        diff = abs(exact50 - mp.value)
        scale = max(abs(exact50), 1)
        assert diff <= mpmath.mpf(10) ** -30 * scale, (text, omega, diff)
        assert diff <= mp.abs_err + mpmath.mpf(10) ** -35  # the error estimate is honest


def test_mpmath_path_for_tanh_against_an_independent_formula():
    """E[tanh(g)^2] = 1 - E[sech(g)^2] (tanh^2 = 1 - sech^2); the reference is an
    even-function Gauss-Legendre integral written here, not our tanh-sinh code."""
    v = expect("tanh(g)**2", digits=30)
    assert v.method == "mpmath" and v.digits == 30
    with mpmath.workdps(45):
        sech2 = 2 * mpmath.quad(
            lambda t: mpmath.sech(t) ** 2 * mpmath.npdf(t), [0, 2, 4, 8, 16, mpmath.inf], method="gauss-legendre"
        )
        assert abs((1 - sech2) - v.value) < mpmath.mpf(10) ** -31


def test_removable_singularity_and_rational_functions():
    # E[sin(g)/g] = sqrt(pi/2) erf(1/sqrt(2)) (integrate E[cos(t g)] = exp(-t^2/2) over t in [0, 1])
    v = expect("sin(g)/g", digits=25)
    with mpmath.workdps(35):
        ref = mpmath.sqrt(mpmath.pi / 2) * mpmath.erf(1 / mpmath.sqrt(2))
        assert abs(v.value - ref) < mpmath.mpf(10) ** -25
    # E[1/(1+g^2)] = sqrt(pi/2) e^{1/2} erfc(1/sqrt 2)
    v = expect("1/(1 + g**2)", digits=25)
    with mpmath.workdps(35):
        ref = mpmath.sqrt(mpmath.pi / 2) * mpmath.e**0.5 * mpmath.erfc(1 / mpmath.sqrt(2))
        assert abs(v.value - ref) < mpmath.mpf(10) ** -25


def test_callable_is_computed_but_never_certified():
    """A Python callable is opaque: no scale analysis can exclude a narrow feature between
    the nodes, so its quadrature value is kept but no digit is claimed."""

    def step(t):
        return mpmath.mpf(1) if t > 1 else mpmath.mpf(0)

    v = expect(step, digits=30, breakpoints=[1])
    assert v.method == "mpmath" and v.digits is None and v.to_str(30) == "uncertified"
    assert "Python callable" in v.note and not mpmath.isfinite(v.abs_err)
    with mpmath.workdps(40):
        truth = mpmath.erfc(1 / mpmath.sqrt(2)) / 2  # P(z > 1)
        assert abs(v.value - truth) < mpmath.mpf(10) ** -30  # the number itself is still computed well
    assert expect(step, digits=30).digits is None


@pytest.mark.parametrize(
    "text, omega, reason",
    [
        ("exp(g**2)", 1, "grows at \\+inf"),
        ("exp(g**2/4)", 2, "grows"),  # fine at omega = 1, divergent at omega = 2
        ("exp(g**3)", 1, "grows"),
        ("exp(-g**3)", 1, "grows at -inf"),
        ("1/g", 1, "singularity at g = 0"),
        ("1/(g - 1)**2", 1, "singularity at g = 1"),
        ("1/sin(g)", 1, "singularity"),
        ("tan(g)", 1, None),
    ],
)
def test_divergent_integrals_are_refused_with_a_reason(text, omega, reason):
    if text == "tan(g)":
        with pytest.raises(ICLError):  # not even in the input language
            expect(text)
        return
    with pytest.raises(ValidityError, match=reason):
        expect(text, omega=omega)


def test_negative_control_integrable_neighbours_pass():
    assert expect("exp(g**2/4)", omega=1).exact == sympy.sqrt(2)
    # integrable singularity: closed form E|g|^s = 2^(s/2) Gamma((s+1)/2)/sqrt(pi), s = -1/2
    truth = 2**-0.25 * math.gamma(0.25) / math.sqrt(math.pi)
    v = expect("abs(g)**(-0.5)", digits=15)
    assert v.method == "exact" and abs(float(v) - truth) < 1e-14
    q = expect("abs(g)**(-0.5)", digits=15, exact=False)  # quadrature, bound holds
    assert q.method == "mpmath" and abs(float(q.value) - truth) <= float(q.abs_err) + 1e-15
    assert expect("exp(-g**4)", digits=15).method == "mpmath"


def test_complex_valued_and_bad_arguments():
    with pytest.raises(ValidityError, match="complex"):
        expect("log(g)")
    with pytest.raises(ICLError, match="omega"):
        expect("g**2", omega=-1)
    with pytest.raises(ICLError, match="digits"):
        expect("g**2", digits=0)
    assert to_rational("0.3") == S(3, 10)
    assert to_rational(0.1) == S(1, 10)


def test_unsupported_forms_fall_back_instead_of_hanging():
    for text in (
        "tanh(g)",
        "sigmoid(g)**3",
        "erf(g)**4",
        "relu(g)*erf(g)",
        "sin(exp(g/4))",
        "erf(g + 1)**2",
        "log(1 + g**2)",
    ):
        assert exact_expectation(parse_expr(text)) is None, text
    v = expect("tanh(sin(g) + g/3)**2", digits=20)
    assert v.method == "mpmath" and v.digits == 20


def test_exact_moments_are_those_of_the_normal_distribution():
    assert exact_moments(sympy.Integer(1), 6) == [1, 0, 1, 0, 3, 0, 15]
    # moments of sqrt(omega) g are taken in g after z = sqrt(omega) g: E[g^j F(sqrt(omega) g)]
    assert exact_moments(g**2, 2, omega=S(1, 3)) == [S(1, 3), 0, 1]


@pytest.mark.parametrize(
    "text, reason",
    [
        ("exp(exp(exp(g)))", "not finite"),
        ("exp(exp(g))", "grows at \\+inf"),
    ],
)
def test_double_exponentials_are_refused_quickly_not_hung(text, reason):
    with pytest.raises(ValidityError, match=reason):
        expect(text, digits=15)


def test_bounded_double_exponential_phase_is_refused_for_its_true_reason():
    """sin(exp(exp(g))) is bounded, hence integrable (gaussian_rate 0): it is refused because
    its phase is too fast to resolve, not as divergent (a refusal gives the true reason)."""
    with pytest.raises(ICLError, match="infinite slope") as info:
        expect("sin(exp(exp(g)))", digits=15)
    assert not isinstance(info.value, ValidityError)


def test_bounded_double_exponentials_are_integrated():
    # exp(-exp(g)) is bounded: E = E[exp(-e^g)], compared with an independent
    # Gauss-Legendre integral after the substitution u = e^g (no tanh-sinh)
    v = expect("exp(-exp(g))", digits=20)
    assert v.method == "mpmath" and v.digits == 20
    with mpmath.workdps(30):
        ref = mpmath.quad(
            lambda u: mpmath.exp(-u) * mpmath.npdf(mpmath.log(u)) / u,
            [0, mpmath.mpf(1) / 100, 1, 10, 100, mpmath.inf],
            method="gauss-legendre",
        )
        assert abs(v.value - ref) < mpmath.mpf(10) ** -20
    assert expect("exp(-exp(exp(g)))", digits=15).method == "mpmath"  # inner overflow at far nodes is 0


def test_singularity_off_the_scan_grid_is_found():
    # 1/|g - 1/7| has no sign change: the zero must come from the argument of Abs
    with pytest.raises(ValidityError, match="singularity at g = 0.142857"):
        expect("1/abs(g - 1/7)")
    with pytest.raises(ValidityError, match="singularity"):
        expect("(g - 1/7)**(-2)")
