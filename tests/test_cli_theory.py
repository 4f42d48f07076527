"""Tests of ``icl-symbolic theory`` (in-process, plus one subprocess smoke test)."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from icl_symbolic.cli import main
from icl_symbolic.core import cost
from icl_symbolic.theory import asymptotic as T


def test_sin_fig1_outputs(tmp_path, capsys):
    """CSV, JSON and plot for the Fig. 1 teacher; the numbers are Result 1 evaluated by the library."""
    out = tmp_path / "out"
    rc = main(
        [
            "theory",
            "sin(g)",
            "--rho",
            "0.1",
            "--alpha",
            "2",
            "--kappa",
            "2",
            "--tau",
            "0.1:4:80",
            "--csv",
            str(out) + ".csv",
            "--plot",
            str(out) + ".png",
            "--json-out",
            str(out) + ".json",
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "a1 = 0.60653065971263" in text and "exact (SymPy)" in text
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["a1"] == pytest.approx(np.exp(-0.5), rel=1e-15)
    assert doc["rho_f"] == [pytest.approx(0.1 + (1 - np.exp(-2)) / 2, rel=1e-14)]
    assert doc["rho_nonlinear"] == [pytest.approx(0.1 + (1 - np.exp(-2)) / 2 - np.exp(-1), rel=1e-14)]
    pts = doc["points"]
    assert len(pts) == 80 and set(pts[0]) >= {"alpha", "kappa", "tau", "lam", "e"}
    for p in pts[::20]:
        ref = np.exp(-1) * T.e_linear_isotropic(doc["rho_nonlinear"][0] / np.exp(-1), 2.0, 2.0, p["tau"])
        assert p["e"] == pytest.approx(ref, rel=1e-11)
    rows = list(csv.DictReader((tmp_path / "out.csv").open()))
    assert [float(r["e"]) for r in rows] == [p["e"] for p in pts]
    assert (tmp_path / "out.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_log_grid_and_json_stdout(capsys):
    rc = main(
        ["theory", "tanh(g)", "--rho", "0.1", "--alpha", "20", "--tau", "10", "--kappa", "0.1:10:5", "--log", "--json"]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose([p["kappa"] for p in doc["points"]], [0.1, 10**-0.5, 1, 10**0.5, 10])
    assert doc["rho_nonlinear"] == [pytest.approx(0.127415326035430, abs=1e-14)]
    es = [p["e"] for p in doc["points"]]
    assert all(e > doc["rho_nonlinear"][0] for e in es) and es == sorted(es, reverse=True)


def test_a1zero_branch(capsys):
    rc = main(["theory", "g**2-1", "--rho", "0.1", "--tau", "0.5,0.9,2", "--alpha", "0.5,7", "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["a1"] == 0 and doc["branch"] == "a1zero"
    np.testing.assert_allclose([p["e"] for p in doc["points"]], [4.2, 21.0, 4.2] * 2, rtol=1e-13)


def test_structured_covariances_warn_and_default_d(capsys):
    rc = main(["theory", "g", "--ctrain", "powerlaw:0.9", "--ctest", "spiked:0.5:5", "--tau", "0.5,2", "--json"])
    assert rc == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["d"] == 64  # the package-wide default d (defaults.D)
    assert "warning: Appendix A: C_test" in cap.err and "C_train" not in cap.err
    ref = T.e_linear(
        T.Ratios(rho=0.1, alpha=2.0, kappa=2.0, tau=2.0),
        T.TaskCovariances(C_train="powerlaw:0.9", C_test="spiked:0.5:5", d=64),
    )
    assert doc["points"][1]["e"] == pytest.approx(ref, rel=1e-13)


def test_npy_covariance(tmp_path, capsys):
    rng = np.random.default_rng(99887766554433221)
    A = rng.standard_normal((30, 30))
    C = A @ A.T
    C *= 30 / np.trace(C)
    np.save(tmp_path / "c.npy", C)
    rc = main(["theory", "g", "--ctrain", str(tmp_path / "c.npy"), "--tau", "3", "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["points"][0]["e"] == pytest.approx(
        T.e_linear(T.Ratios(rho=0.1, alpha=2, kappa=2, tau=3), T.TaskCovariances(C_train=C, C_test=None)), rel=1e-13
    )


def test_progress_for_long_grids(capsys, monkeypatch):
    """A sweep estimated above a few seconds is announced (cost.Estimate), then reports its progress."""
    assert main(["theory", "g", "--tau", "0.1:0.9:400", "--json"]) == 0
    assert capsys.readouterr().err == ""  # 400 points: well under a second, nothing to announce
    monkeypatch.setattr(cost, "ANNOUNCE_SECONDS", 0.0)
    assert main(["theory", "g", "--tau", "0.1:0.9:400", "--json"]) == 0
    err = capsys.readouterr().err
    assert "theory: 400 points: estimated" in err and "theory: 400 points: done (400/400 points)" in err


def test_tau_one_is_a_diverging_point_not_a_refusal(tmp_path, capsys):
    """A ridgeless sweep through tau = 1 keeps the point: inf in CSV, null with a reason in JSON."""
    rc = main(["theory", "sin(g)", "--tau", "0.5,1,2", "--csv", str(tmp_path / "o.csv"), "--json"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "Infinity" not in text and "NaN" not in text
    pts = json.loads(text)["points"]
    assert pts[1]["e"] is None and "diverges" in pts[1]["reason"]
    assert pts[0]["reason"] is None and pts[2]["e"] > 0
    rows = (tmp_path / "o.csv").read_text().splitlines()
    assert rows[2].split(",")[-1] == "inf" and rows[1].split(",")[-1] != "inf"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--kappa", "0"], "kappa"),
        (["--kappa", "-1"], "kappa"),
        (["--alpha", "0"], "alpha"),
        (["--rho", "-0.1"], "rho"),
        (["--lam", "-1"], "lam"),
        (["--ctrain", "powerlaw:x"], "powerlaw"),
        (["--ctrain", "nonexistent.npy"], "does not exist"),
        (["--ctrain", "lowrank:9999", "--d", "10"], "rank"),
        (["--tau", "1:2:zz"], "count"),
    ],
)
def test_bad_input_one_line_no_files(tmp_path, capsys, extra, message):
    out = tmp_path / "o"
    rc = main(["theory", "sin(g)", "--csv", f"{out}.csv", "--json-out", f"{out}.json", "--plot", f"{out}.png", *extra])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("icl-symbolic: error:") and message in err[0], err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "matrix, message",
    [
        (np.array([[1.0, 0.3], [0.0, 1.0]]), "not symmetric"),
        (np.array([[1.0, 2.0], [2.0, 1.0]]), "semidefinite"),
        (np.eye(3), "expected d = 2"),
    ],
)
def test_bad_npy_covariance(tmp_path, capsys, matrix, message):
    np.save(tmp_path / "c.npy", matrix)
    rc = main(
        [
            "theory",
            "g",
            "--ctrain",
            "identity",
            "--ctest",
            str(tmp_path / "c.npy"),
            "--d",
            "2",
            "--csv",
            str(tmp_path / "o.csv"),
        ]
    )
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "o.csv").exists()


def test_bad_expression_is_not_evaluated(tmp_path, capsys):
    rc = main(["theory", "__import__('os').system('echo hi')", "--csv", str(tmp_path / "o.csv")])
    assert rc == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.heavy
def test_subprocess_smoke():
    r = subprocess.run(
        [sys.executable, "-m", "icl_symbolic", "theory", "g", "--tau", "0.5", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["points"][0]["e"] == pytest.approx(T.e_linear_isotropic(0.1, 2, 2, 0.5), rel=1e-13)


def test_family_takes_size_from_npy(tmp_path, capsys):
    """--ctest powerlaw:1 next to a 30 x 30 .npy C_train uses d = 30 (no --d needed)."""
    np.save(tmp_path / "c.npy", np.linspace(0.5, 1.5, 30))
    rc = main(["theory", "g", "--ctrain", str(tmp_path / "c.npy"), "--ctest", "powerlaw:1", "--tau", "3", "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    ref = T.e_linear(
        T.Ratios(rho=0.1, alpha=2, kappa=2, tau=3),
        T.TaskCovariances(C_train=np.linspace(0.5, 1.5, 30), C_test="powerlaw:1", d=30),
    )
    assert doc["points"][0]["e"] == pytest.approx(ref, rel=1e-13)
