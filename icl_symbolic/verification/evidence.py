"""What kind of evidence backs each claim, and the tally per paper result.

Every claim carries ``evidence``, one of

``derivation``
    a symbolic proof step (SymPy): a limit, an identity or a reduction that
    is derived, not assumed, and would come out different if the paper's
    step were wrong;
``independent``
    an independent numeric method: quadrature against a closed form, Monte
    Carlo against an exact value, a deterministic-equivalent solver against
    a closed-form limit;
``simulation``
    a simulation of the model of Eqs. (1)-(7) (finite d, seeds), compared
    with the d -> infinity theory after extrapolation in 1/d, or paired;
``consistency``
    a check of the code's own definitions or scalings (the homogeneity of
    the linear formula, a definition substituted into itself).  Kept, since
    it catches regressions, but never counted as evidence for a paper result:
    it could not fail if the paper were wrong.

and ``result``, the paper result it backs (one of :data:`RESULTS` for the
shipped files; a claim file may set it once in ``[unit]``).  :func:`tally`
counts, per result and kind, how many claims were run and how many came out
as expected; ``verify`` prints it after the claim lines, puts it in
``--json`` and in the report.
"""

from __future__ import annotations

EVIDENCE = ("derivation", "independent", "simulation", "consistency", "self-test")
#: Kinds that count as evidence for a paper result (not consistency, not self-test: a self-test
#: compares two routes of the library and could not fail if the paper were wrong).
COUNTED = ("derivation", "independent", "simulation")
#: The paper's results, in paper order (the shipped claim files use these names).
RESULTS = ("Eqs. 1-7", "Eq. 2", "Eq. 8", "Appendix A", "Lemma 1", "Result 1", "Eq. 10", "Eq. 11",
           "Fig. 1", "Fig. 2")
#: Results of icl-symbolic's own that the shipped files also check (not the paper's; tallied after it).
OUR_RESULTS = ("Kernel learner (ours)",)


def _order(result: str) -> tuple:
    if result in RESULTS:
        return (RESULTS.index(result), "")
    if result in OUR_RESULTS:
        return (len(RESULTS) + OUR_RESULTS.index(result), "")
    return (len(RESULTS) + len(OUR_RESULTS), result)


def tally(results) -> dict:
    """Per paper result and evidence kind: ``{"claims": n, "ok": m, "run": r, "skipped": s}``.

    ``results`` are :class:`icl_symbolic.claims.ClaimResult`; ``run`` counts
    the claims that were run (not skipped), ``ok`` those with their expected
    verdict.  Results appear in paper order; claims without a result are
    under ``"(none)"``.

    >>> tally([])
    {}
    """
    out: dict = {}
    for r in results:
        res = r.claim.result or "(none)"
        kinds = out.setdefault(res, {k: {"claims": 0, "run": 0, "ok": 0, "skipped": 0} for k in EVIDENCE})
        cell = kinds[r.claim.evidence]
        cell["claims"] += 1
        if r.verdict == "skipped":
            cell["skipped"] += 1
        else:
            cell["run"] += 1
            cell["ok"] += int(bool(r.ok))
    return {k: out[k] for k in sorted(out, key=_order)}


def evidence_count(kinds: dict) -> int:
    """Claims of the counted kinds that were run and came out as expected."""
    return sum(kinds[k]["ok"] for k in COUNTED)


def _cell(c: dict) -> str:
    return f"{c['ok']}/{c['run']}" + (f" [+{c['skipped']}]" if c["skipped"] else "")


def tally_rows(t: dict) -> list[list[str]]:
    """Rows ``[result, derivation, independent, simulation, consistency, flag]`` for tables in reports."""
    return [[res] + [_cell(kinds[k]) for k in EVIDENCE] + ["" if evidence_count(kinds) else "no evidence run"]
            for res, kinds in t.items()]


def format_tally(t: dict) -> str:
    """The terminal table: per result, ``ok/run`` for each kind, skipped in brackets.

    A result whose only passing claims are consistency checks is flagged.
    """
    if not t:
        return ""
    width = max(len(k) for k in t) + 2
    head = "evidence per paper result (ok/run, [+n skipped: need --full]; consistency is not evidence):"
    lines = [head, " " * (width + 2) + "".join(f"{k:<22}" for k in EVIDENCE)]
    for row in tally_rows(t):
        flag = f"  <- {row[-1]}" if row[-1] else ""
        lines.append(f"  {row[0]:<{width}}" + "".join(f"{c:<22}" for c in row[1:-1]) + flag)
    return "\n".join(lines)


__all__ = ["EVIDENCE", "COUNTED", "RESULTS", "OUR_RESULTS", "tally", "tally_rows", "format_tally", "evidence_count"]
