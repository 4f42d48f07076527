"""The one home of the statistical limits the tests use.

Every Monte-Carlo or simulation comparison in the test suite is judged in
standard errors with a stated false-alarm budget: two-sided ``FALSE_ALARM`` =
1e-3 per test, split by Bonferroni over the ``m`` comparisons the test makes.
Means over few seeds, whose SE is itself estimated, use the Student-t quantile
with the seeds' degrees of freedom instead of the normal one.

>>> round(z_bonferroni(1), 2), round(z_bonferroni(10), 2)
(3.29, 3.89)
>>> round(t_bonferroni(1, 15), 2)
4.07
"""

from __future__ import annotations

from scipy import stats

#: Two-sided false-alarm probability allowed per test.
FALSE_ALARM = 1e-3


def z_bonferroni(m: int, alpha: float = FALSE_ALARM) -> float:
    """Normal quantile z with P(|Z| > z) = alpha / m: the limit for each of m comparisons."""
    return float(stats.norm.isf(alpha / (2 * m)))


def t_bonferroni(m: int, dof: int, alpha: float = FALSE_ALARM) -> float:
    """Student-t quantile with ``dof`` degrees of freedom and two-sided level alpha / m."""
    return float(stats.t.isf(alpha / (2 * m), dof))
