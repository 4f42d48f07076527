"""The a1 = 0 branch: Eq. (10), p. 3 and Eq. (15), p. 10 (Appendix C), numerically and in SymPy.

Paper statement.  With a1 = E[g f(g)] = 0 and ``q = rho_nonlinear/alpha``, the
auxiliary quantity solves (Eq. 15, p. 10)::

    chi0 = q / (q tau / (1 + chi0) + tau lam),

``lam_tilde = lam (1 + chi0)`` tends, as lam -> 0, to ``q (1 - tau)/tau`` for
tau < 1 and to 0 for tau > 1, and the error is (Eq. 10, p. 3, boxed)::

    e = rho_nonlinear / (1 - tau)        (tau < 1)
    e = rho_nonlinear tau / (tau - 1)    (tau > 1)

independent of alpha and kappa.

Derivation used here (``derive()``).  At a1 = 0 Lemma 1 (Eqs. 12-14, p. 8-9)
leaves features uncorrelated with the label and E[h h^T] = (1/d) I (x)
diag(rho_f/alpha I, rho_f^2) with rho_f = rho_nonlinear: exactly the linear
theory with C_train = C_test = 0 and noise rho_nonlinear, i.e. Result 1's map
with a1 = 0.  For C = 0 the Stieltjes transform is M(nu) = 1/nu, the ridge
equation of the linear theory becomes ``1 - tau + tau lam/eps - eps/(eps + q) = 0``,
whose positive root is ``eps = lam_tilde`` (checked symbolically), and steps 4-5
of the recipe give::

    e(lam) = rho_nonlinear / (1 - q^2 / (tau (q + lam_tilde)^2)).

This also equals the textbook ridge variance for pure-noise regression
(sigma^2/(1 - gamma df2), gamma = p/n = 1/tau, df2 = (q/(q+lam_tilde))^2), a
second, independent route.  Its lam -> 0 limits are the boxed Eq. (10); at
tau = 1 and lam > 0 it is finite (the ridge removes the interpolation peak).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from icl_symbolic.core.errors import ICLError
from icl_symbolic.theory.linear_recipe import Resolvent, linear_error
from icl_symbolic.theory.peak import check_not_peak


# ----------------------------------------------------------------------------
# numeric
# ----------------------------------------------------------------------------
def chi0_value(rho_nonlinear: float, alpha: float = 1.0, tau: float = 0.5, lam: float = 0.0) -> float:
    """The positive root chi0 of Eq. (15), p. 10 (lam > 0), without cancellation.

    The fixed point is the quadratic ``tau lam chi^2 + (q tau + tau lam - q) chi - q = 0``;
    its roots multiply to ``-q/(tau lam) < 0``, so exactly one is positive.

    >>> lam = 1e-12   # lam chi0 -> q (1 - tau)/tau = 0.2 as lam -> 0 (tau = 0.5 < 1)
    >>> round(lam * chi0_value(0.2, alpha=1.0, tau=0.5, lam=lam), 9)
    0.2
    """
    if lam <= 0:
        raise ICLError("chi0 is defined for lam > 0 (it diverges as lam -> 0 for tau < 1)")
    q = rho_nonlinear / alpha
    A = tau * lam
    B = q * tau + tau * lam - q
    disc = math.sqrt(B * B + 4.0 * A * q)
    return 2.0 * q / (B + disc) if B >= 0 else (disc - B) / (2.0 * A)


def lam_tilde_value(rho_nonlinear: float, alpha: float = 1.0, tau: float = 0.5, lam: float = 0.0) -> float:
    """lam_tilde = lam (1 + chi0) (Eq. 15, p. 10); at lam = 0 the limit q (1-tau)/tau or 0."""
    q = rho_nonlinear / alpha
    if lam == 0:
        check_not_peak(tau, lam)
        return q * (1.0 - tau) / tau if tau < 1 else 0.0
    return lam * (1.0 + chi0_value(rho_nonlinear, alpha, tau, lam))


def e_a1zero(rho_nonlinear: float, alpha: float = 1.0, tau: float = 0.5, lam: float = 0.0) -> float:
    """ICL error of the a1 = 0 branch: Eq. (10), p. 3, and its ridge curve (lam > 0).

    Parameters
    ----------
    rho_nonlinear : rho + sum_{m != 1} a_m^2 (= rho + E[f^2] here, since a1 = 0).
    alpha : l/d; enters only through q = rho_nonlinear/alpha when lam > 0.
    tau : n/d^2.    lam : ridge (lam = 0 is Eq. (10); tau = 1 needs lam > 0).
    The order (rho, alpha, tau, lam) is that of :mod:`icl_symbolic.theory.asymptotic`.

    Returns
    -------
    float: ``rho_nonlinear/(1 - q^2/(tau (q + lam_tilde)^2))``; at lam = 0
    ``rho_nonlinear/(1-tau)`` (tau < 1) or ``rho_nonlinear tau/(tau-1)`` (tau > 1).

    >>> [round(e_a1zero(1.0, tau=t), 12) for t in (0.5, 0.9, 2.0)]
    [2.0, 10.0, 2.0]
    >>> e_a1zero(1.0, tau=1.0, lam=0.1) < 10   # ridge removes the peak
    True
    """
    if not (rho_nonlinear >= 0 and tau > 0 and lam >= 0 and alpha > 0):
        raise ICLError(
            f"need rho_nonlinear >= 0, tau > 0, lam >= 0, alpha > 0; got {rho_nonlinear}, {tau}, {lam}, {alpha}"
        )
    if lam == 0:
        check_not_peak(tau, lam)
        return rho_nonlinear / (1.0 - tau) if tau < 1 else rho_nonlinear * tau / (tau - 1.0)
    if rho_nonlinear == 0:
        return 0.0
    q = rho_nonlinear / alpha
    lt = lam_tilde_value(rho_nonlinear, alpha, tau, lam)
    return rho_nonlinear / (1.0 - q * q / (tau * (q + lt) ** 2))


# ----------------------------------------------------------------------------
# symbolic
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class A1ZeroDerivation:
    """SymPy objects and verdicts of the a1 = 0 derivation (Eq. 10 p. 3, Eq. 15 p. 10).

    Symbols: ``q, tau, lam, rho_nl, chi0`` (positive), ``s`` (positive, tau = 1/(1+s)
    encodes tau < 1, tau = 1 + s encodes tau > 1), ``c`` (task-covariance scale a1^2).
    """

    symbols: dict
    fixed_point: object  # Eq(chi0, q/(q tau/(1+chi0) + tau lam))
    quadratic: object  # tau lam chi0^2 + (q tau + tau lam - q) chi0 - q
    roots: tuple
    chi0: object  # the physical root
    physical_reason: str
    lam_tilde: object  # lam (1 + chi0)
    lam_tilde_limit_below: object  # lam -> 0, tau < 1
    lam_tilde_limit_above: object  # lam -> 0, tau > 1
    lam_tilde_limits_match_paper: bool
    eps_equation_residual: object  # C = 0 ridge equation at eps = lam_tilde (simplifies to 0)
    error_ridge: object  # e(lam), from the linear recipe with C = 0
    error_ridge_matches_pure_noise: bool
    error_limit_below: object  # lam -> 0, tau < 1
    error_limit_above: object
    boxed_below: object  # paper's rho_nl/(1 - tau)
    boxed_above: object  # paper's rho_nl tau/(tau - 1)
    boxed_match: bool
    error_at_tau_one: object  # e(lam) at tau = 1, lam > 0: finite
    ridge_removes_peak: bool
    alpha_kappa_free: bool
    M_limit_c0: object  # lim_{c->0} M_{cI}(nu)
    Mprime_limit_c0: object
    continuity_from_result1: bool  # Result 1 recipe with C = c I -> Eq. (10) as c -> 0

    @property
    def all_hold(self) -> bool:
        return all(
            (
                self.lam_tilde_limits_match_paper,
                self.error_ridge_matches_pure_noise,
                self.boxed_match,
                self.ridge_removes_peak,
                self.alpha_kappa_free,
                self.continuity_from_result1,
            )
        )


def _zero(expr) -> bool:
    return sp.simplify(sp.together(expr)) == 0


def derive() -> A1ZeroDerivation:
    """Derive Eq. (15) -> Eq. (10) in SymPy and check it against Result 1 at a1 -> 0.

    Runs in about a second.

    >>> D = derive()
    >>> D.all_hold
    True
    >>> import sympy
    >>> q, tau = D.symbols["q"], D.symbols["tau"]
    >>> sympy.simplify(D.lam_tilde_limit_below - q * (1 - tau) / tau)
    0
    """

    q, tau, lam, rho, chi, s, nu, c, kappa, alpha = sp.symbols(
        "q tau lam rho_nl chi0 s nu c kappa alpha", positive=True
    )
    fixed = sp.Eq(chi, q / (q * tau / (1 + chi) + tau * lam))
    quad = sp.expand(chi * (q * tau + tau * lam * (1 + chi)) - q * (1 + chi))
    quad = sp.collect(quad, chi)
    roots = tuple(sp.solve(quad, chi))
    # The constant coefficient -q and leading coefficient tau*lam give a root product
    # -q/(tau lam) < 0: one positive and one negative root.  chi0 is a ratio of positive
    # quantities (RHS of the fixed point for chi0 > -1), so the positive root is physical.
    prod = sp.simplify(roots[0] * roots[1])
    pos = [r for r in roots if (r.subs({q: 1, tau: sp.Rational(1, 2), lam: sp.Rational(1, 3)}) > 0)]
    chi0 = pos[0]
    reason = (
        f"the roots multiply to {prod} < 0, so exactly one is positive; chi0 > 0 because "
        "the right-hand side q/(q tau/(1+chi0) + tau lam) is positive for chi0 > -1"
    )
    # sanity: the chosen root satisfies the fixed point
    assert _zero(fixed.lhs.subs(chi, chi0) - fixed.rhs.subs(chi, chi0))
    lam_t = lam * (1 + chi0)
    below = sp.factor(sp.limit(lam_t.subs(tau, 1 / (1 + s)), lam, 0, "+").subs(s, 1 / tau - 1))
    above = sp.simplify(sp.limit(lam_t.subs(tau, 1 + s), lam, 0, "+"))
    lt_match = _zero(below - q * (1 - tau) / tau) and above == 0

    # The linear recipe with C_train = C_test = 0, noise rho_nl: M = 1/nu, rho_tr = rho_te = rho_nl,
    # q = rho_nl/alpha; ridge equation 1 - tau + tau lam/eps - eps M(eps + q) = 0 at eps = lam_tilde.
    eps = sp.Symbol("eps", positive=True)
    eps_res = sp.simplify((1 - tau + tau * lam / eps - eps / (eps + q)).subs(eps, lam_t))
    nu_ = q + eps
    e_eps = linear_error(Resolvent(1 / nu_, -1 / nu_**2, eps, rho, rho, 0, 0), rho, rho / q, tau)
    e_eps = sp.simplify(e_eps)
    pure_noise = rho / (1 - q**2 / (tau * (q + eps) ** 2))
    noise_match = _zero(e_eps - pure_noise)
    e_ridge = sp.simplify(pure_noise.subs(eps, lam_t))
    e_below = sp.simplify(sp.limit(e_ridge.subs(tau, 1 / (1 + s)), lam, 0, "+").subs(s, 1 / tau - 1))
    e_above = sp.simplify(sp.limit(e_ridge.subs(tau, 1 + s), lam, 0, "+").subs(s, tau - 1))
    boxed_below, boxed_above = rho / (1 - tau), rho * tau / (tau - 1)
    boxed = _zero(e_below - boxed_below) and _zero(e_above - boxed_above)
    e_one = sp.simplify(e_ridge.subs(tau, 1))
    # finite for lam > 0: the denominator of e(lam) at tau = 1 is 4 q^2 - X^2 with
    # X = lam + 2q + sqrt(lam (lam + 4q)) > 2q, i.e. -(X - 2q)(X + 2q) with both factors > 0;
    # and it diverges as lam -> 0+ (the peak of Eq. (10) is recovered).
    den = sp.fraction(sp.together(e_one))[1]
    X = lam + 2 * q + sp.sqrt(lam) * sp.sqrt(lam + 4 * q)
    finite = (
        (_zero(sp.expand(den) - sp.expand(4 * q**2 - X**2)) or _zero(sp.expand(den) + sp.expand(4 * q**2 - X**2)))
        and bool((X - 2 * q).is_positive)
        and sp.limit(e_one, lam, 0, "+") == sp.oo
    )
    free = not ({alpha, kappa} & (e_below.free_symbols | e_above.free_symbols)) and q not in (
        e_below.free_symbols | e_above.free_symbols
    )

    # Continuity of Result 1 as a1 -> 0: C = c I with c = a1^2 -> 0.
    B = nu + c - c / kappa
    M_c = 2 / (B + sp.sqrt(B**2 + 4 * c * nu / kappa))
    M_lim = sp.limit(M_c, c, 0)
    Mp_lim = sp.limit(sp.diff(M_c, nu), c, 0)
    # The recipe depends on c continuously (M_c analytic at c = 0 for nu > 0), so the limit is the
    # recipe at c = 0: ridgeless xi solves xi M(xi + q) = 1 - tau -> xi = q (1 - tau)/tau (tau < 1)
    xi = sp.Symbol("xi", positive=True)
    xi_sol = sp.solve(sp.Eq(xi * M_lim.subs(nu, xi + q), 1 - tau), xi)
    nu0 = q + xi
    e_xi = linear_error(Resolvent(M_lim.subs(nu, nu0), Mp_lim.subs(nu, nu0), xi, rho, rho, 0, 0), rho, rho / q, tau)
    ok_below = len(xi_sol) == 1 and _zero(e_xi.subs(xi, xi_sol[0]) - boxed_below)
    ok_above = _zero(e_xi.subs(xi, 0) - boxed_above)
    cont = _zero(M_lim - 1 / nu) and _zero(Mp_lim + 1 / nu**2) and ok_below and ok_above

    return A1ZeroDerivation(
        symbols={"q": q, "tau": tau, "lam": lam, "rho_nl": rho, "chi0": chi, "s": s, "c": c},
        fixed_point=fixed,
        quadratic=quad,
        roots=roots,
        chi0=chi0,
        physical_reason=reason,
        lam_tilde=lam_t,
        lam_tilde_limit_below=below,
        lam_tilde_limit_above=above,
        lam_tilde_limits_match_paper=bool(lt_match),
        eps_equation_residual=eps_res,
        error_ridge=e_ridge,
        error_ridge_matches_pure_noise=bool(noise_match and eps_res == 0),
        error_limit_below=e_below,
        error_limit_above=e_above,
        boxed_below=boxed_below,
        boxed_above=boxed_above,
        boxed_match=bool(boxed),
        error_at_tau_one=e_one,
        ridge_removes_peak=finite,
        alpha_kappa_free=bool(free),
        M_limit_c0=M_lim,
        Mprime_limit_c0=Mp_lim,
        continuity_from_result1=bool(cont),
    )
