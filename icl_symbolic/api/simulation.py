"""Eqs. (1)-(7): the simulation, with its comparison with the theory, and its plot."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icl_symbolic.api._args import grid as _grid
from icl_symbolic.api._args import number as _number
from icl_symbolic.api._args import seeds_of as _seeds
from icl_symbolic.core import defaults as D
from icl_symbolic.core.errors import ICLError
from icl_symbolic.output.display import Quantity, html_table, latex_table, text_table
from icl_symbolic.output.plotting import sweep_figure
from icl_symbolic.output.rows import Rows
from icl_symbolic.simulation.simulator import SimResult
from icl_symbolic.simulation.simulator import simulate as _simulate
from icl_symbolic.studies.compare import theory_grid, with_theory


@dataclass(frozen=True)
class SimSweep(Rows):
    """Simulations over a grid of (alpha, kappa, tau): ``results`` in grid order."""

    results: tuple

    def __len__(self):
        return len(self.results)

    def __getitem__(self, i) -> SimResult:
        return self.results[i]

    def points(self) -> list[dict]:
        """One row per point: :meth:`SimResult.to_json` (with the comparison with the theory)."""
        return [r.to_json() for r in self.results]

    def to_json(self) -> dict:
        """``{"points": [SimResult.to_json(), ...]}``: the shape of ``simulate --json``."""
        return {"points": self.points()}

    def _rows(self):
        return [
            Quantity(
                f"alpha={r.alpha:g} kappa={r.kappa:g} tau={r.tau:g}",
                f"\\alpha={r.alpha:g},\\ \\kappa={r.kappa:g},\\ \\tau={r.tau:g}",
                r.e if r.e is not None else r.e_mc,
            )
            for r in self.results
        ]

    def _title(self):
        r = self.results[0]
        return f"Simulated ICL error e, f(g) = {r.teacher}, d = {r.d}, rho = {r.rho:g}, {len(r.seeds)} seeds per point"

    def __repr__(self):
        return text_table(self._title(), self._rows(), 6)

    def _repr_html_(self):
        return html_table(self._title(), self._rows(), 6)

    def _repr_latex_(self):
        return latex_table(self._title(), self._rows(), 6)


def simulate(
    f,
    *,
    rho=D.RHO,
    alpha=D.ALPHA,
    kappa=D.KAPPA,
    tau=D.TAU,
    lam=D.LAM,
    d: int = D.D,
    C_train=D.C_TRAIN,
    C_test=None,
    seeds=D.SEEDS,
    seed: int = 0,
    n_test: int | None = None,
    progress=None,
    **options,
):
    """Train the reduced linear-attention model on teacher ``f`` and measure its ICL error
    (Sec. 2, Eqs. (1)-(7), p. 2-3).

    ``seeds`` is a count (seeds ``seed, seed+1, ...``) or a list of seeds.  With
    scalars, a :class:`SimResult` (``.e``: exact test functional, mean and SE over
    seeds; ``.e_idg``: the IDG error of the same Gamma on its k pretraining tasks;
    ``.e_mc``: Monte-Carlo test error; ``.e_theory``, ``.z`` and ``.theory``: the comparison
    with the d -> infinity theory, as ``simulate`` prints it); with a list for any of ``alpha,
    kappa, tau``, a :class:`SimSweep`.  ``options`` go to
    :func:`icl_symbolic.simulation.simulator.simulate` (``solver``, ``sampler``, ``exact``,
    ``convention`` = ``"default"`` | ``"letey2024"`` | a dict of the convention fields, ...;
    docs/conventions.md).
    """
    grids = {k: np.atleast_1d(_grid(v, k)) for k, v in (("alpha", alpha), ("kappa", kappa), ("tau", tau))}
    kw = dict(
        rho=_number(rho, "rho"),
        lam=_number(lam, "lam"),
        C_train=C_train,
        C_test=C_train if C_test is None else C_test,
        seeds=_seeds(seeds, seed),
        progress=progress,
        **options,
    )
    if n_test is not None:
        kw["n_test"] = n_test
    points = [(a, k, t) for a in grids["alpha"] for k in grids["kappa"] for t in grids["tau"]]
    results = tuple(with_theory(_simulate(f, int(d), float(a), float(k), float(t), **kw)) for a, k, t in points)
    swept = any(np.ndim(x) > 0 and not isinstance(x, str) for x in (alpha, kappa, tau))
    return SimSweep(results) if swept else results[0]


def plot_simulation(sim, *, digits: int = D.DIGITS):
    """Simulated ICL error (mean +- SE over seeds) of a :class:`SimResult` or :class:`SimSweep`
    against the swept parameter, with the d -> infinity theory on its own dense grid and at the
    simulated points (the plot of ``simulate --plot``; the ridgeless tau = 1 marked as an asymptote)."""
    results = list(sim) if isinstance(sim, SimSweep) else [sim]
    if not results or not all(isinstance(r, SimResult) for r in results):
        raise ICLError("plot_simulation takes a SimResult or a SimSweep (from simulate)")
    points = [(r if r.theory is not None else with_theory(r, digits)).to_json() for r in results]
    return sweep_figure(points, theory_grid(results[0].teacher, points, digits=digits))


__all__ = ["simulate", "plot_simulation", "SimResult", "SimSweep"]
