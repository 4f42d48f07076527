"""The input language (whitelist parser) and Teacher objects."""

import math
import sys

import mpmath
import numpy as np
import pytest
import sympy

from icl_symbolic.core.errors import ICLError, ParseError, ValidityError
from icl_symbolic.engine.expr import g, parse_expr, teacher
from icl_symbolic.engine.library import LIBRARY

# -- numbers and operators ------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0.1", sympy.Rational(1, 10)),
        ("1e-3", sympy.Rational(1, 1000)),
        ("2.5E2", sympy.Integer(250)),
        (".5", sympy.Rational(1, 2)),
        ("2/3", sympy.Rational(2, 3)),
        ("-g**2", -(g**2)),
        ("(-g)**2", g**2),
        ("2**3**2", sympy.Integer(512)),  # right-associative, like Python
        ("g^3", g**3),
        ("2*-g", -2 * g),
        ("1 - 2 - 3", sympy.Integer(-4)),  # left-associative
        ("8/4/2", sympy.Integer(1)),
        ("pi + E", sympy.pi + sympy.E),
        ("2**-1", sympy.Rational(1, 2)),
    ],
)
def test_numbers_and_precedence(text, expected):
    assert parse_expr(text) == expected


def test_decimals_are_exact_rationals_not_floats():
    e = parse_expr("0.1*g + 0.2")
    assert not e.atoms(sympy.Float)
    assert e == g / 10 + sympy.Rational(1, 5)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("sin(g)", sympy.sin(g)),
        ("cos(g)", sympy.cos(g)),
        ("exp(g)", sympy.exp(g)),
        ("tanh(g)", sympy.tanh(g)),
        ("erf(g)", sympy.erf(g)),
        ("erfc(g)", sympy.erfc(g)),
        ("abs(g)", sympy.Abs(g)),
        ("sign(g)", sympy.sign(g)),
        ("sqrt(2)", sympy.sqrt(2)),
        ("log(E)", sympy.Integer(1)),
        ("relu(g)", sympy.Max(g, 0)),
        ("sigmoid(g)", 1 / (1 + sympy.exp(-g))),
        ("softplus(g)", sympy.log(1 + sympy.exp(g))),
        ("gelu(g)", g * (1 + sympy.erf(g / sympy.sqrt(2))) / 2),
        ("silu(g)", g / (1 + sympy.exp(-g))),
        ("max(g, 1, -g)", sympy.Max(g, 1, -g)),
        ("min(g, 0)", sympy.Min(g, 0)),
        ("He(3, g)", g**3 - 3 * g),
        ("h(2, g)", (g**2 - 1) / sympy.sqrt(2)),
        ("He(2, 2*g)", 4 * g**2 - 1),
    ],
)
def test_functions_map_to_recognisable_sympy(text, expected):
    assert sympy.simplify(parse_expr(text) - expected) == 0


def test_heaviside_at_zero_is_one_half():
    assert parse_expr("heaviside(g)").subs(g, 0) == sympy.Rational(1, 2)
    assert teacher("heaviside(g)").numpy(np.array([0.0]))[0] == 0.5


def test_variables_are_plain_real_symbols():
    e = parse_expr("rho + a1**2*kappa - lam", variables=("rho", "a1", "kappa", "lam"))
    syms = {s.name: s for s in e.free_symbols}
    assert set(syms) == {"rho", "a1", "kappa", "lam"}
    assert all(s.is_real and s.is_positive is None for s in syms.values())
    with pytest.raises(ParseError, match="unknown name 'g'"):
        parse_expr("g + rho", variables=("rho",))
    with pytest.raises(ICLError):
        parse_expr("x", variables=("sin",))


# -- rejection, with the offending position ------------------------------------------


@pytest.mark.parametrize(
    "text, pos",
    [
        ("sin(g) + foo(g)", 9),
        ("g + $", 4),
        ("g.real", 1),
        ("sin g", 0),
        ("(g", 2),
        ("g)", 1),
        ("1/0", 1),
        ("g**g", 3),
        ("He(2.5, g)", 3),
        ("He(201, g)", 3),
        ("sin(g, g)", 0),
        ("", 0),
        ("x", 0),
    ],
)
def test_errors_point_at_the_offending_token(text, pos):
    with pytest.raises(ParseError) as info:
        parse_expr(text)
    assert info.value.position == pos
    assert "\n" not in str(info.value)


