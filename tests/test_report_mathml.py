"""The report draws every statement as MathML (offline) and keeps the LaTeX as copyable text."""

import html
import re

import pytest

from icl_symbolic.output.mathml import latex_to_mathml
from icl_symbolic.verification.claimfile import load_claims
from icl_symbolic.verification.report import render_html, render_markdown
from icl_symbolic.verification.runner import ClaimResult, summarize

CLAIMS = load_claims()


def _body(mathml: str) -> str:
    """The drawn part: MathML without the x-tex annotation."""
    return re.sub(r"<annotation .*?</annotation>", "", mathml, flags=re.S)


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_every_shipped_statement_converts_without_leftover_latex(claim):
    m = latex_to_mathml(claim.statement)
    body = _body(m)
    assert "\\" not in body, "a LaTeX command was not converted"
    assert re.search(r"\{[a-z]", body) is None, "a LaTeX group was copied as text"
    source = re.search(r'<annotation encoding="application/x-tex">(.*?)</annotation>', m, re.S).group(1)
    assert html.unescape(source) == claim.statement


@pytest.mark.parametrize(
    "cid,rows,cols,fence",
    [
        ("a1zero.eq10_error", 2, 2, "&#x0007B;"),
        ("a1zero.eq15_lam_tilde", 2, 2, "&#x0007B;"),
        ("lemma1.E_hh", 2, 2, "&#x0005B;"),
    ],
)
def test_cases_and_matrices_become_tables(cid, rows, cols, fence):
    """Eqs. (10), (15) (cases) and (14) (bmatrix): the displays mathtext could not draw."""
    claim = next(c for c in CLAIMS if c.id == cid)
    body = _body(latex_to_mathml(claim.statement))
    table = re.search(r"<mtable>(.*)</mtable>", body, re.S).group(1)
    assert table.count("<mtr>") == rows
    assert all(r.count("<mtd") == cols for r in table.split("<mtr>")[1:])
    assert fence in body


def test_bad_latex_is_a_value_error_and_the_report_keeps_the_source():
    with pytest.raises(ValueError):
        latex_to_mathml(r"\frac{1}{")


def _result(claim):
    return ClaimResult(claim=claim, verdict="holds", ok=True, detail="detail <text>")


def test_html_report_has_mathml_and_copyable_latex_and_no_images_for_equations():
    picked = [c for c in CLAIMS if c.id in ("a1zero.eq10_error", "lemma1.E_hh", "eq8.rho_f_sum")]
    results = [_result(c) for c in picked]
    page = render_html(results, summarize(results))
    assert page.count("<math ") == 3 and "<img class='eq'" not in page
    for c in picked:
        assert f"<pre class='tex' title='LaTeX source'>{html.escape(c.statement)}</pre>" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/1998/Math/MathML"', "")
    assert "https://" not in page and "<script" not in page
    md = render_markdown(results, summarize(results))
    assert md.count("```math") == 3 and "data:image/png" not in md
