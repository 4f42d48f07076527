"""The per-seed simulation cache (icl_symbolic.simulation.cache): keyed by every input, resumable.

A deep verification run takes hours; a killed run must continue from the seeds it
stored, and a stored seed must never be reused for a different setting or after the
simulator's source changed.
"""

import json

import pytest

from icl_symbolic.cli import main
from icl_symbolic.core import caches, sources
from icl_symbolic.simulation import cache as simcache
from icl_symbolic.studies import ladder_runs
from icl_symbolic.verification import runner

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


def _package_copy(tmp_path, extra=("icl_symbolic.cli", "icl_symbolic.cli.simulate")):
    """A copy of the package's digested modules and the ``extra`` ones under tmp_path/icl_symbolic
    (the rest of the package plays no part in the key)."""
    real = simcache.package_root()
    copy = tmp_path / "icl_symbolic"
    names = [*simcache.digested_modules(), *extra]
    for name in names:
        src = real.joinpath(*name.split(".")[1:])
        src = src / "__init__.py" if src.is_dir() else src.with_suffix(".py")
        dst = copy / src.relative_to(real)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
    return copy


def _edit(path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} not found once in {path}"  # the planted edit really happens
    path.write_text(text.replace(old, new))


def _digest_of(root, monkeypatch) -> str:
    monkeypatch.setattr(simcache, "package_root", lambda: root)
    simcache.simulator_digest.cache_clear()
    simcache.digested_modules.cache_clear()
    try:
        return simcache.simulator_digest()
    finally:
        monkeypatch.undo()
        simcache.simulator_digest.cache_clear()
        simcache.digested_modules.cache_clear()


def test_the_key_covers_every_module_a_stored_number_depends_on():
    """The digested modules are the import closure of the producers: the modules the old hand
    list missed (moments, setting, the generated Lemma 1 forms) are in it; the command line,
    the theory (the simulation must not lean on it) and the verification machinery are not."""
    from icl_symbolic.simulation import simulator

    mods = simcache.digested_modules()
    assert simulator.simulate.__module__ in simcache.PRODUCERS
    assert simulator.seed_error.__module__ in simcache.PRODUCERS
    for name in ("model.moments", "model.setting", "model._lemma1_forms", "model.gamma_error", "simulation.matfree"):
        assert f"icl_symbolic.{name}" in mods, name
    assert not any(m.split(".")[1] in ("cli", "api", "theory", "verification", "studies") for m in mods if "." in m)


