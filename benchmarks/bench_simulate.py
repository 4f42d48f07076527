"""Benchmark: the simulator's training step against the straightforward implementation.

What: one Fig. 1 point (d = 64, alpha = kappa = 2, sin teacher, rho = 0.1) at
tau = 2 (n = 8192 >= p = 4160: Gram path) and at tau = 0.5 (n = 2048 < p:
kernel path), side by side in one run:

* ours: :func:`icl_symbolic.simulation.train` (fast O(ell + d) prompt sampler,
  chunked pair-product Gram accumulation (dgemm) / kernel form, Cholesky with a
  condition check);
* straightforward: the direct O(ell d) sampler, the full n x d(d+1) feature
  matrix H, H^T H + (n/d) lam I, ``numpy.linalg.solve``.

Both solve the same ridge problem with lam = 1e-6 (the straightforward normal
equations are singular for n < p at lam = 0).  Reported: wall time (median of
``--repeat`` runs, and the minimum, which is less disturbed by other jobs on a
shared machine), peak traced memory (tracemalloc, a separate run: numpy
reports its buffers to tracemalloc), their ratios, and the relative difference
of the two Gammas on identical prompts (solver-only comparison).

Also (``--figures``) the wall time of ``figure 1 --quick`` and ``figure 2 --quick``
and per-point timings at paper size from which the full figures' time is
estimated (``--full`` runs them for real).

Run:  python benchmarks/bench_simulate.py [--repeat 3] [--figures] [--full]
How long: about 1-2 minutes without --figures on the 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
import tracemalloc

import numpy as np

from icl_symbolic.expr import teacher
from icl_symbolic.prompts import sample_prompts
from icl_symbolic.simulation import fit_gamma, sizes, train

D, ALPHA, KAPPA, RHO, LAM = 64, 2.0, 2.0, 0.1, 1e-6
SEED = 20261130


def straightforward(f_numpy, tasks, n, ell, rho, lam, rng):
    """Direct sampler, full feature matrix, normal equations, dense solve."""
    k, d = tasks.shape
    P = sample_prompts(f_numpy, tasks[np.arange(n) % k], ell, rho, rng, method="direct")
    V = np.concatenate([P.u, P.s[:, None]], axis=1)
    H = np.einsum("mi,mj->mij", P.x_test, V).reshape(n, -1)
    G = H.T @ H
    G[np.diag_indices_from(G)] += (n / d) * lam
    return np.linalg.solve(G, H.T @ P.y_test).reshape(d, d + 1)


def ours(f_numpy, tasks, n, ell, rho, lam, rng):
    return train(f_numpy, tasks, n, ell, rho, lam, rng)[0]


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def _peak(fn, *args):
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench_point(tau, repeat):
    sz = sizes(D, ALPHA, KAPPA, tau)
    f = teacher("sin(g)").numpy
    tasks = np.random.default_rng(SEED).standard_normal((sz.k, D))
    res = {}
    for name, fn in (("straightforward", straightforward), ("ours", ours)):
        times = [_timed(fn, f, tasks, sz.n, sz.ell, RHO, LAM, np.random.default_rng(SEED + 1))[0]
                 for _ in range(repeat)]
        peak = _peak(fn, f, tasks, sz.n, sz.ell, RHO, LAM, np.random.default_rng(SEED + 1))
        res[name] = (float(np.min(times)), peak, float(np.median(times)))
    # solver-only agreement on identical prompts
    P = sample_prompts(f, tasks[np.arange(sz.n) % sz.k], sz.ell, RHO, np.random.default_rng(SEED + 2), method="fast")
    V = np.concatenate([P.u, P.s[:, None]], axis=1)
    t_solver, (G_ours, how) = _timed(fit_gamma, P.x_test, V, P.y_test, LAM)
    H = np.einsum("mi,mj->mij", P.x_test, V).reshape(sz.n, -1)
    t0 = time.perf_counter()
    G = H.T @ H
    G[np.diag_indices_from(G)] += (sz.n / D) * LAM
    G_ref = np.linalg.solve(G, H.T @ P.y_test).reshape(D, D + 1)
    t_ref = time.perf_counter() - t0
    rel = float(np.linalg.norm(G_ours - G_ref) / np.linalg.norm(G_ref))
    return sz, res, (t_solver, t_ref, how, rel)


def figure_times(full):
    out = {}
    for name in ("1", "2"):
        cmd = [sys.executable, "-m", "icl_symbolic", "figure", name, "--quiet", "--out", f"/tmp/bench_fig{name}"]
        if not full:
            cmd.insert(4, "--quick")
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        out[("full " if full else "quick ") + name] = time.perf_counter() - t0
    return out


def paper_size_estimate():
    """Seconds per (teacher, tau) simulation at paper size, one seed, and the extrapolated total."""
    from icl_symbolic.figures import figure1_data, figure2_data  # noqa: F401  (grids documented there)
    from icl_symbolic.simulation import simulate
    fig1_taus = [0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 1.1, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0]
    per = {}
    for tau in fig1_taus:
        per[tau] = simulate("sin(g)", 64, 2, 2, tau, 0.1, seeds=(0,), n_test=20000).seconds
    fig1 = 3 * 5 * sum(per.values())
    kap = list(np.geomspace(0.125, 8.0, 13))
    per2 = {}
    for alpha in (20.0, 40.0):
        for kappa in (kap[0], kap[6], kap[-1]):
            per2[(alpha, kappa)] = simulate("tanh(g)", 32, alpha, kappa, alpha / 2, 0.1, seeds=(0,),
                                            n_test=20000).seconds
    fig2 = 5 * 13 * sum(per2.values()) / 3
    return per, fig1, per2, fig2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--figures", action="store_true")
    ap.add_argument("--full", action="store_true")
    args = ap.parse_args()
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, numpy {np.__version__}, "
          f"python {platform.python_version()}")
    print(f"command: python benchmarks/bench_simulate.py {' '.join(sys.argv[1:])}")
    print(f"setting: d={D}, alpha={ALPHA}, kappa={KAPPA}, sin(g), rho={RHO}, lam={LAM}; min (median) of "
          f"{args.repeat} runs; load average at start {os.getloadavg()[0]:.1f}")
    print("| tau | n | p | straightforward s | ours s | speed-up (min) | straightforward peak MB | ours peak MB | "
          "memory ratio | solver-only s (ours / straightforward) | path | rel. diff Gamma |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for tau in (2.0, 0.5):
        sz, res, (ts, tr, how, rel) = bench_point(tau, args.repeat)
        (t_s, m_s, med_s), (t_o, m_o, med_o) = res["straightforward"], res["ours"]
        print(f"| {tau} | {sz.n} | {sz.p} | {t_s:.2f} ({med_s:.2f}) | {t_o:.2f} ({med_o:.2f}) | {t_s / t_o:.1f}x | {m_s / 2**20:.0f} | "
              f"{m_o / 2**20:.0f} | {m_o / m_s:.2f} | {ts:.2f} / {tr:.2f} | {how} | {rel:.1e} |", flush=True)
    if args.figures or args.full:
        for k, v in figure_times(args.full).items():
            print(f"figure {k}: {v:.1f} s wall", flush=True)
        per, fig1, per2, fig2 = paper_size_estimate()
        print("paper-size per-run seconds (1 seed), Fig. 1 (sin, d=64): "
              + ", ".join(f"tau={t:g}: {s:.1f}" for t, s in per.items()))
        print(f"estimated full figure 1 (3 series x 14 taus x 5 seeds): {fig1 / 60:.1f} min")
        print("paper-size per-run seconds (1 seed), Fig. 2 (tanh, d=32): "
              + ", ".join(f"alpha={a:g},kappa={k:.3g}: {s:.1f}" for (a, k), s in per2.items()))
        print(f"estimated full figure 2 (2 alphas x 13 kappas x 5 seeds): {fig2 / 60:.1f} min")


if __name__ == "__main__":
    main()
