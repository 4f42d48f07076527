"""Bounded work is announced: every long command refuses or prints its estimate first.

Every long command of the issue (``tests/_long_commands.py``, the one list) must, within a few
seconds, either exit 2 with one refusal line or print its estimate line on stderr
(``...: estimated 2 min 10 s (...); progress below (shorter: ...)``); the test kills it then and
does not wait for the work.  The whole list is ``slow`` (``ICL_SYMBOLIC_XSLOW=1``; also
``benchmarks/bench_limits.py --announce``, recorded in docs/benchmarks.md); a fast subset runs
in the default test run.  The unit tests below pin the cost model and the progress lines.
"""

from __future__ import annotations

import copy
import sys

import mpmath
import numpy as np
import pytest
import sympy

from icl_symbolic.cli import main
from icl_symbolic.core import cost
from icl_symbolic.core.cost import budget
from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.expr import teacher
from icl_symbolic.engine.gauss import exact_work
from icl_symbolic.engine.hermite import hermite_coeffs
from icl_symbolic.model.moments import MAX_MC_WORK, MonteCarlo, mc_estimate, mc_moments
from icl_symbolic.simulation import simulator
from icl_symbolic.theory.asymptotic import MAX_POINTS, Ratios, curve, sweep_estimate

from _long_commands import ESTIMATE, FAST, LONG_COMMANDS, first_announcement

#: seconds a command may take to print its estimate or refusal (start-up on a busy 2-core machine
#: is 2-8 s; the issue's bound is 30 s)
WITHIN = 25.0


def _check(argv):
    res = first_announcement(argv, WITHIN)
    assert res.kind in ("estimate", "refused"), f"{argv[:2]}: {res.kind} after {res.seconds:.1f} s:\n{res.stderr}"
    if res.kind == "refused":
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
        assert "estimated" in res.stderr and "docs/limits.md" in res.stderr
    else:
        assert ESTIMATE.search(res.line) and "shorter:" in res.line, res.line
    return res


@pytest.mark.heavy
@pytest.mark.parametrize("argv", FAST, ids=lambda a: " ".join(a[:1] + a[2:])[:50])
def test_long_commands_announce_fast_subset(argv):
    _check(argv)


@pytest.mark.slow
@pytest.mark.parametrize("argv", LONG_COMMANDS, ids=lambda a: " ".join(a[:1] + a[2:])[:50])
def test_every_long_command_refuses_or_announces(argv):
    _check(argv)


def test_the_check_can_fail():
    """A program that runs long without a word is 'silent', one that prints the line is found
    (the checker is not vacuous)."""
    res = first_announcement([], 1.0, program=[sys.executable, "-c", "import time; time.sleep(30)"])
    assert res.kind == "silent" and res.stderr == ""
    with pytest.raises(AssertionError):
        assert res.kind in ("estimate", "refused")
    line = cost.Estimate(50, 1, "x", "w", "r").line()
    code = f"import sys, time; print({line!r}, file=sys.stderr, flush=True); time.sleep(30)"
    res = first_announcement([], 10.0, program=[sys.executable, "-c", code])
    assert res.kind == "estimate" and res.line == line and res.seconds < 10


# -- the cost model -----------------------------------------------------------------------------
def test_estimate_line_and_refusal_wording():
    e = cost.Estimate(130.0, 1.2e9, "flops", "simulate: 10 seeds", "--seeds")
    assert ESTIMATE.search(e.line()) and e.line().endswith("(shorter: --seeds)")
    assert "estimated 2 min 10 s" in e.refusal("1e9") and "limit 1e9" in e.refusal("1e9")
    lines = []
    assert not cost.Estimate(0.5, 1, "x", "w", "r").announce(lines.append) and lines == []
    assert cost.Estimate(50, 1, "x", "w", "r").announce(lines.append) and len(lines) == 1
    assert not cost.Estimate(50, 1, "x", "w", "r").announce(None)  # --quiet


