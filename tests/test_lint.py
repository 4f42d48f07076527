"""Lint and format: ruff, with the configuration in pyproject.toml ([tool.ruff]).

Part of the fast tier (seconds; ``-m "not sim and not heavy"``) and so of CI, so a change that breaks the style
rules fails like any other test.  ``ruff check --fix`` and ``ruff format`` repair
most findings.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TREES = ("icl_symbolic", "tests", "benchmarks")


def _ruff(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_ruff_check_is_clean():
    r = _ruff("check", "--no-cache", *TREES)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_ruff_format_is_applied():
    r = _ruff("format", "--check", "--no-cache", *TREES)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_the_lint_run_can_fail(tmp_path):
    """The same configuration reports an unused import and an unformatted line."""
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "bad.py").write_text("import os\nx = [1,2 ,3]\n")
    assert _ruff("check", "--no-cache", "bad.py", cwd=tmp_path).returncode != 0
    assert _ruff("format", "--check", "--no-cache", "bad.py", cwd=tmp_path).returncode != 0


def test_the_complexity_limits_are_enforced_below_the_api(tmp_path):
    """C901 above 25 fails everywhere; more than 8 parameters fails below the API, not in it."""
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    nine = "def f(a, b, c, d, e, g, h, i, j):\n    return a\n"
    eight = "def f(a, b, c, d, e, g, h, i):\n    return a\n"
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(25))
    complex26 = f"def f(x):\n{branches}    return -1\n"  # 25 branches: complexity 26
    complex25 = f"def f(x):\n{branches[: branches.rindex('    if')]}    return -1\n"
    for folder in ("icl_symbolic/model", "icl_symbolic/api"):
        (tmp_path / folder).mkdir(parents=True)
    cases = {
        "icl_symbolic/model/nine.py": (nine, "PLR0913"),
        "icl_symbolic/model/eight.py": (eight, None),
        "icl_symbolic/api/nine.py": (nine, None),
        "icl_symbolic/api/complex26.py": (complex26, "C901"),
        "icl_symbolic/model/complex25.py": (complex25, None),
    }
    for path, (text, code) in cases.items():
        (tmp_path / path).write_text(text)
        r = _ruff("check", "--no-cache", path, cwd=tmp_path)
        assert (r.returncode != 0) == (code is not None), (path, r.stdout)
        if code is not None:
            assert code in r.stdout, (path, r.stdout)
