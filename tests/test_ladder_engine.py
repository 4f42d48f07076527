"""One ladder engine: ``verify``'s simulation claims and ``icl-symbolic extrapolate`` give the same numbers.

Paper: the model of Sec. 2, Eqs. (1)-(7), p. 2-3, simulated on a ladder of d and extrapolated in
1/d against Result 1 (Eq. (9), p. 3).  Both paths run their (d, seed) simulations through
:class:`icl_symbolic.studies.ladder_runs.SeedRunner` and their fit, z test, MDE and verdict through
:func:`icl_symbolic.studies.extrapolate.extrapolate`; these tests hold them to it.
"""

import types

import numpy as np
import pytest

from icl_symbolic.api.extrapolation import extrapolate as api_extrapolate
from icl_symbolic.core import caches
from icl_symbolic.core.errors import ICLError
from icl_symbolic.model.setting import Setting, resolve_convention
from icl_symbolic.studies import ladder_runs
from icl_symbolic.studies.extrapolate import LadderPoint, LadderTest, bonferroni_z, extrapolate
from icl_symbolic.studies.ladder_runs import SeedRunner, seed_setting
from icl_symbolic.verification import claimfile, runner

Z = bonferroni_z(1e-3)  # the claim's z is the command's default budget, to the last digit

CLAIM = f"""
[[claim]]
id = "engine.{{cid}}"
source = "test"
statement = 'x'
method = "sim"
full = true
check = "simulation_extrapolated"
evidence = "simulation"
f = "tanh(g)"
rho = "0.1"
d_list = [5, 7, 9]
n_seeds = 10
seed0 = 3
n_test = 40
alpha = 2
kappa = 2
tau = 3
{{extra}}
tolerance = {{{{ z = {Z!r}, reason = "test" }}}}
expected = "holds"
"""


def _claim(tmp_path, cid="a", extra=""):
    p = tmp_path / f"{cid}.toml"
    p.write_text(CLAIM.format(cid=cid, extra=extra))
    (c,) = claimfile.load_file(str(p))
    return c


@pytest.mark.sim
@pytest.mark.parametrize("tasks, error", [("gaussian", "icl"), ("sphere", "gap")])
def test_verify_and_extrapolate_give_the_same_numbers(tmp_path, tasks, error):
    """The same ladder (teacher, d, seeds, n_test, task law, error) through ``verify`` (a
    simulation_extrapolated claim, with a cache folder) and through ``api.extrapolation.extrapolate``
    (no memo, no cache): the same per-d means and SEs, e_inf, its SE and dof, z, Student-t limit and
    MDE, to the last bit (each side simulates on its own: the memo is cleared in between)."""
    c = _claim(tmp_path, extra=f'tasks = "{tasks}"\nerror = "{error}"')
    caches.clear("simulation")
    r = runner.run_claim(c, cache=tmp_path / "cache")
    caches.clear("simulation")
    x = api_extrapolate(
        "tanh(g)", d=[5, 7, 9], rho=0.1, alpha=2, kappa=2, tau=3, seeds=10, seed=3, n_test=40, tasks=tasks, error=error
    )
    f = x.fit
    assert r.verdict == ("holds" if x.holds else "mismatch"), r.detail
    assert float(r.computed.value) == f.e_inf and r.computed.stderr == f.e_inf_se
    assert r.computed.n_samples == int(f.e_inf_dof) + 1 and f.se_method == "jackknife"
    assert float(r.claimed.value) == x.e_theory and r.zscore == pytest.approx(x.z, rel=1e-12)
    want = ", ".join(f"d={p.d}: {p.e_mean:.5g}+-{p.e_se:.2g}" for p in x.points)
    assert want in r.detail and f"(SE {f.e_inf_se:.2g}, {f.e_inf_dof:.1f} dof)" in r.detail
    assert r.mde_rel == pytest.approx(x.verdict_json()["mde_rel"], rel=1e-12)
    # the second verify run reads every seed from the cache folder: the same numbers again
    caches.clear("simulation")
    again = runner.run_claim(c, cache=tmp_path / "cache")
    assert float(again.computed.value) == f.e_inf and again.computed.stderr == f.e_inf_se


def _fake_simulate(calls):
    """A stand-in for the simulator: one run per call whose exact error is d + seed/100."""

    def simulate(st, seeds):
        (s,) = seeds
        calls.append((st.d, s))
        e = types.SimpleNamespace(value=st.d + s / 100)
        run = types.SimpleNamespace(e=e, e_idg=None, e_mc=e, solver="gram", seconds=0.5, seed=s)
        return types.SimpleNamespace(runs=[run])

    return simulate


