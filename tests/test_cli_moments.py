"""``icl-symbolic moments`` (Lemma 1, Appendix B, p. 8-9): table, JSON keys, errors."""

import json
import subprocess
import sys

import pytest
import sympy

from icl_symbolic.cli import main
from icl_symbolic.cli.moments import JSON_KEYS

POINT_KEYS = {"name", "exact", "leading", "mc", "mc_se", "leading_form", "dropped"}


def run_json(capsys, *argv):
    """The --json object, with its points also reachable by coefficient name."""
    assert main(["moments", *argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"command", "software", "inputs", "points"}
    assert [p["name"] for p in doc["points"]] == list(JSON_KEYS)
    assert all(set(p) == POINT_KEYS for p in doc["points"])  # one stable shape
    return {**doc, **{p["name"]: p for p in doc["points"]}}


def test_json_has_exactly_the_documented_keys_and_exact_values(capsys):
    doc = run_json(capsys, "g", "--rho", "0.1", "--d", "4", "--ell", "8")
    assert set(JSON_KEYS) == {"E_y2", "E_u", "E_uuT_I", "E_uuT_w", "E_us", "E_s2"}
    for k in JSON_KEYS:
        assert doc[k]["mc"] is None and doc[k]["dropped"] is None  # not asked for: null
    # linear teacher, omega = 1: (1+rho)/alpha, 1 + 1/ell, (1+rho)(1+2/ell), (1+rho)^2(1+2/ell)
    assert float(doc["E_uuT_I"]["exact"]) == pytest.approx(1.1 / 2, rel=1e-14)
    assert float(doc["E_uuT_w"]["exact"]) == pytest.approx(1 + 1 / 8, rel=1e-14)
    assert float(doc["E_us"]["exact"]) == pytest.approx(1.1 * 1.25, rel=1e-14)
    assert float(doc["E_s2"]["exact"]) == pytest.approx(1.21 * 1.25, rel=1e-14)
    assert float(doc["E_uuT_w"]["leading"]) == 1.0
    assert doc["inputs"]["rho"] == "1/10" and doc["inputs"]["alpha"] == "2"


def test_issue_example_sin_leading_json(capsys):
    """`icl-symbolic moments "sin(g)" --rho 0.1 --leading --json` (defaults d = 64, ell = 128)."""
    doc = run_json(capsys, "sin(g)", "--rho", "0.1", "--leading")
    a1 = float(sympy.exp(-sympy.Rational(1, 2)))
    rho_f = 0.1 + float((1 - sympy.exp(-2)) / 2)
    assert doc["inputs"]["d"] == 64 and doc["inputs"]["ell"] == 128
    assert float(doc["E_u"]["leading"]) == pytest.approx(a1, rel=1e-14)
    assert float(doc["E_uuT_I"]["leading"]) == pytest.approx(rho_f / 2, rel=1e-14)
    assert doc["E_us"]["leading_form"] == "a1*rho_f"
    orders = {t["order"] for t in doc["E_s2"]["dropped"]}
    assert orders == {"O(1/d)", "O(omega - 1)"}
    # at omega = 1 the exact E_uuT_w differs from a1^2 only by the 1/ell term
    assert abs(float(doc["E_uuT_w"]["exact"]) - a1**2) < 1 / 128


def test_issue_example_tanh_with_monte_carlo(capsys):
    """The issue's table example (smaller N): z-scores within the Bonferroni bound for 10
    comparisons (3.89); the JSON carries mc and mc_se."""
    argv = ["moments", "tanh(g)", "--rho", "0.1", "--d", "8", "--ell", "5", "--omega", "0.7", "--mc", "50000"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Monte Carlo" in out and "E_uuT_w" in out and "z" in out
    doc = run_json(capsys, *argv[1:])
    for k in JSON_KEYS:
        item = doc[k]
        assert item["leading_form"] is None
        assert abs(item["mc"] - float(item["exact"])) <= 3.89 * item["mc_se"], k
    assert doc["inputs"]["seed"] == 20261129 and len(doc["inputs"]["w"]) == 8
    w = doc["inputs"]["w"]
    assert sum(x * x for x in w) / 8 == pytest.approx(0.7, rel=1e-12)


def test_leading_table_shows_agreement_and_dropped_terms(capsys):
    assert main(["moments", "g^2 - 1", "--d", "6", "--ell", "3", "--leading"]) == 0
    out = capsys.readouterr().out
    assert "Dropped terms" in out and "O(1/d)" in out and "NO" not in out


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["moments", "__import__('os')"], "unexpected character"),
        (["moments", "g", "--rho", "-1"], "rho"),
        (["moments", "g", "--d", "0"], "--d"),
        (["moments", "g", "--ell", "0"], "--ell"),
        (["moments", "g", "--omega", "0"], "omega"),
        (["moments", "g", "--mc", "1"], "--mc"),
        (["moments", "g", "--digits", "0"], "--digits"),
        (["moments", "exp(g^2)"], "diverges"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, msg):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("icl-symbolic: error:") and msg in err


@pytest.mark.heavy
def test_subprocess_smoke():
    r = subprocess.run(
        [sys.executable, "-m", "icl_symbolic", "moments", "g", "--d", "2", "--ell", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["points"][1] == {
        "name": "E_u",
        "exact": "1.0",
        "leading": "1.0",
        "mc": None,
        "mc_se": None,
        "leading_form": None,
        "dropped": None,
    }


def test_appendix_a_command(capsys, tmp_path):
    """`icl-symbolic appendix-a`: numbers and verdicts from covariance.appendix_a; exit 1 when a
    condition fails, 0 when all hold, 2 on bad input."""
    assert main(["appendix-a", "identity", "lowrank:0.5", "--d", "50"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "Var(sigma_w) = 2 tr(C^2)/d^2 = 0.04" in out[0] and "hold" in out[1]
    assert main(["appendix-a", "identity", "spiked:0.5:2", "--d", "50", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)["points"]
    assert [x["holds"] for x in doc] == [True, False]
    assert doc[1]["var_sigma"] == pytest.approx(2 * (2 * 12.5**2 + 48 * (25 / 48) ** 2) / 50**2)
    import numpy as np

    path = tmp_path / "c.npy"
    np.save(path, np.full(5, 2.0))
    assert main(["appendix-a", str(path), "--d", "5"]) == 1
    assert "tr(C)/d = 2" in capsys.readouterr().out
    assert main(["appendix-a", "powerlaw:-1"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_plot_and_csv_of_the_dropped_terms(capsys, tmp_path):
    """--plot/--csv: |exact - leading| against ell; for the linear teacher at omega = 1 the
    E_uuT_w gap is exactly 1/ell and E_s2's is 2 (1+rho)^2/ell (docs/linear-theory.md)."""
    png, csv = tmp_path / "gap.png", tmp_path / "gap.csv"
    assert main(["moments", "g", "--rho", "0.5", "--d", "4", "--plot", str(png), "--csv", str(csv)]) == 0
    capsys.readouterr()
    assert png.stat().st_size > 1000
    rows = [r.split(",") for r in csv.read_text().splitlines()[1:]]
    for ell, name, ex, lead, gap in rows:
        if name == "E_uuT_w":
            assert float(gap) == pytest.approx(1 / int(ell), rel=1e-13)
        if name == "E_s2":
            assert float(gap) == pytest.approx(2 * 1.5**2 / int(ell), rel=1e-13)
        if name in ("E_y2", "E_u", "E_uuT_I"):
            assert abs(float(gap)) < 1e-14
    bad = tmp_path / "x.txt"
    assert main(["moments", "g", "--d", "2", "--plot", str(bad)]) == 2
    assert not bad.exists()
    assert list(tmp_path.glob(".*part")) == []
