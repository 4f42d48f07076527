r"""How result objects show themselves: short text reprs, HTML and LaTeX for notebooks.

A result is shown as a small table of *quantities*: a name (plain and LaTeX),
a :class:`~icl_symbolic.core.values.Value` (or None when undefined, with the reason
in the notes), its closed form when exact, and how it was obtained.  Numbers
are shown with at most ``digits`` significant digits and never more than the
Value certifies (:meth:`Value.to_str`).  HTML draws names and closed forms as
MathML (:mod:`icl_symbolic.output.mathml`), so nothing is fetched and no JavaScript
is needed.

>>> import sympy
>>> from icl_symbolic.core.values import Value
>>> rows = [Quantity("a1", "a_1", Value.from_exact(sympy.exp(-sympy.Rational(1, 2)), 30))]
>>> print(text_table("demo", rows, digits=12))
demo
  a1 = 0.606530659713  = exp(-1/2)  [exact]
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import mpmath
import sympy

from icl_symbolic.core.values import Value
from icl_symbolic.output.mathml import latex_to_mathml

__all__ = ["Quantity", "text_table", "html_table", "latex_table", "short_how"]


@dataclass(frozen=True)
class Quantity:
    """One row: plain name, LaTeX name, the Value (None: undefined)."""

    name: str
    latex: str
    value: Value | None


def short_how(v: Value) -> str:
    """A few words on how ``v`` was obtained (the full phrase is ``v.provenance()``).

    A value that is not finite (a divergence) shows its note, which says why.
    """
    if v.note and not mpmath.isfinite(mpmath.mpf(v.value)):
        return v.note
    if v.method == "exact":
        return "exact"
    if v.method == "mpmath":
        return f"mpmath, {v.digits} digits" if v.digits else "mpmath"
    return v.provenance()


def _how_long(v: Value) -> str:
    return short_how(v) if v.note and not mpmath.isfinite(mpmath.mpf(v.value)) else v.provenance()


def _closed_form(v: Value | None, width: int | None = 40) -> str:
    if v is None or v.method != "exact":
        return ""
    s = str(v.exact)
    return s if width is None or len(s) <= width else s[: width - 3] + "..."


def text_table(title: str, rows, digits: int = 16, footer: str = "") -> str:
    """Aligned plain text: ``name = decimal  = closed form  [how]``."""
    w = max((len(r.name) for r in rows), default=0)
    lines = [title]
    for r in rows:
        if r.value is None:
            lines.append(f"  {r.name:<{w}} = undefined (see notes)")
            continue
        form = _closed_form(r.value)
        lines.append(
            f"  {r.name:<{w}} = {r.value.to_str(digits)}"
            + (f"  = {form}" if form else "")
            + f"  [{short_how(r.value)}]"
        )
    if footer:
        lines.append(footer)
    return "\n".join(lines)


def _math(latex: str) -> str:
    try:
        return latex_to_mathml(latex, display="inline")
    except ValueError:
        return f"<code>{html.escape(latex)}</code>"


def html_table(title: str, rows, digits: int = 16, footer: str = "") -> str:
    """An HTML table (quantity, value, closed form, how obtained) with MathML names and forms."""
    e = html.escape
    body = []
    for r in rows:
        v = r.value
        if v is None:
            body.append(f"<tr><td>{_math(r.latex)}</td><td>undefined</td><td></td><td>see notes</td></tr>")
            continue
        form = _math(sympy.latex(v.exact)) if v.method == "exact" else ""
        body.append(
            f"<tr><td>{_math(r.latex)}</td><td><code>{e(v.to_str(digits))}</code></td>"
            f"<td>{form}</td><td>{e(_how_long(v))}</td></tr>"
        )
    foot = f"<p style='font-size:smaller'>{e(footer)}</p>" if footer else ""
    return (
        f"<div><p><b>{e(title)}</b></p><table><tr><th>quantity</th><th>value</th>"
        f"<th>closed form</th><th>how obtained</th></tr>{''.join(body)}</table>{foot}</div>"
    )


def latex_table(title: str, rows, digits: int = 16) -> str:
    r"""A LaTeX ``array`` (for ``_repr_latex_``): name, decimal, closed form."""
    lines = []
    for r in rows:
        v = r.value
        if v is None:
            lines.append(f"{r.latex} & \\text{{undefined}} & \\\\")
            continue
        form = sympy.latex(v.exact) if v.method == "exact" else f"\\text{{{short_how(v)}}}"
        lines.append(f"{r.latex} & {v.to_str(digits)} & {form} \\\\")
    title = title.replace("\\", "").replace("_", "\\_").replace("^", "\\^{}")
    return "$$\\begin{array}{lll}\\text{" + title + "} & & \\\\ \\hline\n" + "\n".join(lines) + "\n\\end{array}$$"
