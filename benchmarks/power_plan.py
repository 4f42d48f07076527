"""Power planning for the simulation claims: measured spreads -> the MDE a ladder will have.

Reads the per-seed errors that a `verify --full --cache DIR` run stored, and for every
extrapolated simulation claim (full and deep tier):

1. fits the per-seed spread of the claim's statistic against d, sd(d) = a d^-p (log-log
   least squares over the ladder points the cache holds for it; p is floored at 0.5);
2. fits the cost per seed against d, t(d) = b d^q, from the stored seconds;
3. predicts, for the claim's own ladder (d_list, n_seeds), the SE of the extrapolated
   value (weighted 1/d fit, the same weights as icl_symbolic.studies.extrapolate.fit_ladder),
   its Welch dof, the Student-t limit of the claim's z budget, the minimum detectable
   relative error at 90 % power (icl_symbolic.core.stats.mde_abs) and the CPU seconds.

Prediction, not measurement: the deep tier's MDEs in docs/power.md come from here, with
the spreads measured at d <= 96 extrapolated by the fitted power law.  A deep run
(`verify --tier deep --cache DIR`) replaces them by measured ones.

    python benchmarks/power_plan.py --cache /tmp/full-cache [--json plan.json]
    python benchmarks/power_plan.py --cache /tmp/full-cache --search a1zero.sim_tau2_gaussian \
        --budget 150 --d-sets '32,48,64,96;24,32,48,64,96'      # seed allocations for one claim
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections import defaultdict

import numpy as np
import sympy

from icl_symbolic.core.stats import mde_abs, t_limit
from icl_symbolic.engine.hermite import hermite_coeffs
from icl_symbolic.simulation.cache import SeedCache
from icl_symbolic.verification.claimfile import load_claims
from icl_symbolic.verification.registry import param_text


def _setting(p, f, rho, d, tasks):
    """The cache setting of checks.simulation._per_seed (kept in step with it)."""
    C_test = p["C_test"] or p["C_train"]
    return {
        "f": f,
        "rho": float(rho),
        "d": int(d),
        "alpha": float(p["alpha"]),
        "kappa": float(p["kappa"]),
        "tau": float(p["tau"]),
        "lam": float(p["lam"]),
        "n_test": int(p["n_test"]),
        "tasks": tasks,
        "C_train": str(p["C_train"]),
        "C_test": str(C_test),
        "exact": True,
    }


def _series(cache, claim):
    """{d: (per-seed statistic array, seconds per seed)} for the d the cache holds."""
    p = claim.parsed
    f = param_text(claim.params["f"])
    rho = float(sympy.N(p["rho"], 17))
    out = {}
    ds = sorted(set(p["d_list"]))
    for d in range(8, 513, 8):
        if d not in ds and d not in (24, 32, 48, 64, 96, 128, 192, 256):
            continue
        seeds = [p["seed0"] + i for i in range(200)]

        def get(ff, rr, tasks):
            recs = []
            for s in seeds:
                r = cache.get(_setting(p, ff, rr, d, tasks), s)
                if r is None:
                    break
                recs.append(r)
            return recs

        if p["versus"] == "theory":
            recs = get(f, rho, p["tasks"])
            vals = [r["e"] for r in recs]
        elif p["versus"] == "linear_equivalent":
            h = hermite_coeffs(f, rho=str(p["rho"]), digits=20)
            a1sq = float(h.a1.value) ** 2
            rlin = float(h.rho_nonlinear.value) / a1sq
            recs = get(f, rho, p["tasks"])
            lin = get("g", rlin, p["tasks"])
            n = min(len(recs), len(lin))
            vals = [recs[i]["e"] / (a1sq * lin[i]["e"]) for i in range(n)]
            recs = recs[:n] + lin[:n]
        else:
            g, s_ = get(f, rho, "gaussian"), get(f, rho, "sphere")
            n = min(len(g), len(s_))
            vals = [g[i]["e"] - s_[i]["e"] for i in range(n)]
            recs = g[:n] + s_[:n]
        if len(vals) >= 3:
            secs = sum(r.get("seconds", 0.0) for r in recs) / max(len(vals), 1)
            out[d] = (np.asarray(vals, float), secs)
    return out


def predict(ds, ns, sd, z, order: int = 1):
    """SE, dof, Student-t limit and MDE (absolute) of a ladder's extrapolated value.

    The SE is that of the weighted fit (1/d, or 1/d^2 with ``order = 2``) with the true
    per-point spreads; the dof is the jackknife's (the smallest seed count - 1), as the
    check uses it, since every shipped ladder carries its per-seed values.
    """
    x = 1.0 / np.asarray(ds, float)
    X = np.column_stack([x**k for k in range(order + 1)])
    s = np.asarray([sd(d) for d in ds])
    n = np.asarray(ns, float)
    W = n / s**2
    cov = np.linalg.inv((X.T * W) @ X)
    se = float(math.sqrt(cov[0, 0]))
    dof = float(min(ns) - 1)
    lim = t_limit(z, dof)
    return se, dof, lim, mde_abs(se, lim, dof)


def search(claim_id, cache_dir, budget, d_sets, counts=(30, 40, 60, 80, 120, 160, 200, 256), order=1):
    """Seed allocations (more seeds at smaller d) of the claim's setting that minimise the predicted
    MDE within ``budget`` CPU seconds, from the spread and cost fits of its cached seeds."""
    claim = next(c for c in load_claims() if c.id == claim_id)
    data = _series(SeedCache(cache_dir), claim)
    if len(data) < 2:
        raise SystemExit(f"power_plan: no cached seeds for {claim_id} in {cache_dir}")
    ds_m = np.array(sorted(data))
    sds = np.array([data[d][0].std(ddof=1) for d in ds_m])
    secs = np.array([data[d][1] for d in ds_m])
    a, pw = np.linalg.lstsq(np.column_stack([np.ones(len(ds_m)), -np.log(ds_m)]), np.log(sds), rcond=None)[0]
    b, q = np.linalg.lstsq(np.column_stack([np.ones(len(ds_m)), np.log(ds_m)]), np.log(secs), rcond=None)[0]
    ref = abs(float(np.mean(data[ds_m[-1]][0]))) if claim.parsed["versus"] != "other_law" else 1.0
    found = []
    for ds in d_sets:
        for ns in itertools.product(counts, repeat=len(ds)):
            if any(ns[i] < ns[i + 1] for i in range(len(ns) - 1)):
                continue
            cost = sum(n * math.exp(b) * d**q for d, n in zip(ds, ns))
            if cost > budget:
                continue
            m = predict(ds, ns, lambda d: math.exp(a) * d ** -max(pw, 0.5), claim.tolerance.value, order)[3]
            found.append((m / ref, cost, list(ds), list(ns)))
    found.sort()
    return found[:5]


def plan(cache_dir):
    cache = SeedCache(cache_dir)
    by_setting = defaultdict(list)
    rows = []
    claims = [c for c in load_claims() if c.check == "simulation_extrapolated"]
    for c in claims:
        base = c.id.removesuffix(".deep")
        by_setting[base].append(c)
    for base, group in by_setting.items():
        src = next((c for c in group if c.tier == "full"), group[0])
        data = _series(cache, src)
        if len(data) < 2:
            rows.append({"claim": base, "note": "no cached seeds for this setting (run verify --full --cache)"})
            continue
        ds_m = np.array(sorted(data))
        sds = np.array([data[d][0].std(ddof=1) for d in ds_m])
        ref = abs(float(np.mean(data[ds_m[-1]][0])))
        if src.parsed["versus"] == "other_law":
            ref = 1.0  # an absolute statement (difference vs 0); MDE reported absolute
        A = np.column_stack([np.ones(len(ds_m)), -np.log(ds_m)])
        a, pw = np.linalg.lstsq(A, np.log(sds), rcond=None)[0]
        pw = max(pw, 0.5)
        secs = np.array([data[d][1] for d in ds_m])
        ok = secs > 0
        if ok.sum() >= 2:
            b, q = np.linalg.lstsq(
                np.column_stack([np.ones(ok.sum()), np.log(ds_m[ok])]), np.log(secs[ok]), rcond=None
            )[0]
        else:
            b, q = 0.0, 0.0
        for c in group:
            p = c.parsed
            ds = list(p["d_list"])
            ns = p["n_seeds"] if isinstance(p["n_seeds"], list) else [p["n_seeds"]] * len(ds)
            se, dof, lim, m = predict(ds, ns, lambda d: math.exp(a) * d**-pw, c.tolerance.value)
            cost = sum(n * math.exp(b) * d**q for d, n in zip(ds, ns))
            rows.append(
                {
                    "claim": c.id,
                    "tier": c.tier,
                    "d_list": ds,
                    "n_seeds": ns,
                    "sd_fit": f"{math.exp(a):.3g} d^-{pw:.2f}",
                    "measured_d": [int(d) for d in ds_m],
                    "se_rel": se / ref,
                    "dof": dof,
                    "limit": lim,
                    "mde_rel": m / ref,
                    "cpu_seconds": cost,
                    "absolute": src.parsed["versus"] == "other_law",
                }
            )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", required=True, help="the cache folder of a verify --full --cache run")
    ap.add_argument("--json", default=None)
    ap.add_argument("--search", default=None, metavar="CLAIM", help="search seed allocations for this claim")
    ap.add_argument("--budget", type=float, default=150.0, help="--search: CPU seconds allowed (default 150)")
    ap.add_argument(
        "--d-sets",
        default="32,48,64,96",
        help="--search: ladders to try, ';'-separated (e.g. '32,48,64,96;24,32,48,64,96')",
    )
    ap.add_argument("--order", type=int, default=1, choices=(1, 2), help="--search: fit model (1: c1/d, 2: + c2/d^2)")
    args = ap.parse_args(argv)
    if args.search:
        d_sets = [[int(x) for x in part.split(",")] for part in args.d_sets.split(";")]
        for m, cost, ds, ns in search(args.search, args.cache, args.budget, d_sets, order=args.order):
            print(f"predicted MDE {100 * m:.2f} %  CPU {cost:.0f} s  d={ds} n={ns}")
        return 0
    rows = plan(args.cache)
    print(f"{'claim':40s} {'tier':5s} {'predicted MDE':>13s} {'SE':>8s} {'dof':>5s} {'CPU s':>7s}  ladder")
    for r in rows:
        if "note" in r:
            print(f"{r['claim']:40s} {r['note']}")
            continue
        unit = " abs" if r["absolute"] else "%"
        scale = 1 if r["absolute"] else 100
        print(
            f"{r['claim']:40s} {r['tier']:5s} {scale * r['mde_rel']:12.3g}{unit} {scale * r['se_rel']:7.2g}{unit} "
            f"{r['dof']:5.0f} {r['cpu_seconds']:7.0f}  d={r['d_list']} n={r['n_seeds']} (sd ~ {r['sd_fit']})"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