def test_the_runner_reads_the_memo_before_it_simulates_and_keeps_seed_order(monkeypatch):
    """Values come back in the order of the seeds given, each (setting, seed) is simulated once with a
    memo, and a second runner sharing the memo simulates nothing; without a memo it simulates again."""
    calls = []
    monkeypatch.setattr(ladder_runs, "simulate", _fake_simulate(calls))
    st = Setting("tanh(g)", rho=0.1, alpha=2, kappa=2, tau=3, n_test=40)
    memo = {}
    got = SeedRunner(memo=memo).ladder(st, {5: (2, 0, 1), 7: (1, 3)})
    assert got[5].values.tolist() == [5.02, 5.0, 5.01] and got[7].values.tolist() == [7.01, 7.03]
    assert got[5].seconds == 1.5 and sorted(calls) == [(5, 0), (5, 1), (5, 2), (7, 1), (7, 3)]
    calls.clear()
    assert SeedRunner(memo=memo).values(st.replace(d=7), (3, 1)).tolist() == [7.03, 7.01] and calls == []
    SeedRunner().values(st.replace(d=7), (3, 1))
    assert calls == [(7, 3), (7, 1)]


def test_the_seed_key_is_the_one_verify_has_always_stored():
    """A cache folder written before the engine stays valid: the key of a default-convention setting
    has exactly the old fields; another convention or error adds one."""
    st = Setting("tanh(g)", rho=0.1, alpha=2, kappa=2, tau=3, d=8, n_test=40, C_train="powerlaw:1")
    assert seed_setting(st) == {
        "f": "tanh(g)",
        "rho": 0.1,
        "d": 8,
        "alpha": 2.0,
        "kappa": 2.0,
        "tau": 3.0,
        "lam": 0.0,
        "n_test": 40,
        "tasks": "gaussian",
        "C_train": "powerlaw:1",
        "C_test": "powerlaw:1",
        "exact": True,
    }
    sphere = st.replace(convention=resolve_convention(None, "sphere"))
    assert seed_setting(sphere)["tasks"] == "sphere" and "convention" not in seed_setting(sphere)
    assert seed_setting(st.replace(convention="letey2024"))["convention"]["name"] == "letey2024"
    assert seed_setting(st, "gap")["error"] == "gap"
    assert seed_setting(st.replace(f=np.tanh)) is None  # no text form: not stored


def test_a_claims_z_and_the_commands_budget_are_one_test():
    """LadderTest(z=...) (a claim) and LadderTest(false_alarm=..., m=...) (the command) give the same
    limit, misfit rule and MDE when they name the same budget; bad budgets are refused."""
    rng = np.random.default_rng(4)
    pts = [
        LadderPoint.from_values(d, 0.7 + 1.3 / d + 0.01 * rng.standard_normal(10), range(10)) for d in (8, 12, 16, 24)
    ]
    a = extrapolate(pts, 0.7, test=LadderTest(false_alarm=1e-3))
    b = extrapolate(pts, 0.7, test=LadderTest(z=Z))
    assert (a.z, a.z_limit, a.misfit, a.test.mde_abs) == (b.z, b.z_limit, b.misfit, b.test.mde_abs)
    assert a.false_alarm == 1e-3 and b.false_alarm == pytest.approx(1e-3, rel=1e-12)
    bent = [LadderPoint.from_values(p.d, np.asarray(p.values) + 40.0 / p.d**2, range(10)) for p in pts]
    assert "must describe the ladder" in extrapolate(bent, 0.7, test=LadderTest(z=Z, model="c1/d")).misfit
    for bad, msg in (
        (dict(false_alarm=2.0), "false-alarm"),
        (dict(m=1.5), "false-alarm"),
        (dict(z=-1.0), "z budget"),
        (dict(model="c1/d^3"), "unknown model"),
        (dict(mde=0.0), "MDE target"),
    ):
        with pytest.raises(ICLError, match=msg):
            LadderTest(**bad)


def test_an_unknown_option_of_a_ladder_is_one_clear_error_before_any_run(monkeypatch):
    """The loose keyword forms (the setting's fields plus jobs, scheduler, progress) refuse a misspelt
    name with one ICLError line, before anything is simulated."""
    from icl_symbolic.kernel_learner.ladder import extrapolate_kernel
    from icl_symbolic.kernel_learner.simulation import simulate_kernel
    from icl_symbolic.studies.extrapolate import run_ladder

    calls = []
    monkeypatch.setattr(ladder_runs, "simulate", _fake_simulate(calls))
    with pytest.raises(ICLError, match="unknown option.*tua"):
        run_ladder("g", [4, 6], alpha=1, tua=2, seeds=(0, 1))
    with pytest.raises(ICLError, match="no option.*tua"):
        simulate_kernel("g", 3, 4, 2, 4, 0.1, tua=2)
    with pytest.raises(ICLError, match="no option.*tua"):
        extrapolate_kernel("g", [3, 4], tua=2)
    with pytest.raises(ICLError, match="jobs must be an integer"):
        run_ladder("g", [4, 6], alpha=1, jobs=0, seeds=(0, 1))
    assert calls == []
    pts = run_ladder("g", [6, 4], alpha=1, kappa=1, tau=2, seeds=(0, 1), jobs=1)
    assert [p.d for p in pts] == [4, 6] and [p.values for p in pts] == [(4.0, 4.01), (6.0, 6.01)]
