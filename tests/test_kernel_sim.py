"""Simulation of the kernel learner (icl_symbolic.kernel_learner.simulation) and ``simulate --features``.

Tolerances: simulation-vs-simulation comparisons are in standard errors (3-4 SE,
false-alarm budget about 1e-3 per comparison for roughly Gaussian means);
simulation-vs-theory comparisons add the finite-size allowance measured by
benchmarks/kernel_finite_size.py (see docs/kernel.md, "Finite size").
"""

import json
import math

import numpy as np
import pytest

from icl_symbolic.cli import main
from icl_symbolic.core.errors import ICLError
from icl_symbolic.kernel_learner import simulation as kernel_sim
from icl_symbolic.kernel_learner import theory as kernel
from icl_symbolic.simulation import simulator as simulation

pytestmark = pytest.mark.sim

F = "g + (g^2-1)/sqrt(2)"  # a1 = a2 = 1: plain floor rho + a2^2 = 1.1, kernel floor rho = 0.1
RHO = 0.1

#: Ordinary finite-size excess of the linear theory at D = 27, alpha = 16, kappa = 2, tau = 4:
#: plain attention on the linear teacher f = g at d = 27 sits 7.2% (+- 1.2%, ten seeds) above its
#: theory (benchmarks/kernel_finite_size.py, "ordinary"; three seeds gave 8.2% +- 2.7%); the
#: allowance 12% is above that measurement's one-sided 1e-3 edge (10.9%).
ORDINARY_ALLOWANCE_D27 = 0.12


def test_identity_features_reproduce_simulate_exactly():
    """Same seeds, same numbers: the kernel path with identity features is simulate(sampler=direct)."""
    r = kernel_sim.simulate_kernel("tanh(g)", 5, 2, 2, 2, RHO, features="identity", seeds=(0, 3), n_test=300)
    s = simulation.simulate_many(
        [dict(f="tanh(g)", d=5, alpha=2, kappa=2, tau=2, rho=RHO, seeds=(0, 3), n_test=300, sampler="direct")]
    )[0]
    assert [float(x.e_mc) for x in r.runs] == [float(x.e_mc) for x in s.runs]
    assert (r.ell, r.k, r.n) == (s.ell, s.k, s.n)


def test_feature_prompts_with_identity_map_equal_plain_prompts():
    W = np.random.default_rng(1).standard_normal((7, 4))
    a = simulation.sample_prompts(np.tanh, W, 9, 0.2, np.random.default_rng(5), method="direct")
    b = simulation.sample_prompts(
        np.tanh, W, 9, 0.2, np.random.default_rng(5), method="direct", features=kernel.FeatureTransform("identity", 4)
    )
    for x, y in zip(a, b):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("f", [F, "tanh(g)"])
def test_query_exact_error_agrees_with_plain_monte_carlo(f):
    """The query-exact estimator uses theta(w) and E[y^2 | w] (exact split; quadrature for tanh):
    it must agree with the plain squared error on the same prompts within 4 combined SE."""
    r = kernel_sim.simulate_kernel(f, 4, 4, 2, 4, RHO, seeds=(0, 1), n_test=3000, theory=False)
    for run in r.runs:
        se = math.hypot(run.e_query.stderr, run.e_mc.stderr)
        assert abs(float(run.e_query) - float(run.e_mc)) < 4 * se
        assert run.e_query.stderr < run.e_mc.stderr  # averaging over the query removes variance


def test_feature_map_is_orthonormal_monte_carlo():
    """x~ = phi(sqrt(d) x)/sqrt(D) has covariance I/D (Monte Carlo, 4 SE per entry, 200 000 draws)."""
    d, n = 3, 200_000
    ft = kernel.FeatureTransform("hermite:3", d)
    X = np.random.default_rng(0).standard_normal((n, d)) / math.sqrt(d)
    F_ = ft(X) * math.sqrt(ft.D)
    cov = F_.T @ F_ / n
    se = np.sqrt(((F_[:, :, None] * F_[:, None, :]) ** 2).mean(axis=0) / n)
    assert np.all(np.abs(cov - np.eye(ft.D)) < 4.5 * se + 1e-12)
    assert np.all(np.abs(F_.mean(axis=0)) < 4.5 * F_.std(axis=0) / math.sqrt(n))


