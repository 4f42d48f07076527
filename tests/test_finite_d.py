"""Tests of icl_symbolic.theory.finite_d: each O(1/d) term against an exact or brute-force reference.

* e_iso (the recipe written through the bank's resolvent) reproduces the d -> infinity closed form;
* bank_resolvent: the Bai-Silverstein mean shift against Monte-Carlo resolvent traces (d = 32);
* task_norm: chi^2 averages against closed forms (sin, the a1 = 0 teacher, the linear teacher);
* radial: the elliptical leave-one-out formulas against brute-force ridgeless regressions with
  Kronecker features (d = 8; heavy) and, with r = 1, against Eq. (10) with p = d(d+1);
* the assembled correction: order 0 is the limit, the terms are O(1/d), the peak sits at n = d(d+1);
* (sim) the a1 = 0 teacher at d = 24 against the simulator.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from icl_symbolic.core.errors import ICLError
from icl_symbolic.theory import finite_d as FD
from icl_symbolic.theory.asymptotic import Ratios, e_linear_isotropic, e_nonlinear
from icl_symbolic.theory.stieltjes import stieltjes_isotropic

A1ZERO = "(g^2-1)/sqrt(2)"


# ----------------------------------------------------------------------------
# the recipe through the resolvent
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("rho", [0.0, 0.1, 1.0])
@pytest.mark.parametrize("alpha", [0.5, 2.0, 8.0])
@pytest.mark.parametrize("kappa", [0.5, 2.0])
@pytest.mark.parametrize("tau", [0.3, 0.5, 2.0, 4.0])
def test_e_iso_reproduces_limit(rho, alpha, kappa, tau):
    assert FD.e_iso(rho, alpha, kappa, tau) == pytest.approx(e_linear_isotropic(rho, alpha, kappa, tau), rel=1e-12)


# ----------------------------------------------------------------------------
# bank_resolvent: Bai-Silverstein vs Monte Carlo
# ----------------------------------------------------------------------------
@pytest.mark.heavy
@pytest.mark.parametrize("k,nu", [(64, 0.55), (16, 0.55), (64, 2.2)])
def test_bai_silverstein_mean_vs_monte_carlo(k, nu):
    """E tr (S + nu)^-1 - d M_kappa(nu) at d = 32 (6000 Wishart draws) equals g(-nu) within 4 SE; the
    d -> infinity prediction 0 is outside 4 SE (so the test can fail)."""
    d, R = 32, 6000
    rng = np.random.default_rng(20261201)
    kappa = k / d
    M = float(stieltjes_isotropic(nu, kappa)[0])
    tr = np.empty(R)
    for i in range(R):
        W = rng.standard_normal((d, k))
        tr[i] = np.sum(1.0 / (np.linalg.eigvalsh(W @ W.T / k) + nu))
    mc, se = tr.mean() - d * M, tr.std(ddof=1) / math.sqrt(R)
    g = FD.bs_mean_correction(nu, kappa)
    assert abs(mc - g) <= 4 * se, (mc, se, g)
    assert abs(mc) > 4 * se


#: theory --order 1 for sin(g) at d = 64, alpha = kappa = 2 (the CLI tests add --tau and the rest)
SIN_D64_ORDER1 = ["theory", "sin(g)", "--d", "64", "--order", "1", "--alpha", "2", "--kappa", "2"]


def test_bank_resolvent_mfun_shift():
    """With d given, (M, M') are shifted by (g, g')/d (g' by central differences, checked here by a coarser one)."""
    kappa, nu, d = 2.0, 0.7, 40
    M0, Mp0 = FD._mfun(kappa, None)(nu)
    M1, Mp1 = FD._mfun(kappa, d)(nu)
    assert M1 - M0 == pytest.approx(FD.bs_mean_correction(nu, kappa) / d, rel=1e-12)
    h = 1e-3
    gp = (FD.bs_mean_correction(nu + h, kappa) - FD.bs_mean_correction(nu - h, kappa)) / (2 * h)
    assert (Mp1 - Mp0) * d == pytest.approx(gp, rel=1e-5)


# ----------------------------------------------------------------------------
# task_norm: closed forms
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("d", [8, 32, 64])
def test_task_norm_sin_closed_form(d):
    """sin: beta(omega) = e^(-omega/2), so a1_eff^2 = E[omega e^-omega] = (1 + 2/d)^(-d/2-1) and
    E f^2 = (1 - E e^(-2 omega))/2 = (1 - (1 + 4/d)^(-d/2))/2 for omega ~ chi^2_d/d."""
    a1sq, rnl = FD.task_norm_moments("sin(g)", 0.1, d)
    a1_exact = (1 + 2 / d) ** (-d / 2 - 1)
    ef2 = (1 - (1 + 4 / d) ** (-d / 2)) / 2
    assert a1sq == pytest.approx(a1_exact, rel=1e-12)
    assert rnl == pytest.approx(ef2 - a1_exact + 0.1, rel=1e-12)


@pytest.mark.parametrize("d", [8, 32, 64])
def test_task_norm_a1zero_and_linear(d):
    a1sq, rnl = FD.task_norm_moments(A1ZERO, 0.1, d)
    assert abs(a1sq) < 1e-12
    assert rnl == pytest.approx(1.1 + 3 / d, rel=1e-12)  # E[(omega g^2 - 1)^2]/2 = 1 + 3/d
    a1sq, rnl = FD.task_norm_moments("g", 0.1, d)
    assert a1sq == pytest.approx(1.0, rel=1e-12) and rnl == pytest.approx(0.1, rel=1e-10)


def test_task_norm_limit_matches_hermite_engine():
    a1sq, rnl = FD.task_norm_moments("tanh(g)", 0.1, None)
    from icl_symbolic.theory.asymptotic import teacher_moments

    tm = teacher_moments("tanh(g)")
    assert a1sq == pytest.approx(float(tm.a1) ** 2, rel=1e-12)
    assert rnl == pytest.approx(float(tm.rho_nonlinear(0.1)), rel=1e-12)


# ----------------------------------------------------------------------------
# radial: Eq. (10) at r = 1; brute-force Kronecker regressions
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [300, 1500])
def test_radial_reduces_to_eq10_with_p(n):
    d = 24
    p = d * (d + 1)
    rng = np.random.default_rng(1)
    y2 = rng.exponential(1.3, 10_000)
    rm = FD.RadialMoments(np.ones_like(y2), y2, d, 0, "r = 1")
    e, _ = FD.e_radial(rm, n, p)
    Ey2 = y2.mean()
    assert e == pytest.approx(Ey2 * p / (p - n) if n < p else Ey2 * n / (n - p), rel=1e-10)
    e, _ = FD.e_radial(rm, n, p, wishart=True, Ey2=1.3)
    # with the exact E[y^2] as control variate and r = 1 the MC part vanishes: the Eq. (10) value exactly
    assert e == pytest.approx(FD._eq10_wishart(1.3, n / p, p), rel=1e-12)


