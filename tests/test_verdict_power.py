"""Verdicts with power: tiers, the seed minimum, and the minimum detectable error of each claim.

The MDE of a statistical claim is the smallest true relative offset that its test flags
with probability >= 90 % at its own false-alarm budget; here it is checked against a
seeded simulation of the very test the runner applies (judge.compare), so a wrong
formula (a one-sided quantile, a forgotten Student-t, a bias budget left out) fails.
"""

import math
from pathlib import Path

import numpy as np
import pytest

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import MIN_SEEDS
from icl_symbolic.core.values import Value
from icl_symbolic.theory.asymptotic import Ratios
from icl_symbolic.verification import claimfile, runner
from icl_symbolic.verification.judge import Tolerance, compare, detectable


@pytest.mark.parametrize("dof,bias_rel", [(None, 0.0), (12, 0.0), (40, 0.0), (25, 0.01)])
def test_mde_is_the_offset_caught_90_percent_of_the_time(dof, bias_rel):
    """Simulate the z test at a true offset equal to the MDE: it must fail 90 % of the time.

    2000 seeded repetitions: the binomial SE of a 0.9 rate is 0.0067; the allowance 0.025
    is 3.7 SE (false-alarm probability about 2e-4).
    """
    rng = np.random.default_rng(7)
    claimed = Value(1.0, "numeric")
    se = 0.004
    tol = Tolerance("z", 3.935, "test", bias_rel=bias_rel or None)
    n = None if dof is None else dof + 1
    probe = Value(1.0, "sim" if dof else "mc", stderr=se, n_samples=n or 10**6)
    m_abs, m_rel, _ = detectable(probe, claimed, tol)
    assert m_rel == pytest.approx(m_abs)
    hits = 0
    reps = 2000
    for _ in range(reps):
        # a normal estimate with true SE se, offset by the MDE; with dof, the SE it reports is
        # itself estimated (se * sqrt(chi2_dof / dof)), so the z-score is noncentral Student t
        est = 1.0 + m_abs * (1 if rng.random() < 0.5 else -1) + se * rng.standard_normal()
        se_hat = se * math.sqrt(rng.chisquare(dof) / dof) if dof else se
        v = Value(est, "sim" if dof else "mc", stderr=se_hat, n_samples=n or 10**6)
        holds, *_ = compare(v, claimed, tol)
        hits += not holds
    rate = hits / reps
    if not bias_rel:
        assert abs(rate - 0.9) < 0.025, (rate, m_abs)
    else:
        # with a bias budget the limit zq SE_hat + bias is plugged in at the estimated SE, so the
        # stated MDE is conservative (the true power at it is a little above 90 %), never optimistic
        assert 0.875 < rate < 0.96, (rate, m_abs)


def test_mde_grows_with_fewer_dof_and_with_a_bias_budget():
    claimed = Value(2.0, "numeric")
    tol = Tolerance("z", 3.935, "x")
    many = detectable(Value(2.0, "sim", stderr=0.01, n_samples=200), claimed, tol)[1]
    few = detectable(Value(2.0, "sim", stderr=0.01, n_samples=8), claimed, tol)[1]
    biased = detectable(
        Value(2.0, "sim", stderr=0.01, n_samples=200), claimed, Tolerance("z", 3.935, "x", bias_rel=0.02)
    )[1]
    assert few > many and biased > many + 0.015
    # normal limit: about (limit + 1.28) SE / |claimed|
    assert many == pytest.approx((3.935 + 1.2816) * 0.01 / 2, rel=0.05)


def test_deterministic_claims_state_their_tolerance_as_a_relative_error():
    claimed = Value(0.5, "numeric")
    assert detectable(Value(0.5, "numeric"), claimed, Tolerance("rel", 1e-6, "x"))[1] == pytest.approx(1e-6)
    assert detectable(Value(0.5, "numeric"), claimed, Tolerance("abs", 5e-7, "x"))[1] == pytest.approx(1e-6)
    assert detectable(Value(0.5, "numeric"), Value(0.0, "numeric"), Tolerance("abs", 5e-7, "x"))[1] is None


CLAIM = """
[[claim]]
id = "t.{cid}"
source = "test"
statement = 'x'
method = "sim"
{tier}
check = "simulation_extrapolated"
evidence = "simulation"
f = "tanh(g)"
rho = "0.1"
d_list = [16, 24, 48]
n_seeds = {n}
alpha = 2
kappa = 2
tau = 3
tolerance = {{ z = 3.29, reason = "test" }}
expected = "holds"
"""


def _load(tmp_path, cid="a", tier='tier = "deep"', n=10):
    p = tmp_path / f"{cid}.toml"
    p.write_text(CLAIM.format(cid=cid, tier=tier, n=n))
    return claimfile.load_file(str(p))


