"""ics.reproduce: the library side of `icl-symbolic reproduce` (the command only parses and prints)."""

from __future__ import annotations

import json

import pytest

import icl_symbolic as ics


def test_reproduce_api_matches_the_command(tmp_path, capsys):
    from icl_symbolic.cli import main

    table = tmp_path / "t.csv"
    table.write_text("d,kappa,m,s\n4,1,0.9,0.05\n")  # one row: small and fast
    kw = dict(columns="d=d,kappa=kappa,mean=m,spread=s", spread="se", alpha=2, tau=2, rho="0.1", n_test=20)
    res = ics.reproduce(table, seeds=10, slip_rows=0, **kw)
    assert isinstance(res, ics.Reproduction) and len(res.rows) == 1 and res.rows[0].row.params["d"] == 4
    assert res.seeds == tuple(range(10)) and res.convention.name == "default"
    argv = ["reproduce", str(table), "--columns", kw["columns"], "--spread", "se", "--n-test", "20"]
    code = main([*argv, "--slip-rows", "0", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == res.judgement.exit_code and doc["points"][0]["ours"] == res.rows[0].ours
    assert doc["status"] == res.judgement.status and doc["mde_rel"] == res.judgement.mde_rel
    assert doc["verdict"] == res.verdict and doc["points"][0]["theirs"] == 0.9
    fig = ics.plot_reproduction(res, table="t.csv")
    assert fig.axes and "t.csv: f = g" in fig.axes[0].get_title()


@pytest.mark.parametrize(
    "table, kw, msg",
    [
        ("missing.csv", dict(columns="d=d,mean=m,spread=s"), "no such file"),
        (None, dict(columns="d=d,mean=m"), "spread"),
        (None, dict(columns="d=d,mean=m,spread=s", f="1/g"), "diverges"),
    ],
)
def test_reproduce_api_refuses_bad_input_before_any_simulation(tmp_path, table, kw, msg):
    path = tmp_path / "t.csv"
    path.write_text("d,m,s\n4,1.0,0.1\n")
    with pytest.raises(ics.ICLError, match=msg):
        ics.reproduce(table or path, spread="se", **kw)