def test_the_closure_equals_the_import_graph():
    """The run-time parser finds the same modules as grimp's import graph (a test dependency),
    plus the packages' __init__ files that importing a module executes."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("icl_symbolic", exclude_type_checking_imports=True)
    for root in simcache.PRODUCERS:
        expected = set(graph.find_upstream_modules(root)) | {root}
        got = set(sources.import_closure(simcache.package_root(), "icl_symbolic", [root]))
        root_dir = simcache.package_root()
        packages = {m for m in got if root_dir.joinpath(*m.split(".")[1:], "__init__.py").is_file()}
        # icl_symbolic/__init__.py runs (and imports _version) whenever any module is imported
        assert got - packages - {"icl_symbolic._version"} == expected - packages
        assert expected <= got


def test_an_edit_of_model_moments_makes_the_cache_miss(tmp_path, monkeypatch):
    """A 0.5 % slip planted in model/moments.py (a copy of the package) changes the key, so a
    stored seed is not read; an edit of the command line keeps it."""
    store = simcache.SeedCache(tmp_path / "cache")
    setting = {"f": "g", "d": 8}
    pristine = _package_copy(tmp_path / "a")
    base = _digest_of(pristine, monkeypatch)
    assert base == simcache.simulator_digest()  # the copy digests like the installed package

    monkeypatch.setattr(simcache, "package_root", lambda: pristine)
    simcache.simulator_digest.cache_clear()
    store.put(setting, 1, {"e": 0.5})
    assert store.get(setting, 1)["e"] == 0.5
    monkeypatch.undo()

    edited = _package_copy(tmp_path / "b")
    _edit(
        edited / "model" / "moments.py",
        "M[self.d, self.d] = float(self.E_s2)",
        "M[self.d, self.d] = 1.005 * float(self.E_s2)",
    )
    unrelated = _package_copy(tmp_path / "c")
    _edit(unrelated / "cli" / "simulate.py", '"""``icl-symbolic simulate``', '"""Edited. ``icl-symbolic simulate``')
    assert _digest_of(edited, monkeypatch) != base
    assert _digest_of(unrelated, monkeypatch) == base

    for root, hit in ((edited, False), (unrelated, True)):
        monkeypatch.setattr(simcache, "package_root", lambda root=root: root)
        simcache.simulator_digest.cache_clear()
        assert (store.get(setting, 1) is not None) is hit
        monkeypatch.undo()
    simcache.simulator_digest.cache_clear()


def test_a_new_import_joins_the_key(tmp_path, monkeypatch):
    """A module the simulator starts to import (here engine/hermite, which it does not import
    today, in a function body) enters the closure without anyone editing a list; an import under TYPE_CHECKING does not."""
    copy = _package_copy(tmp_path, extra=("icl_symbolic.engine.hermite", "icl_symbolic.studies.compare"))
    path = copy / "simulation" / "matfree.py"
    path.write_text(path.read_text() + "\n\ndef _late():\n    from icl_symbolic.engine import hermite\n")
    got = sources.import_closure(copy, "icl_symbolic", simcache.PRODUCERS)
    assert "icl_symbolic.engine.hermite" in got and "icl_symbolic.engine.hermite" not in simcache.digested_modules()
    path.write_text(path.read_text() + "\nif TYPE_CHECKING:\n    from icl_symbolic.studies import compare\n")
    assert "icl_symbolic.studies.compare" not in sources.import_closure(copy, "icl_symbolic", simcache.PRODUCERS)


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
    """``real`` (the simulate the ladder's runner calls, one per (d, seed)), logging (d, number of seeds)
    of each call in ``log``."""

    def counting(st, **kw):
        log.append((st.d, len(kw["seeds"])))
        return real(st, **kw)

    return counting


@pytest.mark.heavy
def test_a_killed_run_resumes_from_its_stored_seeds(tmp_path, monkeypatch):
    """The run is killed after the first d of the ladder; the rerun simulates only what is missing
    and gives exactly the numbers of an uninterrupted run."""
    claim = _claim(tmp_path)
    cache = tmp_path / "cache"
    real = ladder_runs.simulate

    def killed_after_first(st, **kw):
        if st.d != 6:
            raise KeyboardInterrupt
        return real(st, **kw)

    caches.clear("simulation")
    monkeypatch.setattr(ladder_runs, "simulate", killed_after_first)
    with pytest.raises(KeyboardInterrupt):
        runner.run_claim(claim, cache=cache)
    assert len(simcache.SeedCache(cache)) == 12  # the 12 seeds of d = 6 were stored

    caches.clear("simulation")  # a new process: nothing in memory
    resumed = []
    monkeypatch.setattr(ladder_runs, "simulate", _counting(real, resumed))
    r = runner.run_claim(claim, cache=cache)
    assert sorted(resumed) == [(8, 1)] * 10 + [(10, 1)] * 10  # d = 6 came from the folder
    caches.clear("simulation")
    monkeypatch.setattr(ladder_runs, "simulate", real)
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
    real = ladder_runs.simulate
    monkeypatch.setattr(ladder_runs, "STORE_EVERY", 1e-9)  # a chunk per seed (one worker)
    monkeypatch.setattr(cost, "ANNOUNCE_SECONDS", 0.0)
    monkeypatch.setattr(cost, "PROGRESS_EVERY", 0.0)
    calls = []

    def killed_after_three(st, **kw):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append((st.d, tuple(kw["seeds"])))
        return real(st, **kw)

    caches.clear("simulation")
    monkeypatch.setattr(ladder_runs, "simulate", killed_after_three)
    lines = []
    with pytest.raises(KeyboardInterrupt):
        runner.run_claim(claim, progress=lines.append, cache=cache)
    assert [d for d, _ in calls] == [6, 6, 6] and all(len(c) == 1 for _, c in calls)
    assert len(simcache.SeedCache(cache)) == 3  # three seeds of d = 6 kept
    assert any("runs (d, seed)" in ln and "left" in ln for ln in lines), lines

    caches.clear("simulation")
    resumed = []
    monkeypatch.setattr(ladder_runs, "simulate", _counting(real, resumed))
    r = runner.run_claim(claim, cache=cache)
    assert sum(n for d, n in resumed if d == 6) == 12 - 3 and sum(n for _, n in resumed) == 12 - 3 + 10 + 10
    caches.clear("simulation")
    monkeypatch.setattr(ladder_runs, "simulate", real)
    monkeypatch.setattr(ladder_runs, "STORE_EVERY", 60.0)
    fresh = runner.run_claim(claim)  # no cache: one map over the seeds of each d
    assert float(r.computed.value) == float(fresh.computed.value)
    assert float(r.computed.stderr) == float(fresh.computed.stderr)