def test_tiers_select_and_explain_what_is_skipped(tmp_path):
    (deep,) = _load(tmp_path)
    assert deep.tier == "deep"
    (r,) = runner.run_claims([deep], full=True)
    assert r.verdict == "skipped" and "--tier deep" in r.detail
    (r,) = runner.run_claims([deep])
    assert r.verdict == "skipped"
    (full,) = _load(tmp_path, "b", "full = true")
    assert full.tier == "full"
    with pytest.raises(ICLError, match="contradicts"):
        _load(tmp_path, "c", 'full = false\ntier = "deep"')
    with pytest.raises(ICLError, match="tier 'huge'"):
        _load(tmp_path, "d", 'tier = "huge"')
    with pytest.raises(ICLError, match="must set full = true"):
        _load(tmp_path, "e", 'tier = "quick"')
    with pytest.raises(ICLError, match="contradicts"):
        runner.run_claims([deep], full=True, tier="quick")


@pytest.mark.parametrize("n", ["9", "[10, 9, 12]"])
def test_fewer_seeds_than_the_minimum_is_refused_at_load_time(tmp_path, n):
    with pytest.raises(ICLError, match=f">= {MIN_SEEDS} seeds"):
        _load(tmp_path, n=n)


def test_per_d_seed_counts_must_match_the_ladder(tmp_path, monkeypatch):
    from icl_symbolic.verification.checks import simulation as checks_simulation

    monkeypatch.setattr(checks_simulation, "_per_seed", lambda *a, **kw: np.ones(10))
    (c,) = _load(tmp_path, n="[10, 10]")
    (r,) = runner.run_claims([c], tier="deep")
    assert r.verdict == "error" and "2 counts for 3 dimensions" in r.detail


def test_every_shipped_simulation_claim_has_at_least_the_minimum_seeds():
    """Also the kernel learner's claims; a count per d is checked entry by entry."""
    low = []
    for c in claimfile.load_claims():
        if c.method != "sim":
            continue
        n = c.parsed.get("n_seeds")
        counts = n if isinstance(n, list) else [n]
        if n is None or min(counts) < MIN_SEEDS:
            low.append((c.id, n))
    assert not low, low


def test_a_ladder_claim_reports_its_mde_in_json(tmp_path, monkeypatch):
    """A planted ladder e(d) = theory + 0.5/d with seed noise: the verdict carries mde_rel, and it
    matches the judge's formula applied to the extrapolated value."""
    from icl_symbolic.theory.asymptotic import e_nonlinear
    from icl_symbolic.verification.checks import simulation as checks_simulation

    th = float(e_nonlinear("tanh(g)", Ratios(rho=0.1, alpha=2, kappa=2, tau=3)).value)

    def fake(st, seeds, progress=None, **kw):
        d = st.d
        rng = np.random.default_rng(d)
        return th + 0.5 / d + 0.002 * rng.standard_normal(len(seeds))

    monkeypatch.setattr(checks_simulation, "_per_seed", fake)
    (c,) = _load(tmp_path, n="[12, 10, 20]")
    (r,) = runner.run_claims([c], tier="deep")
    assert r.verdict == "holds", r.detail
    js = r.to_json()
    assert js["mde_rel"] == r.mde_rel and 0 < r.mde_rel < 0.05
    m_abs, m_rel, _ = detectable(r.computed, r.claimed, c.tolerance)
    assert m_rel == pytest.approx(r.mde_rel)
    assert "would have caught an error of" in r.mde_sentence()
    assert math.isfinite(m_abs)


def _family_z(m: int, false_alarm: float = 1e-3) -> float:
    """Two-sided Bonferroni split of the family's false-alarm budget over m claims (normal quantile)."""
    from scipy.stats import norm

    return float(norm.isf(false_alarm / 2 / m))


#: Check kinds whose claims compare simulations with a theory without a bias budget: one family per tier.
FAMILY_CHECKS = ("simulation_extrapolated", "simulation_finite_d")


def test_each_tier_splits_its_false_alarm_budget_over_its_own_extrapolated_claims():
    """The z of every simulation claim compared with a theory (extrapolated in 1/d, or at one finite d
    against the finite-d theory) is the Bonferroni split of the tier's 1e-3 budget over the claims of
    that family the tier runs (a claim added or moved without re-splitting the budget fails here; the
    numbers in the claim files are rounded to 3 places), and its reason states the count."""
    from icl_symbolic.verification.claimfile import load_claims

    family = {}
    for c in load_claims(None):
        if c.check in FAMILY_CHECKS:
            family.setdefault(c.tier, []).append(c)
    assert set(family) == {"full", "deep"}
    assert any(c.check == "simulation_finite_d" for c in family["full"])
    for tier, claims in family.items():
        want = round(_family_z(len(claims)), 3)
        wrong = [(c.id, c.tolerance.value) for c in claims if c.tolerance.value != want]
        assert not wrong, f"{tier}: {len(claims)} claims want z = {want}: {wrong}"
        counted = [c.id for c in claims if f"over the {len(claims)} " not in c.tolerance.reason]
        assert not counted and all("simulation claims" in c.tolerance.reason for c in claims), (tier, counted)


