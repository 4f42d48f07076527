r"""Seed statistics, Student-t limits, power and the minimum detectable error.

The one place for the statistics every simulation-backed claim uses:

* :func:`seed_mean_se`: mean over seeds and its standard error s/sqrt(n);
* :func:`jackknife_se`: the delete-one-seed jackknife SE of any statistic of
  the seeds (a mean ratio of paired seeds, a ladder fit's extrapolated value);
* :func:`t_limit`: a claim's normal z budget turned into the Student-t
  quantile with the same two-sided false-alarm rate at the SE's dof;
* :func:`power`, :func:`mde_abs`, :func:`mde_rel`: the probability that such
  a test flags a given true offset, and the smallest offset it flags with
  90 % probability (the minimum detectable error, docs/power.md).

A verdict "holds" means only "no offset larger than the noise was seen"; the
minimum detectable error says how large an offset would have been seen.  The
calibration of these formulas on planted ladders with skewed, heavy-tailed
per-seed noise is in tests/test_stats.py and benchmarks/bench_power_calibration.py.

Nothing here knows about the paper's model; only numpy, scipy and
:mod:`icl_symbolic.core.errors` are imported (the ground floor of docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
from scipy import optimize, stats

from icl_symbolic.core.errors import ICLError

#: The fewest seeds per simulated point a ``simulation`` claim may use.
#:
#: Why 10: the SE s/sqrt(S) is itself a random number with S - 1 degrees of
#: freedom, and with skewed per-seed errors (the kernel learner's) a few-seed SE
#: understates the spread exactly when the mean is off.  On planted ladders
#: (docs/power.md, benchmarks/bench_power_calibration.py) the plain weighted fit
#: with 4 seeds per d misses its nominal 90 % interval 22-23 % of the time (10
#: seeds: 14-18 %).  The jackknife over seeds that fit_ladder uses instead covers
#: at the nominal rate with 4 seeds too, but then its Student-t limit at the
#: false-alarm budget 1e-3 is 12.9 SE (3 dof), the minimum detectable error about
#: 19 SE (:func:`mde_abs`), 9-18 % of e_inf there: a claim would "hold" on almost
#: anything.  With 10 seeds: 4.8 SE, an MDE of 6.6 SE, 2-2.6 % of e_inf.
MIN_SEEDS = 10

#: dof at or above which the Student t is taken as normal (the quantiles agree to 0.3 % at z = 3.29, 0.5 % at z = 4.5).
DOF_NORMAL = 1000


def _dof(dof) -> float | None:
    """None for a normal reference (dof None, inf or >= DOF_NORMAL), else dof as a float (<= 0: no test)."""
    if dof is None:
        return None
    if isinstance(dof, bool) or not isinstance(dof, (int, float, np.integer, np.floating)) or math.isnan(dof):
        raise ICLError(f"degrees of freedom must be a number, None or inf, got {dof!r}")
    return None if dof >= DOF_NORMAL else float(dof)


def _positive_se(se, what: str) -> float:
    if se is None or isinstance(se, bool) or not (float(se) > 0 and math.isfinite(float(se))):
        raise ICLError(f"{what} needs a positive finite standard error, got {se!r}")
    return float(se)


def t_limit(z_budget: float, dof: float | None) -> float:
    """The Student-t quantile with the same two-sided false-alarm rate as the normal quantile ``z_budget``.

    A value whose SE is estimated from S seeds has t-distributed z-scores with
    S - 1 dof; the normal quantile would understate the limit.
    ``dof`` None, inf or >= 1000: ``z_budget`` itself.  0 < dof < 1 is a valid
    (very heavy-tailed) Student t and gets its quantile.  dof <= 0 or NaN:
    :class:`~icl_symbolic.core.errors.ICLError`: without a dof there is no estimated
    SE, hence no test and no power, so a claim must not "hold" on it (an infinite
    limit would let it hold on anything).

    >>> round(t_limit(3.29, None), 2), round(t_limit(3.29, 3), 1), round(t_limit(3.29, 9), 2)
    (3.29, 12.9, 4.78)
    >>> t_limit(1.96, 0)
    Traceback (most recent call last):
    ...
    icl_symbolic.core.errors.ICLError: no degrees of freedom (dof = 0): the standard error was not estimated (at least two seeds are needed), so no z limit and no claim can rest on it
    """
    z = float(z_budget)
    if not (math.isfinite(z) and z > 0):
        raise ICLError(f"a z budget must be a positive finite number, got {z_budget!r}")
    nu = _dof(dof)
    if nu is None:
        return z
    if nu <= 0:
        raise ICLError(
            f"no degrees of freedom (dof = {nu:g}): the standard error was not estimated "
            "(at least two seeds are needed), so no z limit and no claim can rest on it"
        )
    return float(stats.t.isf(stats.norm.sf(z), nu))


def sample_se(x, axis=None):
    """Standard error of the mean of i.i.d. samples along ``axis``: sd (ddof = 1) / sqrt(n).

    The one definition for seeds, Monte-Carlo draws and test points alike
    (an array along ``axis``, a float for ``axis=None``); n < 2 gives NaN.

    >>> round(float(sample_se([1.0, 2.0, 3.0, 6.0])), 6)
    1.080123
    >>> sample_se(np.array([[1.0, 2.0], [3.0, 6.0]]), axis=0).tolist()
    [1.0, 2.0]
    """
    x = np.asarray(x, dtype=float)
    n = x.size if axis is None else x.shape[axis]
    if n < 2:
        shape = () if axis is None else tuple(np.delete(x.shape, axis))
        return np.full(shape, np.nan) if shape else float("nan")
    return x.std(axis=axis, ddof=1) / math.sqrt(n)


def seed_mean_se(values: Sequence[float]) -> tuple[float, float | None, int]:
    """Mean over seeds, its standard error (sample sd with ddof = 1, over sqrt(n)), and n.

    The SE is None for a single seed (nothing to estimate it from).

    >>> m, se, n = seed_mean_se([1.0, 2.0, 3.0, 6.0])   # sd = sqrt(14/3) = 2.1602, over sqrt(4)
    >>> m, round(se, 6), n
    (3.0, 1.080123, 4)
    >>> seed_mean_se([0.5])
    (0.5, None, 1)
    """
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0:
        raise ICLError("no seeds: a mean over seeds needs at least one value")
    se = float(sample_se(arr)) if arr.size > 1 else None
    return float(arr.mean()), se, int(arr.size)


def jackknife_se(values, statistic: Callable, axis: int = -1):
    """Delete-one jackknife standard error of ``statistic(values)`` over the seeds along ``axis``.

    ``values``: an array whose ``axis`` indexes the seeds (e.g. shape (points, seeds)
    for a ladder whose seeds are the same at every point); ``statistic`` maps such an
    array (with one seed fewer) to a number or an array of numbers.  With n seeds,
    SE^2 = (n - 1)/n sum_j (theta_(j) - mean_j theta_(j))^2, referred to a Student t
    with n - 1 dof.  For a mean it equals :func:`seed_mean_se`'s SE exactly; for a
    non-linear statistic (a ratio of paired means, a weighted fit whose weights are
    estimated from the same seeds) it also carries the uncertainty of the parts
    the plain formula treats as known.

    >>> x = [1.0, 2.0, 3.0, 6.0]
    >>> round(float(jackknife_se(x, np.mean)), 12) == round(seed_mean_se(x)[1], 12)
    True
    """
    arr = np.asarray(values, dtype=float)
    n = arr.shape[axis]
    if n < 2:
        raise ICLError("a jackknife needs at least two seeds")
    reps = np.array([np.asarray(statistic(np.delete(arr, j, axis=axis)), dtype=float) for j in range(n)])
    se = np.sqrt((n - 1) / n * np.sum((reps - reps.mean(axis=0)) ** 2, axis=0))
    return float(se) if se.ndim == 0 else se


def grouped_jackknife_se(samples, statistic: Callable, groups: int):
    """Delete-a-group jackknife SE of ``statistic(samples)`` for ragged per-point seed samples.

    ``samples``: a list of 1-d arrays, one per ladder point, possibly of different
    lengths (more seeds where they are cheap).  Seed j of every point belongs to group
    j mod ``groups``; replicate g leaves group g out at every point and recomputes the
    statistic (a list of arrays -> a number or an array).  With G groups,
    SE^2 = (G - 1)/G sum_g (theta_(g) - mean_g theta_(g))^2, referred to a Student t with
    G - 1 dof (the delete-a-group jackknife).  With equal lengths n and G = n it is
    :func:`jackknife_se` exactly.

    >>> a, b = np.array([1.0, 2.0, 4.0]), np.array([3.0, 1.0, 2.0])
    >>> stat = lambda v: v[0].mean() - v[1].mean()
    >>> bool(np.isclose(grouped_jackknife_se([a, b], stat, 3), jackknife_se(np.vstack([a, b]), stat, axis=1)))
    True
    """
    arrs = [np.asarray(v, dtype=float) for v in samples]
    G = int(groups)
    if G < 2 or any(len(v) < G for v in arrs):
        raise ICLError(f"a grouped jackknife needs at least 2 groups and as many seeds per point, got {G}")
    labels = [np.arange(len(v)) % G for v in arrs]
    reps = np.array(
        [np.asarray(statistic([v[lab != g] for v, lab in zip(arrs, labels)]), dtype=float) for g in range(G)]
    )
    se = np.sqrt((G - 1) / G * np.sum((reps - reps.mean(axis=0)) ** 2, axis=0))
    return float(se) if se.ndim == 0 else se


def power(shift_abs: float, se: float, limit: float, dof: float | None) -> float:
    """Probability that |T| > ``limit`` when the truth is ``shift_abs`` away from the claimed value.

    T = (estimate - claimed)/SE.  With the estimate normal with standard deviation
    ``se`` and its SE estimated on ``dof`` degrees of freedom, T is noncentral
    Student t with noncentrality shift_abs/se; with dof None/inf (or >= 1000) it
    is normal with mean shift_abs/se and unit variance.  dof <= 0 or an
    infinite limit: power 0 (no test).  At shift 0 this is the false-alarm rate.

    >>> round(power(0.0, 1.0, 1.959963984540054, None), 6)
    0.05
    >>> round(power(3.2905 + 1.28155, 1.0, 3.2905, None), 4)   # (limit + z_0.9) SE: 90 %
    0.9
    """
    se = _positive_se(se, "power")
    nu = _dof(dof)
    if not math.isfinite(limit) or (nu is not None and nu <= 0):
        return 0.0
    nc = abs(float(shift_abs)) / float(se)
    if nu is None:
        return float(stats.norm.sf(limit - nc) + stats.norm.cdf(-limit - nc))
    if nc == 0.0:
        return float(2 * stats.t.sf(limit, nu))
    near = float(stats.nct.sf(limit, nu, nc))
    far = float(stats.nct.sf(limit, nu, -nc))  # = P(T < -limit); scipy gives NaN once it is < 1e-300
    if not math.isfinite(near):
        raise ICLError(f"noncentral t tail not computable at limit {limit:g}, dof {nu:g}, noncentrality {nc:g}")
    return near + (far if math.isfinite(far) else 0.0)


_power = power


def mde_abs(se: float, limit: float, dof: float | None, power: float = 0.9) -> float:
    """Minimum detectable error: the smallest |shift| whose :func:`power` is >= ``power``.

    Power rises monotonically with |shift|, so a bracketing root find gives it.
    inf when there is no test (infinite limit, dof <= 0).  Normal case: about
    (limit + z_{1-power}) SE, e.g. (3.2905 + 1.2816) SE = 4.572 SE at 90 % power
    (the far tail contributes < 1e-6 here); Student t at 9 dof (10 seeds) with the
    same false-alarm budget: 6.58 SE (checked against a simulation of the t test
    in tests/test_stats.py).

    >>> round(mde_abs(1.0, 3.2905, None), 3)
    4.572
    >>> round(mde_abs(0.01, t_limit(3.2905, 9), 9), 4)
    0.0658
    """
    target = float(power)
    if not 0 < target < 1:
        raise ICLError(f"power must be in (0, 1), got {power!r}")
    se = _positive_se(se, "the minimum detectable error")
    nu = _dof(dof)
    if not math.isfinite(limit) or (nu is not None and nu <= 0):
        return math.inf
    if _power(0.0, se, limit, dof) >= target:
        return 0.0
    hi = (limit + 2.0) * se
    while _power(hi, se, limit, dof) < target:
        hi *= 2.0
        if hi > 1e12 * se:
            return math.inf
    return float(optimize.brentq(lambda s: _power(s, se, limit, dof) - target, 0.0, hi, xtol=1e-12 * se, rtol=1e-12))


def mde_rel(se: float, limit: float, dof: float | None, reference: float, power: float = 0.9) -> float | None:
    """:func:`mde_abs` relative to |``reference``| (the claimed value); None when the reference is 0.

    >>> round(mde_rel(0.002, 3.2905, None, 0.5), 5)
    0.01829
    >>> mde_rel(0.002, 3.2905, None, 0.0) is None
    True
    """
    if reference == 0:
        return None
    return mde_abs(se, limit, dof, power) / abs(float(reference))


def chi2_noncentrality(dof: int, false_alarm: float, power: float = 0.9) -> float:
    """The noncentrality lambda at which a chi-square test with ``dof`` degrees of freedom, rejecting
    above its ``false_alarm`` quantile, rejects with probability ``power`` (noncentral chi-square).

    For points e_i +- se_i (known SEs) compared with a curve t_i, a true offset delta_i gives
    chi2 ~ noncentral chi-square with lambda = sum (delta_i/se_i)^2, so the smallest detectable
    relative shift of the whole curve is sqrt(lambda / sum (t_i/se_i)^2) (the curve's MDE).

    >>> round(chi2_noncentrality(1, 0.05), 3)   # one dof: (1.96 + 1.2816)^2 = 10.51
    10.507
    """
    nu = int(dof)
    if nu < 1:
        raise ICLError(f"a chi-square test needs at least one degree of freedom, got {dof!r}")
    if not (0 < false_alarm < 1 and 0 < power < 1):
        raise ICLError("false_alarm and power must be in (0, 1)")
    crit = float(stats.chi2.isf(false_alarm, nu))
    if stats.chi2.sf(crit, nu) >= power:
        return 0.0
    hi = 1.0
    while stats.ncx2.sf(crit, nu, hi) < power:
        hi *= 2.0
    return float(optimize.brentq(lambda lam: stats.ncx2.sf(crit, nu, lam) - power, 0.0, hi, xtol=1e-10, rtol=1e-12))


__all__ = [
    "MIN_SEEDS",
    "chi2_noncentrality",
    "DOF_NORMAL",
    "t_limit",
    "seed_mean_se",
    "jackknife_se",
    "grouped_jackknife_se",
    "power",
    "mde_abs",
    "mde_rel",
]
