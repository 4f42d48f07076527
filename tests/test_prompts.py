"""The exact fast O(ell + d) prompt sampler against the direct O(ell d) sampler.

The fast sampler is used only if it passes a distributional test against
the direct one: the same moments within standard errors, and the same trained-model
error.  Budget: two-sided false alarm 1e-3 per test, Bonferroni over the m
comparisons of the test (z printed in each docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

from icl_symbolic.core.errors import ICLError
from icl_symbolic.model.prompts import sample_prompts
from icl_symbolic.simulation.simulator import simulate_many

from _stats import t_bonferroni, z_bonferroni


def _statistics(P, w):
    """Per-prompt statistics whose means must agree between samplers."""
    e = w / np.linalg.norm(w)
    q = np.zeros_like(w)
    q[0], q[1] = -w[1], w[0]
    q /= np.linalg.norm(q)  # unit vector orthogonal to w
    ue, uq = P.u @ e, P.u @ q
    perp2 = np.einsum("md,md->m", P.u, P.u) - ue**2
    return {
        "u.e": ue,
        "(u.e)^2": ue**2,
        "|u_perp|^2": perp2,
        "s": P.s,
        "s^2": P.s**2,
        "(u.e) s": ue * P.s,
        "(u.q)^2": uq**2,
        "(u.q)^2 s": uq**2 * P.s,
        "(u.q)^2 (u.e)^2": uq**2 * ue**2,
        "y_test x_test.e": P.y_test * (P.x_test @ e),
    }


def _compare(Pa, Pb, w):
    sa, sb = _statistics(Pa, w), _statistics(Pb, w)
    out = {}
    for key in sa:
        a, b = sa[key], sb[key]
        se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
        out[key] = ((a.mean() - b.mean()) / se, se / max(abs(a.mean()), abs(b.mean()), 1e-12))
    return out


POSITIVE = ("(u.e)^2", "|u_perp|^2", "s", "s^2", "(u.q)^2", "(u.q)^2 s", "(u.q)^2 (u.e)^2")
TEACHERS = {"sin": np.sin, "tanh": np.tanh, "he2": lambda z: (z * z - 1) / np.sqrt(2)}


def test_fast_sampler_moments_match_direct():
    """10 statistics x 3 teachers (sin, tanh, a1 = 0 teacher (g^2-1)/sqrt 2), fixed w with
    |w|^2 = 1.2 d, short context ell = 4 (where non-Gaussian effects are largest):
    |difference| < z SE with z = 4.27 ... (m = 30 comparisons, Bonferroni, 1e-3 total).
    The SE must be small so the test has power: < 2% of the moment for sin and tanh,
    < 15% for the a1 = 0 teacher, whose fourth-order statistics involve E[z^16]-type
    moments and are far noisier (its second-order ones are < 2%)."""
    d, ell, rho, m = 5, 4, 0.1, 100_000
    z = z_bonferroni(30)
    rng_w = np.random.default_rng(8675309)
    for name, f in TEACHERS.items():
        w = rng_w.standard_normal(d) * 1.3
        W = np.tile(w, (m, 1))
        Pd = sample_prompts(f, W, ell, rho, np.random.default_rng(1234567890123), method="direct")
        Pf = sample_prompts(f, W, ell, rho, np.random.default_rng(9876543210987), method="fast")
        for key, (zval, rel_se) in _compare(Pd, Pf, w).items():
            assert abs(zval) < z, f"{name}: {key} differs by {zval:.2f} SE"
            if key in POSITIVE:  # odd statistics vanish for the even teacher
                assert rel_se < (0.15 if name == "he2" else 0.02), f"{name}: {key} SE too large ({rel_se:.3f})"


def test_negative_control_wrong_perp_variance_is_detected():
    """A wrong 'fast' sampler that uses the expected sum y^2 (not the drawn one) for the
    Gaussian remainder has the right mean of (u.q)^2 but not of (u.q)^2 s: the test statistic
    of the previous test must flag it (|z| > 4.27), so the test can fail."""
    d, ell, rho, m = 5, 4, 0.1, 100_000
    f = TEACHERS["he2"]
    w = np.random.default_rng(8675309).standard_normal(d)
    w *= np.sqrt(1.2 * d) / np.linalg.norm(w)
    W = np.tile(w, (m, 1))
    Pd = sample_prompts(f, W, ell, rho, np.random.default_rng(1234567890123), method="direct")
    Pf = sample_prompts(f, W, ell, rho, np.random.default_rng(9876543210987), method="fast")
    # rebuild u with the perpendicular part rescaled from sqrt(sum y^2) to sqrt(E sum y^2)
    e = w / np.linalg.norm(w)
    ue = Pf.u @ e
    perp = Pf.u - ue[:, None] * e
    syy = Pf.s * ell
    wrong_u = ue[:, None] * e + perp * np.sqrt(syy.mean() / syy)[:, None]
    wrong = Pf._replace(u=wrong_u)
    res = _compare(Pd, wrong, w)
    assert abs(res["(u.q)^2 s"][0]) > z_bonferroni(30)
    assert abs(res["(u.q)^2"][0]) < z_bonferroni(30)  # the plain second moment cannot see the bug


def test_fast_sampler_zero_task_and_bad_method():
    P = sample_prompts(np.tanh, np.zeros((4, 3)), 6, 0.2, np.random.default_rng(1), method="fast")
    assert np.all(np.isfinite(P.u)) and np.all(P.s > 0)
    with pytest.raises(ICLError, match="sampler"):
        sample_prompts(np.tanh, np.zeros((4, 3)), 6, 0.2, np.random.default_rng(1), method="exact")


@pytest.mark.sim
def test_fast_and_direct_give_same_trained_model_error():
    """Same trained-model error: simulate with each sampler on independent seeds (S = 16
    each), compare the seed means of the Monte-Carlo test error with the Student-t
    quantile at two-sided 1e-3 (m = 1) and 2 (S - 1) degrees of freedom.
    The combined SE must be below 4% of the error."""
    S = 16
    kw = dict(f="tanh(g)", d=12, alpha=2, kappa=2, tau=3, rho=0.1, n_test=4000, exact=False)
    a = simulate_many([dict(seeds=range(0, S), sampler="direct", **kw)])[0]
    b = simulate_many([dict(seeds=range(1000, 1000 + S), sampler="fast", **kw)])[0]
    se = np.hypot(a.e_mc.stderr, b.e_mc.stderr)
    t = t_bonferroni(1, 2 * (S - 1))
    assert se < 0.04 * float(a.e_mc)
    assert abs(float(a.e_mc) - float(b.e_mc)) < t * se, (float(a.e_mc), float(b.e_mc), se)
