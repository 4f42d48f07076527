"""Benchmark: the simulator's training solve, matrix-free vs dense vs explicit features, and d = 256.

What (side by side in ONE run, every path with ONE BLAS thread, threadpoolctl):

1. Solver only, on identical training data (sin teacher, alpha = kappa = 2,
   rho = 0.1, lam = 0, the fast prompt sampler), d in {32, 64, 96, 128},
   tau in {0.5, 2, 4}:

   * matrix-free: ``simulation.fit(..., solver="cg")`` (PCG with the Kronecker
     preconditioner for n >= p, dual CG for n < p);
   * dense: ``simulation.fit(..., solver="gram")`` for n >= p (pair-product Gram
     accumulation + Cholesky), ``"kernel"`` for n < p (n x n kernel + Cholesky)
     -- the previous default paths;
   * explicit features: the n x p feature matrix H, then ``H.T @ H`` and
     ``numpy.linalg.solve`` (n >= p) or ``H @ H.T`` and a solve (n < p).

   CPU time of this process (``time.process_time``), min of ``--repeat`` runs
   (1 run for cells predicted above 10 s); a cell is
   skipped (and reported as skipped) when its predicted time exceeds
   ``--budget`` seconds or its memory does not fit, from the flop / memory
   model of ``simulation.cost_flops`` / ``estimate_memory``.  Also reported: CG
   iterations and the relative difference of the solutions.  Fitted scaling
   exponents: log time vs log d at each tau, and vs log tau at each d.

2. End to end: ``icl-symbolic simulate "sin(g)" --d 256 --tau 2 --alpha 2
   --kappa 2 --rho 0.1 --seeds 1`` in a subprocess (one BLAS thread): wall time,
   CPU time, max RSS, the solver path, iterations and residual.

3. Fixed cost: ``icl-symbolic simulate "sin(g)" --d D --seeds 1`` (D = 32, 64, 96)
   total process CPU time vs the training time it reports, next to the floor
   of a process that only imports NumPy, SciPy's linalg and SymPy.

4. ``--figure``: ``icl-symbolic figure 1`` at paper size with ``--jobs 2`` and
   ``--jobs 1`` (wall times; this takes several minutes each).

Run:  python benchmarks/bench_simulate.py [--repeat 3] [--budget 40] [--skip-256] [--figure]
      [--no-solvers] [--no-fixed] [--ds 32,64] [--taus 2]
How long: about 10-15 minutes on the 2-core machine without --figure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from icl_symbolic.engine.expr import teacher
from icl_symbolic.simulation.simulator import (
    PromptLaw,
    cost_flops,
    estimate_memory,
    fit,
    sample_training_set,
    sizes,
)

ALPHA, KAPPA, RHO, LAM = 2.0, 2.0, 0.1, 0.0
SEED = 20261201
DS = (32, 64, 96, 128)
TAUS = (0.5, 2.0, 4.0)
#: Measured effective rates (flop/s, one thread, this machine) used only to predict which cells to skip.
RATE = {"cg": 2.0e10, "dense": 2.5e10, "explicit": 1.5e10}


def explicit_solve(X, V, y):
    """The straightforward solver: the full feature matrix H and dense normal / kernel equations."""
    n, d = X.shape
    H = np.einsum("mi,mj->mij", X, V).reshape(n, -1)
    if n >= H.shape[1]:
        return np.linalg.solve(H.T @ H, H.T @ y).reshape(d, d + 1)
    return (H.T @ np.linalg.solve(H @ H.T, y)).reshape(d, d + 1)


def predicted(path, sz):
    n, p = sz.n, sz.p
    if path == "cg":
        return cost_flops(sz, "cg") / RATE["cg"]
    if path == "dense":
        return cost_flops(sz, "gram" if n >= p else "kernel") / RATE["dense"]
    return (n * p * p if n >= p else n * n * p) / RATE["explicit"] + (n * p * 8 * 3) / 2e9


def explicit_bytes(sz):
    """Memory model of the explicit solve: H (n x p) with one temporary of its size, and H^T H or H H^T."""
    return 8 * sz.n * sz.p * 2 + 8 * min(sz.n, sz.p) ** 2


def memory_ok(path, sz):
    limit = 0.6 * _available()
    if path == "explicit":
        return explicit_bytes(sz) < limit
    if path == "dense":
        return estimate_memory(sz, "gram" if sz.n >= sz.p else "kernel") < limit
    return estimate_memory(sz, "cg") < limit


def _available():
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 16 << 30


def time_cell(path, X, V, y, repeat):
    fn = {
        "cg": lambda: fit(X, V, y, LAM, "cg"),
        "dense": lambda: fit(X, V, y, LAM, "gram" if X.shape[0] >= X.shape[1] * (X.shape[1] + 1) else "kernel"),
        "explicit": lambda: (explicit_solve(X, V, y), None),
    }[path]
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def fit_exponent(xs, ts):
    if len(xs) < 2:
        return None
    return float(np.polyfit(np.log(xs), np.log(ts), 1)[0])


def solver_table(repeat, budget, DS=DS, TAUS=TAUS):
    f = teacher("sin(g)").numpy
    times = {}
    print(
        "CPU seconds of this process (time.process_time; with one BLAS thread this is the solve's compute time "
        "and is less disturbed by other jobs than wall time), min over repeats"
    )
    print(
        "| d | tau | n | p | matrix-free s (CG iterations) | dense s (path) | explicit s | dense / matrix-free | "
        "explicit / matrix-free | rel. diff matrix-free vs dense | vs explicit |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for d in DS:
        for tau in TAUS:
            sz = sizes(d, ALPHA, KAPPA, tau)
            rng = np.random.default_rng(SEED + d)
            tasks = rng.standard_normal((sz.k, d))
            X, V, y = sample_training_set(PromptLaw(f, sz.ell, RHO), tasks, sz.n, np.random.default_rng(SEED + 1))
            row = {}
            sols = {}
            for path in ("cg", "dense", "explicit"):
                pt = predicted(path, sz)
                if pt > budget or not memory_ok(path, sz):
                    row[path] = None
                    why = "time" if pt > budget else "memory"
                    row[path + "_why"] = (
                        f"skipped ({why}: predicted {pt:.0f} s)" if why == "time" else "skipped (memory)"
                    )
                    continue
                t, out = time_cell(path, X, V, y, repeat if pt < 10 else 1)
                row[path] = t
                sols[path] = out
                times[(path, d, tau)] = t
            G_cg, info = sols["cg"]

            def rel(other):
                if other not in sols:
                    return "-"
                G = sols[other][0]
                return f"{np.linalg.norm(G_cg - G) / np.linalg.norm(G):.1e}"

            def cell(path):
                return f"{row[path]:.3f}" if row[path] is not None else row[path + "_why"]

            dense_path = sols["dense"][1].solver if "dense" in sols else ""
            ratio = lambda o: f"{row[o] / row['cg']:.1f}x" if row[o] is not None else "-"  # noqa: E731
            print(
                f"| {d} | {tau:g} | {sz.n} | {sz.p} | {row['cg']:.3f} ({info.iterations}) | {cell('dense')} "
                f"{('(' + dense_path + ')') if dense_path else ''} | {cell('explicit')} | {ratio('dense')} | "
                f"{ratio('explicit')} | {rel('dense')} | {rel('explicit')} |",
                flush=True,
            )
            del X, V, y
    print("\nfitted scaling exponents (time ~ d^a at fixed tau; ~ tau^b at fixed d; only measured cells):")
    for path in ("cg", "dense", "explicit"):
        parts = []
        for tau in TAUS:
            pts = [(d, times[(path, d, tau)]) for d in DS if (path, d, tau) in times]
            a = fit_exponent([p[0] for p in pts], [p[1] for p in pts])
            if a is not None:
                parts.append(f"tau={tau:g}: d^{a:.2f} (d={pts[0][0]}-{pts[-1][0]})")
        for d in DS:
            pts = [(tau, times[(path, d, tau)]) for tau in TAUS[1:] if (path, d, tau) in times]
            b = fit_exponent([p[0] for p in pts], [p[1] for p in pts])
            if b is not None:
                parts.append(f"d={d}: tau^{b:.2f} (tau 2-4)")
        print(f"  {path}: " + "; ".join(parts))


def run_cli(argv, env_extra=None, python_args=False):
    """Run ``python -m icl_symbolic ARGV`` (``python ARGV`` with ``python_args``) with one BLAS thread:
    (result, wall s, CPU s of the child, max RSS MB of all children so far)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.update(env_extra or {})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, *([] if python_args else ["-m", "icl_symbolic"]), *argv],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode != 0:
        raise SystemExit(f"{argv} failed: {r.stderr.strip()}")
    return r, wall, cpu, after.ru_maxrss / 1024


