"""What kind of evidence backs each claim, and the tally per paper result.

The rule: a claim is evidence for a paper result only if a wrong statement in
the paper could make it fail.  Every claim carries ``evidence``, one of

``derivation``
    a symbolic proof step (SymPy): a limit, an identity or a reduction that
    is derived, not assumed, and compared with the form the paper writes, so
    it would come out different if the paper's step were wrong;
``independent``
    an independent numeric method compared with what the paper states:
    Monte Carlo against the paper's formula, the deterministic-equivalent
    solver against a limit the paper writes;
``simulation``
    a simulation of the model of Eqs. (1)-(7) (finite d, seeds), compared
    with the paper's d -> infinity theory after extrapolation in 1/d, or
    paired;
``consistency``
    the two sides are one definition, formula or code path written two ways
    (an identity of the paper's definitions such as
    rho_f - rho_nonlinear = a1^2, the homogeneity of the linear formula that
    ``theory.e_nonlinear`` is built from, a closed form evaluated at a point).
    Neither side is computed independently, so it can only catch a slip in
    how the code writes a definition down;
``self-test``
    an independent check of our own machinery: numerics (quadrature, Monte
    Carlo, solvers), the simulator, formulas we derived beyond the paper (the
    finite-ell moments, the kappa < 1 branch of Eq. (11)), our extension (the
    kernel learner), or numbers from outside the paper (the study notes).  It
    has power against our mistakes and none against the paper's.

Consistency checks and self-tests are kept (they catch regressions and
validate the tools behind the evidence) but are never counted as evidence for
a paper result (:data:`COUNTED`).  The two differ in power: a consistency
check compares a thing with itself, a self-test compares two independent
computations of something that is ours.  A claim labelled with either kind
must say why in ``evidence_reason`` (a claim file error otherwise).

``result`` is the paper result the claim backs (one of :data:`RESULTS` for
the shipped files, :data:`OUR_RESULTS` for our extension; a claim file may set
it once in ``[unit]``).  :func:`tally` counts, per result and kind, how many
claims were run and how many came out as expected; ``verify`` prints it after
the claim lines, puts it in ``--json`` and in the report.
"""

from __future__ import annotations

EVIDENCE = ("derivation", "independent", "simulation", "consistency", "self-test")
#: Kinds that count as evidence for a paper result: a wrong statement in the paper could make them fail.
COUNTED = ("derivation", "independent", "simulation")
#: Kinds that never count; a claim of one of these kinds must give an ``evidence_reason``.
NOT_COUNTED = tuple(k for k in EVIDENCE if k not in COUNTED)
#: The paper's results, in paper order (the shipped claim files use these names).
RESULTS = ("Eqs. 1-7", "Eq. 2", "Eq. 8", "Appendix A", "Lemma 1", "Result 1", "Eq. 10", "Eq. 11", "Fig. 1", "Fig. 2")
#: Results of icl-symbolic's own that the shipped files also check (not the paper's; tallied after it).
OUR_RESULTS = ("Kernel learner (ours)", "IDG error (ours)", "Error bars (ours)", "Dual kernel (ours)")
#: Results of the further papers whose claims are shipped (derivations/<paper>/, ``verify --paper``),
#: each named with its paper so that the tally groups them by paper, after the checked paper's.
OTHER_PAPER_RESULTS = (
    "arXiv:2405.11751: ICL error",
    "arXiv:2405.11751: IDG error",
    "arXiv:2405.11751: double descent",
    "arXiv:2405.11751: task diversity",
)
#: Flags of the tally: no counted claim of a paper result ran and passed; a result of ours.
NO_EVIDENCE = "no evidence run"
OURS = "ours: not evidence for the paper"


def _order(result: str) -> tuple:
    if result in RESULTS:
        return (RESULTS.index(result), "")
    if result in OUR_RESULTS:
        return (len(RESULTS) + OUR_RESULTS.index(result), "")
    if result in OTHER_PAPER_RESULTS:
        return (len(RESULTS) + len(OUR_RESULTS) + OTHER_PAPER_RESULTS.index(result), "")
    return (len(RESULTS) + len(OUR_RESULTS) + len(OTHER_PAPER_RESULTS), result)


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


_COL = 13  # terminal column width: the longest cell is "12/12 [+20]", the longest kind "independent"


def _cell(c: dict) -> str:
    return f"{c['ok']}/{c['run']}" + (f" [+{c['skipped']}]" if c["skipped"] else "")


def flag(result: str, kinds: dict) -> str:
    """The tally's note for one result: ``OURS`` for our extension's results, ``NO_EVIDENCE`` for a paper
    result none of whose counted claims (derivation, independent, simulation) ran and passed, else ''.

    >>> flag("Result 1", {k: {"claims": 1, "run": 1, "ok": 1, "skipped": 0} for k in NOT_COUNTED}
    ...      | {k: {"claims": 0, "run": 0, "ok": 0, "skipped": 0} for k in COUNTED})
    'no evidence run'
    """
    if result in OUR_RESULTS:
        return OURS
    return "" if evidence_count(kinds) else NO_EVIDENCE


def tally_rows(t: dict) -> list[list[str]]:
    """Rows ``[result, <one cell per kind of EVIDENCE>, flag]`` for tables (terminal and reports).

    Cells are ``ok/run`` with ``[+n]`` for skipped claims; the kinds are in :data:`EVIDENCE` order
    (derivation, independent, simulation, consistency, self-test).
    """
    return [[res] + [_cell(kinds[k]) for k in EVIDENCE] + [flag(res, kinds)] for res, kinds in t.items()]


def format_tally(t: dict) -> str:
    """The terminal table: per result, ``ok/run`` for each kind, skipped in brackets.

    A paper result none of whose counted claims ran and passed is flagged ``no evidence run``; a
    result of ours (the kernel learner) is flagged as not evidence for the paper, on the line under
    its row (every line fits in 100 columns).
    """
    if not t:
        return ""
    width = max(len(k) for k in t) + 2
    head = (
        "evidence per paper result (ok/run, [+n skipped: need --full or --tier deep]); only derivation,\n"
        "independent and simulation count: consistency checks and self-tests could not fail if the paper\n"
        "were wrong:"
    )
    lines = [head, (" " * (width + 2) + "".join(f"{k:<{_COL}}" for k in EVIDENCE)).rstrip()]
    for row in tally_rows(t):
        lines.append((f"  {row[0]:<{width}}" + "".join(f"{c:<{_COL}}" for c in row[1:-1])).rstrip())
        if row[-1]:
            lines.append(" " * (width + 2) + f"<- {row[-1]}")
    return "\n".join(lines)


__all__ = [
    "EVIDENCE",
    "COUNTED",
    "NOT_COUNTED",
    "RESULTS",
    "OUR_RESULTS",
    "OTHER_PAPER_RESULTS",
    "NO_EVIDENCE",
    "OURS",
    "tally",
    "tally_rows",
    "format_tally",
    "evidence_count",
    "flag",
]