def test_gaussian_control_sits_within_ordinary_finite_size_error():
    """All-Gaussian control (Gaussian inputs, tasks N(0, C~), noise rho_eff) at d = 6, D = 27: above the
    prediction by at most the ordinary finite-size allowance (3 SE slack); the real kernel learner at
    the same point is far outside that band, so the band can fail."""
    r = kernel_sim.simulate_kernel(F, 6, 16, 2, 4, RHO, seeds=(0, 1, 2), n_test=2000, control="gaussian")
    e, se, th = float(r.e_query), r.e_query.stderr, r.e_theory
    assert th < e + 3 * se
    assert e - 3 * se < th * (1 + ORDINARY_ALLOWANCE_D27)


def test_task_vectors_of_the_gaussian_control_have_the_spectrum():
    ks = kernel.kernel_spectrum(F, "hermite:2", RHO, d=4, tasks="gaussian")
    W = kernel.gaussian_task_vectors(ks, 200_000, np.random.default_rng(2))
    C = W.T @ W / W.shape[0]
    got = np.sort(np.linalg.eigvalsh(C))
    want = np.sort(np.concatenate([np.full(b.multiplicity, b.eigenvalue) for b in ks.blocks]))
    # eigenvalues of a sample covariance: relative error ~ sqrt(2/N) per eigenvalue plus spread ~ D/N
    np.testing.assert_allclose(got, want, rtol=0.03)


def _plain_same_sizes(r, seeds, n_test):
    d = r.d
    return simulation.simulate_many(
        [dict(f=F, d=d, alpha=r.ell / d, kappa=r.k / d, tau=r.n / d**2, rho=RHO, seeds=seeds, n_test=n_test)]
    )[0]


def test_floor_statement_d4():
    """At d = 4, tau = 16, kappa = 4: as ell/D grows from 2 to 32 the kernel learner's error drops from
    above rho + a2^2 = 1.1 to below it (by > 4 SE), while plain attention on the same ell, k, n stays
    above it (by > 4 SE)."""
    floor = RHO + 1.0
    small = kernel_sim.simulate_kernel(F, 4, 2, 4, 16, RHO, seeds=range(6), n_test=2000, theory=False)
    large = kernel_sim.simulate_kernel(F, 4, 32, 4, 16, RHO, seeds=range(4), n_test=1000, theory=False)
    assert float(small.e_query) - 4 * small.e_query.stderr > floor
    assert float(large.e_query) + 4 * large.e_query.stderr < floor
    for r in (small, large):
        p = _plain_same_sizes(r, r.seeds, 2000)
        assert (p.ell, p.k, p.n) == (r.ell, r.k, r.n)
        assert float(p.e) - 4 * p.e.stderr > floor


@pytest.mark.slow
def test_floor_statement_d6():
    floor = RHO + 1.0
    seeds = (0, 1, 2)
    large = kernel_sim.simulate_kernel(F, 6, 16, 4, 16, RHO, seeds=seeds, n_test=1000, theory=False)
    assert float(large.e_query) + 4 * large.e_query.stderr < floor
    p = _plain_same_sizes(large, seeds, 2000)
    assert float(p.e) - 4 * p.e.stderr > floor


def test_cli_simulate_features_json(capsys):
    rc = main(
        [
            "simulate",
            F,
            "--features",
            "hermite:2",
            "--d",
            "3",
            "--alpha",
            "4",
            "--kappa",
            "2",
            "--tau",
            "4",
            "--seeds",
            "2",
            "--n-test",
            "300",
            "--json",
            "--quiet",
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)["points"][0]
    assert doc["D"] == 9 and doc["ell"] == 36 and doc["n"] == 324 and doc["features"] == "hermite:2"
    r = kernel_sim.simulate_kernel(F, 3, 4, 2, 4, RHO, seeds=(0, 1), n_test=300)
    assert doc["e_mean"] == float(r.e_query) and doc["e_theory"] == r.e_theory


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--features", "hermite:4"], "hermite:K must be 1, 2 or 3"),
        (["--control", "gaussian"], "--control needs --features"),
        (["--features", "hermite:2", "--ctrain", "powerlaw:1"], "isotropic tasks only"),
        (["--features", "hermite:3", "--control", "gaussian"], "needs K <= 2"),
    ],
)
def test_cli_simulate_features_bad_input(argv, msg, capsys):
    rc = main(["simulate", F, "--d", "3", "--quiet", *argv])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]


