"""Claim files: loading, validation errors, tolerance logic, verdicts (icl_symbolic.verification).

Paper: every claim file transcribes a unit of arXiv:2610.10761 (docs/claims-format.md).
"""

import textwrap

import pytest
import sympy

from icl_symbolic.core import caches
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.values import Value
from icl_symbolic.theory.asymptotic import Ratios
from icl_symbolic.verification import claimfile, judge, runner
from icl_symbolic.verification.checks import REGISTRY
from icl_symbolic.verification.registry import Outcome

GOOD = """
[unit]
title = "test unit"

[defaults]
f = "g^3"
rho = "0"

[[claim]]
id = "t.a1_g3"
source = "Sec. 2, Eq. (2), p. 2"
statement = 'a_1 = 3'
method = "symbolic"
check = "hermite_value"
evidence = "derivation"
quantity = "a1"
claimed = "3"
tolerance = { exact = true, reason = "exact" }
expected = "holds"
"""


def write(tmp_path, text, name="c.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def test_load_good_file(tmp_path):
    (c,) = claimfile.load_file(write(tmp_path, GOOD))
    assert c.id == "t.a1_g3" and c.check == "hermite_value" and c.expected == "holds"
    assert c.params["f"] == "g^3"  # inherited from [defaults]
    assert c.parsed["claimed"] == 3
    assert c.tolerance.kind == "exact" and c.unit == "test unit"


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda s: s.replace('id = "t.a1_g3"\n', ""), "missing required key 'id'"),
        (lambda s: s.replace('source = "Sec. 2, Eq. (2), p. 2"\n', ""), "missing required key 'source'"),
        (lambda s: s.replace('"hermite_value"', '"no_such_check"'), "unknown check 'no_such_check'"),
        (lambda s: s.replace('method = "symbolic"', 'method = "guess"'), "method 'guess' is not one of"),
        (lambda s: s.replace('evidence = "derivation"\n', ""), "missing required key 'evidence'"),
        (lambda s: s.replace('evidence = "derivation"', 'evidence = "proof"'), "evidence 'proof' is not one of"),
        (lambda s: s.replace('evidence = "derivation"', 'evidence = "self-test"'), "needs 'evidence_reason'"),
        (lambda s: s.replace('evidence = "derivation"', 'evidence = "consistency"'), "needs 'evidence_reason'"),
        (
            lambda s: s.replace('evidence = "derivation"', 'evidence = "derivation"\nevidence_reason = 3'),
            "'evidence_reason' must be a non-empty string",
        ),
        (
            lambda s: s.replace('evidence = "derivation"', 'evidence = "self-test"\nevidence_reason = "  "'),
            "'evidence_reason' must be a non-empty string",
        ),
        (lambda s: s.replace('expected = "holds"', 'expected = "maybe"'), "expected must be 'holds' or 'mismatch'"),
        (lambda s: s.replace('claimed = "3"', 'claimed = "3 +"'), "claimed = '3 +'"),
        (lambda s: s.replace('quantity = "a1"', 'quantity = "__import__(1)"'), "quantity = '__import__(1)'"),
        (lambda s: s.replace('quantity = "a1"', 'quantity = "a1 + zeta"'), "quantity = 'a1 + zeta'"),
        (lambda s: s.replace('quantity = "a1"', 'quantity = "a1"\ncolour = "red"'), "unknown key(s) colour"),
        (
            lambda s: s.replace('tolerance = { exact = true, reason = "exact" }', "tolerance = { exact = true }"),
            "tolerance needs a 'reason'",
        ),
        (lambda s: s.replace('tolerance = { exact = true, reason = "exact" }', ""), "missing 'tolerance'"),
        (
            lambda s: s.replace('{ exact = true, reason = "exact" }', '{ abs = -1, reason = "x" }'),
            "must be a positive finite number",
        ),
        (
            lambda s: s.replace('{ exact = true, reason = "exact" }', '{ z = 3.29, reason = "x" }'),
            "a z tolerance is for method 'mc' or 'sim'",
        ),
        (lambda s: s.replace('expected = "holds"', 'expected = "mismatch"'), "needs 'diagnosis'"),
        (
            lambda s: s.replace('expected = "holds"', 'expected = "mismatch"\ndiagnosis = "a1 + nope"'),
            "diagnosis 'a1 + nope'",
        ),
        (lambda s: s.replace('method = "symbolic"', 'method = "sim"'), "must set full = true"),
        (lambda s: s.replace('id = "t.a1_g3"', 'id = "bad id!"'), "id may only contain"),
        (lambda s: s + "\n[[claim]]\n" + s.split("[[claim]]")[1], "duplicate id"),
        (lambda s: s.replace("[[claim]]", "[[claims]]"), "unknown top-level key(s) claims"),
        (lambda s: s.replace('expected = "holds"', 'expected = "holds'), "not valid TOML"),
    ],
)
def test_malformed_file_names_file_claim_and_problem(tmp_path, mutate, message):
    p = write(tmp_path, mutate(GOOD))
    with pytest.raises(ICLError) as exc:
        claimfile.load_file(p)
    text = str(exc.value)
    assert str(p) in text
    assert message in text
    assert "\n" not in text
    if "TOML" not in message and "top-level" not in message:
        assert "claim" in text


