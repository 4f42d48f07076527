"""Grids are exact, and a point within rounding of the interpolation peak is the peak.

``start:stop:count`` grids were ``numpy.linspace``: ``theory "sin(g)" --tau 0.1:4:40`` stepped onto
tau = 0.9999999999999999, printed it as ``1`` and gave e = 3.16e15 without a word.  Checked on
generated grid strings:

* every point of a linear grid is the float nearest its exact rational value (start, stop read as
  the decimals written); of a geometric grid, the float nearest the value at 100 digits;
* a generated linear grid that passes through 1 has the point 1.0 exactly, and the d -> infinity
  theory gives it the tau = 1 treatment (inf and the reason ``DIVERGES``), not a giant number;
* ``is_peak`` treats tau within ``PEAK_ULPS`` float64 units of 1 as the peak and nothing farther.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from icl_symbolic.api.theory import DIVERGES, theory_sweep
from icl_symbolic.cli._args import parse_grid
from icl_symbolic.theory.peak import PEAK_ULPS, is_peak

_DECIMAL = st.builds(lambda m, k: (m, k), st.integers(1, 99_999), st.integers(-6, 3))


def _text(m, k) -> str:
    return f"{m}e{k}"


@given(a=_DECIMAL, b=_DECIMAL, count=st.integers(1, 200), log=st.booleans())
def test_grid_points_are_the_nearest_floats(a, b, count, log):
    sa, sb = _text(*a), _text(*b)
    pts = parse_grid(f"{sa}:{sb}:{count}", "tau", log=log)
    A, B = Fraction(sa), Fraction(sb)
    assert len(pts) == count
    for i, p in enumerate(pts):
        if count == 1:
            exact = float(A)
        elif not log:
            exact = float(A + (B - A) * i / (count - 1))
        else:
            with mpmath.workdps(100):
                ma, mb = mpmath.mpf(A.numerator) / A.denominator, mpmath.mpf(B.numerator) / B.denominator
                exact = float(ma * (mb / ma) ** (mpmath.mpf(i) / (count - 1)))
        assert p == exact, (sa, sb, count, log, i, p, exact)


@given(
    h=st.builds(Fraction, st.integers(1, 999), st.sampled_from([10, 100, 1000, 7, 3])),
    below=st.integers(1, 12),
    above=st.integers(1, 12),
)
def test_a_grid_through_one_hits_the_peak_exactly(h, below, above):
    lo, hi = 1 - below * h, 1 + above * h
    if lo <= 0:
        lo, below = h, int((1 - h) / h)  # keep tau > 0: start at h (the grid still passes through 1 when h | 1 - h)
        if (1 - lo) % h or below < 1:
            return
    text = f"{float(lo)!r}:{float(hi)!r}:{below + above + 1}"
    if Fraction(repr(float(lo))) != lo or Fraction(repr(float(hi))) != hi:
        return  # the ends are not decimals as written: the grid is not the one drawn
    pts = parse_grid(text, "tau")
    assert 1.0 in pts.tolist(), (text, pts)
    cv, _ = theory_sweep("sin(g)", rho=0.1, alpha=2.0, kappa=2.0, tau=pts, lam=0.0)
    e = np.asarray(cv.e, dtype=float)
    taus = np.asarray(cv.columns["tau"], dtype=float)
    at_peak = [i for i, t in enumerate(taus) if t == 1.0]
    assert at_peak and all(math.isinf(e[i]) for i in at_peak)
    assert all(math.isfinite(x) and x < 1e6 for i, x in enumerate(e) if i not in at_peak), (text, e)
    reasons = [pt["reason"] for pt in cv.to_json()["points"]]
    assert [i for i, r in enumerate(reasons) if r == DIVERGES] == at_peak, (text, reasons)


@given(k=st.integers(-40, 40))
def test_peak_tolerance_is_rounding_only(k):
    tau = 1.0 + k * 2.0**-53
    assert is_peak(tau) == (abs(tau - 1.0) <= PEAK_ULPS * 2.0**-52)
    assert not is_peak(tau, 0.1)
    assert is_peak(1.0) and not is_peak(1.0 + 1e-12) and not is_peak(1.0 - 1e-12)