def _kron_law(N, d, m, rng, shape=4.0):
    """x ~ N(0, I/d); v = sqrt(s) g, s ~ Gamma(shape, 1/shape) (E s = 1, Var s = 1/shape), g ~ N(0, I_m);
    y = |x|^2 eps (pure noise, even in x, heteroscedastic: correlated with |x|)."""
    x = rng.standard_normal((N, d)) / math.sqrt(d)
    s = rng.gamma(shape, 1 / shape, N)
    v = np.sqrt(s)[:, None] * rng.standard_normal((N, m))
    y = np.einsum("nd,nd->n", x, x) * rng.standard_normal(N)
    return x, v, y


@pytest.mark.heavy
@pytest.mark.parametrize("n", [36, 216])
def test_radial_vs_brute_force_kronecker_regression(n):
    """Min-norm (n < p) and least-squares (n > p) fits on Kronecker features h = x (x) v, d = 8, p = 72,
    1500 replications: the excess risk |gamma|_Sigma^2 (Sigma = I/d (x) I) averaged, plus E y^2 = 1 + 2/d.
    The elliptical formula agrees within 4 SE; the Gaussian-feature value (r = 1) is rejected."""
    d, m = 8, 9
    p = d * m
    rng = np.random.default_rng(7)
    x, v, y = _kron_law(400_000, d, m, rng)
    r2 = np.einsum("nd,nd->n", x, x) * np.einsum("nm,nm->n", v, v) / m
    rm = FD.RadialMoments(r2, y * y, d, 0, "synthetic Kronecker law")
    Ey2 = 1 + 2 / d
    rad, rad_se = FD.e_radial(rm, n, p, wishart=True, Ey2=Ey2)
    gauss = FD._eq10_wishart(Ey2, n / p, p)
    ex = []
    for _ in range(1500):
        x, v, y = _kron_law(n, d, m, rng)
        H = (x[:, :, None] * v[:, None, :]).reshape(n, p)
        gam = np.linalg.lstsq(H, y, rcond=None)[0]
        ex.append(gam @ gam / d)
    bf, se = Ey2 + float(np.mean(ex)), float(np.std(ex, ddof=1) / math.sqrt(len(ex)))
    tol = 4 * math.hypot(se, rad_se)
    assert abs(bf - rad) <= tol, (bf, se, rad, rad_se)
    assert abs(bf - gauss) > tol, (bf, gauss)


# ----------------------------------------------------------------------------
# radial, a1 != 0: the recipe's parts and the r = 1 reduction
# ----------------------------------------------------------------------------
def test_recipe_parts_population_limit():
    """kappa, tau -> infinity: A is the population posterior mean I/(1 + nu), nu = (1 + rho)/alpha, so
    t_A = 1/(1 + nu) and q = (1 + nu)/(1 + nu)^2 = 1/(1 + nu) (independent closed form)."""
    rho, alpha = 0.1, 2.0
    nu = (1 + rho) / alpha
    e, t_A, q = FD.recipe_parts(rho, alpha, 1e7, 1e7, FD._mfun(1e7, None))
    assert t_A == pytest.approx(1 / (1 + nu), rel=1e-5)
    assert q == pytest.approx(1 / (1 + nu), rel=1e-5)
    assert e == pytest.approx(rho + 1 - 2 * t_A + q, rel=1e-12)


@pytest.mark.parametrize("tau", [0.5, 3.0])
def test_recipe_affine_in_training_noise(tau):
    mf = FD._mfun(2.0, None)
    e0 = FD.e_iso_general(0.1, 2.0, 2.0, tau, mf)
    assert e0 == pytest.approx(FD.e_iso(0.1, 2.0, 2.0, tau), rel=1e-13)
    e1 = FD.e_iso_general(0.1, 2.0, 2.0, tau, mf, extra_train_noise=0.05)
    e2 = FD.e_iso_general(0.1, 2.0, 2.0, tau, mf, extra_train_noise=0.10)
    assert e2 - e1 == pytest.approx(e1 - e0, rel=1e-9) and e1 > e0


@pytest.mark.parametrize("tau", [0.5, 3.0])
def test_radial_signal_is_the_recipe_at_r_equal_1(tau):
    ones = np.ones(1000)
    rm = FD.RadialMoments(ones, ones, 16, 32, "r = 1", rx2=ones)
    mf = FD._mfun(2.0, None)
    assert FD.e_radial_signal(rm, 0.3, 0.1, 2.0, 2.0, tau, mf) == pytest.approx(FD.e_iso(0.3, 2.0, 2.0, tau), rel=1e-10)


