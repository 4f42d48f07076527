"""Tests of icl_symbolic.core.parallel and of --jobs / --scheduler: results identical to a serial run."""

from __future__ import annotations

import functools
import json
import time

import numpy as np
import pytest

from icl_symbolic.cli import main
from icl_symbolic.core import caches, cost, parallel
from icl_symbolic.core.errors import ICLError
from icl_symbolic.simulation import simulator as sim
from icl_symbolic.simulation.cache import SeedCache
from icl_symbolic.verification import claimfile
from icl_symbolic.verification import runner as runner_mod
from icl_symbolic.verification.checks import simulation as checks_simulation
from icl_symbolic.verification.claimfile import load_claims, select
from icl_symbolic.verification.runner import run_claims
from icl_symbolic.verification.schedule import schedule

from _claims import SMALL_LADDER, small_ladder_claims

TIMING_KEYS = {"seconds", "train_seconds", "elapsed_s"}


def _strip_timings(obj):
    if isinstance(obj, dict):
        return {k: _strip_timings(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [_strip_timings(v) for v in obj]
    return obj


def _blas_work(seed):
    """Something whose rounding depends on BLAS blocking (a product and a solve)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((300, 300))
    return float(np.linalg.solve(A @ A.T + np.eye(300), rng.standard_normal(300)).sum())


@pytest.mark.heavy
def test_map_sweep_serial_and_processes_bitwise_identical():
    items = list(range(6))
    serial = parallel.map_sweep(_blas_work, items, jobs=1)
    par = parallel.map_sweep(_blas_work, items, jobs=2)
    assert serial == par  # == on floats: bitwise
    lines = []
    parallel.map_sweep(_blas_work, items[:2], jobs=2, progress=lines.append, label="x")
    assert len(lines) == 2 and lines[0].startswith("x 1/2 done") and lines[1].startswith("x 2/2 done")


@pytest.mark.sim
def test_cli_simulate_jobs_2_equals_jobs_1_except_timings(capsys):
    """The issue's check: --jobs 2 and --jobs 1 give identical JSON except the timing keys."""
    argv = ["simulate", "sin(g)", "--d", "10", "--tau", "0.5,2", "--seeds", "2", "--n-test", "500", "--json", "--quiet"]
    assert main(argv + ["--jobs", "1"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(argv + ["--jobs", "2"]) == 0
    two = json.loads(capsys.readouterr().out)
    assert _strip_timings(one) == _strip_timings(two)
    assert len(one["points"]) == 2
    assert one["points"][0]["per_seed"][0]["seconds"] is not None  # timings exist (and were the only difference)
    for point in one["points"]:
        for r in point["per_seed"]:
            assert r["residual"] < 1e-9 and isinstance(r["iterations"], int) and r["solver"]


def test_jobs_and_scheduler_bad_input_one_line(capsys, monkeypatch):
    for argv, match in ((["--jobs", "0"], "jobs"), (["--scheduler", "not an address"], "scheduler")):
        rc = main(["simulate", "g", "--d", "4", "--seeds", "1", "--quiet"] + argv)
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and match in err
    monkeypatch.setenv(parallel.SCHEDULER_ENV, "garbage")
    with pytest.raises(ICLError, match="scheduler"):
        parallel.resolve_scheduler(None)
    monkeypatch.setenv(parallel.SCHEDULER_ENV, "tcp://127.0.0.1:8786")
    assert parallel.resolve_scheduler(None) == "tcp://127.0.0.1:8786"
    assert parallel.resolve_scheduler("tcp://h:1") == "tcp://h:1"


@pytest.mark.sim
def test_dask_local_cluster_same_numbers(tmp_path, monkeypatch):
    """Through joblib's dask backend on a LocalCluster: the same numbers as the serial run."""
    pytest.importorskip("dask.distributed")
    from dask.distributed import LocalCluster

    kw = dict(f="tanh(g)", d=8, alpha=2, kappa=2, tau=2, rho=0.1, seeds=(0, 1), n_test=500)
    ref = sim.simulate_many([dict(**kw)])[0]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        got = sim.simulate_many([dict(**kw)], scheduler=cluster.scheduler_address)[0]
        assert parallel.map_sweep(_blas_work, [3, 4], scheduler=cluster.scheduler_address) == parallel.map_sweep(
            _blas_work, [3, 4]
        )
        claims = small_ladder_claims(tmp_path) + select(load_claims(None), ["eq8.*"])
        store = tmp_path / "seed-cache"
        on_dask = run_claims(claims, full=True, scheduler=cluster.scheduler_address, cache=store)
    assert _strip_timings(got.to_json()) == _strip_timings(ref.to_json())
    serial = run_claims(claims, full=True)
    assert [_strip_timings(r.to_json()) for r in on_dask] == [_strip_timings(r.to_json()) for r in serial]
    assert any(r.claim.tier != "quick" for r in serial) and all(r.ok for r in serial)
    # the Dask workers stored every seed they simulated: a rerun (a new process, say after the
    # run was killed) reads them all and simulates nothing
    assert len(SeedCache(store)) > 0
    caches.clear("simulation")

    def no_simulation(*a, **kw):
        raise AssertionError("simulated although every seed is in the cache")

    monkeypatch.setattr(checks_simulation, "simulate", no_simulation)
    resumed = run_claims(claims, full=True, cache=store)
    assert [_strip_timings(r.to_json()) for r in resumed] == [_strip_timings(r.to_json()) for r in serial]


def test_memory_check_counts_concurrent_runs():
    """With jobs = N, N runs must fit at once: refused when one fits but two do not."""
    sz = sim.sizes(32, 2, 2, 2)
    one = sim.estimate_memory(sz, "cg", n_test=1000)
    spec = dict(
        f="g", d=32, alpha=2, kappa=2, tau=2, rho=0.1, seeds=(0, 1), n_test=1000, solver="cg", max_memory=int(1.5 * one)
    )
    with pytest.raises(ICLError, match="GiB"):
        sim.simulate_many([spec], jobs=2)


def test_heartbeat_speaks_while_the_block_runs_and_stops_after():
    lines = []
    with parallel.heartbeat(lines.append, lambda: f"alive {len(lines)}", every=0.05):
        deadline = time.monotonic() + 10
        while len(lines) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert lines[:3] == ["alive 0", "alive 1", "alive 2"]
    n = len(lines)
    time.sleep(0.2)
    assert len(lines) == n  # the thread has stopped with the block
    quiet = []
    with parallel.heartbeat(None, lambda: quiet.append("x") or "x", every=0.01):
        time.sleep(0.05)
    assert quiet == []  # say=None: not even the line is built


@pytest.mark.sim
def test_parallel_verify_says_it_is_alive_while_work_items_run(tmp_path, monkeypatch):
    """verify on 2 workers, two simulating work items: "still running" lines while they run, none after."""
    text = SMALL_LADDER.split("[[claim]]")[1]
    path = tmp_path / "two.toml"
    path.write_text(
        "[[claim]]"
        + text
        + "\n[[claim]]"
        + text.replace('"small.ladder"', '"small.ladder_tau3"').replace("tau = 2", "tau = 3")
    )
    claims = claimfile.load_file(str(path))
    assert len(schedule(claims, [0, 1])) == 2  # two work items: they go to the process pool
    monkeypatch.setattr(cost, "ANNOUNCE_SECONDS", 0.0)  # announce (and beat) however short the work
    monkeypatch.setattr(runner_mod, "heartbeat", functools.partial(parallel.heartbeat, every=0.05))
    real = runner_mod.map_sweep

    def slow_sweep(*a, **k):
        time.sleep(0.5)  # long work items, as seen from the parent
        return real(*a, **k)

    monkeypatch.setattr(runner_mod, "map_sweep", slow_sweep)
    said = []
    results = run_claims(claims, tier="full", jobs=2, progress=said.append)
    assert [r.verdict for r in results] == ["holds", "holds"], [r.detail for r in results]
    beats = [s for s in said if "work items done after" in s]
    assert beats and beats[0].startswith(
        "verify --tier full: 2 simulation claim(s) on 2 processes: 0/2 work items done after "
    )
    assert all(b.endswith("; still running") and "(announced " in b for b in beats)
    n = len(said)
    time.sleep(0.2)
    assert len(said) == n  # the heartbeat ended with the run
