"""Tests of the theory engine (icl_symbolic.theory.asymptotic): linear theory, Result 1, Eq. (11)."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icl_symbolic.core.errors import ICLError
from icl_symbolic.model.covariance import resolve_covariance
from icl_symbolic.theory import asymptotic as T
from icl_symbolic.theory.stieltjes import stieltjes

from _stats import z_bonferroni

# -------------------------------------------------------------------------
# isotropic closed form == general recipe
# -------------------------------------------------------------------------
_GRID = list(
    itertools.product(
        [0.0, 0.1, 1.5],  # rho
        [0.3, 2.0, 20.0],  # alpha
        [0.3, 0.9, 1.5, 5.0],  # kappa below / above 1
        [0.2, 0.7, 1.3, 4.0, 50.0],
    )
)  # tau below / above 1


def test_isotropic_closed_form_equals_general_recipe():
    """Closed forms (tau < 1 and tau > 1) vs steps 1-5 with the bracketed M, C = I: 1e-12 relative.

    The general recipe runs on the one-point spectrum [1] and on a d = 50 identity
    Covariance (the same numbers: M depends only on the spectral distribution).
    """
    cov = resolve_covariance("identity", 50)
    for rho, alpha, kappa, tau in _GRID:
        closed = T.e_linear_isotropic(rho, alpha, kappa, tau)
        for C in ("identity", cov):
            general = T.e_linear(
                T.Ratios(rho=rho, alpha=alpha, kappa=kappa, tau=tau), T.TaskCovariances(C_train=C, C_test=None)
            )
            rel = abs(general - closed) / abs(closed)
            assert rel < 1e-12, (rho, alpha, kappa, tau, general, closed)


def test_closed_form_negative_control():
    """The comparison can fail: swapping kappa and kappa/tau in the tau < 1 branch changes e a lot."""
    e = T.e_linear(T.Ratios(rho=0.1, alpha=2.0, kappa=0.5, tau=0.3), T.TaskCovariances(C_train="identity", C_test=None))
    assert (
        abs(
            e
            - T.e_linear(
                T.Ratios(rho=0.1, alpha=2.0, kappa=0.5 / 0.3, tau=0.3),
                T.TaskCovariances(C_train="identity", C_test=None),
            )
        )
        > 1e-3 * e
    )


# -------------------------------------------------------------------------
# ridge
# -------------------------------------------------------------------------
@pytest.mark.parametrize("tau", [0.4, 2.5])
def test_ridge_tends_to_ridgeless(tau):
    """e(lam) -> e(0) linearly in lam (general C): the ridge equation reduces to the xi equation."""
    sp = T.task_spectra("powerlaw:0.6", "spiked:0.4:3", d=200)
    e0 = T._error(sp, 0.2, 1.5, 1.7, tau, 0.0)
    diffs = [abs(T._error(sp, 0.2, 1.5, 1.7, tau, lam) - e0) for lam in (1e-4, 1e-6)]
    assert diffs[1] < 1e-4 * e0
    assert diffs[1] < 0.05 * diffs[0]  # O(lam) convergence: ratio ~ 1e-2


def test_ridge_infinite_is_the_null_predictor():
    """lam -> infinity: Gamma -> 0, so e -> E[y^2] = tr(C_test)/d + rho (any C)."""
    sp = T.task_spectra("powerlaw:0.6", "spiked:0.4:3", d=200)
    for tau in (0.5, 1.0, 3.0):
        e = T._error(sp, 0.2, 1.5, 1.7, tau, 1e8)
        assert e == pytest.approx(sp.tr_test + 0.2, rel=1e-6)


def test_ridge_isotropic_closed_M_equals_bracketed_M():
    """The isotropic ridge curve with the closed-form M equals the bracketed-M recipe."""
    for tau, lam in itertools.product((0.5, 1.0, 2.0), (1e-3, 0.1, 2.0)):
        a = T.e_linear_isotropic(0.1, 2.0, 0.7, tau, lam)
        b = T.e_linear(
            T.Ratios(rho=0.1, alpha=2.0, kappa=0.7, tau=tau, lam=lam),
            T.TaskCovariances(C_train="identity", C_test=None),
        )
        assert a == pytest.approx(b, rel=1e-12)


def test_ridge_removes_peak_and_is_not_monotone_artefact():
    """At tau = 1 the ridge error is finite and decreases as lam grows from 1e-6 to ~0.1."""
    es = [
        T.e_linear(
            T.Ratios(rho=0.1, alpha=2.0, kappa=2.0, tau=1.0, lam=lam),
            T.TaskCovariances(C_train="identity", C_test=None),
        )
        for lam in (1e-6, 1e-3, 1e-1)
    ]
    assert all(np.isfinite(es)) and es[0] > es[1] > es[2]


# -------------------------------------------------------------------------
# general covariances
# -------------------------------------------------------------------------
def _random_psd(rng, d, decay):
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = np.arange(1, d + 1) ** (-decay)
    lam *= d / lam.sum()
    return (Q * lam) @ Q.T


def _dense_recipe(Ctr, Cte, rho, alpha, kappa, tau):
    """Steps 3-5 with dense matrices (independent of the eigenbasis bookkeeping); xi from theory."""
    d = Ctr.shape[0]
    lam = np.linalg.eigvalsh(Ctr)
    rho_tr, rho_te = np.trace(Ctr) / d + rho, np.trace(Cte) / d + rho
    xi = T._solve_xi(lambda nu: stieltjes(nu, lam, kappa), rho_tr / alpha, tau, 0.0)
    nu = rho_tr / alpha + xi
    s = stieltjes(nu, lam, kappa)
    M, Mp = s.M, s.M_prime
    F = np.linalg.inv((1 - 1 / kappa + nu * M / kappa) * Ctr + nu * np.eye(d))
    F2 = F @ ((M / kappa + nu * Mp / kappa) * Ctr + np.eye(d)) @ F
    c = (rho + nu - nu**2 * M - xi * (1 - 2 * nu * M - nu**2 * Mp)) / (tau - (1 - 2 * xi * M - xi**2 * Mp))
    return (
        rho
        + rho_te / alpha * (1 + (c - 2 * nu) * M + (xi * c - nu**2) * Mp)
        + c * np.trace(Cte @ F) / d
        - (c * xi - nu**2) * np.trace(Cte @ F2) / d
    )


@pytest.mark.parametrize("tau", [0.6, 3.0])
def test_noncommuting_test_covariance_matches_dense_formula(tau):
    rng = np.random.default_rng(20261107123456789)
    Ctr, Cte = _random_psd(rng, 40, 0.8), _random_psd(rng, 40, 1.5)
    e = T.e_linear(T.Ratios(rho=0.1, alpha=1.5, kappa=0.8, tau=tau), T.TaskCovariances(C_train=Ctr, C_test=Cte))
    assert e == pytest.approx(_dense_recipe(Ctr, Cte, 0.1, 1.5, 0.8, tau), rel=1e-10)
    # rotation invariance: rotate both by the same orthogonal Q
    Q, _ = np.linalg.qr(rng.standard_normal((40, 40)))
    assert T.e_linear(
        T.Ratios(rho=0.1, alpha=1.5, kappa=0.8, tau=tau), T.TaskCovariances(C_train=Q @ Ctr @ Q.T, C_test=Q @ Cte @ Q.T)
    ) == pytest.approx(e, rel=1e-10)
    # negative control: the same spectra but C_test aligned with C_train give another error
    aligned = np.diag(np.linalg.eigvalsh(Cte))
    lam, V = np.linalg.eigh(Ctr)
    e_aligned = T.e_linear(
        T.Ratios(rho=0.1, alpha=1.5, kappa=0.8, tau=tau), T.TaskCovariances(C_train=Ctr, C_test=V @ aligned @ V.T)
    )
    assert abs(e_aligned - e) > 1e-3 * e


def test_named_families_align_in_ascending_order():
    """powerlaw train with spiked test: the spikes sit on the largest train eigenvalues (both ascending)."""
    sp = T.task_spectra("powerlaw:1", "spiked:0.5:2", d=10)
    assert np.argmax(sp.train) == 9 and np.all(np.diff(sp.train) > 0)
    assert sp.test_diag[-2:].tolist() == [2.5, 2.5]


@pytest.mark.parametrize("c", [0.25, 3.0])
@pytest.mark.parametrize("lam", [0.0, 0.2])
def test_homogeneity(c, lam):
    """e(c C_tr, c C_te, c rho; c lam) = c e(C_tr, C_te, rho; lam) (labels scaled by sqrt(c))."""
    rng = np.random.default_rng(31415926535897932)
    Ctr, Cte = _random_psd(rng, 30, 0.7), _random_psd(rng, 30, 1.2)
    for tau in (0.5, 2.0):
        lhs = T.e_linear(
            T.Ratios(rho=c * 0.3, alpha=2.0, kappa=1.4, tau=tau, lam=c * lam),
            T.TaskCovariances(C_train=c * Ctr, C_test=c * Cte),
        )
        rhs = c * T.e_linear(
            T.Ratios(rho=0.3, alpha=2.0, kappa=1.4, tau=tau, lam=lam), T.TaskCovariances(C_train=Ctr, C_test=Cte)
        )
        assert lhs == pytest.approx(rhs, rel=1e-11)
        # negative control: scaling only the noise is not a symmetry
        assert (
            abs(
                T.e_linear(
                    T.Ratios(rho=c * 0.3, alpha=2.0, kappa=1.4, tau=tau, lam=lam),
                    T.TaskCovariances(C_train=Ctr, C_test=Cte),
                )
                - rhs
            )
            > 1e-3 * rhs
        )


# -------------------------------------------------------------------------
# Result 1
# -------------------------------------------------------------------------
def test_result1_map_and_normalised_form():
    """e_nonlinear = e_linear(a1^2 C, a1^2 C, rho_nl) = a1^2 e_linear(C, C, rho_nl/a1^2)."""
    a1, rnl = 0.6057, 0.1274
    for tau in (0.5, 3.0):
        sp = T.task_spectra("powerlaw:0.5", "identity", d=100)
        direct = T._error(sp.scaled(a1**2), rnl, 2.0, 1.5, tau, 0.0)
        v = T.e_nonlinear(
            None,
            T.Ratios(alpha=2.0, kappa=1.5, tau=tau),
            T.TaskCovariances(C_train="powerlaw:0.5", C_test="identity", d=100),
            a1=a1,
            rho_nonlinear=rnl,
        )
        w = T.e_nonlinear_normalized(
            None,
            T.Ratios(alpha=2.0, kappa=1.5, tau=tau),
            T.TaskCovariances(C_train="powerlaw:0.5", C_test="identity", d=100),
            a1=a1,
            rho_nonlinear=rnl,
        )
        assert float(v) == pytest.approx(direct, rel=1e-13) and v.method == "numeric"
        assert float(w) == pytest.approx(direct, rel=1e-11)


def test_result1_with_teacher_sin_fig1():
    """sin(g), rho = 0.1 (Fig. 1): a1^2 = e^-1, rho_nl / a1^2 = 0.447029... (not the Sec. 3 text's 1.447)."""
    tm = T.teacher_moments("sin(g)")
    assert float(tm.a1) ** 2 == pytest.approx(np.exp(-1), rel=1e-14)
    assert tm.rho_nonlinear(0.1) / float(tm.a1) ** 2 == pytest.approx(0.4470293, abs=1e-7)
    v = T.e_nonlinear(
        "sin(g)", T.Ratios(rho=0.1, alpha=2.0, kappa=2.0, tau=3.0), T.TaskCovariances(C_train="identity", C_test=None)
    )
    rho_norm = (0.1 + (1 - np.exp(-2)) / 2 - np.exp(-1)) * np.e  # closed form of rho_nl / a1^2
    ref = np.exp(-1) * T.e_linear_isotropic(rho_norm, 2.0, 2.0, 3.0)
    assert float(v) == pytest.approx(ref, rel=1e-12)
    wrong = np.exp(-1) * T.e_linear_isotropic(rho_norm + 1, 2.0, 2.0, 3.0)
    assert abs(wrong - float(v)) > 0.05 * float(v)


def test_tanh_floor_fig2():
    """tanh, rho = 0.1: rho_nonlinear = 0.127415... (Fig. 2 floor); the curve approaches it (kappa > 1)."""
    tm = T.teacher_moments("tanh(g)")
    assert tm.rho_nonlinear(0.1) == pytest.approx(0.127415326035430, abs=1e-14)
    seq = T.task_diversity_sequence(4.0, tm.rho_nonlinear(0.1), float(tm.a1), 0.5, alphas=(20, 40, 1e3, 1e6))
    es = [e for _, _, e in seq]
    assert all(e > 0.127415 for e in es) and es[0] > es[1] > es[2] > es[3]
    assert es[-1] == pytest.approx(0.127415326035430, rel=1e-4)


def test_two_teachers_same_moments_same_curve():
    """g^3 and 3g + sqrt(3)(g^2 - 1): both a1 = 3, E[f^2] = 15, different functions -> same curve."""
    kw = dict(rho=0.1, alpha=2.0, kappa=[0.5, 2.0], tau=[0.3, 0.8, 1.5, 4.0])
    c1 = T.curve("g**3", T.Ratios(**kw))
    c2 = T.curve("3*g + sqrt(3)*(g**2 - 1)", T.Ratios(**kw))
    np.testing.assert_allclose(c1.e, c2.e, rtol=1e-13)
    c3 = T.curve("g**3 + g", T.Ratios(**kw))  # a1 = 4: a different curve (negative control)
    assert np.max(np.abs(c3.e / c1.e - 1)) > 1e-2


def test_continuity_to_a1zero_branch():
    """Result 1 with a1 -> 0 tends to Eq. (10); the gap shrinks like a1^2 (general C, also ridge)."""
    rnl = 2.1
    for tau, lam in ((0.5, 0.0), (0.9, 0.0), (2.0, 0.0), (1.0, 0.05)):
        target = T.e_a1zero(rnl, alpha=2.0, tau=tau, lam=lam)
        gaps = []
        for a1 in (1e-2, 1e-3):
            v = T.e_nonlinear(
                None,
                T.Ratios(alpha=2.0, kappa=0.7, tau=tau, lam=lam),
                T.TaskCovariances(C_train="powerlaw:0.7", C_test="spiked:0.3:4", d=80),
                a1=a1,
                rho_nonlinear=rnl,
            )
            gaps.append(abs(float(v) - target))
        assert gaps[1] < 1e-5 * target
        assert gaps[1] < 0.03 * gaps[0]  # O(a1^2): ratio 1e-2
    # exactly a1 = 0: dispatch
    assert float(T.e_nonlinear(None, T.Ratios(alpha=2, kappa=2, tau=0.5), a1=0.0, rho_nonlinear=rnl)) == 2 * rnl


@pytest.mark.parametrize("alpha,kappa", [(0.5, 0.3), (2.0, 2.0), (40.0, 7.0)])
def test_a1zero_values_from_teacher(alpha, kappa):
    """g^2 - 1 (a1 = 0, rho_nl = rho + 2): tau = 0.5, 2 -> 2 rho_nl; 0.9 -> 10 rho_nl; alpha, kappa free."""
    cv = T.curve(
        "g**2 - 1",
        T.Ratios(rho=0.1, alpha=alpha, kappa=kappa, tau=[0.5, 2.0, 0.9]),
        T.TaskCovariances(C_train="powerlaw:0.5", C_test=None, d=64),
    )
    assert cv.branch == "a1zero"
    np.testing.assert_allclose(cv.e, [4.2, 4.2, 21.0], rtol=1e-13)


# -------------------------------------------------------------------------
# Eq. (11)
# -------------------------------------------------------------------------
@pytest.mark.parametrize("kappa", [0.3, 0.8, 1.0, 1.5, 4.0])
def test_task_diversity_numeric_limit(kappa):
    """Along alpha -> inf, tau = alpha/2 the error approaches task_diversity_limit (error O(alpha^-1/2))."""
    rnl, a1 = 0.127415, 0.6057
    lim = T.task_diversity_limit(kappa, rnl, a1, 0.5)
    seq = T.task_diversity_sequence(kappa, rnl, a1, 0.5, alphas=(1e3, 1e5, 1e7))
    gaps = [abs(e - lim) for *_, e in seq]
    assert gaps[-1] < 2e-3 * lim
    assert gaps[2] < gaps[1] < gaps[0]
    if kappa > 1:
        assert lim == rnl


@pytest.mark.heavy
def test_task_diversity_symbolic():
    D = T.derive_task_diversity()
    assert D.paper_eq11_holds and D.matches_closed_form
    assert D.limit_at_one == D.symbols["rho"]


# -------------------------------------------------------------------------
# input validation, Appendix A
# -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kw", [dict(tau=1.0), dict(kappa=0.0), dict(alpha=-1.0), dict(rho=-0.1), dict(lam=-1.0), dict(tau=float("nan"))]
)
def test_bad_parameters(kw):
    args = dict(rho=0.1, alpha=2.0, kappa=2.0, tau=0.5, lam=0.0) | kw
    with pytest.raises(ICLError):
        T.e_linear(T.Ratios(**args), T.TaskCovariances(C_train="identity", C_test=None))


