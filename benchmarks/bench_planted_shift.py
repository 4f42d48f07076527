"""Planted-shift detection: does `verify --full` catch a Result 1 that is wrong by 2 %?

For each of K fresh seed sets (the shipped claims' seed0 moved by 10^6 k), the Result 1
simulation claims of the full tier are run three times on the same simulations:

* as shipped (they must hold: the false-alarm side);
* with the theory multiplied by 1 + shift (``e_nonlinear`` in the check module, a test
  fixture installed by monkeypatching, not a library switch);
* with it multiplied by 1 - shift.

For the paired claim (nonlinear teacher over its linear equivalent on the same seeds,
compared with 1) a wrong Result 1 means a ratio of 1 +- shift: the linear-equivalent
side's per-seed errors are divided by 1 +- shift.  The detection rate over the 2K
shifted runs is printed next to the rate the claims' own minimum detectable errors
predict (the power at the planted shift, :func:`icl_symbolic.core.stats.power`).

    python benchmarks/bench_planted_shift.py --sets 5 --shift 0.02 --cache /tmp/shift-cache \
        --json docs/planted-shift.json

Simulations are stored in ``--cache`` (resumable); one BLAS thread per process.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

from threadpoolctl import threadpool_limits

from icl_symbolic.core.stats import power
from icl_symbolic.core.values import Value
from icl_symbolic.verification import runner
from icl_symbolic.verification.checks import simulation as checks_simulation
from icl_symbolic.verification.claimfile import load_claims, select
from icl_symbolic.verification.judge import z_parts

CLAIMS = ("result1.sim_sin_tau4", "result1.sim_sin_tau0.5", "result1.sim_tanh_tau0.5", "fig1.sim_result1_normalised")


def _shifted(factor):
    """Monkeypatches that make the checked statement wrong by ``factor`` (restored by the caller)."""
    real_theory = checks_simulation.e_nonlinear
    real_seeds = checks_simulation._per_seed

    def theory(*a, **kw):
        v = real_theory(*a, **kw)
        return Value(float(v.value) * factor, "numeric", note="planted shift")

    def per_seed(f, *a, **kw):
        out = real_seeds(f, *a, **kw)
        return out / factor if f == "g" else out  # the linear-equivalent side of the ratio

    return {"e_nonlinear": theory, "_per_seed": per_seed}


def run(sets: int, shift: float, cache, progress, first: int = 0) -> dict:
    base = select(load_claims(), list(CLAIMS))
    rows = []
    for k in range(first, first + sets):
        claims = [dataclasses.replace(c, parsed=dict(c.parsed, seed0=c.parsed["seed0"] + 10**6 * k)) for c in base]
        for c in claims:
            t0 = time.time()
            r0 = runner.run_claim(c, cache=cache)
            row = {
                "set": k,
                "claim": c.id,
                "holds_unshifted": r0.verdict == "holds",
                "z": r0.zscore,
                "mde_rel": r0.mde_rel,
                "seconds": round(time.time() - t0, 1),
            }
            se, lim, dof = z_parts(r0.computed, r0.claimed, c.tolerance)
            ref = abs(float(r0.claimed.value))
            row["predicted_power"] = power(shift * ref, se, lim, dof)
            for sign in (+1, -1):
                saved = {n: getattr(checks_simulation, n) for n in ("e_nonlinear", "_per_seed")}
                try:
                    for n, fn in _shifted(1 + sign * shift).items():
                        setattr(checks_simulation, n, fn)
                    r = runner.run_claim(c, cache=cache)
                finally:
                    for n, fn in saved.items():
                        setattr(checks_simulation, n, fn)
                row[f"caught_{'+' if sign > 0 else '-'}"] = r.verdict == "mismatch"
            rows.append(row)
            progress(
                f"set {k}: {c.id}: holds unshifted {row['holds_unshifted']} (z = {r0.zscore:+.2f}, "
                f"MDE {100 * (r0.mde_rel or 0):.2f} %), caught +{shift:g}: {row['caught_+']}, "
                f"-{shift:g}: {row['caught_-']}, predicted power {row['predicted_power']:.3f} "
                f"[{row['seconds']} s]"
            )
    n = 2 * len(rows)
    caught = sum(r["caught_+"] + r["caught_-"] for r in rows)
    return {
        "shift": shift,
        "sets": sets,
        "claims": list(CLAIMS),
        "rows": rows,
        "detection_rate": caught / n,
        "detected": caught,
        "shifted_runs": n,
        "false_alarms": sum(not r["holds_unshifted"] for r in rows),
        "mean_predicted_power": sum(r["predicted_power"] for r in rows) / len(rows),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=5, help="fresh seed sets (default 5)")
    ap.add_argument(
        "--first-set",
        type=int,
        default=0,
        help="index of the first seed set (0: the shipped seeds); to split the sets over processes",
    )
    ap.add_argument("--shift", type=float, default=0.02, help="relative shift of the theory (default 0.02)")
    ap.add_argument("--cache", default=None, help="folder for simulated seeds (resumable)")
    ap.add_argument("--json", default=None, help="write the rows and rates here")
    args = ap.parse_args(argv)
    if args.sets < 1 or args.first_set < 0 or not 0 < args.shift < 1:
        print("bench_planted_shift: --sets must be >= 1 and --shift in (0, 1)", file=sys.stderr)
        return 2
    with threadpool_limits(1):
        out = run(args.sets, args.shift, args.cache, lambda line: print(line, flush=True), args.first_set)
    print(
        f"detected {out['detected']}/{out['shifted_runs']} shifted runs ({100 * out['detection_rate']:.0f} %); "
        f"predicted mean power {out['mean_predicted_power']:.3f}; false alarms {out['false_alarms']}/"
        f"{len(out['rows'])}"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
