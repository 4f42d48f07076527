"""False-alarm rate and power of the SE-calibration claims (derivations/16_calibration.toml).

Each claim draws R replicate ladders from a simulated pool and compares the mean of
SE^2 / exact variance with 1 at |z| <= 3.29 (icl_symbolic.studies.calibration).  This
script reruns that test with M different draw seeds on the claims' own pool:

* false alarms: the fraction of |z| above 1.96, 2.576 and 3.29 (nominal 5 %, 1 %, 0.1 %),
  with its binomial SE, the mean and sd of z and a Kolmogorov-Smirnov p-value against N(0, 1);
* power: every SE planted ``c`` times its value (c = 0.7, 0.8, 1.2) multiplies the ratio
  and its SE by c^2, so the planted z of each run is (c^2 r - 1) / (c^2 s) on the same
  draws; the fraction flagged at 3.29 against studies.calibration.power_for_scale.

Run:  OMP_NUM_THREADS=1 python benchmarks/se_calibration.py [--runs 300]
      (about 0.5 s per run on one core; writes benchmarks/results/se_calibration.json)
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy import stats as sps

from icl_symbolic.studies.calibration import power_for_scale, se_calibration
from icl_symbolic.verification.checks.common import claim_setting
from icl_symbolic.verification.checks.simulation import per_seed_errors
from icl_symbolic.verification.claimfile import load_file

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = ROOT / "derivations" / "16_calibration.toml"
OUT = ROOT / "benchmarks" / "results" / "se_calibration.json"
LIMITS = (1.959964, 2.575829, 3.290527)
SCALES = (0.7, 0.8, 1.2)


def pool_of(claim) -> dict:
    p = claim.parsed
    seeds = [p["seed0"] + i for i in range(p["pool"])]
    return {d: per_seed_errors(claim_setting(claim, d=d, n_test=p["n_test"]), seeds) for d in p["d_list"]}


def study(claim, runs: int) -> dict:
    p = claim.parsed
    pool = pool_of(claim)
    r = np.empty(runs)
    s = np.empty(runs)
    for i in range(runs):
        c = se_calibration(pool, p["counts"], p["se"], p["replicates"], p["draw_seed"] + 1000 + i)
        r[i], s[i] = c.ratio, c.ratio_se
    z = (r - 1) / s
    out = {
        "claim": claim.id,
        "runs": runs,
        "replicates": p["replicates"],
        "z_mean": float(z.mean()),
        "z_sd": float(z.std(ddof=1)),
        "ks_p_normal": float(sps.kstest(z, "norm").pvalue),
        "false_alarm": {},
        "power_at_3.29": {},
        "ratio_se_median": float(np.median(s)),
    }
    for lim in LIMITS:
        frac = float(np.mean(np.abs(z) > lim))
        out["false_alarm"][f"{lim:.3f}"] = {
            "nominal": float(2 * sps.norm.sf(lim)),
            "measured": frac,
            "binomial_se": float(np.sqrt(max(frac, 1 / runs) * (1 - frac) / runs)),
        }
    for c in SCALES:
        zc = (c**2 * r - 1) / (c**2 * s)
        out["power_at_3.29"][f"x{c:g}"] = {
            "measured": float(np.mean(np.abs(zc) > LIMITS[2])),
            "predicted": power_for_scale(c, float(np.median(s)), LIMITS[2]),
        }
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300, help="repetitions of each claim's test (draw seeds)")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    t0 = time.time()
    res = [study(c, a.runs) for c in load_file(CLAIMS)]
    for r in res:
        print(
            f"{r['claim']}: {r['runs']} runs of {r['replicates']} replicates; z mean {r['z_mean']:+.3f}, sd {r['z_sd']:.3f}, KS p {r['ks_p_normal']:.2f}"
        )
        for lim, fa in r["false_alarm"].items():
            print(f"  |z| > {lim}: {fa['measured']:.4f} +- {fa['binomial_se']:.4f} (nominal {fa['nominal']:.4f})")
        for c, pw in r["power_at_3.29"].items():
            print(f"  SE {c}: flagged {pw['measured']:.4f} (predicted {pw['predicted']:.4f})")
    print(f"{time.time() - t0:.0f} s")
    Path(a.out).write_text(json.dumps({"results": res, "seconds": round(time.time() - t0, 1)}, indent=2) + "\n")


if __name__ == "__main__":
    main()
