"""Kernel-learner simulation cost: context statistics by moment tensors vs explicit features; the Gram solve.

For hermite:2 features at ell = 16 D (the learner's alpha = 16), one chunk of 256 prompts:

  explicit   u = (D/ell) sum_i y_i x~_i with the (m, ell, D) feature array built (hermite_features)
  moments    the same u from sum_i y_i z_i and sum_i y_i z_i z_i^T (one batched matrix product;
             FeatureTransform.weighted_sum, what the simulator uses)

both on the same draws (the results agree to rounding: checked here), time (best of 3) and peak
traced memory (tracemalloc).  Then one full training run (one seed, tau = n/D^2 = 4, kappa = 2,
Gram solver) at the given d with its time and the simulator's memory estimate.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kernel.py --ds 8,10,12 --train 8,10
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from icl_symbolic.kernel_learner import simulation as kernel_sim
from icl_symbolic.kernel_learner import theory as kernel
from icl_symbolic.simulation import simulator as simulation  # noqa: E402

F = "g + (g^2-1)/sqrt(2)"


def _timed(fn, repeats=3):
    best, out = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak, out


def sampler(d, m=256, alpha=16):
    ft = kernel.FeatureTransform("hermite:2", d)
    D, ell = ft.D, alpha * ft.D
    rng = np.random.default_rng(0)
    X = rng.standard_normal((m, ell, d)) / math.sqrt(d)
    y = rng.standard_normal((m, ell))
    t_e, mem_e, u_e = _timed(lambda: np.einsum("mi,mid->md", y, ft(X)))
    t_m, mem_m, u_m = _timed(lambda: ft.weighted_sum(y, X))
    err = float(np.max(np.abs(u_e - u_m)) / np.max(np.abs(u_e)))
    print(
        f"d={d:3d} D={D:4d} ell={ell:5d} m={m}: explicit {t_e:8.3f} s {mem_e / 2**20:8.1f} MiB | "
        f"moments {t_m:7.3f} s {mem_m / 2**20:7.1f} MiB | ratio {t_e / t_m:6.1f}x time, "
        f"{mem_e / max(mem_m, 1):5.1f}x memory | max rel diff {err:.1e}",
        flush=True,
    )


def training(d):
    D = kernel.feature_count(d, 2)
    sz = simulation.sizes(D, 16, 2, 4)
    need = simulation.estimate_memory(sz, "auto", 2000)
    t0 = time.perf_counter()
    r = kernel_sim.simulate_kernel(F, d, 16, 2, 4, 0.1, seeds=(0,), n_test=2000, theory=False)
    print(
        f"train d={d} D={D} p={D * (D + 1)} n={sz.n} ell={sz.ell}: {time.perf_counter() - t0:.1f} s "
        f"[{r.runs[0].how}], memory estimate {need / 2**30:.2f} GiB, e = {float(r.e_query):.4f}",
        flush=True,
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ds", default="8,10,12")
    ap.add_argument("--train", default="8,10")
    args = ap.parse_args(argv)
    for d in (int(x) for x in args.ds.split(",") if x):
        sampler(d)
    for d in (int(x) for x in args.train.split(",") if x):
        training(d)


if __name__ == "__main__":
    main()
