"""Eq. (2), Eq. (8): Hermite coefficients of a teacher, and their plot."""

from __future__ import annotations

from icl_symbolic.core import defaults as D
from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.hermite import HermiteResult
from icl_symbolic.engine.hermite import hermite_coeffs as _hermite_coeffs
from icl_symbolic.engine.library import library_coeffs
from icl_symbolic.output.plotting import spectrum_figure


def hermite_coeffs(
    f, *, rho=D.RHO, M: int = D.M, digits: int = D.DIGITS, exact: bool = True, progress=None
) -> HermiteResult:
    """Hermite coefficients a_0..a_M of ``f`` and a1, E[f^2], rho_f, rho_nonlinear (Eq. (2), p. 2; Eq. (8), p. 3).

    ``f`` is an expression string in the input language (never evaluated as
    Python), a SymPy expression, or a callable accepting mpmath numbers.  Exact
    (SymPy) where a closed form exists, else mpmath quadrature with certified
    digits.  ``progress``: a callable taking one line; a quadrature that will run long announces its
    estimate and reports progress there.  See :func:`icl_symbolic.engine.hermite.hermite_coeffs`.
    """
    return _hermite_coeffs(f, M=M, rho=rho, digits=digits, exact=exact, progress=progress)


def library(*, rho=D.RHO, M: int = D.M, digits: int = D.DIGITS, progress=None) -> list:
    """The built-in teacher table (``coeffs --library``): ``(name, HermiteResult)`` per teacher;
    ``progress(i, n, name)`` is called before each."""
    return library_coeffs(M=M, rho=rho, digits=digits, progress=progress)


def plot_spectrum(*results):
    """The Hermite energy spectrum a_m^2 against m of one or more :class:`HermiteResult`, each
    alone (labelled by its teacher) or as a ``(name, HermiteResult)`` pair (the plot of
    ``coeffs --plot``; :func:`library` gives such pairs)."""
    pairs = [r if isinstance(r, tuple) else (getattr(r, "label", None), r) for r in results]
    if not pairs or not all(len(p) == 2 and isinstance(p[1], HermiteResult) for p in pairs):
        raise ICLError("plot_spectrum takes HermiteResult objects (from hermite_coeffs)")
    return spectrum_figure(pairs)


__all__ = ["hermite_coeffs", "library", "plot_spectrum", "HermiteResult"]
