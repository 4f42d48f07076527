"""Which teachers the O(1/d) corrections (theory --d D --order 1) can evaluate, checked before any work.

Paper: the finite-d corrections extend Result 1 (Eq. (9), p. 3; a1 = 0: Eq. (10)) with the label
law of Sec. 2 (y = f(x^T w) + eps, eps ~ N(0, rho), Eq. (1), p. 2).  Their Monte-Carlo and
linear-algebra terms work in float64 on labels and their squares and fourth powers; two label laws
have no such value:

* every label is 0 (E[f(g)^2] = 0 and rho = 0): the label covariance of the radial term is the zero
  matrix (not positive definite).  The error itself is exactly 0 at every d (any Gamma predicts
  the labels without error), which the d -> infinity theory prints; there is no correction to
  compute;
* E[y^2] = E[f(g)^2] + rho above ``MAX_LABEL_SCALE`` (1e100) or below ``MIN_LABEL_SCALE``
  (1e-100): fourth powers of labels summed over a prompt leave float64's range (1e308, or underflow
  below 1e-308 to a singular label covariance) and the eigen-solvers fail.  The ridgeless error scales
  exactly as c^2 under f -> c f, rho -> c^2 rho (the least-squares weights on y x adapt and the
  prediction scales by c), so the user rescales the teacher and multiplies the result by c^2.

* the finite-d terms take a1^2 and E[f^2] from their own float64 rule (``task_norm_moments``:
  120-node Gauss-Hermite in g), which does not resolve jumps and narrow features: 0.4 % off for
  sign(g), 92 % for exp(-100 g^2), 0 for exp(-1e6 g^2).  Its d -> infinity values are compared with
  the certified ones of the Hermite engine; a relative gap above ``MOMENT_TOLERANCE`` (1e-6 of
  E[y^2], far below the 4 digits the corrections print) is refused, since every term would
  inherit it (the d -> infinity theory, without --d, uses the certified moments).

E[f(g)^2] comes from the Hermite engine (exact or certified mpmath), not from float64, so a
teacher such as 1e200 tanh(g) is measured correctly before it is refused.
"""

from __future__ import annotations

import mpmath

from icl_symbolic.core.errors import ICLError
from icl_symbolic.theory.asymptotic import teacher_moments
from icl_symbolic.theory.finite_d import task_norm_moments

#: largest E[y^2] = E[f^2] + rho the float64 finite-d terms accept (fourth powers stay below 1e308)
MAX_LABEL_SCALE = mpmath.mpf("1e100")
#: largest gap, relative to E[y^2], between the finite-d terms' float64 moments and the certified ones
MOMENT_TOLERANCE = 1e-6
#: smallest nonzero E[y^2] they accept (fourth powers stay above float64's underflow)
MIN_LABEL_SCALE = mpmath.mpf("1e-100")


def check_finite_d_teacher(f, rhos) -> None:
    """Raise a one-line ICLError unless the finite-d terms can be evaluated for teacher f at every
    noise variance in ``rhos`` (see the module docstring); return None otherwise."""
    tm = teacher_moments(f, 15)
    ef2, a1sq = mpmath.mpf(tm.E_f2.value), mpmath.mpf(tm.a1.value) ** 2
    for rho in rhos:
        ey2 = ef2 + mpmath.mpf(float(rho))
        if ey2 == 0:
            raise ICLError(
                f"{f}: E[f(g)^2] = 0 and rho = 0: every label is 0, so the error is exactly 0 at every d "
                "and there is no O(1/d) correction to compute (theory without --d prints the 0)"
            )
        if not MIN_LABEL_SCALE <= ey2 <= MAX_LABEL_SCALE:
            raise ICLError(
                f"{f}: E[y^2] = E[f(g)^2] + rho = {mpmath.nstr(ey2, 3)} is outside "
                f"[{mpmath.nstr(MIN_LABEL_SCALE, 1)}, {mpmath.nstr(MAX_LABEL_SCALE, 1)}], where the finite-d "
                "terms leave float64's range; the ridgeless error scales as c^2 under f -> c f, rho -> c^2 rho: "
                "divide the teacher by c and multiply the result by c^2"
            )
        a1sq_rule, rnl_rule = task_norm_moments(f, float(rho), None)
        rnl = ey2 - a1sq
        gap = max(abs(a1sq_rule - a1sq), abs(rnl_rule - rnl)) / ey2
        if not gap <= MOMENT_TOLERANCE:
            raise ICLError(
                f"{f}: the finite-d terms' float64 Gauss-Hermite rule does not resolve this teacher "
                f"(a1^2 {a1sq_rule:.6g} against the certified {mpmath.nstr(a1sq, 6)}, rho_nonlinear "
                f"{rnl_rule:.6g} against {mpmath.nstr(rnl, 6)}: a jump or a feature narrower than its nodes); "
                "no O(1/d) correction is given (theory without --d uses the certified moments)"
            )


__all__ = ["check_finite_d_teacher", "MAX_LABEL_SCALE", "MIN_LABEL_SCALE", "MOMENT_TOLERANCE"]
