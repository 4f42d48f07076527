"""Simulation conventions as named options (docs/conventions.md).

Each option must change what it should and nothing else: with the same seed, a run
whose option does not apply (k = 1 for the assignment, sizes that both roundings give,
a ridge floor below the ridge) is bit-identical, and a run where it applies keeps the
parts the option does not touch (the trained Gamma when only the test law changes).
"""

import json

import numpy as np
import pytest

from icl_symbolic.cli import main
from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.expr import teacher
from icl_symbolic.simulation.simulator import (
    CONVENTIONS,
    Convention,
    resolve_convention,
    simulate_many,
    sizes,
)

KW = dict(f="g", alpha=2, tau=2, rho=0.1, n_test=200, keep_gamma=True)


def _run(d=8, kappa=0.5, seeds=(0, 1), **kw):
    return simulate_many([dict(d=d, kappa=kappa, seeds=seeds, **{**KW, **kw})])[0]


def _same(r1, r2):
    return all(
        np.array_equal(a.Gamma, b.Gamma)
        and float(a.e) == float(b.e)
        and float(a.e_idg) == float(b.e_idg)
        and float(a.e_mc) == float(b.e_mc)
        for a, b in zip(r1.runs, r2.runs)
    )


def test_sizes_rounding():
    assert sizes(20, 2, 0.33, 2) == sizes(20, 2, 0.33, 2, "paper")
    s = sizes(20, 2, 0.33, 2, "floor-k")
    assert (s.k, s.n) == (6, 798) and s.n % s.k == 0
    assert sizes(16, 2, 0.5, 2, "floor-k") == sizes(16, 2, 0.5, 2)  # both rules agree here
    assert sizes(10, 2, 0.35, 2).k == 4 and sizes(10, 2, 0.35, 2, "floor-k").k == 3
    with pytest.raises(ICLError):
        sizes(10, 2, 0.05, 2, "floor-k")  # floor(0.5) = 0 tasks
    with pytest.raises(ICLError):
        sizes(10, 2, 1, 2, "ceil")


def test_resolve_convention_and_presets():
    assert resolve_convention() == CONVENTIONS["default"] == Convention()
    L = resolve_convention("letey2024")
    assert (L.assignment, L.train_tasks, L.test_tasks, L.rounding, L.ridge_floor) == (
        "round-robin",
        "sphere",
        "gaussian",
        "truncate",
        1e-6,
    )
    assert resolve_convention("letey2024", assignment="random").name == "letey2024+assignment=random"
    assert resolve_convention("letey2024", assignment="round-robin") is L  # no change, same preset
    assert resolve_convention(tasks="sphere").tasks == "sphere"
    assert resolve_convention("letey2024", tasks="gaussian").train_tasks == "gaussian"
    assert resolve_convention({"assignment": "random"}).name == "custom"
    for bad in (
        dict(convention="nope"),
        dict(assignment="shuffle"),
        dict(train_tasks="cube"),
        dict(rounding="ceil"),
        dict(ridge_floor=-1.0),
        dict(ridge_floor=float("nan")),
        dict(convention={"colour": 1}),
    ):
        with pytest.raises(ICLError):
            resolve_convention(**bad)


@pytest.mark.sim
def test_default_convention_spelled_out_is_bit_identical():
    explicit = dict(
        assignment="round-robin", train_tasks="gaussian", test_tasks="gaussian", rounding="paper", ridge_floor=0.0
    )
    assert _same(_run(), _run(convention=explicit))
    assert _same(_run(), _run(convention="default"))


@pytest.mark.sim
def test_assignment_changes_training_only_where_it_applies():
    # k = 1: random and round robin assign the same (only) task -> identical runs
    assert _same(_run(kappa=1 / 8), _run(kappa=1 / 8, convention={"assignment": "random"}))
    a, b = _run(), _run(convention={"assignment": "random"})
    assert not np.array_equal(a.runs[0].Gamma, b.runs[0].Gamma)
    # the assignment stream is a fifth stream: the training tasks are the same, so the IDG functional of
    # the round-robin Gamma evaluated on the random run's tasks equals the round-robin run's own e_idg
    from icl_symbolic.model.covariance import resolve_covariance, sample_tasks
    from icl_symbolic.simulation.simulator import idg_error

    tasks = sample_tasks(
        resolve_covariance("identity", 8), 4, np.random.default_rng(np.random.SeedSequence(0).spawn(5)[0])
    )
    assert float(idg_error(a.runs[0].Gamma, teacher("g"), 0.1, 16, tasks)) == float(a.runs[0].e_idg)
    assert b.convention.assignment == "random" and b.to_json()["convention"]["assignment"] == "random"


@pytest.mark.sim
def test_task_laws_change_what_they_should():
    base = _run()
    test_sphere = _run(convention={"test_tasks": "sphere"})
    for r0, r1 in zip(base.runs, test_sphere.runs):
        assert np.array_equal(r0.Gamma, r1.Gamma) and float(r0.e_idg) == float(r1.e_idg)  # training untouched
        assert float(r0.e) != float(r1.e)  # the test error moves
    train_sphere = _run(convention={"train_tasks": "sphere"})
    assert not np.array_equal(base.runs[0].Gamma, train_sphere.runs[0].Gamma)
    assert test_sphere.tasks == "gaussian/sphere" and train_sphere.tasks == "sphere/gaussian"


@pytest.mark.sim
def test_rounding_and_ridge_floor():
    # both rules give k = 4, n = 128 at d = 8, kappa = 0.5, tau = 2: identical
    assert _same(_run(), _run(convention={"rounding": "floor-k"}))
    r = _run(d=10, kappa=0.35, convention={"rounding": "floor-k"})
    assert (r.k, r.n) == (3, 201) and _run(d=10, kappa=0.35).k == 4
    # a floor below the ridge does not apply; above it, it is the ridge used
    assert _same(_run(lam=0.01), _run(lam=0.01, convention={"ridge_floor": 1e-3}))
    floored = _run(convention={"ridge_floor": 0.01})
    assert _same(floored, _run(lam=0.01))
    assert floored.lam == 0.0 and floored.convention.ridge_floor == 0.01


@pytest.mark.sim
def test_cli_records_the_convention(tmp_path, capsys):
    csv = tmp_path / "s.csv"
    assert (
        main(
            [
                "simulate",
                "g",
                "--d",
                "8",
                "--kappa",
                "0.5",
                "--seeds",
                "2",
                "--n-test",
                "100",
                "--convention",
                "letey2024",
                "--json",
                "--quiet",
                "--csv",
                str(csv),
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["points"][0]["convention"]["name"] == "letey2024"
    header, row = csv.read_text().splitlines()[:2]
    cols = dict(zip(header.split(","), row.split(",")))
    assert (cols["convention"], cols["assignment"], cols["rounding"], cols["train_tasks"]) == (
        "letey2024",
        "round-robin",
        "truncate",
        "sphere",
    )


def test_cli_bad_convention_input_exits_2_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "x.csv"
    for bad in (["--ridge-floor", "-1"], ["--ridge-floor", "abc"], ["--kappa", "0.05", "--rounding", "floor-k"]):
        assert main(["simulate", "g", "--d", "10", "--csv", str(out)] + bad) == 2, bad
        assert not out.exists()
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
