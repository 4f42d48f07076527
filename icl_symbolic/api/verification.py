"""The shipped claims: verdicts as a result object."""

from __future__ import annotations

import html
from dataclasses import dataclass

from icl_symbolic.output.io import write_text
from icl_symbolic.output.rows import Rows
from icl_symbolic.verification.report import render
from icl_symbolic.verification.runner import ClaimResult, format_line, summary_line
from icl_symbolic.verification.runner import verify as _run_claims


@dataclass(frozen=True)
class VerifyResult(Rows):
    """The verdicts of a claim run: ``results`` (one :class:`ClaimResult` per claim), ``summary``."""

    results: tuple
    summary: dict

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

    def to_json(self) -> dict:
        """``{"summary": ..., "points": [one object per claim]}``: the shape of ``verify --json``."""
        return {"summary": dict(self.summary), "points": self.points()}

    def report(self, path, mode: str = "quick") -> None:
        """Write the Markdown (``.md``) or HTML (``.html``) report, atomically."""
        write_text(path, render(path, list(self.results), self.summary, {"mode": mode}))

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
            f"<td>{e(r.mde_text())}</td><td>{e(r.claim.source)}</td></tr>" for r in self.results)
        return (f"<div><p><b>{e(summary_line(self.summary))}</b></p><table><tr><th>ok</th><th>id</th>"
                f"<th>verdict</th><th>residual / z</th><th>power</th><th>source</th></tr>{rows}</table></div>")


def verify(files=None, *, only=None, full: bool = False, progress=None, jobs: int = 1,
           scheduler: str | None = None, tier: str | None = None, cache=None) -> VerifyResult:
    """Run claim files (default: the shipped derivations) and judge every claim.

    ``only``: claim ids or glob patterns; ``full``: also the simulation-backed
    claims; ``tier``: ``quick``, ``full`` or ``deep`` (deep adds the paper-scale
    ladders; ``full=True`` is ``tier="full"``); ``cache``: a folder for simulated
    seeds, so a killed run resumes (:mod:`icl_symbolic.simulation.cache`); ``progress``: a text stream for per-claim progress lines; ``jobs``:
    worker processes (one claim each; the same verdicts and numbers for any
    value); ``scheduler``: a Dask scheduler address instead.
    """
    results, summary = _run_claims(files, only, full=full, progress=progress, jobs=jobs, scheduler=scheduler,
                                   tier=tier, cache=cache)
    return VerifyResult(tuple(results), summary)


__all__ = ["verify", "VerifyResult"]
