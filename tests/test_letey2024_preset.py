"""The ``letey2024`` preset follows the authors' public simulation code choice by choice
(docs/conventions.md cites the file and line of each): every task exactly n/K times in the
order prompt mu -> task mu mod K, K = int(kappa d), n = round(tau d^2/K) K, ell = int(alpha d)
(the double products truncated), sphere pretraining tasks, Gaussian test tasks, ridge 1e-6, and
their published spread (np.std, ddof 0; the gap's spread sqrt(std_ICL^2 + std_IDG^2)).
The preset's fields themselves are pinned in tests/test_conventions.py."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icl_symbolic.model.setting import (
    CONVENTIONS,
    PUBLISHED_SPREADS,
    PublishedSpread,
    published_spread,
    resolve_convention,
)
from icl_symbolic.simulation import simulator
from icl_symbolic.simulation.simulator import PromptLaw, sample_training_set, sizes, task_assignment
from icl_symbolic.studies.reproduce import read_table

L = CONVENTIONS["letey2024"]


@given(
    d=st.integers(2, 300),
    alpha=st.floats(0.05, 20),
    kappa=st.floats(0.05, 8),
    tau=st.floats(0.05, 20),
)
def test_truncate_sizes_are_the_authors_integer_conversions(d, alpha, kappa, tau):
    """K = np.int64(kappa * d), n = np.int64(np.round(tau * d**2 / K)) * K, ell = np.int64(alpha * d):
    the same integers for every input where they are >= 1 (the class, not one example)."""
    K = int(np.int64(kappa * d))
    ell = int(np.int64(alpha * d))
    if K < 1 or ell < 1:
        return
    n = int(np.int64(np.round(tau * d**2 / K))) * K
    if n < 1:
        return
    sz = sizes(d, alpha, kappa, tau, L.rounding)
    assert (sz.ell, sz.k, sz.n) == (ell, K, n)


def test_truncate_examples():
    # a product just below an integer is truncated, as a numpy int64 conversion does
    assert 0.29 * 100 < 29 and sizes(100, 2, 0.29, 2, "truncate").k == 28
    assert sizes(100, 2, 0.29, 2, "floor-k").k == 29  # floor-k forgives the last bit
    assert sizes(20, 1.53, 0.5, 2, "truncate").ell == 30 and sizes(20, 1.53, 0.5, 2).ell == 31
    assert sizes(10, 2, 0.4, 0.5, "truncate").n == 48  # 50/4 = 12.5: halves to even (numpy's round)


@pytest.mark.parametrize("d, kappa, tau", [(8, 0.5, 2.0), (10, 0.35, 2.0), (12, 1.0, 0.5), (9, 2.0, 1.5)])
def test_every_task_n_over_k_times_in_the_authors_order(monkeypatch, d, kappa, tau):
    """Their tasks are the K rows repeated n/K times in blocks (prompt mu uses task mu mod K): the
    preset's assignment with its rounding gives exactly that index sequence, no random draw."""
    sz = sizes(d, 2.0, kappa, tau, L.rounding)
    assert sz.n % sz.k == 0
    assert task_assignment(sz.n, sz.k, L, np.random.default_rng(0)) is None  # deterministic
    tasks = np.arange(sz.k, dtype=float)[:, None] * np.ones((1, d))  # task j is the constant row j
    seen, real = [], simulator.sample_prompts

    def record(f, w, ell, rho, rng, method="fast", features=None):
        seen.append(w[:, 0].astype(int))
        return real(f, w, ell, rho, rng, method=method, features=features)

    monkeypatch.setattr(simulator, "sample_prompts", record)
    sample_training_set(PromptLaw(np.sin, sz.ell, 0.1), tasks, sz.n, np.random.default_rng(1))
    idx = np.concatenate(seen)
    assert np.array_equal(idx, np.tile(np.arange(sz.k), sz.n // sz.k))
    assert np.all(np.bincount(idx, minlength=sz.k) == sz.n // sz.k)


def test_the_published_spread():
    """Their per-run spread is np.std (ddof 0); the gap's is sqrt(std_ICL^2 + std_IDG^2), not the
    spread of the per-run gaps; the SE of a mean over n runs from it is std/sqrt(n - 1)."""
    P = PUBLISHED_SPREADS["letey2024"]
    rng = np.random.default_rng(3)
    icl = 1 + rng.random(7)
    idg = icl - 0.3 + 0.1 * rng.random(7)  # positively correlated, as on the same Gamma
    assert P.spread(icl, error="icl") == float(np.std(icl))
    assert P.spread(icl, idg, "idg") == float(np.std(idg))
    gap = P.spread(icl, idg, "gap")
    assert gap == pytest.approx(math.sqrt(np.std(icl) ** 2 + np.std(idg) ** 2), rel=1e-15)
    assert gap > float(np.std(icl - idg))  # the quadrature spread overstates a correlated gap's spread
    assert P.se(float(np.std(icl)), 7) == pytest.approx(float(np.std(icl, ddof=1)) / math.sqrt(7), rel=1e-14)
    assert PublishedSpread().se(2.0, 4) == 1.0  # ddof 1: std/sqrt(n)
    assert (
        published_spread("letey2024") is P and published_spread(resolve_convention("letey2024", rounding="paper")) is P
    )
    assert published_spread("default") == PublishedSpread() and published_spread(None).gap == "paired"


def test_reproduce_reads_their_spread():
    """``--spread published`` under letey2024: SE = spread/sqrt(runs - 1); ``--spread std``: spread/sqrt(runs)."""
    text = "d,m,s,n\n8,1.0,0.3,10\n"
    cols = {"d": "d", "mean": "m", "spread": "s", "runs": "n"}
    fixed = {"alpha": 2.0, "kappa": 1.0, "tau": 2.0, "rho": 0.1, "lam": 0.0}
    theirs = read_table(text, cols, fixed, "published", PUBLISHED_SPREADS["letey2024"])[0]
    plain = read_table(text, cols, fixed, "std")[0]
    assert theirs.theirs_se == pytest.approx(0.3 / 3.0, rel=1e-14)
    assert plain.theirs_se == pytest.approx(0.3 / math.sqrt(10), rel=1e-14)
    assert theirs.theirs_dof == plain.theirs_dof == 9
