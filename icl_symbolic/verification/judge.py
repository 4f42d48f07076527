"""Judging a computed value against a claimed one under a claim's tolerance.

:class:`Tolerance` is the ``tolerance`` table of a claim (``exact``, ``abs``,
``rel`` or ``z`` in standard errors, with an optional finite-size bias budget
``bias_rel``); :func:`compare` applies it to two
:class:`~icl_symbolic.values.Value`.  The claim format is in
``docs/claims-format.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import sympy

from ..errors import ICLError
from ..stats import t_limit


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


#: The claim's normal z budget as a Student-t limit at the SE's dof: the one definition is
#: :func:`icl_symbolic.stats.t_limit` (dof None: z itself; dof <= 0 refused, no SE means no test).
z_to_t = t_limit


def compare(computed, claimed, tol: Tolerance):
    """Apply a tolerance: returns ``(holds, residual, zscore, text)``.

    ``computed`` and ``claimed`` are :class:`~icl_symbolic.values.Value`.
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
            se2 = sum(float(v.stderr) ** 2 for v in (computed, claimed) if v.stderr is not None)
            if se2 <= 0:
                raise ICLError("a z tolerance needs a Monte-Carlo or simulation value with a standard error")
            z = float(diff) / se2 ** 0.5
            dofs = [v.n_samples - 1 for v in (computed, claimed)
                    if v.method == "sim" and v.stderr is not None and v.n_samples]
            zq = z_to_t(tol.value, min(dofs) if dofs else None)
            qtxt = "" if zq == tol.value else f" (Student-t for {min(dofs)} dof: {zq:.3g})"
            if tol.bias_rel:
                bias = tol.bias_rel * abs(float(k))
                lim = zq * se2 ** 0.5 + bias
                return (abs(float(diff)) <= lim, abs(float(diff)), z,
                        f"z = {z:+.2f}; |diff| = {abs(float(diff)):.3g} vs {zq:.3g} SE{qtxt} + bias "
                        f"{bias:.3g} = {lim:.3g}")
            return abs(z) <= zq, abs(float(diff)), z, f"z = {z:+.2f} (limit {zq:.3g}{qtxt})"
        slack = 0.0
        for v in (computed, claimed):
            if v.abs_err is not None:
                slack += float(v.abs_err)
        bound = tol.value if tol.kind == "abs" else tol.value * float(abs(k))
        res = abs(float(diff))
        return res <= bound + slack, res, None, f"|diff| = {res:.3g} (limit {bound:.3g})"