@pytest.mark.parametrize("tau", [0.5, 3.0])
def test_radial_signal_raises_error_for_spread_r(tau):
    """A spread of r_v (independent of r_x) adds error on both sides of the peak (Jensen)."""
    rng = np.random.default_rng(3)
    rv2 = rng.gamma(20.0, 1 / 20.0, 50_000)
    rx2 = rng.chisquare(32, 50_000) / 32
    rm = FD.RadialMoments(rx2 * rv2, np.ones_like(rv2), 32, 64, "synthetic", rx2=rx2)
    mf = FD._mfun(2.0, None)
    assert FD.e_radial_signal(rm, 0.3, 0.1, 2.0, 2.0, tau, mf) > FD.e_iso(0.3, 2.0, 2.0, tau)


# ----------------------------------------------------------------------------
# the assembled correction
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("f", ["g", "sin(g)", A1ZERO])
@pytest.mark.parametrize("tau", [0.5, 3.0])
def test_order0_is_the_limit(f, tau):
    alpha = 8.0 if f == A1ZERO else 2.0
    fd = FD.e_nonlinear_finite(f, 0.1, alpha, 2.0, tau, d=32, order=0)
    ref = float(e_nonlinear(f, Ratios(rho=0.1, alpha=alpha, kappa=2.0, tau=tau)))
    assert fd.limit == pytest.approx(ref, rel=1e-10) and fd.corrected == fd.limit and fd.terms == ()
    fd = FD.e_nonlinear_finite(f, 0.1, alpha, 2.0, tau, d=32, terms=())
    assert fd.corrected == fd.limit


def test_terms_sum_and_switches():
    fd = FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 0.5, 3.0, d=32, terms=("param_count", "bank_resolvent"))
    assert [t.name for t in fd.terms] == ["param_count", "bank_resolvent"]
    assert fd.corrected - fd.limit == pytest.approx(sum(t.delta for t in fd.terms), rel=1e-12)
    one = FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 0.5, 3.0, d=32, terms=("param_count",))
    assert one.terms[0].delta == pytest.approx(fd.terms[0].delta, rel=1e-12)
    with pytest.raises(ICLError):
        FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 0.5, 3.0, d=32, terms=("bogus",))
    with pytest.raises(ICLError):
        FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 0.5, 3.0, d=32, order=2)


@pytest.mark.parametrize("f,tau", [("sin(g)", 3.0), ("g", 0.5), ("tanh(g)", 3.0)])
def test_deterministic_terms_are_order_one_over_d(f, tau):
    """d (corrected - limit) is the same at d = 1000 and 2000 within 1 % (an O(1) or O(d^-1/2) term
    would change it by a factor sqrt 2 or more); the products alpha d, kappa d, tau d^2 are integers."""
    terms = ("param_count", "task_norm", "bank_resolvent")
    c = [
        d
        * (
            FD.e_nonlinear_finite(f, 0.1, 2.0, 2.0, tau, d=d, terms=terms).corrected
            - FD.e_nonlinear_finite(f, 0.1, 2.0, 2.0, tau, d=d, order=0).corrected
        )
        for d in (1000, 2000)
    ]
    assert c[0] != 0 and c[1] == pytest.approx(c[0], rel=1e-2)


def test_peak_sits_at_n_equals_d_d_plus_1():
    d = 16
    with pytest.raises(ICLError):
        FD.e_nonlinear_finite("g", 0.1, 2.0, 2.0, (d + 1) / d, d=d, terms=("sizes", "param_count"))
    # the limit itself is finite there (its peak is at tau = 1)
    assert math.isfinite(FD.e_nonlinear_finite("g", 0.1, 2.0, 2.0, (d + 1) / d, d=d, order=0).corrected)
    with pytest.raises(ICLError):
        FD.e_nonlinear_finite(A1ZERO, 0.1, 8.0, 2.0, (d + 1) / d, d=d, terms=("sizes", "param_count"))


def test_a1zero_task_norm_is_exactly_3_over_d_in_noise():
    d, tau = 32, 3.0
    fd = FD.e_nonlinear_finite(A1ZERO, 0.1, 8.0, 2.0, tau, d=d, terms=("task_norm",))
    assert fd.corrected == pytest.approx((1.1 + 3 / d) * tau / (tau - 1), rel=1e-12)


