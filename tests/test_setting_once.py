"""One Setting, validated once: the one sizes function (model/sizes.py: the simulation's refusing
reading, the finite-d theory's clamped reading), the Setting's sizes computed once, ``replace``
validating only what changed (and agreeing with a new Setting), and the memoised teacher."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icl_symbolic.core import caches
from icl_symbolic.core.errors import ICLError
from icl_symbolic.engine.expr import teacher
from icl_symbolic.model.setting import ROUNDINGS, Setting
from icl_symbolic.model.sizes import Sizes, clamped_sizes, round_half_up, sizes
from icl_symbolic.simulation import simulator
from icl_symbolic.theory.finite_d import finite_sizes

DIMS = st.integers(2, 300)
RATIOS = st.floats(1e-3, 40.0, allow_nan=False, allow_infinity=False)


def _paper(d, alpha, kappa, tau):
    """The paper rounding written out independently: each count the nearest integer, halves up."""
    return tuple(round_half_up(x) for x in (alpha * d, kappa * d, tau * d * d))


@given(DIMS, RATIOS, RATIOS, RATIOS)
def test_clamped_sizes_is_the_paper_rounding_held_at_one(d, alpha, kappa, tau):
    got = clamped_sizes(d, alpha, kappa, tau)
    assert (got.ell, got.k, got.n) == tuple(max(1, x) for x in _paper(d, alpha, kappa, tau))


@given(DIMS, RATIOS, RATIOS, RATIOS)
def test_clamped_sizes_agrees_with_the_finite_d_theory_and_with_sizes_where_sizes_runs(d, alpha, kappa, tau):
    got = clamped_sizes(d, alpha, kappa, tau)
    assert (got.ell, got.k, got.n) == finite_sizes(d, alpha, kappa, tau)  # the theory's own reading
    if min(_paper(d, alpha, kappa, tau)) >= 1:
        assert sizes(d, alpha, kappa, tau) == got
    else:  # the simulation refuses what the theory clamps
        with pytest.raises(ICLError, match="increase"):
            sizes(d, alpha, kappa, tau)


@given(DIMS, RATIOS, RATIOS, RATIOS, st.sampled_from(ROUNDINGS))
def test_a_settings_sizes_are_the_sizes_of_its_fields(d, alpha, kappa, tau, rounding):
    try:
        want = sizes(d, alpha, kappa, tau, rounding)
    except ICLError as e:
        s = Setting("g", d=d, alpha=alpha, kappa=kappa, tau=tau, convention={"rounding": rounding})
        with pytest.raises(ICLError, match=re.escape(str(e))):
            s.sizes
        return
    s = Setting("g", d=d, alpha=alpha, kappa=kappa, tau=tau, convention={"rounding": rounding})
    assert s.sizes == want and s.sizes is s.sizes  # computed once


def test_sizes_is_one_function_reexported_where_it_was_defined():
    assert simulator.sizes is sizes and simulator.Sizes is Sizes
    with pytest.raises(ICLError, match="need the dimension d"):
        Setting("g", d=None).sizes
    with pytest.raises(ICLError, match="alpha must be a positive"):
        clamped_sizes(8, 0, 1, 1)


def test_replace_validates_the_changed_fields_and_keeps_the_rest():
    s = Setting("sin(g)", d=16, tau=4, C_train="powerlaw:0.9")
    r = s.replace(kappa="0.5")
    assert r.kappa == 0.5 and r == Setting("sin(g)", d=16, tau=4, kappa=0.5, C_train="powerlaw:0.9")
    assert r.sizes == sizes(16, 2, 0.5, 4) and s.sizes == sizes(16, 2, 2, 4)
    with pytest.raises(ICLError, match="kappa must be a positive finite number"):
        s.replace(kappa=-1)
    with pytest.raises(ICLError, match="d must be at least 2"):
        s.replace(d=1)
    moved = s.replace(C_train="identity")  # C_test followed C_train: it still does
    assert moved.C_test == "identity"
    assert s.replace(C_test="identity").replace(C_train="powerlaw:0.5").C_test == "identity"


def test_a_teacher_text_is_parsed_once_per_process_and_the_cache_can_be_emptied():
    a = teacher("sin(g) + g^2/7")
    assert teacher("sin(g) + g^2/7") is a and Setting("sin(g) + g^2/7").teacher is a
    assert teacher("sin(g) + g^2/7", label="other") is not a  # the label is part of the key
    caches.clear()
    b = teacher("sin(g) + g^2/7")
    assert b is not a and b == a


FIELD_VALUES = {
    "f": st.sampled_from(["g", "sin(g)", "tanh(g) + g^2/5", "relu(g)"]),
    "rho": st.one_of(st.floats(0, 3), st.sampled_from(["0.25", "1/3", -1.0])),
    "alpha": st.one_of(st.floats(0.01, 20), st.sampled_from(["0.5", 0, -2.0, float("nan")])),
    "kappa": st.floats(0.01, 20),
    "tau": st.one_of(st.floats(0.01, 20), st.just(float("inf"))),
    "lam": st.floats(0, 2),
    "d": st.one_of(st.none(), st.integers(0, 200)),
    "C_train": st.sampled_from(["identity", "powerlaw:0.5", 3]),
    "C_test": st.sampled_from([None, "identity", "spiked:2:1"]),
    "convention": st.sampled_from([None, "default", "letey2024", {"rounding": "floor-k"}, "nope"]),
    "features": st.sampled_from(["identity", "hermite:2", "hermite:9"]),
    "n_test": st.one_of(st.none(), st.integers(0, 5000)),
}


VALID_VALUES = {
    "f": st.sampled_from(["g", "sin(g)"]),
    "rho": st.floats(0, 3),
    "alpha": st.floats(0.01, 20),
    "kappa": st.floats(0.01, 20),
    "tau": st.floats(0.01, 20),
    "d": st.one_of(st.none(), st.integers(2, 200)),
    "C_train": st.sampled_from(["identity", "powerlaw:0.5"]),
    "C_test": st.sampled_from([None, "identity", "spiked:2:1"]),
    "convention": st.sampled_from([None, "letey2024", {"rounding": "floor-k"}]),
    "n_test": st.one_of(st.none(), st.integers(2, 5000)),
}


@given(st.fixed_dictionaries({}, optional=VALID_VALUES), st.fixed_dictionaries({}, optional=FIELD_VALUES))
def test_replace_is_a_new_setting_of_the_changed_fields(base, changes):
    """Generated settings and changes, valid or not: ``s.replace(**c)`` gives the Setting (or the one-line
    error) that constructing it from the merged fields gives, though it validates only ``c``."""
    try:
        s = Setting(**base)
    except (ICLError, ValueError):
        return
    merged = {f.name: getattr(s, f.name) for f in dataclasses.fields(s)}
    if "C_train" in changes and "C_test" not in changes and s.C_test == s.C_train:
        merged["C_test"] = None  # C_test followed C_train
    merged.update(changes)
    try:
        want = Setting(**merged)
    except (ICLError, ValueError) as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            s.replace(**changes)
        return
    got = s.replace(**changes)
    assert got == want and dataclasses.astuple(got) == dataclasses.astuple(want)