FINITE_D_CLAIM = """
[[claim]]
id = "fd.{cid}"
source = "test"
statement = "x"
method = "sim"
full = true
check = "simulation_finite_d"
evidence = "self-test"
evidence_reason = "test"
f = "sin(g)"
rho = "0.1"
d = 8
alpha = 2
kappa = 2
tau = 0.5
n_seeds = 16
mc_prompts = 20000
tolerance = {{ z = 4.003, reason = "test" }}
expected = "holds"
"""


@pytest.mark.parametrize("offset,verdict", [(0.0, "holds"), (0.05, "mismatch")])
def test_a_finite_d_claim_compares_with_the_finite_d_theory_and_reports_its_mde(tmp_path, monkeypatch, offset, verdict):
    """simulation_finite_d: per-seed values planted around the finite-d theory at d = 8 (seed SE 0.1 %)
    hold; planted 5 % above it they fail; the verdict carries mde_rel from the judge's formula
    (Student t at the 15 seeds' dof), so a check that ignored the theory or the seeds would fail here.
    The theory's own Monte-Carlo SE (its radial term at 20 000 prompts: about 0.15 %) enters the
    combined SE, so the MDE is about (5.5 + 1.3) x 0.18 % = 1.3 %, between 0.1 % and 2 %."""
    from icl_symbolic.theory.finite_d import e_nonlinear_finite
    from icl_symbolic.verification.checks import simulation as checks_simulation

    th = e_nonlinear_finite("sin(g)", rho=0.1, alpha=2, kappa=2, tau=0.5, d=8, mc_prompts=20000).corrected

    def fake(st, seeds, progress=None, **kw):
        d, lam = st.d, st.lam
        assert d == 8 and lam == 0.0
        rng = np.random.default_rng(3)
        z = rng.standard_normal(len(seeds))
        return th * (1 + offset) + 0.004 * th * (z - z.mean()) / z.std(ddof=1)

    monkeypatch.setattr(checks_simulation, "_per_seed", fake)
    p = tmp_path / "fd.toml"
    p.write_text(FINITE_D_CLAIM.format(cid="a"))
    (c,) = claimfile.load_file(str(p))
    (r,) = runner.run_claims([c], full=True)
    assert r.verdict == verdict, r.detail
    assert "finite-d theory at d=8" in r.detail
    m_abs, m_rel, how = detectable(r.computed, r.claimed, c.tolerance)
    assert r.mde_rel == pytest.approx(m_rel) and 0.001 < r.mde_rel < 0.02 and "15 dof" in how


A1ZERO_CLAIM = """
[[claim]]
id = "t.{cid}"
source = "test"
statement = 'x'
method = "sim"
tier = "deep"
check = "simulation_extrapolated"
evidence = "simulation"
f = "(g^2-1)/sqrt(2)"
rho = "0.1"
d_list = [16, 24, 32, 48]
n_seeds = 12
alpha = 2
kappa = 2
tau = 2
tasks = "{tasks}"
{factor}
tolerance = {{ z = 3.29, reason = "test" }}
expected = "holds"
"""


@pytest.mark.parametrize("tasks", ["gaussian", "sphere"])
def test_eq10_exact_factor_is_eq10_at_the_simulated_sizes_over_its_limit(tasks):
    """finite_d_factor = eq10_exact: F(d)/F(inf) written out by hand (n from the simulator's sizes,
    p = d(d+1), rho_nonlinear + 3/d for Gaussian tasks only, the inverse-Wishart mean p/(n - p - 1))."""
    from icl_symbolic.theory.finite_d import finite_sizes
    from icl_symbolic.verification.checks.simulation import eq10_exact_factors

    p = dict(versus="theory", error="icl", lam=0.0, C_train="identity", alpha=2.0, kappa=2.0, tau=2.0, tasks=tasks)
    got = eq10_exact_factors("(g^2-1)/sqrt(2)", 0.1, p, [16, 48, 192], "identity")
    for d in (16, 48, 192):
        n, q = finite_sizes(d, 2.0, 2.0, 2.0)[2], d * (d + 1)
        rnl = 1.1 + (3.0 / d if tasks == "gaussian" else 0.0)
        assert got[d] == pytest.approx(rnl * (1 + q / (n - q - 1)) / (1.1 * 2.0), rel=1e-12)
    assert got[16] > got[48] > got[192] > 1.0
    # other_law (the difference of the two laws) divides each law by its own factor: same numbers
    both = dict(p, versus="other_law", tasks="gaussian")
    assert eq10_exact_factors("(g^2-1)/sqrt(2)", 0.1, both, [16], "identity", tasks)[16] == got[16]
    with pytest.raises(ICLError, match="a1 = 0 only"):
        eq10_exact_factors("tanh(g)", 0.1, p, [16], "identity")
    with pytest.raises(ICLError, match="C = I"):
        eq10_exact_factors("(g^2-1)/sqrt(2)", 0.1, dict(p, lam=0.1), [16], "identity")


