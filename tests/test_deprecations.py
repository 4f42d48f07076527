"""The history shims warn for one release, and the error class is catchable as a ValueError."""

import warnings

import mpmath
import numpy as np
import pytest

from icl_symbolic.core.errors import ClaimFileError, ICLError, ParseError, ValidityError
from icl_symbolic.engine import expr as expr_module
from icl_symbolic.engine.expr import parse_expr, teacher
from icl_symbolic.model.setting import PARAMETERS, Setting, SettingView
from icl_symbolic.verification.claimfile import load_file, shipped_derivations


class _Result(SettingView):
    def __init__(self, setting):
        self.setting = setting


@pytest.mark.parametrize("cls", [ICLError, ParseError, ValidityError, ClaimFileError])
def test_every_user_error_is_a_value_error(cls):
    assert issubclass(cls, ValueError)


def test_a_parse_refusal_is_caught_by_except_value_error():
    with pytest.raises(ValueError, match="unexpected character"):
        parse_expr("__import__('os')")


def test_a_refusal_inside_a_guard_that_catches_value_error_keeps_its_message():
    """The real-valuedness guard skips points where f raises ValueError; an ICLError (now a ValueError)
    raised by the teacher itself is re-raised with its own message instead of being skipped."""

    def f(z):
        if isinstance(z, mpmath.mpf) and z < -7:
            raise ICLError("refused by the teacher itself")
        return mpmath.tanh(z) if isinstance(z, mpmath.mpf) else np.tanh(z)

    with pytest.raises(ICLError, match="refused by the teacher itself"):
        expr_module._check_real_valued(teacher(f))


def test_claim_full_warns_and_reads_the_tier():
    claims = load_file(shipped_derivations() / "08_fig1.toml")
    assert {c.tier for c in claims} >= {"quick"}
    for c in claims:
        with pytest.warns(DeprecationWarning, match='tier != "quick"'):
            assert c.full == (c.tier != "quick")


def test_setting_view_attributes_warn_outside_the_package_and_name_the_replacement():
    s = Setting("sin(g)", alpha=2.0, tau=3.0, d=8)
    res = _Result(s)
    with pytest.warns(DeprecationWarning, match=r"result\.setting\.tau"):
        assert res.tau == 3.0
    with pytest.warns(DeprecationWarning, match=r"result\.setting\.label"):
        assert res.teacher == s.label
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the package's own reads (the JSON keys) stay silent
        assert res.setting_items() == {k: getattr(s, k) for k in PARAMETERS}