def test_bad_covariance():
    with pytest.raises(ICLError, match="symmetric"):
        T.e_linear(
            T.Ratios(rho=0.1, alpha=1, kappa=1, tau=0.5),
            T.TaskCovariances(C_train=np.array([[1.0, 0.5], [0.0, 1.0]]), C_test=None),
        )
    with pytest.raises(ICLError, match="semidefinite"):
        T.e_linear(
            T.Ratios(rho=0.1, alpha=1, kappa=1, tau=0.5),
            T.TaskCovariances(C_train=np.array([[1.0, 2.0], [2.0, 1.0]]), C_test=None),
        )
    with pytest.raises(ICLError):
        T.e_linear(
            T.Ratios(rho=0.1, alpha=1, kappa=1, tau=0.5), T.TaskCovariances(C_train="powerlaw:1", C_test=np.eye(3), d=4)
        )


def test_appendix_a_warnings():
    assert T.appendix_a_warnings("identity") == []
    assert T.appendix_a_warnings("identity", None, d=100) == []
    w = T.appendix_a_warnings("identity", "lowrank:5", d=100)
    assert len(w) == 1 and w[0].startswith("C_test") and "FAIL" in w[0]


# -------------------------------------------------------------------------
# ridge against a small simulation of the model (slow)
# -------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("tau", [0.6, 2.0])
def test_ridge_general_C_against_simulation(tau):
    """Ridge recipe (lam = 0.3) for a power-law C vs a brute-force simulation of Eq. (6).

    The theory is d -> infinity and the simulation is biased by O(1/d)
    (docs/finite-size.md; here +5 % to +15 % at d = 16-48).  So we simulate at
    d = 16, 24, 32, 48 (12 seeds each), fit gap(d) = sim(d) - theory(d) = b0 + b1/d by
    weighted least squares (weights 1/SE^2, SE from the seed spread) and require the
    intercept b0 to be 0 within z SE(b0).  Budget: two-sided 1e-3 over 2 comparisons
    (tau = 0.6, 2), z = 3.48.  Resolution: SE(b0) < 3 % of e.  Negative control: the
    same fit against the ridgeless theory (lam = 0, 20-30 % higher here) is rejected.
    About 1-2 minutes on 2 cores.
    """
    z = z_bonferroni(2)
    alpha, kappa, lam, rho = 1.0, 2.0, 0.3, 0.1
    ds = np.array([16, 24, 32, 48])
    sims, ses, th, th0 = [], [], [], []
    for d in ds:
        cov = resolve_covariance("powerlaw:0.6", int(d))
        seeds = np.random.SeedSequence([5551234567890123, int(d), int(10 * tau)]).spawn(12)
        errs = [_simulate_once(cov, alpha, kappa, tau, lam, rho, np.random.default_rng(s)) for s in seeds]
        sims.append(np.mean(errs))
        ses.append(np.std(errs, ddof=1) / np.sqrt(len(errs)))
        th.append(
            T.e_linear(
                T.Ratios(rho=rho, alpha=alpha, kappa=kappa, tau=tau, lam=lam),
                T.TaskCovariances(C_train=cov, C_test=None),
            )
        )
        th0.append(
            T.e_linear(
                T.Ratios(rho=rho, alpha=alpha, kappa=kappa, tau=tau, lam=0.0),
                T.TaskCovariances(C_train=cov, C_test=None),
            )
        )
    sims, ses, th, th0 = map(np.asarray, (sims, ses, th, th0))
    A = np.vstack([np.ones(len(ds)), 1.0 / ds]).T
    W = 1.0 / ses**2
    cov_b = np.linalg.inv(A.T @ (A * W[:, None]))

    def intercept(theory):
        b = cov_b @ (A.T @ (W * (sims - theory)))
        return b[0], float(np.sqrt(cov_b[0, 0]))

    b0, se0 = intercept(th)
    assert se0 < 0.03 * th[-1], (se0, th[-1])
    assert abs(b0) < z * se0, dict(d=ds, sim=sims, se=ses, theory=th, b0=b0, se_b0=se0)
    b0_wrong, _ = intercept(th0)
    assert abs(b0_wrong) > z * se0, (b0_wrong, se0)


