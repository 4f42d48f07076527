"""One simulation point against the d -> infinity theory, in numbers and in words.

The one place that computes the theory at a simulated point (Result 1, Eq. (9),
p. 3; a1 = 0: Eq. (10)) and compares: ``z = (e - e_theory) / SE`` over seeds,
the relative gap, and the finite-d gap the package expects at that d
(docs/finite-size.md: the gap is O(1/d), of either sign, with |gap| x d below
:data:`GAP_X_D` in every measured setting away from the peak).  A large z at
finite d is therefore not a verdict on the theory: ``icl-symbolic
extrapolate`` fits a ladder in d and compares the extrapolated e_inf instead.

At the ridgeless interpolation peak (tau = 1, lam = 0; :mod:`icl_symbolic.theory.peak`)
the theory is inf and the comparison says why the simulated number means
nothing there (:data:`icl_symbolic.theory.peak.AT_PEAK`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.verdict import RowTest, decide, mde_with_seeds
from icl_symbolic.model.setting import Setting
from icl_symbolic.studies.extrapolate import bonferroni_z, theory_value, welch_dof
from icl_symbolic.theory import asymptotic as theory
from icl_symbolic.theory.peak import AT_PEAK, DIVERGES, is_peak

#: |e(d) - e_inf| / e_inf <= GAP_X_D / d: 1.3 x the largest measured gap x d away from tau = 1
#: (docs/finite-size.md, "Measured gaps"), for a1 != 0 ("result1") and the a1 = 0 branch.
GAP_X_D = {"result1": 5.0, "a1zero": 8.0}


@dataclass(frozen=True)
class Comparison:
    """``e`` (mean +- SE over seeds at dimension d) against ``e_theory`` (d -> infinity)."""

    e_theory: float | None
    reason: str | None  # why there is no finite e_theory (the peak), else None
    z: float | None  # (e - e_theory) / SE
    gap_rel: float | None  # (e - e_theory) / e_theory
    expected_gap_rel: float | None  # GAP_X_D / d: the finite-d gap expected at this d, either sign
    words: str

    def to_json(self) -> dict:
        return {
            "e_theory": self.e_theory,
            "e_theory_reason": self.reason,
            "z": self.z,
            "gap_rel": self.gap_rel,
            "expected_gap_rel": self.expected_gap_rel,
            "comparison": self.words,
        }


def theory_at(setting: Setting, digits: int = 30, error: str = "icl"):
    """The d -> infinity error at one simulated :class:`~icl_symbolic.model.setting.Setting` (``error``:
    ``icl`` or ``idg``, docs/idg.md), or None at the ridgeless peak (where it diverges)."""
    if is_peak(setting.tau, setting.lam):
        return None
    return theory_value(setting, error, d=setting.d, digits=digits)[0]


def compare(e, se, e_theory, d: int, branch: str = "result1") -> Comparison:
    """The comparison of a simulated ``e +- se`` at ``d`` with ``e_theory`` (None: the peak)."""
    if e_theory is None:
        return Comparison(None, DIVERGES, None, None, None, AT_PEAK)
    c = GAP_X_D[branch]
    expected = c / d
    gap = e - e_theory
    rel = gap / e_theory if e_theory else None
    z = gap / se if se and se > 0 else None
    ztext = f"z = {z:+.1f}" if z is not None else "z undefined (one seed: no SE)"
    head = (
        f"e - e_theory = {gap:+.4g} ({100 * rel:+.1f}%), {ztext} against the d -> infinity theory; "
        if rel is not None
        else f"e - e_theory = {gap:+.4g}, {ztext}; "
    )
    if rel is not None and abs(rel) <= expected:
        verdict = (
            f"within the finite-d gap expected at d = {d} (up to {100 * expected:.1f}%, either sign: "
            f"{c:g}/d, docs/finite-size.md)"
        )
    else:
        verdict = (
            f"beyond the finite-d gap measured so far at d = {d} ({100 * expected:.1f}%, {c:g}/d; docs/finite-size.md)"
        )
    return Comparison(
        float(e_theory),
        None,
        z,
        rel,
        expected,
        head + verdict + ". A z at one d is no verdict on the theory: "
        "`icl-symbolic extrapolate` fits e(d) over a ladder of d and tests e_inf.",
    )


def branch_of(f, digits: int = 30) -> str:
    """``"a1zero"`` when the teacher's a1 is 0 (Eq. (10)), else ``"result1"``."""
    return "a1zero" if theory.teacher_moments(f, digits).a1_is_zero else "result1"


def compare_point(setting: Setting, e, se, digits: int = 30) -> Comparison:
    """:func:`theory_at` and :func:`compare` for one simulated point."""
    e_th = theory_at(setting, digits)
    if e is None or (isinstance(e, float) and not math.isfinite(e)):
        return Comparison(e_th, None if e_th is not None else DIVERGES, None, None, None, "")
    return compare(
        float(e),
        None if se is None else float(se),
        e_th,
        int(setting.d),
        branch_of(setting.f, digits) if e_th is not None else "result1",
    )


def with_theory(res, digits: int = 30, idg: bool = False):
    """``res`` (a :class:`~icl_symbolic.simulation.simulator.SimResult`) carrying its comparison with the
    d -> infinity theory (:func:`compare_point`; its ``e_theory``, ``z``, ... and ``to_json()`` show it);
    ``idg=True`` adds ``e_idg_theory``, the d -> infinity IDG error at the point (docs/idg.md)."""
    e = res.e_mc if res.e is None else res.e
    c = compare_point(
        res.setting,
        None if e.value is None else float(e.value),
        None if e.stderr is None else float(e.stderr),
        digits,
    ).to_json()
    if idg:
        c["e_idg_theory"] = theory_at(res.setting, digits, error="idg")
    return dataclasses.replace(res, theory=c)


