"""TEMPORARY stub (lead's local copy until the stats helper's module is merged)."""
from __future__ import annotations
import math
import numpy as np
from scipy import optimize, stats as _st
MIN_SEEDS = 10

def t_limit(z_budget, dof):
    if dof is None or not math.isfinite(dof) or dof >= 1000:
        return float(z_budget)
    if dof < 1:
        return math.inf
    p = 2 * _st.norm.sf(z_budget)
    return float(_st.t.isf(p / 2, dof))

def power(shift_abs, se, limit, dof=None):
    nc = abs(shift_abs) / se
    if dof is None or not math.isfinite(dof) or dof >= 1000:
        return float(_st.norm.sf(limit - nc) + _st.norm.cdf(-limit - nc))
    return float(_st.nct.sf(limit, dof, nc) + np.nan_to_num(_st.nct.cdf(-limit, dof, nc)))

def mde_abs(se, limit, dof=None, power_=0.9):
    if not math.isfinite(limit):
        return math.inf
    f = lambda x: power(x * se, se, limit, dof) - power_
    hi = limit + 2
    while f(hi) < 0:
        hi *= 1.5
    return float(optimize.brentq(f, 0, hi)) * se

def mde_rel(se, limit, dof, reference, power_=0.9):
    if reference == 0:
        return None
    return mde_abs(se, limit, dof, power_) / abs(reference)
