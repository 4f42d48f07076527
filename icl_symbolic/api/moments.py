"""Lemma 1: the exact finite-size conditional moments."""

from __future__ import annotations

from icl_symbolic.core import defaults as D
from icl_symbolic.model.moments import (
    MAX_MC_WORK,
    MAX_PROMPT_BYTES,
    MEANING,
    Moments,
    MonteCarlo,
    finite_ell_gaps,
    leading_order,
    mc_estimate,
)
from icl_symbolic.model.moments import conditional_moments as _conditional_moments
from icl_symbolic.model.moments import mc_moments as _mc_moments
from icl_symbolic.output.plotting import finite_ell_figure


def conditional_moments(
    f, *, rho=D.RHO, d: int = D.D, ell: int | None = None, omega=1, digits: int = D.DIGITS
) -> Moments:
    """Exact finite-size Lemma 1 moments of u, s, y for a fixed task with |w|^2 = d omega
    (Appendix B, Eqs. (12)-(14), p. 8-9); ``ell`` defaults to 2d (alpha = 2)."""
    return _conditional_moments(f, rho, d, 2 * d if ell is None else ell, omega=omega, digits=digits)


def mc_moments(f, rho, d: int, ell: int, w, n: int, rng, progress=None, announce: bool = True) -> dict:
    """Monte-Carlo estimates of the conditional moments for the fixed task ``w`` from ``n`` sampled
    prompts (:func:`icl_symbolic.model.moments.mc_moments`, which takes the Monte-Carlo knobs as one
    :class:`~icl_symbolic.model.moments.MonteCarlo` record built here): ``rng`` a numpy Generator or
    an integer seed; ``progress`` None, True (stderr) or a callable taking one line; ``announce`` False
    when the caller has already printed the estimate.

    >>> import numpy as np
    >>> est = mc_moments("g", 0.1, 4, 8, np.ones(4), 20000, 20261130)
    >>> abs(float(est["E_u"]) - 1) < 4 * est["E_u"].stderr
    True
    """
    return _mc_moments(f, rho, d, ell, w, MonteCarlo(n, rng, progress), announce=announce)


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
