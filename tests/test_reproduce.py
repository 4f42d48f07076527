"""``icl-symbolic reproduce``: the shipped example table is reproduced; a copy with a planted
convention slip is flagged and the slip is named (docs/reproduce.md).

The verdicts are z tests with a two-sided false-alarm budget of 1e-3 split over the
table's rows (the command's own budget; tests/_stats.py uses the same per-test rate).
"""

import json
from pathlib import Path

import pytest

from icl_symbolic.cli import main
from icl_symbolic.core.errors import ICLError
from icl_symbolic.studies.reproduce import EXAMPLE_COLUMNS, TableRow, parse_columns, read_table, reproduce

DOCS = Path(__file__).resolve().parent.parent / "docs"
TABLE = DOCS / "reproduce-example.csv"
SLIPPED = DOCS / "reproduce-example-slipped.csv"
ARGS = [
    "--f",
    "(g^2-1)/sqrt(2)",
    "--alpha",
    "2",
    "--tau",
    "2",
    "--rho",
    "0.1",
    "--convention",
    "letey2024",
    "--columns",
    EXAMPLE_COLUMNS,
    "--seeds-per-row",
    "40",
    "--n-test",
    "20",
    "--quiet",
]


def test_provenance_of_the_example_tables():
    prov = json.loads((DOCS / "reproduce-example.json").read_text())
    assert prov["generator"].startswith("python benchmarks/make_reproduce_example.py")
    assert prov["tables"]["reproduce-example.csv"]["convention"]["name"] == "letey2024"
    assert prov["tables"]["reproduce-example-slipped.csv"]["planted_slip"] == "test_tasks: gaussian -> sphere"
    assert (Path(__file__).resolve().parent.parent / "benchmarks" / "make_reproduce_example.py").is_file()


def test_reading_tables():
    cols = parse_columns(EXAMPLE_COLUMNS)
    rows = read_table(TABLE.read_text(), cols, dict(alpha=2, tau=2, rho=0.1, lam=0))
    assert len(rows) == 4 and rows[0].params["d"] == 8 and rows[0].theirs_dof == 99
    assert rows[0].theirs_se == pytest.approx(float(TABLE.read_text().splitlines()[1].split(",")[3]) / 10)
    se = read_table(
        "d,m,s\n8,1.0,0.1\n", parse_columns("d=d,mean=m,spread=s"), dict(alpha=2, kappa=1, tau=2, rho=0.1, lam=0), "se"
    )
    assert se[0].theirs_se == 0.1 and se[0].theirs_dof is None
    for text, fixed, spread, msg in [
        ("d,m,s\n8,1,0.1\n", dict(alpha=2, kappa=1, tau=2, rho=0.1, lam=0), "std", "runs"),
        ("d,m,s\n8,x,0.1\n", dict(alpha=2, kappa=1, tau=2, rho=0.1, lam=0), "se", "not a number"),
        ("d,m,s\n8.5,1,0.1\n", dict(alpha=2, kappa=1, tau=2, rho=0.1, lam=0), "se", "integer"),
        ("d,m,s\n8,1,0\n", dict(alpha=2, kappa=1, tau=2, rho=0.1, lam=0), "se", "spread"),
        ("d,m,s\n8,1,0.1\n", dict(alpha=2, tau=2, rho=0.1, lam=0), "se", "kappa"),
        ("d,m\n8,1\n", dict(alpha=2, kappa=1, tau=2, rho=0.1, lam=0), "se", "no column"),
    ]:
        with pytest.raises(ICLError, match=msg):
            read_table(
                text, parse_columns("d=d,mean=m,spread=s" + (",runs=r" if msg == "no column" else "")), fixed, spread
            )
    with pytest.raises(ICLError):
        parse_columns("d=d,mean=m")
    with pytest.raises(ICLError):
        reproduce(
            [TableRow(1, dict(d=8, alpha=2, kappa=1, tau=2, rho=0.1, lam=0), 1.0, 0.1, None)], "g", seeds=range(5)
        )


def test_bad_input_exits_2_before_any_work(tmp_path, capsys):
    out = tmp_path / "r.csv"
    for bad in (
        ["--columns", "d=d,mean=icl_mean"],
        ["--seeds-per-row", "3"],
        ["--rounding", "up"],
        ["--false-alarm", "2"],
        ["--rho", "-1"],
        ["--columns", EXAMPLE_COLUMNS + ",tau=nope"],
    ):
        assert main(["reproduce", str(TABLE)] + ARGS + bad + ["--csv", str(out)]) == 2, bad
        assert not out.exists() and len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["reproduce", str(tmp_path / "none.csv")] + ARGS) == 2


@pytest.mark.sim
def test_the_example_table_is_reproduced(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["reproduce", str(TABLE)] + ARGS + ["--json", "--csv", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["reproduced"] and doc["convention"]["name"] == "letey2024"
    assert all(abs(p["z"]) <= p["z_limit"] for p in doc["points"])
    assert all(p["mde"] > 0 and p["slips"] == [] for p in doc["points"])
    assert len(out.read_text().splitlines()) == 5


@pytest.mark.sim
def test_a_planted_convention_slip_is_flagged_and_named(capsys):
    rc = main(["reproduce", str(SLIPPED)] + ARGS + ["--json", "--slip-rows", "1"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and not doc["reproduced"]
    bad = [p for p in doc["points"] if not p["agrees"]]
    assert len(bad) >= 2
    tried = [p for p in bad if p["slips"]]
    assert len(tried) == 1
    best = tried[0]["slips"][0]
    assert best["explains"] and best["slip"] == "test_tasks: gaussian -> sphere"
    # the other convention slips do not explain it
    assert [s["slip"] for s in tried[0]["slips"] if s["explains"]] == ["test_tasks: gaussian -> sphere"]
    assert "test_tasks: gaussian -> sphere" in doc["verdict"]
