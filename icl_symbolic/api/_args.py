"""Argument coercion of the API: numbers and exact strings, grids, seeds (one place)."""

from __future__ import annotations

from numbers import Real

import numpy as np

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.values import Value
from icl_symbolic.engine.gauss import to_rational


def number(x, name: str) -> float:
    """A float from a number or an exact string ("0.1", "1/3")."""
    if isinstance(x, (str, Value)) or not isinstance(x, Real):
        if isinstance(x, Value):
            return float(x)
        return float(to_rational(x, name))
    return float(x)


def grid(x, name: str):
    """A float for a scalar, a 1-D float array for a list/array (a sweep)."""
    if isinstance(x, (str, Value)) or np.ndim(x) == 0:
        return number(x, name)
    arr = np.asarray([number(v, name) for v in np.ravel(x)], dtype=float)
    if arr.size == 0:
        raise ICLError(f"{name}: empty list")
    return arr


def seeds_of(seeds, seed: int) -> tuple:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ICLError(f"seeds: need at least one seed, got {seeds}")
        return tuple(range(int(seed), int(seed) + int(seeds)))
    return tuple(int(s) for s in seeds)


__all__ = ["number", "grid", "seeds_of"]