def _simulate_once(cov, alpha, kappa, tau, lam, rho, rng):
    """Reduced linear attention trained by ridge (Eq. 6), linear teacher; test MSE on fresh tasks."""
    d = cov.d
    ell, k, n = int(round(alpha * d)), int(round(kappa * d)), int(round(tau * d * d))
    sq = np.sqrt(cov.eigvals)
    tasks = rng.standard_normal((k, d)) * sq

    def features(W):
        m = W.shape[0]
        X = rng.standard_normal((m, ell, d)) / np.sqrt(d)
        y = np.einsum("mld,md->ml", X, W) + np.sqrt(rho) * rng.standard_normal((m, ell))
        u = (d / ell) * np.einsum("ml,mld->md", y, X)
        s = np.mean(y * y, axis=1)
        xq = rng.standard_normal((m, d)) / np.sqrt(d)
        yq = np.einsum("md,md->m", xq, W) + np.sqrt(rho) * rng.standard_normal(m)
        H = np.concatenate([np.einsum("mi,mj->mij", xq, u).reshape(m, -1), xq * s[:, None]], axis=1)
        return H, yq

    H, y = features(tasks[rng.integers(0, k, n)])
    A = H.T @ H + (n / d) * lam * np.eye(H.shape[1])
    gamma = np.linalg.solve(A, H.T @ y)
    Ht, yt = features(rng.standard_normal((4000, d)) * sq)
    return float(np.mean((Ht @ gamma - yt) ** 2))


