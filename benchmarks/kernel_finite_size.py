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

Writes a JSON file (after every d, so an interrupted run keeps its finished points) and prints a table.
One seed of the real variant costs about 0.1 s of CPU at d = 4, 1 s at d = 8, 3.4 s at d = 10, 10 s at
d = 12, 25-34 s at d = 14 and 57 s at d = 16 (one BLAS thread, matrix-free solver from d = 5 on;
docs/benchmarks.md); the controls are cheaper.  docs/kernel-finite-size.json (docs/kernel.md, "Finite
size: a finding") is the kernel learner with ten fresh seeds per d (seeds 1000-1009, n_test 4000, the
settings of `icl-symbolic extrapolate --features hermite:2`) for d = 4..14, merged with the ordinary
excess at ten seeds and the earlier three-seed controls (d = 16 with ten seeds was started and
stopped for lack of machine time; extend it with --ds 16 and --merge):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/kernel_finite_size.py --ds 4,6,8,10,12 \
        --seeds 10 --seed0 1000 --n-test 4000 --variants real --no-ordinary --out real.json
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/kernel_finite_size.py --ds 14 --jobs 2 \
        --seeds 10 --seed0 1000 --n-test 4000 --variants real --no-ordinary --out real14.json
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/kernel_finite_size.py --ds "" \
        --seeds 10 --seed0 1000 --n-test 2000 --out ordinary.json          # plain attention, f = g, d = 27
    git show 418b501:docs/kernel-finite-size.json > old.json
    python benchmarks/kernel_finite_size.py --ds "" --no-ordinary --merge ordinary.json --merge real.json \
        --merge real14.json --merge old.json:features,gaussian --out docs/kernel-finite-size.json

