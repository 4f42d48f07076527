"""Output names with control characters, and ``figure --out`` as docs/limits.md says.

A file or folder name with a control character (newline, escape, \\x01, DEL, C1), a Unicode
line/paragraph separator or a bidirectional control is refused with ONE line and exit 2,
before any computation, and nothing is written (not even a partial or temporary file).
"""

from __future__ import annotations

import pytest

import icl_symbolic.cli.coeffs
import icl_symbolic.cli.moments
import icl_symbolic.cli.simulate
import icl_symbolic.cli.theory  # noqa: F401  (imported before the patches below bind their names)
from icl_symbolic.cli import main
from icl_symbolic.core.errors import ICLError
from icl_symbolic.output import io
from icl_symbolic.simulation.cache import SeedCache
from icl_symbolic.studies import figures

BAD_NAMES = [
    (["coeffs", "g", "--json-out", "a\nb.json"], "'\\n'"),
    (["coeffs", "g", "--csv", "x\x01.csv"], "'\\x01'"),
    (["theory", "g", "--tau", "2", "--plot", "p\x1b[31m.png"], "'\\x1b'"),
    (["moments", "g", "--json-out", "m\x7f.json"], "'\\x7f'"),
    (["theory", "g", "--tau", "2", "--csv", "t\u2028.csv"], "'\\u2028'"),
    (["coeffs", "g", "--json-out", "a\u202egpj.json"], "'\\u202e'"),
    (["simulate", "g", "--out", "x\x01"], "'\\x01'"),  # the old spelling: no deprecation note first
    (["simulate", "g", "--json-out", "x\x01.json"], "'\\x01'"),
    (["figure", "1", "--quick", "--out", "x\x01"], "'\\x01'"),
    (["figure", "1", "--quick", "--out", "dir\n"], "'\\n'"),
]


@pytest.fixture
def no_work(monkeypatch):
    """Every computation the commands above could start fails the test."""

    def boom(*a, **k):
        raise AssertionError("computed before the output name was checked")

    monkeypatch.setattr(figures, "figure1_data", boom)
    for mod, name in (
        ("icl_symbolic.engine.hermite", "hermite_coeffs"),
        ("icl_symbolic.simulation.simulator", "simulate_many"),
        ("icl_symbolic.api.coeffs", "hermite_coeffs"),
        ("icl_symbolic.api.theory", "theory_sweep"),
        ("icl_symbolic.api.simulation", "simulate_many"),
        ("icl_symbolic.cli.theory", "theory_sweep"),
        ("icl_symbolic.cli.coeffs", "hermite_coeffs"),
        ("icl_symbolic.cli.moments", "conditional_moments"),
    ):
        monkeypatch.setattr(f"{mod}.{name}", boom)


@pytest.mark.parametrize("argv, shown", BAD_NAMES, ids=lambda a: repr(a)[:40] if isinstance(a, list) else None)
def test_control_characters_in_output_names_are_refused_first(argv, shown, tmp_path, monkeypatch, capsys, no_work):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("icl-symbolic: error: --"), err
    assert "control character" in err and shown in err
    assert list(tmp_path.iterdir()) == []  # no file, no temporary, no folder


def test_the_name_rule_passes_ordinary_names_and_can_fail():
    io.check_name("résumé 2026 (v2).json", "--json-out")  # accents, spaces: fine
    io.check_name("données/曲線.csv", "--csv")
    with pytest.raises(ICLError, match="control character"):
        io.check_name("a\tb.csv", "--csv")
    with pytest.raises(ICLError, match="control character"):
        io.check_name("a\u0085b.csv", "--csv")  # C1 next line


def test_cache_folder_name_with_a_control_character(tmp_path):
    with pytest.raises(ICLError, match="--cache: .*control character"):
        SeedCache(tmp_path / "c\nd")
    assert list(tmp_path.iterdir()) == []


# -- figure --out: a folder, created with its parents, checked before any computation ------------
def test_figure_out_missing_folder_is_created_only_after_the_computation(tmp_path, monkeypatch, capsys):
    """docs/limits.md: a missing --out folder is accepted (its nearest existing ancestor must be a
    writable folder) and created, with its parents, only when the files are written."""
    seen = {}

    def stop(*a, **k):
        seen["computed"] = True
        raise ICLError("stopped after the check")

    monkeypatch.setattr(figures, "figure1_data", stop)
    out = tmp_path / "new" / "nested"
    assert main(["figure", "1", "--quick", "--out", str(out)]) == 2
    assert seen == {"computed": True}  # accepted: the computation started
    assert not (tmp_path / "new").exists()  # a failed run creates no folder
    assert "stopped after the check" in capsys.readouterr().err


@pytest.mark.slow
def test_figure_out_nested_folder_receives_the_three_files(tmp_path):
    out = tmp_path / "a" / "b"
    meta = figures.make_figure("1", out, quick=True, seeds=(0,), d=6, taus=[0.5, 3.0], n_test=500)
    assert sorted(p.name for p in out.iterdir()) == ["figure1.csv", "figure1.json", "figure1.png"]
    assert meta["files"]["png"] == str(out / "figure1.png")