def end_to_end_256():
    argv = [
        "simulate",
        "sin(g)",
        "--d",
        "256",
        "--tau",
        "2",
        "--alpha",
        "2",
        "--kappa",
        "2",
        "--rho",
        "0.1",
        "--seeds",
        "1",
        "--json",
        "--quiet",
    ]
    r, wall, cpu, rss = run_cli(argv)
    o = json.loads(r.stdout)["points"][0]
    s = o["per_seed"][0]
    print(
        f"d=256, tau=2 (n={o['n']}, p={256 * 257}): wall {wall:.1f} s, CPU {cpu:.1f} s, max RSS {rss:.0f} MB "
        f"(whole process); training {s['train_seconds']:.1f} s; solver {s['solver']}, {s['iterations']} "
        f"iterations, residual {s['residual']:.1e}; e = {s['e']:.6g}, e_mc = {s['e_mc']:.6g} +- {s['e_mc_se']:.2g}"
    )


def fixed_cost(ds=(32, 64, 96)):
    """Whole-process CPU of ``simulate --seeds 1`` against the training time it reports, and the floor:
    the CPU of a process that only imports NumPy, SciPy's linalg and SymPy (which every simulate needs:
    the teacher is parsed by SymPy)."""
    floor = min(run_cli(["-c", "import numpy, scipy.linalg, sympy"], python_args=True)[2] for _ in range(3))
    print(f"floor: a process that imports numpy, scipy.linalg and sympy only: CPU {floor:.2f} s (min of 3)")
    for d in ds:
        argv = ["simulate", "sin(g)", "--d", str(d), "--seeds", "1", "--json", "--quiet"]
        runs = [run_cli(argv) for _ in range(3)]  # min of 3 (the first may compile bytecode)
        r, wall, cpu, rss = min(runs, key=lambda x: x[2])
        s = json.loads(r.stdout)["points"][0]["per_seed"][0]
        print(
            f"d={d}, tau=2: process CPU {cpu:.2f} s (wall {wall:.2f} s, max RSS {rss:.0f} MB); training "
            f"{s['train_seconds']:.3f} s, the seed's whole run (training + MC + exact test error) "
            f"{s['seconds']:.2f} s; solver {s['solver']}; process / training = {cpu / s['train_seconds']:.1f}x; "
            f"fixed (process - seed run) {cpu - s['seconds']:.2f} s"
        )