def test_seeds_on_two_processes_give_the_same_numbers():
    """simulate_kernel(jobs=2): the seeds through parallel.map_sweep, bit for bit the serial numbers."""
    kw = dict(seeds=(0, 1), n_test=300)
    a = kernel_sim.simulate_kernel(F, 3, 4, 2, 4, RHO, **kw)
    b = kernel_sim.simulate_kernel(F, 3, 4, 2, 4, RHO, jobs=2, **kw)
    c = kernel_sim.simulate_kernel(F, 3, 4, 2, 4, RHO, control="gaussian", jobs=2, **kw)
    assert [(r.e_query.value, r.e_mc.value, r.how) for r in a.runs] == [
        (r.e_query.value, r.e_mc.value, r.how) for r in b.runs
    ]
    assert c.runs[0].e_query.value != a.runs[0].e_query.value  # the control is a different problem


def test_cli_simulate_features_refuses_a_bad_grid_point_before_any_output(capsys):
    rc = main(
        [
            "simulate",
            F,
            "--features",
            "hermite:2",
            "--d",
            "4",
            "--alpha",
            "16,1e9",
            "--kappa",
            "2",
            "--tau",
            "4",
            "--seeds",
            "2",
            "--jobs",
            "2",
        ]
    )
    out, err = capsys.readouterr()
    # the alpha = 1e9 point (ell = 1.4e10) is refused for its memory, naming alpha, before any output
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "alpha" in err and "ell = " in err


def test_refuses_unknown_control():
    with pytest.raises(ICLError):
        kernel_sim.simulate_kernel(F, 3, 1, 1, 1, RHO, control="both")


@pytest.mark.parametrize("K", [1, 2, 3])
def test_weighted_feature_sums_equal_explicit_features(K):
    rng = np.random.default_rng(K)
    ft = kernel.FeatureTransform(f"hermite:{K}", 4)
    X = rng.standard_normal((5, 7, 4)) / 2.0
    y = rng.standard_normal((5, 7))
    np.testing.assert_allclose(ft.weighted_sum(y, X), np.einsum("mi,mid->md", y, ft(X)), rtol=1e-12, atol=1e-12)


_BOUND_CLAIM = """
[[claim]]
id = "t.below"
source = "test"
statement = "e below 1.1"
method = "sim"
full = true
check = "kernel_simulation"
evidence = "simulation"
f = "g + (g^2-1)/sqrt(2)"
rho = "1/10"
features = "hermite:2"
d = 4
alpha = 32
kappa = 4
tau = 16
n_seeds = {n_seeds}
versus = "below"
bound = "rho + a2^2"
tolerance = {{ z = 3.09, reason = "test" }}
expected = "holds"
"""


@pytest.mark.parametrize("mean, se, want", [(0.8, 0.03, True), (0.8, 0.3, False), (1.2, 0.01, False)])
def test_bound_claim_needs_its_whole_band_and_reports_its_power(tmp_path, monkeypatch, mean, se, want):
    """kernel_simulation below a bound (simulation replaced): holds only when mean + t SE (one-sided,
    Student t at 9 dof) is below the bound, so a tenfold SE fails rather than holds; mde_rel is
    (t + t_0.9) SE / bound; fewer than ten seeds are refused."""
    from types import SimpleNamespace

    from scipy import stats

    from icl_symbolic.core.values import Value
    from icl_symbolic.verification.checks import kernel as kernel_checks
    from icl_symbolic.verification.claimfile import load_claims

    fake = SimpleNamespace(e_query=Value(mean, "sim", stderr=se), d=4, D=14, ell=448, k=56, n=3136, e_theory=0.8)
    monkeypatch.setattr(kernel_checks, "_sim", lambda *a: fake)
    path = tmp_path / "c.toml"
    path.write_text(_BOUND_CLAIM.format(n_seeds=10))
    (claim,) = load_claims([str(path)])
    out = kernel_checks.check_kernel_simulation(claim)
    t, t90 = stats.t.isf(stats.norm.sf(3.09), 9), stats.t.isf(0.1, 9)
    assert out.holds is want is bool(mean + t * se < 1.1)
    assert out.mde_rel == pytest.approx((t + t90) * se / 1.1, rel=1e-9) and "90% power" in out.mde_note
    path.write_text(_BOUND_CLAIM.format(n_seeds=4))
    with pytest.raises(ICLError, match=">= 10 seeds"):  # refused when the file is loaded
        load_claims([str(path)])
