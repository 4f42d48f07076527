"""What an installed copy contains: the package list of pyproject.toml and the shipped claims.

The wheel itself is built, installed into a fresh virtual environment and run
(``icl-symbolic verify`` from a temporary folder) by ``.ci/run``, after the
test suite; these tests keep the configuration that makes that work honest
between CI runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from icl_symbolic.verification import claimfile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _package_dirs() -> set[str]:
    """Every folder under icl_symbolic/ that holds Python modules or data files."""
    out = set()
    for path in (ROOT / "icl_symbolic").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            out.add(".".join(path.parent.relative_to(ROOT).parts))
    return out


def test_every_package_folder_is_installed():
    """setuptools installs only the listed packages: a folder missing from the list would be
    absent from the wheel (and its modules or data with it)."""
    listed = set(CONFIG["packages"])
    missing = sorted(_package_dirs() - listed)
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml"
    assert "icl_symbolic.derivations" in listed


def test_derivations_ship_as_a_data_package():
    assert CONFIG["package-dir"]["icl_symbolic.derivations"] == "derivations"
    assert "*.toml" in CONFIG["package-data"]["icl_symbolic.derivations"]
    shipped = sorted(p.name for p in claimfile.default_files())
    on_disk = sorted(p.name for p in (ROOT / "derivations").glob("*.toml"))
    assert shipped == on_disk and len(shipped) >= 10


def test_shipped_folder_is_found_from_another_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = claimfile.default_files()
    assert files and all(Path(str(p)).is_file() for p in files)
    assert [c.id for c in claimfile.load_claims()][:1] == [claimfile.load_file(files[0])[0].id]


def test_error_model_catalogue_ships():
    assert "*.toml" in CONFIG["package-data"]["icl_symbolic.data"]
    assert (ROOT / "icl_symbolic" / "data" / "slips.toml").is_file()
