"""Simulations for the finite-d theory benchmark: fill a per-seed cache.

Each grid point is simulated in batches of seeds (icl_symbolic.simulation.simulator.simulate_many,
exact test functional of each trained Gamma, Gaussian tasks, C = I, ridgeless) until the
seed SE is below ``--target`` (relative) or ``--max-seeds`` is reached.  Per-seed numbers
go to an icl_symbolic.simulation.cache.SeedCache folder, so the report script
(benchmarks/finite_d_theory.py) and reruns read them back instantly.

Run (2-core shared machine):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python benchmarks/finite_d_sims.py --d 32,64
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from finite_d_grid import CACHE_DIR, GRID, N_TEST, setting_of  # noqa: E402

from icl_symbolic.simulation.cache import SeedCache  # noqa: E402
from icl_symbolic.simulation.simulator import simulate_many  # noqa: E402


def cached_values(cache, setting, max_seeds):
    out = []
    for s in range(max_seeds):
        rec = cache.get(setting, s)
        if rec is None:
            break
        out.append(rec["e"])
    return out


def run_point(cache, pt, d, target, max_seeds, min_seeds, batch, jobs):
    setting = setting_of(pt, d)
    vals = cached_values(cache, setting, max_seeds)
    while len(vals) < max_seeds:
        if len(vals) >= min_seeds:
            se = np.std(vals, ddof=1) / math.sqrt(len(vals)) / abs(np.mean(vals))
            if se <= target:
                break
        s0 = len(vals)
        seeds = tuple(range(s0, min(max_seeds, s0 + batch)))
        spec = dict(
            f=pt["f"],
            d=d,
            alpha=pt["alpha"],
            kappa=pt["kappa"],
            tau=pt["tau"],
            rho=pt["rho"],
            seeds=seeds,
            n_test=N_TEST,
            tasks="gaussian",
        )
        r = simulate_many([spec], jobs=jobs)[0]
        for run in r.runs:
            cache.put(
                setting,
                run.seed,
                {"e": float(run.e.value), "e_mc": float(run.e_mc.value), "solver": run.solver, "seconds": run.seconds},
            )
        vals = cached_values(cache, setting, max_seeds)
    m = float(np.mean(vals))
    se = float(np.std(vals, ddof=1) / math.sqrt(len(vals)))
    return m, se, len(vals)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--d", default="32,64")
    ap.add_argument("--target", type=float, default=0.004, help="relative seed SE to reach")
    ap.add_argument("--max-seeds", type=int, default=160)
    ap.add_argument("--min-seeds", type=int, default=8)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default=None, help="comma-separated teacher names")
    ap.add_argument("--taus", default=None)
    ap.add_argument("--kappas", default=None)
    a = ap.parse_args(argv)
    cache = SeedCache(CACHE_DIR)
    for d in [int(x) for x in a.d.split(",")]:
        for pt in GRID:
            if a.only and pt["f"] not in a.only.split(","):
                continue
            if a.taus and pt["tau"] not in [float(x) for x in a.taus.split(",")]:
                continue
            if a.kappas and pt["kappa"] not in [float(x) for x in a.kappas.split(",")]:
                continue
            t = time.time()
            m, se, S = run_point(cache, pt, d, a.target, a.max_seeds, a.min_seeds, a.batch, a.jobs)
            print(
                f"d={d} {pt['f']:>16} alpha={pt['alpha']:g} kappa={pt['kappa']:g} tau={pt['tau']:g}: "
                f"{m:.5f} +- {se:.5f} ({100 * se / m:.2f} %, {S} seeds, {time.time() - t:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
