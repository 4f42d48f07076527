"""The per-seed simulation cache (icl_symbolic.simulation.cache): keyed by every input, resumable.

A deep verification run takes hours; a killed run must continue from the seeds it
stored, and a stored seed must never be reused for a different setting or after the
simulator's source changed.
"""

import json

import pytest

from icl_symbolic.cli import main
from icl_symbolic.core import caches
from icl_symbolic.simulation import cache as simcache
from icl_symbolic.verification import runner
from icl_symbolic.verification.checks import simulation as checks_simulation

from _claims import small_ladder_claims


def _claim(tmp_path):
    """A real ladder d = 6, 8, 10 with 12 / 10 / 10 seeds (tests/_claims.py)."""
    return small_ladder_claims(tmp_path)[0]


def test_key_changes_with_every_input_and_the_seed():
    base = {"f": "g", "rho": 0.1, "d": 8, "tasks": "gaussian"}
    keys = {simcache.seed_key(base, 1)}
    for k, v in (("f", "tanh(g)"), ("rho", 0.2), ("d", 9), ("tasks", "sphere")):
        keys.add(simcache.seed_key(dict(base, **{k: v}), 1))
    keys.add(simcache.seed_key(base, 2))
    assert len(keys) == 6


def test_digest_covers_the_simulator_source(monkeypatch, tmp_path):
    """Editing a simulator module changes every key (no stale numbers after a code change)."""
    before = simcache.simulator_digest()
    fake_root = tmp_path / "pkg"
    fake_root.mkdir()
    from pathlib import Path

    real = Path(simcache.__file__).resolve().parent.parent
    for name in simcache.SIMULATOR_MODULES:
        (fake_root / f"{name}.py").parent.mkdir(parents=True, exist_ok=True)
        (fake_root / f"{name}.py").write_bytes((real / f"{name}.py").read_bytes())
    edited = fake_root / "simulation" / "simulator.py"
    edited.write_bytes(edited.read_bytes() + b"\n# edited\n")
    monkeypatch.setattr(simcache, "__file__", str(fake_root / "simulation" / "cache.py"))
    simcache.simulator_digest.cache_clear()
    try:
        assert simcache.simulator_digest() != before
    finally:
        monkeypatch.undo()
        simcache.simulator_digest.cache_clear()
    assert simcache.simulator_digest() == before


def test_a_record_for_another_setting_is_not_read(tmp_path):
    c = simcache.SeedCache(tmp_path)
    c.put({"d": 8}, 3, {"e": 1.0})
    path = next(tmp_path.glob("*/*.json"))
    rec = json.loads(path.read_text())
    rec["setting"] = {"d": 9}  # a (hypothetical) key collision must not be trusted
    path.write_text(json.dumps(rec))
    assert c.get({"d": 8}, 3) is None
    path.write_text("{not json")  # a damaged file is a miss, not a crash
    assert c.get({"d": 8}, 3) is None


def _counting(real, log):
    """``real`` (the simulate the check calls), logging (d, number of seeds) of each call in ``log``."""

    def counting(*a, **kw):
        log.append((kw["d"], len(kw["seeds"])))
        return real(*a, **kw)

    return counting


@pytest.mark.heavy
def test_a_killed_run_resumes_from_its_stored_seeds(tmp_path, monkeypatch):
    """The run is killed after the first d of the ladder; the rerun simulates only what is missing
    and gives exactly the numbers of an uninterrupted run."""
    claim = _claim(tmp_path)
    cache = tmp_path / "cache"
    real = checks_simulation.simulate
    calls = []

    def killed_after_first(*a, **kw):
        if calls:
            raise KeyboardInterrupt
        calls.append((kw["d"], kw["seeds"]))
        return real(*a, **kw)

    caches.clear("simulation")
    monkeypatch.setattr(checks_simulation, "simulate", killed_after_first)
    with pytest.raises(KeyboardInterrupt):
        runner.run_claim(claim, cache=cache)
    assert len(simcache.SeedCache(cache)) == 12  # the 12 seeds of d = 6 were stored

    caches.clear("simulation")  # a new process: nothing in memory
    resumed = []
    monkeypatch.setattr(checks_simulation, "simulate", _counting(real, resumed))
    r = runner.run_claim(claim, cache=cache)
    assert sorted(resumed) == [(8, 10), (10, 10)]  # d = 6 came from the folder
    caches.clear("simulation")
    monkeypatch.setattr(checks_simulation, "simulate", real)
    fresh = runner.run_claim(claim)  # no cache at all
    assert r.verdict == fresh.verdict
    assert float(r.computed.value) == float(fresh.computed.value)
    assert float(r.computed.stderr) == float(fresh.computed.stderr)


def test_verify_refuses_an_unusable_cache_folder_before_any_work(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["verify", "--full", "--only", "setup.ridge_normalisation", "--cache", str(blocker / "sub")])
    out, err = capsys.readouterr()
    assert code == 2 and "cache folder" in err and out == ""


def test_seeds_are_stored_chunk_by_chunk_within_one_d(tmp_path, monkeypatch):
    """With a cache folder, one d's seeds are simulated in chunks of about STORE_EVERY seconds, each
    stored as soon as it is done: a run killed in the middle of the first d keeps the chunks it
    finished, the rerun simulates only the rest, and the numbers are those of an uninterrupted run.
    The chunks report progress (seeds simulated and stored, with an ETA)."""
    from icl_symbolic.core import cost

    claim = _claim(tmp_path)
    cache = tmp_path / "cache"
    real = checks_simulation.simulate
    monkeypatch.setattr(checks_simulation, "STORE_EVERY", 1e-9)  # a chunk per seed (one worker)
    monkeypatch.setattr(cost, "ANNOUNCE_SECONDS", 0.0)
    monkeypatch.setattr(cost, "PROGRESS_EVERY", 0.0)
    calls = []

    def killed_after_three(*a, **kw):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append((kw["d"], tuple(kw["seeds"])))
        return real(*a, **kw)

    caches.clear("simulation")
    monkeypatch.setattr(checks_simulation, "simulate", killed_after_three)
    lines = []
    with pytest.raises(KeyboardInterrupt):
        runner.run_claim(claim, progress=lines.append, cache=cache)
    assert [d for d, _ in calls] == [6, 6, 6] and all(len(c) == 1 for _, c in calls)
    assert len(simcache.SeedCache(cache)) == 3  # three seeds of d = 6 kept
    assert any("seeds simulated and stored" in ln and "left" in ln for ln in lines), lines

    caches.clear("simulation")
    resumed = []
    monkeypatch.setattr(checks_simulation, "simulate", _counting(real, resumed))
    r = runner.run_claim(claim, cache=cache)
    assert sum(n for d, n in resumed if d == 6) == 12 - 3 and sum(n for _, n in resumed) == 12 - 3 + 10 + 10
    caches.clear("simulation")
    monkeypatch.setattr(checks_simulation, "simulate", real)
    monkeypatch.setattr(checks_simulation, "STORE_EVERY", 60.0)
    fresh = runner.run_claim(claim)  # no cache: one simulate call per d
    assert float(r.computed.value) == float(fresh.computed.value)
    assert float(r.computed.stderr) == float(fresh.computed.stderr)
