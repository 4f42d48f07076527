"""Human-readable verification reports: Markdown or self-contained HTML.

Both formats open with what the run found in the paper (the claims' ``finding`` fields,
:mod:`icl_symbolic.verification.findings`), then carry, per claim: the id, the paper location, the statement as
the paper writes it (as MathML in HTML, as a ``math`` block in Markdown, and
always as LaTeX source; nothing is fetched from the network), how it was
checked, the computed and claimed
numbers with their provenance, the tolerance and its reason, the verdict,
the diagnosis of a mismatch, and the figures a check produced, embedded as
base64 PNG (``data:`` URIs), so the file can be mailed or archived alone.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import re
from pathlib import Path

from icl_symbolic.core.errors import ICLError
from icl_symbolic.output.mathml import latex_to_mathml
from icl_symbolic.verification.evidence import EVIDENCE, tally, tally_rows
from icl_symbolic.verification.findings import TITLE as FINDINGS_TITLE
from icl_symbolic.verification.findings import collect, status
from icl_symbolic.verification.runner import summary_line

_EVIDENCE_NOTE = (
    "Evidence per paper result: claims that came out as expected / claims run, "
    "[+n] skipped (need --full or --tier deep). A claim counts as evidence for a paper result only if a "
    "wrong statement in the paper could make it fail (derivation, independent, simulation). "
    "Consistency checks (one definition or formula written two ways) and self-tests (our "
    "own numerics, simulator, derivations beyond the paper and extensions) are kept but not "
    "counted; each says why in its evidence reason."
)

_MDE_NOTE = (
    "MDE: the minimum detectable error, the smallest relative error of the claimed value that "
    "the check would have flagged with probability >= 90 % at its false-alarm budget (statistical "
    "claims), or its tolerance as a relative error (deterministic claims); 0 for exact comparisons."
)


def _mde_cell(r) -> str:
    """The MDE column: a percentage, 'exact', or '-' (skipped, or no relative scale)."""
    if r.verdict == "skipped" or r.mde_rel is None:
        return "-"
    return "exact" if r.mde_rel == 0 else r.mde_text().removeprefix("MDE ")


FORMATS = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


def report_format(path) -> str:
    """``markdown`` or ``html`` from the file suffix; anything else is an ICLError."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise ICLError(f"--report: {path} must end in .md or .html")
    return fmt


def equation_html(latex: str) -> str:
    """The statement as MathML (drawn by the browser, offline), or '' when it cannot be converted.

    MathML draws ``cases`` and ``bmatrix`` (Eqs. (10), (14), (15)); the report
    always shows the LaTeX source as well, for copying.
    """
    try:
        return latex_to_mathml(latex)
    except ValueError:
        return ""


def _png_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _numbers(r) -> list[tuple[str, str]]:
    rows = []
    if r.computed is not None:
        rows.append(("computed", f"{r.computed.to_str(15)} ({r.computed.provenance()})"))
    if r.claimed is not None:
        rows.append(("claimed", f"{r.claimed.to_str(15)} ({r.claimed.provenance()})"))
    if r.residual is not None or r.zscore is not None:
        rows.append(("residual", r.measure()))
    c = r.claim
    rows.append(("tolerance", f"{c.tolerance.describe()}: {c.tolerance.reason}"))
    power = r.mde_sentence()
    if power:
        rows.append(("power", power))
    return rows


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>&~$])")


def _md(text) -> str:
    r"""Text from a claim file made inert in Markdown: every Markdown/HTML metacharacter is
    backslash-escaped (CommonMark allows it for all ASCII punctuation), so raw HTML, links,
    emphasis and code spans in a claim file show as typed; newlines become spaces.

    >>> print(_md("<script>alert(1)</script> **x** ``` |"))
    \<script\>alert\(1\)\</script\> \*\*x\*\* \`\`\` \|
    """
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).splitlines()))


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return _md(text)


