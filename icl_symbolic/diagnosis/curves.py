"""Error models on whole curves: fit each catalogue model to data against the theory.

Paper: Result 1, Eq. (9), p. 3 and Eq. (10), p. 3 (the theory the data are
compared with); Fig. 1, p. 4 (the a1^2 normalisation of the curves);
Eq. (6), p. 2 (the ridge (n/d) lam); Sec. 2, p. 2 (alpha = ell/d, kappa = k/d,
tau = n/d^2).

A curve is a table of points ``(x_i, e_i)`` where x is one of tau, kappa,
alpha and e an ICL error (points read off a figure, or another code's output),
with standard errors ``se_i`` or an assumed relative error ``rel_err``.
The theory is Result 1 for isotropic tasks (C_train = C_test = I), through
homogeneity ``e = a1^2 e_linear(rho_nonlinear/a1^2, alpha, kappa, tau, lam/a1^2)``
(:func:`icl_symbolic.theory.asymptotic.e_linear_isotropic`), or Eq. (10) when a1 = 0.

Each curve model of the catalogue (:mod:`icl_symbolic.diagnosis.slips`) changes the theory's
inputs (``substitute``: a1, rho_nonlinear, alpha, kappa, tau, lam) and/or its output
(``transform`` of x = e); its fitted parameters (``params``) are found by bounded
least squares (:func:`scipy.optimize.least_squares`).  The criterion is

    chi2 = sum_i ((e_i - model_i)/se_i)^2,     score = BIC = chi2 + k ln n,

with k fitted parameters and n points.  A model *explains* the curve when its
chi2 is consistent with the errors: the chi-square survival probability with
n - k degrees of freedom is at least ``P_EXPLAIN`` = 0.01.  Ranking: models that
explain the curve come first, fewer fitted parameters first (a named slip that
explains the data beats a generic fitted factor that can only do as well), then
by BIC (lower is better); models that do not explain it follow, by BIC.  The
theory itself (no slip, k = 0) is scored the same way; when it explains the
curve the verdict is "consistent" whatever else fits -- but only when the curve could
have shown a slip of the target's size (``mde``, default 5 %): the theory's chi2 test
(n dof, false alarm ``P_EXPLAIN``) detects a relative shift delta of every point with
90 % power once chi2's noncentrality delta^2 sum (t_i/se_i)^2 reaches the lambda of
:func:`icl_symbolic.core.stats.chi2_noncentrality`; that delta is the curve's MDE
(``mde_rel``).  Above the target the verdict is "inconclusive" (:mod:`icl_symbolic.core.verdict`).
Each point also states the MDE of an offset of that point alone, sqrt(lambda) se_i/|t_i|.
Models whose predictions agree to 1e-6 standard errors at every point tie.
"""

from __future__ import annotations

import csv
import io as _io
import math
from dataclasses import dataclass, field

import numpy as np
import sympy
from scipy.optimize import least_squares
from scipy.stats import chi2 as _chi2

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.limits import MAX_CURVE_BYTES, read_text_limited
from icl_symbolic.core.numbers import parse_float
from icl_symbolic.core.stats import chi2_noncentrality
from icl_symbolic.core.verdict import AGREES, DEFAULT_MDE_PCT, POWER, Verdict, decide, pct
from icl_symbolic.diagnosis.slips import CONTEXT_SYMBOLS, Catalogue, Context, SlipModel, catalogue
from icl_symbolic.theory.asymptotic import e_a1zero, e_linear_isotropic

AXES = ("tau", "kappa", "alpha")
THEORY_INPUTS = ("a1", "rho_nonlinear", "alpha", "kappa", "tau", "lam")
P_EXPLAIN = 0.01
MAX_POINTS = 10_000
TIE = 1e-6


@dataclass
class CurveData:
    """A curve: axis name, x values, e values, their standard errors and where those came from."""

    axis: str
    x: np.ndarray
    e: np.ndarray
    se: np.ndarray
    se_source: str


def read_curve(path, rel_err: float | None = None) -> CurveData:
    """Read a CSV with a header ``tau,e`` (or ``kappa,e``, ``alpha,e``), optional column ``se``.

    Without ``se``, the standard error of each point is ``rel_err * |e|`` (default 0.02).
    Lines starting with ``#`` are comments.  Bad input: one-line ICLError.
    """
    text = read_text_limited(path, MAX_CURVE_BYTES, "--curve")
    return parse_curve(text, rel_err, where=str(path))


