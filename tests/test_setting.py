"""The Setting: one frozen record of the teacher, the paper's parameters and the conventions, carried by
the simulation, ladder and kernel-learner functions and stored once in their results."""

from __future__ import annotations

import dataclasses
import json

import pytest

import icl_symbolic as ics
from icl_symbolic.core.errors import ICLError
from icl_symbolic.kernel_learner.simulation import simulate_kernel
from icl_symbolic.model.setting import CONVENTIONS, FIELD_DOCS, FIELDS, Convention, Setting, as_setting
from icl_symbolic.simulation.simulator import simulate, simulate_many
from icl_symbolic.studies.extrapolate import LadderPoint, extrapolate


def test_defaults_are_the_commands_defaults():
    s = Setting()
    assert (s.f, s.rho, s.alpha, s.kappa, s.tau, s.lam, s.d) == ("g", 0.1, 2.0, 2.0, 2.0, 0.0, 64)
    assert s.C_train == s.C_test == "identity" and s.convention == CONVENTIONS["default"]
    assert s.features == "identity" and s.n_test is None and s.tasks == "gaussian"


@pytest.mark.parametrize(
    "setting",
    [
        Setting("sin(g)", d=32, tau=4, rho="0.25"),
        Setting("tanh(g)", d=None, alpha=0.5, kappa=3, lam=1e-3, C_train="powerlaw:0.9", C_test="identity"),
        Setting("g", convention="letey2024", n_test=123),
        Setting("g", convention={"assignment": "random", "ridge_floor": 1e-7}),
        Setting("g + (g^2-1)/sqrt(2)", features=" Hermite:2 ", d=4, alpha=16, kappa=4, tau=4),
    ],
)
def test_json_round_trip_is_exact(setting):
    text = json.dumps(setting.to_json())
    back = Setting.from_json(json.loads(text))
    assert back == setting and back.to_json() == setting.to_json()
    assert dataclasses.astuple(back) == dataclasses.astuple(setting)


def test_fields_are_normalised_on_construction():
    s = Setting("sin(g)", rho="0.25", alpha=1, d=8.0, features=" Hermite:2 ", convention="letey2024")
    assert s.rho == 0.25 and isinstance(s.alpha, float) and s.d == 8 and isinstance(s.d, int)
    assert s.features == "hermite:2" and isinstance(s.convention, Convention) and s.convention.name == "letey2024"
    assert Setting("g", C_train="powerlaw:1").C_test == "powerlaw:1"  # C_test follows C_train


@pytest.mark.parametrize(
    "kw, msg",
    [
        (dict(f="sin(g"), "found end of input (at column 6"),  # the ParseError of the teacher
        (dict(rho=-0.1), "rho must be a finite number >= 0, got -0.1"),
        (dict(rho="１"), "rho: '１' is not a number"),
        (dict(alpha=0), "alpha must be a positive finite number, got 0"),
        (dict(kappa=float("inf")), "kappa must be a positive finite number, got inf"),
        (dict(tau=True), "tau must be a positive finite number, got True"),
        (dict(lam=float("nan")), "lam must be a finite number >= 0, got nan"),
        (dict(d=1), "d must be at least 2, got 1"),
        (dict(d=2.5), "d must be an integer, got 2.5"),
        (dict(C_train=3), "C_train must be a covariance name"),
        (dict(convention="nope"), "unknown convention 'nope'"),
        (dict(features="hermite:4"), "hermite:K must be 1, 2 or 3"),
        (dict(features="hermite:２"), "hermite:K must be 1, 2 or 3"),  # a full-width digit
        (dict(n_test=1), "n_test must be an integer >= 2, got 1"),
    ],
)
def test_each_field_is_validated_with_one_clear_line(kw, msg):
    with pytest.raises(ICLError) as exc:
        Setting(**kw)
    assert msg in str(exc.value) and "\n" not in str(exc.value)


