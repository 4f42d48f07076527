"""Simulations for the finite-d theory benchmark: fill a per-seed cache.

Each grid point is simulated in batches of seeds (icl_symbolic.simulation.simulator.simulate_many,
exact test functional of each trained Gamma, Gaussian tasks, C = I, ridgeless) until the
seed SE is below ``--target`` (relative) or ``--max-seeds`` is reached.  Per-seed numbers
go to an icl_symbolic.simulation.cache.SeedCache folder, so the report script
(benchmarks/finite_d_theory.py) and reruns read them back instantly.

Run (2-core shared machine):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python benchmarks/finite_d_sims.py --d 32,64

To add seeds to the points of a stored table (seeds 0..S-1 kept as its summary, new seeds from S on):
    python benchmarks/finite_d_sims.py --d 32,64,128 --top-up benchmarks/results/finite-d-base.json --target 0.0028 --max-seeds 800
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from finite_d_grid import CACHE_DIR, GRID, N_TEST, key_of, pool, setting_of, stored_rows  # noqa: E402

from icl_symbolic.simulation.cache import SeedCache  # noqa: E402
from icl_symbolic.simulation.simulator import simulate_many  # noqa: E402


def cached_values(cache, setting, max_seeds, start=0):
    """Per-seed values of seeds start, start+1, ... up to the first seed not cached."""
    out = []
    for s in range(start, max_seeds):
        rec = cache.get(setting, s)
        if rec is None:
            break
        out.append(rec["e"])
    return out


def run_point(cache, pt, d, target, max_seeds, min_seeds, batch, jobs, base=None):
    """Simulate seeds until the relative SE is <= target.  ``base``: a stored summary (seeds, sim, sim_se) of
    seeds 0..seeds-1 (a previous docs/finite-d.json row) that the new seeds, numbered from there, top up."""
    setting = setting_of(pt, d)
    n0, m0, se0 = (0, 0.0, 0.0) if base is None else (int(base["seeds"]), float(base["sim"]), float(base["sim_se"]))
    vals = cached_values(cache, setting, max_seeds, start=n0)
    while n0 + len(vals) < max_seeds:
        if n0 + len(vals) >= min_seeds:
            m, se, _ = (
                pool(n0, m0, se0, vals) if n0 else (np.mean(vals), np.std(vals, ddof=1) / math.sqrt(len(vals)), 0)
            )
            if se / abs(m) <= target:
                break
        s0 = n0 + len(vals)
        step = batch
        if s0 >= min_seeds:  # the seeds the current spread says are still needed, at least one batch
            step = max(batch, math.ceil(s0 * (se / abs(m) / target) ** 2) - s0)
        seeds = tuple(range(s0, min(max_seeds, s0 + step)))
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
        vals = cached_values(cache, setting, max_seeds, start=n0)
    if n0:
        return pool(n0, m0, se0, vals)
    return float(np.mean(vals)), float(np.std(vals, ddof=1) / math.sqrt(len(vals))), len(vals)


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
    ap.add_argument(
        "--top-up",
        default=None,
        metavar="JSON",
        help="a previous finite_d_theory.py output (e.g. docs/finite-d.json): each point's stored seeds 0..S-1 "
        "are kept as its summary (mean, SE, S) and new seeds S, S+1, ... are added until the pooled SE meets "
        "--target (finite_d_theory.py --sims-from JSON pools them the same way)",
    )
    a = ap.parse_args(argv)
    cache = SeedCache(CACHE_DIR)
    stored = stored_rows(a.top_up) if a.top_up else {}
    for d in [int(x) for x in a.d.split(",")]:
        for pt in GRID:
            if a.only and pt["f"] not in a.only.split(","):
                continue
            if a.taus and pt["tau"] not in [float(x) for x in a.taus.split(",")]:
                continue
            if a.kappas and pt["kappa"] not in [float(x) for x in a.kappas.split(",")]:
                continue
            t = time.time()
            base = stored.get(key_of(pt, d))
            if a.top_up and base is None:
                continue  # --top-up tops up the stored points only
            m, se, S = run_point(cache, pt, d, a.target, a.max_seeds, a.min_seeds, a.batch, a.jobs, base)
            print(
                f"d={d} {pt['f']:>16} alpha={pt['alpha']:g} kappa={pt['kappa']:g} tau={pt['tau']:g}: "
                f"{m:.5f} +- {se:.5f} ({100 * se / m:.2f} %, {S} seeds, {time.time() - t:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
