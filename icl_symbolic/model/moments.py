"""Population moments of Lemma 1: exact at finite size, leading order, Monte Carlo.

Paper: Appendix B, Lemma 1, Eqs. (12)-(14), p. 8-9 (population averages of the
labels, the features ``h = vec(H)`` and their cross moments); Appendix A, p. 7
(``x^T w ~ N(0, omega)`` with ``omega = |w|^2/d``).

Setting (Sec. 2, Eqs. (1)-(5), p. 2-3): ``x_i ~ N(0, I_d/d)`` i.i.d.,
``y_i = f(x_i^T w) + eps_i`` with ``eps_i ~ N(0, rho)``,
``u = (d/ell) sum_i y_i x_i``, ``s = (1/ell) sum_i y_i^2``,
``H = x_test [u^T, s]`` (d x (d+1)), ``h = vec(H)``.

Derivation (docs/moments.md shows every step).  Fix the task ``w``, put
``omega = |w|^2/d`` and ``e = w/|w|``.  Split ``x = (z/|w|) e + x_perp`` with
``z = x^T w ~ N(0, omega)`` and ``x_perp ~ N(0, (I - e e^T)/d)`` independent of
``z``.  Every conditional moment then reduces to five Gaussian functionals of f
under ``z ~ N(0, omega)`` (NOT ``g ~ N(0, 1)``: the paper states Eq. (13) at
``omega = 1``)::

    E_zf   = E[z f(z)]        E_f2  = E[f(z)^2]       E_z2f2 = E[z^2 f(z)^2]
    E_zf3  = E[z f(z)^3]      E_f4  = E[f(z)^4]

and the exact finite-(d, ell) results are (``R = E_f2 + rho = E[y^2|w]``)::

    E[y x|w]     = E_yx w,           E_yx = E_zf / (d omega)
    E[u|w]       = E_u w,            E_u  = E_zf / omega
    E[u u^T|w]   = E_uuT_I I + E_uuT_w w w^T,
                   E_uuT_I = R d/ell
                   E_uuT_w = (1 - 1/ell) (E_zf/omega)^2
                             + (1/ell) [(E_z2f2 + rho omega)/omega^2 - R/omega]
    E[u s|w]     = E_us w,  E_us = (1 - 1/ell) E_zf R/omega + (1/ell)(E_zf3 + 3 rho E_zf)/omega
    E[s|w]       = R
    E[s^2|w]     = (1 - 1/ell) R^2 + (1/ell)(E_f4 + 6 rho E_f2 + 3 rho^2)

Vectorisation order.  ``h = H.reshape(-1)`` in NumPy's default C (row-major)
order, ``h[a (d+1) + b] = H[a, b] = x_test[a] v[b]`` with ``v = [u; s]``.  In
this order ``E[h h^T|w] = (1/d) I_d (x) E[v v^T|w]``, which is exactly the
paper's display ``(1/d) I_d (x) [[...]]`` (Lemma 1, p. 9).  The column-stacking
``vec`` of linear algebra texts would give ``E[v v^T|w] (x) I_d/d`` instead
(see :meth:`Moments.E_hhT_matrix`).

Conventions: numbers come from :func:`icl_symbolic.engine.gauss.expect` (exact SymPy
when it finds a closed form, mpmath quadrature otherwise); each coefficient is
a :class:`~icl_symbolic.core.values.Value`.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mpmath
import numpy as np
import sympy
from sympy.printing.numpy import NumPyPrinter

from icl_symbolic.core.caches import memoize, store
from icl_symbolic.core.cost import SECONDS_PER, Estimate, Progress, announced
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.propagation import evaluate_at
from icl_symbolic.core.stats import sample_se
from icl_symbolic.core.values import Value
from icl_symbolic.engine.expr import g, teacher
from icl_symbolic.engine.gauss import (
    Integrands,
    expect,
    magnitude_bits,
    mp_expect_vector,
    quadrature_plan,
    to_rational,
    uncertified_value,
)
from icl_symbolic.model import _lemma1_forms
from icl_symbolic.model.prompts import sample_prompts
from icl_symbolic.output.display import Quantity, html_table, latex_table, text_table
from icl_symbolic.output.rows import Rows

# ---------------------------------------------------------------------------
# Symbols (names follow the paper)
# ---------------------------------------------------------------------------

d = sympy.Symbol("d", positive=True, integer=True)
ell = sympy.Symbol("ell", positive=True, integer=True)
rho = sympy.Symbol("rho", nonnegative=True)
omega = sympy.Symbol("omega", positive=True)
alpha = sympy.Symbol("alpha", positive=True)
a1 = sympy.Symbol("a1", real=True)
rho_f = sympy.Symbol("rho_f", positive=True)

# aliases for functions whose arguments shadow the symbol names
_D, _ELL, _RHO, _OMEGA = d, ell, rho, omega

#: The Gaussian functionals of f under z ~ N(0, omega), as undefined functions of omega.
FUNCTIONAL_NAMES = ("E_zf", "E_f2", "E_z2f2", "E_zf3", "E_f4")
_FUNC = {name: sympy.Function(name) for name in FUNCTIONAL_NAMES}
E_zf, E_f2, E_z2f2, E_zf3, E_f4 = (_FUNC[n](omega) for n in FUNCTIONAL_NAMES)


#: F(z) = z^p f(z)^q for each functional: name -> (p, q).
_POWERS = {"E_zf": (1, 1), "E_f2": (0, 2), "E_z2f2": (2, 2), "E_zf3": (1, 3), "E_f4": (0, 4)}


def functional_integrand(name: str, f_expr):
    """The integrand F(z) (written in the variable ``g`` of :mod:`icl_symbolic.engine.expr`) of a functional.

    >>> from icl_symbolic.engine.expr import g
    >>> functional_integrand("E_zf3", g**2)
    g**7
    """

    try:
        pz, pf = _POWERS[name]
    except KeyError:
        raise ICLError(f"unknown Gaussian functional {name!r}; expected one of {FUNCTIONAL_NAMES}") from None
    return g**pz * f_expr**pf


#: Scalar coefficients, in the order the CLI and JSON print them.
COEFFICIENTS = ("E_y2", "E_yx", "E_u", "E_uuT_I", "E_uuT_w", "E_us", "E_s", "E_s2", "E_yH_ww", "E_yH_w")

#: What each coefficient multiplies (for tables and docs).
MEANING = {
    "E_y2": "E[y^2|w]",
    "E_yx": "E[y x|w] = E_yx w",
    "E_u": "E[u|w] = E_u w",
    "E_uuT_I": "E[u u^T|w] = E_uuT_I I + ...",
    "E_uuT_w": "E[u u^T|w] = ... + E_uuT_w w w^T",
    "E_us": "E[u s|w] = E_us w",
    "E_s": "E[s|w]",
    "E_s2": "E[s^2|w]",
    "E_yH_ww": "E[y_test H|w] = (1/d)[E_yH_ww ww^T, ...]",
    "E_yH_w": "E[y_test H|w] = (1/d)[..., E_yH_w w]",
}


# ---------------------------------------------------------------------------
# The derivation, step by step (exact, symbolic)
# ---------------------------------------------------------------------------


def label_moments():
    """Step 1: moments of one label y = f(z) + eps, eps ~ N(0, rho) independent of z.

    Returns a dict of SymPy expressions in rho, omega and the functionals:
    ``y2 = E[y^2]``, ``zy = E[z y]``, ``z2y2 = E[z^2 y^2]``, ``zy3 = E[z y^3]``,
    ``y4 = E[y^4]`` (odd moments of eps vanish, E[eps^2] = rho, E[eps^4] = 3 rho^2).

    >>> label_moments()["y4"]
    3*rho**2 + 6*rho*E_f2(omega) + E_f4(omega)
    """
    return {
        "y2": E_f2 + rho,
        "zy": E_zf,
        "z2y2": E_z2f2 + rho * omega,  # E[z^2] = omega
        "zy3": E_zf3 + 3 * rho * E_zf,
        "y4": E_f4 + 6 * rho * E_f2 + 3 * rho**2,
    }


def example_moments():
    """Step 2: moments of one example (x, y) for fixed w, from the split of x along w.

    With ``x = (z/|w|) e + x_perp``, ``|w|^2 = d omega``, ``e e^T = w w^T/(d omega)``
    and ``E[x_perp x_perp^T] = (I - e e^T)/d``:

    * ``E[y x]       = E[z y]/|w|^2 w``                       -> key ``yx`` (coefficient of w)
    * ``E[y^2 x x^T] = E[z^2 y^2]/|w|^4 w w^T + E[y^2](I - e e^T)/d``
      -> keys ``y2xx_I`` (coefficient of I) and ``y2xx_w`` (of w w^T)
    * ``E[y^3 x]     = E[z y^3]/|w|^2 w``                     -> key ``y3x``

    (the cross terms with ``x_perp`` vanish: it has mean zero and is independent
    of z and eps).
    """
    L = label_moments()
    w2 = d * omega  # |w|^2
    return {
        "yx": L["zy"] / w2,
        "y2xx_I": L["y2"] / d,
        "y2xx_w": L["z2y2"] / w2**2 - L["y2"] / (d * w2),
        "y3x": L["zy3"] / w2,
        "y2": L["y2"],
        "y4": L["y4"],
    }


def symbolic_moments() -> dict:
    """Step 3: the exact conditional moments (Lemma 1, Eqs. (12)-(14), p. 8-9, at finite d, ell, omega).

    Sums over the context split into ``ell`` diagonal terms (i = j) and
    ``ell (ell - 1)`` off-diagonal terms (i != j, products of means by
    independence given w).  Returns a dict coefficient name -> SymPy
    expression in ``d, ell, rho, omega`` and the functionals ``E_zf(omega)``, ...

    >>> m = symbolic_moments()
    >>> m["E_u"]
    E_zf(omega)/omega
    >>> m["E_uuT_I"]
    d*(rho + E_f2(omega))/ell
    """
    return dict(_symbolic_moments())


@memoize(maxsize=1)
def _symbolic_moments() -> dict:
    """The simplified moments: from the shipped cache :mod:`icl_symbolic.model._lemma1_forms` when it was
    generated from the current derivation (same :func:`derivation_key`), else derived now.

    ``sympy.simplify`` of the ten coefficients costs 0.3-0.6 s per process; every
    command that scores a Gamma exactly (simulate, verify, extrapolate) needs them.
    The cache holds the same expressions, written as SymPy constructor calls
    (no parsing, no eval); ``tests/test_moments.py`` checks that it is current
    and equal to the derivation.
    """
    if _lemma1_forms.KEY == derivation_key():
        return _lemma1_forms.forms()
    return derive_symbolic_moments()


def derivation_key() -> str:
    """Hash of the source of the derivation steps (labels, examples, context sums)."""
    src = "".join(inspect.getsource(fn) for fn in (label_moments, example_moments, derive_symbolic_moments))
    return hashlib.sha256(src.encode()).hexdigest()[:20]


def write_lemma1_forms(path=None) -> str:
    """Regenerate the cache module :mod:`icl_symbolic.model._lemma1_forms` from :func:`derive_symbolic_moments`."""
    forms = derive_symbolic_moments()
    names = {sympy.srepr(x): str(x) for x in (d, ell, rho, omega)}
    lines = [
        '"""Generated by icl_symbolic.model.moments.write_lemma1_forms(): the simplified Lemma 1 moments.',
        "",
        "Do not edit; regenerate when the derivation in moments.py changes (the test",
        'tests/test_moments.py::test_lemma1_forms_cache_is_current says when)."""',
        "",
        "from sympy import Add, Function, Integer, Mul, Pow, Rational, Symbol  # noqa: F401",
        "",
        f'KEY = "{derivation_key()}"',
        "",
    ]
    lines += [f"{v} = {k}" for k, v in names.items()]
    lines += [f"{n} = Function('{n}')(omega)" for n in FUNCTIONAL_NAMES]
    lines += [
        "",
        "",
        "def forms() -> dict:",
        '    """The ten coefficients as SymPy expressions (built from constructor calls)."""',
        "    return {",
    ]
    for name, expr in forms.items():
        text = sympy.srepr(expr)
        for k, v in names.items():
            text = text.replace(k, v)
        for n in FUNCTIONAL_NAMES:
            text = text.replace(f"Function('{n}')(omega)", n)
        lines.append(f'        "{name}": {text},')
    lines += [
        "    }",
        "",
        "",
        "def numpy_functions() -> dict:",
        '    """The same coefficients as NumPy-vectorised functions of (d, ell, rho, omega, '
        + ", ".join(f"_{n}" for n in FUNCTIONAL_NAMES)
        + ")",
        '    (the code sympy.lambdify(..., modules=\'numpy\') would generate: NumPyPrinter output)."""',
        "    return {",
    ]
    fsyms = [sympy.Symbol(f"_{n}") for n in FUNCTIONAL_NAMES]
    apps = {_FUNC[n](omega): sy for n, sy in zip(FUNCTIONAL_NAMES, fsyms)}
    argl = ", ".join(["d", "ell", "rho", "omega"] + [str(sy) for sy in fsyms])
    for name, expr in forms.items():
        lines.append(f'        "{name}": lambda {argl}: {NumPyPrinter().doprint(expr.xreplace(apps))},')
    lines += ["    }", ""]
    target = Path(path) if path is not None else Path(__file__).with_name("_lemma1_forms.py")
    target.write_text("\n".join(lines))
    return str(target)


