"""Extrapolation in 1/d on planted ladders (a test helper, not the simulator).

Paper: the theory holds as d -> infinity (Result 1, Eq. (9); Eq. (10); Eq. (11), p. 3-4);
icl_symbolic.studies.extrapolate fits e(d) = e_inf + c1/d (+ c2/d^2) to simulations at several d.
"""

import math

import numpy as np
import pytest
from scipy import stats

from icl_symbolic.core.errors import ICLError
from icl_symbolic.studies.extrapolate import LadderPoint, bonferroni_z, extrapolate, fit_ladder, welch_dof

LADDER = (32, 48, 64, 96, 128)


def planted(rng, e_inf=0.7, c1=1.3, c2=0.0, se=0.004, ds=LADDER):
    """e(d) = e_inf + c1/d + c2/d^2 plus Gaussian noise of known SE (seeds=None: SE exact)."""
    return [LadderPoint(d, e_inf + c1 / d + c2 / d**2 + se * rng.standard_normal(), se) for d in ds]


def test_planted_ladder_recovers_e_inf_within_3_se_at_the_stated_rate():
    """e(d) = 0.7 + 1.3/d + noise: e_inf within 3 SE in >= the 99.73 % the normal law promises.

    500 replicates; the number of misses is Binomial(500, 0.0027) (mean 1.35) when the SE is right;
    the test fails if it exceeds the 1e-4 upper quantile (8), i.e. an SE too small by ~25 % is caught.
    """
    rng = np.random.default_rng(20261201)
    n, misses, zs = 500, 0, []
    for _ in range(n):
        f = fit_ladder(planted(rng))
        z = (f.e_inf - 0.7) / f.e_inf_se
        zs.append(z)
        misses += abs(z) > 3
    limit = int(stats.binom.isf(1e-4, n, 2 * stats.norm.sf(3)))
    assert misses <= limit, (misses, limit)
    # and the SE is not inflated either: the spread of z is 1 within its sampling error
    sd = float(np.std(zs, ddof=1))
    assert abs(sd - 1) < 4 / math.sqrt(2 * n), sd


def test_single_planted_ladder_and_the_fit_reports():
    rng = np.random.default_rng(7)
    pts = planted(rng)
    x = extrapolate(pts, e_theory=0.7)
    assert abs(x.fit.e_inf - 0.7) < 3 * x.fit.e_inf_se
    assert x.fit.model == "c1/d" and x.fit.dof == 3
    assert 0 < x.fit.e_inf_se < 0.02 and abs(x.fit.coef[1] - 1.3) < 0.5
    js = x.to_json()
    for key in ("e_inf", "e_inf_se", "e_theory", "z", "model", "chi2", "dof", "tasks", "points"):
        assert key in js
    assert js["points"][0] == {"d": 32, "e_mean": pts[0].e_mean, "e_se": 0.004, "seeds": None, "seconds": None}
    assert x.holds


def test_a_wrong_limit_is_rejected():
    rng = np.random.default_rng(11)
    x = extrapolate(planted(rng, e_inf=0.75), e_theory=0.7)
    assert not x.holds and x.z > 5


def test_curvature_is_detected_and_the_quadratic_model_chosen():
    """A strong 1/d^2 term (c2 = -400, +- 0.39 at d = 32) is not fit by e_inf + c1/d."""
    rng = np.random.default_rng(3)
    chosen, covered = [], 0
    for _ in range(50):
        f = fit_ladder(planted(rng, c2=-400.0, se=0.002))
        chosen.append(f.model)
        covered += abs(f.e_inf - 0.7) <= 3 * f.e_inf_se
    assert chosen.count("c1/d+c2/d^2") >= 45
    assert covered >= 47
    f = fit_ladder(planted(np.random.default_rng(4), c2=-400.0, se=0.002))
    assert "rejected" in f.reason and "likelihood ratio" in f.reason


def test_no_quadratic_when_the_data_do_not_need_it():
    rng = np.random.default_rng(5)
    models = [fit_ladder(planted(rng)).model for _ in range(200)]
    # the 1/d model is rejected at p < 0.05 in ~5 % of ladders; the quadratic must then also beat 3.84
    assert models.count("c1/d") >= 180


def test_welch_dof_and_student_t_limit():
    # equal weights, 4 seeds each at 5 points: dof = 5 * 3 = 15 for a plain average
    assert welch_dof([0.2] * 5, [1.0] * 5, [4] * 5) == pytest.approx(15.0)
    assert welch_dof([1.0], [1.0], [None]) == math.inf
    pts = [LadderPoint(d, 0.7 + 1.3 / d, 0.01, seeds=(0, 1, 2, 3)) for d in LADDER]
    x = extrapolate(pts, e_theory=0.7)
    assert 3 < x.fit.e_inf_dof < 15
    assert x.z_limit > bonferroni_z(1e-3)  # Student t is wider than the normal quantile


@pytest.mark.parametrize(
    "pts, msg",
    [
        ([LadderPoint(32, 1.0, 0.1)], "at least two"),
        ([LadderPoint(32, 1.0, 0.1), LadderPoint(32, 1.0, 0.1)], "repeated"),
        ([LadderPoint(32, 1.0, 0.0), LadderPoint(64, 1.0, 0.1)], "positive finite standard error"),
    ],
)
def test_bad_ladders(pts, msg):
    with pytest.raises(ICLError, match=msg):
        fit_ladder(pts)
