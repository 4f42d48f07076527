"""Every computed point is drawn: the plots are read back as matplotlib artists (not pixels).

A point counts as drawn when a Line2D or a collection of the axes holds it; an
infinite point (the ridgeless tau = 1) counts when the marked asymptote is at
its x.  Also: the theory on its own dense grid, legends in words, the fixed
parameters in the title.
"""

import json
import math

import numpy as np
import pytest

from icl_symbolic.cli import main
from icl_symbolic.output import plotting


def _drawn(fig):
    """All (x, y) pairs held by the lines and collections of every axes of ``fig``."""
    pts = []
    for ax in fig.axes:
        for line in ax.lines:
            xy = np.asarray(line.get_xydata(), float)
            pts += [tuple(p) for p in xy if np.all(np.isfinite(p)) and line.get_marker() not in (None, "None", "")]
        for coll in ax.collections:
            pts += [tuple(p) for p in np.asarray(coll.get_offsets(), float)]
    return pts


def _asymptotes(fig):
    return [line.get_xdata()[0] for ax in fig.axes for line in ax.lines if getattr(line, "_icl_peak", False)]


def _missing(fig, points):
    """The computed (x, y) points that the figure does not draw (inf: no asymptote at x)."""
    drawn, peaks = _drawn(fig), _asymptotes(fig)
    out = []
    for x, y in points:
        if y is None or math.isinf(y):
            if not any(np.isclose(x, p) for p in peaks):
                out.append((x, y))
        elif not any(np.isclose(x, dx, rtol=1e-9) and np.isclose(y, dy, rtol=1e-9) for dx, dy in drawn):
            out.append((x, y))
    return out


@pytest.fixture
def figures(monkeypatch):
    """The figures the commands save (captured on their way to the file)."""
    got = []
    for name in ("theory", "kernel", "simulate"):
        mod = __import__(f"icl_symbolic.cli.{name}", fromlist=["save_figure"])
        real = mod.save_figure
        monkeypatch.setattr(mod, "save_figure", lambda fig, path, real=real: (got.append(fig), real(fig, path)))
    return got


def test_the_check_itself_finds_a_point_that_is_not_drawn():
    fig, axes = plotting._new_figure((3, 3))
    ax = axes[0][0]
    ax.plot([0.5, 2.0], [1.0, 0.5], "-")  # a line without markers: not "drawn points"
    ax.plot([2.0], [0.5], "o")
    assert _missing(fig, [(0.5, 1.0), (2.0, 0.5), (1.0, math.inf)]) == [(0.5, 1.0), (1.0, math.inf)]


@pytest.mark.parametrize("tau", ["0.5,2,4", "0.5:1.5:3", "2", "0.1:4:80"])
def test_theory_plot_draws_every_computed_point(tau, figures, tmp_path, capsys):
    assert main(["theory", "sin(g)", "--tau", tau, "--json", "--plot", str(tmp_path / "t.png")]) == 0
    pts = json.loads(capsys.readouterr().out)["points"]
    (fig,) = figures
    assert _missing(fig, [(p["tau"], p["e"] if p["e"] is not None else math.inf) for p in pts]) == []
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("theory (d -> infinity)" in t for t in legend) and not any(
        "(" in t and "=" in t.split("(")[0] and "e_" in t for t in legend
    )
    assert "rho = 0.1" in ax.get_title() and "alpha = 2" in ax.get_title()
    if tau == "0.5:1.5:3":
        assert _asymptotes(fig) == [1.0]


def test_kernel_plot_at_its_defaults_draws_the_point(figures, tmp_path, capsys):
    assert main(["kernel", "g + (g^2-1)/sqrt(2)", "--json", "--plot", str(tmp_path / "k.png")]) == 0
    (p,) = json.loads(capsys.readouterr().out)["points"]
    (fig,) = figures
    assert _missing(fig, [(p["alpha"], p["e"]), (p["alpha"], p["e_plain"])]) == []
    assert "tau = 4" in fig.axes[0].get_title()


def test_kernel_plot_through_tau_one_marks_the_asymptote(figures, tmp_path, capsys):
    assert (
        main(["kernel", "g + (g^2-1)/sqrt(2)", "--tau", "0.5:1.5:3", "--json", "--plot", str(tmp_path / "k.png")]) == 0
    )
    pts = json.loads(capsys.readouterr().out)["points"]
    (fig,) = figures
    assert _missing(fig, [(p["tau"], p["e"] if p["e"] is not None else math.inf) for p in pts]) == []
    assert 1.0 in _asymptotes(fig)


@pytest.mark.parametrize("tau", ["2", "0.5,2,4"])
def test_simulate_plot_draws_every_point_and_the_theory_on_its_own_grid(tau, figures, tmp_path, capsys):
    assert (
        main(
            [
                "simulate",
                "g",
                "--d",
                "4",
                "--tau",
                tau,
                "--seeds",
                "2",
                "--n-test",
                "100",
                "--quiet",
                "--json",
                "--plot",
                str(tmp_path / "s.png"),
            ]
        )
        == 0
    )
    pts = json.loads(capsys.readouterr().out)["points"]
    (fig,) = figures
    assert _missing(fig, [(p["tau"], p["e_mean"]) for p in pts]) == []  # the simulation
    assert _missing(fig, [(p["tau"], p["e_theory"]) for p in pts]) == []  # the theory at those points
    ax = fig.axes[0]
    (line,) = [ln for ln in ax.lines if ln.get_label().startswith("theory, d -> infinity")]
    x = np.asarray(line.get_xdata(), float)
    x = x[np.isfinite(x)]
    taus = [p["tau"] for p in pts]
    assert x.size >= 50 and x.min() < min(taus) and x.max() > max(taus)  # a dense grid of its own
    assert "d = 4" in ax.get_title() and "rho = 0.1" in ax.get_title()
    if len(pts) > 1:
        assert 1.0 in _asymptotes(fig)  # the sweep's theory crosses the ridgeless peak
