"""The paper's figures regenerated (Fig. 1, Fig. 2, the a1 = 0 figure): PNG + CSV + JSON."""

from __future__ import annotations

from icl_symbolic.core import defaults as D
from icl_symbolic.studies.figures import CSV_COLUMNS, FIGURES, make_figure


def figure(name, out=None, *, quick: bool = False, seeds=D.SEEDS, progress=None, **overrides) -> dict:
    """Compute figure ``name`` (``"1"``, ``"2"``, ``"a1zero"``) and write figureN.png, .csv and .json into
    the folder ``out`` (default fig1/, fig2/, fig_a1zero/), nothing before everything is computed.
    ``seeds``: a count or a list; ``overrides``: ``d``, ``jobs``, ``scheduler``, ``tasks``, ``order`` (1: the
    finite-d theory, :mod:`icl_symbolic.theory.finite_d`, at each simulated point, rows of kind
    ``theory_finite_d``), ...
    Returns the metadata (caption, parameters, ``files``) with the plotted rows in ``points``."""
    seeds = range(int(seeds)) if isinstance(seeds, int) else tuple(seeds)
    return make_figure(str(name), out, quick=quick, seeds=seeds, progress=progress, **overrides)


__all__ = ["figure", "FIGURES", "CSV_COLUMNS"]
