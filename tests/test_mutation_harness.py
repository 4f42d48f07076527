"""benchmarks/mutation_harness.py: library mutations are caught by the claims expected to catch
them, a clean run is clean (negative control), and every mutation is undone.

The whole table (every mutation, every shipped claim) is in docs/benchmarks.md, "Mutation
harness"; here three cheap mutations run against a few quick claims.
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
        assert float(theory.e_linear("identity", None, rho=0.1, alpha=2, kappa=2, tau=3)) == pytest.approx(
            1.005 * e0, rel=1e-12
        )
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
