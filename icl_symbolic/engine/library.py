"""The built-in teacher table (``icl-symbolic coeffs --library``).

Paper: Sec. 2, Eq. (2), p. 2 (teachers f) and the teaching table of
``docs/hermite.md`` (g, g^2 - 1, g^3, a constant).  The paper's own teachers
are ``sin`` (Fig. 1, p. 4) and ``tanh`` (Fig. 2, p. 4).

Each entry maps a short name to an expression in the input language
(:mod:`icl_symbolic.engine.expr`); nothing here is evaluated as Python.

>>> list(LIBRARY)[:4]
['g', 'g^2-1', 'g^3', 'const']
>>> from icl_symbolic.engine.expr import parse_expr
>>> all(parse_expr(s) is not None for s in LIBRARY.values())
True
"""

from __future__ import annotations

from types import MappingProxyType

from icl_symbolic.engine.hermite import hermite_coeffs

LIBRARY = MappingProxyType(
    {
        "g": "g",
        "g^2-1": "g**2 - 1",
        "g^3": "g**3",
        "const": "2",
        "sin": "sin(g)",
        "cos": "cos(g)",
        "tanh": "tanh(g)",
        "erf": "erf(g)",
        "relu": "relu(g)",
        "abs": "abs(g)",
        "sign": "sign(g)",
        "heaviside": "heaviside(g)",
        "sigmoid": "sigmoid(g)",
        "softplus": "softplus(g)",
        "gelu": "gelu(g)",
        "silu": "silu(g)",
        "exp": "exp(g)",
    }
)

__all__ = ["LIBRARY", "library_coeffs"]


def library_coeffs(M: int = 8, rho=0, digits: int = 30, progress=None) -> list:
    """:func:`~icl_symbolic.engine.hermite.hermite_coeffs` for every library teacher, in order.

    ``progress(i, n, name)`` (optional) is called before each teacher.
    """
    out = []
    for i, (name, text) in enumerate(LIBRARY.items()):
        if progress:
            progress(i, len(LIBRARY), name)
        out.append((name, hermite_coeffs(text, M=M, rho=rho, digits=digits)))
    return out