def parse_curve(text: str, rel_err: float | None = None, where: str = "curve") -> CurveData:
    """The parsing half of :func:`read_curve` (for text already in memory)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if len(lines) < 2:
        raise ICLError(f"--curve: {where}: needs a header line and at least one data row")
    rows = list(csv.reader(_io.StringIO("\n".join(lines))))
    head = [h.strip().lower() for h in rows[0]]
    axes = [h for h in head if h in AXES]
    if len(axes) != 1 or "e" not in head:
        raise ICLError(
            f"--curve: {where}: the header must name one of tau, kappa, alpha and the "
            f"column e (and optionally se); got {','.join(head)}"
        )
    extra = set(head) - {axes[0], "e", "se"}
    if extra or len(set(head)) != len(head):
        raise ICLError(f"--curve: {where}: unexpected or repeated column(s) in the header {','.join(head)}")
    if len(rows) - 1 > MAX_POINTS:
        raise ICLError(f"--curve: {where}: more than {MAX_POINTS} points")
    cols = {h: [] for h in head}
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(head):
            raise ICLError(f"--curve: {where}: data row {i - 1} has {len(r)} fields, expected {len(head)}")
        for h, v in zip(head, r):
            cols[h].append(parse_float(v, f"--curve: {where}: data row {i - 1}"))
    x, e = np.array(cols[axes[0]]), np.array(cols["e"])
    if np.any(x <= 0):
        raise ICLError(f"--curve: {where}: {axes[0]} must be > 0 at every point")
    if "se" in cols:
        if rel_err is not None:
            raise ICLError("--rel-err: the curve has its own se column; give one or the other")
        se = np.array(cols["se"])
        if np.any(se <= 0):
            raise ICLError(f"--curve: {where}: se must be > 0 at every point")
        src = "the se column of the data"
    else:
        r = 0.02 if rel_err is None else float(rel_err)
        if not (0 < r < 1):
            raise ICLError(f"--rel-err: must be between 0 and 1, got {r}")
        if np.any(e == 0):
            raise ICLError(f"--curve: {where}: e = 0 at some point; give an se column")
        se = r * np.abs(e)
        src = f"assumed relative error {r:g} of each point (--rel-err)"
    return CurveData(axes[0], x, e, se, src)


# ---------------------------------------------------------------------------
# theory
# ---------------------------------------------------------------------------
def theory_point(a1, rho_nonlinear, alpha, kappa, tau, lam) -> float:
    """Result 1 (Eq. 9) for isotropic tasks via homogeneity; Eq. (10) when a1 = 0."""
    if a1 == 0:
        return float(e_a1zero(rho_nonlinear=rho_nonlinear, tau=tau, lam=lam, alpha=alpha))
    c = a1 * a1
    return c * float(e_linear_isotropic(rho_nonlinear / c, alpha, kappa, tau, lam / c))


def theory_values(inputs: dict) -> np.ndarray | None:
    """Theory at each point of the arrays in ``inputs`` (names of THEORY_INPUTS); None if invalid."""
    n = len(inputs["tau"])
    out = np.empty(n)
    try:
        for i in range(n):
            out[i] = theory_point(*(float(inputs[k][i]) for k in THEORY_INPUTS))
    except (ICLError, ValueError, ZeroDivisionError, OverflowError):
        return None
    return out if np.all(np.isfinite(out)) else None


def point_env(ctx: Context, data: CurveData, setting: dict) -> dict:
    """Per-point float arrays of every context name (the axis varies; the rest are constants)."""
    n = len(data.x)
    env = {k: np.full(n, float(v)) for k, v in ctx.values.items()}
    for k, v in setting.items():
        if v is not None:
            env[k] = np.full(n, float(v))
    env[data.axis] = np.array(data.x, dtype=float)
    env.setdefault("lam", np.zeros(n))
    if "d" in env and "kappa" in env:
        kd = np.round(env["kappa"] * env["d"], 9)
        env["k_floor"] = np.floor(kd)
        env["k_round"] = np.floor(kd + 0.5)
    return env


def _vec(expr, env: dict, params: dict):
    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    fn = sympy.lambdify(syms, expr, modules="numpy")
    args = [params[s.name] if s.name in params else env[s.name] for s in syms]
    with np.errstate(all="ignore"):
        v = fn(*args)
    return np.broadcast_to(np.asarray(v, dtype=float), env["tau"].shape).copy()


# ---------------------------------------------------------------------------
# fitting
# ---------------------------------------------------------------------------
@dataclass
class Explanation:
    """One model (or the theory itself, ``model=None``) fitted to the curve."""

    model: SlipModel | None
    params: dict
    chi2: float
    k: int
    n: int
    pred: np.ndarray = field(repr=False)
    rank: int = 0
    tied_with: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.model.name if self.model is not None else "theory (no slip)"

    @property
    def score(self) -> float:
        """BIC = chi2 + k ln n (lower is better)."""
        return self.chi2 + self.k * math.log(self.n)

    @property
    def p_value(self) -> float:
        dof = self.n - self.k
        return float(_chi2.sf(self.chi2, dof)) if dof > 0 else float("nan")

    @property
    def explains(self) -> bool:
        return self.n > self.k and self.p_value >= P_EXPLAIN

    def to_json(self) -> dict:
        return {
            "model": self.name,
            "transform": self.model.written() if self.model else None,
            "params": {k: float(v) for k, v in self.params.items()},
            "score": float(self.score),
            "chi2": float(self.chi2),
            "k": self.k,
            "n": self.n,
            "p_value": None if math.isnan(self.p_value) else self.p_value,
            "explains": self.explains,
            "rank": self.rank,
            "tied_with": list(self.tied_with),
        }


@dataclass
class CurveReport:
    data: CurveData
    setting: dict
    theory: Explanation
    explanations: list  # ranked, theory included
    indistinguishable: list  # models identical to the theory here
    not_applicable: list  # (name, reason)
    unavailable: list  # (name, reason)
    criterion: str = (
        "chi2 = sum ((e - model)/se)^2, score BIC = chi2 + k ln n; a model explains the "
        f"curve when the chi-square survival probability (n - k dof) is >= {P_EXPLAIN}; "
        "ranked: explaining models first, fewer fitted parameters first, then by BIC"
    )
    target: float = DEFAULT_MDE_PCT / 100  # the MDE target of "consistent" (a fraction)

    @property
    def _lam(self) -> float:
        return chi2_noncentrality(len(self.data.x), P_EXPLAIN, POWER)

    @property
    def point_mde_rel(self) -> np.ndarray:
        """Per point: the smallest relative offset of that point alone the theory's chi2 test flags
        with 90 % power (inf where the theory is 0)."""
        t = np.abs(self.theory.pred)
        with np.errstate(divide="ignore"):
            return np.where(t > 0, math.sqrt(self._lam) * self.data.se / t, np.inf)

    @property
    def mde_rel(self) -> float:
        """The curve's MDE: the smallest relative shift of every point the chi2 test flags with 90 % power."""
        w = float(np.sum((self.theory.pred / self.data.se) ** 2))
        return math.sqrt(self._lam / w) if w > 0 else math.inf

    @property
    def judgement(self) -> Verdict:
        """The shared verdict of the theory-without-slip comparison: the curve is one comparison (its chi2
        test); the advice says how much smaller the points' SEs would have to be (the MDE scales with them)."""
        m = self.mde_rel
        k = m / self.target
        advice = (
            f"standard errors about {k:.2g} times smaller at every point (about {k * k:.2g} times the runs) "
            "would reach the target"
        )
        return decide([_CurveTest(self.theory.explains, m)], self.target, advice=advice)

    @property
    def best(self) -> Explanation:
        return self.explanations[0]

    def best_names(self) -> list:
        return [x.name for x in self.explanations if x.rank == 1]

    def verdict(self) -> str:
        if self.theory.explains:
            return "consistent" if self.judgement.status == AGREES else "inconclusive"
        b = self.best
        return "explained" if (b.model is not None and b.explains) else "unexplained"

    def summary(self) -> str:
        v = self.verdict()
        th = self.theory
        head = (
            f"{len(self.data.x)} points on {self.data.axis}; errors: {self.data.se_source}; criterion: {self.criterion}"
        )
        if v in ("consistent", "inconclusive"):
            return (
                f"{self.judgement.sentence(agree='consistent with the theory without a slip')} "
                f"(chi2 = {th.chi2:.3g}, p = {th.p_value:.3g}; curve MDE {pct(self.mde_rel)}); {head}"
            )
        b = self.best
        if v == "explained":
            ps = ", ".join(f"{k} = {val:.6g}" for k, val in b.params.items())
            s = (
                f"explained by error model {b.name}: {b.model.description}; transform "
                f"{b.model.written()}{f' with {ps}' if ps else ''} (BIC {b.score:.4g}, chi2 {b.chi2:.3g}, "
                f"p = {b.p_value:.3g}; theory without slip: chi2 {th.chi2:.4g})"
            )
            if b.tied_with:
                s += f"; tied with {', '.join(b.tied_with)} (identical predictions here)"
            return s + f"; {head}"
        return (
            f"no model of the catalogue explains the curve (best: {b.name}, chi2 {b.chi2:.4g}, "
            f"p = {b.p_value:.3g}); {head}"
        )

    def to_json(self) -> dict:
        return {
            "mode": "curve",
            "axis": self.data.axis,
            "n_points": int(len(self.data.x)),
            "errors": self.data.se_source,
            "setting": {k: v for k, v in self.setting.items()},
            "criterion": self.criterion,
            "verdict": self.verdict(),
            **self.judgement.to_json(),
            "point_mde_rel": [None if not math.isfinite(m) else float(m) for m in self.point_mde_rel],
            "theory": self.theory.to_json(),
            "explanations": [x.to_json() for x in self.explanations],
            "indistinguishable": list(self.indistinguishable),
            "not_applicable": [{"model": n, "reason": r} for n, r in self.not_applicable],
            "unavailable": [{"model": n, "reason": r} for n, r in self.unavailable],
            "summary": self.summary(),
        }


