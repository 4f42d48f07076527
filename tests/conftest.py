"""Shared test configuration.

* Hypothesis profiles: ``default`` (small, for the everyday run) and ``ci``
  (``deadline=None``, ``print_blob=True``), chosen by ``HYPOTHESIS_PROFILE``.
  All profiles are derandomized so that CI runs are reproducible; property
  tests that need randomness draw a seed from hypothesis.
* ``ICL_SYMBOLIC_XSLOW=1`` enables tests marked ``slow``.
* mpmath precision is restored after every test (mpmath's own conftest does this).
"""

import os

import mpmath
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("xslow", max_examples=300, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))

XSLOW = os.environ.get("ICL_SYMBOLIC_XSLOW") == "1"


def pytest_collection_modifyitems(config, items):
    if XSLOW:
        return
    skip = pytest.mark.skip(reason="slow: set ICL_SYMBOLIC_XSLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    prec = mpmath.mp.prec
    yield
    mpmath.mp.prec = prec
