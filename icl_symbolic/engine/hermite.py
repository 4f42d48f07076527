r"""Hermite coefficients a_m of a teacher f and the paper's effective noise.

Paper: Sec. 2, Eq. (2), p. 2 (Hermite expansion) and Eq. (8), p. 3
(rho_f, rho_nonlinear); Result 1, Eq. (9), p. 3 uses a1 and rho_nonlinear.

Convention (stated once, here)
------------------------------
``h_m`` is the *orthonormal probabilists'* Hermite polynomial

.. math::  h_m(g) = \mathrm{He}_m(g) / \sqrt{m!}, \qquad
           \mathbb{E}_{g\sim N(0,1)}[h_m(g) h_j(g)] = \delta_{mj},

where ``He_m`` is monic with weight ``exp(-g^2/2)`` (SymPy ``hermite_prob_poly``;
*not* the physicists' ``H_m`` that ``sympy.hermite``, ``mpmath.hermite`` and
``numpy.polynomial.hermite`` compute).  Then

* ``a_m = E[f(g) h_m(g)]``, in particular ``a_0 = E[f]`` and ``a1 = E[g f(g)]``;
* ``E[f^2] = sum_m a_m^2`` (Parseval);
* ``rho_f = rho + E[f^2]`` and ``rho_nonlinear = rho_f - a1^2 = rho + sum_{m != 1} a_m^2``
  (the m = 0 term included);
* Stein's lemma: ``a_m = E[f^{(m)}(g)] / sqrt(m!)`` for smooth f.

Examples
--------
>>> r = hermite_coeffs("sin(g)", M=3, rho="0.1")
>>> r.a1.exact, r.E_f2.exact
(exp(-1/2), 1/2 - exp(-2)/2)
>>> r.rho_nonlinear.exact
-exp(-1) - exp(-2)/2 + 3/5
>>> r.noise_normalized.to_str(6)     # Fig. 1 legend value (the Sec. 3 text says 1.447)
'0.447029'
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import sympy
from flint import arb, arb_series, arf
from mpmath.libmp import to_fixed

from icl_symbolic._version import __version__
from icl_symbolic.core.caches import memoize
from icl_symbolic.core.cost import SECONDS_PER, Estimate, announced
from icl_symbolic.core.errors import ICLError, ValidityError
from icl_symbolic.core.values import Value, bound_arithmetic, certified_digits, combine_exact
from icl_symbolic.engine.dual_ball import working_precision
from icl_symbolic.engine.expr import MAX_HERMITE_ORDER, Teacher, g, teacher
from icl_symbolic.engine.gauss import (
    Integrands,
    callable_digits,
    check_integrable,
    exact_expectation,
    exact_moments,
    exact_work,
    magnitude_bits,
    mp_expect_vector,
    mp_value,
    parity,
    probe_callable,
    quadrature_plan,
    singular_candidates,
    singular_mass_bound,
    to_rational,
    uncertified_value,
)
from icl_symbolic.engine.orthopoly import h, he
from icl_symbolic.output.display import Quantity, html_table, latex_table, text_table
from icl_symbolic.output.rows import Rows

__all__ = ["he", "h", "hermite_coeffs", "HermiteResult", "stein_coefficient"]

PAPER = "arXiv:2610.10761, Sec. 2, Eq. (2) p. 2 and Eq. (8) p. 3"


# ---------------------------------------------------------------------------
# quantities that stay exact when their inputs are exact
# ---------------------------------------------------------------------------


#: a product of two closed forms is kept exact only while it has at most this many terms
MAX_DERIVED_TERMS = 500


class _Q:
    """A number with an absolute error bound and, when available, its closed form; its arithmetic is
    :func:`icl_symbolic.core.values.bound_arithmetic` (the bounds of :class:`Value`) and, on closed
    forms, :func:`icl_symbolic.core.values.combine_exact` put in expanded form."""

    def __init__(self, val, err, exact=None):
        self.val, self.err, self.exact = val, err, exact

    @classmethod
    def of(cls, v: Value):
        val = mpmath.mpf(v.value)
        if v.method == "exact":
            # Value.from_exact evaluates to digits + 5 significant digits: the bound used when the
            # closed form is dropped (_ex) and the number is carried on in mpmath
            return cls(val, abs(val) * mpmath.mpf(10) ** -((v.digits or 15) + 4), v.exact)
        return cls(val, mpmath.mpf(v.abs_err or 0), None)

    def _op(self, o, op: str) -> "_Q":
        val, err = bound_arithmetic(op, self.val, self.err, o.val, o.err)
        return _Q(val, err, self._ex(o, op))

    def _ex(self, other, op: str):
        if self.exact is not None and other.exact is not None:
            n = len(sympy.Add.make_args(self.exact)) * len(sympy.Add.make_args(other.exact))
            if n > MAX_DERIVED_TERMS:
                # a1^2 of a 280-term closed form (70 kinks) expands into 78 400 terms, for every
                # a_m of the Parseval sum: minutes of SymPy for a form nobody reads; the number is
                # carried on in mpmath with the bound of its evaluation instead
                return None
            return sympy.expand(combine_exact(op, self.exact, other.exact))
        return None

    def __add__(self, o):
        return self._op(o, "+")

    def __sub__(self, o):
        return self._op(o, "-")

    def __mul__(self, o):
        return self._op(o, "*")

    def __truediv__(self, o):
        return self._op(o, "/")

    def value(self, digits, note):
        if self.exact is not None:
            return Value.from_exact(self.exact, digits=digits, note=note)
        return mp_value(self.val, self.err, digits, note)


@dataclass(frozen=True)
class HermiteResult(Rows):
    """Hermite coefficients of f and the effective-noise quantities (Eq. 2, Eq. 8).

    ``a[m]`` is ``E[f(g) h_m(g)]``; every field is a :class:`Value` except
    ``noise_normalized`` (None when a1 = 0 exactly or |a1| is below its error)
    and ``signal_fraction`` (None when E[f^2] = 0).
    """

    expr: object
    label: str
    rho: object
    digits: int
    M: int
    a: tuple
    E_f2: Value
    a1: Value
    a1_sq: Value
    rho_f: Value
    rho_nonlinear: Value
    noise_normalized: Value | None
    signal_fraction: Value | None
    parseval_residual: Value
    method: str
    notes: tuple = ()

    # -- display: a compact table (the full record is to_json()) -------------
    _NAMES = (
        ("a1", "a_1"),
        ("E_f2", "\\mathbb{E}[f^2]"),
        ("rho_f", "\\rho_f"),
        ("rho_nonlinear", "\\rho_{\\rm nonlinear}"),
        ("noise_normalized", "\\rho_{\\rm nonlinear}/a_1^2"),
    )

    def _rows(self):
        plain = {"E_f2": "E[f^2]", "noise_normalized": "rho_nonlinear/a1^2"}
        return [Quantity(plain.get(name, name), tex, getattr(self, name)) for name, tex in self._NAMES]

    def _title(self) -> str:
        return (
            f"Hermite coefficients of f(g) = {self.label}, rho = {self.rho} "
            f"({self.method}, {self.digits} digits; Eq. (2), Eq. (8))"
        )

    def _footer(self) -> str:
        shown = ", ".join(v.to_str(6) for v in self.a[:9]) + (", ..." if self.M > 8 else "")
        notes = f"; {len(self.notes)} note(s) in .notes" if self.notes else ""
        return f"  a_0..a_{self.M} = {shown}  (full: .a, .to_json()){notes}"

    def __repr__(self) -> str:
        return text_table(self._title(), self._rows(), min(self.digits, 16), self._footer())

    def _repr_html_(self) -> str:
        return html_table(self._title(), self._rows(), min(self.digits, 16), self._footer().strip())

    def _repr_latex_(self) -> str:
        return latex_table(self._title(), self._rows(), min(self.digits, 16))

    @property
    def spectrum(self) -> list:
        """Hermite energy spectrum a_m^2, m = 0..M (mpmath numbers at the working precision)."""
        with mpmath.workdps(self.digits + 20):
            return [+(mpmath.mpf(v.value) ** 2) for v in self.a]

    def spectrum_values(self) -> tuple:
        """a_m^2 as :class:`Value` s: exact squares, or the square with its propagated error bound.

        Computed at ``digits + 20`` working digits, so that ``--digits 40`` prints
        40 correct digits of a_m^2 (not a 53-bit square).
        """
        out = []
        with mpmath.workdps(self.digits + 20):
            for m, v in enumerate(self.a):
                q = _Q.of(v)
                out.append((q * q).value(self.digits, f"a_{m}^2"))
        return tuple(out)

    def points(self) -> list[dict]:
        """The spectrum, one row per order m (the rows of ``coeffs --csv``): ``teacher``, ``m``,
        ``a_m``, ``a_m_squared`` (decimal strings at ``digits``) and ``method``."""
        return [
            {
                "teacher": self.label,
                "m": m,
                "a_m": v.to_str(self.digits),
                "a_m_squared": e2.to_str(self.digits),
                "method": v.method,
            }
            for m, (v, e2) in enumerate(zip(self.a, self.spectrum_values()))
        ]

    def to_json(self) -> dict:
        """The JSON document of ``icl-symbolic coeffs --json`` (numbers as decimal strings)."""

        def s(v):
            return None if v is None else v.to_str(self.digits)

        a_exact = [str(v.exact) if v.method == "exact" else None for v in self.a]
        named = {
            k: getattr(self, k)
            for k in (
                "E_f2",
                "a1",
                "a1_sq",
                "rho_f",
                "rho_nonlinear",
                "noise_normalized",
                "signal_fraction",
                "parseval_residual",
            )
        }
        return {
            "expr": self.label,
            "sympy": None if self.expr is None else str(self.expr),
            "rho": str(self.rho),
            "digits": self.digits,
            "M": self.M,
            "a": [s(v) for v in self.a],
            "a_exact": None if all(x is None for x in a_exact) else a_exact,
            **{k: s(v) for k, v in named.items()},
            "exact": {k: (str(v.exact) if v is not None and v.method == "exact" else None) for k, v in named.items()},
            "method": self.method,
            "provenance": {
                "a": [v.to_json() for v in self.a],
                **{k: (None if v is None else v.to_json()) for k, v in named.items()},
            },
            "notes": list(self.notes),
            "convention": "a_m = E[f(g) h_m(g)], h_m = He_m/sqrt(m!) orthonormal probabilists' Hermite",
            "paper": PAPER,
            "software": f"icl-symbolic {__version__}",
        }


def _hermite_matrix(M):
    """Rows: coefficients of h_m in the monomials g^j (exact)."""
    rows = []
    for m in range(M + 1):
        p = sympy.Poly(h(m), g)
        rows.append([p.coeff_monomial(g**j) for j in range(M + 1)])
    return rows


def _simplify(e):
    e = sympy.expand(e)
    return sympy.powsimp(e)


#: the largest ball radius of a Hermite sum, in units of 2^-Q, that :func:`hermite_sums` accepts
#: (Q is the working precision + 60 bits or more: this is 2^-44 of the quadrature's tolerance)
HERMITE_SUM_ULPS = 2**16


@memoize(maxsize=8)
def _sqrt_factorials(M: int, prec: int) -> tuple:
    with working_precision(prec):
        return tuple(arb.fac_ui(m).sqrt() for m in range(M + 1))


def _to_arb(x) -> arb:
    sign, man, exp, _bc = mpmath.mpf(x)._mpf_
    return arb(arf((-man if sign else man, exp)))  # exact: arf holds any mpf


def hermite_sums(xs, ws, M: int, Q: int) -> list:
    """[sum_i w_i h_m(x_i)] for m <= M as integers with Q fractional bits (floor of the midpoint).

    Per node one Arb power series exp(x t - t^2/2) = sum_m He_m(x) t^m / m! (the generating
    function of the probabilists' Hermite polynomials, one C call for all m), times w_i, summed in
    ball arithmetic; h_m = sqrt(m!) [t^m].  The precision starts at Q + 160 bits and doubles (twice)
    until every radius is below HERMITE_SUM_ULPS units of 2^-Q (the rounding of the fixed-point
    recurrence this replaces was of the same order); ValidityError otherwise.
    """
    bxs, bws = [_to_arb(x) for x in xs], [_to_arb(w) for w in ws]
    prec = Q + 160  # the series loses about 100 bits to cancellation for |x| <= 12, M = 200
    for _attempt in range(3):
        with working_precision(prec, series_length=M + 1):
            half = arb(-1) / 2
            acc = [arb_series(0, prec=M + 1), arb_series(0, prec=M + 1)]  # w > 0, w < 0
            for x, w in zip(bxs, bws):
                if w != 0:  # |w| exp(x t - t^2/2) as one exponential: exp(log|w| + x t - t^2/2)
                    acc[w < 0] += arb_series([abs(w).log(), x, half], prec=M + 1).exp()
            acc = acc[0] - acc[1]
            co = acc.coeffs() + [arb(0)] * (M + 1 - len(acc.coeffs()))
            out = [c * r for c, r in zip(co, _sqrt_factorials(M, prec))]
            tol = arb(HERMITE_SUM_ULPS) * arb(2) ** -Q
            if all(c.rad() <= tol for c in out):
                return [_fixed_floor(c.mid(), Q) for c in out]
        prec *= 2
    raise ValidityError(f"the Hermite sums to order {M} did not reach 2^-{Q} (ball radius too large)")


def _fixed_floor(x: arf, Q: int) -> int:
    man, exp = x.man_exp()
    man, exp = int(man), int(exp) + Q
    return man << exp if exp >= 0 else man >> -exp


def real_value(T: Teacher, t, digits: int):
    """f(t) as an mpf: a complex value with a relatively negligible imaginary part is its real part;
    ValidityError when f is complex-valued there."""
    f = T.mp(t)
    if not isinstance(f, mpmath.mpf):
        if isinstance(f, mpmath.mpc) or isinstance(f, complex):
            if f.imag != 0 and abs(f.imag) > abs(f.real) * mpmath.mpf(10) ** (-digits - 5):
                raise ValidityError(f"f = {T.label} is complex-valued at g = {mpmath.nstr(t, 8)}")
            f = f.real
        f = mpmath.mpf(f)
    return f


def hermite_parity(expr, M: int) -> tuple | None:
    """The parity of f h_m, m <= M, for an odd or even f (None otherwise): (-1)^m times f's."""
    p = parity(expr)
    return None if p == 0 else tuple(p * (-1) ** m for m in range(M + 1))


def _mp_coefficients(T: Teacher, M: int, digits: int, need_f2: bool, progress=None):
    """[(val, err, cert)] for a_0..a_M (and E[f^2] last when need_f2), one shared quadrature.

    All h_m at a node come from one power series (:func:`hermite_sums`), applied to s f(t)
    (s = node weight x Gaussian density), so f is evaluated once per node; the nodes of a level
    are summed together.  For an odd or even f only [0, inf) is integrated (f h_m is even or odd).
    """

    def fixed_batch(ts, ss, Q):
        fs = [real_value(T, t, digits) for t in ts]
        sfs = [s * f for s, f in zip(ss, fs)]
        out = hermite_sums(ts, sfs, M, Q)
        if need_f2:
            out.append(sum(to_fixed((sf * f)._mpf_, Q) for sf, f in zip(sfs, fs)))
        return out

    plan = quadrature_plan(T, digits, 1, T.label, M + 2)
    singular = plan.singular
    # fixed point is absolute: shift Q by the magnitude of f (and f^2) so that 1e-200*tanh(g)
    # keeps the relative digits of tanh(g) (the integers just get longer)
    shift = magnitude_bits(T.mp, plan.points, power=[1] * (M + 1) + [2] * int(need_f2))
    par = hermite_parity(T.expr, M)
    ints = Integrands(
        fixed_batch,
        M + 1 + int(need_f2),
        scaled=True,
        fixed=True,
        extra_bits=shift,
        label=f"f h_m, m <= {M}",
        batch=True,
        parity=None if par is None else par + (1,) * int(need_f2),
    )
    res = mp_expect_vector(ints, 1, digits, plan.points, progress=progress)
    if singular:
        # the mass near integrable singularities that the nodes cannot reach; for a_m the
        # factor |h_m(r)| <= 1.09 exp(r^2/4) (Cramer's inequality) bounds the Hermite weight
        hmax = max(mpmath.mpf("1.09") * mpmath.exp(mpmath.mpf(str(sympy.N(r, 30))) ** 2 / 4) for r in singular)
        b_f = singular_mass_bound(T.mp, singular, digits) * hmax
        b_f2 = singular_mass_bound(lambda t: T.mp(t) ** 2, singular, digits) if need_f2 else 0
        res = [(v, e + (b_f2 if need_f2 and i == M + 1 else b_f), c) for i, (v, e, c) in enumerate(res)]
        res = [(v, e, certified_digits(v, e, digits)) for v, e, _ in res]
    if not plan.scale.covered:
        res = [(v, mpmath.inf, 0, plan.scale.reason) for v, e, _ in res]
    return res


def hermite_coeffs(f, M: int = 8, rho=0, digits: int = 30, exact: bool = True, *, progress=None) -> HermiteResult:
    """Hermite coefficients a_0..a_M of f and the Eq. (8) quantities.

    Paper: Eq. (2), p. 2 (a_m = E[f(g) h_m(g)]) and Eq. (8), p. 3.

    Parameters
    ----------
    f : str | sympy.Expr | Teacher | callable
        The teacher; strings are parsed by :func:`icl_symbolic.engine.expr.parse_expr`.
        Callables (which must accept mpmath numbers) use the mpmath path only.
    M : int
        Highest order (0 <= M <= 200).
    rho : number, str or Rational
        Label-noise variance (``"0.1"`` is exactly 1/10); must be >= 0.
    digits : int
        Significant digits for the mpmath path and for printing.
    exact : bool
        Try closed forms first (default); False forces mpmath (used by tests).
    progress : callable, optional
        Takes one line; a quadrature that runs longer than a few seconds reports
        what it computes and its progress with an ETA through it.

    Returns
    -------
    HermiteResult
        ``method`` is ``"exact"`` when every field is a closed form, ``"mpmath"``
        when none is, ``"mixed"`` otherwise.

    Examples
    --------
    >>> r = hermite_coeffs("tanh(g)", M=3, rho="0.1", digits=20)
    >>> r.a1.to_str(15), r.E_f2.to_str(15), r.rho_nonlinear.to_str(15)
    ('0.605705509602159', '0.394294490397841', '0.12741532603543')
    >>> r.method
    'mpmath'
    >>> hermite_coeffs("g**3").parseval_residual.exact
    0
    >>> [v.exact for v in hermite_coeffs("g**3", M=3).a]
    [0, 3, 0, sqrt(6)]
    """
    if not isinstance(M, int) or isinstance(M, bool) or not 0 <= M <= MAX_HERMITE_ORDER:
        raise ICLError(f"M must be an integer between 0 and {MAX_HERMITE_ORDER}, got {M!r}")
    if not isinstance(digits, int) or isinstance(digits, bool) or not 1 <= digits <= 1000:
        raise ICLError(f"digits must be an integer between 1 and 1000, got {digits!r}")
    rho_ex = to_rational(rho, "rho")
    if rho_ex.is_negative:
        raise ICLError(f"rho is a noise variance and must be >= 0, got {rho}")
    T = teacher(f)
    notes = []
    if T.expr is None:
        probe_callable(T)
    try:
        # a polynomial is in every L^p of the Gaussian, however large its coefficients (the
        # growth probe would call 1e1000*g "not in L^2"); its integrals are exact
        if T.expr is None or not T.expr.is_polynomial(g):
            check_integrable(
                lambda t: T.mp(t) ** 2,
                1,
                "f^2",
                singular_candidates(T.expr) if T.expr is not None else (),
                expr=None if T.expr is None else T.expr**2,
            )
    except ValidityError as exc:
        raise ValidityError(f"f = {T.label} is not in L^2(N(0,1)): {exc}") from None

    M_out, M = M, max(M, 1)  # a1 is always computed (needed for Eq. 8)
    a_vals = E_f2 = None
    if exact and T.expr is not None:
        # the exact path with kinks: its work is counted before it starts (gauss.exact_work) and a
        # long one is announced with its estimate, then reports its progress (cost.Progress)
        work = exact_work(T.expr, M)
        watch = None
        if work:
            est = Estimate(
                work * SECONDS_PER["exact_unit"],
                work,
                "closed-form integrals",
                f"E[f h_m, m <= {M}] in closed form, split at the kinks",
                "a smaller --M, fewer kinks",
            )
            watch = announced(progress, est, total=1.5 * work)
        done = [0.0]

        def step(units):
            done[0] += units
            if watch is not None:
                watch.update(done[0])

        mom = exact_moments(T.expr, M, on_piece=step if watch is not None else None)
        if mom is not None:
            rows = _hermite_matrix(M)
            a_vals = []
            for m, row in enumerate(rows):
                a_vals.append(
                    Value.from_exact(
                        _simplify(sum(c * mu for c, mu in zip(row, mom))), digits, note=f"a_{m} = E[f h_{m}]"
                    )
                )
                step(0.4 * work / (M + 1))
        ef2 = exact_expectation(T.expr**2)
        if ef2 is not None:
            E_f2 = Value.from_exact(_simplify(ef2), digits, note="E[f^2]")
        step(0.1 * work)
    if a_vals is None or E_f2 is None:
        res = _mp_coefficients(T, M, digits, need_f2=E_f2 is None, progress=progress)
        cap = callable_digits(T)
        if cap is not None:
            # |E[delta f h_m]| <= delta sqrt(E[f^2]) for a relative evaluation error delta
            scale = mpmath.sqrt(abs(res[-1][0])) if E_f2 is None else mpmath.sqrt(abs(mpmath.mpf(E_f2.value)))
            floor = mpmath.mpf(10) ** -cap * max(scale, 1) * 2
            res = [(v, max(e, floor if i <= M else floor * scale), *rest) for i, (v, e, *rest) in enumerate(res)]
            notes.append(f"the Python callable delivers about {cap} significant digits; errors include that")

        def made(row, note):
            if len(row) == 4:  # no argument covers the integrand (scales.analyze)
                return uncertified_value(row[0], row[1], row[3], note)
            return mp_value(row[0], row[1], digits, note=note)

        if a_vals is None:
            a_vals = [made(row, f"a_{m} = E[f h_{m}]") for m, row in enumerate(res[: M + 1])]
        if E_f2 is None:
            E_f2 = made(res[-1], "E[f^2]")

    a1_v = a_vals[1]
    M, a_vals = M_out, a_vals[: M_out + 1]
    with mpmath.workdps(digits + 20):
        rho_q = _Q(mpmath.mpf(str(sympy.N(rho_ex, digits + 20))), mpmath.mpf(0), rho_ex)
        a1_q = _Q.of(a1_v)
        ef2_q = _Q.of(E_f2)
        a1_sq = a1_q * a1_q
        rho_f = rho_q + ef2_q
        rho_nl = rho_f - a1_sq
        resid = ef2_q
        for v in a_vals:
            q = _Q.of(v)
            resid = resid - q * q
        a1_zero = (a1_q.exact is not None and a1_q.exact == 0) or abs(a1_q.val) <= a1_q.err
        if a1_zero:
            noise_norm = None
            notes.append(
                "a1 = 0"
                + (" exactly" if a1_q.exact is not None else f" within its error {mpmath.nstr(a1_q.err, 3)}")
                + ": rho_nonlinear/a1^2 is undefined (the a1 = 0 branch, Eq. (10), applies)"
            )
        else:
            noise_norm = (rho_nl / a1_sq).value(digits, "rho_nonlinear / a1^2 (Fig. 1 legend)")
        ef2_zero = (ef2_q.exact is not None and ef2_q.exact == 0) or abs(ef2_q.val) <= ef2_q.err
        if ef2_zero:
            signal = None
            notes.append("E[f^2] = 0: the signal fraction a1^2/E[f^2] is undefined")
        else:
            signal = (a1_sq / ef2_q).value(digits, "a1^2 / E[f^2]")
        fields = dict(
            a1_sq=a1_sq.value(digits, "a1^2"),
            rho_f=rho_f.value(digits, "rho_f = rho + E[f^2] (Eq. 8)"),
            rho_nonlinear=rho_nl.value(digits, "rho_nonlinear = rho_f - a1^2 (Eq. 8)"),
            parseval_residual=resid.value(digits, f"E[f^2] - sum_(m<={M}) a_m^2"),
        )
    all_vals = [*a_vals, a1_v, E_f2, *fields.values()]
    kinds = {v.method for v in all_vals}
    method = "exact" if kinds == {"exact"} else ("mpmath" if "exact" not in kinds else "mixed")
    if any(v.method == "mpmath" and v.digits is not None and v.digits < digits for v in all_vals):
        notes.append("some values have fewer certified digits than requested (see provenance)")
    return HermiteResult(
        expr=T.expr,
        label=T.label,
        rho=rho_ex,
        digits=digits,
        M=M,
        a=tuple(a_vals),
        E_f2=E_f2,
        a1=a1_v,
        noise_normalized=noise_norm,
        signal_fraction=signal,
        method=method,
        notes=tuple(notes),
        **fields,
    )


def stein_coefficient(f, m: int):
    """a_m from Stein's lemma, E[f^(m)(g)] / sqrt(m!), exact (smooth f only), or None.

    An independent route to a_m used by the property tests.

    >>> stein_coefficient("exp(g)", 3)
    sqrt(6)*exp(1/2)/6
    """
    T = teacher(f)
    if T.expr is None:
        raise ICLError("Stein's lemma needs a SymPy teacher")
    d = sympy.diff(T.expr, g, int(m))
    ex = exact_expectation(d)
    return None if ex is None else _simplify(ex / sympy.sqrt(sympy.factorial(int(m))))
