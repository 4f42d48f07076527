"""icl_symbolic.core.stats: Student-t limits, seed SEs, power and minimum detectable error, and their calibration.

The calibration tests plant ladders e(d) = e_inf + c1/d with skewed, heavy-tailed
per-seed noise (standardised lognormal, sigma = 1: skewness 6.2) whose sd is
2.5 % of e(32) at d = 32 and falls like 1/d, 10 seeds per d, and fit them with
``extrapolate.fit_ladder`` as verify does.  Every rate is compared with its target
within a binomial bound at the suite's false-alarm budget (tests/_stats.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from icl_symbolic.core import stats
from icl_symbolic.core.errors import ICLError
from icl_symbolic.studies import extrapolate
from icl_symbolic.studies.extrapolate import LadderPoint, fit_ladder
from icl_symbolic.verification import judge

from _stats import z_bonferroni

DS = (32, 48, 64, 96, 128)
E_INF, C1 = 0.7, 1.3


# ---------------------------------------------------------------- t_limit


@pytest.mark.parametrize("z", [1.959963984540054, 3.2905267314919255])
@pytest.mark.parametrize("dof", [0.5, 1, 2, 3, 9, 25.7, 999])
def test_t_limit_is_the_student_quantile_of_the_same_two_sided_rate(z, dof):
    alpha = 2 * sps.norm.sf(z)
    assert stats.t_limit(z, dof) == pytest.approx(sps.t.isf(alpha / 2, dof), rel=1e-12)
    assert 2 * sps.t.sf(stats.t_limit(z, dof), dof) == pytest.approx(alpha, rel=1e-9)


@pytest.mark.parametrize("dof", [None, math.inf, 1000, 1e6])
def test_t_limit_is_normal_without_dof_or_at_large_dof(dof):
    assert stats.t_limit(3.29, dof) == 3.29


@pytest.mark.parametrize("dof", [0, -1, -0.5, math.nan, "3"])
def test_t_limit_refuses_no_dof(dof):
    # no dof: no estimated SE, hence no test; an infinite limit would let a claim hold on anything
    with pytest.raises(ICLError):
        stats.t_limit(3.29, dof)


def test_one_t_limit_definition():
    """The judge and the extrapolation have no limit function of their own (they used to
    disagree at dof = 0: z in one, inf in the other)."""
    assert not hasattr(judge, "z_to_t") and not hasattr(extrapolate, "z_limit")
    with pytest.raises(ICLError):
        stats.t_limit(3.29, 0)


def test_extrapolate_refuses_a_ladder_point_with_one_seed():
    pts = [LadderPoint(d, 0.7 + 1.3 / d, 0.01, seeds=(0, 1, 2) if d != 64 else (0,)) for d in DS]
    with pytest.raises(ICLError, match="no degrees of freedom"):
        extrapolate.extrapolate(pts, e_theory=0.7)


# ---------------------------------------------------------------- seed SEs


def test_seed_mean_se_and_jackknife_of_a_mean_agree_with_numpy():
    x = np.random.default_rng(0).lognormal(0, 1, 12)
    m, se, n = stats.seed_mean_se(x)
    assert (m, n) == (pytest.approx(x.mean(), rel=1e-15), 12)
    assert se == pytest.approx(x.std(ddof=1) / math.sqrt(12), rel=1e-14)
    assert stats.jackknife_se(x, np.mean) == pytest.approx(se, rel=1e-12)
    assert stats.seed_mean_se([2.0])[1] is None
    with pytest.raises(ICLError):
        stats.seed_mean_se([])


def test_jackknife_of_a_paired_ratio_matches_the_delta_method():
    # ratio of means of paired seeds, a smooth non-linear statistic: the jackknife and the
    # first-order (delta-method) SE agree to O(1/n) for many seeds
    rng = np.random.default_rng(1)
    b = rng.normal(2.0, 0.2, 400)
    a = 1.5 * b + rng.normal(0, 0.1, 400)
    jk = stats.jackknife_se(np.vstack([a, b]), lambda v: v[0].mean() / v[1].mean(), axis=1)
    r = a.mean() / b.mean()
    delta = (a - r * b).std(ddof=1) / math.sqrt(400) / b.mean()
    assert jk == pytest.approx(delta, rel=0.02)
    with pytest.raises(ICLError):
        stats.jackknife_se([1.0], np.mean)


# ---------------------------------------------------------------- power and MDE


def test_power_at_zero_shift_is_the_false_alarm_rate():
    z = 3.2905267314919255
    assert stats.power(0.0, 1.0, z, None) == pytest.approx(1e-3, rel=1e-9)
    assert stats.power(0.0, 1.0, stats.t_limit(z, 9), 9) == pytest.approx(1e-3, rel=1e-6)
    assert stats.power(1.0, 1.0, math.inf, 9) == 0.0 and stats.power(1.0, 1.0, 3.0, 0) == 0.0


def test_mde_normal_is_limit_plus_z_power_when_the_far_tail_is_negligible():
    for lim in (1.96, 3.29, 4.0):
        assert stats.mde_abs(0.5, lim, None) == pytest.approx(0.5 * (lim + sps.norm.isf(0.1)), rel=1e-6)
    assert stats.mde_abs(1.0, 3.29, None, power=0.5) == pytest.approx(3.29, rel=1e-6)
    assert stats.mde_abs(1.0, math.inf, 9) == math.inf and stats.mde_abs(1.0, 3.0, 0) == math.inf
    assert stats.mde_rel(0.01, 3.29, None, 0.0) is None
    assert stats.mde_rel(0.01, 3.29, None, -2.0) == pytest.approx(stats.mde_abs(0.01, 3.29, None) / 2)


def test_mde_grows_with_fewer_seeds():
    z = 3.2905267314919255
    m = [stats.mde_abs(1.0, stats.t_limit(z, s - 1), s - 1) for s in (3, 4, 10, 30)]
    assert m == sorted(m, reverse=True) and m[-1] > stats.mde_abs(1.0, z, None)


@pytest.mark.parametrize("dof", [None, 3, 9])
def test_power_predicts_a_simulated_z_test(dof):
    """T = (mean - claimed)/SE of `dof + 1` normal seeds (normal SE when dof is None), truth at the MDE and
    at half of it: the flagged fraction matches power() within a binomial bound."""
    rng = np.random.default_rng([2, dof or 0])
    n_rep, z = 40000, 3.2905267314919255
    lim = stats.t_limit(z, dof)
    se = 0.01
    zb = z_bonferroni(2)
    for shift in (stats.mde_abs(se, lim, dof), 0.5 * stats.mde_abs(se, lim, dof)):
        est = shift + se * rng.standard_normal(n_rep)
        se_hat = se if dof is None else se * np.sqrt(rng.chisquare(dof, n_rep) / dof)
        measured = np.mean(np.abs(est) / se_hat > lim)
        p = stats.power(shift, se, lim, dof)
        assert abs(measured - p) <= zb * math.sqrt(p * (1 - p) / n_rep), (shift, measured, p)
    if dof is not None:
        # a wrong formula fails: the normal MDE under the t test detects far less than 90 %
        shift = stats.mde_abs(se, z, None)
        est = shift + se * rng.standard_normal(n_rep)
        se_hat = se * np.sqrt(rng.chisquare(dof, n_rep) / dof)
        assert np.mean(np.abs(est) / se_hat > lim) < 0.9 - 10 * math.sqrt(0.09 / n_rep)


# ---------------------------------------------------------------- planted ladders


def _lognormal(rng, shape, s=1.0):
    x = np.exp(s * rng.standard_normal(shape))
    return (x - math.exp(s * s / 2)) / math.sqrt((math.exp(s * s) - 1) * math.exp(s * s))


def _ladders(n_rep, seeds=stats.MIN_SEEDS, seed=0):
    """(e_inf, SE, dof) of fit_ladder with per-seed values (jackknife) and without (Welch), per planted ladder."""
    rng = np.random.default_rng(seed)
    sd32 = 0.025 * (E_INF + C1 / 32)
    jk, welch = [], []
    for _ in range(n_rep):
        pts = []
        for d in DS:
            v = E_INF + C1 / d + sd32 * 32 / d * _lognormal(rng, seeds)
            pts.append(
                LadderPoint(
                    d, float(v.mean()), float(v.std(ddof=1) / math.sqrt(seeds)), tuple(range(seeds)), values=tuple(v)
                )
            )
        f = fit_ladder(pts)
        jk.append((f.e_inf, f.e_inf_se, f.e_inf_dof, f.se_method == "jackknife"))
        g = fit_ladder([LadderPoint(p.d, p.e_mean, p.e_se, p.seeds) for p in pts])
        welch.append((g.e_inf, g.e_inf_se, g.e_inf_dof, g.se_method == "welch"))
    return np.array(jk), np.array(welch)


def _miss(rows, level, truth=E_INF):
    # stats.t_limit, vectorised over the dofs (t_limit itself is checked against scipy above)
    z = float(sps.norm.isf((1 - level) / 2))
    lim = np.where(rows[:, 2] >= stats.DOF_NORMAL, z, sps.t.isf(sps.norm.sf(z), np.minimum(rows[:, 2], 1e9)))
    return float(np.mean(np.abs(rows[:, 0] - truth) > lim * rows[:, 1]))


@pytest.fixture(scope="module")
def ladders():
    return _ladders(2000)


@pytest.mark.heavy
def test_ladder_intervals_cover_at_the_nominal_rate_with_the_jackknife(ladders):
    """Jackknife over 10 seeds (9 dof): the 90 % and 99 % intervals miss the truth no more often than
    nominal (binomial bound); the plain Welch SE of the same fits visibly under-covers, which is why
    fit_ladder uses the jackknife when it has the per-seed values."""
    jk, welch = ladders
    n = len(jk)
    assert jk[:, 3].all() and welch[:, 3].all() and (jk[:, 2] == stats.MIN_SEEDS - 1).all()
    zb = z_bonferroni(4)
    for level in (0.9, 0.99):
        a = 1 - level
        bound = zb * math.sqrt(a * (1 - a) / n)
        assert _miss(jk, level) <= a + bound, (level, _miss(jk, level))
        # not vacuous: the jackknife interval still misses at a rate of the nominal order
        assert _miss(jk, level) >= a / 3
        assert _miss(welch, level) > a + bound, (level, _miss(welch, level))
    np.testing.assert_allclose(jk[:, 0], welch[:, 0], rtol=0, atol=0)  # same estimate, other SE


@pytest.mark.heavy
@pytest.mark.parametrize(
    "shift",
    [
        pytest.param(
            0.01,
            marks=pytest.mark.xfail(
                strict=True,
                reason=(
                    "measured: at low power the per-ladder prediction is optimistic (about 0.31 predicted vs 0.26 "
                    "detected at 1 % for this noise, docs/power.md); strict, so it fails when that changes"
                ),
            ),
        ),
        0.02,
        0.05,
    ],
)
def test_planted_shifts_are_detected_as_often_as_power_predicts(ladders, shift):
    """A claimed value 1, 2 or 5 % below the true e_inf, false-alarm budget 1e-3, jackknife SE with
    S - 1 dof: the flagged fraction against the mean over the ladders of stats.power() at each
    ladder's own SE (what verify's per-claim MDE uses), within a binomial bound."""
    jk, _ = ladders
    n = len(jk)
    z = float(sps.norm.isf(5e-4))
    nu = stats.MIN_SEEDS - 1
    lim = stats.t_limit(z, nu)
    measured = float(np.mean(np.abs(jk[:, 0] - E_INF * (1 - shift)) > lim * jk[:, 1]))
    p = float(np.mean([stats.power(E_INF * shift, se, lim, nu) for se in jk[:, 1]]))
    assert abs(measured - p) <= z_bonferroni(3) * math.sqrt(max(p * (1 - p), 1e-3) / n), (shift, measured, p)


@pytest.mark.heavy
def test_mde_of_the_planted_ladders_lies_between_the_shifts(ladders):
    jk, _ = ladders
    nu = stats.MIN_SEEDS - 1
    mde = stats.mde_rel(float(np.median(jk[:, 1])), stats.t_limit(float(sps.norm.isf(5e-4)), nu), nu, E_INF)
    assert 0.01 < mde < 0.05


def test_fit_ladder_uses_the_jackknife_only_with_per_seed_values():
    rng = np.random.default_rng(9)
    vals = {d: 0.7 + 1.3 / d + 0.01 * 32 / d * rng.standard_normal(5) for d in DS}

    def pts(k=5, values=True):
        return [
            LadderPoint(
                d,
                float(v[:k].mean()),
                float(v[:k].std(ddof=1) / math.sqrt(k)),
                tuple(range(k)),
                values=tuple(v[:k]) if values else None,
            )
            for d, v in vals.items()
        ]

    jk, welch = fit_ladder(pts(), "c1/d"), fit_ladder(pts(values=False), "c1/d")
    assert (jk.se_method, jk.e_inf_dof, welch.se_method) == ("jackknife", 4.0, "welch")
    assert jk.e_inf == welch.e_inf and jk.e_inf_se != welch.e_inf_se and "jackknife over 5 seeds" in jk.reason
    # the jackknife SE is the spread of the leave-one-seed-out fits, computed independently here
    reps = [
        fit_ladder(
            [
                LadderPoint(
                    p.d,
                    float(np.mean(np.delete(p.values, j))),
                    float(np.std(np.delete(p.values, j), ddof=1) / 2),
                    tuple(range(4)),
                )
                for p in pts()
            ],
            "c1/d",
        ).e_inf
        for j in range(5)
    ]
    assert jk.e_inf_se == pytest.approx(math.sqrt(4 / 5 * np.sum((np.array(reps) - np.mean(reps)) ** 2)), rel=1e-9)
    assert fit_ladder(pts(k=2)).se_method == "welch"  # a replicate would have one seed per d
    bad = pts()
    bad[0] = LadderPoint(bad[0].d, bad[0].e_mean + 0.1, bad[0].e_se, bad[0].seeds, values=bad[0].values)
    with pytest.raises(ICLError, match="not the mean of its per-seed values"):
        fit_ladder(bad)


def test_fit_ladder_ragged_seed_counts_use_the_delete_a_group_jackknife():
    """More seeds where they are cheap: seed j of every point is in group j mod min(count); the SE
    is the spread of the fits with one group left out at every d, computed independently here."""
    rng = np.random.default_rng(11)
    counts = {16: 12, 24: 9, 32: 6, 48: 4}
    vals = {d: 0.7 + 1.3 / d + 0.02 * 32 / d * rng.standard_normal(n) for d, n in counts.items()}

    def point(d, v, with_values=True):
        return LadderPoint(
            d,
            float(v.mean()),
            float(v.std(ddof=1) / math.sqrt(len(v))),
            tuple(range(len(v))),
            values=tuple(v) if with_values else None,
        )

    fit = fit_ladder([point(d, v) for d, v in vals.items()], "c1/d")
    assert fit.se_method == "jackknife" and fit.e_inf_dof == 3.0 and "delete-a-group" in fit.reason
    reps = [
        fit_ladder([point(d, v[np.arange(len(v)) % 4 != g], False) for d, v in vals.items()], "c1/d").e_inf
        for g in range(4)
    ]
    assert fit.e_inf_se == pytest.approx(math.sqrt(3 / 4 * np.sum((np.array(reps) - np.mean(reps)) ** 2)), rel=1e-9)
    # equal counts: the same as the delete-one-seed jackknife
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    stat = lambda v: v[0].mean() / (2 + v[1].mean())  # noqa: E731
    assert stats.grouped_jackknife_se([a, b], stat, 5) == pytest.approx(
        stats.jackknife_se(np.vstack([a, b]), stat, axis=1), rel=1e-12
    )
    with pytest.raises(ICLError, match="grouped jackknife"):
        stats.grouped_jackknife_se([a, b[:1]], stat, 2)
