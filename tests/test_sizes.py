"""The one sizes function (model/sizes.py): the simulation's refusing reading, the finite-d theory's
clamped reading, the Setting's sizes computed once, and the memoised teacher."""

from __future__ import annotations

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
        with pytest.raises(ICLError, match=str(e).split(" is ")[0].replace("(", r"\(").replace(")", r"\)")):
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
