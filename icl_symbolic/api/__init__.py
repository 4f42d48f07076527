r"""The public Python API, re-exported from the package root (``import icl_symbolic as ics``).

One order and one set of names everywhere, the paper's: the teacher ``f`` first
(positional), then keyword-only ``rho, alpha, kappa, tau, lam, d, C_train,
C_test`` and the method options (``digits``, ``seeds``, ...).  Defaults are those
of every command (:mod:`icl_symbolic.core.defaults`: rho = 0.1, alpha = kappa = tau =
2, lam = 0, d = 64).  Numbers given as strings are read exactly (``"0.1"`` is
1/10); floats through their shortest repr.

Every function returns a result object that says how its numbers were obtained
(:class:`~icl_symbolic.core.values.Value`), prints as a short table, renders as
HTML/LaTeX in a notebook, and converts with ``to_json()``.

>>> import icl_symbolic as ics
>>> r = ics.hermite_coeffs("sin(g)", rho="0.1")
>>> r.a1.exact, (r.a1 ** 2).exact
(exp(-1/2), exp(-1))
>>> (r.rho_nonlinear / r.a1 ** 2).to_str(6)        # the Fig. 1 legend value
'0.447029'
>>> e = ics.e_nonlinear("sin(g)", rho="0.1", alpha=2, kappa=2, tau=[0.5, 1, 4])
>>> [p["e"] for p in e.points()][1], e.points()[1]["reason"]
(inf, 'tau = 1 with lam = 0: the ridgeless error diverges (interpolation peak)')
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from numbers import Real

import numpy as np

from icl_symbolic.core import defaults as D
from icl_symbolic.output.display import Quantity, html_table, latex_table, text_table
from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.gauss import to_rational
from icl_symbolic.engine.hermite import HermiteResult
from icl_symbolic.engine.hermite import hermite_coeffs as _hermite_coeffs
from icl_symbolic.output.io import write_text
from icl_symbolic.output.rows import Rows
from icl_symbolic.model.moments import Moments
from icl_symbolic.model.moments import conditional_moments as _conditional_moments
from icl_symbolic.output.plotting import spectrum_figure, sweep_figure, theory_curve_figure
from icl_symbolic.simulation.simulator import SimResult
from icl_symbolic.studies.compare import theory_grid, with_theory
from icl_symbolic.simulation.simulator import simulate as _simulate
from icl_symbolic.theory.asymptotic import TheoryCurve, curve
from icl_symbolic.theory.asymptotic import e_nonlinear as _e_nonlinear
from icl_symbolic.core.values import Value
from icl_symbolic.diagnosis.scale import Diagnosis, diagnose_value
from icl_symbolic.verification.report import render
from icl_symbolic.verification.runner import ClaimResult, format_line, summary_line
from icl_symbolic.verification.runner import verify as _run_claims

__all__ = ["hermite_coeffs", "e_nonlinear", "e_linear", "conditional_moments", "simulate", "verify", "diagnose",
           "plot_spectrum", "plot_theory", "plot_simulation",
           "HermiteResult", "TheoryCurve", "SimResult", "SimSweep", "VerifyResult", "Moments", "Diagnosis"]


# ---------------------------------------------------------------------------
# argument handling shared by the functions below
# ---------------------------------------------------------------------------
def _number(x, name: str) -> float:
    """A float from a number or an exact string ("0.1", "1/3")."""
    if isinstance(x, (str, Value)) or not isinstance(x, Real):
        if isinstance(x, Value):
            return float(x)
        return float(to_rational(x, name))
    return float(x)


def _grid(x, name: str):
    """A float for a scalar, a 1-D float array for a list/array (a sweep)."""
    if isinstance(x, (str, Value)) or np.ndim(x) == 0:
        return _number(x, name)
    arr = np.asarray([_number(v, name) for v in np.ravel(x)], dtype=float)
    if arr.size == 0:
        raise ICLError(f"{name}: empty list")
    return arr


def _seeds(seeds, seed: int) -> tuple:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ICLError(f"seeds: need at least one seed, got {seeds}")
        return tuple(range(int(seed), int(seed) + int(seeds)))
    return tuple(int(s) for s in seeds)


# ---------------------------------------------------------------------------
# Eq. (2), Eq. (8): Hermite coefficients
# ---------------------------------------------------------------------------
def hermite_coeffs(f, *, rho=D.RHO, M: int = D.M, digits: int = D.DIGITS, exact: bool = True) -> HermiteResult:
    """Hermite coefficients a_0..a_M of ``f`` and a1, E[f^2], rho_f, rho_nonlinear (Eq. (2), p. 2; Eq. (8), p. 3).

    ``f`` is an expression string in the input language (never evaluated as
    Python), a SymPy expression, or a callable accepting mpmath numbers.  Exact
    (SymPy) where a closed form exists, else mpmath quadrature with certified
    digits.  See :func:`icl_symbolic.engine.hermite.hermite_coeffs`.
    """
    return _hermite_coeffs(f, M=M, rho=rho, digits=digits, exact=exact)


# ---------------------------------------------------------------------------
# Result 1, Eq. (9); Eq. (10)
# ---------------------------------------------------------------------------
def e_nonlinear(f, *, rho=D.RHO, alpha=D.ALPHA, kappa=D.KAPPA, tau=D.TAU, lam=D.LAM, d=None,
                C_train=D.C_TRAIN, C_test=None, digits: int = D.DIGITS, error: str = "icl"):
    """The d -> infinity ICL error for teacher ``f`` (Result 1, Eq. (9), p. 3; a1 = 0: Eq. (10)).

    With scalars, a :class:`Value` (``numeric``: a deterministic float64
    computation).  With a list for any of ``rho, alpha, kappa, tau, lam``, a
    :class:`TheoryCurve` over their cartesian product; a ridgeless point at
    tau = 1 is marked as diverging (``e = inf`` with a reason) instead of
    stopping the sweep.  ``d`` matters only for non-identity covariance families.
    ``error``: ``icl`` (default), ``idg`` (the test task is one of the k pretraining
    tasks) or ``gap`` (icl - idg); docs/idg.md.
    """
    grids = {k: _grid(v, k) for k, v in (("rho", rho), ("alpha", alpha), ("kappa", kappa),
                                          ("tau", tau), ("lam", lam))}
    if any(isinstance(v, np.ndarray) for v in grids.values()):
        return curve(f, C_train, C_test, digits=digits, d=d, error=error, **grids)
    return _e_nonlinear(f, C_train, C_test, digits=digits, d=d, error=error, **grids)


def e_linear(*, rho=D.RHO, alpha=D.ALPHA, kappa=D.KAPPA, tau=D.TAU, lam=D.LAM, d=None,
             C_train=D.C_TRAIN, C_test=None, error: str = "icl"):
    """The ICL error of the linear teacher y = w^T x + noise (e_ICL^linear of Result 1, Eq. (9), p. 3).

    Same conventions as :func:`e_nonlinear` with f(g) = g (a1 = 1, rho_nonlinear = rho).
    """
    return e_nonlinear("g", rho=rho, alpha=alpha, kappa=kappa, tau=tau, lam=lam, d=d,
                       C_train=C_train, C_test=C_test, error=error)


# ---------------------------------------------------------------------------
# Lemma 1
# ---------------------------------------------------------------------------
def conditional_moments(f, *, rho=D.RHO, d: int = D.D, ell: int | None = None, omega=1,
            digits: int = D.DIGITS) -> Moments:
    """Exact finite-size Lemma 1 moments of u, s, y for a fixed task with |w|^2 = d omega
    (Appendix B, Eqs. (12)-(14), p. 8-9); ``ell`` defaults to 2d (alpha = 2)."""
    return _conditional_moments(f, rho, d, 2 * d if ell is None else ell, omega=omega, digits=digits)


# ---------------------------------------------------------------------------
# simulation, Eqs. (1)-(7)
# ---------------------------------------------------------------------------
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
        return [Quantity(f"alpha={r.alpha:g} kappa={r.kappa:g} tau={r.tau:g}",
                         f"\\alpha={r.alpha:g},\\ \\kappa={r.kappa:g},\\ \\tau={r.tau:g}",
                         r.e if r.e is not None else r.e_mc) for r in self.results]

    def _title(self):
        r = self.results[0]
        return (f"Simulated ICL error e, f(g) = {r.teacher}, d = {r.d}, rho = {r.rho:g}, "
                f"{len(r.seeds)} seeds per point")

    def __repr__(self):
        return text_table(self._title(), self._rows(), 6)

    def _repr_html_(self):
        return html_table(self._title(), self._rows(), 6)

    def _repr_latex_(self):
        return latex_table(self._title(), self._rows(), 6)


def simulate(f, *, rho=D.RHO, alpha=D.ALPHA, kappa=D.KAPPA, tau=D.TAU, lam=D.LAM, d: int = D.D,
             C_train=D.C_TRAIN, C_test=None, seeds=D.SEEDS, seed: int = 0, n_test: int | None = None,
             progress=None, **options):
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
    kw = dict(rho=_number(rho, "rho"), lam=_number(lam, "lam"), C_train=C_train,
              C_test=C_train if C_test is None else C_test, seeds=_seeds(seeds, seed),
              progress=progress, **options)
    if n_test is not None:
        kw["n_test"] = n_test
    points = [(a, k, t) for a in grids["alpha"] for k in grids["kappa"] for t in grids["tau"]]
    results = tuple(with_theory(_simulate(f, int(d), float(a), float(k), float(t), **kw)) for a, k, t in points)
    swept = any(np.ndim(x) > 0 and not isinstance(x, str) for x in (alpha, kappa, tau))
    return SimSweep(results) if swept else results[0]


# ---------------------------------------------------------------------------
# the shipped claims
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class VerifyResult(Rows):
    """The verdicts of a claim run: ``results`` (one :class:`ClaimResult` per claim), ``summary``."""

    results: tuple
    summary: dict

    @property
    def ok(self) -> bool:
        """True when every claim has its expected verdict."""
        return bool(self.summary["ok"])

    def __len__(self):
        return len(self.results)

    def __iter__(self):
        return iter(self.results)

    def __getitem__(self, key) -> ClaimResult:
        """A result by position or by claim id."""
        if isinstance(key, str):
            for r in self.results:
                if r.claim.id == key:
                    return r
            raise KeyError(key)
        return self.results[key]

    def points(self) -> list[dict]:
        """One row per claim, as the points of ``verify --json``."""
        return [r.to_json() for r in self.results]

    def to_json(self) -> dict:
        """``{"summary": ..., "points": [one object per claim]}``: the shape of ``verify --json``."""
        return {"summary": dict(self.summary), "points": self.points()}

    def report(self, path, mode: str = "quick") -> None:
        """Write the Markdown (``.md``) or HTML (``.html``) report, atomically."""
        write_text(path, render(path, list(self.results), self.summary, {"mode": mode}))

    def __repr__(self) -> str:
        bad = [r for r in self.results if not r.ok]
        width = max([len(r.claim.id) for r in bad] + [10])
        lines = [summary_line(self.summary)] + [format_line(r, width) for r in bad]
        if not bad:
            lines.append("(every claim has its expected verdict; iterate or index by id for details)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        e = html.escape
        rows = "".join(
            f"<tr><td style='color:{'#0a6b2a' if r.ok else '#b00020'}'>{'yes' if r.ok else 'NO'}</td>"
            f"<td><code>{e(r.claim.id)}</code></td><td>{e(r.label)}</td><td>{e(r.measure())}</td>"
            f"<td>{e(r.mde_text())}</td><td>{e(r.claim.source)}</td></tr>" for r in self.results)
        return (f"<div><p><b>{e(summary_line(self.summary))}</b></p><table><tr><th>ok</th><th>id</th>"
                f"<th>verdict</th><th>residual / z</th><th>power</th><th>source</th></tr>{rows}</table></div>")


def verify(files=None, *, only=None, full: bool = False, progress=None, jobs: int = 1,
           scheduler: str | None = None, tier: str | None = None, cache=None) -> VerifyResult:
    """Run claim files (default: the shipped derivations) and judge every claim.

    ``only``: claim ids or glob patterns; ``full``: also the simulation-backed
    claims; ``tier``: ``quick``, ``full`` or ``deep`` (deep adds the paper-scale
    ladders; ``full=True`` is ``tier="full"``); ``cache``: a folder for simulated
    seeds, so a killed run resumes (:mod:`icl_symbolic.simulation.cache`); ``progress``: a text stream for per-claim progress lines; ``jobs``:
    worker processes (one claim each; the same verdicts and numbers for any
    value); ``scheduler``: a Dask scheduler address instead.
    """
    results, summary = _run_claims(files, only, full=full, progress=progress, jobs=jobs, scheduler=scheduler,
                                   tier=tier, cache=cache)
    return VerifyResult(tuple(results), summary)


def diagnose(value, f, *, rho=D.RHO, tol=None, required=None, digits: int = D.DIGITS) -> Diagnosis:
    """Name what ``value`` is among teacher ``f``'s quantities (rho, E[f^2], rho_f,
    rho_nonlinear, a1, their ratios, ...): the scale-mismatch search behind the
    Fig. 1 caption finding (Eq. (8), p. 3; Fig. 1, p. 4)."""
    return diagnose_value(value, f=f, rho_value=rho, tol=tol, required=required, digits=digits)


# ---------------------------------------------------------------------------
# the commands' plots, as figures (matplotlib.figure.Figure, built without pyplot:
# a notebook shows them, fig.savefig(path) writes them)
# ---------------------------------------------------------------------------
def plot_spectrum(*results):
    """The Hermite energy spectrum a_m^2 against m of one or more :class:`HermiteResult`
    (the plot of ``coeffs --plot``)."""
    if not results or not all(isinstance(r, HermiteResult) for r in results):
        raise ICLError("plot_spectrum takes HermiteResult objects (from hermite_coeffs)")
    return spectrum_figure([(r.label, r) for r in results])


def plot_theory(curve: TheoryCurve, *, log: bool = False):
    """e against the first swept parameter of a :class:`TheoryCurve` (the plot of ``theory --plot``):
    one line per combination of the other swept parameters, the floor rho_nonlinear, the
    tau = 1 peak marked; ``log``: logarithmic x axis."""
    if not isinstance(curve, TheoryCurve):
        raise ICLError("plot_theory takes a TheoryCurve (e_nonlinear with a list for some parameter)")
    swept = ("rho", "alpha", "kappa", "lam", "tau")
    grids = {k: np.unique(curve.columns[k]) for k in swept}
    return theory_curve_figure(curve, grids, swept, log)


def plot_simulation(sim, *, digits: int = D.DIGITS):
    """Simulated ICL error (mean +- SE over seeds) of a :class:`SimResult` or :class:`SimSweep`
    against the swept parameter, with the d -> infinity theory on its own dense grid and at the
    simulated points (the plot of ``simulate --plot``; the ridgeless tau = 1 marked as an asymptote)."""
    results = list(sim) if isinstance(sim, SimSweep) else [sim]
    if not results or not all(isinstance(r, SimResult) for r in results):
        raise ICLError("plot_simulation takes a SimResult or a SimSweep (from simulate)")
    points = [(r if r.theory is not None else with_theory(r, digits)).to_json() for r in results]
    return sweep_figure(points, theory_grid(results[0].teacher, points, digits=digits))
