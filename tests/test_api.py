"""The public API: the notebook session of the README, reprs included, and one argument order.

Numbers are checked against independent routes: mpmath quadrature written out here
(not the package's Hermite engine) and the closed-form isotropic theory
(``e_linear_isotropic``) through the homogeneity of Result 1.
"""

import inspect
import math
import re

import mpmath
import pytest

import icl_symbolic as ics
from icl_symbolic.core import defaults
from icl_symbolic.theory.asymptotic import e_linear_isotropic

from _reference import gauss_mp

XSLOW = pytest.mark.slow


def _gauss(fun, dps=60):
    return gauss_mp(fun, dps=dps)


def test_notebook_session_hermite_coeffs():
    r = ics.hermite_coeffs("tanh(g)", rho="0.1", digits=40)
    a1 = _gauss(lambda t: t * mpmath.tanh(t))
    ef2 = _gauss(lambda t: mpmath.tanh(t) ** 2)
    # r: a compact table (the dataclass repr was 2,760 characters)
    text = repr(r)
    assert len(text) < 700 and text.count("\n") == 6
    assert re.search(r"^  a1 +\s*= 0\.6057055096021588 ", text, re.M)
    assert "rho_nonlinear      = 0.1274153260354303" in text
    html = r._repr_html_()
    assert html.count("<tr>") == 6 and "<math" in html and "mpmath quadrature, 40 digits" in html
    latex = r._repr_latex_()
    assert latex.startswith("$$\\begin{array}{lll}") and "\\rho_{\\rm nonlinear} & 0.1274153260354303" in latex
    # r.a1 + 1 is a Value at a1's precision, float(r.rho_nonlinear) a float
    s = r.a1 + 1
    assert isinstance(s, ics.Value) and s.method == "mpmath" and s.digits == 40
    with mpmath.workdps(60):
        assert abs(mpmath.mpf(s.value) - (a1 + 1)) <= mpmath.mpf(s.abs_err)
        assert abs(mpmath.mpf(s.value) - (a1 + 1)) < mpmath.mpf(10) ** -39
    rnl = float(r.rho_nonlinear)
    assert rnl == pytest.approx(float(mpmath.mpf("0.1") + ef2 - a1**2), rel=1e-15)


def test_notebook_session_exact_teacher_arithmetic_stays_exact():
    r = ics.hermite_coeffs("sin(g)", rho="0.1")
    v = r.rho_nonlinear / r.a1**2
    assert v.method == "exact" and v.to_str(6) == "0.447029"  # Fig. 1 legend
    assert (r.rho_f / r.a1**2 - v).exact.equals(1)  # the Sec. 3 text's +1


def test_notebook_session_theory_sweep():
    c = ics.e_nonlinear("sin(g)", rho="0.1", alpha=2, kappa=2, tau=[0.5, 2, 4])
    a1sq = math.exp(-1)
    rnl = 0.1 + (1 - math.exp(-2)) / 2 - a1sq
    want = [a1sq * e_linear_isotropic(rnl / a1sq, 2, 2, t) for t in (0.5, 2, 4)]
    assert [p["e"] for p in c.points()] == pytest.approx(want, rel=1e-9)
    text = repr(c)
    assert text.splitlines()[1].startswith("  tau=0.5 = 0.76183796") and len(text) < 500
    assert c._repr_html_().count("<tr>") == 4 and "\\tau=4" in c._repr_latex_()
    one = ics.e_nonlinear("sin(g)", rho="0.1", alpha=2, kappa=2, tau=4)
    assert isinstance(one, ics.Value) and float(one) == pytest.approx(want[2], rel=1e-9)


def test_sweep_through_tau_one_marks_the_point():
    c = ics.e_nonlinear("tanh(g)", tau=[0.5, 1.0, 2.0])
    pts = c.points()
    assert math.isinf(pts[1]["e"]) and "diverges" in pts[1]["reason"]
    assert pts[0]["reason"] is None and math.isfinite(pts[2]["e"])
    assert "diverges" in repr(c).splitlines()[2]
    with pytest.raises(ics.ICLError, match="interpolation"):
        ics.e_nonlinear("tanh(g)", tau=1)  # a single point at the peak has no value


def _check_sim(s, d, seeds):
    assert isinstance(s, ics.SimResult) and s.d == d and s.seeds == seeds
    assert s.e.method == "sim" and s.e.n_samples == len(seeds) and s.e.stderr > 0
    text = repr(s)
    # compact: a title and one row per quantity (e, e_idg, e_mc), not the dataclass repr (thousands of chars)
    assert len(text) < 700 and text.count("\n") <= 6
    assert "e (exact test functional)" in text and "e_idg" in text and f"seeds {list(seeds)}" in text
    assert "<table>" in s._repr_html_()


