"""Timing and accuracy of the certified dual kernels (docs/dual-kernels.md).

    python benchmarks/bench_dual.py [--n 1000] [--depth 5] [--skip-plain]

1. k_tanh(rho) = E[tanh(u) tanh(v)], unit variances, 20 certified digits, per rho (coefficient
   passes are cached across rhos: the first rho pays them; cold and warm times are printed);
2. the same value by plain mpmath 2-D quadrature (mpmath.quad over R^2, 20 digits) for comparison
   of time and of agreement within the certified bound;
3. a depth-L tanh NNGP/NTK Gram of n random inputs (float64) with its certified max errors.
neural-tangents is not benchmarked here (see the doc for why).
"""

from __future__ import annotations

import argparse
import os
import time

import mpmath
import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--skip-plain", action="store_true")
    args = ap.parse_args()
    from icl_symbolic.engine.dual import dual_map
    from icl_symbolic.engine.dual_deep import deep_gram

    print(
        f"cpus={os.cpu_count()} OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
    )
    for rho in ("0.3", "0.5", "0.9", "0.99"):
        t = time.perf_counter()
        p = dual_map("tanh(g)", 1, 1, rho, digits=20, derivative=False)
        print(
            f"k_tanh({rho}) = {p.nngp.to_str(20)}  [{p.routes[0]}, |err| <= {mpmath.nstr(p.nngp.abs_err, 2)}]"
            f"  {time.perf_counter() - t:.2f} s"
        )
        if not args.skip_plain and rho == "0.5":
            r = mpmath.mpf(rho)
            s = mpmath.sqrt(1 - r * r)
            t = time.perf_counter()
            with mpmath.workdps(20):
                v = mpmath.quad(
                    lambda x, z: (
                        mpmath.tanh(x) * mpmath.tanh(r * x + s * z) * mpmath.exp(-(x * x + z * z) / 2) / (2 * mpmath.pi)
                    ),
                    [-mpmath.inf, 0, mpmath.inf],
                    [-mpmath.inf, 0, mpmath.inf],
                )
            dt = time.perf_counter() - t
            print(
                f"  plain mpmath.quad 2-D at 20 dps: {mpmath.nstr(v, 20)}  {dt:.2f} s, "
                f"|diff| = {mpmath.nstr(abs(v - p.nngp.value), 2)} (no error bound of its own)"
            )
    X = np.random.default_rng(0).standard_normal((args.n, 50))
    for attempt in ("cold", "warm"):
        t = time.perf_counter()
        G = deep_gram("tanh(g)", X, args.depth)
        print(
            f"depth-{args.depth} tanh Gram {args.n}x{args.n} ({attempt}): {time.perf_counter() - t:.2f} s, "
            f"certified max err NNGP {G.nngp_err:.2e}, NTK {G.ntk_err:.2e}"
        )


if __name__ == "__main__":
    main()