def derive_symbolic_moments() -> dict:
    """The derivation behind :func:`symbolic_moments` (Steps 3-4; SymPy simplify)."""
    X = example_moments()
    c = d / ell  # u = (d/ell) sum_i y_i x_i
    pairs = ell * (ell - 1)  # ordered pairs i != j
    E_u = c * ell * X["yx"]
    E_s = X["y2"]
    # E[u u^T] = c^2 [ell E[y^2 x x^T] + ell(ell-1) E[yx] E[yx]^T]
    E_uuT_I = c**2 * ell * X["y2xx_I"]
    E_uuT_w = c**2 * (ell * X["y2xx_w"] + pairs * X["yx"] ** 2)
    # E[u s] = (c/ell) [ell E[y^3 x] + ell(ell-1) E[y x] E[y^2]]
    E_us = (c / ell) * (ell * X["y3x"] + pairs * X["yx"] * X["y2"])
    # E[s^2] = (1/ell^2) [ell E[y^4] + ell(ell-1) E[y^2]^2]
    E_s2 = (ell * X["y4"] + pairs * X["y2"] ** 2) / ell**2
    # Step 4: the query is independent of the context given w:
    # E[y_test H] = E[y_test x_test] [E[u]^T, E[s]] = (1/d)[E_yH_ww w w^T, E_yH_w w]
    E_yH_ww = d * X["yx"] * E_u
    E_yH_w = d * X["yx"] * E_s
    out = {
        "E_y2": X["y2"],
        "E_yx": X["yx"],
        "E_u": E_u,
        "E_uuT_I": E_uuT_I,
        "E_uuT_w": E_uuT_w,
        "E_us": E_us,
        "E_s": E_s,
        "E_s2": E_s2,
        "E_yH_ww": E_yH_ww,
        "E_yH_w": E_yH_w,
    }
    return {k: sympy.simplify(v) for k, v in out.items()}


