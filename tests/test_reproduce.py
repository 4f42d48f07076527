"""``icl-symbolic reproduce``: the shipped example table is reproduced at the default settings
with every row's MDE below 5 %; a copy with a planted convention slip and a copy shifted by 5 %
are not; a table whose rows the run cannot resolve is "inconclusive" (exit 3), never
"reproduced" (docs/reproduce.md).

The verdicts are z tests with a two-sided false-alarm budget of 1e-3 split over the
table's rows (the command's own budget; tests/_stats.py uses the same per-test rate).  The
simulations of the example rows (4 rows x 10 seeds, about 6 s) are shared by the module's
sim tests through the library's own split: the rows are simulated once and judged per table.
"""

import dataclasses
import json
from pathlib import Path

import pytest

from icl_symbolic.cli import main
from icl_symbolic.core.errors import ICLError
from icl_symbolic.studies.reproduce import (
    EXAMPLE_COLUMNS,
    PARAMS,
    RowRun,
    TableRow,
    judge_rows,
    parse_columns,
    read_table,
    reproduce,
    simulate_rows,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"
TABLE = DOCS / "reproduce-example.csv"
SLIPPED = DOCS / "reproduce-example-slipped.csv"
#: the example's command at its default settings (10 seeds per row, 100 test prompts, --mde 5)
ARGS = [
    "--f",
    "(g^2-1)/sqrt(2)",
    "--alpha",
    "2",
    "--tau",
    "8",
    "--rho",
    "0.1",
    "--convention",
    "letey2024",
    "--columns",
    EXAMPLE_COLUMNS,
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
    rows = read_table(TABLE.read_text(), cols, dict(alpha=2, tau=8, rho=0.1, lam=0))
    assert len(rows) == 4 and rows[0].params["d"] == 24 and rows[0].theirs_dof == 99
    std = float(TABLE.read_text().splitlines()[1].split(",")[3])
    assert rows[0].theirs_se == pytest.approx(std / 10)  # a per-run std (ddof 1) over 100 runs
    pop = read_table(TABLE.read_text(), cols, dict(alpha=2, tau=8, rho=0.1, lam=0), "std0")
    assert pop[0].theirs_se == pytest.approx(std / 99**0.5) and pop[0].theirs_dof == 99  # ddof 0
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
            [TableRow(1, dict(d=8, alpha=2, kappa=1, tau=2, rho=0.1, lam=0), 1.0, 0.1, None)],
            "g",
            run=RowRun(seeds=tuple(range(5))),
        )


def test_bad_input_exits_2_before_any_work(tmp_path, capsys):
    out = tmp_path / "r.csv"
    for bad in (
        ["--columns", "d=d,mean=icl_mean"],
        ["--seeds-per-row", "3"],
        ["--mde", "0"],
        ["--mde", "abc"],
        ["--spread", "sd"],
        ["--rounding", "up"],
        ["--false-alarm", "2"],
        ["--rho", "-1"],
        ["--columns", EXAMPLE_COLUMNS + ",tau=nope"],
    ):
        assert main(["reproduce", str(TABLE)] + ARGS + bad + ["--csv", str(out)]) == 2, bad
        assert not out.exists() and len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["reproduce", str(tmp_path / "none.csv")] + ARGS) == 2


@pytest.mark.sim
def test_the_example_table_is_reproduced_with_its_mde(tmp_path, capsys):
    out, js = tmp_path / "r.csv", tmp_path / "r.json"
    assert main(["reproduce", str(TABLE)] + ARGS + ["--json-out", str(js), "--csv", str(out)]) == 0
    text = capsys.readouterr().out  # the text names the MDE of every row and of the run
    assert sum(" row " in ln and " %, theory" in ln and "MDE " in ln for ln in text.splitlines()) == 4
    assert "reproduced: all 4 rows within their limits; MDE " in text
    doc = json.loads(js.read_text())
    assert doc["reproduced"] and doc["status"] == "agrees" and doc["convention"]["name"] == "letey2024"
    assert doc["mde_target"] == 0.05 and doc["spread_reading"].startswith("per-run sample standard deviation")
    assert all(abs(p["z"]) <= p["z_limit"] for p in doc["points"])
    assert all(0 < p["mde_rel"] <= 0.05 and p["slips"] == [] for p in doc["points"])
    assert doc["mde_rel"] == max(p["mde_rel"] for p in doc["points"])
    for p in doc["points"]:  # mde_rel is the absolute MDE over their value
        assert p["mde_rel"] == pytest.approx(p["mde"] / p["theirs"])
    assert len(out.read_text().splitlines()) == 5


