r"""The proof step of Result 1, checked symbolically with the teacher f generic.

Paper: Result 1, Eq. (9), p. 3, and its derivation in Appendix C, p. 10, which
rests on the population moments of Appendix B, Lemma 1, Eqs. (12)-(14),
p. 8-9.  The argument is: *at leading order* the moments that enter the ridge
solution (``E[h h^T|w]``, ``E[y_test h|w]``, Eqs. (13)-(14)) and the test
error of a given Gamma depend on f only through ``a1 = E[g f(g)]`` and
``rho_f = rho + E[f(g)^2]``; a *linear* teacher with task ``w~ = a1 w`` (task
covariance ``a1^2 C``) and noise variance ``rho_nonlinear = rho_f - a1^2`` has
the same ones, so the linear theory applies with those substitutions.

What is checked here, and how
-----------------------------
Nothing about a particular f is used.  The exact finite-(d, ell, omega)
moments of :func:`icl_symbolic.model.moments.symbolic_moments` are SymPy
expressions in five *undefined* Gaussian functionals of f under
``z ~ N(0, omega)`` (``E_zf``, ``E_f2``, ``E_z2f2``, ``E_zf3``, ``E_f4``);
those symbols stand for any f.  This module

1. builds the moments of the *equivalent linear teacher* from the same exact
   formulas: teacher ``f(z~) = z~`` with ``z~ = x^T w~``, ``w~ = s w``,
   ``s^2`` the covariance scale (Result 1: ``a1^2``), and noise variance
   ``rho_eq`` (Result 1: ``rho_nonlinear``).  Its Gaussian functionals are
   Gaussian moments, integrated by SymPy (:func:`linear_functionals`), at
   ``omega~ = s^2 omega``.  Its coefficients multiply powers of ``w~``; they are
   rewritten in powers of ``w`` (``w~ = s w``);
2. takes both to leading order (``ell = alpha d``, ``d -> infinity``, then
   ``omega -> 1``; Appendix A, p. 7: ``omega = |w|^2/d -> 1``) and writes the
   nonlinear side in the paper's notation (``E_zf(1) = a1``,
   ``E_f2(1) = rho_f - rho``);
3. compares them coefficient by coefficient (symbolic difference must be 0),
   and does the same for the test-error functional ``e(Gamma|w)`` of
   :func:`icl_symbolic.model.gamma_error.e_gamma_symbolic` with the quadratic forms of
   Gamma kept as symbols (so the equality holds for *every* Gamma, in
   particular for the trained one);
4. lists the finite-size terms that break the equality: the exact ``1/ell``
   parts of the difference at ``omega = 1`` (they involve ``E[g^2 f^2]``,
   ``E[g f^3]``, ``E[f^4]``) and the first-order ``omega - 1`` parts (by the
   Gaussian identity ``d/domega E[F(z)] = E[F(g) (g^2 - 1)]/2`` at
   ``omega = 1``, they involve ``E[g^3 f]`` and ``E[g^2 f^2]``), each with its
   order.

A deliberately wrong mapping (``rho_f`` for ``rho_nonlinear``, ``a1`` for the
covariance scale ``a1^2``) makes step 3 fail; the claim files in
``derivations/`` record both the statement and such mutations are tested.

Sign of a1.  ``s = sqrt(cov_scale)`` is taken with a1 > 0 (symbol declared
positive).  For a1 < 0 the same holds with ``w~ = a1 w`` (the task law
``N(0, a1^2 C)`` is symmetric), which is the statement with ``a1 -> |a1|`` and
``w -> -w``.

What this is not.  It is the moment-matching step of the paper's argument,
not a proof that the ridge solution's *distribution* depends only on these
moments (the paper invokes the linear theory's random-matrix analysis for that
step).  Simulations (``derivations/05_result1_eq9.toml``, extrapolated to
``d -> infinity``) test the conclusion itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from icl_symbolic.core.caches import memoize
from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.expr import parse_expr
from icl_symbolic.model import moments as M
from icl_symbolic.model.gamma_error import e_gamma_symbolic

# Symbols of this module (a1 positive: see "Sign of a1" above).
a1 = sympy.Symbol("a1", positive=True)
rho = sympy.Symbol("rho", nonnegative=True)
rho_f = sympy.Symbol("rho_f", positive=True)
alpha = sympy.Symbol("alpha", positive=True)
d = sympy.Symbol("d", positive=True)
ell = sympy.Symbol("ell", positive=True)
omega = sympy.Symbol("omega", positive=True)
#: Gaussian functionals at omega = 1 (g ~ N(0, 1)) that the finite-size terms involve.
E_g2f2, E_gf3, E_f4, E_g3f = sympy.symbols("E_g2f2 E_gf3 E_f4 E_g3f", real=True)

#: Symbols a claim may use in its forms.
FORM_SYMBOLS = (
    "a1",
    "rho",
    "rho_f",
    "alpha",
    "d",
    "ell",
    "E_g2f2",
    "E_gf3",
    "E_f4",
    "E_g3f",
    "wAw",
    "bw",
    "Aw2",
    "bAw",
    "trAtA",
    "b2",
)
_SYM = {
    "a1": a1,
    "rho": rho,
    "rho_f": rho_f,
    "alpha": alpha,
    "d": d,
    "ell": ell,
    "E_g2f2": E_g2f2,
    "E_gf3": E_gf3,
    "E_f4": E_f4,
    "E_g3f": E_g3f,
}

#: Power of w that each coefficient multiplies (E[u|w] = E_u w, E[u u^T|w] = ... + E_uuT_w w w^T, ...).
W_POWER = {
    "E_y2": 0,
    "E_yx": 1,
    "E_u": 1,
    "E_uuT_I": 0,
    "E_uuT_w": 2,
    "E_us": 1,
    "E_s": 0,
    "E_s2": 0,
    "E_yH_ww": 2,
    "E_yH_w": 1,
}
#: Where each coefficient appears in the paper.
WHERE = {
    "E_y2": "Eq. (13)",
    "E_yx": "Eq. (12)",
    "E_u": "Eq. (12)",
    "E_uuT_I": "Eq. (14)",
    "E_uuT_w": "Eq. (14)",
    "E_us": "Eq. (14)",
    "E_s": "Eq. (13)",
    "E_s2": "Eq. (14)",
    "E_yH_ww": "Eq. (13)",
    "E_yH_w": "Eq. (13)",
}
#: Quadratic forms of Gamma = [A, b] in e(Gamma|w) (icl_symbolic.model.gamma_error).
QFORMS = ("wAw", "bw", "Aw2", "bAw", "trAtA", "b2")


def family_to_symbols(expr):
    """A family expression (``a1, E_f2, rho, rho_f, rho_nonlinear``) in this module's a1, rho, rho_f.

    >>> from icl_symbolic.engine.expr import parse_expr
    >>> family_to_symbols(parse_expr("rho_nonlinear", variables=("rho_nonlinear",)))
    -a1**2 + rho_f
    """
    names = {s.name: s for s in expr.free_symbols}
    unknown = set(names) - {"a1", "E_f2", "rho", "rho_f", "rho_nonlinear"}
    if unknown:
        raise ICLError(
            f"the equivalent teacher may only use a1, E_f2, rho, rho_f, rho_nonlinear; got {', '.join(sorted(unknown))}"
        )
    sub = {"a1": a1, "rho": rho, "rho_f": rho_f, "E_f2": rho_f - rho, "rho_nonlinear": rho_f - a1**2}
    return sympy.simplify(expr.subs({names[n]: sub[n] for n in names}))


@memoize(maxsize=8)
def _gauss_moment(n: int):
    """E[z^n] for z ~ N(0, omega), by SymPy integration (not a table)."""
    z = sympy.Symbol("z", real=True)
    dens = sympy.exp(-(z**2) / (2 * omega)) / sympy.sqrt(2 * sympy.pi * omega)
    return sympy.simplify(sympy.integrate(z**n * dens, (z, -sympy.oo, sympy.oo)))


def linear_functionals(om):
    """The five Gaussian functionals of the identity teacher f(z) = z under z ~ N(0, om).

    ``E_zf = E[z^2]``, ``E_f2 = E[z^2]``, ``E_z2f2 = E[z^4]``, ``E_zf3 = E[z^4]``,
    ``E_f4 = E[z^4]``, integrated by SymPy and evaluated at ``om``.

    >>> linear_functionals(omega)["E_f4"]
    3*omega**2
    """
    m2, m4 = _gauss_moment(2).subs(omega, om), _gauss_moment(4).subs(omega, om)
    return {"E_zf": m2, "E_f2": m2, "E_z2f2": m4, "E_zf3": m4, "E_f4": m4}


def _generic(expr):
    """Moments' expression with this module's symbols (functionals kept as undefined functions)."""
    return expr.subs({M.d: d, M.ell: ell, M.rho: rho, M.omega: omega})


@memoize(maxsize=1)
def nonlinear_moments() -> dict:
    """Exact conditional moments of the nonlinear teacher, f generic (Lemma 1, p. 8-9, finite d, ell, omega)."""
    return {k: _generic(v) for k, v in M.symbolic_moments().items()}


def equivalent_moments(cov_scale, rho_eq) -> dict:
    """Exact moments of the linear teacher with task ``w~ = sqrt(cov_scale) w`` and noise ``rho_eq``.

    Written as coefficients of powers of ``w`` (the nonlinear teacher's task),
    so they compare term by term with :func:`nonlinear_moments`.
    ``cov_scale`` and ``rho_eq`` are SymPy expressions in this module's
    ``a1, rho, rho_f``.
    """
    s = sympy.sqrt(cov_scale)
    om_t = s**2 * omega
    F = linear_functionals(om_t)
    out = {}
    for k, v in M.symbolic_moments().items():
        e = v.subs({M.d: d, M.ell: ell, M.rho: rho_eq}).subs(M.omega, om_t)
        e = e.subs({M._FUNC[n](om_t): F[n] for n in M.FUNCTIONAL_NAMES})
        out[k] = sympy.simplify(e * s ** W_POWER[k])
    return out


def _paper_notation(expr):
    """Functionals at omega = 1 in the paper's notation (a1, rho_f) and the finite-size symbols."""
    F = M._FUNC
    return expr.subs(
        {F["E_zf"](1): a1, F["E_f2"](1): rho_f - rho, F["E_z2f2"](1): E_g2f2, F["E_zf3"](1): E_gf3, F["E_f4"](1): E_f4}
    )


def _omega_derivatives(expr):
    """Replace derivatives of the functionals at omega = 1 by Gaussian functionals at omega = 1.

    d/domega E[F(z)] = E[F(g) (g^2 - 1)]/2 at omega = 1 for z ~ N(0, omega)
    (differentiate the density); only E_zf and E_f2 enter the leading order:
    E_zf'(1) = (E[g^3 f] - a1)/2, E_f2'(1) = (E[g^2 f^2] - E[f^2])/2.
    """
    expr = expr.doit()
    for deriv in expr.atoms(sympy.Subs, sympy.Derivative):
        base = deriv.expr if isinstance(deriv, sympy.Subs) else deriv
        fn = next(iter(base.atoms(sympy.core.function.AppliedUndef))).func
        name = fn.__name__
        if name == "E_zf":
            expr = expr.subs(deriv, (E_g3f - a1) / 2)
        elif name == "E_f2":
            expr = expr.subs(deriv, (E_g2f2 - (rho_f - rho)) / 2)
        else:  # pragma: no cover - the leading order involves only E_zf, E_f2
            raise ICLError(f"unexpected derivative of {name} in the leading order")
    return expr


def _scaled(name, expr):
    """d * E_yx (the paper writes E[y x|w] ~ a1 w/d); every other coefficient as is."""
    return d * expr if name == "E_yx" else expr


def _leading_in_d(expr):
    """Limit ell = alpha d, d -> infinity (omega kept)."""
    eps = sympy.Symbol("eps", positive=True)
    e = expr.subs(ell, alpha * d).subs(d, 1 / eps)
    return sympy.simplify(sympy.limit(e, eps, 0))


@dataclass(frozen=True)
class BreakingTerm:
    """A finite-size term by which the nonlinear and equivalent-linear moments differ.

    ``coefficient``: moment coefficient name (``E_yx`` is multiplied by d);
    ``term``: the SymPy expression (paper notation and the symbols
    E_g2f2 = E[g^2 f^2], E_gf3 = E[g f^3], E_f4 = E[f^4], E_g3f = E[g^3 f]);
    ``order``: its order in words.
    """

    coefficient: str
    term: object
    order: str
    note: str = ""

    def to_json(self) -> dict:
        return {"coefficient": self.coefficient, "term": str(self.term), "order": self.order, "note": self.note}


@dataclass(frozen=True)
class Reduction:
    """Result of :func:`reduce_to_linear`.

    ``nonlinear`` and ``linear``: leading-order coefficients (paper notation);
    ``differences``: their symbolic differences (all 0 when the reduction
    holds); ``error_nonlinear``/``error_linear``: the leading-order test-error
    functional e(Gamma|w) of each; ``breaking``: the finite-size terms.
    """

    cov_scale: object
    rho_eq: object
    nonlinear: dict
    linear: dict
    differences: dict
    error_nonlinear: object
    error_linear: object
    error_difference: object
    breaking: list = field(default_factory=list)

    @property
    def moments_agree(self) -> bool:
        return all(v == 0 for v in self.differences.values())

    @property
    def error_agrees(self) -> bool:
        return self.error_difference == 0

    @property
    def holds(self) -> bool:
        return self.moments_agree and self.error_agrees


def error_functional(coeffs: dict):
    """e(Gamma|w) (:func:`icl_symbolic.model.gamma_error.e_gamma_symbolic`) from coefficient expressions.

    ``coeffs`` uses the coefficient names; ``E_yx`` is passed multiplied by d
    (as in the leading-order tables) and divided back here.
    """
    tmpl = e_gamma_symbolic()
    names = {s.name: s for s in tmpl.free_symbols}
    sub = {
        names[k]: (coeffs[k] / d if k == "E_yx" else coeffs[k])
        for k in ("E_y2", "E_yx", "E_u", "E_uuT_I", "E_uuT_w", "E_us", "E_s", "E_s2")
    }
    sub[names["d"]] = d
    for q in QFORMS:
        sub[names[q]] = sympy.Symbol(q, real=True)
    return sympy.expand(tmpl.subs(sub))


@memoize(maxsize=16)
def _reduce_cached(cov_scale_s: str, rho_eq_s: str):
    cov_scale = sympy.sympify(cov_scale_s, locals=_SYM)
    rho_eq = sympy.sympify(rho_eq_s, locals=_SYM)
    nl_exact = nonlinear_moments()
    lin_exact = equivalent_moments(cov_scale, rho_eq)
    nonlinear, linear, diffs, breaking = {}, {}, {}, []
    for k in W_POWER:
        nl_d = _leading_in_d(_scaled(k, nl_exact[k]))
        li_d = _leading_in_d(_scaled(k, lin_exact[k]))
        nl0 = sympy.simplify(_paper_notation(nl_d.subs(omega, 1)))
        li0 = sympy.simplify(li_d.subs(omega, 1))
        nonlinear[k], linear[k] = nl0, li0
        diffs[k] = sympy.simplify(nl0 - li0)
        # finite-ell part of the difference at omega = 1 (exact remainder after the limit)
        fin = sympy.simplify(
            _paper_notation((_scaled(k, nl_exact[k]) - _scaled(k, lin_exact[k])).subs(omega, 1)) - diffs[k]
        )
        if fin != 0:
            breaking.append(
                BreakingTerm(k, sympy.factor(fin), "O(1/ell) = O(1/(alpha d))", "finite context, at omega = 1: exact")
            )
        # first-order omega - 1 part of the leading-order difference
        der = sympy.diff(nl_d - li_d, omega).subs(omega, 1)
        der = sympy.simplify(_paper_notation(_omega_derivatives(der)))
        if der != 0:
            breaking.append(
                BreakingTerm(
                    k,
                    sympy.factor(der) * sympy.Symbol("(omega - 1)"),
                    "O(omega - 1) = O_P(d^-1/2) for w ~ N(0, I); 0 when |w|^2 = d",
                    "task-norm fluctuation (Appendix A, p. 7), first order",
                )
            )
    e_nl = sympy.expand(error_functional(nonlinear))
    e_li = sympy.expand(error_functional(linear))
    return (cov_scale, rho_eq, nonlinear, linear, diffs, e_nl, e_li, sympy.simplify(e_nl - e_li), tuple(breaking))


def reduce_to_linear(cov_scale=None, rho_eq=None) -> Reduction:
    """Compare the nonlinear teacher (f generic) with a linear teacher at leading order.

    Paper: Result 1, Eq. (9), p. 3; Appendix C, p. 10; moments of Lemma 1,
    Eqs. (12)-(14), p. 8-9.

    Parameters
    ----------
    cov_scale, rho_eq : SymPy expressions in ``a1, rho, rho_f`` (this module's symbols)
        The equivalent linear teacher: task covariance scale (Result 1:
        ``a1**2``) and noise variance (Result 1: ``rho_f - a1**2`` =
        rho_nonlinear).  Defaults: Result 1's.

    Examples
    --------
    >>> r = reduce_to_linear()
    >>> r.holds, r.linear["E_uuT_I"], r.linear["E_us"]
    (True, rho_f/alpha, a1*rho_f)
    >>> reduce_to_linear(rho_eq=rho_f).differences["E_y2"]     # rho_f written for rho_nonlinear
    -a1**2
    """
    cov_scale = a1**2 if cov_scale is None else cov_scale
    rho_eq = rho_f - a1**2 if rho_eq is None else rho_eq
    out = _reduce_cached(str(cov_scale), str(rho_eq))
    return Reduction(*out[:8], breaking=list(out[8]))


def parse_form(text: str):
    """A claim's form (an expression in :data:`FORM_SYMBOLS`), parsed by the whitelist parser."""
    e = parse_expr(str(text), variables=FORM_SYMBOLS)
    return e.subs({s: _SYM.get(s.name, sympy.Symbol(s.name, real=True)) for s in e.free_symbols})


__all__ = [
    "reduce_to_linear",
    "Reduction",
    "BreakingTerm",
    "nonlinear_moments",
    "equivalent_moments",
    "linear_functionals",
    "error_functional",
    "family_to_symbols",
    "parse_form",
    "FORM_SYMBOLS",
    "W_POWER",
    "QFORMS",
]