@dataclass(frozen=True)
class _CurveTest:
    """The curve as one compared row of :func:`icl_symbolic.core.verdict.decide`."""

    agrees: bool
    mde_rel: float


def check_setting(axis: str, setting: dict) -> None:
    """The setting names the theory needs besides the axis; one-line ICLError if missing."""
    for k in ("alpha", "kappa", "tau"):
        if k != axis and setting.get(k) is None:
            raise ICLError(f"--{k} is needed for a curve over {axis}")
        if k == axis and setting.get(k) is not None:
            raise ICLError(f"--{k}: the curve varies {k}; do not give it as an option")


def _model_inputs(model: SlipModel):
    """Theory-input expressions after the model's substitutions (None if it changes none)."""
    sub = dict(model.substitute)
    exprs = {
        k: CONTEXT_SYMBOLS[k].xreplace(sub) if CONTEXT_SYMBOLS[k] in sub else CONTEXT_SYMBOLS[k] for k in THEORY_INPUTS
    }
    changed = any(exprs[k] != CONTEXT_SYMBOLS[k] for k in THEORY_INPUTS)
    return exprs, changed


def _predict(model, exprs, env, base_pred, params: dict):
    """The model's curve at the points of ``env`` with parameter values ``params`` (None if undefined)."""
    n = len(env["tau"])
    par = {k: np.full(n, float(v)) for k, v in params.items()}
    if any(exprs[k] != CONTEXT_SYMBOLS[k] for k in THEORY_INPUTS):
        inputs = {k: _vec(exprs[k], env, par) for k in THEORY_INPUTS}
        if not all(np.all(np.isfinite(v)) for v in inputs.values()):
            return None
        base = theory_values(inputs)
        if base is None:
            return None
    else:
        base = base_pred
    if model.transform is None:
        return base
    out = _vec(model.transform, dict(env, x=base), par)
    return out if np.all(np.isfinite(out)) else None


