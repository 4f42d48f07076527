"""Foundation: Value provenance, atomic output files, grid parsing, CLI error policy."""

import subprocess
import sys

import mpmath
import pytest
import sympy

from icl_symbolic.cli import main
from icl_symbolic.cli._args import parse_grid
from icl_symbolic.core.errors import ICLError, ParseError
from icl_symbolic.core.values import Value
from icl_symbolic.output.io import atomic_path, write_json


def test_value_provenance_strings():
    assert Value.from_exact(sympy.Rational(1, 3)).provenance() == "exact (SymPy)"
    v = Value(mpmath.mpf("0.5"), "mpmath", digits=30, abs_err=mpmath.mpf("1e-35"))
    assert v.provenance().startswith("mpmath quadrature, 30 digits, |err| <= 1.0e-35")
    m = Value(0.5, "mc", stderr=0.01, n_samples=1000, seeds=(42,))
    assert "Monte Carlo, n=1000, SE=0.01, seed=42" == m.provenance()
    assert m.to_json()["stderr"] == "0.01"
    with pytest.raises(ValueError):
        Value(1.0, "guess")


def test_value_exact_keeps_digits():
    v = Value.from_exact(sympy.pi, digits=40)
    assert v.to_str() == "3.141592653589793238462643383279502884197"


def test_atomic_path_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out" / "x.json"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("boom")
    assert not target.exists() and list((tmp_path / "out").iterdir()) == []
    write_json(target, {"a": 1})
    assert target.read_text().strip().startswith("{")


@pytest.mark.parametrize(
    "text,msg",
    [
        ("1:2", "start:stop:count"),
        ("a", "not a number"),
        ("1:2:0", "count must be"),
        ("0:1:3", None),
        ("inf", "not finite"),
    ],
)
def test_parse_grid_errors(text, msg):
    if msg is None:
        with pytest.raises(ICLError, match="positive"):
            parse_grid(text, "tau", log=True)
    else:
        with pytest.raises(ICLError, match=msg):
            parse_grid(text, "tau")


def test_parse_error_points_at_column():
    err = ParseError("unknown name 'os'", "sin(os)", 4)
    assert "column 5" in str(err) and "'os)'" in str(err)


def test_cli_unknown_command_is_one_line(capsys):
    assert main(["no-such-command"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("icl-symbolic: error:")


@pytest.mark.heavy
def test_cli_subprocess_smoke():
    out = subprocess.run([sys.executable, "-m", "icl_symbolic", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("icl-symbolic ")


def test_atomic_files_get_the_usual_mode(tmp_path):
    import os
    import stat

    mask = os.umask(0o022)
    try:
        write_json(tmp_path / "m.json", {})
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "m.json").stat().st_mode) == 0o644