@pytest.mark.parametrize("kind", ["self-test", "consistency"])
def test_uncounted_kind_without_reason_names_the_claim(tmp_path, kind):
    p = write(tmp_path, GOOD.replace('evidence = "derivation"', f'evidence = "{kind}"'))
    with pytest.raises(ICLError) as exc:
        claimfile.load_file(p)
    assert f"claim 't.a1_g3': evidence '{kind}' needs 'evidence_reason'" in str(exc.value)


def test_evidence_reason_is_loaded_and_carried_into_json(tmp_path):
    """The reason is optional for counted kinds, whitespace-normalised, and null in JSON when absent."""
    text = GOOD.replace(
        'evidence = "derivation"', 'evidence = "self-test"\nevidence_reason = """checks our\n   Hermite code"""'
    )
    (c,) = claimfile.load_file(write(tmp_path, text))
    assert c.evidence == "self-test" and c.evidence_reason == "checks our Hermite code"
    js = runner.run_claim(c).to_json()
    assert js["evidence"] == "self-test" and js["evidence_reason"] == "checks our Hermite code"
    (plain,) = claimfile.load_file(write(tmp_path, GOOD, "plain.toml"))
    assert plain.evidence_reason == "" and runner.run_claim(plain).to_json()["evidence_reason"] is None


def test_duplicate_id_across_files(tmp_path):
    a = write(tmp_path, GOOD, "a.toml")
    b = write(tmp_path, GOOD, "b.toml")
    with pytest.raises(ICLError, match="already used in"):
        claimfile.load_claims([str(a), str(b)])


def test_missing_file_and_empty_glob(tmp_path):
    with pytest.raises(ICLError, match="does not exist"):
        claimfile.load_claims([str(tmp_path / "nope.toml")])
    with pytest.raises(ICLError, match="no claim files match"):
        claimfile.load_claims([str(tmp_path / "*.toml")])


def test_select_exact_glob_and_unknown():
    claims = claimfile.load_claims()
    assert [c.id for c in claimfile.select(claims, ["lemma1.E_hh"])] == ["lemma1.E_hh"]
    many = claimfile.select(claims, ["lemma1.*"])
    assert len(many) >= 4 and all(c.id.startswith("lemma1.") for c in many)
    with pytest.raises(ICLError, match="unknown claim id 'lemma1.nope'"):
        claimfile.select(claims, ["lemma1.nope"])


