"""The kernel learner's finite-size gap extrapolated in 1/D (our extension, not the paper's; docs/kernel.md).

icl_symbolic.kernel_ladder: per-seed gap e_sim(d) - e_pred(d) of the kernel learner, fitted
gap_inf + c1/D (+ c2/D^2) by extrapolate.fit_ladder and tested against 0; the rate by a power
law (extrapolate.fit_power_law).  Planted ladders test the statistics; one small real ladder
(d = 3, 4, 5) and the command line test the plumbing.  `extrapolate --features identity` is
plain attention (Sec. 2, Eqs. (1)-(7), p. 2-3; Result 1, Eq. (9), p. 3): the same numbers as
without --features.
"""

import json
import math

import numpy as np
import pytest
from scipy import stats

from icl_symbolic.cli import main
from icl_symbolic.errors import ICLError
from icl_symbolic.extrapolate import LadderPoint, fit_power_law
from icl_symbolic.kernel import kernel_curve
from icl_symbolic.kernel_ladder import fit_gap, kernel_ladder_check, run_kernel_ladder
from icl_symbolic.kernel_sim import simulate_kernel
from icl_symbolic.simulation import estimate_memory, sizes

F = "g + (g^2-1)/sqrt(2)"
DS_D = (14, 27, 44, 65, 90)          # D of hermite:2 at d = 4, 6, 8, 10, 12
POINT = dict(alpha=16, kappa=2, tau=4, rho=0.1)


def planted_gap(rng, gap_inf=0.0, c1=18.0, se=0.01, Ds=DS_D):
    """gap(D) = gap_inf + c1/D plus Gaussian noise of known SE (seeds=None: SE exact)."""
    return [LadderPoint(D, gap_inf + c1 / D + se * rng.standard_normal(), se) for D in Ds]


def _misses_limit(n, z=3.0):
    """Upper 1e-4 quantile of Binomial(n, P(|Z| > z)): more misses mean the SE is too small."""
    return int(stats.binom.isf(1e-4, n, 2 * stats.norm.sf(z)))


def test_planted_gap_ladder_recovers_zero_within_3_se_at_the_stated_rate():
    """gap = 18/D + noise: gap_inf within 3 SE of 0 in >= 99.73 % of 400 replicates (misses ~ Binomial),
    the spread of z is 1 within its sampling error, and the verdict holds in all but a ~1e-3 fraction."""
    rng = np.random.default_rng(20261202)
    n, misses, zs, fails = 400, 0, [], 0
    for _ in range(n):
        g = fit_gap(planted_gap(rng))
        zs.append(g.core.z)
        misses += abs(g.core.z) > 3
        fails += not g.holds
    assert misses <= _misses_limit(n), misses
    assert abs(float(np.std(zs, ddof=1)) - 1) < 4 / math.sqrt(2 * n)
    assert fails <= int(stats.binom.isf(1e-4, n, 1e-3)), fails
    g = fit_gap(planted_gap(np.random.default_rng(1)))
    js = g.to_json()
    assert js["variable"] == "D" and js["model"] == "gap_inf + c1/D" and js["model_reason"].startswith("gap_inf + c1/D")
    assert abs(js["coef"][1] - 18.0) < 4 * js["coef_se"][1]


def test_a_nonzero_planted_limit_is_rejected():
    """gap = 0.05 + 18/D with SE 0.004: gap_inf is 0.05, about 10 SE from 0; the verdict must say so."""
    g = fit_gap(planted_gap(np.random.default_rng(11), gap_inf=0.05, se=0.004))
    assert not g.holds and g.core.z > 5 and abs(g.core.fit.e_inf - 0.05) < 4 * g.core.fit.e_inf_se


def test_planted_power_law_rate_within_3_se_at_the_stated_rate():
    """gap = 20 D^-1.1 with 2 % relative noise: p within 3 p_se of 1.1 in >= 99.73 % of 400 replicates."""
    rng = np.random.default_rng(5)
    n, misses, zs = 400, 0, []
    for _ in range(n):
        pts = []
        for D in DS_D:
            y = 20.0 * D ** -1.1
            pts.append(LadderPoint(D, y * (1 + 0.02 * rng.standard_normal()), 0.02 * y))
        pl = fit_power_law(pts)
        z = (pl.p - 1.1) / pl.p_se
        zs.append(z)
        misses += abs(z) > 3
    assert misses <= _misses_limit(n), misses
    assert abs(float(np.std(zs, ddof=1)) - 1) < 4 / math.sqrt(2 * n)