def test_replace_validates_and_keeps_c_test_following():
    s = Setting("sin(g)", d=16)
    t = s.replace(tau=4, C_train="powerlaw:1")
    assert (t.tau, t.C_train, t.C_test, s.tau) == (4.0, "powerlaw:1", "powerlaw:1", 2.0)
    assert s.replace(C_test="powerlaw:2").replace(C_train="powerlaw:1").C_test == "powerlaw:2"
    with pytest.raises(ICLError, match="alpha must be a positive"):
        s.replace(alpha=-1)
    with pytest.raises(ICLError, match="Setting has no field sigma"):
        s.replace(sigma=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.tau = 3


def test_json_refusals():
    with pytest.raises(ICLError, match="f must be a string"):
        Setting(lambda z: z).to_json()
    with pytest.raises(ICLError, match="Setting has no field extra"):
        Setting.from_json({**Setting().to_json(), "extra": 1})
    with pytest.raises(ICLError, match="unknown convention field"):
        Setting.from_json({**Setting().to_json(), "convention": {"name": "x", "colour": 1}})


def test_every_field_is_documented_with_the_papers_name():
    assert FIELDS == tuple(FIELD_DOCS)
    assert all(len(doc) > 20 for doc in FIELD_DOCS.values())
    for name in ("alpha", "kappa", "tau", "rho", "lam", "C_train", "C_test"):
        assert FIELD_DOCS[name].startswith(name), name
        assert f"``{name}``" in Setting.__doc__


def test_as_setting_refuses_a_setting_with_loose_fields_too():
    s = Setting("g")
    assert as_setting(s, d=None, tau=None) is s
    with pytest.raises(ICLError, match=r"\.replace\(tau=\.\.\.\)"):
        as_setting(s, tau=4)


def test_a_setting_and_the_loose_keywords_give_the_same_simulation():
    loose = simulate_many([dict(f="sin(g)", d=6, alpha=2, kappa=2, tau=2, rho=0.1, seeds=(0, 1), n_test=50)])[0]
    one = simulate(Setting("sin(g)", d=6, rho=0.1, n_test=50), seeds=(0, 1))
    assert [r.e.value for r in loose.runs] == [r.e.value for r in one.runs]
    # the result stores the setting once; the old attribute names read through it (deprecated: they warn)
    assert one.setting == loose.setting and one.setting.n_test == 50
    with pytest.warns(DeprecationWarning, match=r"read result\.setting\."):
        old = (one.teacher, one.d, one.tau, one.C_train, one.tasks, one.convention.name)
    assert old == (one.setting.label, 6, 2.0, "identity", "gaussian", "default")
    assert (one.setting.label, one.setting.d, one.setting.tau, one.setting.C_train, one.setting.tasks) == (
        "sin(g)",
        6,
        2.0,
        "identity",
        "gaussian",
    )
    assert {"setting"} <= {f.name for f in dataclasses.fields(one)}
    assert not {"alpha", "tau", "rho", "teacher"} & {f.name for f in dataclasses.fields(one)}
    # the JSON keys are those of before (other tools read them)
    js = one.to_json()
    assert {"teacher", "d", "alpha", "kappa", "tau", "rho", "lam", "C_train", "C_test", "n_test", "tasks"} <= set(js)
    assert js["convention"] == one.setting.convention.to_json()


def test_the_convention_travels_in_the_setting():
    res = simulate(Setting("g", d=6, convention="letey2024", n_test=20), seeds=(0, 1))
    assert res.setting.convention.name == "letey2024" and res.k == 12 and res.runs[0].e is not None


def test_kernel_learner_takes_a_setting():
    s = Setting("g + (g^2-1)/sqrt(2)", d=3, alpha=4, kappa=2, tau=4, features="hermite:2", n_test=300)
    a = simulate_kernel(s, seeds=(0, 1))
    b = simulate_kernel("g + (g^2-1)/sqrt(2)", 3, 4, 2, 4, 0.1, seeds=(0, 1), n_test=300)
    assert a.e_query.value == b.e_query.value and a.setting == b.setting and a.setting.features == "hermite:2"
    with pytest.raises(ICLError, match="isotropic tasks only"):
        simulate_kernel(s.replace(C_train="powerlaw:1"), seeds=(0, 1))
    with pytest.raises(ICLError, match="default convention only"):
        simulate_kernel(s.replace(convention="letey2024"), seeds=(0, 1))


def test_extrapolation_stores_the_setting():
    pts = [LadderPoint(d, 0.7 + 1.0 / d, 0.001) for d in (8, 16, 32)]
    s = Setting("sin(g)", d=None, tau=4, convention="letey2024")
    x = extrapolate(pts, 0.7, setting=s, error="idg")
    assert x.setting is s
    with pytest.warns(DeprecationWarning):
        assert x.tau == 4.0 and x.teacher == "sin(g)" and x.convention["name"] == "letey2024"
    js = x.to_json()
    assert (js["teacher"], js["tau"], js["error"], js["convention"]["rounding"]) == ("sin(g)", 4.0, "idg", "truncate")
    bare = extrapolate(pts, 0.7)
    with pytest.warns(DeprecationWarning):
        assert bare.setting is None and bare.teacher == "" and bare.tasks == "gaussian"


def test_the_api_takes_a_setting():
    s = ics.Setting("sin(g)", d=6, n_test=50)
    r = ics.simulate(s, seeds=2)
    assert r.setting == s and r.e_theory is not None and "e_idg_theory" in r.to_json()
    with pytest.raises(ICLError, match=r"setting\.replace\(tau=\.\.\.\)"):
        ics.simulate(s, tau=4)