def test_shipped_claims_are_complete():
    """Every shipped claim has id, source with a page, statement, method, tolerance reason, expected."""
    claims = claimfile.load_claims()
    assert len(claims) >= 50
    files = {c.file for c in claims}
    assert len(files) == len(claimfile.default_files()) >= 11
    for c in claims:
        assert "p." in c.source, c.id
        assert c.statement and c.tolerance.reason
        assert c.method in claimfile.METHODS and c.expected in claimfile.EXPECTED
        if c.method == "sim":
            assert c.tier != "quick"
        if c.expected == "mismatch":
            assert c.diagnosis and c.why
    ids = {c.id for c in claims}
    assert {
        "fig1.caption_noise",
        "fig1.unnormalised_mse",
        "fig1.legend_noise",
        "fig1.offset_exactly_one",
        "fig1.sim_unnormalised",
    } <= ids
    # the study notes' worked numbers are all transcribed
    texts = " ".join(str(c.params.get("claimed", "")) for c in claims)
    for number in ("0.164453", "0.447029", "1.447029", "0.605706", "0.394294", "0.127415", "0.027415"):
        assert number in texts, number
    assert any(c.params.get("claimed") == "10*rho_nonlinear" for c in claims)
    assert any(c.params.get("claimed") == "2*rho_nonlinear" for c in claims)


# -- compare --------------------------------------------------------------------


def tol(kind, value=None, bias=None):
    return judge.Tolerance(kind, value, "test", bias)


def test_compare_exact():
    a = Value.from_exact(sympy.exp(-1))
    b = Value.from_exact(sympy.exp(-sympy.Rational(1, 2)) ** 2)
    assert judge.compare(a, b, tol("exact"))[0]
    bad = Value.from_exact(sympy.exp(-1) + sympy.Rational(1, 10**25))
    holds, res, _, _ = judge.compare(a, bad, tol("exact"))
    assert not holds and res != "0"


def test_compare_abs_and_rel():
    a = Value(0.447029376, "numeric")
    assert judge.compare(a, Value.from_exact(sympy.Rational(447, 1000)), tol("abs", 5e-4))[0]
    assert not judge.compare(a, Value.from_exact(sympy.Rational(446, 1000)), tol("abs", 5e-4))[0]
    assert judge.compare(Value(1.0 + 1e-10, "numeric"), Value(1.0, "numeric"), tol("rel", 1e-9))[0]
    assert not judge.compare(Value(1.0 + 1e-8, "numeric"), Value(1.0, "numeric"), tol("rel", 1e-9))[0]


def test_compare_z_and_student_t():
    mc = Value(1.04, "mc", stderr=0.01, n_samples=10_000)
    ref = Value(1.0, "numeric")
    holds, _, z, _ = judge.compare(mc, ref, tol("z", 3.29))
    assert not holds and z == pytest.approx(4.0)
    assert judge.compare(Value(1.02, "mc", stderr=0.01), ref, tol("z", 3.29))[0]
    # a 4-seed simulation mean: the limit is the Student-t quantile with 3 dof (12.9), not 3.29
    sim = Value(1.05, "sim", stderr=0.01, n_samples=4)
    holds, _, z, text = judge.compare(sim, ref, tol("z", 3.29))
    assert holds and z == pytest.approx(5.0) and "Student-t" in text
    # bias budget
    assert judge.compare(Value(1.04, "mc", stderr=0.001), ref, tol("z", 3.29, 0.05))[0]
    assert not judge.compare(Value(1.06, "mc", stderr=0.001), ref, tol("z", 3.29, 0.05))[0]


def test_compare_z_needs_standard_error():
    with pytest.raises(ICLError, match="standard error"):
        judge.compare(Value(1.0, "numeric"), Value(1.0, "numeric"), tol("z", 3.29))


# -- running --------------------------------------------------------------------


def test_run_holds_and_mismatch(tmp_path):
    p = write(tmp_path, GOOD.replace('claimed = "3"', 'claimed = "2"'))
    (c,) = claimfile.load_file(p)
    r = runner.run_claim(c)
    assert r.verdict == "mismatch" and not r.ok and r.label == "FAILS"
    assert r.residual == "1"  # the exact symbolic difference 3 - 2
    (c,) = claimfile.load_file(write(tmp_path, GOOD, "g.toml"))
    r = runner.run_claim(c)
    assert r.verdict == "holds" and r.ok and r.residual == "0"


