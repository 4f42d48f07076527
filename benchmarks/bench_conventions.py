"""How much each simulation convention moves the simulated errors, and whether the effect vanishes.

For each teacher (linear g, sin) and each convention option (docs/conventions.md), the
same seeds are simulated under the default convention and with that one option changed
(and with the whole ``letey2024`` preset).  Per seed the paired difference
variant - default of the ICL error (exact functional) and of the IDG error is taken; at
each d its mean and SE over seeds are reported with z = mean/SE, and the per-seed
differences on the ladder of d are extrapolated in 1/d (``extrapolate.fit_ladder``,
jackknife over seeds) to d -> infinity, where every convention must give 0 (the same
limit) within its SE.

    OMP_NUM_THREADS=1 nice -n 5 python benchmarks/bench_conventions.py \
        --d 16,24,32,48,64 --seeds 10 --json benchmarks/results/conventions.json

Setting: alpha = 2, kappa = 0.3 (so that k = kappa d is not an integer and the two
roundings differ at some d), tau = 2, rho = 0.1, C = I.  About 6 minutes on one core.
Prints a Markdown table (docs/conventions.md holds the measured one).  Runs at other
dimensions (or one teacher at a time) are joined by ``--merge A.json B.json ... --json OUT``,
which redoes each extrapolation over all d from the per-d means and SEs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from icl_symbolic.core.stats import seed_mean_se
from icl_symbolic.simulation.simulator import resolve_convention, simulate_many
from icl_symbolic.studies.extrapolate import LadderPoint, fit_ladder

VARIANTS = {
    "assignment=random": {"assignment": "random"},
    "train_tasks=sphere": {"train_tasks": "sphere"},
    "test_tasks=sphere": {"test_tasks": "sphere"},
    "rounding=floor-k": {"rounding": "floor-k"},
    "ridge_floor=1e-6": {"ridge_floor": 1e-6},
    "letey2024 (all)": "letey2024",
}
TEACHERS = ("g", "sin(g)")


def _num(x: float) -> str:
    return f"{x:+.1e}" if x != 0 and abs(x) < 1e-3 else f"{x:+.4f}"


def table(out: dict) -> str:
    """The Markdown table of a run (also from a stored --json file: ``--table-from FILE``)."""
    ds = out["setting"]["d"]
    show = [d for d in ds if d in (32, 64, 128)] or ds[-2:]
    head = (
        "| teacher | option | "
        + " | ".join(f"ICL d={d}: diff (z, rel)" for d in show)
        + " | ICL d->inf | "
        + " | ".join(f"IDG d={d}: diff (z)" for d in show)
        + " | IDG d->inf |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for row in out["rows"]:
        cells = [row["teacher"], row["variant"]]
        for err in ("icl", "idg"):
            for d in show:
                p = next(x for x in row["per_d"] if x["error"] == err and x["d"] == d)
                same = p["k_default"] == p["k_variant"] and p["n_default"] == p["n_variant"]
                extra = (
                    ""
                    if same or err == "idg"
                    else f" [k, n: {p['k_default']}, {p['n_default']} -> {p['k_variant']}, {p['n_variant']}]"
                )
                cells.append(
                    (
                        f"{_num(p['diff'])} ({p['z']:+.1f}"
                        + (f", {100 * p['rel']:+.2g}%)" if err == "icl" else ")")
                        + extra
                    )
                    if p["se"]
                    else "0 (identical)"
                )
            inf = row[f"{err}_inf"]
            cells.append(
                "0 (identical)"
                if inf is None
                else f"{_num(inf['diff_inf'])} +- {_num(inf['se'])[1:]} (z {inf['z']:+.1f})"
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _extrapolated(live) -> dict:
    """The option's difference extrapolated to d -> infinity (fit_ladder over the d with a nonzero SE)."""
    fit = fit_ladder(live)
    return {
        "diff_inf": fit.e_inf,
        "se": fit.e_inf_se,
        "z": fit.e_inf / fit.e_inf_se,
        "model": fit.model,
        "d": [p.d for p in live],
        "se_method": fit.se_method,
    }


def _refit(row: dict, seeds: int) -> None:
    """The d -> infinity extrapolation of a row's per-d paired differences (each error), in place.

    From the stored per-d means and SEs (Welch dof, ``seeds`` per point): a merged table
    (``--merge``) has no per-seed values for every d."""
    for err in ("icl", "idg"):
        live = [
            LadderPoint(p["d"], p["diff"], p["se"], tuple(range(seeds)))
            for p in sorted(row["per_d"], key=lambda p: p["d"])
            if p["error"] == err and p["se"]
        ]
        if len(live) < 2:
            row[f"{err}_inf"] = None
            continue
        row[f"{err}_inf"] = _extrapolated(live)


