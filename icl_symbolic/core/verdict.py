"""One verdict vocabulary with power for every command that compares numbers.

``reproduce``, ``extrapolate`` (plain and the kernel learner's ladder), ``simulate
--order 1`` and ``diagnose --curve`` each test one or more *rows* (a table row, an
extrapolated e_inf, a simulated point, a curve point) and then say one of three things:

* **agrees** (``reproduce``: "reproduced") -- every row is within its limit AND every
  row's minimum detectable error (MDE) is at most the target (``--mde PCT``): an error
  of the target's size would have been seen with 90 % power;
* **disagrees** -- some row is beyond its limit (whatever the power: a detected
  difference is a difference);
* **inconclusive** -- every row is within its limit but some row could only have
  detected errors larger than the target; the verdict says how large, and how many
  seeds per row (with their estimated time) would reach the target.

The MDE is the one :func:`icl_symbolic.core.stats.mde_abs` computes for ``verify``
(:func:`icl_symbolic.verification.judge.detectable`): the smallest true offset a
two-sided test at the row's Student-t limit flags with probability :data:`POWER`,
divided by the compared value (``mde_rel``, a fraction; printed in %).  The whole
run's ``mde_rel`` is the largest over its rows: the error any one row could hide.

Exit statuses (:data:`EXIT_CODES`): agrees 0, disagrees 1, bad input 2,
inconclusive 3 (docs/cli.md).  Only numpy, scipy and the other ``core`` modules are
imported (the ground floor of docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from icl_symbolic.core.cost import duration
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.numbers import parse_float
from icl_symbolic.core.stats import mde_abs, t_limit

AGREES, DISAGREES, INCONCLUSIVE = "agrees", "disagrees", "inconclusive"
#: the exit status of each verdict (2 is bad input, before anything is computed)
EXIT_CODES = {AGREES: 0, DISAGREES: 1, INCONCLUSIVE: 3}
EXIT_BAD_INPUT = 2
#: the power at which every MDE is stated (the same as verify's)
POWER = 0.9
#: the default MDE target of reproduce, extrapolate and simulate --order 1, in percent
DEFAULT_MDE_PCT = 5.0
#: a limit (in SE) above which no MDE is computed: it is inf for every purpose here (a few seeds at a
#: tiny false-alarm budget, e.g. t at 1 dof for 1e-12 is 6e11 SE)
MAX_LIMIT = 1e3
#: the most seeds per row the advice searches (beyond: "not reachable by seeds")
MAX_SEEDS_ADVICE = 10**6


def exit_text(
    agree: str = "agrees", disagree: str = "disagrees", rows: str = "every row", one: str = "some row"
) -> str:
    """The exit-status sentence of a command with a verdict (its --help epilog), in its own words.

    >>> exit_text().split("; ")[0]
    '0 agrees (every row within its limit and every MDE at most --mde)'
    """
    return (
        f"0 {agree} ({rows} within its limit and every MDE at most --mde); 1 {disagree} ({one} beyond its "
        "limit); 2 bad input (one line on stderr, nothing computed, no files written); 3 inconclusive "
        f"({rows} within its limit, but an MDE above --mde: the run could not have seen an error of that size)"
    )


def mde_help(default_pct: float) -> str:
    """The ``--mde`` option's help text, naming its default."""
    return (
        f"target minimum detectable error in percent of the compared value (default {default_pct:g}): the verdict "
        "'agrees' needs every row's MDE (90 %% power) at or below it, otherwise it is 'inconclusive' (exit 3)"
    )


def parse_mde(text, name: str = "mde") -> float:
    """``--mde PCT`` as a fraction (``"5"`` -> 0.05); a percentage in (0, 100].

    >>> parse_mde("5"), parse_mde("0.5")
    (0.05, 0.005)
    """
    pct = parse_float(str(text), f"--{name}")
    if not (math.isfinite(pct) and 0 < pct <= 100):
        raise ICLError(f"--{name} must be a percentage in (0, 100], got {text!r}")
    return pct / 100.0


def pct(x: float | None) -> str:
    """A relative error as a percentage with two significant digits ('inf' / 'n/a' where none).

    >>> pct(0.0456), pct(0.31), pct(None), pct(math.inf)
    ('4.6 %', '31 %', 'n/a', 'inf')
    """
    if x is None:
        return "n/a"
    if not math.isfinite(x):
        return "inf"
    return f"{100 * x:.2g} %" if 100 * x < 10 else f"{100 * x:.0f} %"


