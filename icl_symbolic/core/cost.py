"""Cost estimates of expressions, made before any expensive SymPy operation.

A 15-character input such as ``He(20, He(20, g))`` or ``(sin(g) + cos(g) +
tanh(g) + erf(g))**64`` asks ``sympy.expand`` for a polynomial of degree 400
or for ~10^7 terms, which hangs the tool.  These estimates are structural
(they walk the expression tree once, without expanding) and are upper bounds:

* :func:`expand_terms` -- the number of terms a full ``sympy.expand`` can
  create: a sum adds, a product multiplies, ``(t terms)**n`` gives at most
  ``C(t + n - 1, n)`` monomials; a function call counts as one term (its
  argument is bounded on its own).  With ``trig=2`` the functions that the
  exact Gaussian rules rewrite as two exponentials (``sin``, ``cos``,
  ``sinh``, ``cosh``, ``erfc``) count as two terms.
* :func:`degree` -- the polynomial degree in the variables, the largest over
  all sub-expressions (``sin(g**300)`` has degree 300).

The limits themselves (:data:`icl_symbolic.engine.expr.MAX_DEGREE`,
:data:`icl_symbolic.engine.expr.MAX_EXPAND_TERMS`, ...) are listed in
``docs/limits.md``.

>>> from icl_symbolic.engine.expr import g
>>> import sympy
>>> expand_terms((g + 1) ** 64), degree((g + 1) ** 64)
(65, 64)
>>> expand_terms((sympy.sin(g) + sympy.cos(g) + sympy.tanh(g)) ** 64)
2145
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from math import comb

import sympy

from icl_symbolic.core import limits
from icl_symbolic.core.caches import memoize
from icl_symbolic.core.errors import ICLError

#: estimates are capped here (they only need to be compared with limits far below)
CAP = 10**30

_TWO_TERM = (sympy.sin, sympy.cos, sympy.sinh, sympy.cosh, sympy.erfc)


def _cap(n: int) -> int:
    return n if n < CAP else CAP


@memoize(maxsize=4096)
def _terms(e, trig: int) -> int:
    if e.is_Atom:
        return 1
    if e.is_Add:
        return _cap(sum(_terms(a, trig) for a in e.args))
    if e.is_Mul:
        out = 1
        for a in e.args:
            out = _cap(out * _terms(a, trig))
        return out
    if e.is_Pow:
        n = e.exp
        if n.is_Integer and n > 0 and e.base.has(sympy.Symbol):
            t = _terms(e.base, trig)
            if t == 1:
                return 1
            n = int(n)
            if n > 10_000 or t > 10_000:
                return CAP
            return _cap(comb(t + n - 1, n))
        return 1
    if trig > 1 and isinstance(e, _TWO_TERM):
        return 2
    return 1


def expand_terms(e, trig: int = 1) -> int:
    """Upper bound on the number of terms of ``sympy.expand(e)`` (capped at :data:`CAP`)."""
    return _terms(sympy.S(e), int(trig))


@memoize(maxsize=4096)
def _degree(e) -> tuple:
    """(degree of e as a polynomial in its symbols, largest degree of any sub-expression)."""
    if e.is_Symbol:
        return 1, 1
    if e.is_Atom:
        return 0, 0
    inner = [_degree(a) for a in e.args]
    worst = max((w for _, w in inner), default=0)
    if e.is_Add:
        d = max(d for d, _ in inner)
    elif e.is_Mul:
        d = sum(d for d, _ in inner)
    elif e.is_Pow and e.exp.is_Integer and e.exp > 0:
        d = int(e.exp) * inner[0][0]
    else:
        d = 0  # a function call or a non-polynomial power is an atom of degree 0 here
    d = min(d, CAP)
    return d, max(worst, d)


def degree(e) -> int:
    """Largest polynomial degree of any sub-expression of ``e`` (in its free symbols)."""
    return _degree(sympy.S(e))[1]


def poly_degree(e) -> int:
    """Polynomial degree of ``e`` itself (function calls count as constants)."""
    return _degree(sympy.S(e))[0]


def composed_hermite_cost(m: int, x) -> tuple[int, int]:
    """(degree, term bound) of ``expand(He_m(x))``, computed before building it."""
    x = sympy.S(x)
    t = expand_terms(x)
    d = poly_degree(x)
    if t == 1:
        return m * max(d, 1), m // 2 + 1
    terms = 0
    for j in range(m, -1, -2):
        terms = _cap(terms + (comb(t + j - 1, j) if t < 10_000 else CAP))
    return m * d, terms


# ---------------------------------------------------------------------------
# Time estimates: every command says what its work will take before it starts
# ---------------------------------------------------------------------------
#: an estimate above this many seconds is printed (one stderr line) and the work shows progress;
#: above :data:`icl_symbolic.core.limits.CEILING_SECONDS` it is refused without a budget (:func:`budget`)
ANNOUNCE_SECONDS = 3.0
#: at most one progress line per this many seconds
PROGRESS_EVERY = 5.0

#: Seconds per unit of work (wall clock), measured on the shared 2-core machine of the project
#: (x86_64, one BLAS thread, load average 6-7 from other jobs: a quiet machine is about twice
#: as fast) on 2026-12-02 by ``python benchmarks/bench_limits.py --calibrate``, which times
#: small instances of each kind of work and prints this table to paste here (docs/limits.md,
#: "Announced work").  The estimates are meant to be right within a factor of about 2.
SECONDS_PER = {
    # coeffs, exact path with kinks: one unit of gauss.exact_work (an interval x (degree + M + 1)
    # closed-form integrals), the simplification of a_0..a_M and E[f^2] included
    "exact_unit": 1.9e-2,
    # theory: one grid point of Result 1 (validation included), identity covariances
    "theory_point": 9.1e-4,
    # a covariance matrix's eigendecomposition (numpy.linalg.eigh), per d^3: 4.7 s at d = 2000, one BLAS
    # thread, measured on 2026-12-06 (load ~6)
    "cov_eigh": 5.9e-10,
    # kernel: one grid point of the kernel learner's curve and of plain attention next to it (hermite:2,
    # d = 16; identity features take about half); measured on 2026-12-06 over 2000 points, load ~6
    "kernel_point": 2.2e-3,
    # theory: one grid point per eigenvalue of a non-identity covariance
    "theory_point_eig": 8.2e-7,
    # moments --mc: one prompt entry (ell x d per prompt: sampling and the estimators)
    "mc_entry": 3.0e-8,
    # simulate, one seed: a fixed part (teacher tables, the exact test functional), one context
    # token drawn (the sampler), one flop of the training solve (simulation.cost_flops); refitted
    # on 2026-12-02 (fifth round) by ``bench_limits.py --calibrate-sim`` over twelve shapes (d 16-128,
    # alpha 2-400, the three solvers; every shape within 0.68-1.19x of the fit), quiet machine (load
    # 0.3); with two other simulations on the two cores the same fit came out 1.3-1.4x slower
    "sim_seed": 0.11,
    "sim_draw": 5.6e-8,
    "sim_flop": 3.4e-11,
    # the kernel learner, one seed on top of the above in its feature dimension D: a fixed part and
    # one feature entry computed (kernel_learner.simulation.feature_entries); same calibration run
    "sim_feature_seed": 2.2,
    "sim_feature_entry": 3.2e-9,
    # finite-d theory (theory.finite_d), one point: the a1 = 0 radial term's prompt Monte Carlo per unit
    # of d (the a1 != 0 Monte Carlos are priced per prompt token: finite_d.SECONDS_PER_PROMPT_TOKEN)
    "finite_d_radial_per_d": 0.2,
}


def duration(seconds: float) -> str:
    """``2 min 10 s``, ``1 h 05 min``, ``3.4 s``, ``12 d 3 h``: a duration as a person reads it.

    >>> duration(130), duration(3.44), duration(3900), duration(86400 * 12.2), duration(0.05)
    ('2 min 10 s', '3.4 s', '1 h 05 min', '12 d 5 h', '0.05 s')
    """
    s = float(seconds)
    if s != s or s == float("inf"):
        return "unbounded"
    if s < 1:
        return f"{s:.2g} s"
    if s < 10:
        return f"{s:.1f} s"
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        m, r = divmod(int(round(s)), 60)
        return f"{m} min {r} s"
    if s < 86400:
        h, r = divmod(int(round(s / 60)), 60)
        return f"{h} h {r:02d} min"
    d, r = divmod(int(round(s / 3600)), 24)
    return f"{d} d {r} h"


class Estimate:
    """What a piece of work will cost: ``seconds`` (from :data:`SECONDS_PER` or a measurement),
    the ``work`` in its own ``unit`` (flops, prompt entries, integrals, ...), ``what`` it is and
    the option(s) that ``reduce`` it.

    >>> e = Estimate(130.0, 1.2e9, "flops", "simulate: 10 seeds", "--seeds")
    >>> e.line()
    'simulate: 10 seeds: estimated 2 min 10 s (1.2e+09 flops); progress below (shorter: --seeds)'
    """

    __slots__ = ("seconds", "work", "unit", "what", "reduce")

    def __init__(self, seconds: float, work: float, unit: str, what: str, reduce: str):
        self.seconds, self.work, self.unit, self.what, self.reduce = float(seconds), work, unit, what, reduce

    def __repr__(self) -> str:
        return f"Estimate({self.what!r}, {duration(self.seconds)}, {self.work:.3g} {self.unit})"

    @property
    def long(self) -> bool:
        """True when the work is worth announcing (more than :data:`ANNOUNCE_SECONDS`)."""
        return self.seconds > ANNOUNCE_SECONDS

    def line(self) -> str:
        """The one stderr line printed before long work starts."""
        return (
            f"{self.what}: estimated {duration(self.seconds)} ({self.work:.2g} {self.unit}); "
            f"progress below (shorter: {self.reduce})"
        )

    def refusal(self, limit: str) -> str:
        """The one-line refusal of work past a documented maximum (docs/limits.md)."""
        return (
            f"{self.what}: ~{self.work:.2g} {self.unit}, estimated {duration(self.seconds)}; "
            f"limit {limit} (see docs/limits.md; shorter: {self.reduce})"
        )

    def check(self, ceiling: float | None = None) -> None:
        """Refuse (one-line ICLError) work estimated above the budget (:func:`allowed_seconds`: the
        user's ``--max-seconds``, else :data:`icl_symbolic.core.limits.CEILING_SECONDS`).  ``ceiling``
        replaces the default ceiling for work that cannot show progress
        (:data:`icl_symbolic.core.limits.SILENT_CEILING_SECONDS`); a budget still lifts it."""
        allowed = allowed_seconds() if ceiling is None or _BUDGET.get() is not None else ceiling
        if self.seconds > allowed:
            given = _BUDGET.get() is not None
            limit = (
                f"the budget --max-seconds {allowed:g}"
                if given
                else f"the ceiling of {duration(allowed)} without a budget"
            )
            raise ICLError(
                f"{self.what}: estimated {duration(self.seconds)} ({self.work:.2g} {self.unit}), above {limit}; "
                f"to run it pass --max-seconds {_budget_hint(self.seconds)} (see docs/limits.md; "
                f"shorter: {self.reduce})"
            )

    def announce(self, say) -> bool:
        """Refuse work above the budget (:meth:`check`), then print :meth:`line` through ``say`` when
        the work is long; True when printed.  Every announcement goes through here, so that no work
        past the ceiling starts without a budget."""
        self.check()
        if say is not None and self.long:
            say(self.line())
            return True
        return False


class Progress:
    """Progress lines with an ETA, at most one per :data:`PROGRESS_EVERY` seconds.

    ``update(done, total)`` reports ``done`` of ``total`` units (any unit; the ETA is the time
    so far extrapolated linearly).  Quiet while the work is short: a line is printed only once
    an announced estimate was above :data:`ANNOUNCE_SECONDS` (``announced=True``) or once the
    work has run that long anyway.  ``say=None`` (``--quiet``) prints nothing.
    """

    def __init__(self, say, what: str, total: float = 1.0, announced: bool = False, unit: str = ""):
        self.say, self.what, self.total, self.unit = say, what, float(total), unit
        self.announced = announced
        self.t0 = time.monotonic()
        self.last = self.t0

    def update(self, done: float, total: float | None = None) -> None:
        if self.say is None:
            return
        if total is not None:
            self.total = float(total)
        now = time.monotonic()
        elapsed = now - self.t0
        finished = done >= self.total
        if not self.announced and elapsed < ANNOUNCE_SECONDS:
            return
        if not finished and now - self.last < PROGRESS_EVERY:
            return
        self.last = now
        frac = min(max(done / self.total, 0.0), 1.0) if self.total > 0 else 1.0
        count = f" ({done:.0f}/{self.total:.0f}{' ' + self.unit if self.unit else ''})" if self.unit else ""
        if finished:
            self.say(f"{self.what}: done{count} in {duration(elapsed)}")
            return
        eta = elapsed / frac * (1 - frac) if frac > 0 else float("inf")
        self.say(f"{self.what}: {100 * frac:.0f}%{count} after {duration(elapsed)}, about {duration(eta)} left")


#: the user's explicit budget in seconds (``--max-seconds``), None for the default ceiling
_BUDGET: ContextVar = ContextVar("icl_symbolic_budget", default=None)


def allowed_seconds() -> float:
    """The most seconds an announced estimate may have: the budget of :func:`budget`, else the
    ceiling :data:`icl_symbolic.core.limits.CEILING_SECONDS`."""
    given = _BUDGET.get()
    return limits.CEILING_SECONDS if given is None else given


def current_budget() -> float | None:
    """The budget in force (None: the default ceiling); worker processes receive it with their work."""
    return _BUDGET.get()


@contextmanager
def budget(seconds: float | None):
    """Allow work estimated up to ``seconds`` (the ``--max-seconds`` option) inside the block;
    ``None`` keeps the default ceiling.

    >>> with budget(10.0):
    ...     Estimate(20.0, 1, "units", "work", "less").check()
    Traceback (most recent call last):
    ...
    icl_symbolic.core.errors.ICLError: work: estimated 20 s (1 units), above the budget --max-seconds 10; to run it pass --max-seconds 30 (see docs/limits.md; shorter: less)
    """
    if seconds is not None and not (seconds > 0 and seconds == seconds):
        raise ICLError(f"--max-seconds: must be a positive number of seconds, got {seconds:g}")
    token = _BUDGET.set(None if seconds is None else float(seconds))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _budget_hint(seconds: float) -> str:
    """A round budget a bit above ``seconds`` (the estimates are right within a factor of about 2)."""
    need = 1.5 * seconds
    step = 10 ** max(len(str(int(need))) - 2, 0)
    return str(int(-(-need // step) * step))


def announced(say, estimate: Estimate, total: float = 1.0, unit: str = "") -> Progress:
    """Announce ``estimate`` through ``say`` (when long) and return the :class:`Progress` of that work."""
    return Progress(say, estimate.what, total, estimate.announce(say), unit)