# ----------------------------------------------------------------------------
# min_norm_metric: the raw parameters' metric below the peak (a1 = 0)
# ----------------------------------------------------------------------------
def test_theory_help_names_every_term(capsys):
    from icl_symbolic.cli import main

    with pytest.raises(SystemExit):
        main(["theory", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for t in FD.TERMS:
        assert t in out, t


def test_theory_order_1_unknown_term_exits_2_before_any_point(capsys, monkeypatch):
    """An unknown --terms name is bad input: one error line, exit 2, and no point evaluated (a grid of
    two points whose first would be valid still runs nothing)."""
    from icl_symbolic.cli import main

    calls = []
    monkeypatch.setattr(FD, "e_nonlinear_finite", lambda *a, **k: calls.append(a))
    argv = ["theory", "tanh(g)", "--d", "32", "--order", "1", "--terms", "sizes,bogus"]
    rc = main(argv + ["--rho", "0.1", "--alpha", "2", "--tau", "0.5", "--kappa", "2,3"])
    assert rc == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    err = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert len(err) == 1 and "unknown finite-d term(s) ['bogus']" in err[0], cap.err
    assert calls == []


def test_min_norm_factor_equal_eigenvalues_and_refusals():
    assert FD.min_norm_factor(np.full(600, 2.5), 250) == pytest.approx(250 / 350, rel=1e-12)
    for bad in [(np.ones(10), 10), (np.ones(10), 0), (np.r_[np.ones(9), 0.0], 4)]:
        with pytest.raises(ICLError):
            FD.min_norm_factor(*bad)


@pytest.mark.heavy
def test_min_norm_factor_vs_brute_force_two_level_gaussian_design():
    """Min-norm interpolation of pure noise (unit variance) by n = 200 Gaussian samples in p = 400
    dimensions whose covariance has two levels (360 eigenvalues 1, 40 eigenvalues 10), 600 replications:
    the excess |gamma|_Sigma^2 agrees with min_norm_factor within 4 SE + 1 % (an O(1/n) finite-n term:
    with equal eigenvalues n/(p - n - 1) against n/(p - n), 0.5 %), while the equal-eigenvalue value
    n/(p - n) (what the whitened metric gives) is rejected."""
    rng = np.random.default_rng(3)
    n, p = 200, 400
    s = np.r_[np.ones(360), np.full(40, 10.0)]
    ex = []
    for _ in range(600):
        H = rng.standard_normal((n, p)) * np.sqrt(s)
        g = H.T @ np.linalg.solve(H @ H.T, rng.standard_normal(n))
        ex.append(float(g @ (s * g)))
    bf, se = float(np.mean(ex)), float(np.std(ex, ddof=1) / math.sqrt(len(ex)))
    pred = FD.min_norm_factor(s, n)
    tol = 4 * se + 0.01 * pred
    assert abs(bf - pred) <= tol, (bf, se, pred)
    assert abs(bf - n / (p - n)) > tol, (bf, n / (p - n))


def _min_norm_pair(d, kappa, reps, seed):
    """Brute force on sampled prompts of the a1 = 0 teacher (alpha = 8, tau = 0.5): per replication, the
    excess gamma^T Sigma gamma of the min-norm fit in the raw metric (what the simulator fits) and in the
    whitened metric (what the radial term assumes); Sigma = E[x x^T] (x) E[v v^T] from 40 000 prompts."""
    from icl_symbolic.engine.expr import teacher
    from icl_symbolic.model.prompts import sample_prompts

    f = teacher(A1ZERO).numpy
    ell, k, n = FD.finite_sizes(d, 8.0, kappa, 0.5)
    rng = np.random.default_rng(seed)
    Pb = sample_prompts(f, rng.standard_normal((40_000, d)), ell, 0.1, rng)
    Vb = np.column_stack([Pb.u, Pb.s])
    Sv = Vb.T @ Vb / len(Vb)
    cx = float(np.mean(np.einsum("md,md->m", Pb.x_test, Pb.x_test))) / d
    S = np.kron(cx * np.eye(d), Sv)
    Lvi = np.linalg.inv(np.linalg.cholesky(Sv))
    raw, wh = [], []
    for _ in range(reps):
        W = rng.standard_normal((k, d))
        P = sample_prompts(f, W[np.arange(n) % k], ell, 0.1, rng)
        V = np.column_stack([P.u, P.s])
        H = np.einsum("mi,mj->mij", P.x_test, V).reshape(n, -1)
        g = H.T @ np.linalg.solve(H @ H.T, P.y_test)
        raw.append(float(g @ S @ g))
        Z = np.einsum("mi,mj->mij", P.x_test / math.sqrt(cx), V @ Lvi.T).reshape(n, -1)
        wh.append(float(P.y_test @ np.linalg.solve(Z @ Z.T, P.y_test)))
    return np.asarray(raw), np.asarray(wh)


@pytest.mark.heavy
def test_min_norm_metric_explains_most_of_the_metric_effect_d24():
    """d = 24, kappa = 1/2, 100 replications (about 25 s): the paired difference raw - whitened of the
    brute-force min-norm excess (0.124 +- 0.004 when this was written) is positive and far from 0, and the
    min_norm_metric term, derived for a Gaussian design with the same two-level covariance, carries between
    half and all of it (0.70 when written; docs/finite-d.md: the rest is not derived)."""
    raw, wh = _min_norm_pair(24, 0.5, 100, seed=5)
    diff = raw - wh
    m, se = float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff)))
    fd = FD.e_nonlinear_finite(A1ZERO, 0.1, 8.0, 0.5, 0.5, d=24, mc_prompts=200_000)
    term = next(t.delta for t in fd.terms if t.name == "min_norm_metric")
    assert m > 10 * se
    assert 0.5 * (m + 4 * se) < term < m - 4 * se, (term, m, se)


@pytest.mark.sim
@pytest.mark.parametrize("kappa", [pytest.param(0.5, marks=pytest.mark.slow), 2.0])
def test_a1zero_below_the_peak_vs_simulation_d32(kappa):
    """a1 = 0 teacher, d = 32, alpha = 8, tau = 0.5, 200 seeds of the simulator: the corrected theory
    with min_norm_metric is within 4 SE of the simulation (+0.2 % and +0.8 % when written), while the
    terms before it are rejected (the simulation sits 4.5 and 5.7 SE above them).  About 1 min per kappa;
    kappa = 1/2 only with ICL_SYMBOLIC_XSLOW=1."""
    from icl_symbolic.simulation.simulator import simulate_many

    d = 32
    r = simulate_many([dict(f=A1ZERO, d=d, alpha=8.0, kappa=kappa, tau=0.5, rho=0.1, seeds=tuple(range(200)))])[0]
    vals = [float(x.e.value) for x in r.runs]
    sim, se = float(np.mean(vals)), float(np.std(vals, ddof=1) / math.sqrt(len(vals)))
    fd = FD.e_nonlinear_finite(A1ZERO, 0.1, 8.0, kappa, 0.5, d=d)
    without = FD.e_nonlinear_finite(
        A1ZERO, 0.1, 8.0, kappa, 0.5, d=d, terms=tuple(t for t in FD.TERMS if t != "min_norm_metric")
    )
    tol = 4 * math.hypot(se, fd.stderr)
    assert abs(sim - fd.corrected) <= tol, (sim, se, fd.table())
    assert sim - without.corrected > tol, (sim, se, without.corrected)


