"""The IDG error (docs/idg.md): theory, the exact functional over the pretraining tasks, simulation.

Statistical comparisons: two-sided false alarm 1e-3 per test, Bonferroni over the
test's m comparisons (tests/_stats.py), Student t at the SE's dof.
"""

import json

import numpy as np
import pytest

from icl_symbolic.cli import main
from icl_symbolic.core.errors import ICLError
from icl_symbolic.model import gamma_error
from icl_symbolic.model.moments import MonteCarlo
from icl_symbolic.simulation.simulator import simulate_many
from icl_symbolic.studies.extrapolate import extrapolate, run_ladder, seed_error
from icl_symbolic.theory import asymptotic as theory

from _stats import t_bonferroni, z_bonferroni


# ---------------------------------------------------------------------------
# theory
# ---------------------------------------------------------------------------
def test_closed_form_tau_gt_1_equals_the_recipe():
    for alpha in (0.5, 2, 8):
        for kappa in (0.1, 0.5, 2, 5):
            for tau in (1.2, 2, 4, 20):
                a = theory.e_linear(theory.Ratios(rho=0.1, alpha=alpha, kappa=kappa, tau=tau), error="idg")
                b = theory.e_idg_isotropic(0.1, alpha, kappa, tau)
                assert a == pytest.approx(b, rel=1e-12), (alpha, kappa, tau)
    with pytest.raises(ICLError):
        theory.e_idg_isotropic(0.1, 2, 2, 0.5)


def test_idg_below_icl_when_test_law_is_train_law():
    for alpha in (0.5, 2, 8):
        for kappa in (0.1, 0.5, 1, 4):
            for tau in (0.3, 0.8, 1.5, 4):
                for lam in (0.0, 0.05):
                    gap = theory.e_linear(
                        theory.Ratios(rho=0.1, alpha=alpha, kappa=kappa, tau=tau, lam=lam), error="gap"
                    )
                    icl = theory.e_linear(theory.Ratios(rho=0.1, alpha=alpha, kappa=kappa, tau=tau, lam=lam))
                    idg = theory.e_linear(
                        theory.Ratios(rho=0.1, alpha=alpha, kappa=kappa, tau=tau, lam=lam), error="idg"
                    )
                    assert gap == pytest.approx(icl - idg, abs=1e-13)
                    assert idg >= 0.1 and gap > 0, (alpha, kappa, tau, lam)


def test_idg_above_icl_for_a_test_law_on_the_strong_directions():
    ratios = theory.Ratios(rho=0.1, alpha=2, kappa=2, tau=2)
    tasks = theory.TaskCovariances("powerlaw:1", "powerlaw:2", d=200)
    assert theory.e_linear(ratios, tasks, error="gap") < -0.1
    # IDG does not look at C_test at all
    assert theory.e_linear(ratios, tasks, error="idg") == theory.e_linear(
        ratios, theory.TaskCovariances("powerlaw:1", "identity", d=200), error="idg"
    )


def test_memorisation_limit_small_kappa():
    for tau in (0.3, 0.5, 2.0, 4.0):
        idg = theory.e_linear(theory.Ratios(rho=0.1, alpha=2, kappa=1e-6, tau=tau), error="idg")
        noise_only = theory.e_a1zero(0.1, alpha=2, tau=tau)  # rho/(1-tau), rho tau/(tau-1)
        assert idg == pytest.approx(noise_only, rel=2e-5)
        assert (
            theory.e_linear(theory.Ratios(rho=0.1, alpha=2, kappa=1e-6, tau=tau)) > 1.0 + 0.1
        )  # ICL does not memorise
    # the wrong limit (the ICL error at the same point) is far away: the check has power
    assert (
        abs(theory.e_linear(theory.Ratios(rho=0.1, alpha=2, kappa=1e-6, tau=2)) / theory.e_a1zero(0.1, tau=2) - 1) > 1
    )


