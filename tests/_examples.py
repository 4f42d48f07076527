"""How many examples property tests draw, by hypothesis profile.

The profile comes from ``HYPOTHESIS_PROFILE`` (``ci`` when the ``CI``
environment variable is set, else ``default``); ``tests/conftest.py`` loads it.
Tests that fix their own example count (because their false-alarm budget is
split over the examples) scale it with :func:`examples`, so the ``ci`` profile
is deeper than the default for them too.

>>> examples(10, "default"), examples(10, "ci"), examples(10, "dev")
(10, 30, 4)
"""

from __future__ import annotations

import os

PROFILE = (
    "deep"
    if os.environ.get("ICL_SYMBOLIC_DEEP") == "1"
    else os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)

#: max_examples of the profiles without a per-test count, and the factor for those with one.
#: ``deep`` (ICL_SYMBOLIC_DEEP=1) is the on-demand tier: random seeds, many examples.
MAX_EXAMPLES = {"dev": 10, "default": 25, "ci": 100, "xslow": 300, "deep": 400}
SCALE = {"dev": 0.4, "default": 1.0, "ci": 3.0, "xslow": 10.0, "deep": 10.0}


def examples(n: int, profile: str | None = None) -> int:
    """``n`` examples at the default profile, scaled for ``profile`` (the loaded one by default)."""
    return max(2, round(n * SCALE[profile or PROFILE]))
