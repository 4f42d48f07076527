"""Start-up cost: ``import icl_symbolic`` and a command pay only for what they use.

Each check runs in a fresh interpreter (``sys.modules`` of the test process is
already full) and inspects which modules got imported.
"""

import json
import subprocess
import sys

import pytest

import icl_symbolic as ics
from icl_symbolic.cli import COMMANDS, command_module


def _modules_after(code: str) -> set:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_package_does_not_load_the_api():
    mods = _modules_after("import icl_symbolic")
    assert "icl_symbolic.api" not in mods
    assert not any(m.startswith("icl_symbolic.verification") for m in mods)
    assert "scipy" not in mods and "matplotlib" not in mods


def test_lazy_names_resolve_to_the_api_objects():
    from icl_symbolic import api

    for name in ics._API:
        assert getattr(ics, name) is getattr(api, name), name
    assert set(ics._API) <= set(dir(ics)) and set(ics._API) <= set(ics.__all__)
    with pytest.raises(AttributeError):
        ics.no_such_name  # noqa: B018


def test_a_command_imports_only_its_own_module():
    mods = _modules_after(
        "from icl_symbolic.cli import main\n"
        "main(['simulate', 'g', '--d', '4', '--seeds', '2', '--n-test', '50', '--quiet'])"
    )
    assert "icl_symbolic.cli.simulate" in mods
    others = {f"icl_symbolic.cli.{m}" for n, m in COMMANDS.items() if n != "simulate"}
    assert not others & mods, sorted(others & mods)
    assert "matplotlib" not in mods  # no --plot
    assert not any(m.startswith("icl_symbolic.verification") for m in mods)


def test_every_command_name_has_its_module():
    for name, module in COMMANDS.items():
        m = command_module(name)
        assert m.__name__ == f"icl_symbolic.cli.{module}" and callable(m.register) and callable(m.run), name


def test_a_command_without_a_statistical_verdict_does_not_load_scipy_stats():
    """``coeffs`` judges nothing statistically: the shared verdict words (core.verdict, which needs
    scipy.stats, about 0.5 s of start-up) are imported by the commands that judge, not by the CLI's
    common argument helpers."""
    mods = _modules_after("from icl_symbolic.cli import main\nmain(['coeffs', 'sin(g)'])")
    assert "icl_symbolic.cli.coeffs" in mods
    assert "scipy.stats" not in mods and "icl_symbolic.core.verdict" not in mods, "verdict loaded by coeffs"
