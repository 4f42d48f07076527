"""Sampling prompts and their context statistics.

Paper: Sec. 2, Eqs. (1)-(5), p. 2-3.  A prompt is x_1, y_1, ..., x_ell, y_ell,
x_test with x_i ~ N(0, I_d/d) i.i.d., y_i = f(x_i^T w) + eps_i, eps_i ~ N(0, rho)
(rho is a variance).  The model sees the statistics

    u = (d/ell) sum_i y_i x_i  (in R^d),     s = (1/ell) sum_i y_i^2,

and the query x_test, whose label is y_test = f(x_test^T w) + eps_test.

:func:`sample_prompts` is the direct sampler: it draws every x_i, so it costs
O(ell d) per prompt.  It works in fixed-size chunks of prompts so that memory
stays bounded and results do not depend on the total number of prompts asked
for beyond the order in which they are drawn.

``sample_prompts(..., method="fast")`` is an exact sampler in O(ell + d) per
prompt for any teacher f.  Derivation: fix w != 0, write
e = w/|w| and z_i = x_i^T w ~ N(0, |w|^2/d).  Then x_i = e z_i/|w| + x_i^perp
with x_i^perp = (I - e e^T) x_i ~ N(0, (I - e e^T)/d) independent of z_i, so
independent of (y_i, z_i).  Hence

    sum_i y_i x_i = e (sum_i y_i z_i)/|w| + sum_i y_i x_i^perp,

and given the labels, sum_i y_i x_i^perp is Gaussian N(0, (sum_i y_i^2)(I - e e^T)/d),
i.e. it equals sqrt(sum_i y_i^2) (I - e e^T) xi with xi ~ N(0, I_d/d).  Only the
ell scalars z_i and eps_i and one d-vector xi are drawn per prompt.  For w = 0
the parallel term is absent and the formula holds with e = 0.  The sampler
is checked against the direct one in ``tests/test_prompts.py`` (moments
within standard errors, same trained-model error).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from icl_symbolic.core.errors import ICLError

#: Upper bound on the number of floats held for the context inputs of one chunk.
CHUNK_FLOATS = 1 << 22


class Prompts(NamedTuple):
    """Context statistics and query of n prompts (row mu = prompt mu)."""

    u: np.ndarray  # (n, d)
    s: np.ndarray  # (n,)
    x_test: np.ndarray  # (n, d)
    y_test: np.ndarray  # (n,)


def _check(W, ell, rho):
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[1] < 1:
        raise ICLError(f"tasks W must be an (n, d) array, got shape {W.shape}")
    if int(ell) != ell or ell < 1:
        raise ICLError(f"context length ell must be a positive integer, got {ell}")
    if not rho >= 0:
        raise ICLError(f"noise variance rho must be >= 0, got {rho}")
    return W, int(ell), float(rho)


METHODS = ("direct", "fast")


def _empty_prompts(n, d):
    return np.empty((n, d)), np.empty(n), np.empty((n, d)), np.empty(n)


def sample_prompts(f_numpy, W, ell, rho, rng: np.random.Generator, method: str = "direct", features=None) -> Prompts:
    """Draw one prompt per row of ``W`` (direct O(ell d) or exact fast O(ell + d) sampler).

    Parameters
    ----------
    f_numpy : callable
        The teacher f, vectorised over numpy arrays (``Teacher.numpy``).
    W : array, shape (n, d)
        The task of each prompt.
    ell : int
        Context length (ell = alpha d).
    rho : float
        Label-noise variance.
    rng : numpy.random.Generator
        Source of randomness (the only one used).
    method : {"direct", "fast"}
        ``direct`` draws every x_i; ``fast`` draws only the projections
        z_i = x_i^T w and the Gaussian remainder of sum_i y_i x_i (module
        docstring).  Both have the same law; their random streams differ.
    features : callable with attribute ``D`` and method ``weighted_sum(y, X)``, optional
        (direct sampler only).  A feature map x -> x~ (arrays (..., d) -> (..., D)), e.g.
        :class:`icl_symbolic.kernel_learner.theory.FeatureTransform`: then u = (D/ell) sum_i y_i x~_i
        and ``x_test`` holds x~_test (the kernel learner).  The random draws are
        those of the plain sampler, so an identity map gives identical numbers.

    Returns
    -------
    Prompts
        ``u``, ``s``, ``x_test``, ``y_test``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P = sample_prompts(np.sin, np.ones((3, 4)), 5, 0.1, rng)
    >>> P.u.shape, P.s.shape, P.x_test.shape, P.y_test.shape
    ((3, 4), (3,), (3, 4), (3,))
    >>> Q = sample_prompts(np.sin, np.ones((3, 4)), 5, 0.1, rng, method="fast")
    >>> Q.u.shape, Q.s.shape
    ((3, 4), (3,))
    """
    if method not in METHODS:
        raise ICLError(f"unknown prompt sampler {method!r}; expected one of {', '.join(METHODS)}")
    W, ell, rho = _check(W, ell, rho)
    if method == "fast":
        if features is not None:
            raise ICLError("a feature map needs the direct prompt sampler")
        return _sample_fast(f_numpy, W, ell, rho, rng)
    n, d = W.shape
    D = d if features is None else int(features.D)
    sd_x, sd_eps = 1.0 / np.sqrt(d), np.sqrt(rho)
    u, s, x_test, y_test = _empty_prompts(n, D)
    chunk = max(1, CHUNK_FLOATS // (ell * D))
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        w = W[start:stop]
        m = stop - start
        X = rng.standard_normal((m, ell, d)) * sd_x
        y = f_numpy(np.einsum("mid,md->mi", X, w)) + sd_eps * rng.standard_normal((m, ell))
        sum_yx = np.einsum("mi,mid->md", y, X) if features is None else features.weighted_sum(y, X)
        u[start:stop] = (D / ell) * sum_yx
        s[start:stop] = np.mean(y * y, axis=1)
        xt = rng.standard_normal((m, d)) * sd_x
        x_test[start:stop] = xt if features is None else features(xt)
        y_test[start:stop] = f_numpy(np.einsum("md,md->m", xt, w)) + sd_eps * rng.standard_normal(m)
    return Prompts(u, s, x_test, y_test)


def _sample_fast(f_numpy, W, ell, rho, rng: np.random.Generator) -> Prompts:
    """The exact O(ell + d) sampler (derivation in the module docstring)."""
    n, d = W.shape
    sd_x, sd_eps = 1.0 / np.sqrt(d), np.sqrt(rho)
    u, s, x_test, y_test = _empty_prompts(n, d)
    chunk = max(1, CHUNK_FLOATS // (ell + d))
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        w = W[start:stop]
        m = stop - start
        norm = np.sqrt(np.einsum("md,md->m", w, w))
        safe = np.where(norm > 0, norm, 1.0)
        e = w / safe[:, None] * (norm > 0)[:, None]  # unit task direction (0 if w = 0)
        z = rng.standard_normal((m, ell)) * (norm * sd_x)[:, None]  # z_i = x_i^T w
        y = f_numpy(z) + sd_eps * rng.standard_normal((m, ell))
        syy = np.einsum("mi,mi->m", y, y)
        syz = np.einsum("mi,mi->m", y, z)
        xi = rng.standard_normal((m, d)) * sd_x
        xi -= e * np.einsum("md,md->m", e, xi)[:, None]  # (I - e e^T) xi
        sum_yx = e * (syz / safe)[:, None] + np.sqrt(syy)[:, None] * xi
        u[start:stop] = (d / ell) * sum_yx
        s[start:stop] = syy / ell
        xt = rng.standard_normal((m, d)) * sd_x
        x_test[start:stop] = xt
        y_test[start:stop] = f_numpy(np.einsum("md,md->m", xt, w)) + sd_eps * rng.standard_normal(m)
    return Prompts(u, s, x_test, y_test)
