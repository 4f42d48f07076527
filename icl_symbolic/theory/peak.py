"""The interpolation threshold tau = 1: the one statement of the rule.

With no ridge (lam = 0) the asymptotic ICL error diverges at tau = n/d^2 = 1,
where the number of pretraining prompts equals the number of trained
parameters (Result 1, Eq. (9), p. 3; Eq. (10), p. 3; Fig. 1, p. 4).  A ridge
lam > 0 removes the divergence.

The rule, the same in every command and in the library (docs/cli.md, "tau = 1"):

* a quantity that is reported (``theory``, ``kernel``: sweeps or one point;
  ``simulate``'s ``e_theory``) is ``inf`` with the reason :data:`DIVERGES`
  (``null`` next to the reason in JSON, ``inf`` in CSV);
* ``simulate`` runs the point (a finite-d error exists) and says why its number
  means nothing there (:data:`AT_PEAK`), instead of a comparison;
* what needs a finite value refuses with the same reason: ``extrapolate``
  (there is no finite e_inf to extrapolate to) and a single evaluation in the
  Python API (:func:`check_not_peak`).

>>> is_peak(1.0, 0.0), is_peak(1.0, 0.1), is_peak(2.0, 0.0)
(True, False, False)
"""

from __future__ import annotations

from icl_symbolic.core.errors import ICLError

#: Why a ridgeless point at tau = 1 has no finite error (the reason shown for it in sweeps).
DIVERGES = "tau = 1 with lam = 0: the ridgeless error diverges (interpolation peak)"


#: Why a simulated number at the peak is not compared with anything (simulate's words for it).
AT_PEAK = (
    "tau = 1 with lam = 0 is the interpolation peak: the d -> infinity error is infinite, and at finite d "
    "the ridgeless error is set by the smallest singular values of the training data, so it varies by "
    "orders of magnitude between seeds and its mean estimates nothing finite; use a ridge --lam > 0 or "
    "tau != 1 for a number that means something"
)


def is_peak(tau, lam=0.0) -> bool:
    """True at the ridgeless interpolation threshold (tau = 1, lam = 0)."""
    return lam == 0 and tau == 1


def check_not_peak(tau, lam=0.0) -> None:
    """One-line ICLError at the ridgeless interpolation threshold."""
    if is_peak(tau, lam):
        raise ICLError(
            "tau = 1 is the interpolation threshold: the ridgeless error diverges there "
            "(use tau != 1 or a ridge lam > 0)"
        )
