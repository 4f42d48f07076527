"""In-process tests of ``icl-symbolic simulate`` and ``icl-symbolic figure`` (thin CLI layer)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from icl_symbolic.cli import main
from icl_symbolic.theory.asymptotic import Ratios

KEYS = ("e_mean", "e_se", "e_mc_mean", "e_mc_se", "e_theory", "seconds")


@pytest.mark.sim
def test_simulate_json_has_the_documented_keys(capsys):
    rc = main(
        ["simulate", "tanh(g)", "--d", "8", "--tau", "2", "--seeds", "2", "--n-test", "2000", "--json", "--quiet"]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "simulate" and len(doc["points"]) == 1  # one point: still a list
    obj = doc["points"][0]
    for key in KEYS + ("d", "alpha", "kappa", "tau", "rho", "lam", "C_train", "C_test", "seeds", "teacher"):
        assert key in obj, key
    assert obj["d"] == 8 and obj["n"] == 128 and obj["seeds"] == [0, 1]
    assert obj["e_mean"] > 0 and obj["e_se"] > 0 and obj["e_mc_se"] > 0
    # e_theory is the library's Result 1 value, not something the CLI computes itself
    from icl_symbolic.theory.asymptotic import e_nonlinear

    assert obj["e_theory"] == pytest.approx(
        float(e_nonlinear("tanh(g)", Ratios(rho=0.1, alpha=2, kappa=2, tau=2))), rel=1e-12
    )
    # the same seeds reproduce the same numbers
    main(["simulate", "tanh(g)", "--d", "8", "--tau", "2", "--seeds", "2", "--n-test", "2000", "--json", "--quiet"])
    again = json.loads(capsys.readouterr().out)["points"][0]
    assert again["e_mean"] == obj["e_mean"] and again["e_mc_mean"] == obj["e_mc_mean"]


@pytest.mark.sim
def test_simulate_sweep_and_out_file(tmp_path, capsys):
    out = tmp_path / "sim.json"
    rc = main(
        [
            "simulate",
            "g",
            "--d",
            "6",
            "--tau",
            "0.5,3",
            "--seeds",
            "2",
            "--n-test",
            "500",
            "--json",
            "--no-exact",
            "--json-out",
            str(out),
            "--plot",
            str(tmp_path / "sim.png"),
        ]
    )
    assert rc == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    printed = doc["points"]
    assert [p["tau"] for p in printed] == [0.5, 3.0]
    assert printed[0]["e_mean"] is None and printed[0]["e_mc_mean"] > 0
    assert json.loads(out.read_text()) == doc
    assert (tmp_path / "sim.png").read_bytes()[:4] == b"\x89PNG"
    assert "seed 0" in cap.err  # progress on stderr


@pytest.mark.sim
def test_simulate_human_output(capsys):
    assert main(["simulate", "sin(g)", "--d", "6", "--seeds", "2", "--n-test", "500", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "e_theory" in out and "seed 1" in out


@pytest.mark.parametrize(
    "argv,match",
    [
        (["simulate", "g", "--tau", "0"], "tau"),
        (["simulate", "g", "--tau", "-1"], "tau"),
        (["simulate", "g", "--d", "1"], "--d"),
        (["simulate", "g", "--d", "2.5"], "--d"),
        (["simulate", "g", "--d", "900", "--tau", "4"], "GiB"),
        (["simulate", "__import__('os').system('true')"], "unexpected"),
        (["simulate", "g", "--C-train", "nosuch"], "covariance"),
        (["figure", "7"], "unknown figure"),
        (["figure", "fig1"], "unknown figure"),
        (["figure", "1", "--d", "2000"], "GiB"),
        (["figure", "2", "--seeds", "0"], "--seeds"),
    ],
)
def test_bad_input_one_line_exit_2(argv, match, capsys, tmp_path):
    rc = main(argv + (["--out", str(tmp_path / "x")] if argv[0] == "figure" else []))
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("icl-symbolic: error:") and match in err
    assert "Traceback" not in err
    assert not (tmp_path / "x").exists()


@pytest.mark.sim
def test_figure_command_writes_three_files(tmp_path, capsys, monkeypatch):
    """The figure command end to end with tiny settings (monkeypatched defaults: d = 6)."""
    import icl_symbolic.studies.figures as figs

    orig = figs.figure2_data
    monkeypatch.setattr(
        figs,
        "figure2_data",
        lambda run, **kw: orig(dataclasses.replace(run, n_test=500), **{**kw, "kappas": [0.5, 2.0], "alphas": [4.0]}),
    )
    rc = main(["figure", "2", "--quick", "--d", "6", "--seeds", "2", "--out", str(tmp_path)])
    assert rc == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["figure2.csv", "figure2.json", "figure2.png"]
    meta = json.loads((tmp_path / "figure2.json").read_text())
    assert meta["seeds"] == [0, 1] and meta["parameters"]["d"] == 6
    cap = capsys.readouterr()
    for name in names:  # each file named on stderr once it is in place
        assert f"icl-symbolic: wrote {tmp_path / name}\n" in cap.err
    assert "Fig. 2 (p. 4)" in cap.out


@pytest.mark.heavy
def test_subprocess_smoke():
    r = subprocess.run(
        [sys.executable, "-m", "icl_symbolic", "simulate", "g", "--tau", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and r.stderr.strip().startswith("icl-symbolic: error:")