@pytest.fixture(scope="module")
def example_runs():
    """The 4 example rows simulated once at the default settings (10 seeds, the command's seeds 0-9)."""
    from icl_symbolic.studies.reproduce import EXAMPLE

    rows = read_table(TABLE.read_text(), parse_columns(EXAMPLE_COLUMNS), {k: EXAMPLE.get(k) for k in PARAMS[1:]})
    return rows, simulate_rows(rows, EXAMPLE["f"], convention="letey2024", seeds=range(10))


@pytest.mark.sim
def test_a_five_percent_shift_of_the_clean_table_is_not_reproduced(example_runs):
    """Every row 5 % above the truth: with every row's MDE below 5 % (90 % power each, four rows)
    the shift cannot pass all four; a run too small to see it would say inconclusive instead."""
    rows, sims = example_runs
    shifted = [dataclasses.replace(r, theirs=1.05 * r.theirs, theirs_se=1.05 * r.theirs_se) for r in rows]
    res = judge_rows(shifted, sims, "letey2024")
    assert res.judgement.status != "agrees" and not res.ok
    assert res.judgement.status == "disagrees"  # the run resolves 5 %: the shift is seen, not just unresolved
    assert judge_rows(rows, sims, "letey2024").ok  # the same simulations reproduce the unshifted table


@pytest.mark.sim
def test_the_slipped_table_is_not_reproduced_at_the_default_settings(example_runs):
    rows, sims = example_runs
    slipped = read_table(
        SLIPPED.read_text(), parse_columns(EXAMPLE_COLUMNS), {k: rows[0].params[k] for k in PARAMS[1:]}
    )
    res = judge_rows(slipped, sims, "letey2024")
    assert res.judgement.status == "disagrees" and "NOT reproduced" in res.verdict


@pytest.mark.sim
def test_a_table_the_run_cannot_resolve_is_inconclusive_never_reproduced(tmp_path, capsys):
    """The old example's d = 8 row (tau = 2): per-run spread 35 % of the mean, so 10 seeds leave an
    MDE far above 5 % and even the table's own 100 runs alone (SE 3.5 %) cannot reach it."""
    table = tmp_path / "t.csv"
    table.write_text("d,kappa,icl_mean,icl_std,runs\n8,0.5,6.836777380626258,2.3711542444532636,100\n")
    argv = ["reproduce", str(table)] + [a if a != "8" else "2" for a in ARGS] + ["--json"]
    assert main(argv) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "inconclusive" and not doc["reproduced"] and doc["mde_rel"] > 0.05
    assert doc["seeds_to_target"] is None and "cannot reach the target" in doc["verdict"]
    assert main(argv[:-1] + ["--mde", "60"]) == 0  # a target the run reaches: reproduced
    assert "MDE" in capsys.readouterr().out
    # --seeds-per-row auto: the pilot's advice names no count (their own SE is the floor): no extension
    assert main(argv + ["--seeds-per-row", "auto"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["seeds"]) == 10 and doc["status"] == "inconclusive"


@pytest.mark.sim
def test_a_planted_convention_slip_is_flagged_and_named(capsys):
    rc = main(["reproduce", str(SLIPPED)] + ARGS + ["--json", "--slip-rows", "1"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and not doc["reproduced"] and doc["status"] == "disagrees"
    bad = [p for p in doc["points"] if not p["agrees"]]
    assert len(bad) >= 2
    tried = [p for p in bad if p["slips"]]
    assert len(tried) == 1
    best = tried[0]["slips"][0]
    assert best["explains"] and best["slip"] == "test_tasks: gaussian -> sphere"
    # the other convention slips do not explain it
    assert "test_tasks: gaussian -> sphere" in [s["slip"] for s in tried[0]["slips"] if s["explains"]]
    assert "test_tasks: gaussian -> sphere" in doc["verdict"]
