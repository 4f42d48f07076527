"""All of the package's matplotlib code: functions that build and return a figure.

Every function here returns a :class:`matplotlib.figure.Figure` built directly
(not through ``pyplot``), so calling them never switches a notebook's backend,
never opens a window and leaves no figure registered in ``pyplot``; a notebook
displays the returned figure, the CLI saves it with
:func:`icl_symbolic.output.io.save_figure`.  matplotlib is imported inside the
functions (it is the one heavy optional import of the package).

The numbers plotted are computed elsewhere (:mod:`icl_symbolic.studies.figures`,
:mod:`icl_symbolic.theory.asymptotic`, :mod:`icl_symbolic.model.moments`, the verify checks);
nothing here does mathematics.
"""

from __future__ import annotations

import io as _io
import textwrap
from dataclasses import dataclass

import numpy as np

__all__ = [
    "png_bytes",
    "paper_figure",
    "sweep_figure",
    "spectrum_figure",
    "theory_curve_figure",
    "finite_ell_figure",
    "check_sweep_figure",
    "seed_figure",
    "extrapolation_figure",
    "FitLine",
    "LadderAxes",
    "KERNEL_GAP_AXES",
    "kernel_curve_figure",
    "kernel_crossover_figure",
    "kernel_gap_figure",
    "slip_curve_figure",
]


def _new_figure(figsize, nrows=1, ncols=1):
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def png_bytes(fig, dpi: int = 110) -> bytes:
    """A figure as PNG bytes (for embedding in reports)."""
    buf = _io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


#: the legend entry of the tau = 1 asymptote (one wording for every plot)
PEAK_LABEL = "tau = 1: ridgeless error diverges (interpolation peak)"


#: the line style of :func:`_curve` (matplotlib's format, marker, colour, line width, marker size: None by size)
CURVE_STYLE = {"fmt": "-", "marker": "o", "color": None, "lw": 1.6, "ms": None}


def _curve(ax, x, y, label, style=None, break_at=None):
    """A computed curve: a line through the finite points (broken wherever a point is infinite and, with
    ``break_at``, between two points on either side of it: no segment crosses a divergence), a marker
    on every finite point (so a point between two infinite ones, or a single point, is still drawn),
    and a marked vertical asymptote at every infinite point.  ``style``: changes to :data:`CURVE_STYLE`."""
    st = {**CURVE_STYLE, **(style or {})}
    fmt, marker, color, lw, ms = (st[k] for k in ("fmt", "marker", "color", "lw", "ms"))
    x, y = np.asarray(x, float), np.asarray(y, float)
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    for xi in x[np.isinf(y)]:
        _asymptote(ax, xi)
    ms = ms if ms is not None else (4 if x.size <= 30 else 2.5)
    y = np.where(np.isfinite(y), y, np.nan)
    if break_at is not None:
        cut = np.nonzero((x[:-1] < break_at) & (x[1:] > break_at))[0]
        x, y = np.insert(x, cut + 1, np.nan), np.insert(y, cut + 1, np.nan)
    (ln,) = ax.plot(x, y, fmt, marker=marker, ms=ms, lw=lw, color=color, label=label)
    return ln


def _asymptote(ax, x=1.0):
    """The marked tau = 1 asymptote (labelled once per axes, drawn once per x)."""
    peaks = [line for line in ax.lines if getattr(line, "_icl_peak", False)]
    for line in peaks:
        if line.get_xdata()[0] == x:
            return line
    have = bool(peaks)
    line = ax.axvline(x, color="crimson", ls=":", lw=1.2, label=None if have else PEAK_LABEL)
    line._icl_peak = True
    return line


def _fixed_text(values: dict) -> str:
    """``rho = 0.1, alpha = 2, ...`` for the parameters a plot holds fixed (its title)."""
    return ", ".join(f"{k} = {v:g}" for k, v in values.items())


# ----------------------------------------------------------------------------
# the paper's figures (icl_symbolic.studies.figures) and simulate sweeps
# ----------------------------------------------------------------------------


def _series(rows, panel, kind):
    out = {}
    for r in rows:
        if r["panel"] == panel and r["kind"] == kind:
            out.setdefault(r["series"], []).append(r)
    return out