(old.json: the earlier docs/kernel-finite-size.json, whose controls have three seeds, 0-2, n_test 2000.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from icl_symbolic.theory.asymptotic import Ratios

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from icl_symbolic.kernel_learner import simulation as kernel_sim
from icl_symbolic.kernel_learner.ladder import fit_gap  # noqa: E402
from icl_symbolic.output.io import write_json  # noqa: E402
from icl_symbolic.simulation import simulator as simulation  # noqa: E402
from icl_symbolic.studies.extrapolate import LadderPoint  # noqa: E402

F = "g + (g^2-1)/sqrt(2)"
RHO = 0.1


def measure(d, point, seeds, n_test, variants, log, jobs=1):
    alpha, kappa, tau = point
    rows = []
    for variant in variants:
        t0 = time.monotonic()
        r = kernel_sim.simulate_kernel(
            F,
            d,
            alpha,
            kappa,
            tau,
            RHO,
            seeds=seeds,
            n_test=n_test,
            control=None if variant == "real" else variant,
            jobs=jobs,
        )
        e, se, th = float(r.e_query), r.e_query.stderr, r.e_theory
        row = {
            "d": d,
            "D": r.D,
            "variant": variant,
            "ell": r.ell,
            "k": r.k,
            "n": r.n,
            "e": e,
            "e_se": se,
            "e_theory": th,
            "gap_rel": e / th - 1,
            "gap_rel_se": se / th,
            "gap_abs": e - th,
            "seeds": list(seeds),
            "n_test": n_test,
            "seconds": round(time.monotonic() - t0, 1),
        }
        rows.append(row)
        log(
            f"d={d:3d} D={r.D:4d} {variant:9s} e = {e:.5f} +- {se:.5f}   theory {th:.5f}   "
            f"gap {100 * row['gap_rel']:+6.1f}% +- {100 * row['gap_rel_se']:.1f}%   [{row['seconds']} s]"
        )
    return rows


def ordinary(point, seeds, n_test, log, d=27):
    """Plain attention, linear teacher f = g, at d = 27 (= D of hermite:2 at d = 6)."""
    from icl_symbolic.theory.asymptotic import e_nonlinear

    alpha, kappa, tau = point
    s = simulation.simulate_many(
        [dict(f="g", d=d, alpha=alpha, kappa=kappa, tau=tau, rho=RHO, seeds=seeds, n_test=n_test)]
    )[0]
    th = float(e_nonlinear("g", Ratios(rho=RHO, alpha=alpha, kappa=kappa, tau=tau)))
    row = {
        "d": d,
        "D": d,
        "variant": "ordinary (f = g, plain attention)",
        "e": float(s.e),
        "e_se": s.e.stderr,
        "e_theory": th,
        "gap_rel": float(s.e) / th - 1,
        "gap_rel_se": s.e.stderr / th,
        "seeds": list(seeds),
    }
    log(
        f"ordinary f=g plain attention d={d}: e = {row['e']:.5f} +- {row['e_se']:.5f}  theory {th:.5f}  "
        f"gap {100 * row['gap_rel']:+.1f}% +- {100 * row['gap_rel_se']:.1f}%"
    )
    return row


def fits(rows, variant):
    """Absolute gap e_sim - e_theory against the learner's dimension D: gap_inf + c1/D (+ c2/D^2) tested
    against 0, and the power law c D^-p -- the library's kernel_ladder.fit_gap (also behind
    `icl-symbolic extrapolate --features hermite:2`)."""
    pts = [r for r in rows if r["variant"] == variant]
    if len(pts) < 3:
        return None
    return fit_gap([LadderPoint(r["D"], r["gap_abs"], r["e_se"], tuple(r["seeds"])) for r in pts]).to_json()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ds", default="4,6,8,10")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seed0", type=int, default=0, help="first seed (seeds are seed0, seed0 + 1, ...)")
    ap.add_argument("--n-test", type=int, default=2000)
    ap.add_argument("--point", default="16,2,4", help="ell/D, k/D, n/D^2")
    ap.add_argument("--variants", default="real,features,gaussian")
    ap.add_argument("--no-ordinary", action="store_true")
    ap.add_argument("--jobs", type=int, default=1, help="processes for the seeds (the same numbers for any value)")
    ap.add_argument("--out", default="kernel_finite_size.json")
    ap.add_argument(
        "--merge",
        action="append",
        default=[],
        help="earlier output JSON whose rows are kept; FILE:real,gaussian keeps only those variants "
        "(the first merged file with an 'ordinary' row gives it)",
    )
    args = ap.parse_args(argv)
    point = tuple(float(x) for x in args.point.split(","))
    seeds = tuple(range(args.seed0, args.seed0 + args.seeds))
    variants = args.variants.split(",")

    def log(msg):
        print(msg, flush=True)

    rows, extra = [], None
    for spec in args.merge:
        path, _, only = spec.partition(":")
        old = json.loads(Path(path).read_text())
        keep = set(only.split(",")) if only else None
        rows += [r for r in old["rows"] if keep is None or r["variant"] in keep]
        extra = extra or old.get("ordinary")
    if not args.no_ordinary:
        extra = ordinary(point, seeds, args.n_test, log)
    for d in [int(x) for x in args.ds.split(",") if x.strip()] or [None]:
        if d is not None:
            rows += measure(d, point, seeds, args.n_test, variants, log, args.jobs)
        variants_all = sorted({r["variant"] for r in rows})
        doc = {
            "teacher": F,
            "rho": RHO,
            "point": {"alpha": point[0], "kappa": point[1], "tau": point[2]},
            "ratios": "alpha = ell/D, kappa = k/D, tau = n/D^2; Gaussian tasks",
            "rows": rows,
            "ordinary": extra,
            "fits": {v: fits(rows, v) for v in variants_all},
            "machine": "2-core machine shared with other jobs; OMP/OPENBLAS threads = "
            + str(__import__("os").environ.get("OPENBLAS_NUM_THREADS", "default")),
        }
        write_json(args.out, doc)
    for v, fdoc in doc["fits"].items():
        log(f"fit of the absolute gap ({v}): {json.dumps(fdoc)}")


if __name__ == "__main__":
    main()
