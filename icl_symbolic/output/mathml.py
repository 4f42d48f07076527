r"""LaTeX to MathML, offline, for the HTML report and the notebook reprs.

The paper's displays use ``cases`` (Eqs. (10), (15)) and ``bmatrix`` (Eq. (14));
MathML (converted by the pure-Python ``latex2mathml``, rendered natively by
current browsers) draws them, and needs no network and no TeX installation.
The LaTeX source travels inside the MathML as an ``application/x-tex``
annotation, and the report shows it as text too, so it can be copied.

>>> m = latex_to_mathml(r"\rho_{\rm nonlinear} = \rho_f - a_1^2")
>>> m.startswith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">')
True
>>> '<mi mathvariant="normal">nonlinear</mi>' in m
True
>>> '<annotation encoding="application/x-tex">\\rho_{\\rm nonlinear} = \\rho_f - a_1^2</annotation>' in m
True
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

__all__ = ["latex_to_mathml"]

_NS = 'xmlns="http://www.w3.org/1998/Math/MathML"'
_UPRIGHT_RUN = re.compile(r'(?:<mi mathvariant="normal">[^<]</mi>){2,}')
_TEXTTT = re.compile(r"\\texttt\{([^{}]*)\}")


def _prepare(latex: str) -> str:
    """Spellings latex2mathml reads differently from LaTeX, rewritten to ones it reads right."""
    text = " ".join(latex.split())
    # \texttt{e\_nonlinear}: latex2mathml keeps the backslash of \_ in text mode
    text = _TEXTTT.sub(lambda m: "\\texttt{" + m.group(1).replace("\\_", "_") + "}", text)
    return text


def _merge_upright(mathml: str) -> str:
    """``\\rm nonlinear`` comes out letter by letter; one multi-letter <mi> spaces it as a word."""
    return _UPRIGHT_RUN.sub(
        lambda m: '<mi mathvariant="normal">' + "".join(re.findall(r">([^<])<", m.group(0))) + "</mi>", mathml
    )


def latex_to_mathml(latex: str, display: str = "block") -> str:
    """``<math>`` markup for ``latex``, with the source kept as an x-tex annotation.

    Raises ``ValueError`` when latex2mathml cannot read the input (callers fall
    back to showing the source).
    """
    try:
        body = convert(_prepare(latex), display=display)
    except Exception as exc:  # latex2mathml raises several exception types on bad input
        raise ValueError(f"cannot convert to MathML: {exc}") from None
    body = _merge_upright(body).replace("<mo>&#x0002F;</mo>", '<mo lspace="0" rspace="0">/</mo>')
    head = f'<math {_NS} display="{display}">'
    if not body.startswith(head) or not body.endswith("</math>"):
        raise ValueError("unexpected latex2mathml output")
    inner = body[len(head) : -len("</math>")]
    note = f'<annotation encoding="application/x-tex">{html.escape(latex, quote=False)}</annotation>'
    return f"{head}<semantics><mrow>{inner}</mrow>{note}</semantics></math>"