# ---------------------------------------------------------------------------
# Numbers for a given teacher
# ---------------------------------------------------------------------------


def check_inputs(rho_v, d_v, ell_v, omega_v):
    if not (d_v == int(d_v) and int(d_v) >= 1):
        raise ICLError(f"dimension d must be a positive integer, got {d_v}")
    if not (ell_v == int(ell_v) and int(ell_v) >= 1):
        raise ICLError(f"context length ell must be a positive integer, got {ell_v}")
    if not bool(rho_v >= 0):
        raise ICLError(f"noise variance rho must be >= 0, got {rho_v}")
    if not bool(omega_v > 0):
        raise ICLError(f"omega = |w|^2/d must be > 0, got {omega_v}")


def gaussian_functionals(f, omega_v=1, digits: int = 30) -> dict:
    """The five Gaussian functionals of f under z ~ N(0, omega) as Values.

    Paper: Lemma 1, Eq. (13), p. 9 names E[g^2 f^2], E[g f^3], E[f^4] (at omega = 1).

    Computed with :mod:`icl_symbolic.engine.gauss`: ``E_f4`` goes through
    :func:`~icl_symbolic.engine.gauss.expect` (which also validates integrability; by
    Cauchy-Schwarz the other four are then finite).  If it is exact, the other
    four go through ``expect`` too (closed forms); otherwise all four share one
    tanh-sinh pass (:func:`~icl_symbolic.engine.gauss.mp_expect_vector`), so f is
    evaluated once per node.

    >>> F = gaussian_functionals("g", 1)
    >>> [F[k].exact for k in FUNCTIONAL_NAMES]
    [1, 1, 3, 3, 3]
    >>> F = gaussian_functionals("tanh(g)", "0.7", digits=15)
    >>> F["E_zf"].method, mpmath.nstr(F["E_zf"].value, 12)
    ('mpmath', '0.468636840384')
    """

    t = teacher(f)
    om = to_rational(omega_v, "omega")
    if not om.is_positive:
        raise ICLError(f"omega = |w|^2/d must be > 0, got {omega_v}")
    if t.expr is None:
        try:
            with mpmath.workdps(20):
                mpmath.mpf(t.mp(mpmath.mpf("0.5")))
        except ICLError:  # a user-facing error (ICLError is a ValueError) keeps its message
            raise
        except (TypeError, AttributeError, ValueError):
            raise ICLError(
                f"teacher {t.label} is a Python callable that does not accept mpmath numbers; "
                "the exact moments need one that does (or a SymPy expression / string)"
            ) from None
    if t.expr is not None:
        F4 = functional_integrand("E_f4", t.expr)
    else:
        F4 = _callable_integrand("E_f4", t)
    out = {"E_f4": expect(F4, omega=om, digits=digits, breakpoints=None if t.expr is not None else t.breakpoints)}
    rest = FUNCTIONAL_NAMES[:-1]
    if out["E_f4"].method == "exact":
        for name in rest:
            out[name] = expect(functional_integrand(name, t.expr), omega=om, digits=digits)
    else:

        def fvec(z, _t=t):
            fz = _t.mp(z)
            f2 = fz * fz
            return [z * fz, f2, z * z * f2, z * f2 * fz]

        # the panels of gauss.expect (kinks, oscillations, narrow features), sized to f^4
        plan = quadrature_plan(t, digits, om, t.label, 4, expr=None if t.expr is None else t.expr**4)
        bits = magnitude_bits(t.mp, plan.points, power=(1, 2, 2, 3), omega=om)
        res = mp_expect_vector(Integrands(fvec, 4, extra_bits=bits), om, digits, plan.points)
        for name, (val, err, cert) in zip(rest, res):
            note = f"{name} of {t.label}, z ~ N(0, {om})"
            out[name] = (
                uncertified_value(val, err, plan.scale.reason, note)
                if not plan.scale.covered
                else Value(value=val, method="mpmath", digits=cert if cert > 0 else None, abs_err=err, note=note)
            )
    return {name: out[name] for name in FUNCTIONAL_NAMES}


