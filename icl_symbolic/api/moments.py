"""Lemma 1: the exact finite-size conditional moments."""

from __future__ import annotations

from icl_symbolic.core import defaults as D
from icl_symbolic.model.moments import (
    MAX_MC_WORK,
    MAX_PROMPT_BYTES,
    MEANING,
    Moments,
    finite_ell_gaps,
    leading_order,
    mc_estimate,
    mc_moments,
)
from icl_symbolic.model.moments import conditional_moments as _conditional_moments
from icl_symbolic.output.plotting import finite_ell_figure


def conditional_moments(
    f, *, rho=D.RHO, d: int = D.D, ell: int | None = None, omega=1, digits: int = D.DIGITS
) -> Moments:
    """Exact finite-size Lemma 1 moments of u, s, y for a fixed task with |w|^2 = d omega
    (Appendix B, Eqs. (12)-(14), p. 8-9); ``ell`` defaults to 2d (alpha = 2)."""
    return _conditional_moments(f, rho, d, 2 * d if ell is None else ell, omega=omega, digits=digits)


def plot_finite_ell(gaps, ell_grid, title: str):
    """|exact - leading order| of each coefficient against ell (the plot of ``moments --plot``;
    ``gaps`` from :func:`finite_ell_gaps`)."""
    return finite_ell_figure(gaps, ell_grid, title)


__all__ = [
    "conditional_moments",
    "Moments",
    "leading_order",
    "mc_moments",
    "mc_estimate",
    "MAX_MC_WORK",
    "MAX_PROMPT_BYTES",
    "finite_ell_gaps",
    "plot_finite_ell",
    "MEANING",
]
