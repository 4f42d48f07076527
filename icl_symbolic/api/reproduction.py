"""A published data table simulated row by row at its own d and convention (docs/reproduce.md)."""

from __future__ import annotations

from pathlib import Path

from icl_symbolic.api._args import number, seeds_of
from icl_symbolic.api.simulation import check_simulable
from icl_symbolic.core import defaults as D
from icl_symbolic.core.cost import duration
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.limits import MAX_TABLE_BYTES, read_text_limited
from icl_symbolic.core.stats import MIN_SEEDS
from icl_symbolic.core.verdict import DEFAULT_MDE_PCT, INCONCLUSIVE, pct
from icl_symbolic.model.setting import published_spread
from icl_symbolic.output.plotting import reproduce_figure
from icl_symbolic.studies.reproduce import (
    PARAMS,
    SPREAD_READING,
    SPREADS,
    Judging,
    Reproduction,
    RowRun,
    judge_rows,
    parse_columns,
    read_table,
    simulate_rows,
    swept_name,
    theory_curve,
)
from icl_symbolic.studies.reproduce import reproduce as _reproduce
from icl_symbolic.theory.asymptotic import ERRORS


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
    mde: float = DEFAULT_MDE_PCT / 100,
    slip_rows: int | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    progress=None,
) -> Reproduction:
    """Simulate every row of the data table ``table`` (a CSV file with a header line; ``#`` lines are
    comments) at its own d and ``convention`` with the same seeds, and compare with the table: our value
    +- SE, theirs +- SE, z and its limit (the two-sided ``false_alarm`` budget split over the rows), the
    minimum detectable error of each row, a verdict ("reproduced" only when every row agrees and every
    row's MDE is at most ``mde``, a fraction of their value, default 5 %; else "NOT reproduced" or
    "inconclusive", :mod:`icl_symbolic.core.verdict`); on a disagreeing row the slips catalogue is tried (``slip_rows`` worst rows; None: all).

    ``columns``: our names = the table's headers (``"d=d,mean=m,spread=s,runs=n"`` or a dict); the
    parameters alpha, kappa, tau, rho, lam not named there are the keywords; ``spread``: ``std`` (per-run
    sample standard deviation, ddof 1, needs ``runs=``), ``std0`` (ddof 0, needs ``runs=``), ``published``
    (per-run, as the convention's authors publish it: ``letey2024`` np.std with ddof 0 and the gap's spread
    in quadrature, docs/conventions.md; needs ``runs=``) or ``se``; ``error``: the error the table reports (``icl``,
    ``idg``, ``gap``).  ``seeds`` is a count (at least ``MIN_SEEDS``), a list, or ``"auto"``: a pilot of
    ``MIN_SEEDS`` seeds per row, then, when it is inconclusive and more seeds can reach ``mde``, the
    whole run again with the seeds per row its advice names (at most :data:`MAX_AUTO_SEEDS`; the cost is
    announced through ``progress`` first).  The pilot only chooses the count from the standard errors,
    never from the differences, so the final test keeps its false-alarm budget.  The library side of
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
    if isinstance(seeds, str):
        if seeds != "auto":
            raise ICLError(f"seeds: a count, a list or 'auto', got {seeds!r}")
        seeds = _auto_seeds(rows, f, convention, error, seed, n_test, false_alarm, mde, jobs, scheduler, progress)
    return _reproduce(
        rows,
        f,
        convention,
        error,
        RowRun(seeds_of(seeds, seed), n_test, jobs, scheduler, progress),
        Judging(false_alarm, mde, slip_rows),
    )


#: the most seeds per row ``seeds="auto"`` runs
MAX_AUTO_SEEDS = 2000


def _auto_seeds(rows, f, convention, error, seed, n_test, false_alarm, mde, jobs, scheduler, progress) -> int:
    """The seeds per row of ``seeds="auto"``: MIN_SEEDS, or what the pilot's advice names to reach ``mde``."""
    pilot_seeds = seeds_of(MIN_SEEDS, seed)
    sims = simulate_rows(
        rows,
        f,
        convention=convention,
        seeds=pilot_seeds,
        n_test=n_test,
        jobs=jobs,
        scheduler=scheduler,
        progress=progress,
    )
    j = judge_rows(rows, sims, convention, f=f, error=error, false_alarm=false_alarm, mde=mde).judgement
    if j.status != INCONCLUSIVE or j.seeds is None or j.seeds <= MIN_SEEDS:
        return MIN_SEEDS
    n = min(j.seeds, MAX_AUTO_SEEDS)
    if progress is not None:
        progress(
            f"--seeds-per-row auto: {MIN_SEEDS} seeds leave an MDE of {pct(j.mde_rel)}; running {n} seeds per row "
            f"(estimated {duration(n * j.seconds / j.seeds)}) to reach {pct(mde)}"
            + (f" (capped at {MAX_AUTO_SEEDS}; {j.seeds} would be needed)" if n < j.seeds else "")
        )
    return n


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
    "SPREAD_READING",
    "ERRORS",
    "MIN_SEEDS",
    "MAX_TABLE_BYTES",
    "MAX_AUTO_SEEDS",
]
