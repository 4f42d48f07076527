"""``icl-symbolic coeffs``: in-process CLI tests plus one subprocess smoke test."""

import json
import subprocess
import sys

import pytest

from icl_symbolic.cli import main
from icl_symbolic.engine.library import LIBRARY


def _run(capsys, *argv):
    rc = main(["coeffs", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_sin_json(capsys):
    rc, out, err = _run(capsys, "sin(g)", "--rho", "0.1", "--json")
    assert rc == 0
    doc = json.loads(out)
    assert doc["command"] == "coeffs" and len(doc["points"]) == 1
    d = doc["points"][0]
    for key in (
        "expr",
        "rho",
        "digits",
        "a",
        "a_exact",
        "E_f2",
        "a1",
        "rho_f",
        "rho_nonlinear",
        "noise_normalized",
        "method",
    ):
        assert key in d
    assert d["rho"] == "1/10" and d["digits"] == 30 and d["method"] == "exact"
    assert len(d["a"]) == 9 and d["a_exact"][1] == "exp(-1/2)"
    assert d["a1"].startswith("0.606530659712633423603799534991")
    assert d["rho_nonlinear"].startswith("0.164452917210251332457476482352")
    assert d["noise_normalized"].startswith("0.447029376489705980418410597731")
    assert d["exact"]["rho_nonlinear"] == "-exp(-1) - exp(-2)/2 + 3/5"


def test_tanh_table_has_40_digits_and_provenance(capsys):
    rc, out, _ = _run(capsys, "tanh(g)", "--rho", "0.1", "--digits", "40", "--M", "3")
    assert rc == 0
    assert "0.6057055096021588255835402275558804394262" in out  # a1, 40 digits
    assert "0.1274153260354302571560236101085503646911" in out  # rho_nonlinear
    assert "mpmath quadrature, 40 digits" in out
    assert "method: mpmath" in out


def test_a1_zero_gives_null_and_a_note(capsys):
    rc, out, _ = _run(capsys, "g**2 - 1", "--json", "--M", "3")
    d = json.loads(out)["points"][0]
    assert rc == 0 and d["noise_normalized"] is None and d["a1"] == "0.0"
    assert any("a1 = 0" in n for n in d["notes"])
    rc, out, _ = _run(capsys, "g**2 - 1", "--M", "3")
    assert "undefined" in out and "a1 = 0 exactly" in out


def test_library_json_covers_the_required_teachers(capsys):
    rc, out, err = _run(capsys, "--library", "--rho", "0.1", "--json", "--M", "4", "--digits", "20")
    assert rc == 0
    docs = json.loads(out)["points"]
    names = [d["name"] for d in docs]
    assert names == list(LIBRARY)
    for required in (
        "g",
        "g^2-1",
        "g^3",
        "const",
        "sin",
        "cos",
        "tanh",
        "erf",
        "relu",
        "abs",
        "sign",
        "sigmoid",
        "softplus",
        "gelu",
        "silu",
        "exp",
    ):
        assert required in names
    by = {d["name"]: d for d in docs}
    assert by["tanh"]["method"] == "mpmath" and by["sin"]["method"] == "exact"
    assert by["g^3"]["a1"] == "3.0" and by["g^3"]["rho_nonlinear"] == "6.1"
    assert "[17/17] exp" in err  # progress on stderr


def test_library_table(capsys):
    rc, out, _ = _run(capsys, "--library", "--M", "2", "--digits", "15")
    assert rc == 0
    assert out.count("\n") >= len(LIBRARY) + 1 and "undefined" in out


def test_plot_and_csv_are_written(capsys, tmp_path):
    png, csv = tmp_path / "spec.png", tmp_path / "spec.csv"
    rc, _, _ = _run(capsys, "relu(g)", "--M", "6", "--plot", str(png), "--csv", str(csv))
    assert rc == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = csv.read_text().splitlines()
    assert rows[0] == "teacher,m,a_m,a_m_squared,method" and len(rows) == 8
    assert rows[2].startswith('"relu(g)",1,0.5,0.25,exact')


@pytest.mark.parametrize(
    "argv, match",
    [
        (["__import__('os').system('touch pwned')"], "unexpected character"),
        (["open('pwned','w')"], "unexpected character"),
        (["exp(g**2)"], "not in L^2"),
        (["1/g"], "not in L^2"),
        (["log(g)"], "complex-valued"),
        (["g", "--rho", "-1"], "rho"),
        (["g", "--rho", "abc"], "unknown name"),
        (["g", "--library"], "either EXPR or --library"),
        ([], "missing EXPR"),
        (["g", "--digits", "0"], "--digits"),
        (["g", "--M", "500"], "--M"),
        (["g", "--plot", "out.txt"], "--plot"),
        (["g", "--M", "x"], "is not an integer"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_files(capsys, tmp_path, monkeypatch, argv, match):
    monkeypatch.chdir(tmp_path)
    rc, out, err = (
        _run(capsys, *argv, "--csv", str(tmp_path / "x.csv")) if "--plot" not in argv else _run(capsys, *argv)
    )
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("icl-symbolic: error:"), err
    assert match in lines[0]
    assert "Traceback" not in err and out == ""
    assert list(tmp_path.iterdir()) == []  # no partial output


@pytest.mark.heavy
def test_subprocess_smoke(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "icl_symbolic", "coeffs", "g**3", "--M", "3", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["points"][0]["a1"] == "3.0"
    p = subprocess.run(
        [sys.executable, "-m", "icl_symbolic", "coeffs", "g.__class__"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
