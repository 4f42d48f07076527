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

>>> is_peak(1.0, 0.0), is_peak(1.0, 0.1), is_peak(2.0, 0.0), is_peak(0.9999999999999999)
(True, False, False, True)

A tau within rounding of 1 (``PEAK_ULPS`` float64 units) is the peak, one way everywhere: grids are
generated exactly (``core.numbers.grid_points``), and a float from elsewhere that only misses 1 by
rounding is treated as 1.
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


#: a tau this many float64 units of 1 (or fewer) away from 1 is the peak: it is 1 up to the rounding of a
#: grid or of a ratio such as n/d^2 (0.9999999999999999 from numpy.linspace(0.1, 4, 40) is 1 - 1.1e-16)
PEAK_ULPS = 4


def is_peak(tau, lam=0.0) -> bool:
    """True at the ridgeless interpolation threshold (tau = 1, lam = 0), tau within ``PEAK_ULPS``
    float64 rounding units of 1 included: such a point gets the tau = 1 treatment, not a value of
    1e15 from the diverging formula."""
    return lam == 0 and abs(float(tau) - 1.0) <= PEAK_ULPS * 2.0**-52


def check_not_peak(tau, lam=0.0) -> None:
    """One-line ICLError at the ridgeless interpolation threshold."""
    if is_peak(tau, lam):
        raise ICLError(
            "tau = 1 is the interpolation threshold: the ridgeless error diverges there "
            "(use tau != 1 or a ridge lam > 0)"
        )
