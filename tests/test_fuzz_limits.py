"""Fuzzing the limits (docs/limits.md): every input has a size limit, every long piece of work is
priced before it starts and refused past the ceiling without a budget.

The classes, each generated rather than listed:

* numbers written as text: full-width and other non-ASCII digits, ``_`` separators, exponents past
  float64, strings longer than ``MAX_NUMBER_CHARS`` (Python's ``int`` gives a traceback past 4300
  digits), ``inf``/``nan``: one grammar (``core.numbers.check_decimal``) for every command;
* sizes: every documented limit refuses limit + 1 and accepts the limit (files, lists, seeds,
  claims, covariance files);
* work: an estimate above the ceiling is refused without ``--max-seconds`` and runs with it.

"Before any work" is asserted by replacing the command's work function with one that fails the
test if it is called (the process returning with exit 2 and one line is the measure, not a timed
assertion).  Everything runs in this process; the subprocess checks at the end are ``heavy``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icl_symbolic.api import _args as api_args
from icl_symbolic.cli import _args as cli_args
from icl_symbolic.cli import main
from icl_symbolic.core import cost, limits
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.numbers import check_decimal, parse_float
from icl_symbolic.verification import claimfile

#: the profile's example count (tests/_examples.py); the patched fixtures hold for every example
FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class WorkStarted(Exception):
    """Raised by a patched work function: the command got past its validation."""


def _forbid(*a, **k):
    raise AssertionError("the work started although the input must be refused first")


def _started(*a, **k):
    raise WorkStarted


def _refused(argv, capsys, tmp_path, needle=None):
    """``main(argv)`` exits 2 with one stderr line, nothing on stdout, no output file."""
    out = tmp_path / "out.json"
    code = main([*argv, "--json-out", str(out)])
    cap = capsys.readouterr()
    assert code == 2, (argv[:3], cap.err)
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("icl-symbolic: error: "), cap.err
    assert cap.out == "" and not out.exists() and list(tmp_path.iterdir()) == []
    if needle is not None:
        assert needle in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------------------
# numbers written as text
# ---------------------------------------------------------------------------
_ASCII_NUMBER = st.builds(
    lambda sign, whole, frac, exp: f"{sign}{whole}{frac}{exp}",
    st.sampled_from(["", "-", "+"]),
    st.integers(0, 10**30).map(str),
    st.one_of(st.just(""), st.integers(0, 10**20).map(lambda f: f".{f}")),
    st.one_of(st.just(""), st.integers(-300, 300).map(lambda e: f"e{e}")),
)
#: non-ASCII decimal digits (full-width, Arabic-Indic, Devanagari, ...): Python's float accepts them
_FOREIGN_DIGIT = st.characters(whitelist_categories=("Nd",)).filter(lambda c: not "0" <= c <= "9")


def _with_foreign_digit(t):
    text, c, i = t
    i %= len(text) + 1
    return text[:i] + c + text[i:]


def _with_underscore(t):
    text, i = t
    digits = [k for k in range(1, len(text)) if text[k - 1].isdigit() and text[k].isdigit()]
    return text[: digits[i % len(digits)]] + "_" + text[digits[i % len(digits)] :] if digits else "1_0"


BAD_NUMBERS = st.one_of(
    st.tuples(_ASCII_NUMBER, _FOREIGN_DIGIT, st.integers(0, 60)).map(_with_foreign_digit),
    st.tuples(_ASCII_NUMBER, st.integers(0, 60)).map(_with_underscore),
    st.integers(309, 10**6).map(lambda e: f"1e{e}"),  # past float64: not finite
    st.integers(limits.MAX_NUMBER_CHARS, 5 * limits.MAX_NUMBER_CHARS).map(lambda n: "1." + "1" * n),
    st.sampled_from(["inf", "-Infinity", "nan", "NaN", "", "1e", ".", "0x1p3", "1,5"]),
)


@FAST
@given(_ASCII_NUMBER.filter(lambda t: len(t) <= limits.MAX_NUMBER_CHARS))
def test_ascii_numbers_within_the_limit_are_read_as_python_reads_them(text):
    assert parse_float(text, "--x") == float(text)
    assert check_decimal(f"  {text} ", "--value") == text


@FAST
@given(BAD_NUMBERS)
def test_every_other_number_text_is_one_line(text):
    with pytest.raises(ICLError) as exc:
        check_decimal(text, "--value")
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith("--value: ") and len(msg) < 300


def test_the_length_limit_is_exact():
    ok = "1." + "0" * (limits.MAX_NUMBER_CHARS - 2)
    assert check_decimal(ok, "--x") == ok
    with pytest.raises(ICLError, match="longer than the limit"):
        check_decimal(ok + "0", "--x")


@FAST
@given(BAD_NUMBERS)
def test_diagnose_value_refuses_before_any_work(monkeypatch, capsys, tmp_path_factory, text):
    from icl_symbolic.cli import diagnose

    monkeypatch.setattr(diagnose, "teacher_context", _forbid)
    monkeypatch.setattr(diagnose, "diagnose_value", _forbid)
    _refused(["diagnose", "sin(g)", "--value", text], capsys, tmp_path_factory.mktemp("o"), "--value: ")


@FAST
@given(BAD_NUMBERS, st.sampled_from(["tau", "alpha", "kappa", "rho", "lam"]))
def test_every_theory_parameter_uses_the_grammar(monkeypatch, capsys, tmp_path_factory, text, name):
    from icl_symbolic.api import theory

    monkeypatch.setattr(theory, "teacher_moments", _forbid)
    _refused(["theory", "sin(g)", f"--{name}", text], capsys, tmp_path_factory.mktemp("o"), f"--{name}: ")


def test_the_diagnose_traceback_of_a_100000_digit_value_is_one_line(monkeypatch, capsys, tmp_path):
    from icl_symbolic.cli import diagnose

    monkeypatch.setattr(diagnose, "teacher_context", _forbid)
    line = _refused(["diagnose", "sin(g)", "--value", "1." + "1" * 100_000], capsys, tmp_path)
    assert "100002 characters" in line and len(line) < 200


# ---------------------------------------------------------------------------
# sizes: limit + 1 refused, the limit accepted
# ---------------------------------------------------------------------------
class _CountingFile:
    def __init__(self, fh, asked):
        self.fh, self.asked = fh, asked

    def read(self, n=-1):
        self.asked.append(n)
        return self.fh.read(n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fh.close()


@pytest.mark.parametrize("limit", [0, 1, 10, 4096])
def test_files_are_read_bounded(limit, tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(limits, "open", lambda p, m: _CountingFile(open(p, m), asked), raising=False)
    exact, over = tmp_path / "exact.txt", tmp_path / "over.txt"
    exact.write_bytes(b"a" * limit)
    over.write_bytes(b"a" * (limit + 1))
    assert limits.read_text_limited(exact, limit, "f") == "a" * limit
    with pytest.raises(ICLError, match=f"larger than {limit} bytes"):
        limits.read_text_limited(over, limit, "f")
    with pytest.raises(ICLError, match=f"larger than {limit} bytes"):
        limits.read_text_limited("/dev/zero", limit, "f")  # an endless file costs limit + 1 bytes
    assert asked == [limit + 1] * 3


def test_a_claim_file_of_the_limit_is_read_one_byte_more_is_refused(tmp_path):
    shipped = (claimfile.default_files()[0]).read_bytes()
    pad = limits.MAX_CLAIM_FILE_BYTES - len(shipped) - 3
    exact = tmp_path / "exact.toml"
    exact.write_bytes(shipped + b"\n# " + b"x" * pad)
    assert exact.stat().st_size == limits.MAX_CLAIM_FILE_BYTES
    assert claimfile.load_file(exact)
    over = tmp_path / "over.toml"
    over.write_bytes(exact.read_bytes() + b"x")
    with pytest.raises(ICLError, match="larger than"):
        claimfile.load_file(over)


def test_verify_dev_zero_is_one_line(capsys, tmp_path):
    _refused(["verify", "/dev/zero"], capsys, tmp_path, "larger than")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_claims_per_file_and_per_run(n, tmp_path, monkeypatch):
    """The count limit (the real one is 1000: loading 1000 claims takes seconds, so it is lowered here)."""
    monkeypatch.setattr(claimfile, "MAX_CLAIMS", n)
    one = claimfile.default_files()[0]
    text = one.read_text(encoding="utf-8")
    count = text.count("[[claim]]")
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    if count <= n:
        assert len(claimfile.load_file(path)) == count
    else:
        with pytest.raises(ICLError, match=f"{count} is above the limit {n}"):
            claimfile.load_file(path)
    monkeypatch.setattr(claimfile, "MAX_CLAIMS", count)
    assert len(claimfile.load_claims([str(path)])) == count  # the limit itself is accepted
    other = tmp_path / "d.toml"
    other.write_text(text.replace('id = "', 'id = "other.'), encoding="utf-8")
    with pytest.raises(ICLError, match="claims in one run"):
        claimfile.load_claims([str(path), str(other)])


def test_lists_refuse_limit_plus_one_items_before_reading_any(monkeypatch):
    at = ",".join(["1"] * limits.MAX_GRID)
    assert cli_args.parse_grid(at, "tau").size == limits.MAX_GRID
    monkeypatch.setattr(cli_args, "parse_number", _forbid)
    with pytest.raises(ICLError, match=f"above the limit {limits.MAX_GRID}"):
        cli_args.parse_grid(at + ",1", "tau")
    with pytest.raises(ICLError, match=f"above the limit {limits.MAX_LIST_CHARS}"):
        cli_args.parse_grid("1" * (limits.MAX_LIST_CHARS + 1), "tau")


def test_api_grids_refuse_limit_plus_one_points_before_reading_any(monkeypatch):
    assert api_args.grid(["0.5"] * limits.MAX_GRID, "tau").size == limits.MAX_GRID
    monkeypatch.setattr(api_args, "number", _forbid)
    with pytest.raises(ICLError, match=f"above the limit {limits.MAX_GRID}"):
        api_args.grid(np.ones(limits.MAX_GRID + 1), "tau")


#: (command line without the count, the module whose work function is patched, its name)
_SEED_COMMANDS = [
    (["simulate", "tanh(g)", "--d", "8", "--seeds"], "icl_symbolic.cli.simulate", "simulate"),
    (["figure", "1", "--seeds"], "icl_symbolic.cli.figure", "figure"),
    (["extrapolate", "tanh(g)", "--d", "8,16", "--seeds"], "icl_symbolic.cli.extrapolate", "extrapolate"),
]


@pytest.mark.parametrize("argv, module, name", _SEED_COMMANDS, ids=lambda x: x[0] if isinstance(x, list) else "")
def test_seeds_limit(argv, module, name, monkeypatch, capsys, tmp_path):
    import importlib

    monkeypatch.setattr(importlib.import_module(module), name, _started)
    _refused([*argv, str(limits.MAX_SEEDS + 1)], capsys, tmp_path, f"above the limit {limits.MAX_SEEDS}")
    with pytest.raises(WorkStarted):  # the limit itself is accepted (and then priced by the cost model)
        main([*argv, str(limits.MAX_SEEDS), "--json-out", str(tmp_path / "x.json")])


def test_covariance_file_size_from_its_header(tmp_path, monkeypatch):
    from icl_symbolic.model import covariance

    at, over = tmp_path / "at.npy", tmp_path / "over.npy"
    np.save(at, np.ones(covariance.MAX_COV_D))
    np.save(over, np.ones(covariance.MAX_COV_D + 1))
    assert covariance.resolve_covariance(str(at)).d == covariance.MAX_COV_D
    monkeypatch.setattr(np, "load", _forbid)  # refused from the header, before the data is read
    with pytest.raises(ICLError, match=f"above the limit {covariance.MAX_COV_D}"):
        covariance.resolve_covariance(str(over))


def test_a_covariance_matrix_past_the_silent_ceiling_needs_a_budget(tmp_path, monkeypatch):
    from icl_symbolic.model import covariance

    path = tmp_path / "c.npy"
    np.save(path, np.eye(10))
    assert covariance.resolve_covariance(str(path)).d == 10
    # 10^3 d^3 priced at 1 s each (1000 s): past the 30 s ceiling of silent work, under the 1 h one
    monkeypatch.setitem(cost.SECONDS_PER, "cov_eigh", 1.0)
    monkeypatch.setattr(np, "load", _forbid)
    with pytest.raises(ICLError, match="above the ceiling of 30 s without a budget"):
        covariance.resolve_covariance(str(path))
    monkeypatch.undo()
    monkeypatch.setitem(cost.SECONDS_PER, "cov_eigh", 1.0)
    with cost.budget(2000.0):
        assert covariance.resolve_covariance(str(path)).d == 10


@pytest.mark.parametrize("family", ["identity", "powerlaw:1", "spiked:0.5:3"])
def test_covariance_family_dimension(family, monkeypatch):
    from icl_symbolic.model import covariance

    assert covariance.resolve_covariance("identity", limits.MAX_SPECTRUM_D).d == limits.MAX_SPECTRUM_D
    monkeypatch.setattr(covariance, "_family", _forbid)  # refused before any array is made
    with pytest.raises(ICLError, match=f"above the limit {limits.MAX_SPECTRUM_D}"):
        covariance.resolve_covariance(family, limits.MAX_SPECTRUM_D + 1)


# ---------------------------------------------------------------------------
# work: the ceiling and the budget
# ---------------------------------------------------------------------------
@FAST
@given(st.floats(1.0, 1e9), st.floats(0.01, 0.99))
def test_the_ceiling_refuses_and_a_budget_allows(seconds, share):
    est = cost.Estimate(seconds, 1, "units", "work", "less")
    with cost.budget(seconds / share):
        est.check()  # inside the budget
    with cost.budget(seconds * share), pytest.raises(ICLError, match="above the budget --max-seconds") as exc:
        est.check()
    hint = float(str(exc.value).split("pass --max-seconds ")[1].split()[0])
    assert hint >= seconds  # the suggested budget runs it
    with cost.budget(hint):
        est.check()
    if seconds > limits.CEILING_SECONDS:
        with pytest.raises(ICLError, match="above the ceiling"):
            est.announce(None)  # --quiet does not skip the ceiling


@pytest.mark.heavy
def test_the_budget_reaches_worker_processes():
    from icl_symbolic.core.parallel import map_sweep

    with cost.budget(12345.0):
        assert map_sweep(_budget_here, [0, 1], jobs=2) == [12345.0, 12345.0]
        assert map_sweep(_budget_here, [0], jobs=1) == [12345.0]
    assert map_sweep(_budget_here, [0, 1], jobs=2) == [None, None]


def _budget_here(_):
    return cost.current_budget()


#: commands whose first priced work is refused past the ceiling: (argv, module, work function)
_PRICED = [
    (["theory", "sin(g)", "--tau", "0.5:4:50"], "icl_symbolic.api.theory", "teacher_moments"),
    (["kernel", "sin(g)", "--tau", "0.5:4:50"], "icl_symbolic.api.kernel_learner", "kernel_curve"),
    (["simulate", "tanh(g)", "--d", "8", "--seeds", "2"], "icl_symbolic.simulation.simulator", "map_sweep"),
]


@pytest.mark.parametrize("argv, module, name", _PRICED, ids=lambda x: x[0] if isinstance(x, list) else "")
def test_past_the_ceiling_refused_before_work_and_a_budget_runs_it(argv, module, name, monkeypatch, capsys, tmp_path):
    import importlib

    monkeypatch.setattr(importlib.import_module(module), name, _forbid)
    monkeypatch.setattr(limits, "CEILING_SECONDS", 1e-9)  # every estimate is now past the ceiling
    _refused(argv, capsys, tmp_path, "--max-seconds")
    monkeypatch.setattr(importlib.import_module(module), name, _started)
    with pytest.raises(WorkStarted):
        main([*argv, "--max-seconds", "1e6", "--quiet"])
    capsys.readouterr()
    _refused([*argv, "--max-seconds", "0"], capsys, tmp_path, "--max-seconds: ")


def test_theory_order1_past_the_ceiling_is_refused_before_any_point(monkeypatch, capsys, tmp_path):
    from icl_symbolic.theory import finite_d

    monkeypatch.setattr(finite_d, "map_sweep", _forbid)
    monkeypatch.setattr(limits, "CEILING_SECONDS", 1e-9)
    _refused(["theory", "sin(g)", "--order", "1", "--d", "64", "--tau", "2"], capsys, tmp_path, "--max-seconds")


# ---------------------------------------------------------------------------
# validated before any work
# ---------------------------------------------------------------------------
@FAST
@given(st.integers(-3, 1))
def test_theory_order1_refuses_d_below_2(capsys, tmp_path_factory, d):
    _refused(["theory", "sin(g)", "--order", "1", "--d", str(d), "--tau", "2"], capsys, tmp_path_factory.mktemp("o"))


@FAST
@given(st.integers(2, 300), st.booleans())
def test_simulate_order1_refuses_the_peak_before_training(monkeypatch, capsys, tmp_path_factory, d, at_n_equals_p):
    from icl_symbolic.cli import simulate

    monkeypatch.setattr(simulate, "simulate", _forbid)
    tau = repr((d + 1) / d) if at_n_equals_p else "1"  # n = round(tau d^2) = d(d+1), or the limit's peak
    _refused(
        ["simulate", "sin(g)", "--order", "1", "--d", str(d), "--tau", tau, "--seeds", "2"],
        capsys,
        tmp_path_factory.mktemp("o"),
        "diverges",
    )


@pytest.mark.parametrize("depth", [8, 64])
def test_nested_trig_is_not_rewritten_by_the_exact_rules(depth, monkeypatch):
    """sin(sin(...)) has no closed form in the exact rules; rewriting it through exponentials doubles
    the argument per level (2^64 nodes at the nesting limit): refused before the rewrite."""
    import sympy

    from icl_symbolic.engine import gauss
    from icl_symbolic.engine.expr import parse_expr

    monkeypatch.setattr(gauss, "_trig_to_exp", _forbid)
    e = parse_expr("sin(" * depth + "g" + ")" * depth)
    with pytest.raises(gauss._Unsupported, match="non-polynomial argument"):
        gauss._terms(e)
    monkeypatch.undo()
    assert len(gauss._terms(sympy.sin(3 * parse_expr("g")) * parse_expr("g"))) > 0  # polynomial: exact


# ---------------------------------------------------------------------------
# the commands as a user runs them (subprocesses: heavy)
# ---------------------------------------------------------------------------
@pytest.mark.heavy
@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "/dev/zero"],
        ["diagnose", "sin(g)", "--value", "1." + "1" * 100_000],
        ["diagnose", "sin(g)", "--value", "１"],
        ["theory", "sin(g)", "--order", "1", "--d", "1", "--tau", "2"],
        ["figure", "1", "--seeds", "1000000"],
    ],
    ids=lambda a: " ".join(a)[:40],
)
def test_commands_refuse_in_one_line(argv, tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run(
        [sys.executable, "-m", "icl_symbolic", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, p.stderr[-500:]
    assert list(tmp_path.iterdir()) == []
