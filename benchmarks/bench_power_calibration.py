"""Calibration of the ladder SE, the Student-t limit and the minimum detectable error (docs/power.md).

Planted ladders e(d) = e_inf + c1/d, e_inf = 0.7, c1 = 1.3, d = 32, 48, 64, 96,
128, S seeds per d.  Per-seed noise: sd(d) = 2.5 % of e(32) at d = 32, falling
like 1/d; its shape is standard normal, or a standardised lognormal
exp(sigma Z) (skewness 1.75 at sigma = 0.5, 6.2 at sigma = 1), or a standardised
gamma with shape 1 (skewness 2).  Each ladder is fitted by
``extrapolate.fit_ladder`` (model "auto", as verify uses it) twice: with the
per-seed values (jackknife SE, S - 1 dof) and without (Welch SE and dof).

Tables printed:
1. coverage: fraction of ladders whose interval e_inf +- t_limit(z, dof) SE misses
   the truth, for nominal 90 %, 99 %, 99.9 % (binomial SE of each fraction given);
2. detection: a claimed value planted 1, 2, 5 % below the true e_inf; measured
   fraction of ladders flagged at the false-alarm budget 1e-3, against
   stats.power() at the ladders' true SE (the sd of e_inf over the replicates)
   and the jackknife dof S - 1, and against the mean over the ladders of
   stats.power() at each ladder's own SE (what a per-claim MDE uses); and the
   minimum detectable error stats.mde_rel() at the median SE;
3. model selection: with per-seed values and 10 seeds, how often the "auto" rule
   picks the 1/d^2 model although the truth is 1/d, how often those ladders miss
   at nominal 90 %, and the overall miss rates of "auto" and of the forced 1/d model;
4. ragged seed counts (more seeds at small d, as the shipped ladders): coverage of the
   delete-a-group jackknife and of the Welch SE (``--only-ragged`` prints only this).

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_power_calibration.py [--reps 2000]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats as sps

from icl_symbolic.core.stats import mde_rel, power, t_limit
from icl_symbolic.studies.extrapolate import LadderPoint, fit_ladder

DS = (32, 48, 64, 96, 128)
E_INF, C1 = 0.7, 1.3
REL_SD_32 = 0.025
NOISES = ("normal", "lognormal:0.5", "lognormal:1", "gamma:1")


def standard_noise(rng, shape, noise: str) -> np.ndarray:
    """Zero-mean, unit-variance draws of the named shape."""
    if noise == "normal":
        return rng.standard_normal(shape)
    kind, par = noise.split(":")
    s = float(par)
    if kind == "lognormal":
        x = np.exp(s * rng.standard_normal(shape))
        return (x - math.exp(s * s / 2)) / math.sqrt((math.exp(s * s) - 1) * math.exp(s * s))
    if kind == "gamma":
        return (rng.gamma(s, 1.0, shape) - s) / math.sqrt(s)
    raise ValueError(noise)


def planted_ladder(rng, seeds, noise: str, with_values: bool):
    """``seeds``: one count for every d, or a tuple of counts (one per d of DS: a ragged ladder)."""
    sd32 = REL_SD_32 * (E_INF + C1 / 32)
    counts = seeds if isinstance(seeds, tuple) else (seeds,) * len(DS)
    pts = []
    for d, n in zip(DS, counts):
        v = E_INF + C1 / d + sd32 * 32 / d * standard_noise(rng, n, noise)
        pts.append(
            LadderPoint(
                d,
                float(v.mean()),
                float(v.std(ddof=1) / math.sqrt(n)),
                tuple(range(n)),
                values=tuple(v) if with_values else None,
            )
        )
    return pts


#: Ragged ladders: more seeds where a seed is cheap (small d), as the shipped claims use them.
RAGGED = ((40, 30, 20, 10, 10), (120, 60, 30, 30, 30))


def ragged_coverage(reps: int, levels) -> None:
    """Coverage of the delete-a-group jackknife (min count - 1 dof) and of the Welch SE on ragged ladders."""
    print(f"\nragged seed counts: fraction of {reps} planted ladders whose nominal interval misses e_inf")
    print("| noise | seeds per d | SE | mean dof | " + " | ".join(f"miss, nominal {1 - lv:g}" for lv in levels) + " |")
    print("|---|---|---|---|" + "---|" * len(levels))
    for noise in NOISES:
        for counts in RAGGED:
            rng = np.random.default_rng([7, sum(counts), NOISES.index(noise)])
            out = {"jackknife": [], "welch": []}
            for _ in range(reps):
                pts = planted_ladder(rng, counts, noise, True)
                bare = [LadderPoint(p.d, p.e_mean, p.e_se, p.seeds) for p in pts]
                for method, pp in (("jackknife", pts), ("welch", bare)):
                    f = fit_ladder(pp)
                    out[method].append((f.e_inf, f.e_inf_se, f.e_inf_dof))
            for method, rows in out.items():
                rows = np.array(rows)
                cells = [f"{miss_rate(rows, lv):.4f} ({math.sqrt(lv * (1 - lv) / reps):.4f})" for lv in levels]
                print(
                    f"| {noise} | {'/'.join(map(str, counts))} | {method} | {rows[:, 2].mean():.1f} | "
                    + " | ".join(cells)
                    + " |"
                )


def replicate(seeds: int, noise: str, reps: int, seed: int = 0):
    """(e_inf, SE, dof) arrays over ``reps`` planted ladders, for the jackknife and the Welch SE."""
    rng = np.random.default_rng([seed, seeds, NOISES.index(noise)])
    out = {"jackknife": [], "welch": []}
    for _ in range(reps):
        pts = planted_ladder(rng, seeds, noise, True)
        for method, pp in (("jackknife", pts), ("welch", [LadderPoint(p.d, p.e_mean, p.e_se, p.seeds) for p in pts])):
            f = fit_ladder(pp)
            out[method].append((f.e_inf, f.e_inf_se, f.e_inf_dof))
    return {k: np.array(v) for k, v in out.items()}


def selection_effect(noise: str, reps: int, seeds: int = 10, seed: int = 1):
    """Fraction of ladders where "auto" picks c1/d+c2/d^2, the 90 % miss rate among them, and overall
    90 % miss rates of "auto" and of the forced "c1/d" fit (jackknife SE, S - 1 dof)."""
    rng = np.random.default_rng([seed, seeds, NOISES.index(noise)])
    lim = t_limit(float(sps.norm.isf(0.05)), seeds - 1)
    quad, miss_a, miss_l = [], [], []
    for _ in range(reps):
        pts = planted_ladder(rng, seeds, noise, True)
        fa, fl = fit_ladder(pts), fit_ladder(pts, "c1/d")
        quad.append(fa.model != "c1/d")
        miss_a.append(abs(fa.e_inf - E_INF) > lim * fa.e_inf_se)
        miss_l.append(abs(fl.e_inf - E_INF) > lim * fl.e_inf_se)
    quad, miss_a, miss_l = map(np.array, (quad, miss_a, miss_l))
    return (
        float(quad.mean()),
        float(miss_a[quad].mean()) if quad.any() else math.nan,
        float(miss_a.mean()),
        float(miss_l.mean()),
    )


def miss_rate(rows, level: float, truth: float = E_INF) -> float:
    z = float(sps.norm.isf((1 - level) / 2))
    lim = np.array([t_limit(z, nu) for nu in rows[:, 2]])
    return float(np.mean(np.abs(rows[:, 0] - truth) > lim * rows[:, 1]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--only-ragged", action="store_true", help="only the ragged-ladder coverage table")
    a = ap.parse_args(argv)
    t0 = time.process_time()
    levels = (0.9, 0.99, 0.999)
    if a.only_ragged:
        ragged_coverage(a.reps, levels)
        print(f"\n{time.process_time() - t0:.1f} s CPU")
        return
    print(
        f"coverage: fraction of {a.reps} planted ladders whose nominal interval misses e_inf (binomial SE in brackets)"
    )
    print("| noise | seeds | SE | mean dof | " + " | ".join(f"miss, nominal {1 - lv:g}" for lv in levels) + " |")
    print("|---|---|---|---|" + "---|" * len(levels))
    runs = {}
    for noise in NOISES:
        for seeds in (4, 10):
            runs[noise, seeds] = r = replicate(seeds, noise, a.reps)
            for method in ("welch", "jackknife"):
                rows = r[method]
                cells = [f"{miss_rate(rows, lv):.4f} ({math.sqrt(lv * (1 - lv) / a.reps):.4f})" for lv in levels]
                print(f"| {noise} | {seeds} | {method} | {rows[:, 2].mean():.1f} | " + " | ".join(cells) + " |")
    z = float(sps.norm.isf(5e-4))
    print(
        f"\ndetection at false-alarm 1e-3 (z = {z:.4g}), jackknife SE: claimed value planted below the truth; "
        "predicted = stats.power at the true SE (sd of e_inf over the replicates) and dof S - 1"
    )
    print(
        "| noise | seeds | true SE / e_inf | median jackknife SE / e_inf | shift | detected | "
        "predicted (true SE) | predicted (own SE) | MDE (90 % power, median SE) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (noise, seeds), r in runs.items():
        rows = r["jackknife"]
        sd = float(rows[:, 0].std(ddof=1))
        nu = seeds - 1
        lim = t_limit(z, nu)
        mde = mde_rel(float(np.median(rows[:, 1])), lim, nu, E_INF)
        for shift in (0.01, 0.02, 0.05):
            claimed = E_INF * (1 - shift)
            det = float(np.mean(np.abs(rows[:, 0] - claimed) > lim * rows[:, 1]))
            pred = power(E_INF * shift, sd, lim, nu)
            own = float(np.mean([power(E_INF * shift, se, lim, nu) for se in rows[:, 1]]))
            print(
                f"| {noise} | {seeds} | {sd / E_INF:.4f} | {np.median(rows[:, 1]) / E_INF:.4f} | {shift:.0%} | "
                f"{det:.3f} ({math.sqrt(max(own * (1 - own), 1e-12) / a.reps):.3f}) | {pred:.3f} | {own:.3f} | "
                f"{mde:.1%} |"
            )
    print(f"\nmodel selection, 10 seeds, jackknife SE, nominal 90 % ({a.reps} ladders per row)")
    print("| noise | 1/d^2 chosen | miss among those | miss, auto | miss, forced c1/d |")
    print("|---|---|---|---|---|")
    for noise in NOISES:
        quad, miss_q, miss_a, miss_l = selection_effect(noise, a.reps)
        print(f"| {noise} | {quad:.3f} | {miss_q:.3f} | {miss_a:.4f} | {miss_l:.4f} |")
    ragged_coverage(a.reps, levels)
    print(f"\n{time.process_time() - t0:.1f} s CPU")


if __name__ == "__main__":
    main()