def test_progress_has_an_eta_and_is_quiet_when_short(monkeypatch):
    monkeypatch.setattr(cost, "PROGRESS_EVERY", 0.0)
    lines = []
    p = cost.Progress(lines.append, "work", total=4, announced=True, unit="items")
    p.update(1)
    p.update(4)
    assert "25% (1/4 items)" in lines[0] and "left" in lines[0] and "done" in lines[-1]
    quiet = []
    q = cost.Progress(quiet.append, "work", total=4)  # not announced, and short: silent
    q.update(1)
    q.update(4)
    assert quiet == []
    cost.Progress(None, "work", 4, True).update(1)  # --quiet: nothing, no error


def test_exact_path_with_many_kinks_is_counted_and_announced():
    expr = "+".join(f"abs(g - {k}/37)" for k in range(1, 71))
    assert exact_work(teacher(expr).expr, 8) == 70 * 2 * 9
    assert exact_work(teacher("tanh(g)").expr, 8) == 0
    lines = []
    r = hermite_coeffs("+".join(f"abs(g - {k}/37)" for k in range(1, 9)), M=2, progress=lines.append)
    assert r.a1.method == "exact"
    assert lines == []  # 8 kinks: short, not announced
    est = cost.Estimate(exact_work(teacher(expr).expr, 8) * cost.SECONDS_PER["exact_unit"], 1, "", "", "")
    assert est.long  # 70 kinks at M = 8: announced


def test_derived_closed_forms_too_long_are_carried_in_mpmath():
    """a1^2 of a 280-term closed form was expanded into 78 400 terms (minutes, silently): the
    product is dropped past hermite.MAX_DERIVED_TERMS and carried in mpmath with its bound."""
    expr = "+".join(f"abs(g - {k}/37)" for k in range(1, 31))
    r = hermite_coeffs(expr, M=2, rho="0.1", digits=20)
    assert r.a1.method == "exact" and r.E_f2.method == "exact"
    assert r.a1_sq.method == "mpmath" and r.rho_nonlinear.digits == 20
    # reference: the closed forms combined by SymPy at 40 digits
    ref = sympy.N(sympy.Rational(1, 10) + r.E_f2.exact - r.a1.exact**2, 40)
    with mpmath.workdps(40):
        assert abs(mpmath.mpf(str(ref)) - r.rho_nonlinear.value) <= r.rho_nonlinear.abs_err
    assert r.rho_nonlinear.abs_err < abs(r.rho_nonlinear.value) * 1e-20


def test_theory_sweep_estimate_enforces_the_documented_cap():
    assert sweep_estimate(MAX_POINTS).long
    with pytest.raises(Exception, match="estimated .*limit 1000000 points"):
        sweep_estimate(MAX_POINTS + 1)
    assert not sweep_estimate(400).long


def test_theory_grid_validation_is_separable_and_keeps_the_first_failing_row():
    """The product is validated in sum-of-sizes checks; the error is that of the first failing
    row in product order (tau innermost), as the row-by-row loop gave."""
    with pytest.raises(Exception, match="tau = 2e\\+09"):
        curve(None, Ratios(rho=0.1, alpha=[1, 2e9], tau=[1.5, 2e9]), a1=0.5, rho_nonlinear=0.1)
    with pytest.raises(Exception, match="alpha = 2e\\+09"):
        curve(None, Ratios(rho=0.1, alpha=[1, 2e9], tau=[1.5, 2]), a1=0.5, rho_nonlinear=0.1)
    cv = curve(None, Ratios(rho=0.1, alpha=[1, 2], tau=[1.5, 2]), a1=0.5, rho_nonlinear=0.1)
    assert len(cv) == 4 and np.all(np.isfinite(cv.e))


