"""How much the training-solve tolerance moves a simulated error, and what it saves.

A simulation trains Gamma by a matrix-free CG solve to a certified relative residual
(``icl_symbolic.simulation.simulator.TRAIN_TOL``).  This script trains the same seeds
(the same tasks and prompts) at the reference tolerance 1e-11 and at looser ones, and
reports, per setting, the CG iterations, the solve time and the largest relative change
of the exact test (ICL) and IDG errors over the seeds.  The chosen tolerance must move
the errors by far less than the smallest per-point seed SE a claim uses (~1e-4
relative): docs/simulation.md holds the measured table.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_train_tol.py [--seeds 3]

About 1-2 minutes on one core.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from icl_symbolic.engine.expr import teacher
from icl_symbolic.model.covariance import resolve_covariance, sample_tasks
from icl_symbolic.simulation.simulator import (
    TRAIN_TOL,
    exact_test_error,
    idg_error,
    sizes,
    train,
)

#: (teacher, d, alpha, kappa, tau): both sides of the peak, near it, far above it,
#: the a1 = 0 teacher and the large-alpha kappa < 1 setting of Eq. (11)'s claim.
SETTINGS = (
    ("sin(g)", 64, 2, 2, 4),
    ("sin(g)", 64, 2, 2, 0.5),
    ("(g^2-1)/sqrt(2)", 48, 2, 2, 2),
    ("sin(g)", 40, 2, 2, 1.3),
    ("sin(g)", 40, 2, 2, 0.8),
    ("g", 40, 2, 2, 1.5),
    ("tanh(g)", 24, 20, 0.5, 10),
)
REFERENCE = 1e-11


def _one(f, d, alpha, kappa, tau, seed, tol):
    T = teacher(f)
    sz = sizes(d, alpha, kappa, tau)
    cov = resolve_covariance("identity", d)
    ss_tasks, ss_train = np.random.SeedSequence(seed).spawn(2)
    tasks = sample_tasks(cov, sz.k, np.random.default_rng(ss_tasks))
    t0 = time.perf_counter()
    G, info = train(T.numpy, tasks, sz.n, sz.ell, 0.1, 0.0, np.random.default_rng(ss_train), solver="cg", tol=tol)
    secs = time.perf_counter() - t0
    e = float(exact_test_error(G, T, 0.1, sz.ell, cov, np.random.default_rng(0)).value)
    e_idg = float(idg_error(G, T, 0.1, sz.ell, tasks).value)
    return e, e_idg, info.iterations, secs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--tols", default=f"{TRAIN_TOL:g},1e-8", help="comma list of tolerances to compare with 1e-11")
    args = ap.parse_args(argv)
    tols = [float(t) for t in args.tols.split(",")]
    print(f"reference tolerance {REFERENCE:g}; seeds 0..{args.seeds - 1}; TRAIN_TOL = {TRAIN_TOL:g}")
    print(
        "| teacher | d | alpha | kappa | tau | tol | CG iterations (ref -> tol) | train s (ref -> tol) "
        "| max rel. change ICL | max rel. change IDG |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = {t: 0.0 for t in tols}
    for f, d, alpha, kappa, tau in SETTINGS:
        ref = [_one(f, d, alpha, kappa, tau, s, REFERENCE) for s in range(args.seeds)]
        for tol in tols:
            runs = [_one(f, d, alpha, kappa, tau, s, tol) for s in range(args.seeds)]
            dic = max(abs(r[0] / q[0] - 1) for r, q in zip(runs, ref))
            did = max(abs(r[1] / q[1] - 1) for r, q in zip(runs, ref))
            worst[tol] = max(worst[tol], dic, did)
            its_r, its_t = np.mean([q[2] for q in ref]), np.mean([r[2] for r in runs])
            s_r, s_t = sum(q[3] for q in ref), sum(r[3] for r in runs)
            print(
                f"| {f} | {d} | {alpha:g} | {kappa:g} | {tau:g} | {tol:g} | {its_r:.0f} -> {its_t:.0f} "
                f"| {s_r:.2f} -> {s_t:.2f} ({s_r / s_t:.2f}x) | {dic:.1e} | {did:.1e} |"
            )
    for tol in tols:
        print(f"largest relative change at tol {tol:g}: {worst[tol]:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
