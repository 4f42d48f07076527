"""benchmarks/mutation_harness.py: library mutations are caught by the claims expected to catch
them, a clean run is clean (negative control), and every mutation is undone.

The whole table (every mutation, every shipped claim) is benchmarks/results/mutations/mutations_quick.md
(docs/benchmarks.md, "Mutation harness"); here three cheap mutations run against a few quick claims.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from icl_symbolic.core.caches import registered as registered_caches
from icl_symbolic.theory import a1zero
from icl_symbolic.theory import asymptotic as theory
from icl_symbolic.verification import registry

ROOT = Path(__file__).resolve().parent.parent


def _harness():
    spec = importlib.util.spec_from_file_location("mutation_harness", ROOT / "benchmarks" / "mutation_harness.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutation_harness", mod)
    spec.loader.exec_module(mod)
    return mod


mh = _harness()
BY_NAME = {m.name: m for m in mh.MUTATIONS}

#: claims the three mutations below are expected to trip, plus two that must not trip
CLAIMS = [
    "coverage.eq11_limit_function_*",
    "notes.a1zero_tau_two",
    "notes.a1zero_tau_half",
    "coverage.coeffs_noise_normalized_sin",
]


@pytest.fixture(scope="module")
def clean():
    mh.import_library()
    mh.clear_caches()
    return mh.run(mh.load(CLAIMS), "quick")


@pytest.mark.heavy
def test_clean_run_is_clean(clean):
    """Negative control: without a mutation every selected claim has its expected verdict."""
    assert sorted(clean) == [
        "coverage.coeffs_noise_normalized_sin",
        "coverage.eq11_limit_function_above",
        "coverage.eq11_limit_function_below",
        "notes.a1zero_tau_half",
        "notes.a1zero_tau_two",
    ]
    assert all(r.ok for r in clean.values()), {k: r.detail for k, r in clean.items() if not r.ok}


@pytest.mark.heavy
@pytest.mark.parametrize(
    "name, caught_by",
    [
        ("eq11_limit_drop_a1sq", {"coverage.eq11_limit_function_below"}),
        ("a1zero_eq10_drop_tau", {"notes.a1zero_tau_two"}),  # tau > 1 only: tau_half stays ok
        ("hermite_noise_not_over_a1sq", {"coverage.coeffs_noise_normalized_sin"}),
    ],
)
def test_mutation_is_caught_by_the_expected_claim(clean, name, caught_by):
    probes = {BY_NAME[name].probe: mh.measure(mh.PROBES[BY_NAME[name].probe])}
    rec = mh.run_mutation(BY_NAME[name], "quick", clean, probes, CLAIMS, smoke=True)  # smoke: its own tests (none)
    assert "error" not in rec, rec.get("error")
    assert {f["id"] for f in rec["failed"]} == caught_by
    assert rec["caught"] == {"quick": True, "tests": False} and rec["status"] == "caught"
    assert abs(rec["paper_number"]["rel_change"]) > 0.01  # each moves its number by far more than 1 %


def test_installed_patches_every_lookup_site_and_restores_it():
    m = BY_NAME["linear_theory_x1.005"]
    before = (theory._error, theory.e_linear_isotropic, registry.THEORY_FUNCTIONS["e_linear_isotropic"])
    e0 = theory.e_linear_isotropic(0.1, 2, 2, 3)
    with mh.installed(m.patches) as sites:
        assert "icl_symbolic.verification.registry.THEORY_FUNCTIONS['e_linear_isotropic']" in sites
        assert registry.THEORY_FUNCTIONS["e_linear_isotropic"](0.1, 2, 2, 3) == pytest.approx(1.005 * e0, rel=1e-14)
        assert float(
            theory.e_linear(
                theory.Ratios(rho=0.1, alpha=2, kappa=2, tau=3), theory.TaskCovariances(C_train="identity", C_test=None)
            )
        ) == pytest.approx(1.005 * e0, rel=1e-12)
    assert (theory._error, theory.e_linear_isotropic, registry.THEORY_FUNCTIONS["e_linear_isotropic"]) == before
    assert theory.e_linear_isotropic(0.1, 2, 2, 3) == e0


def test_source_edit_mutant_is_restored_even_after_an_exception():
    orig = a1zero.e_a1zero
    with pytest.raises(RuntimeError):
        with mh.installed(BY_NAME["a1zero_eq10_drop_tau"].patches):
            assert theory.e_a1zero is not orig and theory.e_a1zero(1.0, tau=2.0) == pytest.approx(1.0)
            raise RuntimeError("boom")
    assert a1zero.e_a1zero is orig and theory.e_a1zero is orig and registry.THEORY_FUNCTIONS["e_a1zero"] is orig
    assert theory.e_a1zero(1.0, tau=2.0) == pytest.approx(2.0)


def test_every_mutation_installs_against_the_current_library():
    """A source edit whose text no longer occurs exactly once fails here, not silently in the table."""
    mh.import_library()
    for m in mh.MUTATIONS:
        with mh.installed(m.patches) as sites:
            assert sites, m.name


def test_a_mutation_whose_edit_is_gone_is_reported_not_installed():
    bad = mh.Mutation(
        "gone",
        "-",
        "-",
        (mh.Patch("icl_symbolic.theory.asymptotic", "task_diversity_limit", mh.source_edit(("no such text", "x"))),),
        "eq11_limit_kappa2",
    )
    rec = mh.run_mutation(bad, "quick", {}, {}, ["notes.a1zero_tau_two"])
    assert "no such text" in rec["error"] and rec["failed"] == []
    assert registry.THEORY_FUNCTIONS["task_diversity_limit"] is theory.task_diversity_limit


def test_simulator_mutations_run_on_empty_simulation_caches_and_get_the_clean_ones_back():
    """A simulator mutation must not reuse clean simulations, and must not leave its own behind;
    a theory mutation keeps them (clear_caches(keep_simulations=True))."""
    mh.import_library()
    caches = tuple(c.store for c in registered_caches("simulation"))
    assert len(caches) == 2  # the simulation and kernel-learner check kinds
    saved = [dict(c) for c in caches]
    try:
        for c in caches:  # earlier tests in this process may have filled them
            c.clear()
            c["clean"] = "clean simulation"
        mh.clear_caches(keep_simulations=True)
        assert all(c.get("clean") == "clean simulation" for c in caches)
        with mh.fresh_simulations():
            assert all(not c for c in caches)
            for c in caches:
                c["mutant"] = "simulated under the mutation"
        assert all(c == {"clean": "clean simulation"} for c in caches)
        mh.clear_caches(keep_simulations=False)
        assert all(not c for c in caches)
    finally:
        for c, s in zip(caches, saved):
            c.clear()
            c.update(s)


def _fake_claim_result(cid, verdict, ok):
    from types import SimpleNamespace

    claim = SimpleNamespace(id=cid, tier="quick", full=False, evidence="independent")
    return SimpleNamespace(claim=claim, verdict=verdict, ok=ok, detail=f"{cid}: {verdict}", zscore=None)


@pytest.mark.parametrize(
    "claims, tests, probe, status",
    [
        ({"c.value": ("mismatch", False)}, {}, {"value": 2.0}, "caught"),
        ({"c.err": ("error", False)}, {}, {"value": 2.0}, "not caught (errors only)"),
        ({}, {"t::v": {"outcome": "value", "message": "AssertionError"}}, {"value": 2.0}, "caught"),
        ({}, {"t::e": {"outcome": "error", "message": "ICLError: guard"}}, {"value": 2.0}, "not caught (errors only)"),
        ({}, {"_crash": "Segmentation fault"}, {"value": 2.0}, "crashed"),
        ({"c.value": ("mismatch", False)}, {}, {"error": "ZeroDivisionError"}, "crashed"),
        ({"c.value": ("holds", True)}, {"t::v": {"outcome": "passed", "message": ""}}, {"value": 1.0}, "not caught"),
    ],
)
def test_a_mutation_is_caught_only_on_a_value(monkeypatch, claims, tests, probe, status):
    """Claims in error, tests raising anything but an assertion, never count; a crash is reported as such."""
    results = {cid: _fake_claim_result(cid, v, ok) for cid, (v, ok) in claims.items()}
    clean = {cid: _fake_claim_result(cid, "holds", True) for cid in claims}
    clean_tests = {k: {"outcome": "passed"} for k in tests if not k.startswith("_")}
    monkeypatch.setattr(mh, "_claims_under", lambda *a, **k: (["site"], results, probe))
    monkeypatch.setattr(mh, "run_tests", lambda name, sel: tests)
    m = BY_NAME["reproduce_std_as_se"]
    rec = mh.run_mutation(m, "quick", clean, {m.probe: {"value": 1.0}}, clean_tests=clean_tests, smoke=True)
    assert rec["status"] == status, rec
    assert (rec["status"] == "caught") == bool(rec["failed"] or rec["tests_caught"]) or rec["status"] == "crashed"


def test_a_test_that_failed_when_clean_cannot_catch(monkeypatch):
    monkeypatch.setattr(mh, "_claims_under", lambda *a, **k: ([], {}, {"value": 2.0}))
    monkeypatch.setattr(mh, "run_tests", lambda name, sel: {"t::v": {"outcome": "value", "message": ""}})
    m = BY_NAME["reproduce_std_as_se"]
    rec = mh.run_mutation(m, None, {}, {m.probe: {"value": 1.0}}, clean_tests={"t::v": {"outcome": "value"}})
    assert rec["status"] == "not caught" and rec["tests_caught"] == []


@pytest.mark.heavy
def test_the_test_runner_tells_an_assertion_from_an_error(tmp_path):
    """The subprocess pytest run records an AssertionError as ``value`` and any other exception as ``error``."""
    f = ROOT / "tests" / "_mh_probe_tmp_test.py"
    f.write_text(
        "def test_value():\n    assert 1 == 2\n\n"
        "def test_error():\n    raise ValueError('guard')\n\n"
        "def test_ok():\n    assert True\n",
        encoding="utf-8",
    )
    try:
        res = mh.run_tests(mh.CLEAN, [str(f.relative_to(ROOT))])
    finally:
        f.unlink()
    outcomes = {k.split("::")[-1]: v["outcome"] for k, v in res.items()}
    assert outcomes == {"test_value": "value", "test_error": "error", "test_ok": "passed"}


def test_every_smoke_mutation_names_tests_that_exist():
    import re

    names = set(re.findall(r"^def (test_\w+)", (ROOT / "tests" / "test_library_pins.py").read_text(), re.M))
    smoke = [m for m in mh.MUTATIONS if m.smoke]
    assert 3 <= len(smoke) <= 5
    for m in smoke:
        assert m.tests, m.name
        for t in m.tests:
            path, _, name = t.partition("::")
            assert (ROOT / path).exists() and name.split("[")[0] in names, t