def test_theory_cli_announces_a_long_sweep(monkeypatch, capsys):
    monkeypatch.setattr(cost, "ANNOUNCE_SECONDS", 0.0)
    monkeypatch.setattr(cost, "PROGRESS_EVERY", 0.0)
    assert main(["theory", "g", "--tau", "0.1:0.9:50", "--json"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert ESTIMATE.search(err[0]) and "50 points" in err[0]
    assert "done (50/50 points)" in err[-1]
    assert main(["theory", "g", "--tau", "0.1:0.9:50", "--json", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_mc_estimate_enforces_the_documented_cap_and_announces(monkeypatch, capsys):
    assert mc_estimate(1000, 1000, MAX_MC_WORK // 10**6).long
    with pytest.raises(Exception, match="estimated .*limit 1e\\+12"):
        mc_estimate(1000, 1000, MAX_MC_WORK // 10**6 + 1)
    monkeypatch.setattr(cost, "ANNOUNCE_SECONDS", 0.0)
    monkeypatch.setattr(cost, "PROGRESS_EVERY", 0.0)
    lines = []
    mc_moments("g", 0.1, 3, 4, np.ones(3), MonteCarlo(200, 1, lines.append))
    assert ESTIMATE.search(lines[0]) and "done (200/200 prompts)" in lines[-1]
    # the command: a bad teacher is refused before a long run is announced
    assert main(["moments", "tanh(g", "--mc", "1000000", "--d", "1000", "--ell", "1000"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_simulate_announces_memory_then_time_before_the_first_seed(monkeypatch):
    lines = []

    def stop(*a, **k):
        raise KeyboardInterrupt  # the run itself is not wanted here

    monkeypatch.setattr(simulator, "map_sweep", stop)
    giant = [dict(f="tanh(g)", d=64, alpha=1e6, kappa=2, tau=2, rho=0.1, seeds=[0])]
    with pytest.raises(ICLError, match="above the ceiling .* pass --max-seconds"):  # no budget: refused
        simulator.simulate_many(giant, progress=lines.append)
    lines.clear()
    with pytest.raises(KeyboardInterrupt), budget(1e7):  # the budget lets it start
        simulator.simulate_many(giant, progress=lines.append)
    assert len(lines) == 2 and "GiB" in lines[0] and "--alpha" in lines[0]  # memory first
    assert ESTIMATE.search(lines[1]) and ("estimated 1 d" in lines[1] or " h " in lines[1])
    lines.clear()
    with pytest.raises(KeyboardInterrupt), budget(1e7):
        simulator.simulate_many(
            [dict(f="tanh(g)", d=64, alpha=2, kappa=2, tau=2, rho=0.1, seeds=range(10000))], progress=lines.append
        )
    assert len(lines) == 1 and ESTIMATE.search(lines[0]) and "10000 seed run(s)" in lines[0]
    sec, flops, draws = simulator.seed_cost(simulator.sizes(64, 2, 2, 2))
    assert 0.5 < sec < 30 and flops > 1e9 and draws > 1e6


# -- the simulation commands: ladders, the kernel learner, figures, tables, verify ---------------
def test_ladder_estimate_is_the_simulators_cost_over_every_d_and_seed():
    from icl_symbolic.studies.extrapolate import ladder_estimate

    one = ladder_estimate([8, 16], 2, 2, 2, n_seeds=4)
    per_seed = [simulator.seed_cost(simulator.sizes(d, 2, 2, 2), n_test=2000)[0] for d in (8, 16)]
    assert one.seconds == pytest.approx(4 * sum(per_seed))  # no second cost model
    assert ladder_estimate([8, 16], 2, 2, 2, n_seeds=8).seconds == pytest.approx(2 * one.seconds)
    assert ladder_estimate([8, 64], 2, 2, 2, n_seeds=4).seconds > one.seconds  # grows with d
    assert ladder_estimate([8, 16], 2, 2, 2, n_seeds=4, jobs=2).seconds == pytest.approx(one.seconds / 2)
    assert "8 seed run(s)" in one.line() and "--seeds" in one.reduce and "--d" in one.reduce


def test_kernel_estimate_counts_the_learner_in_its_feature_dimension():
    from icl_symbolic.kernel_learner.simulation import (
        check_kernel_run,
        feature_entries,
        feature_seconds,
        kernel_estimate,
    )

    k2 = check_kernel_run(8, 2, 2, 2, "hermite:2")
    k3 = check_kernel_run(8, 2, 2, 2, "hermite:3")
    assert k2.d == 44 and k3.d > k2.d  # D = C(d + K, K) - 1
    e2 = kernel_estimate([k2], 3)
    # the simulator's cost in D plus the feature maps: (n + n_test) ell D entries at their calibrated price
    assert feature_entries(k2, e2_n_test()) == (k2.n + e2_n_test()) * k2.ell * 44
    one = simulator.seed_cost(k2, n_test=e2_n_test())[0] + feature_seconds(k2, e2_n_test())
    assert e2.seconds == pytest.approx(3 * one)
    assert feature_seconds(k2, e2_n_test()) > cost.SECONDS_PER["sim_feature_seed"]
    assert kernel_estimate([k3], 3).seconds > e2.seconds  # grows with K (through D)
    assert kernel_estimate([k2], 6).seconds == pytest.approx(2 * e2.seconds)  # and with seeds
    assert kernel_estimate([k2, k3], 3).seconds == pytest.approx(e2.seconds + kernel_estimate([k3], 3).seconds)


def e2_n_test():
    from icl_symbolic.kernel_learner.simulation import DEFAULT_N_TEST_KERNEL

    return DEFAULT_N_TEST_KERNEL


def test_verify_estimate_is_the_sum_over_the_work_items_with_shared_simulations_once():
    from icl_symbolic.simulation.simulator import seed_cost, sizes
    from icl_symbolic.verification.claimfile import TIERS, load_claims
    from icl_symbolic.verification.schedule import (
        claim_cost,
        group_cost,
        marginal_costs,
        run_estimate,
        schedule,
        sim_units,
    )

    claims = load_claims()
    full = [c for c in claims if TIERS.index(c.tier) <= TIERS.index("full")]
    deep = [c for c in claims if TIERS.index(c.tier) <= TIERS.index("deep")]
    est = run_estimate(full)
    sims = [c for c in full if c.tier == "full"]
    flops = sum(group_cost([sims[i] for i in g]) for g in schedule(sims, range(len(sims))))
    assert flops > 0 and est.seconds == pytest.approx(flops)
    # each (setting, d, seed) is counted once, at what simulate announces for it (simulator.seed_cost)
    units = {}
    for c in sims:
        units.update(sim_units(c))
    assert est.work == len(units)
    (key, side, d, seed), one = next(iter(units.items()))
    c = next(c for c in sims if (key, side, d, seed) in sim_units(c))
    sz = sizes(d, float(c.parsed["alpha"]), float(c.parsed["kappa"]), float(c.parsed["tau"]))
    assert one == pytest.approx(seed_cost(sz, "auto", int(c.parsed["n_test"]), float(c.parsed["lam"] or 0))[0])
    # claims that simulate the same seeds count them once: the full tier's shared settings (Result 1
    # at tau = 4 with both Fig. 1 ratios, the a1 = 0 teacher's two laws) make the per-claim sum larger
    assert sum(claim_cost(c) for c in sims) > 1.2 * flops
    by_id = {c.id: c for c in claims}
    sin4 = by_id["result1.sim_sin_tau4"]
    unnorm = by_id["fig1.sim_unnormalised"]  # its sin side is a subset of sin4's seeds, its linear side is new
    assert group_cost([sin4, unnorm]) == pytest.approx(claim_cost(sin4) + claim_cost(unnorm) / 2)
    laws = [by_id[k] for k in ("a1zero.sim_tau2_gaussian", "a1zero.sim_tau2_sphere", "a1zero.sim_laws_same_limit")]
    assert group_cost(laws) == pytest.approx(claim_cost(laws[2]))  # the difference simulates both laws
    assert group_cost(laws) == pytest.approx(claim_cost(laws[0]) + claim_cost(laws[1]))
    # a claim on the same training setting but another test functional (C_test, n_test, IDG error)
    # simulates its own seeds: the estimate counts them, and the schedule keeps it apart
    for key, value in (("C_test", "lowrank:0.5"), ("n_test", 77), ("error", "idg")):
        other = copy.deepcopy(sin4)
        other.parsed[key] = value
        assert group_cost([sin4, other]) == pytest.approx(claim_cost(sin4) + claim_cost(other)), key
        assert len(schedule([sin4, other], [0, 1])) == 2, key
    # the ETA's per-claim shares add up to the estimate
    assert sum(marginal_costs(sims, range(len(sims))).values()) == pytest.approx(flops)
    assert est.long and run_estimate(deep).seconds > est.seconds  # the deep tier adds the paper-scale ladders
    quick = [c for c in claims if c.tier == "quick"]
    assert run_estimate(quick).work == 0 and not run_estimate(quick).long  # the quick tier: seconds, not announced
    assert run_estimate(full, jobs=2).seconds < est.seconds


def test_ladder_announces_and_reports_an_eta(monkeypatch, capsys):
    from icl_symbolic.studies.extrapolate import run_ladder

    monkeypatch.setattr(cost, "ANNOUNCE_SECONDS", 0.0)
    monkeypatch.setattr(cost, "PROGRESS_EVERY", 0.0)
    lines = []
    run_ladder("g", [4, 6], alpha=1, kappa=1, tau=2, rho=0.1, seeds=(0, 1), n_test=20, progress=lines.append)
    assert ESTIMATE.search(lines[0]) and "extrapolate: 4 seed run(s)" in lines[0]
    assert any("left" in x for x in lines) and any("done (4/4 runs (d, seed))" in x for x in lines)
    argv = ["extrapolate", "g", "--d", "4,6", "--seeds", "2", "--alpha", "1", "--kappa", "1", "--tau", "2"]
    argv += ["--n-test", "20", "--json"]
    main(argv)
    assert ESTIMATE.search(capsys.readouterr().err)
    main([*argv, "--quiet"])
    assert capsys.readouterr().err == ""  # --quiet: no estimate, no progress


def test_simulate_many_names_the_command_in_its_estimate(monkeypatch):
    def stop(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(simulator, "map_sweep", stop)
    lines = []
    with pytest.raises(KeyboardInterrupt):
        simulator.simulate_many(
            [dict(f="tanh(g)", d=64, alpha=2, kappa=2, tau=2, rho=0.1, seeds=range(1000))],
            progress=lines.append,
            what="reproduce (1 table rows)",
            reduce="fewer --seeds-per-row",
        )
    assert lines[0].startswith("reproduce (1 table rows): 1000 seed run(s): estimated ")
    assert lines[0].endswith("(shorter: fewer --seeds-per-row)")


def test_verify_announces_the_sum_first_then_an_eta(monkeypatch):
    """run_claims announces the tier's estimate before the first claim and reports progress weighted
    by the claims' cost (the claims themselves are stubbed: only the announcement is tested)."""
    from icl_symbolic.verification import runner
    from icl_symbolic.verification.claimfile import load_claims

    monkeypatch.setattr(cost, "PROGRESS_EVERY", 0.0)
    ran = []

    def stub(claim, progress=None, cache=None):
        ran.append(claim.id)
        return runner.ClaimResult(claim, "skipped", True, "stub")

    monkeypatch.setattr(runner, "run_claim", stub)
    claims = load_claims()
    lines = []
    runner.run_claims(claims, tier="full", progress=lines.append, on_result=lambda r: None)
    assert ESTIMATE.search(lines[0]) and lines[0].startswith("verify --tier full: ") and ran
    assert any("left" in x for x in lines) and "done" in lines[-1]
    quiet = []
    runner.run_claims(claims, tier="quick", progress=quiet.append, on_result=lambda r: None)
    assert quiet == []  # the quick tier: no estimate, no progress


@pytest.mark.slow  # ~9 s (the learner's set-up): under ICL_SYMBOLIC_XSLOW=1
def test_kernel_learner_cli_announces_and_quiet_silences(monkeypatch, capsys):
    monkeypatch.setattr(cost, "ANNOUNCE_SECONDS", 0.0)
    monkeypatch.setattr(cost, "PROGRESS_EVERY", 0.0)
    argv = ["simulate", "tanh(g)", "--features", "hermite:2", "--d", "4", "--seeds", "2", "--json"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert ESTIMATE.search(err) and "simulate --features hermite:2: 2 seed run(s)" in err
    assert "done (2/2 seed runs)" in err
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