@dataclass(frozen=True)
class RowTest:
    """One row's two-sided test and its power.

    ``diff`` the compared difference (ours - theirs, e_inf - e_theory, ...), ``se`` its
    standard error, ``z_budget`` the normal quantile of the row's share of the false-alarm
    budget, ``dof`` the SE's degrees of freedom (None: a known SE; the limit is then the
    Student-t quantile with the same false-alarm rate, :func:`~icl_symbolic.core.stats.t_limit`),
    ``reference`` the compared value that ``mde_rel`` divides by.

    >>> r = RowTest(diff=0.01, se=0.01, z_budget=3.2905, dof=None, reference=1.0)
    >>> r.agrees, round(r.mde_rel, 4)
    (True, 0.0457)
    """

    diff: float
    se: float
    z_budget: float
    dof: float | None
    reference: float

    @property
    def z(self) -> float:
        return self.diff / self.se

    @property
    def limit(self) -> float:
        return t_limit(self.z_budget, self.dof)

    @property
    def agrees(self) -> bool:
        return abs(self.z) <= self.limit

    @property
    def mde_abs(self) -> float:
        """The smallest |diff| flagged with 90 % power (:func:`~icl_symbolic.core.stats.mde_abs`); inf where
        the noncentral t cannot be evaluated (a limit of 1e11 SE at 1 dof) or the limit is above
        :data:`MAX_LIMIT` SE (the MDE is then larger still, and the noncentral t slow to evaluate there)."""
        if self.limit > MAX_LIMIT:
            return math.inf
        try:
            return mde_abs(self.se, self.limit, self.dof, POWER)
        except ICLError:
            return math.inf

    @property
    def mde_rel(self) -> float | None:
        """MDE / |reference| (a fraction); None when the reference is 0 (no relative scale)."""
        return None if self.reference == 0 else self.mde_abs / abs(self.reference)

    def with_seeds(self, n_now: int, n: int, fixed_se: float = 0.0, dof: float | None | str = "scaled") -> "RowTest":
        """This row's test had it ``n`` seeds instead of ``n_now``: the seed part of the SE
        (all of it but ``fixed_se``, e.g. the compared table's own SE) shrinks as 1/sqrt(n); the
        dof is ``dof`` when given, else scaled as (n - 1)/(n_now - 1) (S - 1 for a seed mean or
        a jackknife over seeds); the difference is kept."""
        seed_var = max(self.se**2 - fixed_se**2, 0.0) * n_now / n
        if dof == "scaled":
            dof = None if self.dof is None else self.dof * (n - 1) / max(n_now - 1, 1)
        return RowTest(self.diff, math.sqrt(seed_var + fixed_se**2), self.z_budget, dof, self.reference)

    def to_json(self) -> dict:
        m = self.mde_rel
        return {"mde_abs": _num(self.mde_abs), "mde_rel": None if m is None else _num(m)}


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def seeds_to_reach(mde_rel_at: Callable[[int], float | None], target: float, n_now: int) -> int | None:
    """The fewest seeds N >= ``n_now`` with ``mde_rel_at(N) <= target`` (None: not by
    :data:`MAX_SEEDS_ADVICE` seeds, e.g. when a fixed part of the SE, the other side's,
    alone is too large).  ``mde_rel_at`` must fall as N grows (an SE ~ 1/sqrt(N) with a
    dof growing with N); found by doubling, then bisection.

    >>> seeds_to_reach(lambda n: 1.0 / math.sqrt(n), 0.1, 10)
    100
    >>> seeds_to_reach(lambda n: 0.2 + 1.0 / n, 0.1, 10) is None
    True
    """

    def ok(n):
        m = mde_rel_at(n)
        return m is not None and m <= target

    lo = max(int(n_now), 2)
    if ok(lo):
        return lo
    hi = lo
    while not ok(hi):
        if hi >= MAX_SEEDS_ADVICE:
            return None
        lo, hi = hi, min(2 * hi, MAX_SEEDS_ADVICE)
    while hi - lo > 1:  # ok(hi), not ok(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


@dataclass(frozen=True)
class Verdict:
    """The verdict of a run of rows: ``status`` (:data:`AGREES`, :data:`DISAGREES`,
    :data:`INCONCLUSIVE`), the run's ``mde_rel`` (the largest row MDE, a fraction; None when
    some row has no relative scale), the ``target``, the rows that disagree, and the advice:
    ``seeds`` per row that would reach the target and their estimated ``seconds`` (None: not
    reachable by seeds; ``advice`` then says why)."""

    status: str
    mde_rel: float | None
    target: float
    n_rows: int
    n_disagree: int
    seeds: int | None = None
    seconds: float | None = None
    advice: str = ""
    withheld: int = 0  # rows with nothing to compare (e.g. a theory that refuses the point), not judged

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def sentence(self, agree: str = "agrees", disagree: str = "DISAGREES", what: str = "rows") -> str:
        """The verdict line: ``agree``/``disagree`` name the two outcomes in the command's words."""
        if self.n_rows == 0:
            return f"inconclusive: none of the {self.withheld} {what} could be judged ({self.advice})"
        return self._judged(agree, disagree, what) + (
            f"; {self.withheld} more {what} not judged (nothing to compare)" if self.withheld else ""
        )

    def _judged(self, agree: str, disagree: str, what: str) -> str:
        one = self.n_rows == 1
        if self.status == DISAGREES:
            return f"{disagree}: " + (
                "beyond its limit" if one else f"{self.n_disagree} of {self.n_rows} {what} beyond their limits"
            )
        within = "within its limit" if one else f"all {self.n_rows} {what} within their limits"
        if self.status == AGREES:
            return f"{agree}: {within}; MDE {pct(self.mde_rel)} (target {pct(self.target)}, 90 % power)"
        m = self.mde_rel
        seen = (
            f"could only detect errors above {pct(m)}"
            if m is not None and math.isfinite(m)
            else "could not have detected an error of any size (no relative scale, or no computable power)"
        )
        return f"inconclusive: {within}, but this run {seen} (target {pct(self.target)}, 90 % power); {self.advice}"

    def to_json(self) -> dict:
        m = self.mde_rel
        return {
            "status": self.status,
            "mde_rel": None if m is None or not math.isfinite(m) else float(m),
            "mde_target": self.target,
            "seeds_to_target": self.seeds,
            "seconds_to_target": self.seconds,
            "advice": self.advice,
            "withheld": self.withheld,
        }