def merge(docs: list) -> dict:
    """One table from runs of the same setting at different d (e.g. d = 16-64 and d = 96, 128, one
    teacher each): the per-d rows joined by (teacher, option), each extrapolation redone over all d."""
    first = docs[0]["setting"]
    for doc in docs[1:]:
        other = {k: v for k, v in doc["setting"].items() if k != "d"}
        if other != {k: v for k, v in first.items() if k != "d"}:
            raise SystemExit(f"bench_conventions: cannot merge different settings: {first} vs {doc['setting']}")
    rows: dict = {}
    for doc in docs:
        for row in doc["rows"]:
            key = (row["teacher"], row["variant"])
            if key not in rows:
                rows[key] = {k: v for k, v in row.items() if k not in ("icl_inf", "idg_inf")}
                rows[key]["per_d"] = []
            seen = {(p["error"], p["d"]) for p in rows[key]["per_d"]}
            rows[key]["per_d"] += [p for p in row["per_d"] if (p["error"], p["d"]) not in seen]
    for row in rows.values():
        _refit(row, first["seeds"])
    ds = sorted({p["d"] for row in rows.values() for p in row["per_d"]})
    return {
        "setting": dict(first, d=ds),
        "rows": sorted(rows.values(), key=lambda r: (TEACHERS.index(r["teacher"]), list(VARIANTS).index(r["variant"]))),
        "seconds": sum(doc.get("seconds", 0) for doc in docs),
        "merged_from": len(docs),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", default="16,24,32,48,64")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--alpha", type=float, default=2.0)
    ap.add_argument("--kappa", type=float, default=0.3)
    ap.add_argument("--tau", type=float, default=2.0)
    ap.add_argument("--json", default=None, help="write the measured numbers here")
    ap.add_argument("--table-from", default=None, help="print the table of a stored --json file and stop")
    ap.add_argument("--teachers", default=",".join(TEACHERS), help="comma list (default g,sin(g))")
    ap.add_argument("--variants", default=None, help="comma list of option names to run (default: all)")
    ap.add_argument("--merge", nargs="+", default=None, help="join stored --json runs (other d) into one table")
    args = ap.parse_args(argv)
    if args.merge:
        docs = []
        for name in args.merge:
            with open(name) as fh:
                docs.append(json.load(fh))
        out = merge(docs)
        print(table(out))
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=1)
        return 0
    if args.table_from:
        with open(args.table_from) as fh:
            print(table(json.load(fh)))
        return 0
    ds = [int(x) for x in args.d.split(",")]
    seeds = tuple(range(args.seeds))
    t0 = time.monotonic()
    out = {
        "setting": {
            "alpha": args.alpha,
            "kappa": args.kappa,
            "tau": args.tau,
            "rho": 0.1,
            "d": ds,
            "seeds": args.seeds,
        },
        "rows": [],
    }
    variants = {k: v for k, v in VARIANTS.items() if args.variants is None or k in args.variants.split(",")}
    for f in args.teachers.split(";" if ";" in args.teachers else ","):
        convs = {"default": resolve_convention()}
        convs.update(
            {
                name: resolve_convention(v) if isinstance(v, str) else resolve_convention(None, **v)
                for name, v in variants.items()
            }
        )
        specs, keys = [], []
        for d in ds:
            for name, conv in convs.items():
                specs.append(
                    dict(
                        f=f,
                        d=d,
                        alpha=args.alpha,
                        kappa=args.kappa,
                        tau=args.tau,
                        rho=0.1,
                        seeds=seeds,
                        n_test=100,
                        convention=conv,
                    )
                )
                keys.append((d, name))
        res = dict(zip(keys, simulate_many(specs, progress=None)))
        print(
            f"# {f}: simulated {len(specs)} settings x {len(seeds)} seeds, {time.monotonic() - t0:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        for name in variants:
            row = {"teacher": f, "variant": name, "convention": convs[name].to_json(), "per_d": []}
            for err in ("icl", "idg"):
                pts = []
                for d in ds:
                    a, b = res[(d, "default")], res[(d, name)]
                    get = (lambda r: float(r.e)) if err == "icl" else (lambda r: float(r.e_idg))
                    diff = np.array([get(rb) - get(ra) for ra, rb in zip(a.runs, b.runs)])
                    base = float(np.mean([get(r) for r in a.runs]))
                    m, se, _ = seed_mean_se(diff)
                    pts.append(LadderPoint(d, m, se, seeds, values=tuple(diff)))
                    row["per_d"].append(
                        {
                            "error": err,
                            "d": d,
                            "k_default": a.k,
                            "k_variant": b.k,
                            "n_default": a.n,
                            "n_variant": b.n,
                            "diff": m,
                            "se": se,
                            "z": m / se if se else None,
                            "rel": m / base,
                        }
                    )
                live = [p for p in pts if p.e_se]  # a d where the option changes nothing is exact 0
                if len(live) < 2:
                    row[f"{err}_inf"] = None
                    continue
                row[f"{err}_inf"] = _extrapolated(live)
            out["rows"].append(row)
    out["seconds"] = round(time.monotonic() - t0, 1)
    print(table(out))
    print(f"\n{out['seconds']} s", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
