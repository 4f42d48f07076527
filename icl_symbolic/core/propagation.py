"""Evaluating a SymPy expression at Values, with first-order error propagation.

The one implementation used wherever a formula is evaluated at computed
quantities (Lemma 1's moments at the Gaussian functionals, a claim's family
expression at a teacher's Hermite quantities):

* every input exact: the result is exact (the substituted expression, put in
  canonical form by ``canonical``, :func:`sympy.expand` by default);
* otherwise mpmath at ``digits + 15`` working digits, with the absolute error
  ``sum_i |d expr / d x_i| err_i`` (first order; ``err_i`` the input's
  ``abs_err``, or one unit in its last certified digit relative to its value
  when it has none) plus a rounding allowance ``10^-(digits+3) |value|``; the
  certified digits follow from that error and never exceed the inputs'.

An expression that is undefined at the inputs (division by zero) is a one-line
:class:`~icl_symbolic.core.errors.ICLError`.

>>> import sympy
>>> x = sympy.Symbol("x")
>>> evaluate_at(x**2 + 1, {x: Value.from_exact(sympy.Rational(1, 2))}).exact
5/4
>>> v = evaluate_at(2 * x, {x: Value(mpmath.mpf("0.25"), "mpmath", digits=20, abs_err=mpmath.mpf("1e-20"))})
>>> mpmath.nstr(v.value, 5), mpmath.nstr(v.abs_err, 3)
('0.5', '2.0e-20')
"""

from __future__ import annotations

import mpmath
import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.values import Value


def evaluate_at(expr, inputs: dict, digits: int = 30, note: str = "", canonical=sympy.expand) -> Value:
    """``expr`` at ``inputs`` (SymPy symbol -> :class:`Value`); see the module docstring."""
    expr = sympy.sympify(expr)
    used = [s for s in inputs if s in expr.free_symbols]
    left = expr.free_symbols - set(used)
    if left:
        raise ICLError(f"no value for {', '.join(sorted(str(s) for s in left))}")
    if all(inputs[s].exact is not None for s in used):
        ex = canonical(expr.xreplace({s: inputs[s].exact for s in used}))
        if not ex.is_number:
            raise ICLError(f"{expr} did not evaluate to a number")
        if ex.has(sympy.zoo, sympy.nan) or ex.is_finite is False:
            raise ICLError(f"{expr} is undefined here (division by zero?)")
        return Value.from_exact(ex, digits=digits, note=note)
    with mpmath.workdps(digits + 15):
        point = [mpmath.mpf(inputs[s].value) for s in used]
        try:
            value = mpmath.mpmathify(sympy.lambdify(used, expr, modules="mpmath")(*point))
        except ZeroDivisionError:
            value = mpmath.nan
        if not (isinstance(value, mpmath.mpf) and mpmath.isfinite(value)):
            raise ICLError(f"{expr} is undefined here (division by zero?)")
        err = mpmath.mpf(0)
        for s, x in zip(used, point):
            v = inputs[s]
            e_in = v.abs_err if v.abs_err is not None else abs(x) * mpmath.mpf(10) ** (-(v.digits or digits))
            slope = sympy.lambdify(used, sympy.diff(expr, s), modules="mpmath")(*point)
            err += abs(mpmath.mpmathify(slope)) * mpmath.mpf(e_in)
        err += abs(value) * mpmath.mpf(10) ** (-(digits + 3))
        got = min([digits] + [inputs[s].digits for s in used if inputs[s].digits])
        if value != 0 and err > 0:
            got = int(max(0, min(got, mpmath.floor(-mpmath.log10(err / abs(value))))))
        method = "numeric" if any(inputs[s].method == "numeric" for s in used) else "mpmath"
        return Value(value=+value, method=method, digits=got, abs_err=err, note=note)
