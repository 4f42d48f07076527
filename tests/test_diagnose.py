"""Scale-mismatch diagnosis (icl_symbolic.diagnosis.scale).

Paper: Eq. (8), p. 3; Result 1, Eq. (9), p. 3; Sec. 3 text on Fig. 1, p. 3.
"""

import mpmath
import pytest
import sympy
from hypothesis import example, given
from hypothesis import strategies as st

from icl_symbolic.core.errors import ICLError
from icl_symbolic.diagnosis import scale as D

SIN = dict(a1=mpmath.exp(mpmath.mpf(-1) / 2), E_f2=(1 - mpmath.exp(-2)) / 2, rho=mpmath.mpf("0.1"))


def test_family_merges_equal_rational_functions():
    fam = D.family()
    keys = [D.expr_key(c.expr) for c in fam]
    assert len(keys) == len(set(keys))
    c = D.match_family("rho_nonlinear/a1^2 + 1")
    assert c.name == "rho_f/a1^2" and "(a1^2 + rho_nonlinear)/a1^2" in c.aliases
    assert D.match_family("a1^2/rho_f").description == "the signal fraction a1^2/rho_f"
    assert D.match_family("rho_f^3") is None


def test_family_expr_definitions():
    assert D.family_expr("rho_f/a1^2 - rho_nonlinear/a1^2") == 1
    assert D.family_expr("rho_f - rho_nonlinear") == D.a1**2
    with pytest.raises(ICLError):
        D.family_expr("rho_f + __x")


def test_fig1_caption_diagnosis_reads_as_required():
    """The issue's wording, in substance: 1.447029 is rho_f/a1^2, the normalised total label
    second moment; the equivalence needs rho_nonlinear/a1^2 = 0.447029; they differ by exactly 1."""
    d = D.diagnose_value("1.447029", f="sin(g)", rho_value="0.1", required="rho_nonlinear/a1^2")
    assert d.best.name == "rho_f/a1^2"
    assert d.relation() == 1  # proved symbolically
    text = d.summary()
    for piece in (
        "rho_f/a1^2",
        "(a1^2 + rho_nonlinear)/a1^2",
        "normalised total label second moment",
        "needs rho_nonlinear/a1^2",
        "0.4470293765",
        "exactly 1 more than",
        "rho_f/a1^2 - rho_nonlinear/a1^2 = 1",
    ):
        assert piece in text, piece
    # the closed forms come from the exact Hermite values of sin
    assert d.matches[0].exact is not None and d.required.exact is not None
    assert sympy.simplify(d.matches[0].exact - d.required.exact) == 1


def test_diagnose_free_value_names_intended_quantity():
    d = D.diagnose_value("1.447", values=SIN)  # 3 decimals: tol 5e-4
    assert float(d.tol) == 5e-4
    assert [m.candidate.name for m in d.matches] == ["rho_f/a1^2"]
    meant = [m.candidate.name for m, _ in d.related]
    assert meant[0] == "rho_nonlinear/a1^2"  # the off-by-one comes first
    assert "exactly 1 more than" in d.related[0][1]


def test_diagnose_legend_value_is_the_required_quantity():
    d = D.diagnose_value("0.447", values=SIN, required="rho_nonlinear/a1^2")
    assert d.best.name == "rho_nonlinear/a1^2"
    assert "this is the quantity the derivation needs" in d.summary()


def test_negative_control_no_match():
    d = D.diagnose_value("0.9999", values=SIN, tol="1e-6")
    assert d.matches == [] and d.best is None
    assert "matches no quantity" in d.summary() and d.nearest


def test_a1_zero_teacher_skips_undefined_ratios():
    vals = dict(a1=mpmath.mpf(0), E_f2=mpmath.mpf(2), rho=mpmath.mpf("0.1"))
    d = D.diagnose_value("2.1", values=vals)
    assert d.best.name == "rho_f"  # = rho_nonlinear when a1 = 0; both names are accepted
    assert all(m.value is not None and mpmath.isfinite(m.value) for m in d.nearest)


def test_tanh_numbers():
    d = D.diagnose_value("0.127415", f="tanh(g)", rho_value="0.1")
    assert d.best.name == "rho_nonlinear"
    d = D.diagnose_value("0.027415", f="tanh(g)", rho_value="0.1")
    assert d.best.name == "rho_nonlinear - rho"


def test_explain_ratio_finds_a1_squared():
    a1sq = float(SIN["a1"] ** 2)
    d, what = D.explain_ratio(0.5 * a1sq, 0.5, SIN, tol=1e-9)
    assert what == "ratio computed/claimed" and d.best.name == "a1^2"
    d, what = D.explain_ratio(0.5, 0.5 * a1sq, SIN, tol=1e-9)
    assert what == "ratio claimed/computed" and d.best.name == "a1^2"
    assert D.explain_ratio(0.5, 0.123456789, SIN, tol=1e-12) == (None, None)


def test_tolerance_from_text_rejects_garbage():
    assert D.tolerance_from_text("2") == mpmath.mpf("0.5")
    with pytest.raises(ICLError):
        D.tolerance_from_text("1.4.4")
    with pytest.raises(ICLError):
        D.tolerance_from_text("nan")


@given(a1=st.floats(0.05, 3), extra=st.floats(0.01, 5), rho=st.floats(0.0, 2), index=st.integers(0, 10_000))
@example(a1=0.6065306597126334, extra=0.0645, rho=0.1, index=0)
def test_every_candidate_is_recognised(a1, extra, rho, index):
    """Property: the value of any family member is diagnosed as a candidate with that value.

    E_f2 = a1^2 + extra keeps rho_nonlinear - rho = extra > 0 (as it must be, Eq. 8).
    Coincidences between distinct candidates are possible, so the check is on the value.
    """
    vals = dict(a1=mpmath.mpf(a1), E_f2=mpmath.mpf(a1) ** 2 + mpmath.mpf(extra), rho=mpmath.mpf(rho))
    fam = D.family()
    cand = fam[index % len(fam)]
    if index % 7 == 0:  # the symbolic path now and then, for coverage
        v = D.evaluate(cand.expr, vals)
    else:
        try:
            v = D._compiled()[index % len(fam)](vals["a1"], vals["E_f2"], vals["rho"])
        except ZeroDivisionError:
            v = None
    if v is None:
        return
    tol = mpmath.mpf(10) ** -12 * max(1, abs(v))  # v was computed at the caller's 15 digits
    d = D.diagnose_value(v, values=vals, tol=tol)
    assert d.matches, (cand.name, v)
    assert abs(d.matches[0].value - v) <= tol