def test_power_law_drops_non_positive_gaps_and_needs_two():
    pts = [LadderPoint(14, 1.0, 0.1), LadderPoint(27, -0.1, 0.1), LadderPoint(44, 0.3, 0.1)]
    pl = fit_power_law(pts)
    assert pl.n_used == 2 and pl.n_dropped == 1 and pl.dof == 0
    assert pl.p == pytest.approx(math.log(1.0 / 0.3) / math.log(44 / 14), rel=1e-12)
    assert fit_power_law(pts[:2]) is None
    with pytest.raises(ICLError, match="positive finite standard error"):
        fit_power_law([LadderPoint(14, 1.0, 0.0), LadderPoint(27, 0.5, 0.1)])


@pytest.mark.sim
def test_small_real_ladder_equals_simulate_kernel_seed_by_seed():
    """d = 3, 4 (D = 9, 14): each per-seed error is simulate_kernel's for that seed, e_pred its
    e_theory, and --jobs 2 gives the same numbers as 1 (each seed's streams depend on the seed only)."""
    kw = dict(features="hermite:2", seeds=(0, 1), n_test=200)
    pts = run_kernel_ladder(F, [4, 3], **POINT, **kw)
    assert [p.d for p in pts] == [3, 4] and [p.D for p in pts] == [9, 14]
    for p in pts:
        r = simulate_kernel(F, p.d, **POINT, seeds=(0, 1), n_test=200)
        assert list(p.values) == [float(run.e_query) for run in r.runs]
        assert p.e_pred == r.e_theory and (p.ell, p.k, p.n) == (r.ell, r.k, r.n)
        curve = kernel_curve(F, "hermite:2", 0.1, 16, 2, 4, d=p.d, tasks="gaussian", plain=False)
        assert p.e_pred == float(curve.columns["e"][0])          # the prediction at this d, not at d -> inf
        assert p.gap_mean == pytest.approx(float(r.e_query) - r.e_theory, abs=1e-14)
    pts2 = run_kernel_ladder(F, [3, 4], **POINT, **kw, jobs=2)
    assert [p.values for p in pts2] == [p.values for p in pts]


@pytest.mark.sim
def test_command_small_kernel_ladder_json_csv_plot(tmp_path, capsys):
    """d = 3, 4, 5 (a few seconds): every documented key, files written, exit status = verdict."""
    js, csvf, png = tmp_path / "r.json", tmp_path / "p.csv", tmp_path / "g.png"
    code = main(["extrapolate", F, "--features", "hermite:2", "--d", "3,4,5", "--alpha", "16", "--kappa", "2",
                 "--tau", "4", "--rho", "0.1", "--seeds", "3", "--n-test", "300", "--json", "--quiet",
                 "--json-out", str(js), "--csv", str(csvf), "--plot", str(png)])
    obj = json.loads(capsys.readouterr()[0])
    for key in ("gap_inf", "gap_inf_se", "gap_inf_dof", "z", "z_limit", "holds", "model", "chi2", "dof",
                "power_law", "features", "variable", "points"):
        assert key in obj, key
    assert obj["features"] == "hermite:2" and obj["variable"] == "D"
    assert [p["D"] for p in obj["points"]] == [9, 14, 20]
    for p in obj["points"]:
        assert p["gap_mean"] == pytest.approx(p["e_mean"] - p["e_pred"], abs=1e-14) and p["gap_se"] == p["e_se"] > 0
    assert code == (0 if obj["holds"] else 1)
    # the fit is of the gaps against 1/D (not 1/d), and the rate is the power law of the same points
    # with the per-seed gaps, as the command fits them (jackknife SE over the seeds)
    ladder = [LadderPoint(p["D"], p["gap_mean"], p["gap_se"], tuple(p["seeds"]),
                          values=tuple(e - p["e_pred"] for e in p["per_seed_e"])) for p in obj["points"]]
    g = fit_gap(ladder)
    assert obj["gap_inf"] == pytest.approx(g.core.fit.e_inf, rel=1e-12)
    assert obj["z"] == pytest.approx(g.core.z, rel=1e-12)
    assert obj["power_law"]["p"] == pytest.approx(g.power_law.p, rel=1e-12)
    assert json.loads(js.read_text())["gap_inf"] == obj["gap_inf"]
    assert csvf.read_text().splitlines()[0].startswith("d,D,ell,k,n,e_mean,e_se,e_pred,gap_mean")
    assert png.read_bytes()[:4] == b"\x89PNG"