def test_expected_mismatch_needs_the_right_diagnosis(tmp_path):
    base = GOOD.replace('[defaults]\nf = "g^3"\nrho = "0"', '[defaults]\nf = "sin(g)"\nrho = "0.1"')
    base = base.replace('quantity = "a1"', 'quantity = "rho_nonlinear/a1^2"')
    base = base.replace('claimed = "3"', 'claimed = "1.447029"')
    base = base.replace('{ exact = true, reason = "exact" }', '{ abs = 5e-7, reason = "6 decimals" }')
    right = base.replace('expected = "holds"', 'expected = "mismatch"\ndiagnosis = "rho_f/a1^2"')
    (c,) = claimfile.load_file(write(tmp_path, right, "r.toml"))
    r = runner.run_claim(c)
    assert r.verdict == "mismatch" and r.ok, r.detail
    assert r.label == "mismatch found as expected"
    wrong = base.replace('expected = "holds"', 'expected = "mismatch"\ndiagnosis = "rho_f"')
    (c,) = claimfile.load_file(write(tmp_path, wrong, "w.toml"))
    r = runner.run_claim(c)
    assert r.verdict == "mismatch" and not r.ok and "Expected diagnosis 'rho_f'" in r.detail


def test_unavailable_module_is_reported_not_skipped(tmp_path, monkeypatch):
    kind = REGISTRY["hermite_value"]
    fake = type(kind)(kind.name, kind.func, kind.params, (("not_a_module", "a test stand-in"),), {}, kind.doc)
    monkeypatch.setitem(REGISTRY, "hermite_value", fake)
    (c,) = claimfile.load_file(write(tmp_path, GOOD))
    r = runner.run_claim(c)
    assert r.verdict == "unavailable" and not r.ok
    assert "needs icl_symbolic.not_a_module (a test stand-in)" in r.detail
    s = runner.summarize([r])
    assert s["unavailable"] == 1 and not s["ok"]
    assert "1 unavailable" in runner.summary_line(s)


def test_library_error_becomes_error_verdict(tmp_path, monkeypatch):
    kind = REGISTRY["hermite_value"]

    def boom(claim):
        raise ZeroDivisionError("x")

    monkeypatch.setitem(REGISTRY, "hermite_value", type(kind)(kind.name, boom, kind.params, (), {}, ""))
    (c,) = claimfile.load_file(write(tmp_path, GOOD))
    r = runner.run_claim(c)
    assert r.verdict == "error" and not r.ok and "ZeroDivisionError" in r.detail


def test_full_claims_are_skipped_explicitly_in_quick_mode(tmp_path, monkeypatch):
    kind = REGISTRY["hermite_value"]
    calls = []

    def fake(claim):
        calls.append(claim.id)
        return Outcome(computed=Value.from_exact(sympy.Integer(3)), claimed=Value.from_exact(sympy.Integer(3)))

    monkeypatch.setitem(REGISTRY, "hermite_value", type(kind)(kind.name, fake, kind.params, (), {}, ""))
    (c,) = claimfile.load_file(write(tmp_path, GOOD.replace('expected = "holds"', 'expected = "holds"\nfull = true')))
    (r,) = runner.run_claims([c], full=False)
    assert r.verdict == "skipped" and calls == []
    assert runner.summarize([r])["skipped"] == 1
    (r,) = runner.run_claims([c], full=True)
    assert r.verdict == "holds" and calls == ["t.a1_g3"]


SYMBOLIC = """
[[claim]]
id = "u.identity"
source = "user, p. 1"
statement = 'x'
method = "symbolic"
check = "symbolic_identity"
evidence = "derivation"
symbols = ["q", "tau", "rho_nl"]
assume = "positive"
lhs = "e_below"
rhs = "rho_nl/(1 - tau)"
where = { }
tolerance = { exact = true, reason = "symbolic" }
expected = "holds"
"""


def test_symbolic_identity_with_substitutions(tmp_path):
    """A user's own derivation step: e = q alpha/(1 - tau) with q = rho_nl/alpha (Eq. 10 style)."""
    text = SYMBOLIC.replace('["q", "tau", "rho_nl"]', '["q", "tau", "rho_nl", "alpha", "e_below"]')
    text = text.replace("where = { }", 'where = { e_below = "q*alpha/(1 - tau)", q = "rho_nl/alpha" }')
    (c,) = claimfile.load_file(write(tmp_path, text))
    r = runner.run_claim(c)
    assert r.verdict == "holds" and r.ok, r.detail
    (c,) = claimfile.load_file(write(tmp_path, text.replace('"q*alpha/(1 - tau)"', '"2*q*alpha/(1 - tau)"'), "m.toml"))
    r = runner.run_claim(c)
    assert r.verdict == "mismatch" and not r.ok
    assert r.residual == "-rho_nl/(tau - 1)" or "rho_nl" in r.residual


