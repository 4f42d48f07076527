"""``icl-symbolic dual --depth``: one pair (certified digits) and a Gram (.npy), bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import sympy


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "icl_symbolic", "dual", *args], capture_output=True, text=True)


def test_pair_json_matches_the_literature_recursion():
    r = _cli(
        "relu(g)", "--depth", "3", "--sigma-w2", "2", "--sigma-b2", "0.1", "--x", "1,2,-1", "--y", "0.5,-1,2", "--json"
    )
    assert r.returncode == 0, r.stderr
    pt = json.loads(r.stdout)["points"][0]
    from icl_symbolic.verification.checks.dual import _arccos_recursion

    k, th = _arccos_recursion([1, 2, -1], [0.5, -1, 2], 3, 2, sympy.Rational(1, 10))
    assert abs(float(pt["nngp"]) - float(k)) < 1e-15 * abs(float(k)) + 1e-300
    assert abs(float(pt["ntk"]) - float(th)) < 1e-15 * abs(float(th))


def test_gram_written_and_bound_printed(tmp_path):
    X = np.random.default_rng(0).standard_normal((8, 5))
    np.save(tmp_path / "X.npy", X)
    out = tmp_path / "ntk.npy"
    r = _cli(
        "relu(g)", "--depth", "4", "--sigma-w2", "2", "--gram", str(tmp_path / "X.npy"), "--out", str(out), "--json"
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)["points"][0]
    from icl_symbolic.api.dual import deep_gram

    G = deep_gram("relu(g)", X, 4, sigma_w2=2, sigma_b2=0)
    assert np.array_equal(np.load(out), G.ntk) and doc["ntk_max_err"] == G.ntk_err < 1e-12


@pytest.mark.parametrize(
    "args",
    [
        ["--depth", "0", "--x", "1", "--y", "2"],
        ["--depth", "101", "--x", "1", "--y", "2"],
        ["--depth", "2", "--sigma-b2", "-1", "--x", "1", "--y", "2"],
        ["--depth", "2", "--sigma-w2", "0", "--x", "1", "--y", "2"],
        ["--depth", "2", "--x", "1,a", "--y", "2,3"],
        ["--depth", "2", "--x", "1,2", "--y", "2"],
        ["--depth", "2", "--x", "1,2"],
        ["--depth", "2", "--corr", "0.5", "--x", "1", "--y", "2"],
        ["--depth", "2", "--gram", "MISSING.npy", "--out", "OUT.npy"],
        ["--depth", "2", "--gram", "BAD.npy", "--out", "OUT.npy"],
        ["--depth", "2", "--gram", "X.npy", "--out", "OUT.txt"],
        ["--depth", "x", "--x", "1", "--y", "2"],
    ],
)
def test_bad_input_one_line_exit_2_no_file(tmp_path, args):
    np.save(tmp_path / "X.npy", np.ones((3, 2)) + np.eye(3, 2))
    np.save(tmp_path / "BAD.npy", np.ones(3))
    args = [str(tmp_path / a) if a.endswith((".npy", ".txt")) else a for a in args]
    r = _cli("relu(g)", *args)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "OUT.npy").exists() and not (tmp_path / "OUT.txt").exists()


def test_refused_gram_writes_no_file(tmp_path):
    """Parallel rows: the Gram is refused (one line, exit 2) and --out is not written."""
    np.save(tmp_path / "X.npy", np.array([[1.0, 2.0], [2.0, 4.0], [1.0, 0.0]]))
    r = _cli("relu(g)", "--depth", "2", "--gram", str(tmp_path / "X.npy"), "--out", str(tmp_path / "OUT.npy"))
    assert r.returncode == 2 and "parallel" in r.stderr and not (tmp_path / "OUT.npy").exists()