def test_result1_for_idg_and_a1_zero():
    tm = theory.teacher_moments("sin(g)")
    a1, rnl = float(tm.a1), tm.rho_nonlinear(0.1)
    for tau in (0.5, 2.0):
        lhs = float(theory.e_nonlinear("sin(g)", theory.Ratios(rho=0.1, alpha=2, kappa=1, tau=tau), error="idg"))
        rhs = a1**2 * theory.e_linear(theory.Ratios(rho=rnl / a1**2, alpha=2, kappa=1, tau=tau), error="idg")
        assert lhs == pytest.approx(rhs, rel=1e-10)
    f0 = "(g^2-1)/sqrt(2)"
    assert float(theory.e_nonlinear(f0, theory.Ratios(rho=0.1, tau=2), error="idg")) == float(
        theory.e_nonlinear(f0, theory.Ratios(rho=0.1, tau=2))
    )
    assert float(theory.e_nonlinear(f0, theory.Ratios(rho=0.1, tau=2), error="gap")) == 0.0
    # continuity: a tiny a1 gives nearly the a1 = 0 IDG
    near = float(
        theory.e_nonlinear(None, theory.Ratios(alpha=2, kappa=2, tau=2), a1=1e-4, rho_nonlinear=1.1, error="idg")
    )
    assert near == pytest.approx(float(theory.e_nonlinear(f0, theory.Ratios(rho=0.1, tau=2), error="idg")), rel=1e-6)
    with pytest.raises(ICLError):
        theory.e_linear(theory.Ratios(), error="idgg")