def _callable_integrand(name, t):
    """An mpmath integrand for a Python-callable teacher (no SymPy form)."""
    pz, pf = _POWERS[name]

    def F(z, _t=t, _pz=pz, _pf=pf):
        return z**_pz * _t.mp(z) ** _pf

    return F


def evaluate(expr, subs: dict, functionals: dict, digits: int = 30, note: str = "") -> Value:
    """Evaluate a SymPy expression in the functionals, propagating their error.

    ``subs`` maps the symbols d, ell, rho, omega to exact numbers;
    ``functionals`` maps functional names to Values.  The evaluation and its
    error propagation are :func:`icl_symbolic.core.propagation.evaluate_at`: exact
    when every functional is exact, else first order in the functionals' errors.
    """
    expr = sympy.sympify(expr).subs(subs)
    fsyms = {name: sympy.Symbol(f"_{name}") for name in FUNCTIONAL_NAMES}
    apps = {
        app: fsyms[app.func.__name__]
        for app in expr.atoms(sympy.core.function.AppliedUndef)
        if app.func.__name__ in fsyms
    }
    expr = expr.xreplace(apps)
    return evaluate_at(
        expr, {fsyms[n]: functionals[n] for n in FUNCTIONAL_NAMES if fsyms[n] in expr.free_symbols}, digits, note
    )


_NUMPY_FUNCS = store(__name__ + "._NUMPY_FUNCS")


def moment_functions() -> dict:
    """The exact coefficients as vectorised NumPy functions (lambdified once from :func:`symbolic_moments`).

    Each takes ``(d, ell, rho, omega, E_zf, E_f2, E_z2f2, E_zf3, E_f4)``
    (arrays broadcast); used by :mod:`icl_symbolic.egamma` to evaluate the
    moments at many omega at once without restating the formulas.
    """
    if not _NUMPY_FUNCS:
        if _lemma1_forms.KEY == derivation_key():  # generated from the same forms (write_lemma1_forms)
            _NUMPY_FUNCS.update(_lemma1_forms.numpy_functions())
            return dict(_NUMPY_FUNCS)
        fsyms = [sympy.Symbol(f"_{n}") for n in FUNCTIONAL_NAMES]
        apps = {_FUNC[n](omega): s for n, s in zip(FUNCTIONAL_NAMES, fsyms)}
        args = [d, ell, rho, omega, *fsyms]
        for name, expr in symbolic_moments().items():
            fn = sympy.lambdify(args, expr.xreplace(apps), modules="numpy")
            _NUMPY_FUNCS[name] = fn
    return dict(_NUMPY_FUNCS)


@dataclass(frozen=True)
class Moments(Rows):
    """Exact conditional moments for a fixed task w with |w|^2 = d omega.

    Each coefficient (``E_y2``, ``E_yx``, ``E_u``, ``E_uuT_I``, ``E_uuT_w``,
    ``E_us``, ``E_s``, ``E_s2``, ``E_yH_ww``, ``E_yH_w``) is a :class:`Value`;
    ``symbolic[name]`` is its SymPy form in d, ell, rho, omega and the
    functionals; ``functionals`` holds the five Gaussian functionals.
    """

    f: str
    rho: Any
    d: int
    ell: int
    omega: Any
    E_y2: Value
    E_yx: Value
    E_u: Value
    E_uuT_I: Value
    E_uuT_w: Value
    E_us: Value
    E_s: Value
    E_s2: Value
    E_yH_ww: Value
    E_yH_w: Value
    symbolic: dict = field(repr=False, default_factory=dict)
    functionals: dict = field(repr=False, default_factory=dict)

    @property
    def alpha(self):
        """alpha = ell/d (exact)."""
        return sympy.Rational(self.ell, self.d)

    # -- display: one row per coefficient -------------------------------------
    def _rows(self):
        return [Quantity(k, "\\mathrm{" + k.replace("_", "\\_") + "}", v) for k, v in self.coefficients().items()]

    def _title(self) -> str:
        return (
            f"Lemma 1 moments (Appendix B, Eqs. (12)-(14)), f(g) = {self.f}, rho = {self.rho}, "
            f"d = {self.d}, ell = {self.ell}, omega = {self.omega}"
        )

    def __repr__(self) -> str:
        return text_table(self._title(), self._rows(), 12)

    def _repr_html_(self) -> str:
        return html_table(self._title(), self._rows(), 12)

    def _repr_latex_(self) -> str:
        return latex_table(self._title(), self._rows(), 12)

    def points(self) -> list[dict]:
        """One row per coefficient, as the points of ``moments --json``: ``name`` and ``exact`` (a decimal
        string; the command adds the leading order and the Monte Carlo, which need more than this object)."""
        return [{"name": k, "exact": v.to_str(15), "value": float(v)} for k, v in self.coefficients().items()]

    def to_json(self) -> dict:
        """``inputs`` (f, rho, d, ell, alpha, omega, as in ``moments --json``) and :meth:`points`."""
        return {
            "inputs": {
                "f": self.f,
                "rho": str(self.rho),
                "d": self.d,
                "ell": self.ell,
                "alpha": str(self.alpha),
                "omega": str(self.omega),
            },
            "points": self.points(),
        }

    def coefficients(self) -> dict:
        """name -> Value, in :data:`COEFFICIENTS` order."""
        return {k: getattr(self, k) for k in COEFFICIENTS}

    def _check_w(self, w):
        w = np.asarray(w, dtype=float)
        if w.shape != (self.d,):
            raise ICLError(f"w must have shape ({self.d},), got {w.shape}")
        om = float(w @ w) / self.d
        if not np.isclose(om, float(self.omega), rtol=1e-9, atol=0):
            raise ICLError(f"|w|^2/d = {om:.12g} but these moments are for omega = {float(self.omega):.12g}")
        return w

    def E_uuT_matrix(self, w) -> np.ndarray:
        """E[u u^T|w] = E_uuT_I I + E_uuT_w w w^T as a float64 d x d array."""
        w = self._check_w(w)
        return float(self.E_uuT_I) * np.eye(self.d) + float(self.E_uuT_w) * np.outer(w, w)

    def E_vvT_matrix(self, w) -> np.ndarray:
        """E[v v^T|w] for v = [u; s] ((d+1) x (d+1), float64): the bracket of Lemma 1's display."""
        w = self._check_w(w)
        M = np.empty((self.d + 1, self.d + 1))
        M[: self.d, : self.d] = self.E_uuT_matrix(w)
        M[: self.d, self.d] = M[self.d, : self.d] = float(self.E_us) * w
        M[self.d, self.d] = float(self.E_s2)
        return M

    def E_yH_matrix(self, w) -> np.ndarray:
        """E[y_test H|w] = (1/d)[E_yH_ww w w^T, E_yH_w w] (d x (d+1), float64)."""
        w = self._check_w(w)
        out = np.empty((self.d, self.d + 1))
        out[:, : self.d] = float(self.E_yH_ww) * np.outer(w, w) / self.d
        out[:, self.d] = float(self.E_yH_w) * w / self.d
        return out

    def E_hhT_matrix(self, w, order: str = "C") -> np.ndarray:
        """E[h h^T|w] as a d(d+1) x d(d+1) float64 array.

        ``order="C"`` (default): ``h = H.reshape(-1)`` (row-major), giving
        ``(1/d) I_d (x) E[v v^T]``, the paper's display (Lemma 1, p. 9).
        ``order="F"``: column-stacking ``vec``, giving ``E[v v^T] (x) I_d/d``.
        """
        V = self.E_vvT_matrix(w) / self.d
        if order == "C":
            return np.kron(np.eye(self.d), V)
        if order == "F":
            return np.kron(V, np.eye(self.d))
        raise ICLError(f"order must be 'C' or 'F', got {order!r}")