def paper_figure(fd):
    """Fig. 1, Fig. 2 or the a1 = 0 figure from a :class:`icl_symbolic.studies.figures.FigureData`.

    Theory curves as lines, simulation points with one-SE error bars over
    seeds, log-log axes, the caption under the panels.
    """
    import matplotlib
    import matplotlib.ticker

    panels = sorted({r["panel"] for r in fd.rows})
    fig, axes = _new_figure((6.2 * len(panels), 4.6), 1, len(panels))
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    xlabel = {"1": "tau = n/d^2", "2": "kappa = k/d", "a1zero": "tau = n/d^2"}[fd.name]
    for ax, panel in zip(axes[0], panels):
        for i, (name, rows) in enumerate(_series(fd.rows, panel, "theory").items()):
            style = (
                dict(color="green", ls="-", lw=1.2)
                if name.startswith("floor")
                else dict(color="grey", ls=":", lw=1.2)
                if name == "rho"
                else dict(color="0.5", ls=":", lw=1.2)
                if "caption" in name
                else dict(color=colors[i % len(colors)], ls="--", lw=1.2)
            )
            ax.plot([r["x"] for r in rows], [r["e"] for r in rows], label=name, **style)
        for i, (name, rows) in enumerate(_series(fd.rows, panel, "sim").items()):
            y = [r["e"] if r["e"] is not None else r["e_mc"] for r in rows]
            err = [r["e_se"] if r["e"] is not None else r["e_mc_se"] for r in rows]
            err = [0.0 if v is None else v for v in err]
            ax.errorbar(
                [r["x"] for r in rows], y, yerr=err, fmt="o", ms=4, capsize=2, color=colors[i % len(colors)], label=name
            )
        # the finite-d theory at the simulated points (order 1): open diamonds, the sims' colours, in order;
        # on a tau axis the line is broken at the interpolation peak (no value is drawn across it)
        for i, (name, rows) in enumerate(_series(fd.rows, panel, "theory_finite_d").items()):
            rows = sorted(rows, key=lambda r: r["x"])
            sides = [rows] if fd.name == "2" else [[r for r in rows if r["x"] < 1], [r for r in rows if r["x"] > 1]]
            for j, side in enumerate(s for s in sides if s):
                ax.plot(
                    [r["x"] for r in side],
                    [r["e"] for r in side],
                    marker="D",
                    ms=5,
                    mfc="none",
                    lw=0.7,
                    color=colors[i % len(colors)],
                    label=name if j == 0 else None,
                )
        ax.set_yscale("log")
        ax.set_xscale("log")
        lo, hi = ax.get_xlim()
        ticks = [t for t in (0.125, 0.25, 0.5, 1, 2, 4, 8, 16) if lo <= t <= hi]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(xlabel)
        ax.set_ylabel("ICL test error" + (" / a1^2" if fd.name == "1" and panel == "b" else ""))
        if fd.name == "1":
            ax.axvline(1.0, color="0.85", lw=0.8)
            ax.set_title(
                "(a) raw MSE" if panel == "a" else "(b) sin MSE / a1^2 vs normalised linear teacher", fontsize=10
            )
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.text(0.01, -0.01, "\n".join(textwrap.wrap(fd.caption, 75 * len(panels) + 30)), fontsize=7, va="top", ha="left")
    return fig


