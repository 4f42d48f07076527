"""Are the standard errors the verdicts use calibrated?  A Monte Carlo over replicate ladders.

Every statistical verdict of the package divides an offset by a standard error from
:mod:`icl_symbolic.core.stats`: the SE of a mean over seeds at one d (s/sqrt(n),
:func:`~icl_symbolic.core.stats.seed_mean_se`; the single-d simulation claims and every
ladder point) and the delete-a-group jackknife SE of a ladder's extrapolation to
d -> infinity (:func:`~icl_symbolic.core.stats.grouped_jackknife_se`, which
:func:`icl_symbolic.studies.extrapolate.fit_ladder` uses; Figs. 1-2, p. 4, are checked
with it).  An SE 20 % too small raises the false-alarm rate at the budget 1e-3 (|z| <= 3.29)
to 0.85 %; 20 % too large overstates every minimum detectable error by 20 %.  Unit tests pin
the formulas on a few numbers; this module checks the calibration itself.

The design.  A *pool* of simulated per-seed errors at a few small d (Eqs. (6)-(7), p. 2-3;
the real simulator, so the per-seed law has the simulator's skew and tails) defines a
population: the pool's empirical distribution at each d, whose variance sigma_d^2 (ddof 0)
is known exactly.  A replicate draws n_d values with replacement at every d (independent
given the pool) and computes the SE the machinery reports.  For both SEs the true variance
of the statistic is then exact:

* the mean over n_d seeds: sigma_d^2 / n_d;
* the ladder's extrapolation e_inf = sum_d c_d mean_d, with c the weighted least-squares
  coefficients of e_inf + c1/d at the population weights n_d/sigma_d^2 (the first-order
  form of the fit the verdicts make): sum_d c_d^2 sigma_d^2 / n_d.  The delete-a-group
  jackknife of a linear statistic is unbiased when every n_d is a multiple of the number
  of groups G (seed j in group j mod G), so E[SE^2] is exactly this variance.

The calibration ratio of a replicate is SE^2 / (true variance); its mean over R replicates
is 1 for calibrated SEs, (c^2) when every SE is c times too large, and it comes with its
Monte-Carlo SE (the replicates are i.i.d.).  A claim compares the mean ratio with 1 in
standard errors (``derivations/16_calibration.toml``); :func:`power_for_scale` states the
probability that an SE off by a factor c is flagged.  The fit's own SE, whose weights and
model choice are re-estimated in every jackknife replicate, is a non-linear statistic: there
the jackknife is conservative (the Efron-Stein inequality), which this design does not judge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icl_symbolic.core import stats
from icl_symbolic.core.errors import ICLError

#: the SEs this module calibrates
WHICH = ("seed_mean", "ladder_jackknife")


@dataclass(frozen=True)
class Calibration:
    """Mean calibration ratio (reported SE^2 over the exact variance) over ``replicates``,
    its Monte-Carlo SE, and the exact variances per d (``truth``) or of the extrapolation."""

    which: str
    ratio: float
    ratio_se: float
    replicates: int
    truth: tuple
    counts: tuple
    groups: int | None


def extrapolation_weights(ds, variances, counts) -> np.ndarray:
    """c with e_inf = sum_d c_d mean_d for the weighted fit e_inf + c1/d at weights n_d/sigma_d^2."""
    X = np.column_stack([np.ones(len(ds)), 1.0 / np.asarray(ds, dtype=float)])
    w = np.asarray(counts, dtype=float) / np.asarray(variances, dtype=float)
    A = X.T @ (w[:, None] * X)
    return np.linalg.solve(A, X.T * w)[0]


def se_calibration(pool: dict, counts, which: str, replicates: int, seed: int) -> Calibration:
    """The calibration of the SE ``which`` (:data:`WHICH`) on replicates drawn from ``pool``.

    ``pool``: d -> 1-d array of per-seed values (at least two distinct values each);
    ``counts``: seeds per d of a replicate, in the order of sorted d; ``which``:
    ``seed_mean`` (the ratio of a replicate is the mean over d of SE_d^2 n_d / sigma_d^2)
    or ``ladder_jackknife`` (its SE^2 / sum c_d^2 sigma_d^2/n_d, G = the smallest count,
    every count a multiple of G).

    >>> rng = np.random.default_rng(0)
    >>> pool = {d: rng.gamma(2.0, 1.0, 50) / d for d in (4, 6, 8)}
    >>> c = se_calibration(pool, (10, 10, 10), "seed_mean", 500, 1)
    >>> abs(c.ratio - 1) < 4 * c.ratio_se
    True
    """
    if which not in WHICH:
        raise ICLError(f"which SE: one of {', '.join(WHICH)}, got {which!r}")
    ds = sorted(pool)
    counts = tuple(int(n) for n in counts)
    if len(counts) != len(ds) or min(counts) < 2:
        raise ICLError(f"give one seed count (>= 2) per d of the pool {ds}, got {list(counts)}")
    if replicates < 2:
        raise ICLError("at least two replicates are needed for a Monte-Carlo SE")
    values = [np.asarray(pool[d], dtype=float) for d in ds]
    var = np.array([v.var() for v in values])  # the population's variance (ddof 0): exact for draws from the pool
    if not np.all(var > 0):
        raise ICLError("every d of the pool needs at least two distinct values")
    G = min(counts) if which == "ladder_jackknife" else None
    if G is not None:
        if len(ds) < 2 or any(n % G for n in counts):
            raise ICLError(f"the jackknife calibration needs >= 2 d and seed counts that are multiples of {G}")
        c = extrapolation_weights(ds, var, counts)
        truth = (float(np.sum(c**2 * var / np.asarray(counts))),)

        def statistic(vs):
            return float(sum(ci * v.mean() for ci, v in zip(c, vs)))
    else:
        truth = tuple(float(x) for x in var / np.asarray(counts))
    rng = np.random.default_rng(seed)
    ratios = np.empty(replicates)
    for r in range(replicates):
        draw = [rng.choice(v, size=n, replace=True) for v, n in zip(values, counts)]
        if G is None:
            ratios[r] = np.mean([stats.seed_mean_se(x)[1] ** 2 / t for x, t in zip(draw, truth)])
        else:
            ratios[r] = stats.grouped_jackknife_se(draw, statistic, G) ** 2 / truth[0]
    # the ratio's own SE with numpy, not with the functions under test (a slip in them must not
    # rescale the yardstick that judges them)
    ratio_se = float(ratios.std(ddof=1) / np.sqrt(replicates))
    return Calibration(which, float(ratios.mean()), ratio_se, int(replicates), truth, counts, G)


def power_for_scale(scale: float, ratio_se: float, limit: float) -> float:
    """Probability that the two-sided test |ratio - 1| <= limit x SE flags SEs that are all
    ``scale`` times their true value (the ratio then has mean scale^2 and SE scale^2 ratio_se;
    normal approximation, the replicates being many)."""
    s = float(scale) ** 2
    return stats.power(abs(s - 1.0), s * float(ratio_se), float(limit), None)


__all__ = ["WHICH", "Calibration", "extrapolation_weights", "se_calibration", "power_for_scale"]
