"""One language for every result object: ``.points()`` (rows as dicts), ``.to_pandas()``.

A result type with rows defines ``points()``, the same list of dicts as the
``points`` of its command's ``--json``; :class:`Rows` adds ``to_pandas()``,
which needs the optional pandas (never a dependency of the package): without
it, one clear ICLError names what to install and what to use instead.
"""

from __future__ import annotations

import importlib

from icl_symbolic.core.errors import ICLError


def to_pandas(points, owner: str = "result"):
    """A pandas DataFrame with one row per dict of ``points`` (pandas is imported here, on demand)."""
    try:
        pd = importlib.import_module("pandas")
    except ImportError:
        raise ICLError(
            f"{owner}.to_pandas() needs pandas, which is optional (pip install pandas); "
            f"{owner}.points() gives the same rows as a list of dicts"
        ) from None
    return pd.DataFrame(list(points))


class Rows:
    """Mixin: ``to_pandas()`` from the class's ``points()``."""

    def to_pandas(self):
        """The rows of :meth:`points` as a pandas DataFrame (needs the optional pandas)."""
        return to_pandas(self.points(), type(self).__name__)


__all__ = ["Rows", "to_pandas"]
