"""Finite-d theory against simulations: the measured table and figure of docs/finite-d.md.

For every grid point of benchmarks/finite_d_grid.py (sin, tanh, the linear teacher g, the
a1 = 0 teacher (g^2-1)/sqrt 2; tau = 0.5 and 3; kappa = 0.5 and 2; rho = 0.1, C = I, Gaussian
tasks, ridgeless) and every d with cached seeds, reports

    simulation mean +- SE over seeds (exact test functional of each trained Gamma),
    the d -> infinity limit (Result 1, Eq. (9); Eq. (10) for a1 = 0),
    the corrected theory (icl_symbolic.theory.finite_d, all terms) and each term's contribution,
    gap to the limit, gap to the corrected theory (%, with SE), fraction of the gap explained.

The simulations come from the seed cache filled by benchmarks/finite_d_sims.py (run it first);
nothing here is fitted to them.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python benchmarks/finite_d_sims.py --d 32,64
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python benchmarks/finite_d_theory.py
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from finite_d_grid import CACHE_DIR, GRID, ROOT, key_of, pool, setting_of, stored_rows  # noqa: E402

from icl_symbolic.simulation.cache import SeedCache  # noqa: E402
from icl_symbolic.theory.finite_d import e_nonlinear_finite  # noqa: E402


def cached(cache, setting, start=0, max_seeds=5000):
    """Per-seed values of seeds start, start+1, ... up to the first seed not cached."""
    vals = []
    for s in range(start, max_seeds):
        rec = cache.get(setting, s)
        if rec is None:
            break
        vals.append(rec["e"])
    return vals


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d", default="32,64,128")
    ap.add_argument("--json", default=str(ROOT / "docs" / "finite-d.json"))
    ap.add_argument("--png", default=str(ROOT / "docs" / "finite-d.png"))
    ap.add_argument("--mc-prompts", type=int, default=400_000, help="prompts for the radial term's MC")
    ap.add_argument(
        "--sims-from",
        default=None,
        help="read the simulation mean, SE and seed count S of each point from this JSON (a previous output, e.g. "
        "docs/finite-d.json) and pool them with the cached seeds S, S+1, ... (finite_d_sims.py --top-up); points "
        "the JSON does not hold come from the cache alone; default: the cache alone",
    )
    ap.add_argument(
        "--teachers",
        default=None,
        help="recompute only these teachers (';'-separated, as in the grid); the rows of the other teachers are "
        "kept unchanged from the existing --json file (their terms did not change)",
    )
    a = ap.parse_args(argv)
    only = None if a.teachers is None else [t.strip() for t in a.teachers.split(";") if t.strip()]
    kept = []
    if only is not None:
        unknown = sorted(set(only) - {pt["f"] for pt in GRID})
        if unknown:
            raise SystemExit(f"finite_d_theory: --teachers not in the grid: {unknown}")
        kept = [r for r in json.loads(Path(a.json).read_text())["rows"] if r["teacher"] not in only]
    cache = SeedCache(CACHE_DIR)
    stored = stored_rows(a.sims_from) if a.sims_from else {}
    rows = list(kept)
    t0 = time.time()
    for d in [int(x) for x in a.d.split(",")]:
        for pt in GRID:
            if only is not None and pt["f"] not in only:
                continue
            base = stored.get(key_of(pt, d))
            if base is not None:  # seeds 0..S-1 as stored, pooled with the cached seeds S, S+1, ...
                n0 = int(base["seeds"])
                sim, se, nseeds = pool(n0, base["sim"], base["sim_se"], cached(cache, setting_of(pt, d), start=n0))
            else:
                vals = cached(cache, setting_of(pt, d))
                if len(vals) < 2:
                    continue
                sim = float(np.mean(vals))
                se = float(np.std(vals, ddof=1) / math.sqrt(len(vals)))
                nseeds = len(vals)
            t1 = time.time()
            fd = e_nonlinear_finite(
                pt["f"],
                rho=pt["rho"],
                alpha=pt["alpha"],
                kappa=pt["kappa"],
                tau=pt["tau"],
                d=d,
                mc_prompts=a.mc_prompts,
            )
            gl = 100 * (sim / fd.limit - 1)
            gc = 100 * (sim / fd.corrected - 1)
            se_c = 100 * math.hypot(se, sim * fd.stderr / fd.corrected) / fd.corrected
            frac = (fd.corrected - fd.limit) / (sim - fd.limit) if abs(sim - fd.limit) > 2 * se else None
            rows.append(
                dict(
                    teacher=pt["f"],
                    d=d,
                    alpha=pt["alpha"],
                    kappa=pt["kappa"],
                    tau=pt["tau"],
                    rho=pt["rho"],
                    seeds=nseeds,
                    sim=sim,
                    sim_se=se,
                    limit=fd.limit,
                    corrected=fd.corrected,
                    corrected_mc_se=fd.stderr,
                    gap_limit_pct=gl,
                    gap_corrected_pct=gc,
                    gap_se_pct=100 * se / sim,
                    gap_corrected_se_pct=se_c,
                    fraction_explained=frac,
                    terms={t.name: t.delta for t in fd.terms},
                    theory_seconds=round(time.time() - t1, 1),
                )
            )
            print(
                f"d={d:>3} {pt['f']:>16} kappa={pt['kappa']:<3g} tau={pt['tau']:<3g} sim {sim:.4f}+-{se:.4f} "
                f"({nseeds} seeds)  limit {fd.limit:.4f} ({gl:+.2f} %)  corrected {fd.corrected:.4f} "
                f"({gc:+.2f} +- {se_c:.2f} %)",
                flush=True,
            )
    out = {
        "description": "finite-d theory vs simulation; see docs/finite-d.md",
        "simulation": "icl_symbolic.simulation.simulator.simulate_many, exact test functional, Gaussian tasks, C = I, "
        "lam = 0, seeds 0..S-1, mean +- SE over seeds (std ddof=1 / sqrt S)",
        "theory": "icl_symbolic.theory.finite_d.e_nonlinear_finite, all terms",
        "seconds": round(time.time() - t0, 1),
        "recomputed": "all teachers" if only is None else only,
        "rows": rows,
    }
    Path(a.json).write_text(json.dumps(out, indent=1))
    print_table(rows)
    summary(rows)
    figure(rows, a.png)


def print_table(rows):
    print(
        "\n| teacher | alpha | kappa | tau | d | seeds | sim +- SE | limit | corrected | gap to limit % | "
        "gap to corrected % | explained |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["teacher"], r["kappa"], r["tau"], r["d"])):
        fr = "-" if r["fraction_explained"] is None else f"{r['fraction_explained']:.2f}"
        print(
            f"| {r['teacher']} | {r['alpha']:g} | {r['kappa']:g} | {r['tau']:g} | {r['d']} | {r['seeds']} | "
            f"{r['sim']:.4f} +- {r['sim_se']:.4f} | {r['limit']:.4f} | {r['corrected']:.4f} | "
            f"{r['gap_limit_pct']:+.2f} | {r['gap_corrected_pct']:+.2f} +- {r['gap_corrected_se_pct']:.2f} | {fr} |"
        )


def summary(rows):
    print("\nGoal check (|tau - 1| >= 0.3 everywhere on this grid):")
    for d in sorted(set(r["d"] for r in rows)):
        rs = [r for r in rows if r["d"] == d]
        worst = max(rs, key=lambda r: abs(r["gap_corrected_pct"]))
        n1 = sum(abs(r["gap_corrected_pct"]) <= 1 for r in rs)
        n2 = sum(abs(r["gap_corrected_pct"]) <= 2 for r in rs)
        lim = max(abs(r["gap_limit_pct"]) for r in rs)
        print(
            f"  d = {d}: {len(rs)} points; |gap to corrected| <= 1 %: {n1}, <= 2 %: {n2}; worst "
            f"{worst['gap_corrected_pct']:+.2f} % ({worst['teacher']}, kappa {worst['kappa']:g}, tau {worst['tau']:g}); "
            f"worst |gap to limit| {lim:.2f} %"
        )


def figure(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    teachers = list(dict.fromkeys(r["teacher"] for r in rows))
    ncol = 2
    nrow = (len(teachers) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(10.5, 4.0 * nrow), sharey=False)
    axes = np.atleast_1d(axes).ravel()
    for ax in axes[len(teachers) :]:
        ax.set_visible(False)
    colors = {(0.5, 0.5): "C0", (0.5, 3.0): "C1", (2.0, 0.5): "C2", (2.0, 3.0): "C3"}
    for ax, f in zip(axes, teachers):
        for (ka, ta), col in colors.items():
            rs = sorted(
                [r for r in rows if r["teacher"] == f and r["kappa"] == ka and r["tau"] == ta], key=lambda r: r["d"]
            )
            if not rs:
                continue
            x = [1.0 / r["d"] for r in rs]
            ax.errorbar(
                x,
                [r["gap_limit_pct"] for r in rs],
                yerr=[r["gap_se_pct"] for r in rs],
                color=col,
                ls=":",
                marker="o",
                mfc="none",
                capsize=2,
                label=f"kappa={ka:g}, tau={ta:g}: vs limit",
            )
            ax.errorbar(
                x,
                [r["gap_corrected_pct"] for r in rs],
                yerr=[r["gap_corrected_se_pct"] for r in rs],
                color=col,
                ls="-",
                marker="s",
                capsize=2,
                label="  vs corrected",
            )
        ax.axhline(0, color="k", lw=0.6)
        for b in (1, -1):
            ax.axhline(b, color="0.7", lw=0.6, ls="--")
        ax.set_title(f"f = {f}")
        ax.set_xlabel("1/d")
        ax.set_xlim(0, None)
    for ax in axes[::ncol]:
        ax.set_ylabel("simulation / theory - 1  (%)")
    axes[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(
        "Finite-d gap, simulation vs theory: open/dotted = d -> inf limit, filled/solid = limit + O(1/d) "
        "terms\n(icl_symbolic.theory.finite_d); rho = 0.1, C = I, Gaussian tasks, ridgeless; error bars = seed SE; "
        "grey: +-1 %",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