# ----------------------------------------------------------------------------
# against the simulator (trains the model)
# ----------------------------------------------------------------------------
@pytest.mark.sim
def test_a1zero_corrected_vs_simulation_d24():
    """a1 = 0 teacher, d = 24, alpha = 8, kappa = 2, tau = 3, 48 seeds: the corrected theory is within
    4 combined SE + 1 % of the simulation (measured at d = 32 and 64: within 0.5 %, docs/finite-d.md),
    while the limit Eq. (10) is more than 10 % below it."""
    from icl_symbolic.simulation.simulator import simulate_many

    d = 24
    r = simulate_many(
        [dict(f=A1ZERO, d=d, alpha=8.0, kappa=2.0, tau=3.0, rho=0.1, seeds=tuple(range(48)), n_test=500)]
    )[0]
    vals = [float(x.e.value) for x in r.runs]
    sim, se = float(np.mean(vals)), float(np.std(vals, ddof=1) / math.sqrt(len(vals)))
    fd = FD.e_nonlinear_finite(A1ZERO, 0.1, 8.0, 2.0, 3.0, d=d, mc_prompts=200_000)
    assert abs(sim - fd.corrected) <= 4 * math.hypot(se, fd.stderr) + 0.01 * fd.corrected, (sim, se, fd.table())
    assert sim > 1.10 * fd.limit


# ----------------------------------------------------------------------------
# population (a1 != 0, n > p): exact population fit on a bank + elliptical variance
# ----------------------------------------------------------------------------
def _bank_prompts(f, W, ell, rho, N, rng):
    from icl_symbolic.engine.expr import teacher
    from icl_symbolic.model.prompts import sample_prompts

    k = W.shape[0]
    return sample_prompts(teacher(f).numpy, W[np.arange(N) % k], ell, rho, rng, method="direct")


@pytest.mark.heavy
@pytest.mark.parametrize("f", ["g", "sin(g)"])
def test_population_fit_vs_brute_force_least_squares(f):
    """d = 4, ell = 8, k = 3 tasks: least squares on 200 000 prompts drawn directly (every x_i) from the
    bank converges to Gamma* = d C Sigma^-1 built from the exact Lemma 1 moments (relative Frobenius
    distance below 3 %, the OLS noise is about 1 %), and the exact training error of Gamma* equals the
    Monte-Carlo mean of e^2 on a fresh sample within 4 SE; the limit's A = I/(1 + nu), b = 0 is rejected."""
    d, ell, k, rho = 4, 8, 3, 0.1
    rng = np.random.default_rng(11)
    W = rng.standard_normal((k, d))
    A, b, e_train, S = FD.population_fit(f, rho, d, ell, W)
    G = np.concatenate([A, b[:, None]], axis=1)
    P = _bank_prompts(f, W, ell, rho, 200_000, rng)
    V = np.concatenate([P.u, P.s[:, None]], axis=1)
    H = (P.x_test[:, :, None] * V[:, None, :]).reshape(len(V), d * (d + 1))
    G_ls = np.linalg.lstsq(H, P.y_test, rcond=None)[0].reshape(d, d + 1)
    assert np.linalg.norm(G_ls - G) / np.linalg.norm(G) < 0.03, (G_ls, G)
    Q = _bank_prompts(f, W, ell, rho, 200_000, rng)
    Vq = np.concatenate([Q.u, Q.s[:, None]], axis=1)
    e2 = (Q.y_test - np.einsum("md,md->m", Q.x_test, Vq @ G.T)) ** 2
    mc, se = float(e2.mean()), float(e2.std(ddof=1) / math.sqrt(len(e2)))
    assert abs(mc - e_train) <= 4 * se, (mc, se, e_train)
    nu = (1 + rho) / (ell / d)
    G0 = np.concatenate([np.eye(d) / (1 + nu), np.zeros((d, 1))], axis=1)
    e0 = float(np.mean((Q.y_test - np.einsum("md,md->m", Q.x_test, Vq @ G0.T)) ** 2))
    assert e0 - e_train > 10 * se


@pytest.mark.heavy
def test_fresh_task_second_moment_vs_monte_carlo():
    """E[v v^T] over fresh Gaussian tasks (d = 6, ell = 12, sin): the u block is c_u I and E s^2 matches
    Monte Carlo over 300 000 prompts within 4 SE (a change of 1/ell in c_u would be detected)."""
    d, ell, rho = 6, 12, 0.1
    rng = np.random.default_rng(5)
    P = _bank_prompts("sin(g)", rng.standard_normal((300_000, d)), ell, rho, 300_000, rng)
    Ste = FD.fresh_task_second_moment("sin(g)", rho, d, ell)
    u2 = np.einsum("md,md->m", P.u, P.u) / d
    for est, ref in ((u2, Ste[0, 0]), (P.s**2, Ste[d, d])):
        mc, se = float(est.mean()), float(est.std(ddof=1) / math.sqrt(len(est)))
        assert abs(mc - ref) <= 4 * se, (mc, se, ref)
    assert abs(float(u2.mean()) - Ste[0, 0] * (1 + 1 / ell)) > 4 * float(u2.std(ddof=1) / math.sqrt(len(u2)))
    assert np.allclose(Ste, np.diag(np.diag(Ste)))


def test_population_variance_falls_like_one_over_n_minus_p():
    """The elliptical variance is delta-weighted: (n - p)/p x variance tends to a constant as n grows
    (the misspecified-OLS sandwich), and the term refuses n <= p."""
    d, ell, k = 8, 16, 16
    p = d * (d + 1)
    mc = FD.PopulationMC(banks=2, prompts=20_000)
    vs = [FD.e_population_ols("sin(g)", 0.1, d, ell, k, n, mc) for n in (4 * p, 40 * p)]
    assert vs[0].e_pop == pytest.approx(vs[1].e_pop, rel=1e-12)  # same banks (same seed)
    c = [v.variance * (n - p) / p for v, n in zip(vs, (4 * p, 40 * p))]
    assert c[1] == pytest.approx(c[0], rel=0.05) and vs[0].variance > 5 * vs[1].variance
    with pytest.raises(ICLError):
        FD.e_population_ols("sin(g)", 0.1, d, ell, k, p, mc)


