"""The SE-calibration claims (derivations/16_calibration.toml; icl_symbolic.studies.calibration):
they hold for the package's SEs and fail when the SE the verdicts divide by is planted 0.7 or 1.2
times its value (in core.stats, where every verdict takes it from)."""

from pathlib import Path

import numpy as np
import pytest

from icl_symbolic.core import stats
from icl_symbolic.studies import calibration as cal
from icl_symbolic.verification import runner
from icl_symbolic.verification.checks import calibration as checks_calibration
from icl_symbolic.verification.claimfile import load_file

SHIPPED = Path(__file__).resolve().parent.parent / "derivations" / "16_calibration.toml"


def _claims():
    return {c.id.split(".")[1]: c for c in load_file(SHIPPED)}


def _plant(monkeypatch, scale: float) -> None:
    """Every SE of a mean over seeds (sample_se) and every jackknife SE ``scale`` times its value."""
    sample_se, jack = stats.sample_se, stats.grouped_jackknife_se
    monkeypatch.setattr(stats, "sample_se", lambda x, axis=None: scale * sample_se(x, axis))
    monkeypatch.setattr(stats, "grouped_jackknife_se", lambda s, f, g: scale * jack(s, f, g))


def _skewed_pool(d_list, pool, seed0, **_):
    """A stand-in for the simulated pool: skewed (gamma) per-seed errors shrinking like 1/d."""
    rng = np.random.default_rng(seed0)
    return {d: 0.5 + rng.gamma(2.0, 1.0, pool) / d for d in d_list}


@pytest.fixture
def fast_pool(monkeypatch):
    """The claims' pool replaced by a synthetic skewed one (the simulator is exercised by the sim test)."""
    pools = {}

    def per_seed(st, seeds, progress=None, **kw):
        d = st.d
        if d not in pools:
            pools.update(_skewed_pool((4, 6, 8), len(seeds), seeds[0]))
        return pools[d]

    monkeypatch.setattr(checks_calibration, "per_seed_errors", per_seed)


@pytest.mark.parametrize("which", ["seed_mean_se", pytest.param("ladder_jackknife_se", marks=pytest.mark.heavy)])
def test_the_claims_hold_and_fail_on_a_planted_se(fast_pool, monkeypatch, which):
    claim = _claims()[which]
    assert runner.run_claim(claim).verdict == "holds"
    for scale in (0.7, 1.2):
        with monkeypatch.context() as m:
            _plant(m, scale)
            r = runner.run_claim(claim)
        assert r.verdict == "mismatch", (scale, r.detail)
    assert runner.run_claim(claim).verdict == "holds"  # the plant is gone


def test_the_reference_is_exact_for_the_jackknife_of_a_linear_statistic():
    """E[SE_jack^2] = sum c_d^2 sigma_d^2/n_d for seed counts that are multiples of the group count:
    the mean ratio over many replicates is 1 to within its Monte-Carlo SE, and a planted factor on
    the jackknife moves it by the square of that factor."""
    pool = _skewed_pool((4, 6, 8), 30, 5)
    c = cal.se_calibration(pool, (20, 10, 10), "ladder_jackknife", 600, 2)
    assert abs(c.ratio - 1) < 4 * c.ratio_se and c.ratio_se < 0.04


def test_the_weights_are_those_of_the_weighted_fit():
    """c reproduces the intercept of the weighted least-squares fit e_inf + c1/d."""
    ds, var, n = [4, 6, 8], np.array([0.3, 0.2, 0.1]), [20, 10, 10]
    c = cal.extrapolation_weights(ds, var, n)
    means = np.array([1.0 + 2 / d for d in ds]) + np.array([0.01, -0.02, 0.005])
    X = np.column_stack([np.ones(3), 1 / np.array(ds)])
    W = np.diag(np.array(n) / var)
    coef = np.linalg.solve(X.T @ W @ X, X.T @ W @ means)
    assert float(c @ means) == pytest.approx(coef[0], rel=1e-12)
    assert float(c.sum()) == pytest.approx(1.0, rel=1e-12)  # a constant ladder extrapolates to itself


@pytest.mark.parametrize("scale, low", [(0.8, 0.999), (1.2, 0.999), (1.0, 0.0)])
def test_power_for_scale(scale, low):
    """The stated power: a 20 % SE error at the shipped ratio SEs (about 0.015-0.025) is flagged
    with probability above 0.999; no error: the false-alarm rate 1e-3 at |z| > 3.29."""
    p = cal.power_for_scale(scale, 0.025, 3.2905)
    assert p > low
    if scale == 1.0:
        assert p == pytest.approx(1e-3, rel=1e-3)


def test_bad_counts_are_refused():
    from icl_symbolic.core.errors import ICLError

    pool = _skewed_pool((4, 6), 10, 1)
    with pytest.raises(ICLError, match="multiples"):
        cal.se_calibration(pool, (15, 10), "ladder_jackknife", 10, 1)
    with pytest.raises(ICLError, match="one seed count"):
        cal.se_calibration(pool, (10,), "seed_mean", 10, 1)


@pytest.mark.sim
@pytest.mark.parametrize("scale", [0.7, 1.2])
def test_the_shipped_claims_catch_a_planted_se_on_simulated_seeds(monkeypatch, scale):
    """The shipped claims, on the simulator's own per-seed errors: both fail with the planted SE."""
    for claim in _claims().values():
        assert runner.run_claim(claim).verdict == "holds", claim.id
    _plant(monkeypatch, scale)
    for claim in _claims().values():
        assert runner.run_claim(claim).verdict == "mismatch", claim.id