INJECTIONS = [
    "__import__('os').system('touch pwned')",
    "open('pwned', 'w').write('x')",
    "exec(\"open('pwned','w')\")",
    "eval('1')",
    "g.__class__.__mro__",
    "sin.__globals__",
    "lambda: open('pwned', 'w')",
    "[open('pwned','w') for _ in (1,)]",
    "import os",
    "g; __import__('this')",
    "__import__('this')",
    "getattr(g, 'x')",
    "Symbol('pwned')",
    'sympify(\'open("pwned","w")\')',
    "'pwned'",
    "f'{open(1)}'",
    "__builtins__",
    "g if 1 else 0",
    "os.system('touch pwned')",
]


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_attempts_are_rejected_and_nothing_runs(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    had_this = "this" in sys.modules
    with pytest.raises(ParseError) as info:
        parse_expr(text)
    assert info.value.position is not None
    assert not (tmp_path / "pwned").exists()
    assert ("this" in sys.modules) == had_this
    with pytest.raises(ICLError):
        teacher(text)


@pytest.mark.parametrize(
    "text, match",
    [
        ("g**10**10", "exponent too large"),
        ("9**9**9", "exponent too large"),
        ("(g**64)**2", "power tower"),
        ("10**(10**3)", "exponent too large"),
        ("(" * 200 + "g" + ")" * 200, "nested deeper"),
        ("-" * 200 + "g", "nested deeper"),
        ("g+" * 50_000 + "g", "longer than"),
        ("1" * 300, "more than 200 digits"),
        ("1e99999", "exponent out of range"),
    ],
)
def test_absurd_sizes_are_rejected(text, match):
    with pytest.raises(ParseError, match=match):
        parse_expr(text)


def test_large_but_reasonable_inputs_parse():
    assert parse_expr("g**64") == g**64
    assert parse_expr("He(200, g)").as_poly(g).degree() == 200
    assert parse_expr("+".join(["g"] * 1000)) == 1000 * g


# -- Teacher objects --------------------------------------------------------------------


def test_teacher_numpy_is_vectorised_on_any_shape():
    t = teacher("relu(g) + 2")
    z = np.array([[-1.0, 0.5], [2.0, -3.0]])
    assert t.numpy(z).shape == (2, 2)
    np.testing.assert_array_equal(t.numpy(z), np.maximum(z, 0) + 2)
    c = teacher("2")
    assert c.numpy(np.zeros((3, 1))).shape == (3, 1)
    assert (c.numpy(np.zeros(4)) == 2).all()


@pytest.mark.parametrize("name", list(LIBRARY))
def test_numpy_and_mpmath_evaluations_agree(name):
    t = teacher(LIBRARY[name])
    z = np.array([-3.3, -1.0, -0.2, 0.0, 0.7, 1.9, 4.1])
    with mpmath.workdps(30):
        ref = np.array([float(t.mp(mpmath.mpf(str(x)))) for x in z])
    np.testing.assert_allclose(t.numpy(z), ref, rtol=1e-13, atol=1e-15)


def test_callable_teachers_vectorised_or_not():
    t = teacher(math.sin)  # not vectorised: np.vectorize fallback
    np.testing.assert_allclose(t.numpy(np.array([[0.0, 1.0]])), [[0.0, math.sin(1.0)]])
    assert t.expr is None and t.label == "sin"
    t2 = teacher(np.tanh, label="tanh", breakpoints=[0.5, -1.0])
    assert t2.breakpoints == (-1.0, 0.5)
    assert t2.numpy(np.ones((2, 2))).shape == (2, 2)


def test_breakpoints():
    assert teacher("relu(g - 1) + abs(g)").breakpoints == (0, 1)
    assert teacher("sign(g**2 - 2)").breakpoints == (-sympy.sqrt(2), sympy.sqrt(2))
    assert teacher("max(g, 1 - g)").breakpoints == (sympy.Rational(1, 2),)
    assert teacher("sin(g) + g**3").breakpoints == ()
    bp = teacher("heaviside(g - pi)").breakpoints
    assert bp == (sympy.pi,)
    # nested kinks keep exact breakpoints (piecewise-polynomial arguments)
    assert teacher("abs(abs(g) - 1)").breakpoints == (-1, 0, 1)
    assert teacher("max(abs(g), 1/2)").breakpoints == (-sympy.Rational(1, 2), 0, sympy.Rational(1, 2))
    # non-polynomial arguments: numeric zeros refined to 40+ digits
    bp = teacher("sign(sin(g))").breakpoints
    assert len(bp) == 25 and abs(float(bp[13]) - math.pi) < 1e-15  # k pi, |k| <= 12, in [-40, 40]
    with mpmath.workdps(45):
        assert abs(mpmath.mpf(str(bp[13])) - mpmath.pi) < mpmath.mpf(10) ** -40


def test_teacher_validation():
    with pytest.raises(ICLError, match="only depend on g"):
        teacher(sympy.Symbol("y") * g)
    with pytest.raises(ValidityError, match="complex-valued"):
        teacher("log(g)")
    with pytest.raises(ValidityError, match="complex-valued"):
        teacher("sqrt(g - 1)")
    with pytest.raises(ValidityError, match="not real"):
        teacher(sympy.I * g)
    assert teacher("log(1 + g**2)").expr == sympy.log(1 + g**2)  # real everywhere: accepted
    plain = teacher(sympy.Symbol("g") ** 2)  # a plain Symbol('g') is accepted
    assert plain.expr == g**2
    assert teacher(plain) is plain


def test_sympy_floats_are_read_as_exact_decimals():
    t = teacher(sympy.Float(0.1) * g + sympy.Float(2.5))
    assert t.expr == g / 10 + sympy.Rational(5, 2)