def sweep_figure(points: list, theory=None):
    """``simulate`` points (dicts as in its JSON) against the swept parameter, with the theory.

    The swept parameter is the one of tau, kappa, alpha that varies (tau if none
    does).  Simulation: ``e_mean`` +- ``e_se`` (or the Monte-Carlo values when the
    exact functional was skipped), a marker with its error bar at every point;
    theory: ``theory = (x, e)`` on its own dense grid (a line, broken at the peak)
    when given, and ``e_theory`` at the simulated points as open markers; a
    simulated point at the ridgeless peak gets the marked asymptote.
    """
    xname = next((k for k in ("tau", "kappa", "alpha") if len({p[k] for p in points}) > 1), "tau")
    fig, axes = _new_figure((6.0, 4.3))
    ax = axes[0][0]
    x = [p[xname] for p in points]
    use_mc = any(p["e_mean"] is None for p in points)
    y = [p["e_mc_mean"] if use_mc else p["e_mean"] for p in points]
    err = [(p["e_mc_se"] if use_mc else p["e_se"]) or 0.0 for p in points]
    ax.errorbar(
        x,
        y,
        yerr=err,
        fmt="o",
        ms=5,
        capsize=3,
        color="C0",
        zorder=3,
        label=f"simulation at d = {points[0]['d']} ({'Monte Carlo' if use_mc else 'exact test error'}, "
        "mean +- SE over seeds)",
    )
    if theory is not None:
        ridgeless = all(p["lam"] == 0 for p in points)
        _curve(
            ax,
            theory[0],
            theory[1],
            "theory, d -> infinity (Result 1 / Eq. (10))",
            {"marker": "", "color": "C1"},
            break_at=1.0 if xname == "tau" and ridgeless else None,
        )
        if xname == "tau" and ridgeless and min(theory[0]) < 1 < max(theory[0]):
            _asymptote(ax, 1.0)
    th = [(xi, p["e_theory"]) for xi, p in zip(x, points) if p.get("e_theory") is not None]
    if th:
        ax.plot(*zip(*th), "s", mfc="none", color="C1", ms=7, zorder=4, label="theory at the simulated points")
    fd = [(xi, p.get("e_theory_finite_d"), p.get("e_theory_finite_d_se") or 0.0) for xi, p in zip(x, points)]
    fd = [t for t in fd if t[1] is not None]
    if fd:
        ax.errorbar(
            [t[0] for t in fd],
            [t[1] for t in fd],
            yerr=[t[2] for t in fd],
            fmt="D",
            mfc="none",
            color="C2",
            ms=6,
            capsize=2,
            zorder=4,
            label=f"theory + O(1/d) terms at d = {points[0]['d']} (docs/finite-d.md)",
        )
    for xi, p in zip(x, points):
        if p.get("e_theory") is None and p.get("e_theory_reason"):
            _asymptote(ax, xi)
    if all(v > 0 for v in x):
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        ticks = sorted(set(x))
        if len(ticks) <= 12:  # the simulated values label the axis
            ax.set_xticks(ticks, [f"{v:g}" for v in ticks])
            ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yscale("log")
    ax.set_xlabel({"tau": "tau = n/d^2", "kappa": "kappa = k/d", "alpha": "alpha = ell/d"}[xname])
    ax.set_ylabel("ICL test error e")
    p0 = points[0]
    fixed = {
        k: p0[k] for k in ("rho", "lam", "alpha", "kappa", "tau") if k != xname and len({p[k] for p in points}) == 1
    }
    ax.set_title(f"f(g) = {p0['teacher']}, d = {p0['d']}: " + _fixed_text(fixed), fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def reproduce_figure(points: list, xname: str, theory_curve=None, title: str = ""):
    """``reproduce`` rows (dicts as in its JSON): theirs and ours with error bars (SE) against the
    parameter ``xname``, one colour per value of the other swept parameters (e.g. d), and the
    d -> infinity theory curve ``(xs, ys)`` when given.  Rows that disagree are ringed."""
    fig, axes = _new_figure((6, 4.2))
    ax = axes[0][0]
    others = [k for k in ("d", "alpha", "kappa", "tau", "rho", "lam") if k != xname and len({p[k] for p in points}) > 1]
    groups: dict = {}
    for p in points:
        groups.setdefault(tuple(p[k] for k in others), []).append(p)
    for i, (key, rows) in enumerate(groups.items()):
        rows = sorted(rows, key=lambda p: p[xname])
        lab = ", ".join(f"{k}={v:g}" for k, v in zip(others, key))
        color = f"C{i % 10}"
        x = np.array([p[xname] for p in rows], dtype=float)
        ax.errorbar(
            x,
            [p["theirs"] for p in rows],
            yerr=[p["theirs_se"] for p in rows],
            fmt="s",
            mfc="none",
            color=color,
            capsize=2,
            label=f"theirs {lab}".strip(),
        )
        ax.errorbar(
            x * 1.02,
            [p["ours"] for p in rows],
            yerr=[p["ours_se"] for p in rows],
            fmt="o",
            color=color,
            capsize=2,
            label=f"ours {lab}".strip(),
        )
        bad = [p for p in rows if not p["agrees"]]
        if bad:
            ax.plot([p[xname] for p in bad], [p["theirs"] for p in bad], "o", ms=14, mfc="none", color="red")
    if theory_curve is not None and len(theory_curve[0]):
        ax.plot(theory_curve[0], theory_curve[1], "k--", lw=1, label="theory (d -> infinity)")
    ax.set_xlabel(xname)
    ax.set_ylabel("error")
    ax.set_title(title, fontsize=8)
    ax.legend(fontsize=6)
    return fig


# ----------------------------------------------------------------------------
# coeffs, theory, moments
# ----------------------------------------------------------------------------


def spectrum_figure(results):
    """Hermite energy spectrum a_m^2 vs m (log y; exact zeros are omitted).

    ``results``: a list of ``(name, HermiteResult)``.
    """
    import matplotlib

    many = len(results) > 1
    fig, axes = _new_figure((9.5, 5.5) if many else (6.4, 4.2))
    ax = axes[0][0]
    colors = matplotlib.colormaps["tab20"].colors
    markers = "osD^v<>ph*"
    any_pos = False
    for i, (name, r) in enumerate(results):
        ms = [m for m, e2 in enumerate(r.spectrum) if e2 > 0]
        ys = [float(r.spectrum[m]) for m in ms]
        if ys:
            any_pos = True
            ax.plot(
                ms,
                ys,
                marker=markers[i % len(markers)],
                ms=4,
                color=colors[(2 * i) % 20 + (i // 10) % 2],
                label=f"{name} (rho_nl={r.rho_nonlinear.to_str(4)})",
            )
    if any_pos:
        ax.set_yscale("log")
    ax.set_xlabel("Hermite order m")
    ax.set_ylabel(r"$a_m^2$")
    rho = results[0][1].rho
    ax.set_title(f"Hermite energy spectrum, rho = {rho} (orthonormal $h_m$; zero coefficients omitted)", fontsize=10)
    if many:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return fig


def theory_curve_figure(cv, grids, swept, log=False):
    """e against the first swept parameter among tau, kappa, alpha, lam, rho; one line per
    combination of the others (at most 12).

    ``cv``: a :class:`icl_symbolic.theory.asymptotic.Curve`; ``grids``: name -> array of
    the grid of each parameter; ``swept``: the parameter names that may vary.
    Log y; log x for kappa, alpha, lam or with ``log``; the tau = 1
    interpolation peak marked (and the ridgeless line broken there); the floor
    rho_nonlinear drawn (green dashed) and, as in Fig. 2, the label noise rho
    (grey dotted).
    """
    order = ("tau", "kappa", "alpha", "lam", "rho")
    xname = next((k for k in order if grids[k].size > 1), "tau")
    others = [k for k in swept if k != xname and grids[k].size > 1]
    c = cv.columns
    fig, axes = _new_figure((6.4, 4.4))
    ax = axes[0][0]
    keys = sorted({tuple(c[k][i] for k in others) for i in range(len(cv))})
    for key in keys[:12]:
        mask = np.ones(len(cv), bool)
        for k, v in zip(others, key):
            mask &= c[k] == v
        label = "theory (d -> infinity)" + (
            " at " + ", ".join(f"{k} = {v:g}" for k, v in zip(others, key)) if others else ""
        )
        peak = xname == "tau" and np.all(c["lam"][mask] == 0)
        _curve(ax, c[xname][mask], c["e"][mask], label, break_at=1.0 if peak else None)
    floors = np.unique(c["rho_nonlinear"])
    if xname == "rho":
        ax.plot(c["rho"], c["rho_nonlinear"], "g--", lw=1, label="floor rho_nonlinear")
    else:
        for j, fl in enumerate(floors[:6]):
            ax.axhline(fl, color="green", ls="--", lw=1, label=f"floor rho_nonlinear = {fl:.6g}" if j < 3 else None)
    rhos = np.unique(c["rho"])
    if xname != "rho" and rhos.size == 1 and rhos[0] > 0 and not np.isclose(rhos[0], floors[0]):
        ax.axhline(rhos[0], color="grey", ls=":", lw=1, label=f"label noise rho = {rhos[0]:g}")
    ridgeless = np.any(c["lam"] == 0)
    if xname == "tau" and ridgeless and grids["tau"].min() < 1 < grids["tau"].max():
        _asymptote(ax, 1.0)
    ax.set_yscale("log")
    if log or xname in ("kappa", "alpha", "lam"):
        if np.all(c[xname] > 0):
            ax.set_xscale("log")
    ax.set_xlabel(xname)
    ax.set_ylabel("asymptotic ICL error e")
    fixed = {k: c[k][0] for k in ("rho", "alpha", "kappa", "lam", "tau") if k != xname and grids[k].size == 1}
    ax.set_title(
        f"f(g) = {cv.moments.label}, "
        + ("Result 1, Eq. (9)" if cv.branch == "result1" else "a1 = 0 branch, Eq. (10)")
        + (f"\n{_fixed_text(fixed)}" if fixed else ""),
        fontsize=9,
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def finite_ell_figure(gaps, ell_grid, title):
    """|exact - leading order| of Lemma 1's coefficients against ell (log-log), with 1/ell.

    ``gaps``: coefficient name -> rows ``(ell, exact, leading)`` as returned by
    :func:`icl_symbolic.model.moments.finite_ell_gaps`.
    """
    fig, axes = _new_figure((6.4, 4.4))
    ax = axes[0][0]
    for name, rows in gaps.items():
        ell = np.array([r[0] for r in rows], dtype=float)
        gap = np.array([abs(float(r[1]) - float(r[2])) for r in rows])
        if np.all(gap <= 1e-14 * np.maximum(1, np.abs([float(r[1]) for r in rows]))):
            continue
        ax.loglog(ell, np.maximum(gap, 1e-16), "o-", ms=3, label=name)
    ax.loglog(ell_grid, 1.0 / np.array(ell_grid, dtype=float), "k:", lw=1, label="1/ell")
    ax.set_xlabel("context length ell")
    ax.set_ylabel("|exact - leading order|")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------
# figures embedded in verify reports
# ----------------------------------------------------------------------------


def check_sweep_figure(title, sweep, xs, ys, lab_x, lab_y):
    """Two theory sides of a swept claim against the swept argument (log y); the legend says which side
    is computed and which is claimed, each with its expression."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator

    key = next(iter(sweep))
    grid = sweep[key]
    fig, axes = _new_figure((6.0, 3.8))
    ax = axes[0][0]
    ax.plot(grid, xs, "o-", label=f"computed by the package: {lab_x}")
    ax.plot(grid, ys, "s--", mfc="none", label=f"as claimed: {lab_y}")
    if min(grid) > 0 and max(grid) / min(grid) > 10:
        ax.set_xscale("log")
    ax.set_xlabel(key)
    ax.set_yscale("log")
    axs = [ax.yaxis] + ([ax.xaxis] if ax.get_xscale() == "log" else [])
    for axis in axs:
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FormatStrFormatter("%g"))
        axis.set_minor_formatter(FormatStrFormatter(""))
    ax.set_ylabel("ICL error (d -> infinity theory)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    return fig


def seed_figure(title, seeds, mine, other, lab_mine, lab_other):
    """Per-seed simulated errors of a claim against the other side."""
    fig, axes = _new_figure((6.0, 3.4))
    ax = axes[0][0]
    x = list(range(len(seeds)))
    ax.plot(x, mine, "o", label=lab_mine)
    ax.plot(x, other, "s", mfc="none", label=lab_other)
    ax.set_xticks(x, [str(s) for s in seeds], fontsize=7)
    ax.set_xlabel("seed")
    ax.set_ylabel("ICL test error")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    return fig


@dataclass(frozen=True)
class FitLine:
    """The fit drawn by :func:`extrapolation_figure`: its coefficients in 1/x (limit, c1[, c2]), the
    limit's standard error (None: not drawn) and the model's name for the legend (None: limit + c/x)."""

    coef: tuple
    e_inf_se: float | None = None
    model: str | None = None


@dataclass(frozen=True)
class LadderAxes:
    """The names of an extrapolation figure: the ladder variable ``xname``, the y label, the limit's
    name and the reference's label.  The defaults: the ICL error against 1/d and the d -> infinity
    theory; the kernel learner's gap ladder: :data:`KERNEL_GAP_AXES`."""

    xname: str = "d"
    ylabel: str = "ICL test error"
    limit_name: str = "e_inf"
    theory_label: str = "theory (d -> infinity)"


#: the kernel learner's gap ladder (against 1/D, the reference 0)
KERNEL_GAP_AXES = LadderAxes("D", "gap e_sim - e_pred", "gap_inf", "0 (the prediction is exact)")


def extrapolation_figure(title, ds, means, ses, fit: FitLine, theory_value, n_seeds, axes: LadderAxes | None = None):
    """Simulated values (``means`` +- ``ses``) against 1/``xname`` with the ``fit`` (:class:`FitLine`) and
    the limit expected (``theory_value``); ``axes``: the names (:class:`LadderAxes`, None: its defaults)."""
    names = axes or LadderAxes()
    xname, ylabel, limit_name, theory_label = names.xname, names.ylabel, names.limit_name, names.theory_label
    coef, e_inf_se, model = fit.coef, fit.e_inf_se, fit.model
    fig, axes = _new_figure((5.5, 3.6))
    ax = axes[0][0]
    inv = 1.0 / np.asarray(ds, float)
    ax.errorbar(inv, means, yerr=ses, fmt="o", label=f"simulation ({n_seeds} seeds per {xname}, +- 1 SE)")
    grid = np.linspace(0, inv.max() * 1.05, 80)
    ax.plot(
        grid, sum(c * grid**k for k, c in enumerate(coef)), "-", label=f"fit {model or f'{limit_name} + c/{xname}'}"
    )
    if e_inf_se is not None:
        ax.errorbar(
            [0], [coef[0]], yerr=[e_inf_se], fmt="s", mfc="none", color="C1", capsize=3, label=f"{limit_name} +- 1 SE"
        )
    ax.plot([0], [theory_value], "k*", ms=10, label=theory_label)
    ax.set_xlabel(f"1/{xname}")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=8)
    ax.legend(fontsize=7)
    return fig


# ----------------------------------------------------------------------------
# the kernel learner (icl_symbolic.kernel_learner.theory)
# ----------------------------------------------------------------------------


def kernel_curve_figure(kc, grids):
    """Predicted error of the kernel learner and of plain attention (same ell, k, n) against the first
    swept ratio among alpha, tau, kappa, lam, with both floors (rho_nonlinear, rho_eff).

    ``kc``: a :class:`icl_symbolic.kernel_learner.theory.KernelCurve`; ``grids``: name -> grid array.
    Log y; log x for alpha, kappa, lam.
    """

    xname = next((k for k in ("alpha", "tau", "kappa", "lam") if grids[k].size > 1), "alpha")
    others = [k for k in ("alpha", "kappa", "lam", "tau") if k != xname and grids[k].size > 1]
    c = kc.columns
    ks = kc.spectrum
    fig, axes = _new_figure((6.4, 4.4))
    ax = axes[0][0]
    keys = sorted({tuple(c[k][i] for k in others) for i in range(len(kc))})
    for j, key in enumerate(keys[:6]):
        mask = np.ones(len(kc), bool)
        for k, v in zip(others, key):
            mask &= c[k] == v
        tag = ", ".join(f"{k}={v:g}" for k, v in zip(others, key))
        x = c[xname][mask]
        brk = 1.0 if xname == "tau" and np.all(c["lam"][mask] == 0) else None
        _curve(
            ax,
            x,
            c["e"][mask],
            f"kernel learner, features {ks.features}" + (f" ({tag})" if tag else ""),
            {"color": f"C{j}", "lw": 1.8},
            break_at=brk,
        )
        if not np.isnan(c["e_plain"][mask]).any():
            _curve(
                ax,
                x,
                c["e_plain"][mask],
                "plain attention, same ell, k, n" + (f" ({tag})" if tag else ""),
                {"fmt": "--", "marker": "s", "color": f"C{j}", "lw": 1.2},
            )
    bm = ks.moments
    ax.axhline(
        ks.rho + bm.E_f2_limit - bm.a1_float**2,
        color="grey",
        ls="--",
        lw=1,
        label="plain attention's floor rho_nonlinear",
    )
    ax.axhline(ks.rho_eff, color="green", ls=":", lw=1.2, label="kernel learner's floor rho_eff")
    ax.set_yscale("log")
    if xname in ("alpha", "kappa", "lam") and np.all(c[xname] > 0):
        ax.set_xscale("log")
    ax.set_xlabel(
        f"{xname} ({'ell/D' if xname == 'alpha' else 'k/D' if xname == 'kappa' else 'n/D^2' if xname == 'tau' else 'lam'})"
    )
    ax.set_ylabel("predicted ICL error")
    fixed = {k: c[k][0] for k in ("alpha", "kappa", "tau", "lam") if k != xname and grids[k].size == 1}
    ax.set_title(
        f"f(g) = {bm.label}, features {ks.features}"
        + (f", d = {ks.d}, D = {ks.D}" if ks.d else "")
        + f"\nrho = {ks.rho:g}, "
        + _fixed_text(fixed)
        + " (the learner's ratios)",
        fontsize=9,
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def kernel_crossover_figure(kc, kernel_sim, plain_sim, floors, title):
    """Kernel learner vs plain attention against alpha = ell/D on the same teacher and the same ell, k, n.

    ``kc``: a :class:`icl_symbolic.kernel_learner.theory.KernelCurve` over alpha (lines: both predictions);
    ``kernel_sim`` / ``plain_sim``: lists of (alpha, e, se) simulation points (SE over seeds);
    ``floors``: list of (value, label, style) horizontal lines.
    """
    fig, axes = _new_figure((6.6, 4.6))
    ax = axes[0][0]
    c = kc.columns
    order = np.argsort(c["alpha"])
    ax.plot(
        c["alpha"][order],
        c["e"][order],
        "-",
        color="C0",
        lw=1.6,
        label=f"kernel learner {kc.spectrum.features}: prediction",
    )
    ax.plot(
        c["alpha"][order],
        c["e_plain"][order],
        "-",
        color="C1",
        lw=1.6,
        label="plain attention: Result 1 (d -> infinity)",
    )
    for pts, color, label in (
        (kernel_sim, "C0", "kernel learner: simulation"),
        (plain_sim, "C1", "plain attention: simulation"),
    ):
        if pts:
            x, y, e = zip(*pts)
            ax.errorbar(x, y, yerr=e, fmt="o", color=color, capsize=2, ms=4, label=label + " (SE over seeds)")
    for value, label, style in floors:
        ax.axhline(value, color=style[0], ls=style[1], lw=1, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("alpha = ell/D (context length per feature)")
    ax.set_ylabel("ICL test error")
    ax.set_title(title, fontsize=8)
    ax.legend(fontsize=6, loc="lower left")
    fig.tight_layout()
    return fig


def kernel_gap_figure(rows, fits, title):
    """Absolute gap e_sim - e_prediction of the kernel learner and its controls against the feature
    dimension D (left: log-log, SE over seeds, with each variant's fitted power law c D^-p from
    ``fits[variant]["power_law"]``; right: D x gap on a linear scale, where a 1/D decay is flat and
    every point is drawn, non-positive ones too).  The legend gives each variant's seeds per point."""
    fig, axes = _new_figure((10.5, 4.4), ncols=2)
    ax, bx = axes[0]
    styles = {
        "real": ("C0", "kernel learner (hermite:2)"),
        "features": ("C2", "control: Gaussian inputs, true tasks"),
        "gaussian": ("C3", "control: Gaussian inputs and tasks"),
    }
    for variant, (color, label) in styles.items():
        pts = sorted((r["D"], r["gap_abs"], r["e_se"], len(r["seeds"])) for r in rows if r["variant"] == variant)
        if not pts:
            continue
        D, g, se, ns = map(np.array, zip(*pts))
        seeds = f"{ns.min()}" if ns.min() == ns.max() else f"{ns.min()}-{ns.max()}"
        label = f"{label}, {seeds} seeds"
        ok = g > 0
        ax.errorbar(D[ok], g[ok], yerr=se[ok], fmt="o", color=color, capsize=2, ms=4, label=label)
        bx.errorbar(D, D * g, yerr=D * se, fmt="o-", color=color, capsize=2, ms=4, lw=0.8, label=label)
        pl = (fits or {}).get(variant) or {}
        if pl.get("power_law"):
            c, p = pl["power_law"]["c"], pl["power_law"]["p"]
            dd = np.geomspace(D.min(), D.max(), 50)
            ax.plot(
                dd,
                c * dd ** (-p),
                "--",
                color=color,
                lw=1,
                label=f"fit c D^-p: p = {p:.2f} +- {pl['power_law']['p_se']:.2f}",
            )
    import matplotlib.ticker

    ax.set_yscale("log")
    bx.axhline(0.0, color="grey", lw=0.6)
    ticks = sorted({r["D"] for r in rows if r["variant"] in styles})
    for a in (ax, bx):
        a.set_xscale("log")
        a.set_xticks(ticks)
        a.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        a.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        a.set_xlabel("D = d + d(d+1)/2 (feature dimension; d = 4, 6, 8, ...)")
    ax.set_ylabel("e_sim - e_prediction")
    bx.set_ylabel("D x (e_sim - e_prediction)   (flat: gap = c/D)")
    fig.suptitle(title, fontsize=9)
    ax.legend(fontsize=6.5)
    bx.legend(fontsize=6.5)
    fig.tight_layout()
    return fig


def slip_curve_figure(rep, grid=None, title: str = ""):
    """A curve diagnosis (:class:`icl_symbolic.diagnosis.curves.CurveReport`): the data with their
    standard errors, the theory without a slip and the best explanation.  ``grid``: optional
    ``(xs, theory_values, best_values)`` on a dense axis grid (else the data's points are joined)."""
    import matplotlib.ticker

    fig, axes = _new_figure((6.4, 4.4))
    ax = axes[0][0]
    d = rep.data
    order = np.argsort(d.x)
    b = rep.best
    if grid is not None:
        gx, gth, gbest = grid
    else:
        gx, gth, gbest = d.x[order], rep.theory.pred[order], b.pred[order]
    ax.errorbar(d.x[order], d.e[order], yerr=d.se[order], fmt="o", ms=4, color="k", label="data", zorder=3)
    ax.plot(gx, gth, "-", color="tab:green", label="theory (no slip)")
    if b.model is not None:
        ps = ", ".join(f"{k}={v:.3g}" for k, v in b.params.items())
        ax.plot(gx, gbest, "--", color="tab:red", label=f"best: {b.name}{f' ({ps})' if ps else ''}, BIC {b.score:.3g}")
    ax.set_xlabel(d.axis)
    ax.set_ylabel("e (ICL error)")
    pts = np.concatenate([d.e, rep.theory.pred, b.pred])
    if np.all(pts > 0):
        ax.set_yscale("log")
        ax.set_ylim(pts.min() / 1.5, pts.max() * 2.0)  # the interpolation peak would swamp the data
    if d.axis in ("kappa", "alpha") or d.x.max() / d.x.min() > 20 or d.axis == "tau":
        ax.set_xscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.set_title(title or f"diagnose: {rep.verdict()}", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def dual_figure(label: str, points: list):
    """The dual kernel K_f and its derivative map against the correlation rho (``dual --plot``);
    ``points``: the rows of ``dual --json`` (``rho``, ``nngp``, ``derivative`` decimal strings)."""
    fig, axes = _new_figure((6.4, 4.2))
    ax = axes[0][0]
    for key, name, fmt in (("nngp", "E[f(u) f(v)]", "-"), ("derivative", "E[f'(u) f'(v)]", "--")):
        xs = [float(p["rho_decimal"]) for p in points if p.get(key) not in (None, "uncertified")]
        ys = [float(p[key]) for p in points if p.get(key) not in (None, "uncertified")]
        if xs:
            ax.plot(xs, ys, fmt, marker="o", ms=3, label=name)
    ax.set_xlabel("correlation rho")
    ax.set_title(f"dual kernel of f = {label} (certified values)", fontsize=10)
    ax.legend(fontsize=8)
    return fig
