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

E[f(g)^2] comes from the Hermite engine (exact or certified mpmath), not from float64, so a
teacher such as 1e200 tanh(g) is measured correctly before it is refused.
"""

from __future__ import annotations

import mpmath

from icl_symbolic.core.errors import ICLError
from icl_symbolic.theory.asymptotic import teacher_moments

#: largest E[y^2] = E[f^2] + rho the float64 finite-d terms accept (fourth powers stay below 1e308)
MAX_LABEL_SCALE = mpmath.mpf("1e100")
#: smallest nonzero E[y^2] they accept (fourth powers stay above float64's underflow)
MIN_LABEL_SCALE = mpmath.mpf("1e-100")


def check_finite_d_teacher(f, rhos) -> None:
    """Raise a one-line ICLError unless the finite-d terms can be evaluated for teacher f at every
    noise variance in ``rhos`` (see the module docstring); return None otherwise."""
    ef2 = mpmath.mpf(teacher_moments(f, 15).E_f2.value)
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


__all__ = ["check_finite_d_teacher", "MAX_LABEL_SCALE", "MIN_LABEL_SCALE"]