def run_mde(rows: Sequence[RowTest]) -> float | None:
    """The whole run's MDE: the largest row ``mde_rel`` (None when some row has none)."""
    ms = [r.mde_rel for r in rows]
    return None if any(m is None for m in ms) else max(ms)


def mde_with_seeds(
    rows: Sequence[RowTest],
    n_now: int,
    fixed_se: Sequence[float] | None = None,
    dof_at: Callable[[int, int], float | None] | None = None,
) -> Callable[[int], float | None]:
    """The run's MDE as a function of the seeds per row (:meth:`RowTest.with_seeds` of every row):
    ``fixed_se[i]`` the part of row i's SE that seeds do not shrink, ``dof_at(i, n)`` row i's dof
    with n seeds (default: scaled).  For :func:`decide`'s advice."""
    fixed = list(fixed_se) if fixed_se is not None else [0.0] * len(rows)

    def at(n: int) -> float | None:
        return run_mde(
            [
                r.with_seeds(n_now, n, fx, "scaled" if dof_at is None else dof_at(i, n))
                for i, (r, fx) in enumerate(zip(rows, fixed))
            ]
        )

    return at


def seeds_advice(seeds: int | None, seconds: float | None, unit: str = "seeds per row") -> str:
    """'about N seeds per row (estimated T) would reach the target', or why no seed count would."""
    if seeds is None:
        return (
            f"more {unit} alone cannot reach the target (a part of the standard error that seeds do not "
            "shrink, such as the compared table's own, is too large)"
        )
    return (
        f"about {seeds} {unit}"
        + (f" (estimated {duration(seconds)})" if seconds is not None else "")
        + (" would reach the target")
    )


def decide(
    rows: Sequence[RowTest],
    target: float,
    *,
    mde_at: Callable[[int], float | None] | None = None,
    n_seeds: int | None = None,
    seconds_per_seed: float | None = None,
    advice: str | None = None,
    unit: str = "seeds per row",
    withheld: int = 0,
) -> Verdict:
    """The verdict of ``rows`` at the MDE ``target`` (a fraction).

    ``withheld``: further rows with nothing to compare (not judged; the sentence says so).  With no
    ``rows`` but some withheld, the run is inconclusive and ``advice`` says why.

    When inconclusive, the advice: ``mde_at(N)`` (the run's MDE with N seeds per row)
    from ``n_seeds`` up gives the seeds per row that reach the target
    (:func:`seeds_to_reach`), times ``seconds_per_seed`` (all rows together) their time;
    or ``advice`` as given (e.g. for data with no seeds).
    """
    if not (0 < target <= 1):
        raise ICLError(f"the MDE target must be a fraction in (0, 1], got {target!r}")
    if not rows:
        if not withheld:
            raise ICLError("a verdict needs at least one compared row")
        return Verdict(INCONCLUSIVE, None, target, 0, 0, advice=advice or "nothing to compare", withheld=withheld)
    bad = sum(not r.agrees for r in rows)
    m = run_mde(rows)
    if bad:
        return Verdict(DISAGREES, m, target, len(rows), bad, withheld=withheld)
    if m is not None and m <= target:
        return Verdict(AGREES, m, target, len(rows), 0, withheld=withheld)
    seeds = seconds = None
    if advice is None:
        if mde_at is not None and n_seeds is not None:
            seeds = seeds_to_reach(mde_at, target, n_seeds)
            if seeds is not None and seconds_per_seed is not None:
                seconds = seeds * seconds_per_seed
        advice = seeds_advice(seeds, seconds, unit) if mde_at is not None else "no seed count applies here"
    return Verdict(INCONCLUSIVE, m, target, len(rows), 0, seeds, seconds, advice, withheld)


__all__ = [
    "AGREES",
    "DISAGREES",
    "INCONCLUSIVE",
    "EXIT_CODES",
    "EXIT_BAD_INPUT",
    "exit_text",
    "POWER",
    "DEFAULT_MDE_PCT",
    "RowTest",
    "Verdict",
    "decide",
    "mde_help",
    "parse_mde",
    "pct",
    "run_mde",
    "seeds_advice",
    "seeds_to_reach",
    "mde_with_seeds",
]