@pytest.mark.parametrize("shift,verdict", [(0.0, "holds"), (0.02, "mismatch")])
def test_eq10_exact_factor_takes_the_derived_curvature_out_and_keeps_the_power(tmp_path, monkeypatch, shift, verdict):
    """Per-seed values planted as Eq. (10) x F(d)/F(inf) (the curved finite-d shape) x (1 + shift), seed
    SE 0.1 %: with the factor the ladder is flat and extrapolates to Eq. (10) (holds); a 2 % error of the
    limit is still found (mismatch), so dividing by a ratio that tends to 1 does not blind the claim."""
    from icl_symbolic.verification.checks import simulation as checks_simulation
    from icl_symbolic.verification.runner import run_claim

    p = dict(versus="theory", error="icl", lam=0.0, C_train="identity", alpha=2.0, kappa=2.0, tau=2.0, tasks="gaussian")
    factors = checks_simulation.eq10_exact_factors("(g^2-1)/sqrt(2)", 0.1, p, [16, 24, 32, 48], "identity")

    def fake(st, seeds, progress=None, **kw):
        d = st.d
        z = np.random.default_rng(d).standard_normal(len(seeds))
        return 2.2 * factors[d] * (1 + shift) * (1 + 0.001 * (z - z.mean()) / z.std(ddof=1))

    monkeypatch.setattr(checks_simulation, "_per_seed", fake)
    path = tmp_path / "a.toml"
    path.write_text(A1ZERO_CLAIM.format(cid="a", tasks="gaussian", factor='finite_d_factor = "eq10_exact"'))
    (c,) = claimfile.load_file(str(path))
    r = run_claim(c)
    assert r.verdict == verdict, r.detail
    assert "F(d)/F(inf)" in r.detail and r.mde_rel is not None and r.mde_rel < 0.01


def test_a_single_work_item_lends_the_workers_to_its_seeds(tmp_path, monkeypatch):
    """verify --jobs 2 with one work item (one claim, or claims sharing simulations): the seeds of its
    simulations run on the two workers (core.parallel.seed_jobs inside the check is 2, 1 again after)."""
    from icl_symbolic.core.parallel import seed_jobs
    from icl_symbolic.verification.checks import simulation as checks_simulation
    from icl_symbolic.verification.runner import run_claims

    seen = []

    def fake(st, seeds, progress=None, **kw):
        d = st.d
        seen.append(seed_jobs())
        if progress is not None:
            progress(f"d={d}: {len(seeds)} seeds")
        z = np.random.default_rng(d).standard_normal(len(seeds))
        return 2.2 * (1 + 0.5 / d) * (1 + 0.001 * z)

    monkeypatch.setattr(checks_simulation, "_per_seed", fake)
    one = tmp_path / "one.toml"
    one.write_text(A1ZERO_CLAIM.format(cid="one", tasks="gaussian", factor=""))
    (c,) = claimfile.load_file(str(one))
    (r,) = run_claims([c], tier="deep", jobs=2)
    assert r.verdict in ("holds", "mismatch") and seen and set(seen) == {2}
    assert seed_jobs() == 1  # restored after the block
    # with a claim that simulates nothing beside it (its own work item, seconds): the same
    quick = [
        q
        for q in claimfile.load_file(
            str(Path(__file__).resolve().parents[1] / "derivations" / "07_task_diversity_eq11.toml")
        )
        if q.id == "eq11.limit_kappa2"
    ]
    seen.clear()
    rq, rs = run_claims(quick + [c], tier="deep", jobs=2)
    assert rq.ok and rq.verdict == "holds" and rs.verdict == r.verdict and set(seen) == {2}
    # as the CLI runs it (verdicts to on_result, progress to stderr): the lent item's own progress lines
    # reach the caller, so an hour on one deep claim is not silent
    lines, printed = [], []
    run_claims([c], tier="deep", jobs=2, progress=lines.append, on_result=printed.append)
    assert len(printed) == 1 and any(ln.startswith("    ") for ln in lines), lines
