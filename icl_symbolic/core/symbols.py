"""Symbols of the paper shared by several modules.

``g``: the standard Gaussian variable of the Hermite expansion (Eq. 2, p. 2),
real.  Every module that builds or parses expressions in ``g`` uses this one
object, so expressions from the parser, the Hermite polynomials and the
Gaussian expectations combine without renaming.
"""

from __future__ import annotations

import sympy

#: The Gaussian variable of the paper's Hermite expansion (Eq. 2, p. 2).
g = sympy.Symbol("g", real=True)