def conditional_moments(f, rho, d, ell, omega=1, digits: int = 30) -> Moments:
    """Exact finite-size conditional moments of Lemma 1 (Appendix B, Eqs. (12)-(14), p. 8-9).

    Parameters
    ----------
    f : str, SymPy expression, Teacher or callable
        The teacher (anything :func:`icl_symbolic.engine.expr.teacher` accepts).
    rho : number or str
        Label-noise variance (strings are exact: "0.1" -> 1/10).
    d : int
        Dimension.
    ell : int
        Context length (ell = alpha d).
    omega : number or str
        |w|^2/d for the fixed task w (Appendix A, p. 7); 1 in the paper's limit.
    digits : int
        Digits for the numbers.

    Returns
    -------
    Moments

    Examples
    --------
    Linear teacher at omega = 1, rho = 1/10, alpha = 2, ell = 8: the known
    finite-ell result (1+rho)/alpha, 1 + 1/ell, (1+rho)(1 + 2/ell), (1+rho)^2 (1 + 2/ell):

    >>> m = conditional_moments("g", "0.1", d=4, ell=8)
    >>> m.E_uuT_I.exact, m.E_uuT_w.exact, m.E_us.exact, m.E_s2.exact
    (11/20, 9/8, 11/8, 121/80)

    tanh at omega = 0.7 (mpmath, with the propagated error):

    >>> m = conditional_moments("tanh(g)", "0.1", d=8, ell=5, omega="0.7", digits=20)
    >>> m.E_u.method, m.E_u.to_str(15), m.E_u.digits
    ('mpmath', '0.669481200548283', 20)
    """

    t = teacher(f)
    rho_e = to_rational(rho, "rho")
    om_e = to_rational(omega, "omega")
    check_inputs(rho_e, d, ell, om_e)
    d_i, ell_i = int(d), int(ell)
    F = gaussian_functionals(t, om_e, digits=digits)
    sym = symbolic_moments()
    subs = {_D: d_i, _ELL: ell_i, _RHO: rho_e, _OMEGA: om_e}
    vals = {
        name: evaluate(expr, subs, F, digits=digits, note=f"{MEANING[name]} (Lemma 1, p. 8-9)")
        for name, expr in sym.items()
    }
    return Moments(f=t.label, rho=rho_e, d=d_i, ell=ell_i, omega=om_e, symbolic=sym, functionals=F, **vals)


# ---------------------------------------------------------------------------
# Leading order: ell = alpha d, d -> infinity, omega -> 1 (symbolic)
# ---------------------------------------------------------------------------

#: The paper's displayed leading-order forms (Appendix B, Lemma 1, p. 8-9), in
#: a1 = E[g f(g)], rho_f = rho + E[f(g)^2] (g ~ N(0, 1)) and alpha = ell/d.
#: ``E_yx`` is compared after multiplying by d (the paper writes E[y x|w] ~ a1 w/d).
PAPER_LEADING = {
    "E_y2": rho_f,  # E[y^2|w] ~ rho_f
    "d*E_yx": a1,  # E[y x|w] ~ a1 w / d
    "E_u": a1,  # E[u|w] ~ a1 w
    "E_uuT_I": rho_f / alpha,  # [[rho_f/alpha I + a1^2 w w^T, ...]]
    "E_uuT_w": a1**2,
    "E_us": a1 * rho_f,  # [[..., a1 rho_f w], [a1 rho_f w^T, ...]]
    "E_s": rho_f,  # E[s|w] = E[y^2|w]
    "E_s2": rho_f**2,  # [[..., rho_f^2]]
    "E_yH_ww": a1**2,  # E[y_test H|w] ~ (1/d)[a1^2 w w^T, a1 rho_f w]
    "E_yH_w": a1 * rho_f,
}


