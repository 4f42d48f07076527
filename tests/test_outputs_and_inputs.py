"""Bad input ends in one line and exit 2 BEFORE any computation; outputs are all-or-nothing.

Each test makes the computation itself fail loudly (monkeypatched) where the
claim is "refused before computing", so a check that ran too late would show.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from icl_symbolic.cli import coeffs as cli_coeffs
from icl_symbolic.cli import main
from icl_symbolic.core.errors import ICLError
from icl_symbolic.output import io

ROOT = Path(__file__).resolve().parents[1]


def _run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _refused(rc, out, err, match=None):
    assert rc == 2, (rc, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("icl-symbolic: error:"), err
    assert "Traceback" not in err
    if match:
        assert match in lines[0], lines[0]


@pytest.fixture
def no_compute(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("computed before refusing bad input")

    import icl_symbolic.api.coeffs
    import icl_symbolic.api.simulation
    import icl_symbolic.api.theory  # noqa: F401  (imported before patching: they bind the library names)

    monkeypatch.setattr("icl_symbolic.engine.hermite.hermite_coeffs", boom)
    monkeypatch.setattr("icl_symbolic.api.coeffs._hermite_coeffs", boom)
    monkeypatch.setattr("icl_symbolic.theory.asymptotic.curve", boom)
    monkeypatch.setattr("icl_symbolic.api.theory.curve", boom)
    monkeypatch.setattr("icl_symbolic.api.simulation.simulate_many", boom)
    monkeypatch.setattr("icl_symbolic.api.simulation.simulate_kernel", boom)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda d: str(d), "is a directory"),
        (lambda d: str(d / "missing" / "x.csv"), "does not exist"),
        (lambda d: str(d / "fifo.csv"), "not a regular file"),
        (lambda d: str(d / "dangling.csv"), "dangling"),
    ],
)
@pytest.mark.parametrize(
    "cmd",
    [
        ["coeffs", "tanh(g)", "--csv"],
        ["theory", "tanh(g)", "--csv"],
        ["simulate", "g", "--json-out"],
        ["coeffs", "tanh(g)", "--plot"],
    ],
)
def test_bad_output_paths_refused_before_computing(capsys, tmp_path, no_compute, make, match, cmd):
    os.mkfifo(tmp_path / "fifo.csv")
    os.symlink(tmp_path / "nowhere.csv", tmp_path / "dangling.csv")
    path = make(tmp_path)
    if cmd[-1] == "--plot" and not path.endswith(os.sep) and Path(path).suffix == ".csv":
        path = path[:-4] + ".png"
        if match == "not a regular file":
            os.mkfifo(path)
        if match == "dangling":
            os.symlink(tmp_path / "nowhere.png", path)
    _refused(*_run(capsys, *cmd, path), match)


def test_unwritable_folder_refused(capsys, tmp_path, no_compute):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK) and os.geteuid() == 0:
            pytest.skip("root ignores permission bits")
        _refused(*_run(capsys, "coeffs", "tanh(g)", "--csv", str(ro / "x.csv")), "cannot create files")
    finally:
        ro.chmod(0o700)


def test_two_outputs_all_or_nothing(capsys, tmp_path, monkeypatch):
    # the second file fails while being written: the first must not appear either
    def failing_csv(results):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli_coeffs, "spectrum_csv", failing_csv)
    rc, out, err = _run(
        capsys, "coeffs", "g**2", "--M", "2", "--plot", str(tmp_path / "a.png"), "--csv", str(tmp_path / "b.csv")
    )
    _refused(rc, out, err, "cannot write output")
    assert list(tmp_path.iterdir()) == []


def test_transaction_rolls_back_every_file(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with io.transaction():
            io.write_text(tmp_path / "a.txt", "a")
            io.write_text(tmp_path / "b.txt", "b")
            assert list(tmp_path.iterdir()) != []  # temporary files exist meanwhile
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    with io.transaction():
        io.write_text(tmp_path / "a.txt", "a")
        io.write_text(tmp_path / "b.txt", "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_overwrite_keeps_mode_and_symlink(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "l.csv"
    link.symlink_to(target)
    io.write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    with pytest.raises(ICLError, match="not a regular file"):
        fifo = tmp_path / "f"
        os.mkfifo(fifo)
        io.write_text(fifo, "x")


def test_json_is_strict():
    text = io.dumps({"e": float("nan"), "v": [float("inf"), 1.0], "a": np.float64("-inf")})
    assert json.loads(text) == {"e": None, "v": [None, 1.0], "a": None}


@pytest.mark.parametrize(
    "argv, match",
    [
        (["theory", "g", "--kappa", "1e-300", "--tau", "2"], "supported range"),
        (["theory", "g", "--alpha", "1e-300", "--tau", "2"], "supported range"),
        (["theory", "g", "--rho", "1e300", "--tau", "2"], "supported range"),
        (["theory", "g", "--lam", "1e300", "--tau", "2"], "supported range"),
        (["simulate", "1e999", "--d", "4", "--seeds", "1"], "float64"),
        (["simulate", "g", "--seeds", "1e15"], "limit"),
        (["simulate", "g", "--d", "1e9"], "limit"),
        (["moments", "g", "--d", "100000", "--ell", "100000", "--mc", "10"], "GB"),
        (["moments", "g", "--d", "1000", "--ell", "10000", "--mc", "1000000"], "prompt entries"),
        (["coeffs", "g**1e" + "9" * 5000], "exponent"),
        (["coeffs", "g+\uff13"], "unexpected character"),
    ],
)
def test_absurd_parameters_one_line(capsys, argv, match):
    _refused(*_run(capsys, *argv), match)


@pytest.mark.parametrize(
    "content, match",
    [
        (np.eye(3) * (1 + 1j), "complex"),
        (np.array(["a", "b", "c"]), "string"),
        (np.zeros((0,)), "empty"),
        (np.array([1.0, np.nan, 1.0]), "NaN"),
    ],
)
def test_bad_npy_covariances(capsys, tmp_path, content, match):
    p = tmp_path / "c.npy"
    np.save(p, content)
    _refused(*_run(capsys, "theory", "g", "--ctrain", str(p), "--tau", "2"), match)


def test_theory_json_never_nan(capsys):
    rc, out, _ = _run(capsys, "theory", "g", "--tau", "0.5,1,2", "--json")
    assert rc == 0
    json.loads(out, parse_constant=lambda c: pytest.fail(f"non-finite JSON constant {c}"))


def test_interrupt_inside_exec_still_exits_130(tmp_path):
    # A KeyboardInterrupt that leaves exec() of a string (as lambdify's does) makes CPython end a
    # `python -m` run by SIGINT (-2) after main() returned 130, unless main() clears the mark.
    # Deterministic form of the race test_sigterm_like_sigint can hit.
    pkg = tmp_path / "runner"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(
        "import sys\n"
        "import icl_symbolic.cli as cli\n"
        "cli.check_output_options = lambda args: exec('raise KeyboardInterrupt')\n"
        "sys.exit(cli.main(['coeffs', 'tanh(g)']))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]))
    p = subprocess.run([sys.executable, "-m", "runner"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert "interrupted" in p.stderr and "Traceback" not in p.stderr


def test_sigterm_like_sigint(tmp_path):
    # a long sweep with an output file: SIGTERM once it is computing -> exit 130, no file, no .part
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "icl_symbolic",
            "theory",
            "tanh(g)",
            "--tau",
            "0.1:0.9:20000",
            "--csv",
            str(tmp_path / "x.csv"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    first = p.stderr.readline()  # the first progress line: main() runs, the handler is set
    assert "points" in first, first
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (p.returncode, err)
    assert "interrupted" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