def figure_jobs():
    for jobs in ("2", "1"):
        out = f"/tmp/bench_fig1_jobs{jobs}"
        _, wall, cpu, rss = run_cli(["figure", "1", "--quiet", "--out", out, "--jobs", jobs])
        print(
            f"figure 1 (paper size) --jobs {jobs}: wall {wall:.0f} s ({wall / 60:.1f} min), CPU {cpu:.0f} s, "
            f"max RSS {rss:.0f} MB",
            flush=True,
        )
    a = json.load(open("/tmp/bench_fig1_jobs2/figure1.json"))
    b = json.load(open("/tmp/bench_fig1_jobs1/figure1.json"))
    same = a.get("match_diagnostics") == b.get("match_diagnostics")
    print(f"  same numbers with --jobs 2 and --jobs 1: {same}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=40.0, help="skip cells predicted to take longer (s)")
    ap.add_argument("--skip-256", action="store_true")
    ap.add_argument("--figure", action="store_true")
    ap.add_argument("--no-solvers", action="store_true", help="skip part 1 (the solver table)")
    ap.add_argument("--no-fixed", action="store_true", help="skip part 3 (the fixed cost)")
    ap.add_argument("--ds", default=",".join(map(str, DS)), help="comma-separated d values")
    ap.add_argument("--taus", default=",".join(map(str, TAUS)), help="comma-separated tau values")
    args = ap.parse_args()
    ds = tuple(int(x) for x in args.ds.split(","))
    taus = tuple(float(x) for x in args.taus.split(","))
    blas = [f"{i.get('internal_api')} {i.get('version')}" for i in threadpool_info() if i.get("user_api") == "blas"]
    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, numpy {np.__version__}, "
        f"BLAS {', '.join(blas)}, python {platform.python_version()}"
    )
    print(f"command: python benchmarks/bench_simulate.py {' '.join(sys.argv[1:])}")
    print(
        f"BLAS threads: 1 (threadpoolctl; subprocesses OPENBLAS_NUM_THREADS=1); load average at start "
        f"{os.getloadavg()[0]:.1f} (shared machine)"
    )
    if not args.no_solvers:
        with threadpool_limits(limits=1):
            solver_table(args.repeat, args.budget, ds, taus)
        print(f"\nload average now {os.getloadavg()[0]:.1f}")
    if not args.no_fixed:
        fixed_cost()
    if not args.skip_256:
        end_to_end_256()
    if args.figure:
        figure_jobs()
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
