"""Shared test configuration.

* Hypothesis profiles (``tests/_examples.py``): ``dev`` (10 examples, for a
  quick loop), ``default`` (25), ``ci`` (100; loaded when ``CI`` is set) and
  ``xslow`` (300, random), chosen by ``HYPOTHESIS_PROFILE``.  Tests that fix
  their example count scale it with ``_examples.examples(n)``.  All but
  ``xslow`` are derandomized so that CI runs are reproducible; property tests
  that need randomness draw a seed from hypothesis.
* Markers: ``sim`` (trains the model: simulations) and ``heavy`` (a few seconds
  or more: Monte-Carlo property tests, subprocess runs, whole claim files) run
  in the default run; the fast tier ``-m "not sim and not heavy"`` skips them.
* ``ICL_SYMBOLIC_XSLOW=1`` enables tests marked ``slow``.
* ``ICL_SYMBOLIC_DEEP=1`` selects the ``deep`` profile: fresh (not derandomized)
  hypothesis seeds and 400 examples per property test (10x for tests with their
  own count), for the fuzz and property suites, e.g.
  ``ICL_SYMBOLIC_DEEP=1 pytest tests/test_fuzz_bounds.py``; a failure prints the
  blob that reproduces it.
* mpmath precision is restored after every test (mpmath's own conftest does this).
"""

import os

import mpmath
import pytest
from hypothesis import HealthCheck, settings

from _examples import MAX_EXAMPLES, PROFILE

for _name, _n in MAX_EXAMPLES.items():
    settings.register_profile(
        _name,
        max_examples=_n,
        deadline=None,
        derandomize=_name not in ("xslow", "deep"),
        print_blob=_name != "default",
        suppress_health_check=[HealthCheck.too_slow],
    )
settings.load_profile(PROFILE)

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