@dataclass(frozen=True)
class DroppedTerm:
    """A term that the leading-order display drops.

    ``moment``: coefficient name; ``term``: the dropped SymPy expression
    (exact remainder for the finite-ell part; first-order Taylor term for the
    omega part); ``order``: its order in words ("O(1/d)", "O(omega - 1)");
    ``note``: how it scales for Gaussian tasks.
    """

    moment: str
    term: Any
    order: str
    note: str = ""


@dataclass(frozen=True)
class LeadingOrder:
    """Result of :func:`leading_order`.

    ``exact``: the finite-size expressions (``E_yx`` multiplied by d);
    ``limits``: their limits (ell = alpha d, d -> infinity, then omega -> 1) in
    a1, rho_f, rho, alpha; ``paper``: the paper's displayed forms;
    ``agrees``: name -> bool (``simplify(limit - paper) == 0``);
    ``dropped``: the dropped terms with their order; ``values``: name -> Value
    of the limit for a given teacher (empty when no teacher is given).
    """

    exact: dict
    limits: dict
    paper: dict
    agrees: dict
    dropped: list
    values: dict = field(default_factory=dict)

    @property
    def all_agree(self) -> bool:
        return all(self.agrees.values())


def _to_paper_notation(expr):
    """Functionals at omega = 1 in the paper's notation: E_zf(1) = a1, E_f2(1) = rho_f - rho."""
    return expr.subs({_FUNC["E_zf"](1): a1, _FUNC["E_f2"](1): rho_f - rho})


@memoize(maxsize=1)
def _leading_reduction():
    """The symbolic reduction of :func:`leading_order` (cached): (exact, limits, dropped)."""
    eps = sympy.Symbol("eps", positive=True)
    exact = dict(symbolic_moments())
    exact["d*E_yx"] = sympy.simplify(d * exact.pop("E_yx"))
    limits, dropped = {}, []
    for name in PAPER_LEADING:
        E = exact[name]
        E_eps = E.subs(ell, alpha * d).subs(d, 1 / eps)
        ser = sympy.series(E_eps, eps, 0, 2).removeO()
        c0 = sympy.simplify(ser.coeff(eps, 0))
        c1 = sympy.simplify(ser.coeff(eps, 1))
        remainder = sympy.simplify(E_eps - c0)
        if remainder != 0:
            rem_d = sympy.simplify(remainder.subs(eps, 1 / d))
            # order check: remainder * d tends to the nonzero c1 (so the remainder is exactly O(1/d))
            exact_first_order = sympy.simplify(remainder - c1 * eps) == 0
            rem_1 = sympy.simplify(_to_paper_notation(sympy.simplify(rem_d.subs(omega, 1))))
            dropped.append(
                DroppedTerm(
                    name,
                    rem_1,
                    "O(1/d)",
                    "finite-context term at omega = 1 (its omega-dependence is O((omega - 1)/d)), "
                    "exactly c/ell with ell = alpha d" + ("" if exact_first_order else " (plus higher orders in 1/d)"),
                )
            )
        lim = _to_paper_notation(sympy.simplify(c0.subs(omega, 1)))
        lim = sympy.simplify(lim)
        d_omega = sympy.simplify(sympy.diff(c0, omega).subs(omega, 1))
        if d_omega != 0:
            dropped.append(
                DroppedTerm(
                    name,
                    _to_paper_notation(d_omega) * (omega - 1),
                    "O(omega - 1)",
                    "task-norm fluctuation; O_P(d^-1/2) for w ~ N(0, I) (Appendix A, p. 7), "
                    "mean zero to first order when tr C = d",
                )
            )
        limits[name] = lim
    return exact, limits, tuple(dropped)


def leading_order(f=None, rho_value=None, alpha_value=None, digits: int = 30) -> LeadingOrder:
    """Reduce the exact moments to leading order and compare with Lemma 1's display.

    Paper: Appendix B, Lemma 1, Eqs. (12)-(14), p. 8-9.

    The reduction is symbolic: substitute ``ell = alpha d`` and ``d = 1/eps``,
    take ``sympy.series`` in eps to first order (its constant term is the limit
    d -> infinity; the exact remainder is recorded as a dropped ``O(1/d)`` term),
    then set omega = 1 in the limit and record its first-order Taylor term in
    ``omega - 1`` (a derivative of a Gaussian functional) as a dropped
    ``O(omega - 1)`` term.  For tasks w ~ N(0, C) with tr C = d, Appendix A gives
    ``omega - 1 = O_P(sqrt(2 tr(C^2))/d)`` (``O_P(d^-1/2)`` for C = I).

    Parameters
    ----------
    f : teacher, optional
        If given, ``values`` holds the numeric limits (a1 and rho_f at omega = 1
        from :func:`gaussian_functionals`).
    rho_value, alpha_value : number or str, optional
        Needed with ``f`` (``rho`` and ``alpha = ell/d``) for the numbers.

    Examples
    --------
    >>> lo = leading_order()
    >>> lo.limits["E_uuT_w"], lo.limits["E_us"], lo.all_agree
    (a1**2, a1*rho_f, True)
    """
    exact, limits, dropped = _leading_reduction()
    agrees = {name: sympy.simplify(lim - PAPER_LEADING[name]) == 0 for name, lim in limits.items()}
    values = {}
    if f is not None:
        if rho_value is None or alpha_value is None:
            raise ICLError("leading_order(f, ...) needs rho_value and alpha_value for the numbers")
        rho_e = to_rational(rho_value, "rho")
        alpha_e = to_rational(alpha_value, "alpha")
        if not bool(alpha_e > 0):
            raise ICLError(f"alpha must be > 0, got {alpha_value}")
        F = gaussian_functionals(f, 1, digits=digits)
        a1_v = F["E_zf"]
        rho_f_v = evaluate(_FUNC["E_f2"](omega) + rho, {omega: 1, rho: rho_e}, F, digits=digits)
        lf = {"E_zf": a1_v, "E_f2": rho_f_v}
        for name, lim in limits.items():
            expr = lim.subs({alpha: alpha_e, rho: rho_e}).subs({a1: _FUNC["E_zf"](omega), rho_f: _FUNC["E_f2"](omega)})
            values[name] = evaluate(
                expr, {omega: 1}, lf, digits=digits, note=f"leading order of {name} (Lemma 1, p. 8-9)"
            )
    return LeadingOrder(
        exact=dict(exact),
        limits=dict(limits),
        paper=dict(PAPER_LEADING),
        agrees=agrees,
        dropped=list(dropped),
        values=values,
    )


