"""The shipped claims: verdicts as a result object."""

from __future__ import annotations

import html
from dataclasses import dataclass

from icl_symbolic.core.errors import ICLError
from icl_symbolic.output.io import write_text
from icl_symbolic.output.rows import Rows
from icl_symbolic.verification.claimfile import (
    DEFAULT_PAPER,
    PAPERS,
    TIERS,
    default_files,
    load_claims,
    resolve_shipped,
    select,
    shipped_name,
)
from icl_symbolic.verification.evidence import format_tally, tally
from icl_symbolic.verification.findings import collect, format_findings
from icl_symbolic.verification.report import render
from icl_symbolic.verification.runner import ClaimResult, format_line, run_claims, run_tier, summarize, summary_line


@dataclass(frozen=True)
class VerifyResult(Rows):
    """The verdicts of a claim run: ``results`` (one :class:`ClaimResult` per claim), ``summary``."""

    results: tuple
    summary: dict
    tier: str = "quick"

    @property
    def ok(self) -> bool:
        """True when every claim has its expected verdict."""
        return bool(self.summary["ok"])

    def __len__(self):
        return len(self.results)

    def __iter__(self):
        return iter(self.results)

    def __getitem__(self, key) -> ClaimResult:
        """A result by position or by claim id."""
        if isinstance(key, str):
            for r in self.results:
                if r.claim.id == key:
                    return r
            raise KeyError(key)
        return self.results[key]

    def points(self) -> list[dict]:
        """One row per claim, as the points of ``verify --json``."""
        return [r.to_json() for r in self.results]

    @property
    def findings(self) -> list[dict]:
        """What the run found in the paper: one dict per finding (``kind``, ``finding``, ``claims``,
        ``confirmed``, ``unconfirmed``), built from the claims' ``finding`` fields
        (:func:`icl_symbolic.verification.findings.collect`)."""
        return collect(self.results)

    def format_findings(self) -> str:
        """The findings as ``verify`` prints them last."""
        return format_findings(self.findings, len(self.results))

    def to_json(self) -> dict:
        """``{"summary": ..., "findings": [...], "points": [one object per claim]}``: the shape of
        ``verify --json``."""
        return {"summary": dict(self.summary), "findings": self.findings, "points": self.points()}

    def report(self, path, mode: str | None = None, files=None) -> None:
        """Write the Markdown (``.md``) or HTML (``.html``) report, atomically (``mode``: the run's tier by
        default; ``files``: the claim files named on the command line, for the report's header)."""
        write_text(
            path,
            render(path, list(self.results), self.summary, {"mode": mode or self.tier, "files": list(files or [])}),
        )

    def __repr__(self) -> str:
        bad = [r for r in self.results if not r.ok]
        width = max([len(r.claim.id) for r in bad] + [10])
        lines = [summary_line(self.summary)] + [format_line(r, width) for r in bad]
        if not bad:
            lines.append("(every claim has its expected verdict; iterate or index by id for details)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        e = html.escape
        rows = "".join(
            f"<tr><td style='color:{'#0a6b2a' if r.ok else '#b00020'}'>{'yes' if r.ok else 'NO'}</td>"
            f"<td><code>{e(r.claim.id)}</code></td><td>{e(r.label)}</td><td>{e(r.measure())}</td>"
            f"<td>{e(r.mde_text())}</td><td>{e(r.claim.source)}</td></tr>"
            for r in self.results
        )
        return (
            f"<div><p><b>{e(summary_line(self.summary))}</b></p><table><tr><th>ok</th><th>id</th>"
            f"<th>verdict</th><th>residual / z</th><th>power</th><th>source</th></tr>{rows}</table></div>"
        )


def claims(files=None, *, only=None, paper_files=None, paper: str | None = None) -> list:
    """The selected claims: claim files, folders (with their subfolders: ``derivations/`` includes the
    further papers' ``derivations/<paper>/``) or globs (a name that is no file here names a shipped
    file: ``lemma1``, ``04``), plus the shipped files named in ``paper_files``; without files every
    shipped file of ``paper`` (default ``letey2026``, the paper checked; ``lu2024``; ``all``); with files,
    ``paper`` keeps that paper's files among them (``all`` or None: every one).  ``only``: claim ids or
    glob patterns."""
    names = list(files or [])
    for name in paper_files or []:
        hits = resolve_shipped(name)
        if not hits:
            raise ICLError(
                f"--paper-file: no shipped claim file {name!r}; the shipped files are "
                + ", ".join(p.name for p in default_files())
            )
        names += [str(p) for p in hits]
    return select(load_claims(names or None, paper), only)


def verify(
    files=None,
    *,
    only=None,
    full: bool = False,
    progress=None,
    jobs: int = 1,
    scheduler: str | None = None,
    tier: str | None = None,
    cache=None,
    paper_files=None,
    on_result=None,
    selected=None,
    paper: str | None = None,
) -> VerifyResult:
    """Run claim files (default: the shipped derivations) and judge every claim.

    ``only``: claim ids or glob patterns; ``full``: also the simulation-backed
    claims; ``tier``: ``quick``, ``full`` or ``deep`` (deep adds the paper-scale
    ladders; ``full=True`` is ``tier="full"``); ``cache``: a folder for simulated
    seeds, so a killed run resumes (:mod:`icl_symbolic.simulation.cache`); ``progress``: a text stream for per-claim progress lines; ``jobs``:
    worker processes (one claim each; the same verdicts and numbers for any
    value); ``scheduler``: a Dask scheduler address instead; ``paper_files``: shipped files by number
    or name (:func:`claims`); ``on_result(ClaimResult)``: called as each verdict is decided;
    ``selected``: claims already chosen by :func:`claims` (then ``files``, ``only``, ``paper_files``
    are not read again); ``paper``: whose shipped claims run by default (:func:`claims`).
    """
    run = run_tier(full, tier)
    chosen = selected if selected is not None else claims(files, only=only, paper_files=paper_files, paper=paper)
    results = run_claims(
        chosen,
        full=full,
        progress=progress,
        on_result=on_result,
        jobs=jobs,
        scheduler=scheduler,
        tier=tier,
        cache=cache,
    )
    return VerifyResult(tuple(results), summarize(results), run)


__all__ = [
    "verify",
    "claims",
    "VerifyResult",
    "TIERS",
    "PAPERS",
    "DEFAULT_PAPER",
    "default_files",
    "shipped_name",
    "format_line",
    "format_tally",
    "tally",
    "summary_line",
]