def test_enum_parameters_are_checked_at_load_time(tmp_path):
    text = SYMBOLIC.replace('assume = "positive"', 'assume = "complex"').replace("where = { }\n", "")
    text = text.replace('["q", "tau", "rho_nl"]', '["tau", "rho_nl", "e_below"]')
    with pytest.raises(ICLError, match="assume = 'complex': must be one of real, positive"):
        claimfile.load_file(write(tmp_path, text))
    bad_sym = SYMBOLIC.replace("where = { }\n", "")  # e_below is not a listed symbol
    with pytest.raises(ICLError, match="lhs = 'e_below'"):
        claimfile.load_file(write(tmp_path, bad_sym, "b.toml"))


# -- the simulation check, with the simulator replaced by a seeded stand-in -------------

SIM = """
[defaults]
f = "sin(g)"
rho = "0.1"

[[claim]]
id = "s.paired"
source = "Fig. 1, p. 4"
statement = 'x'
method = "sim"
full = true
check = "simulation"
evidence = "simulation"
d = 16
alpha = 2
kappa = 2
tau = 2
n_seeds = 10
versus = "simulation"
versus_f = "g"
versus_rho = "rho_nonlinear/a1^2"
scale = "a1^2"
plot = true
tolerance = { z = 3.29, reason = "test" }
expected = "holds"
"""


def _fake_simulate(table):
    """A stand-in for the check's per-seed simulated errors: ``table[f](seed)``."""
    import numpy as np

    def fake(st, seeds, progress=None, **kw):
        return np.array([table[st.f](s) for s in seeds], dtype=float)

    return fake


def test_simulation_check_pairs_seeds_and_diagnoses_a1_squared(tmp_path, monkeypatch):
    """Paired seeds: a common per-seed fluctuation cancels in the SE of the differences.

    The stand-in makes the nonlinear error exactly a1^2 = e^-1 times the linear one plus a
    large seed effect shared by both; the normalised claim must hold (tiny paired SE), the
    unnormalised one must be a mismatch whose per-seed ratio is diagnosed as a1^2.
    """
    import math

    from icl_symbolic.verification.checks import simulation as checks_simulation

    a1sq = math.exp(-1)
    shared = {s: 0.3 * math.sin(s) for s in range(20261007, 20261020)}  # common seed effect
    table = {"g": lambda s: 2.0 + shared[s], "sin(g)": lambda s: a1sq * (2.0 + shared[s]) * (1 + 1e-6 * (s % 3))}
    caches.clear("simulation")
    monkeypatch.setattr(checks_simulation, "_per_seed", _fake_simulate(table))
    (c,) = claimfile.load_file(write(tmp_path, SIM))
    r = runner.run_claim(c)
    assert r.verdict == "holds" and r.ok, r.detail
    assert r.computed.stderr < 1e-5  # paired: the shared seed effect cancelled
    assert r.figures and r.figures[0][1].startswith(b"\x89PNG")
    un = SIM.replace('scale = "a1^2"\n', "").replace('expected = "holds"', 'expected = "mismatch"\ndiagnosis = "a1^2"')
    (c,) = claimfile.load_file(write(tmp_path, un, "u.toml"))
    r = runner.run_claim(c)
    assert r.verdict == "mismatch" and r.ok, r.detail
    assert r.diagnosis.best.name == "a1^2"
    # negative control: a factor 1.1 in the nonlinear side is caught
    table["sin(g)"] = lambda s: 1.1 * a1sq * (2.0 + shared[s])
    (c,) = claimfile.load_file(write(tmp_path, SIM, "n.toml"))
    assert runner.run_claim(c).verdict == "mismatch"