@pytest.mark.sim
def test_notebook_session_simulate_small():
    """The session's simulate call at d = 16 (d = 64 takes about a minute: slow tier below)."""
    _check_sim(ics.simulate("sin(g)", d=16, tau=2, seeds=3), 16, (0, 1, 2))
    sweep = ics.simulate("sin(g)", d=8, tau=[0.5, 2], seeds=[5, 6])
    assert isinstance(sweep, ics.SimSweep) and [r.tau for r in sweep] == [0.5, 2.0]
    assert sweep.to_json()["points"][1]["seeds"] == [5, 6] and len(repr(sweep).splitlines()) == 3


@XSLOW
def test_notebook_session_simulate_d64():
    _check_sim(ics.simulate("sin(g)", d=64, tau=2, seeds=3), 64, (0, 1, 2))


def test_notebook_session_verify():
    v = ics.verify(only=["fig1.offset_exactly_one", "notes.sin_a1_squared"])
    assert isinstance(v, ics.VerifyResult) and v.ok and len(v) == 2
    assert repr(v).startswith("2 claims: 2 hold") and v["notes.sin_a1_squared"].verdict == "holds"
    assert v.to_json()["summary"]["holds"] == 2 and len(v.to_json()["points"]) == 2
    assert v._repr_html_().count("<tr>") == 3


PAPER_ORDER = ["rho", "alpha", "kappa", "tau", "lam", "d", "C_train", "C_test"]
DEFAULTS = {
    "rho": defaults.RHO,
    "alpha": defaults.ALPHA,
    "kappa": defaults.KAPPA,
    "tau": defaults.TAU,
    "lam": defaults.LAM,
}


@pytest.mark.parametrize(
    "name", ["hermite_coeffs", "e_nonlinear", "e_linear", "conditional_moments", "simulate", "diagnose"]
)
def test_one_argument_order_and_the_same_defaults(name):
    sig = inspect.signature(getattr(ics, name))
    params = list(sig.parameters.values())
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert positional in ([], ["f"], ["value", "f"])
    assert all(p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) for p in params if p.name not in positional)
    named = [p.name for p in params if p.name in PAPER_ORDER]
    assert named == [n for n in PAPER_ORDER if n in named], f"{name}: paper order"
    for p in params:
        if p.name in DEFAULTS:
            assert p.default == DEFAULTS[p.name], f"{name}({p.name}=...)"


def test_public_names_are_exported_and_documented():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "api.md").read_text()
    for name in ics.__all__:
        assert hasattr(ics, name)
        if not name.startswith("_"):
            assert f"`{name}" in doc, f"{name} is not in docs/api.md"


@pytest.mark.sim
def test_the_commands_plots_are_figures_of_the_same_numbers():
    from matplotlib.figure import Figure

    c = ics.e_nonlinear("sin(g)", tau=[0.5, 2, 4])
    fig = ics.plot_theory(c)
    assert isinstance(fig, Figure)
    y = [v for v in fig.axes[0].lines[0].get_ydata() if math.isfinite(v)]  # NaN: the break at tau = 1
    assert y == pytest.approx([p["e"] for p in c.points()], rel=1e-15)
    r = ics.hermite_coeffs("g**3", M=3)
    spec = ics.plot_spectrum(r).axes[0].lines[0]
    assert list(spec.get_xdata()) == [1, 3] and list(spec.get_ydata()) == [9.0, 6.0]  # a_1^2, a_3^2
    sweep = ics.simulate("g", d=6, tau=[0.5, 3], seeds=2, n_test=200)
    ax = ics.plot_simulation(sweep).axes[0]
    theory_line = ax.lines[-1]
    assert list(theory_line.get_ydata()) == pytest.approx([float(ics.e_linear(tau=t)) for t in (0.5, 3)], rel=1e-12)
    with pytest.raises(ics.ICLError):
        ics.plot_theory(r)


def test_no_submodule_shadows_a_root_function():
    """Importing every submodule must not rebind a public root name (a submodule called
    ``simulate`` or ``verify`` would replace the function ``ics.simulate`` / ``ics.verify``)."""
    import importlib
    import pkgutil

    before = {name: getattr(ics, name) for name in ics.__all__}
    for info in pkgutil.walk_packages(ics.__path__, ics.__name__ + "."):
        if not info.name.endswith("__main__"):  # runs the command line when imported
            importlib.import_module(info.name)
    assert {name: getattr(ics, name) for name in ics.__all__} == before
    assert callable(ics.simulate) and callable(ics.verify)


