"""A published data table simulated row by row at its own d and convention (docs/reproduce.md)."""

from __future__ import annotations

from pathlib import Path

from icl_symbolic.api._args import number, seeds_of
from icl_symbolic.api.simulation import check_simulable
from icl_symbolic.core import defaults as D
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import MIN_SEEDS
from icl_symbolic.diagnosis.slips import read_text_limited
from icl_symbolic.model.setting import published_spread
from icl_symbolic.output.plotting import reproduce_figure
from icl_symbolic.studies.reproduce import (
    PARAMS,
    SPREADS,
    Reproduction,
    parse_columns,
    read_table,
    swept_name,
    theory_curve,
)
from icl_symbolic.studies.reproduce import reproduce as _reproduce
from icl_symbolic.theory.asymptotic import ERRORS

#: the largest table read (bytes)
MAX_TABLE_BYTES = 1 << 20


def reproduce(
    table,
    *,
    columns,
    f: str = "g",
    spread: str = "std",
    alpha=D.ALPHA,
    kappa=D.KAPPA,
    tau=D.TAU,
    rho=D.RHO,
    lam=D.LAM,
    convention=None,
    error: str = "icl",
    seeds=MIN_SEEDS,
    seed: int = 0,
    n_test: int = 100,
    false_alarm: float = 1e-3,
    slip_rows: int | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    progress=None,
) -> Reproduction:
    """Simulate every row of the data table ``table`` (a CSV file with a header line; ``#`` lines are
    comments) at its own d and ``convention`` with the same seeds, and compare with the table: our value
    +- SE, theirs +- SE, z and its limit (the two-sided ``false_alarm`` budget split over the rows), a
    verdict; on a disagreeing row the slips catalogue is tried (``slip_rows`` worst rows; None: all).

    ``columns``: our names = the table's headers (``"d=d,mean=m,spread=s,runs=n"`` or a dict); the
    parameters alpha, kappa, tau, rho, lam not named there are the keywords; ``spread``: ``std`` (per-run
    sample standard deviation, needs ``runs=``), ``published`` (per-run, as the convention's authors
    publish it: ``letey2024`` np.std with ddof 0 and the gap's spread in quadrature, docs/conventions.md;
    needs ``runs=``) or ``se``; ``error``: the error the table reports (``icl``,
    ``idg``, ``gap``).  ``seeds`` is a count (at least ``MIN_SEEDS``) or a list.  The library side of
    ``icl-symbolic reproduce``; returns a :class:`~icl_symbolic.studies.reproduce.Reproduction`
    (``.ok``, ``.verdict``, ``.rows``, ``.to_json()``).
    """
    check_simulable(f)  # before anything is computed (as simulate)
    cols = parse_columns(columns) if isinstance(columns, str) else dict(columns)
    fixed = {k: number(v, k) for k, v in (("alpha", alpha), ("kappa", kappa), ("tau", tau), ("rho", rho), ("lam", lam))}
    if not Path(table).is_file():
        raise ICLError(f"{table}: no such file")
    text = read_text_limited(table, MAX_TABLE_BYTES, "the table")
    rows = read_table(text, cols, fixed, spread, published_spread(convention))
    return _reproduce(
        rows,
        f,
        convention=convention,
        error=error,
        seeds=seeds_of(seeds, seed),
        false_alarm=false_alarm,
        n_test=n_test,
        jobs=jobs,
        scheduler=scheduler,
        slip_rows=slip_rows,
        progress=progress,
    )


def plot_reproduction(res: Reproduction, *, table: str = "table"):
    """Theirs and ours with error bars against the swept parameter, with the d -> infinity theory
    (the plot of ``reproduce --plot``)."""
    if not isinstance(res, Reproduction):
        raise ICLError("plot_reproduction takes a Reproduction (from reproduce)")
    xname = swept_name(res.rows)
    title = f"{table}: f = {res.f}, {res.error}, convention {res.convention.name}; {res.verdict}"
    return reproduce_figure(res.to_json()["points"], xname, theory_curve(res, xname), title)


__all__ = [
    "reproduce",
    "plot_reproduction",
    "Reproduction",
    "parse_columns",
    "PARAMS",
    "SPREADS",
    "ERRORS",
    "MIN_SEEDS",
    "MAX_TABLE_BYTES",
]
