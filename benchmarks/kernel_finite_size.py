"""Finite-size gap of the kernel learner's prediction, decomposed (docs/kernel.md, "Finite size").

At one point of the learner's ratios (ell/D, k/D, n/D^2) and a ladder of d, simulates

  real      the kernel learner on hermite:2 features of the teacher (kernel_sim, direct sampler)
  features  control: Gaussian inputs in D dims, the TRUE task vectors sqrt(D) theta(w), noise rho_eff
  gaussian  control: Gaussian inputs, Gaussian task vectors N(0, C~) with the same second moment

and compares each with the prediction (kernel.kernel_curve, Gaussian tasks) at the same d:
relative gap = e_sim/e_theory - 1 with its SE (seed-to-seed).  "gaussian" is the ordinary finite-size
error of the linear theory; features - gaussian is the effect of the task law (rank-one quadratic
tasks); real - features that of the non-Gaussian features.  Also "ordinary": plain attention on the
linear teacher f = g at d = 27 (the allowance quoted in tests/test_kernel_sim.py).  The absolute
gaps e_sim - e_theory are fitted against d with extrapolate.fit_ladder (e_inf + c1/d) and with a
power law c d^-p (weighted least squares on log gap).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/kernel_finite_size.py \
        --ds 4,6,8,10 --seeds 3 --out kernel_finite_size.json

Writes a JSON file and prints a table.  Runtime on the shared 2-core machine: d <= 10 about
15 minutes with 3 seeds (d = 12 adds roughly 3-6 minutes per seed and variant).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from icl_symbolic import kernel_sim, simulation  # noqa: E402
from icl_symbolic.extrapolate import LadderPoint, fit_ladder  # noqa: E402
from icl_symbolic.io import write_json  # noqa: E402

F = "g + (g^2-1)/sqrt(2)"
RHO = 0.1


def measure(d, point, seeds, n_test, variants, log):
    alpha, kappa, tau = point
    rows = []
    for variant in variants:
        t0 = time.monotonic()
        r = kernel_sim.simulate_kernel(F, d, alpha, kappa, tau, RHO, seeds=seeds, n_test=n_test,
                                       control=None if variant == "real" else variant)
        e, se, th = float(r.e_query), r.e_query.stderr, r.e_theory
        row = {"d": d, "D": r.D, "variant": variant, "ell": r.ell, "k": r.k, "n": r.n, "e": e, "e_se": se,
               "e_theory": th, "gap_rel": e / th - 1, "gap_rel_se": se / th, "gap_abs": e - th,
               "seeds": list(seeds), "n_test": n_test, "seconds": round(time.monotonic() - t0, 1)}
        rows.append(row)
        log(f"d={d:3d} D={r.D:4d} {variant:9s} e = {e:.5f} +- {se:.5f}   theory {th:.5f}   "
            f"gap {100 * row['gap_rel']:+6.1f}% +- {100 * row['gap_rel_se']:.1f}%   [{row['seconds']} s]")
    return rows


def ordinary(point, seeds, n_test, log, d=27):
    """Plain attention, linear teacher f = g, at d = 27 (= D of hermite:2 at d = 6)."""
    from icl_symbolic.theory import e_nonlinear

    alpha, kappa, tau = point
    s = simulation.simulate("g", d, alpha, kappa, tau, RHO, seeds=seeds, n_test=n_test)
    th = float(e_nonlinear("g", rho=RHO, alpha=alpha, kappa=kappa, tau=tau))
    row = {"d": d, "D": d, "variant": "ordinary (f = g, plain attention)", "e": float(s.e), "e_se": s.e.stderr,
           "e_theory": th, "gap_rel": float(s.e) / th - 1, "gap_rel_se": s.e.stderr / th, "seeds": list(seeds)}
    log(f"ordinary f=g plain attention d={d}: e = {row['e']:.5f} +- {row['e_se']:.5f}  theory {th:.5f}  "
        f"gap {100 * row['gap_rel']:+.1f}% +- {100 * row['gap_rel_se']:.1f}%")
    return row


def fits(rows, variant):
    """Absolute gap e_sim - e_theory against the learner's dimension D: weighted fit gap_inf + c1/D
    (extrapolate.fit_ladder with D as the ladder variable) and a power law c D^-p."""
    pts = [r for r in rows if r["variant"] == variant]
    if len(pts) < 3:
        return None
    ladder = [LadderPoint(r["D"], r["gap_abs"], r["e_se"], tuple(r["seeds"])) for r in pts]
    fit = fit_ladder(ladder)
    out = {"variable": "D", "model": fit.model.replace("d", "D"), "gap_inf": fit.e_inf, "gap_inf_se": fit.e_inf_se,
           "gap_inf_dof": fit.e_inf_dof, "coef": [float(c) for c in fit.coef], "chi2": fit.chi2, "dof": fit.dof,
           "p_value": fit.p_value, "se_inflation": fit.se_inflation}
    good = [r for r in pts if r["gap_abs"] > 0]
    if len(good) >= 2:
        x = np.log([r["D"] for r in good])
        yv = np.log([r["gap_abs"] for r in good])
        w = np.array([(r["gap_abs"] / r["e_se"]) ** 2 for r in good])      # 1/var of log gap
        A = np.vstack([np.ones_like(x), x]).T
        cov = np.linalg.inv(A.T @ (w[:, None] * A))
        beta = cov @ (A.T @ (w * yv))
        out["power_law"] = {"c": float(math.exp(beta[0])), "p": float(-beta[1]), "p_se": float(math.sqrt(cov[1, 1]))}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ds", default="4,6,8,10")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-test", type=int, default=2000)
    ap.add_argument("--point", default="16,2,4", help="ell/D, k/D, n/D^2")
    ap.add_argument("--variants", default="real,features,gaussian")
    ap.add_argument("--no-ordinary", action="store_true")
    ap.add_argument("--out", default="kernel_finite_size.json")
    ap.add_argument("--merge", action="append", default=[], help="earlier output JSON whose rows are kept")
    args = ap.parse_args(argv)
    point = tuple(float(x) for x in args.point.split(","))
    seeds = tuple(range(args.seeds))
    variants = args.variants.split(",")

    def log(msg):
        print(msg, flush=True)

    rows, extra = [], None
    for path in args.merge:
        old = json.loads(Path(path).read_text())
        rows += old["rows"]
        extra = extra or old.get("ordinary")
    if not args.no_ordinary:
        extra = ordinary(point, seeds, args.n_test, log)
    for d in [int(x) for x in args.ds.split(",") if x.strip()] or [None]:
        if d is not None:
            rows += measure(d, point, seeds, args.n_test, variants, log)
        variants_all = sorted({r["variant"] for r in rows})
        doc = {"teacher": F, "rho": RHO, "point": {"alpha": point[0], "kappa": point[1], "tau": point[2]},
               "ratios": "alpha = ell/D, kappa = k/D, tau = n/D^2; Gaussian tasks", "rows": rows,
               "ordinary": extra, "fits": {v: fits(rows, v) for v in variants_all},
               "machine": "2-core machine shared with other jobs; OMP/OPENBLAS threads = "
                          + str(__import__("os").environ.get("OPENBLAS_NUM_THREADS", "default"))}
        write_json(args.out, doc)
    for v, fdoc in doc["fits"].items():
        log(f"fit of the absolute gap ({v}): {json.dumps(fdoc)}")


if __name__ == "__main__":
    main()