@XSLOW
def test_notebook_session_verify_everything():
    """``ics.verify()`` as in the session: every shipped claim (about a minute; the default run
    checks the same claims through ``verify --json-out`` in tests/test_cli_verify.py)."""
    v = ics.verify()
    assert v.ok and len(v) >= 60 and repr(v).splitlines()[0].endswith("-- OK")
    assert v._repr_html_().count("<tr>") == len(v) + 1


def test_every_result_type_speaks_the_same_language(monkeypatch):
    """to_json(), .points() (the rows of the command's JSON), to_pandas() (optional pandas: a clear error
    without it, a DataFrame of exactly .points() with it), _repr_html_; SimResult carries theory and z."""
    import sys
    import types

    sim = ics.simulate("g", d=4, tau=[2, 4], seeds=2, n_test=100)
    results = [
        ics.hermite_coeffs("g"),
        ics.e_nonlinear("g", tau=[0.5, 1, 2]),
        sim,
        sim[0],
        ics.verify(only=["eq2.a1_is_E_gf"]),
        ics.conditional_moments("g", d=4),
        ics.diagnose("1.447", "sin(g)"),
    ]
    for r in results:
        name = type(r).__name__
        assert isinstance(r.to_json(), dict) and r.to_json(), name
        rows = r.points()
        assert rows and all(isinstance(p, dict) for p in rows), name
        if "points" in r.to_json():
            assert r.to_json()["points"] == rows, name
        assert "<" in r._repr_html_(), name
    monkeypatch.setitem(sys.modules, "pandas", None)  # pandas not installed
    with pytest.raises(
        ics.ICLError,
        match=r"needs pandas, which is optional \(pip install pandas\); "
        r"SimSweep.points\(\) gives the same rows",
    ):
        sim.to_pandas()
    fake = types.ModuleType("pandas")
    fake.DataFrame = lambda rows: ("frame", rows)
    monkeypatch.setitem(sys.modules, "pandas", fake)
    for r in results:
        assert r.to_pandas() == ("frame", r.points()), type(r).__name__
    s = sim[0]
    assert s.e_theory == pytest.approx(float(ics.e_nonlinear("g", tau=2)))
    assert s.z == pytest.approx((float(s.e.value) - s.e_theory) / float(s.e.stderr))
    assert s.to_json()["z"] == s.z and "extrapolate" in s.to_json()["comparison"]
    assert "e_theory (d -> infinity)" in repr(s)


def test_every_command_has_an_api_function_with_its_numbers(capsys, tmp_path):
    """extrapolate, kernel, appendix_a, figure: the library side of the commands, the same numbers."""
    import json

    from icl_symbolic.cli import main

    a = ics.appendix_a("identity", "lowrank:5", d=100)
    assert [x.holds for x in a] == [True, False] and a[0].effective_rank == pytest.approx(100)
    with pytest.raises(ics.ICLError, match="d: expected an integer >= 1"):
        ics.appendix_a("identity", d=0)
    k = ics.kernel("g + (g^2-1)/sqrt(2)", tau=[0.5, 1, 2])
    assert main(["kernel", "g + (g^2-1)/sqrt(2)", "--tau", "0.5,1,2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["points"] == k.points()
    assert k.points()[1]["e"] is None and "diverges" in k.points()[1]["reason"]
    x = ics.extrapolate("g", d=[4, 6], seeds=2, n_test=100)
    assert (
        isinstance(x, ics.Extrapolation)
        and len(x.points) == 2
        and x.e_theory == pytest.approx(float(ics.e_nonlinear("g")))
    )
    with pytest.raises(ics.ICLError, match="no finite e_inf"):
        ics.extrapolate("g", d=[4, 6], tau=1)
    meta = ics.figure("a1zero", tmp_path / "f", quick=True, seeds=1, d=4, taus=[0.5, 2.0], ak=[(2.0, 2.0)], n_test=100)
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == [
        "figure_a1zero.csv",
        "figure_a1zero.json",
        "figure_a1zero.png",
    ]
    assert meta["points"] and {"panel", "kind", "e"} <= set(meta["points"][0])


def test_the_package_root_and_the_api_list_the_same_names():
    import icl_symbolic.api as api

    assert set(ics._API) == set(api.NAMES) and all(callable(getattr(ics, n)) for n in ics._API)
