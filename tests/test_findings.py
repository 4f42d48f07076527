"""verify leads with its findings: the claims' ``finding`` fields, grouped, printed last, carried by
--json (top-level ``findings``) and opening the report (icl_symbolic.verification.findings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icl_symbolic.cli import main
from icl_symbolic.core.errors import ClaimFileError
from icl_symbolic.verification.claimfile import FINDING_KINDS, default_files, load_file

from _claims import identity_claim

DERIV = Path(__file__).resolve().parent.parent / "derivations"


def _file(tmp_path, claims) -> Path:
    """A claim file of cheap symbolic identities: ``claims`` is [(id, lhs, extra lines)]."""
    p = tmp_path / "f.toml"
    p.write_text("".join(identity_claim(c, lhs, extra=extra) for c, lhs, extra in claims), encoding="utf-8")
    return p


SLIP = 'finding_kind = "scale slip"\nfinding = "The text writes 1.447 where 0.447 is meant."\n'
CONV = 'finding_kind = "unstated convention"\nfinding = "The axis does not say the MSE was divided."\n'
PLANTED = [("u.a", "x", CONV), ("u.b", "x", SLIP), ("u.plain", "x", ""), ("u.c", "x", SLIP), ("u.bad", "x + 1", CONV)]


def test_findings_end_the_output_grouped_with_their_claims(tmp_path, capsys):
    """Claims with the same sentence are one finding; kinds in FINDING_KINDS order; a claim that did not
    come out as expected is named with its verdict, and a finding none confirms says so."""
    f = _file(tmp_path, PLANTED[:4] + [("u.bad", "x + 1", 'finding_kind = "erratum"\nfinding = "Wrong."\n')])
    assert main(["verify", str(f), "--quiet"]) == 1
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Findings in the paper"))
    assert lines[start].startswith("Findings in the paper (2 of 3 confirmed") and lines[start - 1].endswith("NOT OK")
    block = lines[start + 1 :]
    assert block[0] == "  [erratum] -"
    assert "(not confirmed by this run) Wrong. (NOT as expected: u.bad mismatch)" in " ".join(block)
    assert "  [scale slip] u.b, u.c" in block and "  [unstated convention] u.a" in block
    assert block.index("  [scale slip] u.b, u.c") < block.index("  [unstated convention] u.a")
    assert "u.plain" not in " ".join(block)


def test_json_carries_the_findings_at_the_top_level(tmp_path, capsys):
    f = _file(tmp_path, PLANTED)
    assert main(["verify", str(f), "--quiet", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    found = {g["kind"]: g for g in doc["findings"]}
    assert list(found) == ["scale slip", "unstated convention"]
    assert found["scale slip"]["claims"] == found["scale slip"]["confirmed"] == ["u.b", "u.c"]
    assert found["unstated convention"]["confirmed"] == ["u.a"]
    assert found["unstated convention"]["unconfirmed"] == [{"id": "u.bad", "verdict": "mismatch"}]
    assert found["scale slip"]["finding"] == "The text writes 1.447 where 0.447 is meant."


@pytest.mark.parametrize("suffix", ["md", "html"])
def test_the_report_opens_with_the_findings(tmp_path, capsys, suffix):
    f = _file(tmp_path, PLANTED[:4])
    out = tmp_path / f"r.{suffix}"
    assert main(["verify", str(f), "--quiet", "--report", str(out)]) == 0
    capsys.readouterr()
    text = out.read_text(encoding="utf-8")
    first = text.index("Findings in the paper")
    assert first < text.index("Claims") < text.index("u.plain")
    assert text.index("where 0", first) < text.index("Claims")  # the sentence (Markdown escapes its dots)


def test_no_finding_says_so(tmp_path, capsys):
    assert main(["verify", str(_file(tmp_path, [("u.plain", "x", "")])), "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("Findings in the paper: none among the 1 claims")


@pytest.mark.parametrize(
    "extra, message",
    [
        ('finding = "x"\n', "go together"),
        ('finding_kind = "erratum"\n', "go together"),
        ('finding_kind = "typo"\nfinding = "x"\n', "finding_kind 'typo' is not one of"),
        ('finding_kind = "erratum"\nfinding = "  "\n', "non-empty string"),
    ],
)
def test_a_malformed_finding_is_a_claim_file_error(tmp_path, extra, message):
    with pytest.raises(ClaimFileError, match=message):
        load_file(_file(tmp_path, [("u.x", "x", extra)]))


def test_shipped_findings_cover_the_fig1_problems_and_the_task_law():
    """Every kind is used by the shipped claims; the Fig. 1 problems and the task law each have one."""
    claims = [c for p in default_files("all") for c in load_file(p)]
    by_id = {c.id: c for c in claims if c.finding}
    assert {c.finding_kind for c in by_id.values()} == set(FINDING_KINDS)
    assert by_id["fig1.caption_noise"].finding_kind == "scale slip" and "1.447" in by_id["fig1.caption_noise"].finding
    assert "Result 3" in by_id["fig1.result1_normalised_mse"].finding
    assert by_id["fig1.unnormalised_mse"].finding_kind == "unstated convention"
    assert by_id["a1zero.sim_laws_same_limit"].finding_kind == "unstated convention"


@pytest.mark.heavy
def test_the_shipped_fig1_run_lists_every_claim_with_a_finding(capsys):
    """The quick claims of 08_fig1.toml that have a finding are all listed (confirmed), the others with a
    finding are named as not run at this tier; --json has the same ids."""
    claims = load_file(DERIV / "08_fig1.toml")
    with_finding = [c.id for c in claims if c.finding]
    assert main(["verify", str(DERIV / "08_fig1.toml"), "--quiet", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    listed = [i for g in doc["findings"] for i in g["claims"]]
    assert sorted(listed) == sorted(with_finding)
    confirmed = {i for g in doc["findings"] for i in g["confirmed"]}
    assert confirmed == {c.id for c in claims if c.finding and c.tier == "quick"}