def finite_ell_gaps(
    f,
    rho_value,
    d_value,
    ells,
    omega_value=1,
    digits: int = 15,
    names=("E_y2", "E_u", "E_uuT_I", "E_uuT_w", "E_us", "E_s2"),
) -> dict:
    """Exact coefficient and its leading-order form along a grid of context lengths.

    Paper: Lemma 1, p. 8-9: the terms the display drops, made visible.  For each
    ``ell`` the exact value (at the given d and omega) and the leading-order
    value (alpha = ell/d, omega = 1) are returned; their difference is the
    dropped O(1/ell) term plus the O(omega - 1) term.  The Gaussian functionals
    are computed once (at omega and at 1) and reused for every ell.

    Returns ``{name: [(ell, exact Value, leading Value), ...]}``.

    >>> gaps = finite_ell_gaps("g", "0.1", 4, [1, 10])
    >>> [(e, x.exact, lo.exact) for e, x, lo in gaps["E_uuT_w"]]
    [(1, 2, 1), (10, 11/10, 1)]
    """

    t = teacher(f)
    rho_e = to_rational(rho_value, "rho")
    om_e = to_rational(omega_value, "omega")
    check_inputs(rho_e, d_value, 1, om_e)
    ells = [int(e) for e in ells]
    for e in ells:
        check_inputs(rho_e, d_value, e, om_e)
    F = gaussian_functionals(t, om_e, digits=digits)
    F1 = F if om_e == 1 else gaussian_functionals(t, 1, digits=digits)
    sym = symbolic_moments()
    _, limits, _ = _leading_reduction()
    out = {}
    for name in names:
        lim = limits[name].subs({a1: _FUNC["E_zf"](omega), rho_f: _FUNC["E_f2"](omega) + rho})
        rows = []
        for e in ells:
            ex = evaluate(sym[name], {_D: int(d_value), _ELL: e, _RHO: rho_e, _OMEGA: om_e}, F, digits=digits)
            lo = evaluate(lim, {alpha: sympy.Rational(e, int(d_value)), _RHO: rho_e, _OMEGA: 1}, F1, digits=digits)
            rows.append((e, ex, lo))
        out[name] = rows
    return out


# ---------------------------------------------------------------------------
# Monte Carlo estimates from sampled prompts
# ---------------------------------------------------------------------------

#: Prompts per block in :func:`mc_moments` are about this many floats / (ell d).
MC_BLOCK_FLOATS = 1 << 23
#: Monte-Carlo limits (docs/limits.md): one prompt's bytes (8 ell d), and the draws' work (n ell d)
MAX_PROMPT_BYTES = 2 * 10**9
MAX_MC_WORK = 10**12


def mc_estimate(d: int, ell: int, n: int, f=None) -> Estimate:
    """What :func:`mc_moments` with ``n`` prompts of ell x d costs (``cost.SECONDS_PER["mc_entry"]``
    per prompt entry: sampling and the estimators); refused, with the estimate, past
    :data:`MAX_PROMPT_BYTES` or :data:`MAX_MC_WORK`.  With the teacher ``f``, it is parsed and
    checked first (a bad expression is refused before a long run is announced).

    >>> mc_estimate(1000, 1000, 10**6).work
    1000000000000
    """
    if f is not None:
        teacher(f)
    d, ell, n = int(d), int(ell), int(n)
    work = n * ell * d
    est = Estimate(
        work * SECONDS_PER["mc_entry"],
        work,
        "prompt entries",
        f"Monte Carlo: {n} prompts of ell x d = {ell} x {d}",
        "a smaller --mc, --ell or --d",
    )
    mem = 8 * ell * d
    if mem > MAX_PROMPT_BYTES:
        raise ICLError(
            f"--mc: one prompt of ell x d = {ell} x {d} needs {mem / 1e9:.3g} GB "
            f"(limit {MAX_PROMPT_BYTES / 1e9:g} GB, see docs/limits.md)"
        )
    if work > MAX_MC_WORK:
        raise ICLError("--mc: " + est.refusal(f"{MAX_MC_WORK:.0e} prompt entries (n ell d)"))
    return est


@dataclass(frozen=True)
class MonteCarlo:
    """The knobs of a Monte-Carlo estimate (:func:`mc_moments`, and the Monte-Carlo errors of
    :mod:`icl_symbolic.model.gamma_error`): a record beside the label law the function takes.

    ``n``: the number of draws (prompts, or tasks for ``e_gamma_mc_tasks``), an integer >= 2 (checked
    by the function, one ICLError line); ``rng``: a ``numpy.random.Generator`` or a non-negative
    integer seed (:func:`rng_and_seeds`; a seed is recorded in the result's ``seeds``);
    ``progress``: None (silent), True (lines to stderr) or a callable taking one line.  Built by the
    callers: the API keeps the loose keywords (``icl_symbolic.api.moments.mc_moments``), the
    ``moments`` command, the ``moments_mc`` check kind and the simulator's test error build it.

    >>> MonteCarlo(1000, 7)
    MonteCarlo(n=1000, rng=7, progress=None)
    """

    n: int
    rng: Any
    progress: Any = None

    def say(self):
        """``progress`` as a callable taking one line, or None."""
        if self.progress is True:
            return lambda line: print(line, file=sys.stderr, flush=True)
        return self.progress or None


def rng_and_seeds(rng):
    if isinstance(rng, np.random.Generator):
        return rng, None
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and int(rng) >= 0:
        return np.random.default_rng(int(rng)), (int(rng),)
    raise ICLError(f"rng must be a numpy Generator or a non-negative integer seed, got {rng!r}")