# -------------------------------------------------------------------------
# properties on random inputs
# -------------------------------------------------------------------------


@given(
    seed=st.integers(0, 2**63 - 1),
    rho=st.floats(0.0, 2.0),
    alpha=st.floats(0.1, 50.0),
    kappa=st.floats(0.1, 10.0),
    tau=st.floats(0.05, 20.0),
    lam=st.sampled_from([0.0, 1e-3, 0.5]),
    c=st.floats(0.1, 10.0),
)
def test_random_properties(seed, rho, alpha, kappa, tau, lam, c):
    """e >= rho (the test label's own noise), finite, and homogeneous, for random non-commuting C."""
    if lam == 0 and abs(tau - 1) < 1e-3:
        tau = 1.5
    rng = np.random.default_rng(seed)
    Ctr, Cte = _random_psd(rng, 12, rng.uniform(0, 2)), _random_psd(rng, 12, rng.uniform(0, 2))
    e = T.e_linear(
        T.Ratios(rho=rho, alpha=alpha, kappa=kappa, tau=tau, lam=lam), T.TaskCovariances(C_train=Ctr, C_test=Cte)
    )
    assert np.isfinite(e) and e >= rho * (1 - 1e-12)
    assert T.e_linear(
        T.Ratios(rho=c * rho, alpha=alpha, kappa=kappa, tau=tau, lam=c * lam),
        T.TaskCovariances(C_train=c * Ctr, C_test=c * Cte),
    ) == pytest.approx(c * e, rel=1e-9)