def _fenced(kind: str, text: str) -> list[str]:
    """A fenced block that ``text`` cannot close: the fence is longer than its longest backtick run."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + kind, text, fence]


def _findings_markdown(results) -> list[str]:
    """The report's first section: one bullet per finding, its kind, the claims that confirm it, and
    the ones that did not (skipped or not as expected)."""
    out = [f"## {FINDINGS_TITLE}", ""]
    found = collect(results)
    if not found:
        return out + [f"None among the {len(results)} claims run (no claim run has a `finding`).", ""]
    for g in found:
        ids = ", ".join(f"`{i}`" for i in g["confirmed"]) or "not confirmed by this run"
        rest = f" *({_md(status(g))})*" if g["unconfirmed"] else ""
        out.append(f"- **{_md(g['kind'])}** ({ids}): {_md(g['finding'])}{rest}")
    return out + [""]


def _findings_html(results) -> list[str]:
    """The report's first section in HTML, as :func:`_findings_markdown`; ids link to their claims."""
    e = html.escape
    out = [f"<h2 id='findings'>{e(FINDINGS_TITLE)}</h2>"]
    found = collect(results)
    if not found:
        return out + [f"<p>None among the {len(results)} claims run (no claim run has a <code>finding</code>).</p>"]
    items = []
    for g in found:
        ids = ", ".join(f"<a href='#{e(i)}'><code>{e(i)}</code></a>" for i in g["confirmed"])
        rest = f" <i>({e(status(g))})</i>" if g["unconfirmed"] else ""
        items.append(f"<li><b>{e(g['kind'])}</b> ({ids or 'not confirmed by this run'}): {e(g['finding'])}{rest}</li>")
    return out + ["<ul>", *items, "</ul>"]


def _header(summary, meta):
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return when, summary_line(summary), meta or {}


