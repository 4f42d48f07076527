"""The interpolation threshold tau = 1: the one statement of the rule.

With no ridge (lam = 0) the asymptotic ICL error diverges at tau = n/d^2 = 1,
where the number of pretraining prompts equals the number of trained
parameters (Result 1, Eq. (9), p. 3; Eq. (10), p. 3; Fig. 1, p. 4).  A ridge
lam > 0 removes the divergence.  The library refuses a single evaluation there
(:func:`check_not_peak`); sweeps keep the point and mark it diverging
(:func:`is_peak`, :data:`DIVERGES`).

>>> is_peak(1.0, 0.0), is_peak(1.0, 0.1), is_peak(2.0, 0.0)
(True, False, False)
"""

from __future__ import annotations

from icl_symbolic.core.errors import ICLError

#: Why a ridgeless point at tau = 1 has no finite error (the reason shown for it in sweeps).
DIVERGES = "tau = 1 with lam = 0: the ridgeless error diverges (interpolation peak)"


def is_peak(tau, lam=0.0) -> bool:
    """True at the ridgeless interpolation threshold (tau = 1, lam = 0)."""
    return lam == 0 and tau == 1


def check_not_peak(tau, lam=0.0) -> None:
    """One-line ICLError at the ridgeless interpolation threshold."""
    if is_peak(tau, lam):
        raise ICLError("tau = 1 is the interpolation threshold: the ridgeless error diverges there "
                       "(use tau != 1 or a ridge lam > 0)")
