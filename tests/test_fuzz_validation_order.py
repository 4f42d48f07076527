"""Inputs are validated before any teacher moment is computed.

``theory.asymptotic.curve`` computed the Hermite moments of the teacher (seconds of quadrature for a
kinked teacher) before it checked that rho was in range, so the range error came late.  Here the
Hermite engine is replaced by a function that fails the test if it is called, and generated
out-of-range parameters must be refused with one ICLError line by every entry point of the d ->
infinity theory: ``curve``, ``e_nonlinear`` and the API's ``theory_sweep``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icl_symbolic.api import theory as api_theory
from icl_symbolic.core.errors import ICLError
from icl_symbolic.theory import asymptotic

_BAD = st.sampled_from([-1.0, -1e-300, 2e9, float("nan"), float("inf"), -float("inf"), 0.0])
_NAMES = st.sampled_from(["rho", "alpha", "kappa", "tau", "lam"])


def _forbidden(*args, **kwargs):
    raise AssertionError("the teacher's moments were computed before the inputs were checked")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_NAMES, bad=_BAD, entry=st.sampled_from(["curve", "e_nonlinear", "theory_sweep"]))
def test_bad_parameter_is_refused_before_the_moments(monkeypatch, name, bad, entry):
    if bad == 0.0 and name in ("rho", "lam"):
        return  # 0 is a valid noise and a valid ridge
    monkeypatch.setattr(asymptotic, "hermite_coeffs", _forbidden)
    monkeypatch.setattr(api_theory, "teacher_moments", _forbidden)
    params = dict(rho=0.1, alpha=2.0, kappa=2.0, tau=2.0, lam=0.0)
    params[name] = bad
    call = {
        "curve": lambda: asymptotic.curve("sin(g) + relu(g - 1)", asymptotic.Ratios(**params)),
        "e_nonlinear": lambda: asymptotic.e_nonlinear("sin(g) + relu(g - 1)", asymptotic.Ratios(**params)),
        "theory_sweep": lambda: api_theory.theory_sweep("sin(g) + relu(g - 1)", **params),
    }[entry]
    with pytest.raises(ICLError) as info:
        call()
    assert "\n" not in str(info.value)