def test_population_term_applies_to_least_squares_with_a1_only():
    on = FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 2.0, 3.0, d=8, banks=2)
    assert [t.name for t in on.terms][-1] == "population" and on.stderr > 0
    below = FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 2.0, 0.5, d=8, banks=2)
    assert "population" not in [t.name for t in below.terms]
    a1z = FD.e_nonlinear_finite(A1ZERO, 0.1, 8.0, 2.0, 3.0, d=8, mc_prompts=20_000, banks=2)
    assert "population" not in [t.name for t in a1z.terms]


@pytest.mark.sim
def test_population_term_vs_simulation_d12():
    """Linear teacher, d = 12, alpha = 2, kappa = 2, tau = 3, 400 seeds of the simulator (brute force:
    trains the model): the corrected theory with the population term is within 4 combined SE + 1 % of
    the simulation (measured with 800 seeds: -0.4 %, docs/finite-d.md; at kappa = 0.5, k = 6 tasks, the
    residual is -2.2 %, an O(1/d^2) piece not tested here), while the previous value (radial, no
    population term; +7 %) is rejected by the same margin."""
    kappa = 2.0
    from icl_symbolic.simulation.simulator import simulate_many

    d = 12
    r = simulate_many(
        [dict(f="g", d=d, alpha=2.0, kappa=kappa, tau=3.0, rho=0.1, seeds=tuple(range(400)), n_test=500)]
    )[0]
    vals = [float(x.e.value) for x in r.runs]
    sim, se = float(np.mean(vals)), float(np.std(vals, ddof=1) / math.sqrt(len(vals)))
    fd = FD.e_nonlinear_finite("g", 0.1, 2.0, kappa, 3.0, d=d, banks=128)
    old = FD.e_nonlinear_finite("g", 0.1, 2.0, kappa, 3.0, d=d, terms=FD.TERMS[:5], mc_prompts=200_000)
    tol = 4 * math.hypot(se, fd.stderr) + 0.01 * fd.corrected
    assert abs(sim - fd.corrected) <= tol, (sim, se, fd.table())
    assert abs(sim - old.corrected) > tol, (sim, se, old.table())


