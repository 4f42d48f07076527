"""Reproduce a published table of simulated errors at the table's own d and conventions.

Paper: the simulated errors of Sec. 2, Eqs. (1)-(7), p. 2-3 (ICL error) and the IDG
error (docs/idg.md); the conventions the paper leaves open (docs/conventions.md).

A table row names a setting (d and whatever of alpha, kappa, tau, rho, lam the table
sweeps; the rest is fixed for the whole table) and *their* number: a mean and its
spread, either a per-run standard deviation with a run count or a standard error.
Each row is simulated at its own d under the table's convention with ``seeds``
seeds; the row's z is

    z = (ours - theirs) / sqrt(SE_ours^2 + SE_theirs^2),

judged against the two-sided false-alarm budget split (Bonferroni) over the rows and
turned into Student t at the Welch-Satterthwaite dof of the two SEs.  Every row also
states its minimum detectable error, absolute and relative to their value (``mde_rel``,
90 % power, docs/power.md).  The verdict is the shared one of :mod:`icl_symbolic.core.verdict`:
"reproduced" only when every row agrees AND every row's ``mde_rel`` is at most the target
(``mde``, default 5 %); "NOT reproduced" when some row disagrees; otherwise "inconclusive",
with the seeds per row (and their estimated time, the simulator's cost model) that would
reach the target.

Their spread (``spread``): ``std``, a per-run sample standard deviation (ddof 1) over
``runs`` runs, SE = std/sqrt(runs); ``std0``, a population standard deviation (ddof 0, what
``numpy.std`` gives by default), SE = std/sqrt(runs - 1); ``se``, a standard error taken as
known.  Reading a per-run std as an SE would make their SE sqrt(runs) times too large and
let almost anything "agree"; the table's header line cannot tell the two apart, so the
reading is stated in every output (``spread_reading``).

When a row disagrees, the slips catalogue is run on it:

* **convention slips** (re-simulated on the same seeds): each convention option
  flipped in turn (random vs round-robin assignment, floor-k vs paper rounding,
  sphere vs Gaussian pretraining / test / both task laws, a ridge floor of 1e-6
  added or removed), the noise given as a standard deviation where a variance is
  meant and the reverse (rho -> rho^2, rho -> sqrt(rho)), and the argument order
  alpha <-> kappa;  a slip *explains* the row when their number agrees with the
  slipped simulation within the same limit;
* **number slips** (the catalogue of :mod:`icl_symbolic.diagnosis.slips`, ``transform``
  models with our value as the required one): offsets by one, squares, ...

:func:`example_table` makes the small example table shipped in ``docs/`` (our own
simulator, provenance in its JSON sidecar; ``benchmarks/make_reproduce_example.py``
regenerates both).
"""

from __future__ import annotations

import csv
import functools
import io
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.numbers import parse_float
from icl_symbolic.core.stats import MIN_SEEDS, seed_mean_se
from icl_symbolic.core.verdict import AGREES, DEFAULT_MDE_PCT, DISAGREES, RowTest, Verdict, decide, mde_with_seeds
from icl_symbolic.diagnosis import slips
from icl_symbolic.model.setting import CONVENTION_FIELDS, Convention, PublishedSpread, Setting, resolve_convention
from icl_symbolic.simulation.simulator import seed_seconds, simulate_many
from icl_symbolic.studies.extrapolate import bonferroni_z, seed_error, welch_dof
from icl_symbolic.theory.asymptotic import Ratios, check_error, e_nonlinear

