"""The float64 closed-form Gram route of deep_gram (relu, relu^2, erf): engine/dual_gram_closed.py."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from sympy.solvers.diophantine.diophantine import sum_of_four_squares

from icl_symbolic.core.errors import ValidityError
from icl_symbolic.engine import dual_gram_closed
from icl_symbolic.engine.dual_deep import deep_gram, deep_pair


def _sphere_rows(n, d=8, k=4, seed=1):
    """Rows with dyadic entries and |x|^2 = d exactly (four-square completion): the float rows are
    the exact rationals deep_pair reads, on the sphere of radius sqrt(d)."""
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < n:
        head = rng.integers(-20, 21, d - 4)
        rem = d * 4**k - int((head**2).sum())
        if rem < 0:
            continue
        v = np.concatenate([head, np.array(sum_of_four_squares(rem)) * rng.choice([-1, 1], 4)])
        rng.shuffle(v)
        rows.append(v / 2**k)
    X = np.array(rows, dtype=float)
    assert np.all((X**2).sum(axis=1) == d)
    return X


def _outside(G, X, f, depth, sw, sb):
    """The largest |Gram - Arb value| / bound over the off-diagonal pairs (deep_pair, 30 digits)."""
    worst = 0.0
    for i in range(len(X)):
        for j in range(i + 1, len(X)):
            p = deep_pair(f, [str(v) for v in X[i]], [str(v) for v in X[j]], depth, sw, sb, 30)
            for A, e, v in ((G.nngp, G.nngp_err, p.nngp[-1]), (G.ntk, G.ntk_err, p.ntk[-1])):
                worst = max(worst, float(abs(mpmath.mpf(v.value) - A[i, j]) / e))
    return worst


@pytest.mark.parametrize("f", ["relu(g)", "erf(g)", "2*erf(g/3)", "2*relu(3*g)", "relu(g)**2"])
@pytest.mark.parametrize("depth", [1, 3, 5])
def test_closed_gram_within_bound_of_arb_pairs(f, depth):
    X = _sphere_rows(5)
    G = deep_gram(f, X, depth, sigma_w2=2, sigma_b2="1/10")
    assert G.orders == ()
    scale = max(np.abs(G.ntk).max(), 1)
    assert G.nngp_err < 1e-12 * scale and G.ntk_err < 1e-12 * scale  # not vacuous
    assert _outside(G, X, f, depth, 2, "1/10") <= 1
    for A, e in ((G.nngp, G.nngp_err), (G.ntk, G.ntk_err)):
        assert np.array_equal(A, A.T)
        assert np.linalg.eigvalsh(A).min() >= -A.shape[0] * e


def test_planted_sigma_b2_error_is_caught():
    """A Gram computed with sigma_b^2 off by 1e-10 lies outside the bound of the true Arb values."""
    X = _sphere_rows(4)
    G = deep_gram("relu(g)", X, 3, sigma_w2=2, sigma_b2=mpmath.mpf("0.1") + mpmath.mpf("1e-10"))
    assert _outside(G, X, "relu(g)", 3, 2, "1/10") > 10


def test_planted_map_error_is_caught(monkeypatch):
    """A wrong NTK map (Kdot dropped from the diagonal's recursion: Theta^(l+1)(x,x) = q^(l+1)) is caught."""
    X = _sphere_rows(4)
    orig = dual_gram_closed._Maps.diag
    monkeypatch.setattr(dual_gram_closed._Maps, "diag", lambda self, q: (orig(self, q)[0], 0 * orig(self, q)[1]))
    G = deep_gram("relu(g)", X, 3, sigma_w2=2, sigma_b2="1/10")
    ref = _mp_relu_ntk(X, 3, 2, mpmath.mpf(1) / 10)
    assert abs(ref[0, 0] - G.ntk[0, 0]) > 1e3 * G.ntk_err


def _mp_relu_ntk(X, depth, sw, sb, dps=40):
    """An independent straightforward arc-cosine recursion (Cho and Saul 2009; Arora et al. 2019,
    the ReLU NTK) in mpmath at dps digits, every pair and the diagonal."""
    n, d = X.shape
    out = mpmath.matrix(n, n)
    with mpmath.workdps(dps):
        sw, sb = mpmath.mpf(sw), mpmath.mpf(sb)
        for i in range(n):
            for j in range(n):
                x, y = [mpmath.mpf(v) for v in X[i]], [mpmath.mpf(v) for v in X[j]]
                nx, ny = mpmath.sqrt(mpmath.fsum(a * a for a in x)), mpmath.sqrt(mpmath.fsum(b * b for b in y))
                r = mpmath.fsum(a * b for a, b in zip(x, y)) / (nx * ny)
                q, c = sw + sb, sw * r + sb
                th = c
                for _ in range(depth):
                    rho = min(c / q, mpmath.mpf(1))
                    t = mpmath.acos(rho)
                    k = q * (mpmath.sin(t) + (mpmath.pi - t) * mpmath.cos(t)) / (2 * mpmath.pi)
                    kd = (mpmath.pi - t) / (2 * mpmath.pi)
                    c = sw * k + sb
                    th = c + sw * kd * th
                    q = sw * q / 2 + sb
                out[i, j] = th
    return out


@pytest.mark.parametrize("depth", [2, 5, 10])
def test_relu_ntk_against_mpmath_arccos_recursion(depth):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((6, 10))
    G = deep_gram("relu(g)", X, depth, sigma_w2=2, sigma_b2="1/10")
    ref = _mp_relu_ntk(X, depth, 2, mpmath.mpf(1) / 10)
    worst = max(abs(ref[i, j] - G.ntk[i, j]) for i in range(6) for j in range(6))
    assert worst <= G.ntk_err and G.ntk_err < 1e-11


def test_step_sign_refused_and_parallel_rows_refused():
    X = np.random.default_rng(0).standard_normal((4, 5))
    for f in ("sign(g)", "heaviside(g)"):
        with pytest.raises(ValidityError, match="infinite on the diagonal"):
            deep_gram(f, X, 2, sigma_w2=2, sigma_b2=0)
    with pytest.raises(ValidityError, match="parallel"):
        deep_gram("relu(g)", np.vstack([X, 3 * X[:1]]), 2, sigma_w2=2, sigma_b2=0)


def test_libm_assumption_on_a_sample():
    """numpy's arccos and arcsin within LIBM_ULPS ulps of mpmath's 40-digit values (a sample,
    dense near +-1, where the route uses them); a planted 5-ulp assumption breach would fail."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-1, 1, 2000), 1 - 10.0 ** -rng.uniform(1, 15, 500)])
    with mpmath.workdps(40):
        for fn, ref in ((np.arccos, mpmath.acos), (np.arcsin, mpmath.asin)):
            got = fn(x)
            for xi, gi in zip(x, got):
                ex = ref(mpmath.mpf(float(xi)))
                assert abs(gi - ex) <= 2 * dual_gram_closed.LIBM_ULPS * 2.0**-53 * abs(ex) + 2.0**-1070


def test_huge_and_tiny_rows_are_scaled_exactly():
    X = np.random.default_rng(2).standard_normal((4, 6))
    G = deep_gram("relu(g)", X, 2, sigma_w2=2, sigma_b2=0)
    H = deep_gram("relu(g)", X * np.array([[1e200], [1e-200], [1.0], [3.0]]), 2, sigma_w2=2, sigma_b2=0)
    assert np.max(np.abs(G.ntk - H.ntk)) <= G.ntk_err + H.ntk_err


def test_deep_relu_literature_claims_hold_and_a_planted_error_fails(monkeypatch):
    """The deep ReLU claims of derivations/17_dual_kernels.toml hold; with the reference's bias
    moved by 1e-20 (a planted wrong sigma_b^2 handling) they do not."""
    from icl_symbolic.verification import claimfile, runner
    from icl_symbolic.verification.checks import dual as dual_checks

    path = str(claimfile.shipped_derivations() / "17_dual_kernels.toml")
    claims = [c for c in claimfile.load_file(path) if c.id.startswith("dual.deep_relu")]
    assert len(claims) == 2 and {c.tier for c in claims} == {"quick"}
    assert all(r.ok and r.verdict == "holds" for r in runner.run_claims(claims, tier="quick"))
    orig = dual_checks._arccos_recursion
    monkeypatch.setattr(
        dual_checks, "_arccos_recursion", lambda x, y, L, sw, sb, dps: orig(x, y, L, sw, sb + mpmath.mpf("1e-20"), dps)
    )
    assert not any(r.verdict == "holds" for r in runner.run_claims(claims, tier="quick"))
