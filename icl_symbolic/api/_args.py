"""Argument coercion of the API: numbers and exact strings, grids, seeds, Settings (one place)."""

from __future__ import annotations

import itertools
from numbers import Real

import numpy as np

from icl_symbolic.core import defaults as D
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.limits import MAX_GRID, check_count
from icl_symbolic.core.numbers import NUMBER, parse_float
from icl_symbolic.core.values import Value
from icl_symbolic.engine.gauss import to_rational
from icl_symbolic.model.setting import Setting, as_setting, resolve_convention


def number(x, name: str) -> float:
    """A float from a number or an exact string ("0.1", "1/3"); a decimal string is read by the
    package's one number grammar (:func:`icl_symbolic.core.numbers.parse_float`, correctly rounded
    like the exact reading, and fast), any other string exactly."""
    if isinstance(x, (str, Value)) or not isinstance(x, Real):
        if isinstance(x, Value):
            return float(x)
        if isinstance(x, str) and NUMBER.fullmatch(x.strip()):
            return parse_float(x, name)
        return float(to_rational(x, name))
    return float(x)


def grid(x, name: str):
    """A float for a scalar, a 1-D float array for a list/array (a sweep) of at most
    :data:`~icl_symbolic.core.limits.MAX_GRID` points (checked before any is read)."""
    if isinstance(x, (str, Value)) or np.ndim(x) == 0:
        return number(x, name)
    check_count(int(np.size(x)), MAX_GRID, f"{name}: points", "fewer points")
    arr = np.asarray([number(v, name) for v in np.ravel(x)], dtype=float)
    if arr.size == 0:
        raise ICLError(f"{name}: empty list")
    return arr


#: the most simulation points one call runs (the product of the alpha, kappa, tau lists; docs/limits.md)
MAX_SIM_POINTS = 1000
#: the API's defaults of the setting keywords (a Setting given as ``f`` must come without them)
_SETTING_DEFAULTS = dict(
    rho=D.RHO, alpha=D.ALPHA, kappa=D.KAPPA, tau=D.TAU, lam=D.LAM, d=D.D, C_train=D.C_TRAIN, C_test=None, n_test=None
)


def settings_of(f, swept=("alpha", "kappa", "tau"), **loose) -> list:
    """The Settings of one API call: ``[f]`` when ``f`` is a :class:`Setting` (then the keywords in ``loose``
    must keep the API's defaults: change the Setting with ``.replace`` instead), else one Setting per point
    of the product of the ``swept`` grids (a list sweeps), the other fields from ``loose``; numbers given as
    strings are read exactly ("0.1"), ``tasks`` sets both task laws of ``convention``.  Each Setting is made
    by the one converter, :func:`icl_symbolic.model.setting.as_setting`."""
    tasks = loose.pop("tasks", None)
    if isinstance(f, Setting):
        return [as_setting(f, _SETTING_DEFAULTS, tasks=tasks, **loose)]
    for k in ("rho", "lam", "alpha", "kappa", "tau"):
        if k in loose and k not in swept:
            loose[k] = number(loose[k], k)
    grids = {k: np.atleast_1d(grid(loose.pop(k), k)) for k in swept}
    if loose.get("convention") is not None or tasks is not None:
        loose["convention"] = resolve_convention(loose.get("convention"), tasks)
    points = list(itertools.product(*grids.values()))
    if len(points) > MAX_SIM_POINTS:
        raise ICLError(
            f"{' x '.join('--' + k for k in swept)} is {len(points)} simulation points; "
            f"limit {MAX_SIM_POINTS} (see docs/limits.md)"
        )
    return [as_setting(f, **loose, **{k: float(x) for k, x in zip(swept, pt)}) for pt in points]


def seeds_of(seeds, seed: int) -> tuple:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ICLError(f"seeds: need at least one seed, got {seeds}")
        return tuple(range(int(seed), int(seed) + int(seeds)))
    return tuple(int(s) for s in seeds)


__all__ = ["number", "grid", "seeds_of", "settings_of", "MAX_SIM_POINTS"]
