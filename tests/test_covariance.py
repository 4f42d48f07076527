"""Named covariance families, validation, and the Appendix A rules (p. 7)."""

import numpy as np
import pytest

from icl_symbolic.core.errors import ICLError
from icl_symbolic.model.covariance import appendix_a, from_array, resolve_covariance, sample_tasks


@pytest.mark.parametrize(
    "spec", ["identity", "powerlaw:0.9", "powerlaw:2", "spiked:0.5:5", "lowrank:0.25", "lowrank:3"]
)
def test_named_families_have_trace_d(spec):
    c = resolve_covariance(spec, 40)
    assert c.d == 40
    assert c.trace == pytest.approx(40.0, rel=1e-13)
    assert np.all(np.diff(c.eigvals) >= 0) and np.all(c.eigvals >= 0)


def test_family_shapes():
    p = resolve_covariance("powerlaw:1", 5).eigvals[::-1]
    assert p / p[0] == pytest.approx(1.0 / np.arange(1, 6))
    s = resolve_covariance("spiked:0.5:2", 10).eigvals
    assert s[-2:] == pytest.approx([2.5, 2.5]) and s[:8] == pytest.approx(np.full(8, 5 / 8))
    assert np.count_nonzero(resolve_covariance("lowrank:0.25", 40).eigvals) == 10
    assert np.count_nonzero(resolve_covariance("lowrank:3", 40).eigvals) == 3


@pytest.mark.parametrize(
    "spec",
    [
        "nope",
        "powerlaw",
        "powerlaw:-1",
        "powerlaw:x",
        "spiked:2:3",
        "spiked:0.5:40",
        "lowrank:0",
        "lowrank:41",
        "lowrank:2.5",
        "missing.npy",
    ],
)
def test_bad_specs_are_one_line_errors(spec):
    with pytest.raises(ICLError) as exc:
        resolve_covariance(spec, 40)
    assert "\n" not in str(exc.value)


def test_matrix_validation(tmp_path):
    rng = np.random.default_rng(20261129)
    B = rng.standard_normal((6, 6))
    C = B @ B.T
    cov = resolve_covariance(C, 6)
    assert cov.matrix() == pytest.approx(C, abs=1e-10)
    path = tmp_path / "c.npy"
    np.save(path, C)
    assert resolve_covariance(str(path), 6).trace == pytest.approx(np.trace(C))
    with pytest.raises(ICLError, match="not symmetric"):
        from_array(B, 6)
    with pytest.raises(ICLError, match="positive semidefinite"):
        from_array(-C, 6)
    with pytest.raises(ICLError, match="expected d = 5"):
        from_array(C, 5)
    with pytest.raises(ICLError, match="negative"):
        from_array(np.array([1.0, -1.0]))


def test_diag_in_basis_of_rotated_matrix():
    rng = np.random.default_rng(7)
    Q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    A = resolve_covariance((Q * np.arange(1.0, 6.0)) @ Q.T, 5)
    B = resolve_covariance("powerlaw:1", 5)
    # tr(B A) computed through the basis of A must equal the dense trace
    assert np.sum(B.diag_in_basis_of(A) * A.eigvals) == pytest.approx(np.trace(B.matrix() @ A.matrix()))


def test_sample_tasks_covariance():
    """Sample covariance of sampled tasks matches C entrywise within 5 SE
    (SE of a sample covariance entry is sqrt((C_ii C_jj + C_ij^2)/k))."""
    rng = np.random.default_rng(99)
    Q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    C = (Q * np.array([0.5, 1.0, 1.0, 1.5])) @ Q.T
    cov = resolve_covariance(C, 4)
    k = 200_000
    W = sample_tasks(cov, k, np.random.default_rng(12345))
    S = W.T @ W / k
    se = np.sqrt((np.outer(np.diag(C), np.diag(C)) + C**2) / k)
    assert np.max(np.abs(S - C) / se) < 5.0


@pytest.mark.parametrize(
    "spec,holds",
    [
        ("identity", True),
        ("powerlaw:0.9", True),
        ("powerlaw:1.5", False),
        ("spiked:0.5:5", False),
        ("spiked:0:5", True),
        ("lowrank:0.5", True),
        ("lowrank:5", False),
    ],
)
def test_appendix_a_rules(spec, holds):
    a = appendix_a(resolve_covariance(spec, 100))
    assert a.holds is holds
    # The analytic rule agrees with how Var(sigma_w) = 2 tr(C^2)/d^2 moves when d grows
    # 64-fold: it must fall markedly when tr C^2 = o(d^2) (slowest family here: p = 0.9,
    # Var ~ d^-0.2, ratio 0.43) and stay put otherwise (ratio > 0.9 for the failing ones).
    big = appendix_a(resolve_covariance(spec, 6400))
    ratio = big.var_sigma / a.var_sigma
    assert (ratio < 0.7) is holds, (spec, ratio)


def test_appendix_a_user_matrix_undecided_and_trace():
    a = appendix_a(resolve_covariance(np.full(10, 2.0), 10))
    assert a.trace_ok is False and a.holds is False and "tr(C)/d = 2" in a.reason
    b = appendix_a(resolve_covariance(np.ones(10), 10))
    assert b.holds is None and b.var_sigma == pytest.approx(0.2)
