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
