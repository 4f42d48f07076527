"""`icl-symbolic verify` and `icl-symbolic diagnose`, in-process (plus one subprocess smoke test).

Paper: the shipped derivations transcribe arXiv:2610.10761 (Eqs. 2, 8-15, Figs. 1-2).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from icl_symbolic.cli import main

from _claims import small_ladder_file

ROOT = Path(__file__).resolve().parent.parent
DERIV = ROOT / "derivations"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory):
    """The default quick run over every shipped derivation, once for the module."""
    out = tmp_path_factory.mktemp("verify") / "all.json"
    code = main(["verify", "--quiet", "--json-out", str(out)])
    doc = json.loads(out.read_text())
    assert doc["command"] == "verify" and doc["summary"]["ok"] is True
    return code, doc["points"]


@pytest.mark.heavy
def test_every_shipped_claim_has_its_expected_verdict(quick_results):
    code, results = quick_results
    bad = [(r["id"], r["verdict"], r["detail"]) for r in results if not r["ok"]]
    assert bad == []
    assert code == 0
    verdicts = {r["verdict"] for r in results}
    assert verdicts <= {"holds", "mismatch", "skipped"}  # nothing unavailable or errored
    skipped = [r for r in results if r["verdict"] == "skipped"]
    assert skipped and all(r["full"] for r in skipped)  # only --full claims, and explicitly
    for r in results:
        for key in ("id", "source", "verdict", "expected", "ok", "detail"):
            assert key in r


@pytest.mark.heavy
def test_fig1_caption_is_flagged_with_the_diagnosis(quick_results):
    _, results = quick_results
    r = {x["id"]: x for x in results}["fig1.caption_noise"]
    assert r["verdict"] == "mismatch" and r["expected"] == "mismatch" and r["ok"]
    d = r["diagnosis"]
    assert d["matches"][0]["name"] == "rho_f/a1^2"
    assert d["required"]["name"] == "rho_nonlinear/a1^2"
    assert d["relation"] == "1"
    s = d["summary"]
    assert "normalised total label second moment" in s and "exactly 1 more than" in s
    # named by their error models (the catalogue, docs/diagnose.md)
    sl = d["slips"]
    assert [m["model"] for m in sl["matches"] if m["rank"] == 1] == ["plus_one", "total_for_residual"]
    assert sl["matches"][0]["transform"] == "x -> x + 1" and sl["matches"][0]["distance"] < 5e-7
    assert "error model plus_one" in s and "tried" in s
    mse = {x["id"]: x for x in results}["fig1.unnormalised_mse"]
    assert mse["ok"] and mse["diagnosis"]["matches"][0]["name"] == "a1^2"
    assert "exp(-1)" in mse["diagnosis"]["summary"]
    assert [m["model"] for m in mse["diagnosis"]["slips"]["matches"] if m["rank"] == 1] == ["over_a1sq"]
    assert "error model over_a1sq" in mse["diagnosis"]["summary"]


def test_one_line_per_claim_and_summary(capsys):
    code, out, err = run(
        capsys, "verify", str(DERIV / "08_fig1.toml"), "--only", "fig1.caption_noise", "--only", "fig1.legend_noise"
    )
    assert code == 0
    lines = out.splitlines()
    heads = [i for i, ln in enumerate(lines) if ln.startswith("ok ")]  # details follow each, indented
    assert lines[0].startswith("ok fig1.legend_noise") and "holds" in lines[0] and len(heads) == 2
    assert lines[1].startswith("      ") and "0.447" in lines[1]
    second = lines[heads[1] :]
    assert second[0].startswith("ok fig1.caption_noise") and "mismatch found as expected" in second[0]
    assert next(ln for ln in second if "diagnosis:" in ln).strip().startswith("diagnosis: 1.447029 is rho_f/a1^2")
    assert any(ln.strip().startswith("why:") for ln in second)
    end = lines.index("2 claims: 1 hold, 1 mismatches found as expected, 0 failed -- OK")
    assert lines[end + 1].startswith("Findings in the paper (1 of 1 confirmed")  # the findings end the output
    assert lines[end + 2] == "  [scale slip] fig1.caption_noise" and "1.447" in " ".join(lines[end + 3 :])
    assert "[1/2]" not in err  # each verdict line is printed as decided, in place of a progress line


def test_json_to_stdout(capsys):
    code, out, err = run(capsys, "verify", "--quiet", "--json", "--only", "eq2.a1_is_E_gf")
    assert code == 0
    (r,) = json.loads(out)["points"]
    assert r["id"] == "eq2.a1_is_E_gf" and r["ok"] is True and r["computed"]["exact"] == "exp(-1/2)"
    assert err == ""  # --quiet: not even the summary
    code, out, err = run(capsys, "verify", "--json", "--only", "eq2.a1_is_E_gf")
    assert json.loads(out)["summary"]["ok"] is True and "OK" in err


def test_glob_of_files(capsys):
    code, out, _ = run(capsys, "verify", "--list", str(DERIV / "04_lemma1.*"))
    assert code == 0
    assert out.splitlines()[0].endswith("04_lemma1.toml (icl-symbolic verify lemma1, or --paper-file 04)")
    ids = [ln.split()[0] for ln in out.splitlines() if not ln.startswith("# ")]
    assert ids[:4] == ["lemma1.E_yx", "lemma1.E_y2", "lemma1.E_yH", "lemma1.E_hh"]
    assert all(i.startswith("lemma1.") for i in ids) and len(ids) == 7


def test_failing_claim_exits_1(tmp_path, capsys):
    text = (DERIV / "08_fig1.toml").read_text().replace('claimed = "0.447"', 'claimed = "0.449"')
    p = tmp_path / "mine.toml"
    p.write_text(text)
    code, out, _ = run(capsys, "verify", "--quiet", str(p), "--only", "fig1.legend_noise")
    assert code == 1
    assert out.startswith("!! fig1.legend_noise") and "FAILS" in out
    assert "diagnosis:" in out and any(ln.endswith("NOT OK") for ln in out.splitlines())


@pytest.mark.parametrize(
    "argv, message",
    [
        (["verify", "--only", "no.such.claim"], "unknown claim id 'no.such.claim'"),
        (["verify", "nope/*.toml"], "no claim files match"),
        (["verify", "--report", "r.pdf"], "--report: 'r.pdf' must end in .md"),
        (["diagnose", "sin(g", "--rho", "0.1", "--value", "1.447"], "expected"),
        (["diagnose", "sin(g)", "--rho", "-1", "--value", "1.447"], "--rho: must be >= 0"),
        (["diagnose", "sin(g)", "--rho", "0.1", "--value", "abc"], "--value: 'abc' is not a number"),
    ],
)
def test_bad_input_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("icl-symbolic: error:") and message in err


def test_malformed_file_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text((DERIV / "08_fig1.toml").read_text().replace('quantity = "a1^2"', 'quantity = "a1^^2"'))
    report, js = tmp_path / "r.html", tmp_path / "r.json"
    code, out, err = run(capsys, "verify", str(bad), "--report", str(report), "--json-out", str(js))
    assert code == 2 and out == ""
    assert "bad.toml: claim 'fig1.a1_squared': quantity = 'a1^^2'" in err
    assert list(tmp_path.iterdir()) == [bad]


def test_reports_markdown_and_html(tmp_path, capsys):
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    args = [
        "verify",
        "--quiet",
        str(DERIV / "08_fig1.toml"),
        "--only",
        "fig1.result1_normalised_mse",
        "--only",
        "fig1.caption_noise",
    ]
    assert run(capsys, *args, "--report", str(md))[0] == 0
    assert run(capsys, *args, "--report", str(html))[0] == 0
    t = md.read_text()
    assert "```math" in t and "(a_1^2 + \\rho_{\\rm nonlinear})/a_1^2" in t
    assert "data:image/png;base64," in t and "mismatch found as expected" in t  # the figure
    h = html.read_text()
    assert h.count("<div class='eq'><math ") == 2  # statements drawn as MathML
    assert h.startswith("<!DOCTYPE html>") and "<style>" in h and "data:image/png;base64," in h
    h_no_ns = h.replace('xmlns="http://www.w3.org/1998/Math/MathML"', "")
    assert "http://" not in h_no_ns and "https://" not in h and "<script" not in h  # self-contained
    assert "rho_f/a1^2" in h and not list(tmp_path.glob(".*part"))


def test_diagnose_command(capsys):
    code, out, _ = run(capsys, "diagnose", "sin(g)", "--rho", "0.1", "--value", "1.447")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("1.447 is rho_f/a1^2 = (a1^2 + rho_nonlinear)/a1^2")
    assert "if you meant rho_nonlinear/a1^2" in first and "0.4470293765" in first
    assert "exactly 1 more than" in first
    code, out, _ = run(capsys, "diagnose", "sin(g)", "--rho", "0.1", "--value", "1.447", "--json")
    js = json.loads(out)
    assert js["family"]["matches"][0]["name"] == "rho_f/a1^2"
    assert {m["model"] for m in js["matches"] if m["rank"] == 1} == {"plus_one", "total_for_residual", "over_a1sq"}
    # nothing in the family is 0.9 to 6 decimals: exit 1, nearest candidates still listed
    code, out, _ = run(capsys, "diagnose", "sin(g)", "--rho", "0.1", "--value", "0.900000")
    assert code == 1 and "matches no quantity" in out and "closest quantities" in out


@pytest.mark.heavy
def test_subprocess_smoke():
    proc = subprocess.run(
        [sys.executable, "-m", "icl_symbolic", "verify", "--quiet", "--only", "fig1.offset_exactly_one"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "fig1.offset_exactly_one" in proc.stdout and "-- OK" in proc.stdout


def test_issue_example_paper_names_without_order_prefix(capsys, monkeypatch):
    """`icl-symbolic verify derivations/lemma1.* --only lemma1.E_hh` (the issue's example) finds
    04_lemma1.toml: a pattern that matches nothing is retried with the NN_ paper-order prefix."""
    monkeypatch.chdir(ROOT)
    code, out, _ = run(capsys, "verify", "--quiet", "derivations/lemma1.*", "--only", "lemma1.E_hh")
    assert code == 0 and out.startswith("ok lemma1.E_hh") and "1 claims: 1 hold" in out


@pytest.mark.heavy
def test_json_gives_every_claim_evidence_and_tally_is_printed(capsys):
    """Every shipped claim carries an evidence kind and a paper result; the terminal tally lists them."""
    from icl_symbolic.verification.evidence import EVIDENCE, OUR_RESULTS, RESULTS

    code = main(
        [
            "verify",
            "--quiet",
            "--json",
            "--only",
            "appc.*",
            "--only",
            "result1.*",
            "--only",
            "eq8.rho_nonlinear_definition",
        ]
    )
    out, _ = capsys.readouterr()
    rows = json.loads(out)["points"]
    assert code == 0 and rows
    assert all(r["evidence"] in EVIDENCE and r["result"] in RESULTS + OUR_RESULTS for r in rows)
    by_id = {r["id"]: r["evidence"] for r in rows}
    assert by_id["appc.moments"] == "derivation"
    assert by_id["result1.homogeneity_isotropic"] == "consistency"  # tautological: e_nonlinear IS Result 1
    assert by_id["eq8.rho_nonlinear_definition"] == "consistency"
    assert by_id["appc.finite_size_terms"] == "self-test"  # our own O(1/ell) algebra
    reasons = {r["id"]: r["evidence_reason"] for r in rows}
    assert "homogeneity" in reasons["result1.homogeneity_isotropic"] and reasons["appc.test_error_functional"] is None
    tally_json = json.loads(out)["evidence"]["Result 1"]
    assert set(tally_json) == set(EVIDENCE) and tally_json["self-test"] == {
        "claims": 1,
        "run": 1,
        "ok": 1,
        "skipped": 0,
    }
    main(["verify", "--only", "appc.*", "--only", "result1.homogeneity_*"])
    out, _ = capsys.readouterr()
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("Result 1"))
    # derivation, independent, simulation, consistency, self-test
    assert line.split()[2:7] == ["2/2", "0/0", "0/0", "2/2", "1/1"] and "<-" not in line


def test_every_shipped_claim_is_labelled():
    from icl_symbolic.verification.claimfile import load_claims
    from icl_symbolic.verification.evidence import EVIDENCE, OUR_RESULTS, RESULTS

    claims = load_claims()
    assert all(c.evidence in EVIDENCE and c.result in RESULTS + OUR_RESULTS for c in claims)


# The audit of the evidence labels (derivations/README.md, "Evidence audit"): a claim counts as evidence for a
# paper result only if a wrong statement in the paper could make it fail.
_NAMED_BY_THE_ISSUE = (
    "eq2.orthonormal_h2",
    "eq2.orthogonal_h1_h3",
    "eq2.parseval_g3",
    "eq8.parseval_sin_series",
    "lemma1.finite_ell_E_uuT_w_mc",
    "lemma1.finite_ell_E_us_mc",
    "lemma1.finite_ell_E_s2_mc",
    "appA.conditions_identity",
    "appA.conditions_fixed_rank_fail",
    "eq11.below_transition",
    "fig2.transition_kink_at_kappa1",
    "result1.normalized_form",
    "result1.homogeneity_isotropic",
    "result1.homogeneity_anisotropic",
)


def _audit_table():
    """Rows (id, old, new) of the audit table in derivations/README.md."""
    import re

    text = (DERIV / "README.md").read_text(encoding="utf-8")
    section = text.split("## Evidence audit", 1)[1]
    return re.findall(r"^\| `([^`]+)` \| ([a-z-]+) \| ([a-z-]+) \| .+ \|$", section, flags=re.M)


def test_evidence_audit_is_pinned():
    from icl_symbolic.verification.claimfile import load_claims
    from icl_symbolic.verification.evidence import COUNTED, NOT_COUNTED, OUR_RESULTS

    claims = {c.id: c for c in load_claims()}
    # our extension never counts as evidence for the paper
    ours = [c for c in claims.values() if c.result in OUR_RESULTS]
    assert sum(c.result == "Kernel learner (ours)" for c in ours) == 8
    assert sum(c.result == "IDG error (ours)" for c in ours) == 9
    assert all(c.evidence not in COUNTED for c in ours)
    # Result 1's derivations are the Appendix C reduction only (not the condition checker, not our O(1/ell) terms)
    assert sorted(c.id for c in claims.values() if c.result == "Result 1" and c.evidence == "derivation") == [
        "appc.moments",
        "appc.test_error_functional",
    ]
    assert all(claims[cid].evidence in NOT_COUNTED for cid in _NAMED_BY_THE_ISSUE)
    # every label that is not counted says why (the loader enforces it; the shipped files must load)
    assert all(c.evidence_reason for c in claims.values() if c.evidence in NOT_COUNTED)
    # the README's audit table matches the claim files, and lists every self-test (all were relabelled)
    rows = _audit_table()
    assert len(rows) == 45 and len({r[0] for r in rows}) == 45
    for cid, old, new in rows:
        assert claims[cid].evidence == new and old != new, cid
    # every self-test of the audited files is in it; derivations/13_library_coverage.toml, 14_idg.toml,
    # 15_finite_d.toml, 16_calibration.toml and 17_dual_kernels.toml were written after the audit, with their labels (and reasons)
    # from the start
    born_labelled = {
        c.id
        for c in claims.values()
        if c.file.endswith(
            (
                "13_library_coverage.toml",
                "14_idg.toml",
                "15_finite_d.toml",
                "16_calibration.toml",
                "17_dual_kernels.toml",
            )
        )
    }
    assert {r[0] for r in rows} == {c.id for c in claims.values() if c.evidence == "self-test"} - born_labelled


def test_tally_flags_results_without_counted_evidence(capsys):
    """Eq. 2 (a definition) has self-tests only: flagged; Eq. 8's derivations are counted: not flagged."""
    code, out, _ = run(
        capsys,
        "verify",
        "--only",
        "eq2.table_*",
        "--only",
        "eq8.rho_f_sum",
        "--only",
        "eq8.rho_nonlinear_definition",
        "--only",
        "kernel.cubic_captured",
    )
    assert code == 0
    rows = out.splitlines()
    lines = {
        ln.split("  ")[1].strip(): ln + (nxt if nxt.lstrip().startswith("<-") else "")  # a flag: next line
        for ln, nxt in zip(rows, rows[1:] + [""])
        if ln.startswith("  ") and "/" in ln
    }
    assert lines["Eq. 2"].split()[2:7] == ["0/0", "0/0", "0/0", "0/0", "7/7"] and "<- no evidence run" in lines["Eq. 2"]
    assert lines["Eq. 8"].split()[2:7] == ["1/1", "0/0", "0/0", "1/1", "0/0"] and "<-" not in lines["Eq. 8"]
    assert "<- ours: not evidence for the paper" in lines["Kernel learner (ours)"]


def test_self_test_claim_without_reason_is_bad_input(tmp_path, capsys):
    text = (DERIV / "08_fig1.toml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    first_reason = next(ln for ln in text.splitlines(keepends=True) if ln.startswith("evidence_reason = "))
    bad.write_text(text.replace(first_reason, "", 1), encoding="utf-8")  # fig1.a1_squared's reason removed
    code, out, err = run(capsys, "verify", str(bad))
    assert code == 2 and out == ""
    assert (
        err.strip().count("\n") == 0 and "claim 'fig1.a1_squared': evidence 'self-test' needs 'evidence_reason'" in err
    )


def test_no_shipped_claim_uses_a_hand_set_bias_budget():
    """Simulations of the paper's results are extrapolated to d -> infinity; a fixed allowance anywhere
    else must name the shipped script that regenerates the measurement behind it."""
    import re

    from icl_symbolic.verification.claimfile import load_claims
    from icl_symbolic.verification.evidence import RESULTS

    claims = load_claims()
    for c in claims:
        if c.tolerance.bias_rel:
            scripts = re.findall(r"(?:benchmarks|docs)/[\w./-]+\.(?:py|md)", c.tolerance.reason)
            assert c.result not in RESULTS and scripts and all((ROOT / s_).exists() for s_ in scripts), c.id
    sims = [c for c in claims if c.method == "sim" and c.result in RESULTS]  # the paper's results
    # at one finite d only against our finite-d theory, and then never counted as evidence for the paper
    finite_d = [c for c in sims if c.check == "simulation_finite_d"]
    assert all(c.evidence == "self-test" and not c.tolerance.bias_rel for c in finite_d), finite_d
    assert sims and all(c.check in ("simulation_extrapolated", "setup", "simulation_finite_d") for c in sims)
    by_result = {}
    for c in sims:
        by_result.setdefault(c.result, []).append(c.id)
    for res in ("Result 1", "Eq. 10", "Eq. 11", "Fig. 1", "Fig. 2", "Eqs. 1-7"):
        assert by_result.get(res), f"no simulation claim backs {res}"


def _without_timings(doc):
    if isinstance(doc, dict):
        return {k: _without_timings(v) for k, v in doc.items() if k not in ("elapsed_s", "seconds", "train_seconds")}
    if isinstance(doc, list):
        return [_without_timings(v) for v in doc]
    return doc


@pytest.mark.sim
def test_jobs_2_gives_the_same_json_and_the_same_order_as_jobs_1(tmp_path, capsys):
    """verify --full --jobs 2: one claim per worker process, identical JSON (timings aside), and the
    verdict lines in claim order (a simulation-backed claim and quick ones)."""
    from icl_symbolic.verification.claimfile import shipped_derivations

    files = [str(small_ladder_file(tmp_path)), str(shipped_derivations())]
    only = ["--only", "small.*", "--only", "fig1.legend_noise", "--only", "eq8.*"]
    docs, outs = [], []
    for jobs in ("1", "2"):
        js = tmp_path / f"j{jobs}.json"
        code, out, _ = run(capsys, "verify", *files, "--full", "--quiet", "--jobs", jobs, "--json-out", str(js), *only)
        assert code == 0
        docs.append(json.loads(js.read_text()))
        outs.append([line.split()[1] for line in out.splitlines() if line[:3] in ("ok ", "!! ")])
    assert any(r["id"] == "small.ratio" and r["verdict"] == "holds" for r in docs[0]["points"])
    assert _without_timings(docs[0]) == _without_timings(docs[1])
    assert outs[0] == outs[1] == [r["id"] for r in docs[0]["points"]]


def test_run_claims_streams_results_in_claim_order_with_skips():
    """on_result sees every claim once, in order, skipped ones included, serially and on 2 workers."""
    from icl_symbolic.verification.claimfile import load_claims, select
    from icl_symbolic.verification.runner import run_claims

    claims = select(load_claims(None), ["result1.sim_sin_tau4", "fig1.legend_noise", "eq8.*"])
    assert any(c.tier != "quick" for c in claims) and any(c.tier == "quick" for c in claims)
    for jobs in (1, 2):
        seen = []
        res = run_claims(claims, full=False, on_result=seen.append, jobs=jobs)
        assert [r.claim.id for r in seen] == [c.id for c in claims] == [r.claim.id for r in res]
        assert [r.verdict == "skipped" for r in res] == [c.tier != "quick" for c in claims]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["verify", "--jobs", "0"], "jobs"),
        (["verify", "--jobs", "two"], "jobs"),
        (["verify", "--scheduler", "localhost"], "scheduler"),
    ],
)
def test_verify_parallel_options_bad_input(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("icl-symbolic: error:") and message in err


def test_shipped_files_are_named_from_any_folder(capsys, tmp_path, monkeypatch):
    """By name, number, file name or checkout path, from a folder without derivations/ (as after a wheel
    install); --list shows each file with those names; the verify --help examples run as printed."""
    monkeypatch.chdir(tmp_path)
    lists = []
    for argv in (
        ["lemma1"],
        ["04"],
        ["--paper-file", "4"],
        ["--paper-file", "lemma1"],
        ["derivations/04_lemma1.toml"],
        ["04_lemma1"],
    ):
        code, out, _ = run(capsys, "verify", "--list", *argv)
        assert code == 0, argv
        lists.append([ln.split()[0] for ln in out.splitlines() if not ln.startswith("# ")])
        assert "(icl-symbolic verify lemma1, or --paper-file 04)" in out.splitlines()[0]
    assert len(lists[0]) == 7 and all(x == lists[0] for x in lists)
    code, _, err = run(capsys, "verify", "--paper-file", "99")
    assert code == 2 and "04_lemma1.toml" in err and err.count("\n") == 1
    code, out, _ = run(capsys, "verify", "lemma1", "--only", "lemma1.*", "--verbose", "--quiet")
    assert code == 0 and "7 claims: 7 hold" in out
    assert list(tmp_path.iterdir()) == []


def test_a_path_in_another_folder_is_never_a_shipped_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("nope/04_lemma1.toml", "nope/*.toml", "elsewhere/lemma1"):
        code, _, err = run(capsys, "verify", "--list", name)
        assert code == 2 and err.count("\n") == 1, name


def test_schedule_groups_claims_that_share_simulations_and_puts_the_largest_first():
    """verify --jobs N hands workers the claims that simulate nothing first, then groups of claims
    sharing a simulated setting (run in one worker, so each seed is simulated once), largest
    estimated cost first; every claim appears exactly once."""
    from icl_symbolic.verification.claimfile import TIERS, load_claims
    from icl_symbolic.verification.schedule import claim_cost, group_cost, schedule

    claims = load_claims(None)
    todo = [i for i, c in enumerate(claims) if TIERS.index(c.tier) <= TIERS.index("full")]
    groups = schedule(claims, todo)
    flat = [i for g in groups for i in g]
    assert sorted(flat) == sorted(todo)
    ids = {claims[g[0]].id: [claims[i].id for i in g] for g in groups}
    assert set(ids["a1zero.sim_tau2_gaussian"]) == {
        "a1zero.sim_tau2_gaussian",
        "a1zero.sim_tau2_sphere",
        "a1zero.sim_laws_same_limit",
    }
    assert {"result1.sim_sin_tau4", "fig1.sim_result1_normalised", "fig1.sim_unnormalised"} <= set(
        ids["result1.sim_sin_tau4"]
    )
    costs = [group_cost([claims[i] for i in g]) for g in groups]
    first_heavy = next(j for j, c in enumerate(costs) if c > 0)
    assert all(c == 0 for c in costs[:first_heavy])
    assert costs[first_heavy:] == sorted(costs[first_heavy:], reverse=True)
    # a claim that simulates nothing is alone and costs nothing
    assert claim_cost(next(c for c in claims if c.id == "fig1.legend_noise")) == 0.0
