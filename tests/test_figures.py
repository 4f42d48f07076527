"""Figures: every plotted number is in the CSV and reproducible; metadata; no partial files."""

from __future__ import annotations

import csv
import json
import math

import pytest

from icl_symbolic.core.errors import ICLError
from icl_symbolic.simulation.simulator import simulate_many
from icl_symbolic.studies import figures
from icl_symbolic.theory.asymptotic import Ratios, TaskCovariances

TINY1 = dict(d=6, taus=[0.5, 3.0], n_test=500)


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.sim
def test_figure1_files_csv_and_metadata(tmp_path):
    meta = figures.make_figure("1", tmp_path, quick=True, seeds=(0, 1), **TINY1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure1.csv", "figure1.json", "figure1.png"]
    assert (tmp_path / "figure1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    disk = json.loads((tmp_path / "figure1.json").read_text())
    assert disk["seeds"] == [0, 1] and disk["parameters"]["d"] == 6 and disk["figure"] == "1"
    for key in ("numpy", "scipy", "sympy", "mpmath", "matplotlib", "icl_symbolic", "python"):
        assert key in disk["versions"]
    assert disk["seconds"] > 0
    # the legend value and the Sec. 3 text's value, both stated
    assert "0.447029" in disk["caption"] and "1.447029" in disk["caption"]
    assert disk["best_match"] in disk["match_diagnostics"]
    rows = _rows(tmp_path / "figure1.csv")
    sims = [r for r in rows if r["kind"] == "sim"]
    # 3 series x 2 taus in panel (a), plus sin/a1^2 and the normalised linear in panel (b)
    assert len([r for r in sims if r["panel"] == "a"]) == 6 and len([r for r in sims if r["panel"] == "b"]) == 4
    # panel (b) sin points are exactly the panel (a) sin points divided by a1^2 = e^-1
    a = {float(r["tau"]): float(r["e"]) for r in sims if r["panel"] == "a" and r["teacher"] == "sin(g)"}
    b = {float(r["tau"]): float(r["e"]) for r in sims if r["panel"] == "b" and r["teacher"] == "sin(g)"}
    for tau in a:
        assert b[tau] == pytest.approx(a[tau] / math.exp(-1), rel=1e-12)
    # a plotted simulation number is reproducible from the library with the recorded parameters
    r0 = next(r for r in sims if r["panel"] == "a" and r["teacher"] == "g" and float(r["rho"]) == 0.1)
    res = simulate_many([dict(f="g", d=6, alpha=2, kappa=2, tau=float(r0["tau"]), rho=0.1, seeds=(0, 1), n_test=500)])[
        0
    ]
    assert float(r0["e"]) == pytest.approx(float(res.e), rel=1e-12)
    assert float(r0["e_mc"]) == pytest.approx(float(res.e_mc), rel=1e-12)
    # theory rows are the theory module's numbers
    from icl_symbolic.theory.asymptotic import e_linear

    th = [r for r in rows if r["kind"] == "theory" and r["series"] == "theory g, rho=0.1"]
    assert len(th) > 50
    for r in th[::25]:
        assert float(r["e"]) == pytest.approx(
            e_linear(
                Ratios(rho=0.1, alpha=2, kappa=2, tau=float(r["tau"])), TaskCovariances(C_train="identity", C_test=None)
            ),
            rel=1e-10,
        )
    assert meta["files"]["csv"].endswith("figure1.csv")


@pytest.mark.sim
def test_figure2_floor_and_rho_lines(tmp_path):
    figures.make_figure("2", tmp_path, quick=True, seeds=(0,), d=6, kappas=[0.5, 2.0], alphas=[4.0], n_test=500)
    rows = _rows(tmp_path / "figure2.csv")
    floor = [float(r["e"]) for r in rows if r["series"] == "floor rho_nonlinear"]
    assert floor and all(abs(v - 0.127415326) < 1e-8 for v in floor)  # rho + E tanh^2 - a1^2
    assert all(float(r["e"]) == 0.1 for r in rows if r["series"] == "rho")
    sims = [r for r in rows if r["kind"] == "sim"]
    assert [float(r["kappa"]) for r in sims] == [0.5, 2.0] and all(float(r["tau"]) == 2.0 for r in sims)


@pytest.mark.sim
def test_figure_a1zero_theory_is_eq10(tmp_path):
    figures.make_figure("a1zero", tmp_path, quick=True, seeds=(0,), d=6, taus=[0.5, 2.0], ak=[(2.0, 2.0)], n_test=500)
    rows = _rows(tmp_path / "figure_a1zero.csv")
    for r in rows:
        if r["series"] == "Eq. (10)":
            tau = float(r["tau"])
            expect = 1.1 / (1 - tau) if tau < 1 else 1.1 * tau / (tau - 1)
            assert float(r["e"]) == pytest.approx(expect, rel=1e-12)


@pytest.mark.sim
def test_interrupted_figure_leaves_no_files(tmp_path, monkeypatch):
    """Ctrl-C during the simulations, or a failure while writing: no output file at all."""
    from icl_symbolic.simulation import simulator as sim

    calls = {"n": 0}
    real = sim._run_seed

    def interrupt(task):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(sim, "_run_seed", interrupt)
    with pytest.raises(KeyboardInterrupt):
        figures.make_figure("1", tmp_path / "a", quick=True, seeds=(0,), **TINY1)
    assert calls["n"] == 2
    assert not (tmp_path / "a").exists() or not any((tmp_path / "a").iterdir())
    monkeypatch.setattr(sim, "_run_seed", real)

    import matplotlib.figure

    def broken(self, *a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", broken)
    with pytest.raises(OSError):
        figures.make_figure("1", tmp_path / "b", quick=True, seeds=(0,), **TINY1)
    assert not any((tmp_path / "b").iterdir())  # the CSV written before the PNG was removed too


def test_unknown_figure():
    with pytest.raises(ICLError, match="unknown figure"):
        figures.make_figure("3", "/nonexistent")


@pytest.mark.sim
def test_figure_order1_draws_the_finite_d_theory_at_each_simulated_point(tmp_path):
    """--order 1: one theory_finite_d row per simulated point, each the finite-d module's number at the
    figure's d (the a1^2 scaling of Fig. 1's panel (b) included), the caption says what they are."""
    from icl_symbolic.theory.finite_d import e_nonlinear_finite

    meta = figures.make_figure("1", tmp_path, quick=True, seeds=(0,), d=8, taus=[0.5], n_test=200, order=1)
    rows = _rows(tmp_path / "figure1.csv")
    sims = [r for r in rows if r["kind"] == "sim"]
    fdr = [r for r in rows if r["kind"] == "theory_finite_d"]
    assert len(fdr) == len(sims) == 5 and meta["order"] == 1
    for r in fdr:
        want = e_nonlinear_finite(r["teacher"], float(r["rho"]), 2.0, 2.0, float(r["tau"]), d=8)
        scale = math.exp(-1) if r["panel"] == "b" and r["teacher"] == "sin(g)" else 1.0
        assert float(r["e"]) == pytest.approx(want.corrected / scale, rel=1e-12)
        assert float(r["e"]) != pytest.approx(want.limit / scale, rel=1e-3)  # the terms move it
    assert "O(1/d) terms" in meta["caption"]
    no = figures.make_figure(
        "a1zero", tmp_path / "o0", quick=True, seeds=(0,), d=6, taus=[0.5], ak=[(2.0, 2.0)], n_test=200
    )
    assert not [r for r in no["points"] if r["kind"] == "theory_finite_d"] and "O(1/d)" not in no["caption"]


def test_figure_order1_refuses_sphere_tasks_before_any_work(tmp_path, capsys):
    from icl_symbolic.cli import main

    out = tmp_path / "f"
    assert main(["figure", "a1zero", "--quick", "--order", "1", "--tasks", "sphere", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Gaussian tasks only" in err and len(err.strip().splitlines()) == 1
    assert not out.exists() or not any(out.iterdir())