# ----------------------------------------------------------------------------
# CLI: theory --d D --order 1
# ----------------------------------------------------------------------------
def test_cli_theory_order1(capsys):
    import json

    from icl_symbolic.cli import main

    assert (
        main(
            [
                *SIN_D64_ORDER1,
                "--tau",
                "3",
                "--terms",
                "param_count,bank_resolvent",
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    (pt,) = doc["points"]
    fd = FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 2.0, 3.0, d=64, terms=("param_count", "bank_resolvent"))
    assert pt["e_theory"] == pytest.approx(fd.limit, rel=1e-12) and pt["e_theory_finite_d"] == pytest.approx(
        fd.corrected, rel=1e-12
    )
    assert set(pt["finite_d_terms"]) == set(pt["finite_d_sources"]) == {"param_count", "bank_resolvent"}
    assert pt["e_theory_finite_d_text"] == f"{fd.corrected:.6g}"
    assert "deterministic" in pt["e_theory_finite_d_method"]
    assert pt["finite_d_gap_pct"] == pytest.approx(100 * (fd.corrected / fd.limit - 1), rel=1e-9)
    assert main(["theory", "g", "--order", "1", "--tau", "2"]) != 0  # needs --d


def _fd_with(terms, stderr, corrected=0.5392512345):
    return FD.FiniteD(32, 0.52, corrected, tuple(FD.Term(t, 0.001, "") for t in terms), stderr=stderr)


@pytest.mark.parametrize(
    "terms,stderr,text",
    [
        (("param_count", "population"), 4.8e-4, "0.53925 +- 0.0005"),  # to the SE's place, SE one digit
        (("param_count", "population"), 0.012, "0.539 +- 0.01"),
        (("param_count", "radial"), 0.0, "0.5393"),  # radial prompt MC: 4 significant digits
        (("param_count", "bank_resolvent"), 0.0, "0.539251"),  # deterministic: 6 significant digits
    ],
)
def test_corrected_value_is_printed_with_the_digits_its_method_has(terms, stderr, text):
    fd = _fd_with(terms, stderr)
    assert fd.value_text() == text
    assert ("Monte-Carlo SE" in fd.method) == bool(stderr)
    assert ("4 significant digits" in fd.method) == (stderr == 0 and "radial" in terms)


@pytest.mark.heavy
@pytest.mark.parametrize("kappa", [0.5, 2.0])
def test_intercept_shift_is_the_b_column_of_the_exact_population_fit(kappa):
    """Linear teacher, d = 32, alpha = 2: the exact population fit with the column b minus the fit with
    A alone (same 16 banks) equals the derived intercept shift (centred bank + |(I - A) w_bar|^2/d)
    within 4 SE, and is itself more than 4 SE away from 0 (so the test can fail)."""
    from icl_symbolic.model.gamma_error import e_gamma_isotropic

    d, rho, alpha = 32, 0.1, 2.0
    ell, k, _ = FD.finite_sizes(d, alpha, kappa, 3.0)
    rng = np.random.default_rng(5)
    diff = []
    for _ in range(16):
        W = rng.standard_normal((k, d))
        A, b, _, S = FD.population_fit("g", rho, d, ell, W)
        c = FD._task_coeffs("g", rho, d, ell, np.einsum("kd,kd->k", W, W) / d)
        A0 = d * np.linalg.solve(S[:d, :d], ((W.T * (c["E_yx"] * c["E_u"])) @ W / k).T).T
        diff.append(
            float(e_gamma_isotropic(A, b, "g", rho, d, ell).value)
            - float(e_gamma_isotropic(A0, np.zeros(d), "g", rho, d, ell).value)
        )
    m, se = float(np.mean(diff)), float(np.std(diff, ddof=1) / math.sqrt(len(diff)))
    shift = FD.intercept_shift(rho, alpha, kappa, d)
    assert abs(m - shift) <= 4 * se, (m, se, shift)
    assert m > 4 * se


# ----------------------------------------------------------------------------
# simulate --order 1: the corrected theory next to the simulation
# ----------------------------------------------------------------------------
@pytest.mark.sim
def test_simulate_order1_prints_writes_and_plots_the_corrected_theory(tmp_path, capsys):
    import csv
    import json

    from icl_symbolic.cli import main

    out_json, out_csv, out_png = tmp_path / "s.json", tmp_path / "s.csv", tmp_path / "s.png"
    args = ["simulate", "sin(g)", "--d", "8", "--tau", "0.5", "--seeds", "2", "--n-test", "50", "--order", "1"]
    code = main([*args, "--json-out", str(out_json), "--csv", str(out_csv), "--plot", str(out_png), "--quiet"])
    assert code == 3  # 2 seeds at d = 8 cannot resolve 5 %: inconclusive (core.verdict), never "agrees"
    text = capsys.readouterr().out
    want = FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 2.0, 0.5, d=8)
    assert "O(1/d) terms at d = 8" in text
    (pt,) = json.loads(out_json.read_text())["points"]
    assert pt["e_theory_finite_d"] == pytest.approx(want.corrected, rel=1e-12)
    assert pt["e_theory_finite_d"] != pytest.approx(pt["e_theory"], rel=1e-3)  # the terms move it
    assert set(pt["finite_d_terms"]) == {t.name for t in want.terms}
    # the same finite-d keys as theory --order 1 (FiniteD.json_fields), the limit being the point's own
    assert set(want.json_fields()) <= set(pt) and pt["e_theory"] == pytest.approx(want.limit, rel=1e-9)
    doc = json.loads(out_json.read_text())
    assert doc["status"] == "inconclusive" and doc["mde_rel"] == pt["mde_rel"] > 0.05
    assert pt["finite_d_z"] == pytest.approx(
        (pt["e_mean"] - pt["e_theory_finite_d"]) / (pt["e_se"] ** 2 + pt["e_theory_finite_d_se"] ** 2) ** 0.5, rel=1e-9
    )
    (row,) = list(csv.DictReader(out_csv.open()))
    assert float(row["e_theory_finite_d"]) == pytest.approx(want.corrected, rel=1e-12)
    assert out_png.stat().st_size > 0


@pytest.mark.parametrize(
    "extra,why",
    [
        (["--lam", "0.1"], "lam = 0"),
        (["--C-train", "powerlaw:1"], "identity covariances"),
        (["--convention", "letey2024"], "default convention"),
        (["--features", "hermite:2"], "plain attention"),
    ],
)
def test_simulate_order1_refuses_outside_its_scope_before_any_work(tmp_path, capsys, extra, why):
    from icl_symbolic.cli import main

    out = tmp_path / "s.json"
    code = main(["simulate", "sin(g)", "--d", "8", "--seeds", "2", "--order", "1", *extra, "--json-out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and why in err, err
    assert not out.exists()


def test_finite_d_theory_api_refuses_a_ridge_result():
    from icl_symbolic.api.simulation import finite_d_theory, simulate

    r = simulate("sin(g)", d=6, tau=0.5, lam=0.1, seeds=2, n_test=20)
    with pytest.raises(ICLError, match="lam = 0"):
        finite_d_theory(r)


def test_many_points_announce_their_estimate_then_report_each_point(monkeypatch):
    """e_finite_d_many (what simulate/figure --order 1 run): the estimate line first when the work is long
    (population points above the peak dominate it), a line per finished point, results in order."""
    import re

    from icl_symbolic.core.cost import SECONDS_PER

    specs = [dict(f="sin(g)", rho=0.1, alpha=2.0, kappa=2.0, tau=t, d=64) for t in (0.5, 3.0, 4.0)]
    slow = FD.evaluation_seconds("sin(g)", 0.1, 2.0, 2.0, 3.0, 64)
    fast = FD.evaluation_seconds("sin(g)", 0.1, 2.0, 2.0, 0.5, 64)
    per_prompt = FD.SECONDS_PER_PROMPT_TOKEN * (128 + 64)  # ell + d tokens per prompt
    assert fast == pytest.approx(1.0 + FD.RADIAL_PROMPTS["sphere"] * per_prompt)
    assert slow - fast == pytest.approx(32 * (FD.SECONDS_PER_BANK + 2048 * per_prompt))  # the population term
    a1zero = FD.evaluation_seconds("(g^2-1)/sqrt(2)", 0.1, 8.0, 2.0, 3.0, 64)  # alpha = 8: in scope
    assert a1zero == pytest.approx(1.0 + SECONDS_PER["finite_d_radial_per_d"] * 64)  # a1 = 0: no population term
    monkeypatch.setattr(FD, "_finite_d_item", lambda spec: spec["tau"])  # the bookkeeping, not the numbers
    lines = []
    out = FD.e_finite_d_many(specs, progress=lines.append)
    assert out == [0.5, 3.0, 4.0]
    want = sum(FD.evaluation_seconds(s["f"], 0.1, 2.0, 2.0, s["tau"], 64) for s in specs)
    assert want == pytest.approx(fast + 2 * slow)
    assert re.search(r"^finite-d theory \(--order 1\): estimated [0-9.]+ s \(3 points\); progress below", lines[0])
    assert len(lines) == 4 and all(
        ln.startswith(f"finite-d theory: point {i}/3 done") for i, ln in zip((1, 2, 3), lines[1:])
    )
    quiet = []
    small = [dict(specs[0], d=8)]  # about 1.3 s: below the announcement threshold (3 s)
    assert FD.e_finite_d_many(small, progress=quiet.append) == [0.5] and quiet == []  # short: no lines


def test_cli_theory_order1_announces_long_work_and_keeps_the_peak_row(monkeypatch, capsys):
    """theory --order 1 runs its points through e_finite_d_many: the estimate line first when the points
    are long (here two population points at d = 64, about 5 s each estimated; evaluated with one cheap term so
    the test is quick), and a point without a value (n = d(d+1)) keeps its row with the reason."""
    import json
    import re

    from icl_symbolic.cli import main

    cheap = FD._finite_d_item_or_error
    monkeypatch.setattr(FD, "_finite_d_item_or_error", lambda spec: cheap(dict(spec, terms=("param_count",))))
    code = main(
        [
            *SIN_D64_ORDER1,
            "--tau",
            "3,4,1.015625",
            "--json",
        ]
    )
    assert code == 0
    cap = capsys.readouterr()
    assert re.search(r"finite-d theory \(--order 1\): estimated [0-9.]+ s \(3 points\)", cap.err)
    pts = json.loads(cap.out)["points"]
    assert [p["e_theory_finite_d"] is None for p in pts] == [False, False, True]
    assert "diverges" in pts[2]["reason"]
    want = FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 2.0, 3.0, d=64, terms=("param_count",))
    assert pts[0]["e_theory_finite_d"] == pytest.approx(want.corrected, rel=1e-12)


# ----------------------------------------------------------------------------
# speed without changing the value: interpolated coefficients, affine test error, SEs, knobs
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("f", ["sin(g)", "sign(g)", "relu(g)", "abs(g) - 0.5", "heaviside(g - 1) + g/2", "g**3"])
@pytest.mark.parametrize("d", [8, 64])
def test_interpolated_task_coefficients_equal_the_direct_ones(f, d):
    """The banks' Lemma 1 coefficients from the Chebyshev interpolant of the Gaussian functionals equal the
    direct per-omega ones to 1e-9 relative (kinks and jumps included: the functionals are analytic in omega)."""
    om = np.concatenate([np.einsum("kd,kd->k", W, W) / d for W in [FD.population_bank(d, 2 * d, i) for i in range(8)]])
    fast, ref = FD._task_coeffs_many(f, 0.1, d, 2 * d, om), FD._task_coeffs(f, 0.1, d, 2 * d, om)
    for key in ref:
        assert np.max(np.abs(fast[key] - ref[key])) <= 1e-9 * np.max(np.abs(ref[key])), key


@pytest.mark.parametrize("f", ["sin(g)", "sign(g)", "relu(g)"])
def test_test_error_is_affine_in_the_traces(f):
    """e_gamma_isotropic(A, b) = c0 + c1 tr A + c2 |A|_F^2 + c3 |b|^2 with the coefficients read off four
    Gammas, for generated A, b (not diagonal, not symmetric) to 1e-12 relative."""
    from icl_symbolic.model.gamma_error import e_gamma_isotropic

    d, ell = 6, 12
    c0, c1, c2, c3 = FD._test_error_affine(f, 0.1, d, ell)
    rng = np.random.default_rng(3)
    for _ in range(3):
        A, b = rng.standard_normal((d, d)) / d + 0.4 * np.eye(d), 0.2 * rng.standard_normal(d)
        ref = float(e_gamma_isotropic(A, b, f, 0.1, d, ell).value)
        assert c0 + c1 * np.trace(A) + c2 * np.sum(A * A) + c3 * (b @ b) == pytest.approx(ref, rel=1e-12)


def test_radial_signal_se_is_the_seed_spread():
    """The a1 != 0 radial term's batch-means SE against the spread of 12 independent prompt streams
    (d = 8, sin, below the peak, 20 000 prompts each): sd/rms(SE) inside [0.45, 1.8] (for a calibrated SE
    the ratio^2 is chi^2_11/11: false-alarm budget about 1e-3); an SE off by a factor 2 either way fails."""
    d = 8
    ell, k, n = FD.finite_sizes(d, 2.0, 2.0, 0.5)
    a1sq, rnl = FD.task_norm_moments("sin(g)", 0.1, d)
    mf = FD._mfun(k / d, d)
    vals, ses = [], []
    for s in range(12):
        rm = FD.radial_moments("sin(g)", 0.1, d, ell, n=20_000, seed=s, law="sphere")
        v, se = FD.e_radial_signal_se(rm, rnl / a1sq, 0.1 / a1sq, ell / d, k / d, n / (d * (d + 1)), mf)
        assert v == pytest.approx(FD.e_radial_signal(rm, rnl / a1sq, 0.1 / a1sq, ell / d, k / d, n / (d * d + d), mf))
        vals.append(v)
        ses.append(se)
    ratio = float(np.std(vals, ddof=1) / math.sqrt(np.mean(np.square(ses))))
    assert 0.45 <= ratio <= 1.8, ratio


def test_radial_below_the_peak_reports_its_se():
    fd = FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 2.0, 0.5, d=8, mc_prompts=20_000)
    assert fd.stderr > 0 and "+-" in fd.value_text() and "Monte-Carlo SE" in fd.method


def test_unknown_numerical_knob_is_refused():
    with pytest.raises(ICLError, match="unknown option"):
        FD.e_nonlinear_finite("sin(g)", 0.1, 2.0, 2.0, 0.5, d=8, bank=3)
    assert FD.FiniteDKnobs().mc_prompts is None and FD.FiniteDKnobs().scope is True


def test_population_banks_are_shared_across_tau():
    """Common random numbers: the banks (and their exact population errors) are the same at every n, so a
    tau curve differs from point to point only through the variance part."""
    d, ell, k = 8, 16, 16
    p = d * (d + 1)
    mc = FD.PopulationMC(banks=3, prompts=1000)
    a, b = (FD.e_population_ols("sin(g)", 0.1, d, ell, k, n, mc) for n in (3 * p, 5 * p))
    assert a.e_pop == b.e_pop and a.variance > b.variance
    W0 = FD.population_bank(d, k, 0)
    assert W0.shape == (k, d) and np.array_equal(W0, FD.population_bank(d, k, 0))
    assert not np.array_equal(W0, FD.population_bank(d, k, 1))
