"""Judging a computed value against a claimed one under a claim's tolerance.

:class:`Tolerance` is the ``tolerance`` table of a claim (``exact``, ``abs``,
``rel`` or ``z`` in standard errors, with an optional finite-size bias budget
``bias_rel``); :func:`compare` applies it to two
:class:`~icl_symbolic.core.values.Value`.  The claim format is in
``docs/claims-format.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import mde_abs, t_limit


@dataclass(frozen=True)
class Tolerance:
    """How close is close enough, and why.

    ``kind``: ``exact`` (symbolic residual must simplify to 0), ``abs``
    (|computed - claimed| <= value), ``rel`` (|computed - claimed| <= value
    |claimed|), ``z`` (|computed - claimed| <= value x SE, for Monte Carlo and
    simulation).
    """

    kind: str
    value: float | None
    reason: str
    bias_rel: float | None = None

    def describe(self) -> str:
        if self.kind == "exact":
            return "exact"
        if self.kind == "z":
            return f"|z| <= {self.value:g}" + (f" + bias {self.bias_rel:g} relative" if self.bias_rel else "")
        return f"{self.kind} {self.value:g}"


def z_parts(computed, claimed, tol: Tolerance):
    """(combined SE, Student-t limit, dof or None) of a z tolerance."""
    se2 = sum(float(v.stderr) ** 2 for v in (computed, claimed) if v.stderr is not None)
    dofs = [v.n_samples - 1 for v in (computed, claimed) if v.method == "sim" and v.stderr is not None and v.n_samples]
    dof = min(dofs) if dofs else None
    return se2**0.5, t_limit(tol.value, dof), dof


#: The power at which the minimum detectable error is stated.
POWER = 0.9


def detectable(computed, claimed, tol: Tolerance, scale=None):
    """The claim's minimum detectable error: ``(mde_abs, mde_rel, how)``.

    For a ``z`` tolerance it is the smallest true offset of the computed value from
    the claimed one that the test flags with probability >= :data:`POWER` (90 %) at
    the claim's false-alarm budget: the offset delta with P(|delta + SE T| > limit)
    = 0.9, T Student t at the value's dof (:func:`icl_symbolic.core.stats.mde_abs`); a
    bias budget ``bias_rel`` widens the limit by that much.  For ``rel``/``abs`` it
    is the tolerance itself (an error beyond it fails with certainty), for
    ``exact`` 0.  ``mde_rel`` divides by ``scale`` (default: |claimed|); None when
    that is 0.

    >>> from icl_symbolic.core.values import Value
    >>> a, b = Value(1.0, "mc", stderr=0.01, n_samples=10**6), Value(1.0, "numeric")
    >>> m, r, how = detectable(a, b, Tolerance("z", 3.29, "x"))
    >>> round(m, 4), round(r, 4)
    (0.0457, 0.0457)
    """
    if tol.kind == "exact":
        return 0.0, 0.0, "exact: any non-zero symbolic difference fails"
    ref = abs(float(claimed.value)) if scale is None else abs(float(scale))
    if tol.kind in ("abs", "rel"):
        bound = tol.value if tol.kind == "abs" else tol.value * abs(float(claimed.value))
        slack = sum(float(v.abs_err) for v in (computed, claimed) if v is not None and v.abs_err is not None)
        m = bound + slack
        return m, (m / ref if ref else None), "deterministic: any error beyond the tolerance fails"
    se, zq, dof = z_parts(computed, claimed, tol)
    bias = (tol.bias_rel or 0.0) * abs(float(claimed.value))
    m = mde_abs(se, zq + bias / se, dof, POWER) if se > 0 else float("inf")
    how = (
        f"90 % power at |z| <= {zq:.3g}" + (f" (t, {dof} dof)" if dof else "") + (f" + bias {bias:.3g}" if bias else "")
    )
    return m, (m / ref if ref else None), how


def compare(computed, claimed, tol: Tolerance):
    """Apply a tolerance: returns ``(holds, residual, zscore, text)``.

    ``computed`` and ``claimed`` are :class:`~icl_symbolic.core.values.Value`.
    ``exact``: the symbolic difference must simplify to 0 (both exact).
    ``abs``/``rel``: the absolute difference, plus the computed value's own
    error estimate, within the tolerance (the estimate is *added* to the
    tolerance only when the claimed side is a printed number: a certified
    error bound of the computation can never make a claim fail).
    ``z``: the difference in units of the combined standard error.
    """
    if tol.kind == "exact":
        if computed.exact is None or claimed.exact is None:
            raise ICLError("an exact tolerance needs exact values on both sides")
        diff = sympy.simplify(computed.exact - claimed.exact)
        if diff == 0:
            return True, "0", None, "symbolic difference simplifies to 0"
        return False, str(diff), None, f"symbolic difference {diff}"
    with mpmath.workdps(40):
        c, k = mpmath.mpf(computed.value), mpmath.mpf(claimed.value)
        diff = c - k
        if tol.kind == "z":
            se, zq, dof = z_parts(computed, claimed, tol)
            if se <= 0:
                raise ICLError("a z tolerance needs a Monte-Carlo or simulation value with a standard error")
            se2 = se**2
            z = float(diff) / se
            qtxt = "" if zq == tol.value else f" (Student-t for {dof} dof: {zq:.3g})"
            if tol.bias_rel:
                bias = tol.bias_rel * abs(float(k))
                lim = zq * se2**0.5 + bias
                return (
                    abs(float(diff)) <= lim,
                    abs(float(diff)),
                    z,
                    f"z = {z:+.2f}; |diff| = {abs(float(diff)):.3g} vs {zq:.3g} SE{qtxt} + bias {bias:.3g} = {lim:.3g}",
                )
            return abs(z) <= zq, abs(float(diff)), z, f"z = {z:+.2f} (limit {zq:.3g}{qtxt})"
        slack = 0.0
        for v in (computed, claimed):
            if v.abs_err is not None:
                slack += float(v.abs_err)
        bound = tol.value if tol.kind == "abs" else tol.value * float(abs(k))
        res = abs(float(diff))
        return res <= bound + slack, res, None, f"|diff| = {res:.3g} (limit {bound:.3g})"