def test_docs_example_runs(tmp_path):
    """The example file in docs/claims-format.md runs and every claim has its expected verdict."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "claims-format.md").read_text()
    block = doc.split("## Example: claims for a variant")[1].split("```toml\n")[1].split("```")[0]
    claims = claimfile.load_file(write(tmp_path, block, "example.toml"))
    results = runner.run_claims(claims)
    assert [r.claim.id for r in results] == ["relu.a1", "relu.result1_powerlaw", "relu.printed_noise"]
    assert all(r.ok for r in results), [(r.claim.id, r.detail) for r in results if not r.ok]
    assert results[2].verdict == "mismatch" and results[2].diagnosis.best.name == "rho_f/a1^2"


def test_theory_call_arguments_checked_at_load_time(tmp_path):
    text = """
[[claim]]
id = "x.bad"
source = "p. 1"
statement = 'x'
method = "mpmath"
check = "theory_value"
evidence = "independent"
call = { function = "e_linear", args = { rho = 0.1, alpha = 2, kapa = 2, tau = 0.5 } }
claimed = "1"
tolerance = { rel = 1e-9, reason = "x" }
expected = "holds"
"""
    with pytest.raises(ICLError, match=r"claim 'x.bad': call = .*e_linear\(\) has no argument\(s\) kapa"):
        claimfile.load_file(write(tmp_path, text))
    with pytest.raises(ICLError, match="function must be one of"):
        claimfile.load_file(write(tmp_path, text.replace('"e_linear"', '"os.system"'), "b.toml"))
    with pytest.raises(ICLError, match="same length"):
        claimfile.load_file(
            write(tmp_path, text.replace("kapa = 2, tau = 0.5", "kappa = [1, 2], tau = [0.5]"), "c.toml")
        )


EXTRAP = """
[[claim]]
id = "s.extrap"
source = "Result 1, p. 3"
statement = 'x'
method = "sim"
full = true
check = "simulation_extrapolated"
evidence = "simulation"
f = "tanh(g)"
rho = "0.1"
d_list = [16, 24, 48]
alpha = 2
kappa = 2
tau = 3
n_seeds = 10
tolerance = { z = 3.29, reason = "test" }
expected = "holds"
"""


def test_simulation_extrapolation_in_one_over_d(tmp_path, monkeypatch):
    """Stand-in simulations e(d) = theory + 0.5/d + seed noise: the 1/d fit recovers the theory;
    a gap that grows with d, or an offset in the limit, is a mismatch."""
    import numpy as np

    from icl_symbolic.theory.asymptotic import e_nonlinear
    from icl_symbolic.verification.checks import simulation as checks_simulation

    th = float(e_nonlinear("tanh(g)", Ratios(rho=0.1, alpha=2, kappa=2, tau=3)).value)
    state = {"offset": 0.0, "c": 0.5}

    def planted(d, seeds):
        return np.array([th + state["offset"] + state["c"] / d + 1e-4 * ((s * 7919 + d) % 5 - 2) for s in seeds])

    monkeypatch.setattr(checks_simulation, "_per_seed", lambda st, seeds, *a, **kw: planted(st.d, seeds))
    (c,) = claimfile.load_file(write(tmp_path, EXTRAP))
    r = runner.run_claim(c)
    assert r.verdict == "holds" and r.ok, r.detail
    assert abs(float(r.computed.value) - th) < 5 * r.computed.stderr
    state["c"] = -0.5  # simulations BELOW theory, gap shrinking: still holds
    assert runner.run_claim(c).verdict == "holds"
    state.update(c=0.0, offset=0.05)  # a constant offset: the limit is wrong
    r = runner.run_claim(c)
    assert r.verdict == "mismatch" and r.zscore > 100  # caught by the z test on the limit
    state.update(c=-0.5, offset=0.0)
    monkeypatch.setattr(
        checks_simulation, "_per_seed", lambda st, seeds, *a, **kw: planted(1000.0 / st.d, seeds)
    )  # gap grows with d
    r = runner.run_claim(c)
    assert r.verdict == "mismatch" and "must describe the ladder" in r.detail
