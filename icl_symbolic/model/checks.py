"""One check per parameter of a setting, with the same one-line ICLError wording wherever a parameter
is refused (:class:`~icl_symbolic.model.setting.Setting` validates its fields with these, once; the
loose-number functions such as :func:`icl_symbolic.model.sizes.sizes` too)."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.numbers import parse_float

ROUNDINGS = ("paper", "floor-k", "truncate")


def check_rounding(rounding: str) -> str:
    if rounding not in ROUNDINGS:
        raise ICLError(f"unknown rounding {rounding!r}; expected one of {', '.join(ROUNDINGS)}")
    return rounding


# ----------------------------------------------------------------------------
# one check per parameter (the same wording wherever a parameter is refused)
# ----------------------------------------------------------------------------
def _real(value, name: str):
    """A float from a real number or an ASCII decimal string; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return parse_float(value, name)
    if isinstance(value, (Real, np.integer, np.floating)):
        return float(value)
    return None


def check_ratio(name: str, value) -> float:
    """alpha, kappa, tau: a positive finite number (ICLError otherwise)."""
    x = _real(value, name)
    if x is None or not (math.isfinite(x) and x > 0):
        raise ICLError(f"{name} must be a positive finite number, got {value!r}")
    return x


def check_nonnegative(name: str, value) -> float:
    """rho, lam: a finite number >= 0 (ICLError otherwise)."""
    x = _real(value, name)
    if x is None or not (math.isfinite(x) and x >= 0):
        raise ICLError(f"{name} must be a finite number >= 0, got {value!r}")
    return x


def check_dimension(d) -> int:
    """d: an integer >= 2 (ICLError otherwise)."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) and not (isinstance(d, float) and d == int(d)):
        raise ICLError(f"d must be an integer, got {d!r}")
    if int(d) < 2:
        raise ICLError(f"d must be at least 2, got {int(d)}")
    return int(d)


def check_n_test(n_test) -> int:
    """n_test: an integer >= 2 (ICLError otherwise)."""
    if isinstance(n_test, bool) or not isinstance(n_test, (int, np.integer, float)) or int(n_test) != n_test:
        raise ICLError(f"n_test must be an integer >= 2, got {n_test}")
    if n_test < 2:
        raise ICLError(f"n_test must be an integer >= 2, got {n_test}")
    return int(n_test)