def render_markdown(results, summary, meta=None) -> str:
    """The report as Markdown (figures as embedded data URIs)."""
    when, line, meta = _header(summary, meta)
    out = [
        "# icl-symbolic verification report",
        "",
        "Paper: Letey, Rysmakhanov, Lu, Pehlevan, Zavatone-Veth, *What can linear attention "
        "learn from nonlinear teachers in-context?*, arXiv:2610.10761v1.",
        "",
        f"Generated {when}. Mode: {meta.get('mode', 'quick')}. Files: "
        f"{', '.join(meta.get('files', [])) or 'shipped derivations'}.",
        "",
        f"**{line}**",
        "",
        *_findings_markdown(results),
        "## Claims",
        "",
        _EVIDENCE_NOTE,
        "",
        "| paper result | " + " | ".join(EVIDENCE) + " | |",
        "|---" * (len(EVIDENCE) + 2) + "|",
    ]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in tally_rows(tally(results))]
    out += [
        "",
        _MDE_NOTE,
        "",
        "| ok | id | verdict | evidence | residual / z | MDE | source |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        out.append(
            f"| {'yes' if r.ok else '**NO**'} | `{r.claim.id}` | {_cell(r.label)} | "
            f"{r.claim.evidence} | {_cell(r.measure())} | {_cell(_mde_cell(r))} | {_cell(r.claim.source)} |"
        )
    unit = None
    for r in results:
        c = r.claim
        if c.unit and c.unit != unit:
            unit = c.unit
            out += ["", f"## {unit}"]
        out += [
            "",
            f"### `{c.id}`: {_md(r.label)}",
            "",
            f"*{_md(c.source)}* -- evidence: {_md(c.evidence)}"
            f"{' for ' + _md(c.result) if c.result else ''}, method: {_md(c.method)}, "
            f"check: `{c.check}`, expected: {_md(c.expected)}",
        ]
        if c.evidence_reason:
            out += ["", f"Evidence reason ({_md(c.evidence)}): {_md(c.evidence_reason)}"]
        out += ["", "Statement (as the claim file writes it):", ""]
        out += _fenced("math", " ".join(c.statement.split())) + [""]
        for k, v in _numbers(r):
            out.append(f"- **{k}**: {_md(v)}")
        out += ["", _md(r.detail)]
        if c.why:
            out += ["", f"Why: {_md(c.why)}"]
        if c.note:
            out += ["", f"Note: {_md(c.note)}"]
        for title, png in r.figures:
            out += ["", f"![{_md(title)}]({_png_uri(png)})", "", f"*{_md(title)}*"]
    return "\n".join(out) + "\n"


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:60rem;margin:2rem auto;
padding:0 1rem;color:#222;line-height:1.45}
table{border-collapse:collapse;width:100%;font-size:.9rem}
td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f2f2f2} code,pre{font-family:ui-monospace,Menlo,Consolas,monospace}
pre{background:#f7f7f7;padding:.5rem;overflow-x:auto;border-left:3px solid #888}
.ok{color:#0a6b2a;font-weight:600}.bad{color:#b00020;font-weight:700}
.claim{border-top:1px solid #ddd;margin-top:1.5rem;padding-top:.5rem}
.evr{font-size:.9rem;color:#444}
.summary{font-size:1.1rem;font-weight:600;padding:.5rem;background:#eef}
img{max-width:100%}
.eq{overflow-x:auto;overflow-y:hidden;padding:.4rem 0;font-size:1.15rem}
math{font-family:'Latin Modern Math','STIX Two Math','Cambria Math',math}
mtd[columnalign=left]{text-align:left}
pre.tex{font-size:.8rem;color:#555;white-space:pre-wrap}
"""


def render_html(results, summary, meta=None) -> str:
    """The report as one self-contained HTML page (inline CSS, base64 figures, no scripts)."""
    when, line, meta = _header(summary, meta)
    e = html.escape
    rows = []
    for r in results:
        cls = "ok" if r.ok else "bad"
        rows.append(
            f"<tr><td class='{cls}'>{'yes' if r.ok else 'NO'}</td><td><a href='#{e(r.claim.id)}'>"
            f"<code>{e(r.claim.id)}</code></a></td><td class='{cls}'>{e(r.label)}</td>"
            f"<td>{e(r.claim.evidence)}</td><td>{e(r.measure())}</td><td>{e(_mde_cell(r))}</td>"
            f"<td>{e(r.claim.source)}</td></tr>"
        )
    ev_rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in tally_rows(tally(results)))
    body = [
        "<h1>icl-symbolic verification report</h1>",
        "<p>Paper: Letey, Rysmakhanov, Lu, Pehlevan, Zavatone-Veth, <em>What can linear attention "
        "learn from nonlinear teachers in-context?</em>, arXiv:2610.10761v1.</p>",
        f"<p>Generated {e(when)}. Mode: {e(meta.get('mode', 'quick'))}. Files: "
        f"{e(', '.join(meta.get('files', [])) or 'shipped derivations')}.</p>",
        f"<p class='summary'>{e(line)}</p>",
        *_findings_html(results),
        "<h2>Claims</h2>",
        f"<p>{e(_EVIDENCE_NOTE)}</p>",
        "<table><tr><th>paper result</th>" + "".join(f"<th>{k}</th>" for k in EVIDENCE) + "<th>note</th></tr>",
        ev_rows,
        "</table><p></p>",
        f"<p>{e(_MDE_NOTE)}</p>",
        "<table><tr><th>ok</th><th>id</th><th>verdict</th><th>evidence</th><th>residual / z</th>"
        "<th>MDE</th><th>source</th></tr>",
        *rows,
        "</table>",
    ]
    unit = None
    for r in results:
        c = r.claim
        if c.unit and c.unit != unit:
            unit = c.unit
            body.append(f"<h2>{e(unit)}</h2>")
        cls = "ok" if r.ok else "bad"
        items = "".join(f"<li><b>{e(k)}</b>: {e(v)}</li>" for k, v in _numbers(r))
        figs = "".join(
            f"<figure><img alt='{e(t)}' src='{_png_uri(p)}'><figcaption>{e(t)}</figcaption></figure>"
            for t, p in r.figures
        )
        extra = (f"<p>Why: {e(c.why)}</p>" if c.why else "") + (f"<p>Note: {e(c.note)}</p>" if c.note else "")
        reason = (
            f"<p class='evr'>Evidence reason ({e(c.evidence)}): {e(c.evidence_reason)}</p>" if c.evidence_reason else ""
        )
        eq = equation_html(c.statement)
        eq_html = f"<div class='eq'>{eq}</div>" if eq else ""
        body.append(
            f"<div class='claim' id='{e(c.id)}'><h3><code>{e(c.id)}</code>: "
            f"<span class='{cls}'>{e(r.label)}</span></h3>"
            f"<p><i>{e(c.source)}</i> &mdash; evidence: {e(c.evidence)}"
            f"{e(' for ' + c.result) if c.result else ''}, method: {e(c.method)}, check: <code>{e(c.check)}</code>,"
            f" expected: {e(c.expected)}</p>{reason}<p>Statement (as the claim file writes it):</p>{eq_html}"
            f"<pre class='tex' title='LaTeX source'>{e(c.statement)}</pre><ul>{items}</ul><p>{e(r.detail)}</p>{extra}{figs}</div>"
        )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<title>icl-symbolic verification report</title>"
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def render(path, results, summary, meta=None) -> str:
    """Render for the format given by ``path``'s suffix."""
    fmt = report_format(path)
    return (render_markdown if fmt == "markdown" else render_html)(results, summary, meta)
