"""Tests of ``icl-symbolic kernel`` (in-process)."""

import csv
import json

import numpy as np
import pytest

from icl_symbolic.cli import main
from icl_symbolic.kernel_learner import theory as kernel
from icl_symbolic.theory import asymptotic as theory
from icl_symbolic.theory.asymptotic import Ratios

EX = "g + (g^2-1)/sqrt(2)"


def test_documented_example_prints_modes_spectrum_and_prediction(capsys):
    rc = main(["kernel", EX, "--features", "hermite:2", "--rho", "0.1", "--alpha", "16", "--kappa", "4", "--tau", "4"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "signal (degree-1 features)" in text and "signal (degree-2 features)" in text
    assert "noise (degree 3 > K = 2)" in text and "trace direction" in text
    # d = 16 by default: rho_eff = rho + a2^2/d (the Gaussian-task offset of the constant mode)
    assert "rho_eff = rho + E[f^2] - captured = 0.1625" in text


def test_json_csv_plot_files(tmp_path, capsys):
    j, c, p = tmp_path / "k.json", tmp_path / "k.csv", tmp_path / "k.png"
    rc = main(
        [
            "kernel",
            EX,
            "--d",
            "8",
            "--alpha",
            "0.1:100:7",
            "--log",
            "--tau",
            "4",
            "--kappa",
            "2",
            "--json-out",
            str(j),
            "--csv",
            str(c),
            "--plot",
            str(p),
            "--json",
            "--quiet",
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == json.loads(j.read_text())
    assert doc["D"] == 44 and doc["features"] == "hermite:2" and doc["tasks"] == "gaussian"
    assert sum(b["multiplicity"] for b in doc["spectrum"]) == 44
    kc = kernel.kernel_curve(EX, "hermite:2", Ratios(rho=0.1, alpha=np.geomspace(0.1, 100, 7), kappa=2, tau=4), d=8)
    assert [pt["e"] for pt in doc["points"]] == kc.columns["e"].tolist()
    rows = list(csv.DictReader(c.open()))
    assert [float(r["e"]) for r in rows] == [pt["e"] for pt in doc["points"]]
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert doc["floor_plain"] == pytest.approx(1.1, rel=1e-14)
    assert doc["floor_kernel_limit"] == pytest.approx(0.1, rel=1e-12)


def test_identity_json_equals_theory(capsys):
    rc = main(
        [
            "kernel",
            "tanh(g)",
            "--features",
            "identity",
            "--alpha",
            "1,8",
            "--kappa",
            "0.5,2",
            "--tau",
            "0.5,3",
            "--json",
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    cv = theory.curve("tanh(g)", theory.Ratios(rho=0.1, alpha=[1, 8], kappa=[0.5, 2], tau=[0.5, 3]))
    assert [pt["e"] for pt in doc["points"]] == cv.e.tolist()
    assert doc["D"] is None and doc["rho_eff"] == cv.columns["rho_nonlinear"][0]


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--features", "hermite:5"], "hermite:K must be 1, 2 or 3"),
        (["--features", "rbf"], "expected identity or hermite:K"),
        (["--d", "1"], "--d: expected an integer >= 2"),
        (["--plot", "x.txt"], "must end in"),
        (["--rho", "0.1,0.2"], "give one value"),
    ],
)
def test_bad_input_one_line_exit_2(argv, msg, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc = main(["kernel", EX, "--csv", "out.csv", *argv])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]
    assert not (tmp_path / "out.csv").exists()
