"""No silent NaN at large d: the task-norm rule and the isotropic test functional at any d.

``e_gamma_isotropic`` averaged e(Gamma|w) over omega = |w|^2/d ~ chi^2_d/d with SciPy's
generalised Gauss-Laguerre weights, which sum to Gamma(d/2) and overflow above d of about 342:
the result was NaN.  The rule is now normalised (``engine.omega_rule``).  Checked here:

* the rule integrates the moments of chi^2_d/d exactly, E[omega^j] = prod_{i<j} (1 + 2i/d), for
  generated d from 1 to 1e6 (the degree-<= 2n-1 exactness of a Gauss rule);
* at d = 256, 512, 1024 the isotropic e(Gamma) of a fixed random Gamma (seeded) agrees with an
  independent Monte-Carlo estimate of the same error (tasks drawn, e(Gamma|w) exact per task,
  its standard error reported); two-sided false-alarm budget 1e-3 split over the 3 comparisons
  (z = 3.59); the MDE (z SE, 20 000 tasks) is below 0.1 % of e, smaller than the gap between
  the isotropic value and the omega = 1 (sphere) value at d = 256 (0.13 %), so a rule that lost
  the omega fluctuation would be caught there;
* a non-finite result is refused with one ICLError line, never returned.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.values import Value
from icl_symbolic.engine.omega_rule import omega_rule
from icl_symbolic.model import gamma_error as E
from icl_symbolic.model.moments import MonteCarlo

from _stats import z_bonferroni


@given(d=st.floats(1.0, 1e6), n=st.integers(2, 64), j=st.integers(0, 6))
def test_omega_rule_integrates_chi2_moments_exactly(d, n, j):
    j = min(j, 2 * n - 1)
    om, w = omega_rule(n, d)
    assert np.all(np.isfinite(om)) and np.all(np.isfinite(w)) and np.all(om > 0)
    exact = math.prod(1 + 2 * i / d for i in range(j))
    assert abs(float(w @ om**j) - exact) <= 1e-11 * exact, (d, n, j)


@pytest.mark.heavy
@pytest.mark.parametrize("d", [256, 512, 1024])
def test_isotropic_error_at_large_d_agrees_with_task_monte_carlo(d):
    z = z_bonferroni(3)
    rng = np.random.default_rng(20261206 + d)
    A = 0.7 * np.eye(d) + 0.3 * rng.standard_normal((d, d)) / np.sqrt(d)
    b = 0.3 * rng.standard_normal(d) / np.sqrt(d)
    ell = d // 2
    ex = E.e_gamma_isotropic(A, b, "sin(g)", 0.1, d, ell)
    assert math.isfinite(float(ex)) and ex.abs_err < 1e-9
    mc = E.e_gamma_mc_tasks(A, b, "sin(g)", 0.1, ell, "identity", MonteCarlo(20_000, rng))
    assert z * mc.stderr < 1e-3 * float(ex), ("MDE too large", mc.stderr, float(ex))
    assert abs(float(mc) - float(ex)) <= z * mc.stderr + ex.abs_err, (d, float(ex), float(mc), mc.stderr)


def test_non_finite_result_is_refused_in_one_line():
    with pytest.raises(ICLError) as info:
        E.finite_or_refuse(Value(float("nan"), "numeric", abs_err=float("nan")), "e_gamma_isotropic")
    assert "\n" not in str(info.value) and "non-finite" in str(info.value)
    v = Value(0.5, "numeric", abs_err=1e-16)
    assert E.finite_or_refuse(v, "x") is v