def theory_grid(f, points: list, n: int = 160, digits: int = 30):
    """The theory on its own dense grid over the swept parameter of ``simulate`` points (dicts as in its
    JSON): ``(x, e)`` arrays for the plot, or None when more than one of alpha, kappa, tau varies.

    The grid spans the simulated range widened by a factor 1.5 on either side (a single point gets
    [x/2, 2x]), geometric, and keeps 2 % away from a ridgeless tau = 1, where the theory diverges.
    """
    varying = [k for k in ("tau", "kappa", "alpha") if len({p[k] for p in points}) > 1]
    if len(varying) > 1:
        return None
    xname = varying[0] if varying else "tau"
    xs = [p[xname] for p in points]
    lo, hi = (min(xs) / 1.5, max(xs) * 1.5) if len(varying) else (xs[0] / 2, xs[0] * 2)
    grid = np.geomspace(lo, hi, n)
    p0 = points[0]
    if xname == "tau" and p0["lam"] == 0:
        grid = grid[np.abs(grid - 1) > 0.02]
    fixed = {k: p0[k] for k in ("alpha", "kappa", "tau") if k != xname}
    ratios = theory.Ratios(rho=p0["rho"], lam=p0["lam"], **fixed, **{xname: grid})
    cv = theory.curve(f, ratios, theory.TaskCovariances(p0["C_train"], p0["C_test"], p0["d"]), digits=digits)
    return np.asarray(cv.columns[xname], float), np.asarray(cv.columns["e"], float)


def finite_d_test(e: float, se: float, n_seeds: int, corrected: float, corrected_se: float, z_budget: float):
    """One simulated point (``e`` +- ``se`` over ``n_seeds`` seeds) against the finite-d theory at its
    own d (the limit plus its O(1/d) terms, ``corrected`` +- its Monte-Carlo ``corrected_se``;
    :mod:`icl_symbolic.theory.finite_d`, docs/finite-d.md): a
    :class:`~icl_symbolic.core.verdict.RowTest` of e - corrected against the combined SE at the
    Welch-Satterthwaite dof (the theory's SE taken as known), with its power relative to
    ``corrected``.  Unlike a z against the d -> infinity limit, this is a verdict at one d; what it
    cannot tell apart is the theory's own O(1/d^2) remainder (docs/finite-d.md gives its size).

    >>> t = finite_d_test(1.02, 0.01, 10, 1.0, 0.0, 3.29)
    >>> round(t.z, 2), t.dof, t.agrees, round(t.mde_rel, 3)
    (2.0, 9.0, True, 0.066)
    """
    if se is None or not se > 0:
        raise ICLError("a verdict against the finite-d theory needs a standard error over seeds (at least 2 seeds)")
    comb = math.sqrt(se**2 + corrected_se**2)
    dof = welch_dof([1.0, 1.0], [se, corrected_se], [n_seeds, None])
    return RowTest(float(e) - float(corrected), comb, z_budget, dof, float(corrected))


def finite_d_verdict(points, fds, *, mde: float, false_alarm: float = 1e-3, seconds_per_seed=None):
    """The verdict of simulated points against their finite-d theory (``simulate --order 1``).

    ``points``: dicts with ``e_mean``, ``e_se`` (else ``e_mc_mean``, ``e_mc_se``) and ``seeds``
    (``simulate``'s JSON points); ``fds``: their :class:`~icl_symbolic.theory.finite_d.FiniteD`.
    The two-sided ``false_alarm`` is split over the points (Bonferroni); the verdict is the shared
    one (:func:`icl_symbolic.core.verdict.decide`) at the MDE target ``mde`` (a fraction), with the
    seeds per point that would reach it (``seconds_per_seed``: one seed at every point, the cost
    model).  Points whose corrected value the theory withholds (outside its checked scope,
    ``FiniteD.in_scope``) are not judged: their test is None and the verdict counts them as withheld.
    Returns ``(tests, verdict)``, one :class:`~icl_symbolic.core.verdict.RowTest` (or None) per point.
    """
    judged = [i for i, fd in enumerate(fds) if getattr(fd, "in_scope", True) and math.isfinite(fd.corrected)]
    withheld = len(points) - len(judged)
    zb = bonferroni_z(false_alarm, max(len(judged), 1))
    tests, n_now = [None] * len(points), None
    for i in judged:
        p, fd = points[i], fds[i]
        exact = p.get("e_mean") is not None
        e, se = (p["e_mean"], p["e_se"]) if exact else (p["e_mc_mean"], p["e_mc_se"])
        n = len(p["seeds"])
        n_now = n if n_now is None else min(n_now, n)
        tests[i] = finite_d_test(e, se, n, fd.corrected, fd.stderr, zb)
    rows = [tests[i] for i in judged]
    fixed = [fds[i].stderr for i in judged]

    def dof_at(j, n):
        return welch_dof([1.0, 1.0], [rows[j].se, fixed[j]], [n, None])

    verdict = decide(
        rows,
        mde,
        mde_at=mde_with_seeds(rows, n_now, fixed, dof_at) if rows else None,
        n_seeds=n_now,
        seconds_per_seed=seconds_per_seed,
        unit="seeds per point",
        advice=None
        if rows
        else "the finite-d theory withholds its corrected value at every point: outside the "
        "scope its terms were checked in (docs/finite-d.md, Scope); no verdict against it",
        withheld=withheld,
    )
    return tests, verdict


__all__ = [
    "GAP_X_D",
    "Comparison",
    "theory_at",
    "compare",
    "branch_of",
    "compare_point",
    "with_theory",
    "theory_grid",
    "finite_d_test",
    "finite_d_verdict",
]
