"""What a verification run found in the paper: the claims' ``finding`` fields, grouped.

A claim file may give a claim a ``finding`` (one sentence about the paper) and a
``finding_kind`` (erratum, scale slip, unstated convention; docs/claims-format.md).  Claims
that back the same finding carry the same sentence, and :func:`collect` groups them: one entry
per finding, in the order its first claim was run, with the claim ids that confirm it (the claim
came out as its file expects) and those that did not (failed, errored, unavailable, or skipped at
this tier).  Nothing here is hard-coded: the list is built from the claims that were run.

``verify`` prints :func:`format_findings` as its last block, the report opens with the same list
(:mod:`icl_symbolic.verification.report`), and
``verify --json`` carries :func:`collect`'s list as its top-level ``findings``.
"""

from __future__ import annotations

import textwrap

from icl_symbolic.verification.claimfile import FINDING_KINDS

#: the heading of the terminal block and of the report's first section
TITLE = "Findings in the paper"


def collect(results) -> list[dict]:
    """One dict per distinct (kind, sentence) among ``results``' claims: ``kind``, ``finding``,
    ``claims`` (every id with that finding, in run order), ``confirmed`` (the ids whose claim came out
    as expected) and ``unconfirmed`` (``[{"id", "verdict"}]`` for the rest); the kinds in
    :data:`FINDING_KINDS` order, then in run order."""
    groups: dict[tuple, dict] = {}
    for r in results:
        c = r.claim
        if not c.finding:
            continue
        g = groups.setdefault(
            (c.finding_kind, c.finding),
            {"kind": c.finding_kind, "finding": c.finding, "claims": [], "confirmed": [], "unconfirmed": []},
        )
        g["claims"].append(c.id)
        if r.ok and r.verdict != "skipped":
            g["confirmed"].append(c.id)
        else:
            g["unconfirmed"].append({"id": c.id, "verdict": r.verdict})
    return sorted(groups.values(), key=lambda g: FINDING_KINDS.index(g["kind"]))


def status(g: dict) -> str:
    """'' when every claim of the finding confirmed it, else the others: not run at this tier (skipped)
    or not as expected (their verdicts)."""
    skipped = [u["id"] for u in g["unconfirmed"] if u["verdict"] == "skipped"]
    off = [f"{u['id']} {u['verdict']}" for u in g["unconfirmed"] if u["verdict"] != "skipped"]
    parts = ([f"NOT as expected: {', '.join(off)}"] if off else []) + (
        [f"not run at this tier: {', '.join(skipped)}"] if skipped else []
    )
    return "; ".join(parts)


def format_findings(findings: list[dict], n_claims: int, width: int = 100) -> str:
    """The terminal block: a heading with the count, then per finding ``[kind] ids`` and its sentence
    (wrapped, indented); claims that did not confirm it are named with their verdicts."""
    if not findings:
        return f"{TITLE}: none among the {n_claims} claims run (no claim run has a 'finding')."
    confirmed = sum(1 for g in findings if g["confirmed"])
    lines = [f"{TITLE} ({confirmed} of {len(findings)} confirmed by this run; from the claims' 'finding' fields):"]
    for g in findings:
        ids = ", ".join(g["confirmed"]) or "-"
        lines += textwrap.wrap(f"[{g['kind']}] {ids}", width=width, initial_indent="  ", subsequent_indent="    ")
        body = g["finding"] + (f" ({status(g)})" if g["unconfirmed"] else "")
        if not g["confirmed"]:
            body = "(not confirmed by this run) " + body
        lines += textwrap.wrap(body, width=width, initial_indent="      ", subsequent_indent="      ")
    return "\n".join(lines)