#: the parameters a row may set (a column) or the table fixes (an option)
PARAMS = ("d", "alpha", "kappa", "tau", "rho", "lam")
#: the number columns of their side
VALUE_KEYS = ("mean", "spread", "runs")
SPREADS = ("std", "std0", "se", "published")
#: how each spread is read, as every output states it
SPREAD_READING = {
    "std": "per-run sample standard deviation (ddof 1) over runs: SE = spread/sqrt(runs), runs - 1 dof",
    "std0": "per-run population standard deviation (ddof 0) over runs: SE = spread/sqrt(runs - 1), runs - 1 dof",
    "se": "standard error of the mean, taken as known",
    "published": "per-run spread as the convention's authors publish it (docs/conventions.md): SE from its ddof and gap rule, runs - 1 dof",
}
MAX_ROWS = 500
MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class TableRow:
    """One row: the setting and their mean with its standard error (and dof, None = known)."""

    index: int
    params: dict
    theirs: float
    theirs_se: float
    theirs_dof: float | None


def parse_columns(text: str) -> dict:
    """``name=header,...`` -> {name: header}; names are :data:`PARAMS` and :data:`VALUE_KEYS`.

    >>> parse_columns("d=dim,mean=icl,spread=icl_std,runs=n")
    {'d': 'dim', 'mean': 'icl', 'spread': 'icl_std', 'runs': 'n'}
    """
    out = {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise ICLError(f"--columns: expected name=header, got {part!r}")
        k, v = (s.strip() for s in part.split("=", 1))
        if k not in PARAMS + VALUE_KEYS:
            raise ICLError(f"--columns: unknown name {k!r}; expected one of {', '.join(PARAMS + VALUE_KEYS)}")
        if k in out:
            raise ICLError(f"--columns: {k} given twice")
        out[k] = v
    for k in ("d", "mean", "spread"):
        if k not in out:
            raise ICLError(f"--columns must name the {k} column ({k}=HEADER)")
    return out


def read_table(
    text: str, columns: dict, fixed: dict, spread: str = "std", published: PublishedSpread | None = None
) -> list:
    """The rows of a CSV table (header line first) as :class:`TableRow`.

    ``columns`` maps our names to the table's headers (:func:`parse_columns`);
    ``fixed`` gives the parameters no column sets (a column overrides ``fixed``).  ``spread``: ``std`` (a per-run
    sample standard deviation, ddof 1; the ``runs`` column is then required: SE = std/sqrt(runs),
    runs - 1 dof), ``std0`` (ddof 0: SE = std/sqrt(runs - 1)), ``published`` (a per-run spread as the
    convention's authors publish it, ``published``, :class:`~icl_symbolic.model.setting.PublishedSpread`:
    for ``letey2024`` numpy's std, ddof 0, and the gap's spread in quadrature; also needs ``runs``) or
    ``se`` (a standard error, taken as known); :data:`SPREAD_READING`.
    """
    if spread not in SPREADS:
        raise ICLError(f"--spread must be one of {', '.join(SPREADS)}, got {spread!r}")
    if spread != "se" and "runs" not in columns:
        raise ICLError(f"--spread {spread} needs the run count: add runs=HEADER to --columns")
    published = PublishedSpread() if published is None else published
    if len(text.encode()) > MAX_BYTES:
        raise ICLError(f"the table is larger than {MAX_BYTES} bytes")
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    headers = reader.fieldnames or []
    missing = [h for h in columns.values() if h not in headers]
    if missing:
        raise ICLError(f"the table has no column {', '.join(map(repr, missing))} (its columns: {', '.join(headers)})")
    absent = [k for k in PARAMS if k not in columns and fixed.get(k) is None]
    if absent:
        raise ICLError(f"no value for {', '.join(absent)}: name a column or give the option")
    rows = []
    for i, rec in enumerate(reader, start=1):
        if i > MAX_ROWS:
            raise ICLError(f"the table has more than {MAX_ROWS} rows")

        def num(key, rec=rec, i=i):
            return parse_float(rec.get(columns[key]) or "", f"row {i}: column {columns[key]!r}")

        params = {k: (num(k) if k in columns else float(fixed[k])) for k in PARAMS}
        d = params["d"]
        if d != int(d) or d < 2:
            raise ICLError(f"row {i}: d must be an integer >= 2, got {d:g}")
        params["d"] = int(d)
        for k in ("alpha", "kappa", "tau"):
            if not params[k] > 0:
                raise ICLError(f"row {i}: {k} must be > 0, got {params[k]:g}")
        for k in ("rho", "lam"):
            if params[k] < 0:
                raise ICLError(f"row {i}: {k} must be >= 0, got {params[k]:g}")
        mean, sp = num("mean"), num("spread")
        if not sp > 0:
            raise ICLError(f"row {i}: the spread must be > 0, got {sp:g}")
        if spread != "se":
            runs = num("runs")
            if runs != int(runs) or runs < 2:
                raise ICLError(f"row {i}: runs must be an integer >= 2, got {runs:g}")
            if spread == "published":
                se = published.se(sp, int(runs))
            else:
                se = sp / math.sqrt(runs if spread == "std" else runs - 1)
            dof = runs - 1
        else:
            se, dof = sp, None
        rows.append(TableRow(i, params, mean, se, dof))
    if not rows:
        raise ICLError("the table has no rows")
    return rows


@dataclass
class RowResult:
    """Our simulation of one row against theirs, and the slips tried when they disagree."""

    row: TableRow
    ours: float
    ours_se: float
    n_seeds: int
    test: RowTest  # ours - theirs against the combined SE, with its power
    sizes: dict
    seconds_per_seed: float  # the simulator's cost model (core.cost.SECONDS_PER) for one seed of this row
    slips: list = field(default_factory=list)  # convention slips tried: dicts, best first
    catalogue: list = field(default_factory=list)  # number slips that match
    theory: float | None = None

    z = property(lambda self: self.test.z)
    limit = property(lambda self: self.test.limit)
    dof = property(lambda self: self.test.dof)
    mde = property(lambda self: self.test.mde_abs, doc="minimum detectable |ours - theirs| (90 % power)")
    mde_rel = property(lambda self: self.test.mde_rel, doc="mde / |theirs| (a fraction)")

    @property
    def ok(self) -> bool:
        return self.test.agrees

    def to_json(self) -> dict:
        r = self.row
        return {
            "row": r.index,
            **r.params,
            **self.sizes,
            "ours": self.ours,
            "ours_se": self.ours_se,
            "n_seeds": self.n_seeds,
            "theirs": r.theirs,
            "theirs_se": r.theirs_se,
            "theirs_dof": r.theirs_dof,
            "z": self.z,
            "z_limit": self.limit,
            "dof": self.dof,
            "mde": self.mde,
            "mde_rel": self.mde_rel,
            "agrees": self.ok,
            "e_theory": self.theory,
            "slips": self.slips,
            "catalogue_slips": self.catalogue,
        }


@dataclass
class Reproduction:
    """All rows, the verdict and what produced it."""

    f: str
    error: str
    convention: Convention
    rows: list
    false_alarm: float
    seeds: tuple
    target: float = DEFAULT_MDE_PCT / 100  # the MDE target (a fraction)

    @functools.cached_property
    def judgement(self) -> Verdict:
        """The shared verdict (:func:`icl_symbolic.core.verdict.decide`) with its seed advice: our
        SE shrinks with the seeds, the table's own SE does not, the dof is Welch's at the new count."""
        tests = [r.test for r in self.rows]
        n = len(self.seeds)

        def dof_at(i, m):
            r = self.rows[i].row
            return welch_dof(
                [1.0, 1.0], [tests[i].se, r.theirs_se], [m, None if r.theirs_dof is None else r.theirs_dof + 1]
            )

        return decide(
            tests,
            self.target,
            mde_at=mde_with_seeds(tests, n, [r.row.theirs_se for r in self.rows], dof_at),
            n_seeds=n,
            seconds_per_seed=sum(r.seconds_per_seed for r in self.rows),
        )

    @property
    def ok(self) -> bool:
        """Reproduced: every row agrees and every row's MDE meets the target."""
        return self.judgement.status == AGREES

    @property
    def verdict(self) -> str:
        j = self.judgement
        if j.status != DISAGREES:
            return j.sentence(agree="reproduced")
        named = sorted({s["slip"] for r in self.rows if not r.ok for s in r.slips if s["explains"]})
        return j.sentence(disagree="NOT reproduced") + (
            f"; explained by: {', '.join(named)}" if named else "; no slip of the catalogue explains them"
        )

    def to_json(self) -> dict:
        return {
            "f": self.f,
            "error": self.error,
            "convention": self.convention.to_json(),
            "false_alarm": self.false_alarm,
            "seeds": list(self.seeds),
            "reproduced": self.ok,
            "verdict": self.verdict,
            **self.judgement.to_json(),
            "points": [r.to_json() for r in self.rows],
        }


def _flip(conv: Convention, field_name: str):
    v = getattr(conv, field_name)
    other = {
        "assignment": {"round-robin": "random", "random": "round-robin"},
        "train_tasks": {"gaussian": "sphere", "sphere": "gaussian"},
        "test_tasks": {"gaussian": "sphere", "sphere": "gaussian"},
        "rounding": {"paper": "floor-k", "floor-k": "paper", "truncate": "paper"},
    }
    if field_name == "ridge_floor":
        return 0.0 if v > 0 else 1e-6
    return other[field_name][v]


def convention_slips(conv: Convention, params: dict) -> list:
    """The slips tried on a disagreeing row: (name, convention, params) each, in catalogue order."""
    out = []
    for k in CONVENTION_FIELDS:
        new = _flip(conv, k)
        out.append((f"{k}: {getattr(conv, k)} -> {new}", resolve_convention(conv, **{k: new}), params))
    both = _flip(conv, "train_tasks") if conv.train_tasks == conv.test_tasks else None
    if both is not None:
        out.append(
            (
                f"task laws: {conv.train_tasks} -> {both} (both)",
                resolve_convention(conv, train_tasks=both, test_tasks=both),
                params,
            )
        )
    rho = params["rho"]
    if 0 < rho != 1:
        out.append(("noise: standard deviation read as variance (rho -> rho^2)", conv, {**params, "rho": rho**2}))
        out.append(
            ("noise: variance read as standard deviation (rho -> sqrt(rho))", conv, {**params, "rho": math.sqrt(rho)})
        )
    if params["alpha"] != params["kappa"]:
        out.append(
            ("argument order: alpha <-> kappa", conv, {**params, "alpha": params["kappa"], "kappa": params["alpha"]})
        )
    return out


def _sim_specs(f, params, seeds, conv, n_test):
    return dict(f=Setting(f, convention=conv, n_test=n_test, **{k: params[k] for k in PARAMS}), seeds=seeds)


def _row_values(res, error):
    return np.array([seed_error(r, error)[0] for r in res.runs])


def _judge(vals, row, limit_z):
    """(ours, our SE, seeds, the row's :class:`~icl_symbolic.core.verdict.RowTest`)."""
    ours, se, n = seed_mean_se(vals)
    comb = math.sqrt(se**2 + row.theirs_se**2)
    dof = welch_dof([1.0, 1.0], [se, row.theirs_se], [n, None if row.theirs_dof is None else row.theirs_dof + 1])
    return ours, se, n, RowTest(ours - row.theirs, comb, limit_z, dof, row.theirs)


def _check_seeds(seeds) -> tuple:
    seeds = tuple(int(s) for s in seeds)
    if len(seeds) < MIN_SEEDS:
        raise ICLError(f"need at least {MIN_SEEDS} seeds per row (docs/power.md), got {len(seeds)}")
    return seeds


def simulate_rows(
    rows: Sequence[TableRow],
    f: str,
    *,
    convention=None,
    seeds: Sequence[int] = tuple(range(MIN_SEEDS)),
    n_test: int = 100,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> list:
    """Our simulation of every row at its own d under ``convention`` with the same ``seeds``: one
    :class:`~icl_symbolic.simulation.simulator.SimResult` per row (the first half of :func:`reproduce`)."""
    conv = resolve_convention(convention)
    seeds = _check_seeds(seeds)
    rows = list(rows)
    if not rows:
        raise ICLError("no rows to reproduce")
    specs = [_sim_specs(f, r.params, seeds, conv, n_test) for r in rows]
    return simulate_many(  # validates every row first; announces the estimate of all rows
        specs,
        jobs=jobs,
        scheduler=scheduler,
        progress=progress,
        what=f"reproduce ({len(specs)} table rows)",
        reduce="fewer --seeds-per-row, a smaller --n-test; --slip-rows N limits the slip search after it",
    )


def judge_rows(
    rows: Sequence[TableRow],
    sims: Sequence,
    convention=None,
    *,
    f: str | None = None,
    error: str = "icl",
    false_alarm: float = 1e-3,
    mde: float = DEFAULT_MDE_PCT / 100,
    theory: bool = True,
) -> Reproduction:
    """The table's ``rows`` against our simulations ``sims`` of them (:func:`simulate_rows`, in row
    order): per row z, limit, MDE; the verdict at the MDE target ``mde`` (the second half of
    :func:`reproduce`, without the slip search).  ``f`` defaults to the simulations' teacher."""
    check_error(error)
    if not 0 < false_alarm < 1:
        raise ICLError("the false-alarm budget must be in (0, 1)")
    if not 0 < mde <= 1:
        raise ICLError(f"the MDE target must be a fraction in (0, 1], got {mde!r}")
    rows, sims = list(rows), list(sims)
    if not rows or len(rows) != len(sims):
        raise ICLError(f"judge_rows needs one simulation per row, got {len(sims)} for {len(rows)} rows")
    conv = resolve_convention(convention)
    f = sims[0].setting.f if f is None else f
    zb = bonferroni_z(false_alarm, len(rows))
    out = []
    for row, res in zip(rows, sims):
        ours, se, n, test = _judge(_row_values(res, error), row, zb)
        th = None
        if theory:
            p = row.params
            try:
                th = float(e_nonlinear(f, Ratios(p["rho"], p["alpha"], p["kappa"], p["tau"], p["lam"]), error=error))
            except ICLError:
                th = None  # e.g. the ridgeless peak tau = 1: no theory point
        out.append(
            RowResult(
                row,
                ours,
                se,
                n,
                test,
                {"ell": res.ell, "k": res.k, "n": res.n},
                seed_seconds(res),
                theory=th,
            )
        )
    return Reproduction(str(f), error, conv, out, float(false_alarm), tuple(sims[0].seeds), float(mde))


@dataclass(frozen=True)
class RowRun:
    """How :func:`reproduce` simulates the rows: the ``seeds`` (the same for every row, at least
    :data:`icl_symbolic.core.stats.MIN_SEEDS`), ``n_test`` test prompts per seed, ``jobs`` processes
    or a Dask ``scheduler``, and ``progress`` (a callable taking one line)."""

    seeds: tuple = tuple(range(MIN_SEEDS))
    n_test: int = 100
    jobs: int = 1
    scheduler: str | None = None
    progress: Callable[[str], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Judging:
    """How :func:`reproduce` judges the rows: the two-sided ``false_alarm`` budget (split over the rows),
    the target ``mde`` (a fraction of their value), the slips tried on the ``slip_rows`` worst
    disagreeing rows (None: all; 0: none), and whether the d -> infinity ``theory`` is shown."""

    false_alarm: float = 1e-3
    mde: float = DEFAULT_MDE_PCT / 100
    slip_rows: int | None = None
    theory: bool = True


def reproduce(
    rows: Sequence[TableRow],
    f: str,
    convention=None,
    error: str = "icl",
    run: RowRun | None = None,
    judging: Judging | None = None,
) -> Reproduction:
    """Simulate every row at its own d and convention and compare with the table (module docstring):
    :func:`simulate_rows`, :func:`judge_rows`, then the slip search.

    The ``seeds`` (at least :data:`icl_symbolic.core.stats.MIN_SEEDS`) are the same for every
    row; ``false_alarm`` is split over the rows (Bonferroni); ``mde``: the target minimum
    detectable error (a fraction of their value) below which "reproduced" may be said.  The
    slips are tried on the disagreeing rows, the ``slip_rows`` worst of them (None: all; 0: none).
    Returns a :class:`Reproduction` (``.ok``, ``.verdict``, ``.rows``).  ``run``: :class:`RowRun`,
    ``judging``: :class:`Judging` (None: their defaults).
    """
    run, judging = run or RowRun(), judging or Judging()
    seeds, n_test, jobs, scheduler, progress = run.seeds, run.n_test, run.jobs, run.scheduler, run.progress
    false_alarm, mde, slip_rows, theory = judging.false_alarm, judging.mde, judging.slip_rows, judging.theory
    if slip_rows is not None and (int(slip_rows) != slip_rows or slip_rows < 0):
        raise ICLError(f"slip_rows must be an integer >= 0, got {slip_rows!r}")
    check_error(error)
    conv = resolve_convention(convention)
    seeds = _check_seeds(seeds)
    if not 0 < false_alarm < 1:
        raise ICLError("the false-alarm budget must be in (0, 1)")
    if not 0 < mde <= 1:
        raise ICLError(f"the MDE target must be a fraction in (0, 1], got {mde!r}")
    rows = list(rows)
    if not rows:
        raise ICLError("no rows to reproduce")
    zb = bonferroni_z(false_alarm, len(rows))
    sims = simulate_rows(
        rows, f, convention=conv, seeds=seeds, n_test=n_test, jobs=jobs, scheduler=scheduler, progress=progress
    )
    result = judge_rows(rows, sims, conv, f=f, error=error, false_alarm=false_alarm, mde=mde, theory=theory)
    out = result.rows
    bad = sorted((rr for rr in out if not rr.ok), key=lambda rr: -abs(rr.z))
    if slip_rows is not None:
        bad = bad[: int(slip_rows)]
    if bad:
        for rr in bad:
            cands = convention_slips(conv, rr.row.params)
            if progress is not None:
                progress(f"row {rr.row.index} disagrees (z = {rr.z:+.2f}): trying {len(cands)} slips")
            alt = simulate_many(
                [_sim_specs(f, p, seeds, c, n_test) for _, c, p in cands],
                jobs=jobs,
                scheduler=scheduler,
                progress=progress,
                what=f"reproduce (row {rr.row.index}: {len(cands)} slips)",
                reduce="--slip-rows N (the N worst rows only; 0: none), fewer --seeds-per-row",
            )
            tried = []
            for (name, c, p), res in zip(cands, alt):
                o, s, _, t2 = _judge(_row_values(res, error), rr.row, zb)
                tried.append(
                    {
                        "slip": name,
                        "convention": c.to_json(),
                        "params": p,
                        "value": o,
                        "se": s,
                        "z": t2.z,
                        "explains": t2.agrees,
                    }
                )
            tried.sort(key=lambda t: (not t["explains"], abs(t["z"])))
            rr.slips = tried
            ctx = slips.teacher_context(f, repr(rr.row.params["rho"]))
            rep = slips.diagnose_number(
                rr.row.theirs, ctx, x_value=rr.ours, tol=rr.limit * math.sqrt(rr.ours_se**2 + rr.row.theirs_se**2)
            )
            rr.catalogue = [m.model.name for m in rep.matches]
    return result


def swept_name(rows) -> str:
    """The parameter a plot puts on its x axis: the first of kappa, tau, alpha, rho, lam, d that varies."""
    for k in ("kappa", "tau", "alpha", "rho", "lam", "d"):
        if len({r.row.params[k] for r in rows}) > 1:
            return k
    return "d"


def theory_curve(rep: "Reproduction", xname: str, n: int = 60):
    """(xs, ys): the d -> infinity theory along ``xname`` with the other parameters of the first row
    (None when x is d, or the parameters besides x and d vary, or the theory has no value there)."""
    rows = rep.rows
    if xname == "d" or any(len({r.row.params[k] for r in rows}) > 1 for k in PARAMS if k not in (xname, "d")):
        return None
    xs_t = [r.row.params[xname] for r in rows]
    lo, hi = min(xs_t), max(xs_t)
    xs = np.geomspace(lo, hi, n) if lo > 0 else np.linspace(lo, hi, n)
    p = dict(rows[0].row.params)
    ys = []
    for x in xs:
        p[xname] = float(x)
        try:
            ys.append(
                float(e_nonlinear(rep.f, Ratios(p["rho"], p["alpha"], p["kappa"], p["tau"], p["lam"]), error=rep.error))
            )
        except ICLError:
            ys.append(float("nan"))
    return xs, np.array(ys)


#: the example table's fixed settings (docs/reproduce.md)
EXAMPLE = dict(f="(g^2-1)/sqrt(2)", alpha=2.0, tau=8.0, rho=0.1, lam=0.0)
EXAMPLE_COLUMNS = "d=d,kappa=kappa,mean=icl_mean,spread=icl_std,runs=runs"
#: the example table's rows.  Why d = 24, 32 and tau = 8: the per-run spread there is 0.8-1.3 % of the
#: mean, so 10 seeds per row against 100 runs reach an MDE below 5 % (4 rows, false alarm 1e-3); at
#: d = 8, 12, tau = 2 (the table before) the per-run spread was 17-35 % and even the table's own 100
#: runs alone left an MDE of 9-18 %: no seed count could have reproduced it to 5 %.
EXAMPLE_DS = (24, 32)
EXAMPLE_KAPPAS = (0.5, 1.0)


def example_table(
    convention="letey2024",
    seeds: Sequence[int] = tuple(range(10**6, 10**6 + 100)),
    ds=EXAMPLE_DS,
    kappas=EXAMPLE_KAPPAS,
    point: dict | None = None,
    n_test: int = 100,
) -> str:
    """The shipped example table (CSV text): our simulator, ICL error (exact functional), mean and
    per-run std over ``seeds`` runs per row, one row per (d, kappa); fixed f, alpha, tau, rho from
    ``point`` (None: :data:`EXAMPLE`; a dict with those keys)."""
    pt = EXAMPLE if point is None else point
    conv = resolve_convention(convention)
    specs = [
        dict(
            f=pt["f"],
            d=d,
            alpha=pt["alpha"],
            kappa=k,
            tau=pt["tau"],
            rho=pt["rho"],
            seeds=tuple(seeds),
            n_test=n_test,
            convention=conv,
        )
        for d in ds
        for k in kappas
    ]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["d", "kappa", "icl_mean", "icl_std", "runs"])
    for spec, res in zip(specs, simulate_many(specs)):
        v = np.array([float(r.e) for r in res.runs])
        w.writerow([spec["d"], repr(spec["kappa"]), repr(float(v.mean())), repr(float(v.std(ddof=1))), len(v)])
    return buf.getvalue()


__all__ = [
    "RowRun",
    "Judging",
    "PARAMS",
    "VALUE_KEYS",
    "SPREADS",
    "SPREAD_READING",
    "TableRow",
    "RowResult",
    "Reproduction",
    "parse_columns",
    "read_table",
    "convention_slips",
    "reproduce",
    "simulate_rows",
    "judge_rows",
    "example_table",
    "EXAMPLE",
    "EXAMPLE_COLUMNS",
    "EXAMPLE_DS",
    "EXAMPLE_KAPPAS",
    "swept_name",
    "theory_curve",
]