def _fit(model, exprs, data, env, base_pred):
    """Least-squares fit of ``model``'s params; returns (params, pred) or None if undefined."""
    pnames = [p.name for p in model.params]

    def predict(pv):
        return _predict(model, exprs, env, base_pred, dict(zip(pnames, pv)))

    if not pnames:
        p = predict([])
        return None if p is None else ({}, p)

    def resid(pv):
        p = predict(pv)
        if p is None:
            return np.full(len(data.x), 1e6)
        return (data.e - p) / data.se

    x0 = np.array([p.init for p in model.params])
    lo = np.array([p.lo for p in model.params])
    hi = np.array([p.hi for p in model.params])
    best = None
    for start in (x0, (lo + hi) / 2 if np.all(np.isfinite(hi - lo)) else x0):
        start = np.clip(start, lo + 1e-12 * (hi - lo), hi - 1e-12 * (hi - lo))
        r = least_squares(resid, start, bounds=(lo, hi), x_scale="jac", max_nfev=200 * len(pnames))
        if best is None or r.cost < best.cost:
            best = r
    p = predict(best.x)
    return None if p is None else (dict(zip(pnames, best.x)), p)


def explain_curve(
    data: CurveData, ctx: Context, setting: dict, cat: Catalogue | None = None, mde: float = DEFAULT_MDE_PCT / 100
) -> CurveReport:
    """Fit every curve model of the catalogue to ``data`` and rank them (see module docstring);
    ``mde``: the target (a fraction) the curve's MDE must meet for "consistent".

    ``setting``: alpha, kappa, tau (those not on the axis), lam (default 0), d (optional;
    models that need it are not applicable without it).
    """
    cat = cat or catalogue()
    if not (np.all(np.isfinite(data.se)) and np.all(data.se > 0)):
        raise ICLError("every point needs a finite standard error > 0")
    check_setting(data.axis, setting)
    env = point_env(ctx, data, setting)
    base_inputs = {k: env[k] for k in THEORY_INPUTS}
    base = theory_values(base_inputs)
    if base is None:
        raise ICLError("the theory is undefined at some point of the curve (tau = 1 without a ridge?)")
    n = len(data.x)
    theory = Explanation(None, {}, float(np.sum(((data.e - base) / data.se) ** 2)), 0, n, base)
    fits, indist, notap = [theory], [], []
    for m in cat.for_kind("curve"):
        if not m.available:
            continue
        exprs, changed = _model_inputs(m)
        if not changed and m.transform is None:
            notap.append((m.name, "substitutes nothing the theory depends on"))
            continue
        used = set()
        for e in list(exprs.values()) + ([m.transform] if m.transform is not None else []):
            used |= {s.name for s in e.free_symbols}
        miss = sorted(used - set(env) - {p.name for p in m.params} - {"x"})
        if miss:
            notap.append((m.name, f"needs {', '.join('--' + x if x in ('d', 'lam') else x for x in miss)}"))
            continue
        got = _fit(m, exprs, data, env, base)
        if got is None:
            notap.append((m.name, "undefined at some point of the curve"))
            continue
        params, pred = got
        if np.all(np.abs(pred - base) <= TIE * data.se) and not m.params:
            indist.append(m.name)
            continue
        fits.append(Explanation(m, params, float(np.sum(((data.e - pred) / data.se) ** 2)), len(m.params), n, pred))
    order = {nm: i for i, nm in enumerate(cat.names())}
    fits.sort(
        key=lambda x: ((0, x.k) if x.explains else (1, 0)) + (x.score, -1 if x.model is None else order[x.model.name])
    )
    rank = 0
    for i, f in enumerate(fits):
        same = [
            p
            for p in fits[:i]
            if p.k == f.k and p.explains == f.explains and np.all(np.abs(p.pred - f.pred) <= TIE * data.se)
        ]
        f.rank = same[0].rank if same else rank + 1
        rank = max(rank, f.rank)
    for f in fits:
        f.tied_with = [p.name for p in fits if p is not f and p.rank == f.rank]
    return CurveReport(
        data,
        dict(setting),
        theory,
        fits,
        indist,
        notap,
        [(m.name, m.reason) for m in cat.for_kind("curve") if not m.available],
        target=float(mde),
    )


def curve_on_grid(rep: CurveReport, ctx: Context, xs, which=None):
    """Theory (``which=None``) or a fitted explanation evaluated at new axis values ``xs``.

    Points where the theory is undefined (tau = 1 without a ridge) are NaN.  For plots.
    """
    xs = np.asarray(xs, dtype=float)
    out = np.full(len(xs), np.nan)
    for i, x in enumerate(xs):
        shell = CurveData(rep.data.axis, np.array([x]), np.ones(1), np.ones(1), "")
        env = point_env(ctx, shell, rep.setting)
        base = theory_values({k: env[k] for k in THEORY_INPUTS})
        if base is None:
            continue
        if which is None or which.model is None:
            out[i] = base[0]
            continue
        exprs, _ = _model_inputs(which.model)
        p = _predict(which.model, exprs, env, base, which.params)
        if p is not None:
            out[i] = p[0]
    return out
