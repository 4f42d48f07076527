"""The evidence tally (icl_symbolic.verification.evidence): which kinds count for a paper result.

Rule (docs/claims-format.md, *Evidence*): a claim counts as evidence for a paper
result of arXiv:2610.10761 only if a wrong statement in the paper could make it
fail; consistency checks and self-tests get their own columns and never count.
"""

from types import SimpleNamespace

import pytest

from icl_symbolic.verification.claimfile import Claim
from icl_symbolic.verification.evidence import (
    COUNTED,
    EVIDENCE,
    NO_EVIDENCE,
    NOT_COUNTED,
    OURS,
    evidence_count,
    format_tally,
    tally,
    tally_rows,
)
from icl_symbolic.verification.judge import Tolerance
from icl_symbolic.verification.report import render_html, render_markdown
from icl_symbolic.verification.runner import ClaimResult, summarize


def fake(result, evidence, verdict="holds", ok=True, reason=""):
    """A stand-in for a ClaimResult: only what the tally reads."""
    claim = SimpleNamespace(result=result, evidence=evidence, evidence_reason=reason)
    return SimpleNamespace(claim=claim, verdict=verdict, ok=ok)


def test_self_test_is_a_kind_of_its_own_and_never_counted():
    assert "self-test" in EVIDENCE and "self-test" not in COUNTED and "consistency" not in COUNTED
    assert set(NOT_COUNTED) == {"consistency", "self-test"} and set(COUNTED) | set(NOT_COUNTED) == set(EVIDENCE)


def test_tally_has_a_self_test_column_in_every_row():
    t = tally([fake("Result 1", "derivation"), fake("Eq. 2", "self-test"), fake("Eq. 2", "self-test", ok=False)])
    assert all(set(kinds) == set(EVIDENCE) for kinds in t.values())
    assert t["Eq. 2"]["self-test"] == {"claims": 2, "run": 2, "ok": 1, "skipped": 0}
    assert t["Result 1"]["self-test"] == {"claims": 0, "run": 0, "ok": 0, "skipped": 0}
    rows = {r[0]: r for r in tally_rows(t)}
    assert all(len(r) == len(EVIDENCE) + 2 for r in rows.values())
    assert rows["Eq. 2"][1 + EVIDENCE.index("self-test")] == "1/2"
    text = format_tally(t)
    header = next(line for line in text.splitlines() if line.split() == list(EVIDENCE)).split()
    assert header == list(EVIDENCE)


@pytest.mark.parametrize(
    "kinds, flagged",
    [
        (["self-test"], True),
        (["consistency"], True),
        (["self-test", "consistency", "self-test"], True),
        (["self-test", "derivation"], False),
        (["consistency", "independent"], False),
        (["simulation"], False),
    ],
)
def test_no_evidence_flag_when_only_uncounted_kinds_ran(kinds, flagged):
    t = tally([fake("Result 1", k) for k in kinds])
    assert (evidence_count(t["Result 1"]) == 0) is flagged
    (row,) = tally_rows(t)
    assert row[-1] == (NO_EVIDENCE if flagged else "")
    assert (f"<- {NO_EVIDENCE}" in format_tally(t)) is flagged


def test_failed_or_skipped_counted_claims_are_no_evidence():
    t = tally(
        [
            fake("Fig. 2", "independent", verdict="FAILS", ok=False),
            fake("Fig. 2", "simulation", verdict="skipped", ok=True),
            fake("Fig. 2", "self-test"),
        ]
    )
    assert evidence_count(t["Fig. 2"]) == 0 and tally_rows(t)[0][-1] == NO_EVIDENCE
    assert tally_rows(t)[0][1 + EVIDENCE.index("simulation")] == "0/0 [+1]"


def test_our_results_are_flagged_as_ours_even_with_passing_claims():
    t = tally([fake("Kernel learner (ours)", "self-test"), fake("Kernel learner (ours)", "self-test")])
    assert tally_rows(t)[0][-1] == OURS and f"<- {OURS}" in format_tally(t)


def _result(cid, evidence, reason):
    """A real ClaimResult for the report renderers."""
    c = Claim(
        id=cid,
        source="p. 1",
        statement="x = x",
        method="symbolic",
        check="symbolic_identity",
        expected="holds",
        tolerance=Tolerance("exact", None, "exact"),
        params={},
        parsed={},
        file="f.toml",
        evidence=evidence,
        result="Eq. 2",
        evidence_reason=reason,
    )
    return ClaimResult(claim=c, verdict="holds", ok=True, detail="ok")


def test_reports_have_the_self_test_column_and_the_reason():
    results = [_result("u.a", "self-test", "checks our quadrature"), _result("u.b", "derivation", "")]
    summary = summarize(results)
    md = render_markdown(results, summary)
    header = next(ln for ln in md.splitlines() if ln.startswith("| paper result |"))
    assert [c.strip() for c in header.strip("|").split("|")][1:-1] == list(EVIDENCE)
    row = next(ln for ln in md.splitlines() if ln.startswith("| Eq\\. 2 |"))  # cells are Markdown-escaped
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1 + EVIDENCE.index("self-test")] == "1/1" and cells[1] == "1/1" and cells[-1] == ""
    assert "Evidence reason (self\\-test): checks our quadrature" in md
    assert md.count("Evidence reason") == 1  # none shown for a claim without one
    html = render_html(results, summary)
    assert "<th>self-test</th>" in html and "Evidence reason (self-test): checks our quadrature" in html
