"""One parser of numbers in text (core.numbers.parse_float), used by every reader of numbers:
the command line, covariance specifications, the --curve CSV and the reproduce table."""

from __future__ import annotations

import pytest

from icl_symbolic.cli._args import parse_number
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.numbers import parse_float
from icl_symbolic.diagnosis.curves import parse_curve
from icl_symbolic.model.covariance import resolve_covariance
from icl_symbolic.studies.reproduce import parse_columns, read_table

BAD = ["１", "1_000", "٣", "inf", "-Infinity", "nan", "1e999", "", "0x10", "1,5", "2 3", "½"]


@pytest.mark.parametrize("text, value", [("2", 2.0), (" 0.5 ", 0.5), ("1e-3", 1e-3), ("-.25", -0.25), ("+3.", 3.0)])
def test_ascii_numbers_are_read(text, value):
    assert parse_float(text, "x") == value


@pytest.mark.parametrize("text", BAD)
def test_everything_else_is_one_clear_line(text):
    with pytest.raises(ICLError) as exc:
        parse_float(text, "--tau")
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith("--tau: ") and ("not a number" in msg or "not finite" in msg)


@pytest.mark.parametrize("text", BAD)
def test_the_command_line_uses_it(text):
    with pytest.raises(ICLError, match="^--rho: "):
        parse_number(text, "rho")


@pytest.mark.parametrize(
    "spec", ["powerlaw:１", "powerlaw:1_0", "powerlaw:inf", "spiked:0.5:５", "lowrank:٣", "spiked:nan:2"]
)
def test_covariance_specs_refuse_non_ascii_and_non_finite_numbers(spec):
    """Regression: float() accepted 'powerlaw:１' (a full-width digit) and 'powerlaw:1_0'."""
    with pytest.raises(ICLError) as exc:
        resolve_covariance(spec, 8)
    assert str(exc.value).startswith(f"covariance {spec!r}: ") and "\n" not in str(exc.value)


def test_covariance_specs_still_read_ascii_numbers():
    assert resolve_covariance("powerlaw:1", 4).params == (1.0,)
    assert resolve_covariance("spiked:0.5:2", 8).params[0] == 0.5


@pytest.mark.parametrize("cell", ["１", "1_0", "inf"])
def test_the_curve_reader_uses_it(cell):
    with pytest.raises(ICLError, match=r"^--curve: c.csv: data row 2: .* is not (a number|finite)"):
        parse_curve(f"tau,e\n1,0.5\n{cell},0.4\n", where="c.csv")
    assert parse_curve("tau,e\n1,0.5\n2,0.4\n").x.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("cell", ["１", "1_0", "nan"])
def test_the_reproduce_table_uses_it(cell):
    cols = parse_columns("d=d,mean=m,spread=s")
    with pytest.raises(ICLError, match=r"^row 1: column 'm': .* is not (a number|finite)"):
        read_table(f"d,m,s\n8,{cell},0.1\n", cols, dict(alpha=2, kappa=2, tau=2, rho=0.1, lam=0), "se")
