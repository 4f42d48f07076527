"""Kernel-learner training solve at d = 12, 16, 20: matrix-free CG vs dense Gram vs explicit features.

The kernel learner (our extension; docs/kernel.md): f = g + (g^2-1)/sqrt(2), hermite:2 features,
ell/D = 16, k/D = 2, n/D^2 = 4, rho = 0.1, Gaussian tasks, seed 0.  At each d, on IDENTICAL
training data (``simulation.sample_training_set`` with the feature map, the direct sampler, as
``kernel_sim.simulate_kernel`` draws it for seed 0):

  matrix-free  ``simulation.fit(..., solver="cg")``  (PCG on the normal equations, certified residual)
  dense        ``simulation.fit(..., solver="gram")`` (pair-product Gram accumulation + Cholesky)
  explicit     ``bench_simulate.explicit_solve``: the n x p feature matrix H, H^T H, numpy.linalg.solve

Each cell runs in its own subprocess (one BLAS thread: threadpoolctl and OMP/OPENBLAS_NUM_THREADS=1)
that draws the training data, then solves: reported are the sampling CPU time, the solve's CPU time
(``time.process_time``; min of ``--repeat`` runs when predicted under 10 s, else 1 run), the
process's peak RSS (``ru_maxrss``) after sampling and after the solve (the difference is what the
solver added), and the relative difference of each Gamma from the matrix-free one.  A cell is
skipped, with its predicted time and memory printed, when the memory model says it does not fit
(60% of available memory; ``bench_simulate.memory_ok``) or its predicted time exceeds ``--budget``:
time from the flop model (``simulation.cost_flops``, ``bench_simulate.predicted`` with its measured
one-thread rates), memory from ``simulation.estimate_memory`` (CG, Gram: generous, includes the
least-squares fallback) and 8 (2 n p + min(n, p)^2) bytes for the explicit solve.

``--breakdown D``: one whole seed of ``simulate_kernel`` at that d under cProfile: where the time
goes (training prompts and features, the solve, the residual certificate, the test prompts).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kernel_solvers.py --ds 12 --breakdown 12
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kernel_solvers.py --ds 16,20 --breakdown 16

How long (2-core machine, one thread): d = 12 about 3.5 minutes (measured: sampling about 9 s per
cell, solves 2 s / 24 s / 46 s, breakdown 25 s).  d = 16 and 20: the dense and explicit cells are
skipped by the memory model on a 24 GB machine (printed with their predictions); the matrix-free
cells are predicted at 17 s and 88 s of solve plus about 45 s and 3 minutes of sampling.
``--force dense`` runs the Gram path at d = 16 anyway (actual peak about 1.25 p^2 words = 5.4 GB,
predicted 1200 s by the flop model, which overestimated the d = 12 Gram cell twofold).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import platform
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_simulate import explicit_bytes, memory_ok, predicted, time_cell  # noqa: E402

from icl_symbolic.engine.expr import teacher  # noqa: E402
from icl_symbolic.kernel_learner import simulation as kernel_sim
from icl_symbolic.kernel_learner import theory as kernel  # noqa: E402
from icl_symbolic.model import prompts  # noqa: E402
from icl_symbolic.model.covariance import resolve_covariance, sample_tasks  # noqa: E402
from icl_symbolic.simulation import matfree  # noqa: E402
from icl_symbolic.simulation import simulator as simulation

F = "g + (g^2-1)/sqrt(2)"
ALPHA, KAPPA, TAU, RHO, SEED = 16.0, 2.0, 4.0, 0.1, 0
PATHS = ("cg", "dense", "explicit")


def kernel_sizes(d):
    return simulation.sizes(kernel.feature_count(d, 2), ALPHA, KAPPA, TAU)


def training_data(d):
    """The training set simulate_kernel draws for seed SEED (same SeedSequence spawn, same streams)."""
    T = teacher(F)
    FT = kernel.FeatureTransform("hermite:2", d)
    sz = kernel_sizes(d)
    ss_tasks, ss_train, _, _ = np.random.SeedSequence(SEED).spawn(4)
    W = sample_tasks(resolve_covariance("identity", d), sz.k, np.random.default_rng(ss_tasks))
    law = simulation.PromptLaw(T.numpy, sz.ell, RHO, "direct", features=FT)
    return simulation.sample_training_set(law, W, sz.n, np.random.default_rng(ss_train))


def predicted_bytes(path, sz):
    if path == "explicit":
        return explicit_bytes(sz)
    return simulation.estimate_memory(sz, "cg" if path == "cg" else "gram", n_test=2)


def cell(path, d, repeat, out):
    """Child process: draw the data, solve, print one JSON line, save Gamma to ``out``."""
    with threadpool_limits(limits=1):
        t0 = time.process_time()
        X, V, y = training_data(d)
        t_sample = time.process_time() - t0
        rss_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        sec, res = time_cell(path, X, V, y, repeat)
        rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    G, info = res
    np.save(out, G)
    print(
        json.dumps(
            {
                "path": path,
                "d": d,
                "sample_cpu_s": t_sample,
                "solve_cpu_s": sec,
                "repeat": repeat,
                "rss_after_sampling_MiB": rss_data,
                "rss_peak_MiB": rss_peak,
                "solver": None if info is None else info.solver,
                "iterations": None if info is None else info.iterations,
                "residual": None if info is None else info.residual,
            }
        )
    )


def run_cell(path, d, repeat, out):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, __file__, "--cell", path, "--ds", str(d), "--repeat", str(repeat), "--out", out],
        capture_output=True,
        text=True,
        env=env,
    )
    if r.returncode != 0:
        raise SystemExit(f"cell {path} d={d} failed: {r.stderr.strip()[-2000:]}")
    row = json.loads(r.stdout.strip().splitlines()[-1])
    row["wall_s"] = time.perf_counter() - t0
    return row


def solver_table(ds, repeat, budget, force=()):
    print(
        "| d | D | n | p | path | predicted time | predicted memory | solve CPU s (runs) | "
        "CG iterations (dense: path) | sampling CPU s | peak RSS after sampling / after solve (MiB) | "
        "rel. diff to matrix-free |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for d in ds:
        sz = kernel_sizes(d)
        with tempfile.TemporaryDirectory() as tmp:
            sols = {}
            for path in PATHS:
                pt, pb = predicted(path, sz), predicted_bytes(path, sz)
                head = f"| {d} | {sz.d} | {sz.n} | {sz.p} | {path} | {pt:.3g} s | {pb / 2**30:.3g} GiB |"
                if path not in force and (not memory_ok(path, sz) or pt > budget):
                    why = (
                        "memory model: does not fit in 60% of available memory"
                        if not memory_ok(path, sz)
                        else f"predicted time over --budget {budget:g} s"
                    )
                    print(f"{head} skipped ({why}) | | | | |", flush=True)
                    rows.append(
                        {
                            "d": d,
                            "D": sz.d,
                            "n": sz.n,
                            "p": sz.p,
                            "path": path,
                            "predicted_s": pt,
                            "predicted_bytes": pb,
                            "skipped": why,
                        }
                    )
                    continue
                out = os.path.join(tmp, f"{path}.npy")
                row = run_cell(path, d, repeat if pt < 10 else 1, out)
                sols[path] = np.load(out)
                rel = "-"
                if path != "cg" and "cg" in sols:
                    rel = f"{np.linalg.norm(sols[path] - sols['cg']) / np.linalg.norm(sols[path]):.1e}"
                row.update(
                    {
                        "D": sz.d,
                        "n": sz.n,
                        "p": sz.p,
                        "predicted_s": pt,
                        "predicted_bytes": pb,
                        "rel_diff_to_cg": None if rel == "-" else float(rel),
                    }
                )
                rows.append(row)
                how = row["iterations"] or row["solver"] or "-"
                print(
                    f"{head} {row['solve_cpu_s']:.3f} ({row['repeat']}) | {how} | "
                    f"{row['sample_cpu_s']:.1f} | {row['rss_after_sampling_MiB']:.0f} / {row['rss_peak_MiB']:.0f} | "
                    f"{rel} |",
                    flush=True,
                )
    return rows


def _cum(stats, name, module=None, caller=None):
    """Cumulative seconds of functions called ``name`` (in files ending ``module``), optionally only the
    part called from ``caller``."""
    total = 0.0
    for (file, _, fn), (_, _, _, ct, callers) in stats.stats.items():
        if fn != name or (module and not file.endswith(module)):
            continue
        if caller is None:
            total += ct
        else:
            total += sum(v[3] for (cf, _, cfn), v in callers.items() if cfn == caller)
    return total


def gaussian_draws(d, sz):
    """CPU seconds of the training contexts' Gaussian draws alone: the direct sampler's
    rng.standard_normal((m, ell, d)) / sqrt(d) over all n prompts, in its chunks (timed separately)."""
    rng = np.random.default_rng(1)
    chunk = max(1, prompts.CHUNK_FLOATS // (sz.ell * sz.d))
    t0 = time.process_time()
    for start in range(0, sz.n, chunk):
        m = min(sz.n, start + chunk) - start
        rng.standard_normal((m, sz.ell, d)) * (1.0 / math.sqrt(d))
    return time.process_time() - t0


def breakdown(d):
    """One seed of simulate_kernel at d under cProfile: where the time goes."""
    sz = kernel_sizes(d)
    with threadpool_limits(limits=1):
        t0 = time.process_time()
        pred = kernel_sim.kernel_prediction(F, "hermite:2", d, ALPHA, KAPPA, TAU, RHO)
        t_pred = time.process_time() - t0
        t0 = time.process_time()
        kernel_sim.simulate_kernel(F, d, ALPHA, KAPPA, TAU, RHO, seeds=(SEED,), theory=False)
        plain = time.process_time() - t0
        prof = cProfile.Profile()
        prof.enable()
        r = kernel_sim.simulate_kernel(F, d, ALPHA, KAPPA, TAU, RHO, seeds=(SEED,), theory=False)
        prof.disable()
        draws = gaussian_draws(d, sz)
    st = pstats.Stats(prof)
    total = st.total_tt
    train = _cum(st, "sample_training_set", "simulation.py")
    parts = [
        ("training prompts and their features (sample_training_set)", train),
        (
            "  Gaussian draws of the contexts, n ell d = "
            f"{sz.n * sz.ell * d:.2g} normals (timed separately, not profiled)",
            draws,
        ),
        (
            "  moment-tensor context sums (FeatureTransform.weighted_sum; training and test)",
            _cum(st, "weighted_sum", "kernel.py"),
        ),
        ("  teacher labels f(x^T w) (lambdified f)", _cum(st, "_lambdifygenerated")),
        ("solve (matfree.solve: PCG on the normal equations)", _cum(st, "solve", "matfree.py")),
        ("residual certificate (normal_residual)", _cum(st, "normal_residual", "simulation.py")),
        (
            "test prompts (sample_prompts called by simulate_kernel)",
            _cum(st, "sample_prompts", "prompts.py", caller="simulate_kernel"),
        ),
    ]
    rest = total - sum(v for k, v in parts if not k.startswith("  "))
    parts.append(("everything else (test error, setup)", rest))
    print(
        f"\nwhere the time goes: one seed of simulate_kernel at d = {d} (D = {sz.d}, n = {sz.n}, p = {sz.p}, "
        f"ell = {sz.ell}, n_test = {kernel_sim.DEFAULT_N_TEST_KERNEL}, solver {r.runs[0].how}): "
        f"{plain:.1f} s CPU unprofiled, {total:.1f} s under cProfile (shares below are of the profiled total); "
        f"the prediction kernel_prediction at this d: {t_pred:.2f} s CPU (e_pred = {pred:.5g})"
    )
    print("| part | seconds | share |")
    print("|---|---|---|")
    for k, v in parts:
        print(f"| {k} | {v:.2f} | {100 * v / total:.0f}% |")
    return {
        "d": d,
        "cpu_s_unprofiled": plain,
        "cpu_s_profiled": total,
        "prediction_cpu_s": t_pred,
        "parts": dict(parts),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ds", default="12")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=900.0, help="skip cells predicted to take longer (s)")
    ap.add_argument("--breakdown", type=int, default=None, help="profile one seed of simulate_kernel at this d")
    ap.add_argument(
        "--force",
        default="",
        help="comma-separated paths (cg, dense, explicit) to run even when the "
        "memory model or --budget would skip them (the Gram path's memory model is generous: it "
        "counts the least-squares fallback, 3 p^2 words, which a successful Cholesky never allocates)",
    )
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--cell", choices=PATHS, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    ds = [int(x) for x in args.ds.split(",") if x.strip()]
    if args.cell:
        cell(args.cell, ds[0], args.repeat, args.out)
        return
    blas = [f"{i.get('internal_api')} {i.get('version')}" for i in threadpool_info() if i.get("user_api") == "blas"]
    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"{simulation.available_memory() / 2**30:.1f} GiB available, numpy {np.__version__}, BLAS {', '.join(blas)}"
    )
    print(f"command: python benchmarks/bench_kernel_solvers.py {' '.join(sys.argv[1:])}")
    print(
        f"BLAS threads: 1 (threadpoolctl; subprocesses OMP/OPENBLAS_NUM_THREADS=1); load average at start "
        f"{os.getloadavg()[0]:.1f}; matfree.DEFAULT_TOL = {matfree.DEFAULT_TOL:g}"
    )
    force = tuple(x for x in args.force.split(",") if x)
    if set(force) - set(PATHS):
        raise SystemExit(f"--force: expected some of {', '.join(PATHS)}, got {args.force!r}")
    rows = solver_table(ds, args.repeat, args.budget, force)
    br = breakdown(args.breakdown) if args.breakdown else None
    print(f"load average at end {os.getloadavg()[0]:.1f}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"rows": rows, "breakdown": br}, indent=1) + "\n")


if __name__ == "__main__":
    main()