def _without_timing(obj):
    if isinstance(obj, dict):
        return {k: _without_timing(v) for k, v in obj.items() if k != "seconds"}
    if isinstance(obj, list):
        return [_without_timing(v) for v in obj]
    return obj


@pytest.mark.sim
def test_identity_features_are_exactly_the_plain_command(capsys):
    base = ["extrapolate", "g", "--d", "6,8", "--seeds", "2", "--tau", "3", "--n-test", "200", "--json", "--quiet"]
    code1 = main(base)
    plain = json.loads(capsys.readouterr()[0])
    code2 = main(base + ["--features", "identity"])
    ident = json.loads(capsys.readouterr()[0])
    assert code1 == code2 and _without_timing(plain) == _without_timing(ident)
    assert "e_inf" in ident and "gap_inf" not in ident


@pytest.mark.parametrize("argv, msg", [
    (["--features", "hermite:4"], "hermite:K must be 1, 2 or 3"),
    (["--features", "poly:2"], "expected identity or hermite:K"),
    (["--features", "hermite:2", "--tasks", "sphere"], "Gaussian tasks only"),
    (["--features", "hermite:2", "--ctrain", "powerlaw:1"], "isotropic tasks only"),
    (["--features", "hermite:2", "--d", "4,60"], "GiB"),
    (["--features", "hermite:2", "--d", "4"], "at least two distinct"),
    (["--features", "hermite:2", "--seeds", "1"], "--seeds"),
    (["--features", "hermite:2", "--tau", "1"], "interpolation peak"),
    (["--features", "hermite:2", "--jobs", "0"], "--jobs"),
    (["--features", "hermite:2", "--d", "4,12", "--alpha", "16", "--n-test", "40000"], "reduce n_test"),
    (["--features", "hermite:2", "--plot", "g.txt"], "must end in"),
])
def test_bad_kernel_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, argv, msg):
    out = tmp_path / "o.json"
    code = main(["extrapolate", F, "--d", "4,6", "--json-out", str(out), *argv])
    _, err = capsys.readouterr()
    assert code == 2 and msg in err and err.count("\n") == 1, err
    assert not out.exists()


def test_memory_is_checked_for_the_concurrent_runs_at_the_largest_d():
    """A budget that holds one run at d = 4 and at d = 8 but not two at d = 8: --jobs 2 is refused,
    --jobs 1 accepted (every d is checked: memory is not monotone in D when the solver changes)."""
    need = estimate_memory(sizes(44, 16, 2, 4), "auto", 300)           # D = 44 at d = 8
    budget = int(1.5 * need)
    assert list(kernel_ladder_check([4, 8], 16, 2, 4, "hermite:2", 300, jobs=1, max_memory=budget)) == [4, 8]
    with pytest.raises(ICLError, match="GiB"):
        kernel_ladder_check([4, 8], 16, 2, 4, "hermite:2", 300, jobs=2, max_memory=budget)
    assert estimate_memory(sizes(14, 16, 2, 4), "auto", 300) <= budget


_CLAIM = '''
[defaults]
rho = "1/10"

[[claim]]
id = "t.gap"
source = "test"
statement = "gap -> 0"
method = "sim"
full = true
check = "kernel_gap_extrapolated"
evidence = "simulation"
f = "g + (g^2-1)/sqrt(2)"
features = "hermite:2"
d_list = [4, 6, 8]
alpha = 16
kappa = 2
tau = 4
n_seeds = 4
rate = {rate}
tolerance = {{ z = 3.29, reason = "test" }}
expected = "holds"
'''


@pytest.mark.sim
def test_the_gap_claim_holds_and_can_fail(tmp_path, monkeypatch):
    """The check kind behind kernel.gap_vanishes_like_1_over_D: holds on the real ladder; fails when the
    prediction is shifted by a constant (the gap then tends to a non-zero limit) and when a wrong decay
    rate is claimed."""
    from icl_symbolic import kernel_ladder
    from icl_symbolic.verification.runner import verify

    def run(rate):
        path = tmp_path / f"c{rate}.toml"
        path.write_text(_CLAIM.format(rate=rate))
        (r,), _ = verify([str(path)], full=True)
        return r

    r = run(1)
    assert r.verdict == "holds" and r.ok, r.detail
    assert not run(2).ok                                   # decays like 1/D, not 1/D^2
    real = kernel_ladder.kernel_prediction
    monkeypatch.setattr(kernel_ladder, "kernel_prediction", lambda *a, **k: real(*a, **k) - 0.5)
    shifted = run(0)
    assert shifted.verdict == "mismatch" and not shifted.ok, shifted.detail