def test_theory_cli_error_option(capsys, tmp_path):
    out = tmp_path / "c.csv"
    assert main(["theory", "g", "--tau", "2", "--kappa", "0.5", "--error", "idg", "--json", "--csv", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"] == "idg"
    assert doc["points"][0]["e"] == pytest.approx(
        theory.e_linear(theory.Ratios(rho=0.1, alpha=2, kappa=0.5, tau=2), error="idg")
    )
    header, row = out.read_text().splitlines()[:2]
    assert dict(zip(header.split(","), row.split(",")))["error"] == "idg"


# ---------------------------------------------------------------------------
# the exact functional over a finite task set
# ---------------------------------------------------------------------------
def test_e_gamma_tasks_is_the_mean_of_the_exact_per_task_errors():
    rng = np.random.default_rng(3)
    A, b = 0.3 * rng.standard_normal((4, 4)), 0.1 * rng.standard_normal(4)
    W = rng.standard_normal((3, 4))
    v = gamma_error.e_gamma_tasks(A, b, "sin(g)", 0.1, 8, W)
    per = [float(gamma_error.e_gamma_given_w(A, b, "sin(g)", 0.1, w, 8)) for w in W]
    assert float(v) == pytest.approx(np.mean(per), rel=1e-12)
    Ws = W * np.sqrt(4 / np.einsum("kd,kd->k", W, W))[:, None]  # one omega: the direct branch
    per_s = [float(gamma_error.e_gamma_given_w(A, b, "sin(g)", 0.1, w, 8)) for w in Ws]
    assert float(gamma_error.e_gamma_tasks(A, b, "sin(g)", 0.1, 8, Ws)) == pytest.approx(np.mean(per_s), rel=1e-12)
    # more tasks than Chebyshev nodes: the interpolated branch, against the direct one
    Wm = rng.standard_normal((80, 4))
    direct = np.mean(
        [float(gamma_error.e_gamma_tasks(A, b, "sin(g)", 0.1, 8, Wm[i : i + 20])) for i in range(0, 80, 20)]
    )
    assert float(gamma_error.e_gamma_tasks(A, b, "sin(g)", 0.1, 8, Wm)) == pytest.approx(direct, rel=1e-9)
    with pytest.raises(ICLError):
        gamma_error.e_gamma_tasks(A, b, "g", 0.1, 8, W[:, :3])


@pytest.mark.heavy
def test_e_gamma_tasks_against_monte_carlo_prompts_on_the_tasks():
    """Independent check: fresh prompts whose task is one of the k (uniformly), squared errors averaged."""
    rng = np.random.default_rng(11)
    d, ell, k = 6, 12, 4
    A, b = 0.4 * rng.standard_normal((d, d)) + np.eye(d), 0.2 * rng.standard_normal(d)
    W = rng.standard_normal((k, d))
    exact = float(gamma_error.e_gamma_tasks(A, b, "sin(g)", 0.1, ell, W))
    mc = [
        gamma_error.e_gamma_mc_prompts(A, b, "sin(g)", 0.1, ell, MonteCarlo(40000, 100 + j), w=W[j]) for j in range(k)
    ]
    mean = np.mean([float(m) for m in mc])
    se = np.sqrt(sum(float(m.stderr) ** 2 for m in mc)) / k
    assert abs(mean - exact) <= z_bonferroni(2) * se
    # a wrong IDG functional (the isotropic test error of the same Gamma) is rejected by the same MC
    wrong = float(gamma_error.e_gamma_isotropic(A, b, "sin(g)", 0.1, d, ell))
    assert abs(mean - wrong) > z_bonferroni(2) * se


# ---------------------------------------------------------------------------
# simulation
# ---------------------------------------------------------------------------
@pytest.mark.sim
def test_simulation_reports_icl_and_idg_of_the_same_gamma():
    r = simulate_many(
        [dict(f="g", d=8, alpha=2, kappa=0.5, tau=2, rho=0.1, seeds=(0, 1), n_test=200, keep_gamma=True)]
    )[0]
    js = r.to_json()
    assert js["e_idg_mean"] is not None and js["per_seed"][0]["e_idg"] is not None
    run = r.runs[0]
    from icl_symbolic.model.covariance import resolve_covariance, sample_tasks

    tasks = sample_tasks(
        resolve_covariance("identity", 8), 4, np.random.default_rng(np.random.SeedSequence(0).spawn(4)[0])
    )
    again = gamma_error.e_gamma_tasks(run.Gamma[:, :8], run.Gamma[:, 8], "g", 0.1, 16, tasks)
    assert float(run.e_idg) == pytest.approx(float(again), rel=1e-12)
    assert seed_error(run, "gap")[0] == pytest.approx(float(run.e) - float(run.e_idg))
    assert (
        simulate_many([dict(f="g", d=8, alpha=2, kappa=0.5, tau=2, rho=0.1, seeds=(0,), n_test=200, exact=False)])[
            0
        ].e_idg
        is None
    )


@pytest.mark.sim
@pytest.mark.parametrize("f, kappa, tau", [("g", 0.5, 2.0), ("sin(g)", 1.0, 0.5)])
def test_idg_theory_against_extrapolated_simulation(f, kappa, tau):
    """Two settings (the linear teacher above the peak; sin below it, i.e. Result 1 for IDG)."""
    pts = run_ladder(
        f, [16, 24, 32, 40], alpha=2, kappa=kappa, tau=tau, rho=0.1, seeds=range(10), n_test=20, error="idg"
    )
    th = float(theory.e_nonlinear(f, theory.Ratios(rho=0.1, alpha=2, kappa=kappa, tau=tau), error="idg"))
    x = extrapolate(pts, th, error="idg")
    limit = t_bonferroni(2, max(1, int(x.fit.e_inf_dof)))
    assert abs(x.z) <= limit, (x.fit.e_inf, x.fit.e_inf_se, th)
    # the ICL theory at the same point is rejected: the ladder can tell the two errors apart
    icl = float(theory.e_nonlinear(f, theory.Ratios(rho=0.1, alpha=2, kappa=kappa, tau=tau)))
    assert abs(x.fit.e_inf - icl) > limit * x.fit.e_inf_se
