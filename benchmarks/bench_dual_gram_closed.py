"""Time and certified bound of the closed-form float64 Gram route (engine/dual_gram_closed.py).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_dual_gram_closed.py

1000 x 1000 inputs (rows of a seeded standard normal 1000 x 50 matrix, put on the sphere), depth 5,
relu (and erf), NNGP and NTK; one run per setting, wall time of deep_gram (imports excluded), the
certified maximum errors, and the largest |difference| to a plain float64 arc-cosine recursion
(no bound of its own) as a sanity figure.  Prints a Markdown table; notes the load average.
"""

from __future__ import annotations

import os
import time

import numpy as np

from icl_symbolic.engine.dual_deep import deep_gram


def _plain_relu(X, depth, sw, sb):
    U = X / np.linalg.norm(X, axis=1)[:, None]
    R = np.clip(U @ U.T, -1, 1)
    K = sw * R + sb
    Th = K.copy()
    q = sw + sb
    for _ in range(depth):
        r = np.clip(K / q, -1, 1)
        t = np.arccos(r)
        Kn = sw * q * (np.sin(t) + (np.pi - t) * r) / (2 * np.pi) + sb
        Th = Kn + sw * (np.pi - t) / (2 * np.pi) * Th
        K, q = Kn, sw * q / 2 + sb
    return K, Th


def main() -> None:
    X = np.random.default_rng(0).standard_normal((1000, 50))
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(
        "| f | depth | sigma_w^2, sigma_b^2 | s | certified max err NNGP, NTK | plain float64 recursion: max diff NNGP, NTK |"
    )
    print("|---|---|---|---|---|---|")
    for f, sw, sb in (("relu(g)", 2, 0), ("relu(g)", 2, "1/10"), ("erf(g)", 2, "1/10")):
        t0 = time.perf_counter()
        G = deep_gram(f, X, 5, sigma_w2=sw, sigma_b2=sb)
        dt = time.perf_counter() - t0
        diff = ""
        if f == "relu(g)":
            K, Th = _plain_relu(X, 5, float(sw), float(eval(str(sb))))
            diff = f"{np.abs(K - G.nngp).max():.1e}, {np.abs(Th - G.ntk).max():.1e}"
        print(f"| {f} | 5 | {sw}, {sb} | {dt:.2f} | {G.nngp_err:.1e}, {G.ntk_err:.1e} | {diff} |")


if __name__ == "__main__":
    main()