class _Accumulator:
    """Streaming mean and variance (Chan et al. pairwise update), one per estimator."""

    def __init__(self):
        self.n, self.mean, self.m2 = 0, {}, {}

    def add(self, block: dict):
        nb = len(next(iter(block.values())))
        for k, x in block.items():
            mb = float(np.mean(x))
            m2b = float(np.sum((x - mb) ** 2))
            if self.n == 0:
                self.mean[k], self.m2[k] = mb, m2b
            else:
                delta = mb - self.mean[k]
                tot = self.n + nb
                self.mean[k] += delta * nb / tot
                self.m2[k] += m2b + delta**2 * self.n * nb / tot
        self.n += nb


def mc_estimators(P, w) -> dict:
    """Per-prompt unbiased estimators of each coefficient from sampled prompts with fixed task w.

    With e = w/|w| and u_perp = u - (u.e) e:
    ``E_uuT_I``: |u_perp|^2/(d-1); ``E_uuT_w``: ((u.e)^2 - |u_perp|^2/(d-1))/|w|^2
    (needs d >= 2); ``E_u``: u.w/|w|^2; ``E_us``: s u.w/|w|^2; ``E_s2``: s^2;
    ``E_y2``: y_test^2; ``E_yx``: y_test x_test.w/|w|^2;
    ``E_yH_ww``: d y_test (x_test.w)(u.w)/|w|^4; ``E_yH_w``: d y_test (x_test.w) s/|w|^2.
    """
    w = np.asarray(w, dtype=float)
    dd = w.shape[0]
    w2 = float(w @ w)
    uw = P.u @ w
    xw = P.x_test @ w
    out = {
        "E_y2": P.y_test**2,
        "E_yx": P.y_test * xw / w2,
        "E_u": uw / w2,
        "E_us": P.s * uw / w2,
        "E_s": P.s,
        "E_s2": P.s**2,
        "E_yH_ww": dd * P.y_test * xw * uw / w2**2,
        "E_yH_w": dd * P.y_test * xw * P.s / w2,
    }
    if dd >= 2:
        par2 = uw**2 / w2
        perp = (np.einsum("nd,nd->n", P.u, P.u) - par2) / (dd - 1)
        out["E_uuT_I"] = perp
        out["E_uuT_w"] = (par2 - perp) / w2
    return out


def mc_moments(f, rho, d, ell, w, mc: MonteCarlo, announce: bool = True) -> dict:
    """Monte-Carlo estimates of the conditional moments for the fixed task w.

    Prompts come from :func:`icl_symbolic.model.prompts.sample_prompts` (the direct
    sampler, Sec. 2, Eqs. (1)-(5), p. 2-3), all with the task ``w``; each
    coefficient is the mean of the per-prompt estimator of
    :func:`mc_estimators`, with standard error std/sqrt(n).

    Parameters
    ----------
    f : teacher; rho : noise variance; d : dimension; ell : context length
    w : array (d,)
        The fixed task (its omega is |w|^2/d).
    mc : :class:`MonteCarlo`
        ``n`` prompts, ``rng`` (numpy.random.Generator or int seed), ``progress``: a callable
        taking one line: a run estimated above a few seconds (:func:`mc_estimate`) is announced
        there before the first prompt, then reports its progress with an ETA; ``True`` prints
        those lines to stderr.
    announce : bool
        False when the caller has already printed the estimate (``moments`` does, before the
        exact moments are computed); progress is then reported from the start.

    Returns
    -------
    dict name -> Value (method ``mc``); ``E_uuT_I``/``E_uuT_w`` only for d >= 2.

    Examples
    --------
    >>> import numpy as np
    >>> est = mc_moments("g", 0.1, 4, 8, np.ones(4), MonteCarlo(20000, 20261130))
    >>> abs(float(est["E_u"]) - 1) < 4 * est["E_u"].stderr
    True
    """

    n = mc.n
    t = teacher(f)
    gen, seeds = rng_and_seeds(mc.rng)
    w = np.asarray(w, dtype=float)
    if w.ndim != 1 or w.shape[0] != int(d):
        raise ICLError(f"w must have shape ({d},), got {w.shape}")
    if not np.all(np.isfinite(w)) or float(w @ w) == 0:
        raise ICLError("w must be finite and nonzero")
    if int(n) != n or n < 2:
        raise ICLError(f"number of Monte-Carlo prompts must be an integer >= 2, got {n}")
    rho_value = float(rho) if not isinstance(rho, str) else float(to_rational(rho, "rho"))
    n, ell_i = int(n), int(ell)
    say = mc.say()
    est = mc_estimate(d, ell_i, n)
    watch = (
        announced(say, est, total=n, unit="prompts") if announce else Progress(say, est.what, n, est.long, "prompts")
    )
    block = max(1, MC_BLOCK_FLOATS // (ell_i * int(d)))  # about 8e6 floats: progress after each block
    acc = _Accumulator()
    done = 0
    while done < n:
        m = min(block, n - done)
        P = sample_prompts(t.numpy, np.broadcast_to(w, (m, w.shape[0])), ell_i, rho_value, gen)
        acc.add(mc_estimators(P, w))
        done += m
        watch.update(done)
    out = {}
    for k in COEFFICIENTS:
        if k in acc.mean:
            se = float(np.sqrt(acc.m2[k] / (acc.n - 1) / acc.n))
            out[k] = Value(
                value=acc.mean[k],
                method="mc",
                stderr=se,
                n_samples=acc.n,
                seeds=seeds,
                note=f"Monte Carlo of {MEANING[k]}",
            )
    return out


def mc_hhT(f, rho, w, ell, n, rng):
    """Monte-Carlo mean and standard error of h h^T (h = H.reshape(-1), row-major) for fixed w.

    Small d only (the matrix is d(d+1) x d(d+1)); used to check the
    vectorisation order of Lemma 1's display (p. 9) entry by entry.
    Returns ``(mean, stderr)`` float64 arrays.
    """

    t = teacher(f)
    gen, _ = rng_and_seeds(rng)
    w = np.asarray(w, dtype=float)
    P = sample_prompts(t.numpy, np.broadcast_to(w, (int(n), w.shape[0])), int(ell), float(rho), gen)
    v = np.concatenate([P.u, P.s[:, None]], axis=1)
    h = np.einsum("na,nb->nab", P.x_test, v).reshape(int(n), -1)
    hh = np.einsum("ni,nj->nij", h, h)
    return hh.mean(axis=0), sample_se(hh, axis=0)
