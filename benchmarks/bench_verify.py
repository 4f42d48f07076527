"""Wall time of `icl-symbolic verify` (quick and --full), with the straightforward alternative.

What: the time of the default quick run over every shipped derivation in one
process, against the straightforward alternative of running each claim in a
fresh interpreter (``icl-symbolic verify --only ID`` per claim: no shared
Hermite results, no shared symbolic derivations, import cost paid per claim),
and the ratio.  With ``--full``, also the wall time of ``verify --full`` (the
simulation-backed claims; a few minutes on the 2-core machine).  The slowest
claims are listed from the run's own per-claim timings.

Why: the issue asks that quick mode finishes in a few minutes on 2 cores and
that both wall times be recorded (docs/benchmarks.md).

Run:  python benchmarks/bench_verify.py [--full] [--per-claim-sample N]

The per-claim alternative is run on a sample of N claims (default 12, spread
over the files) and extrapolated to all claims; the report says so.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run_inprocess(full: bool):
    from icl_symbolic.verification import runner as C

    t0 = time.perf_counter()
    results, summary = C.verify(full=full)
    return time.perf_counter() - t0, results, summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="also time verify --full")
    ap.add_argument("--per-claim-sample", type=int, default=12)
    args = ap.parse_args()

    print(f"machine: {os.cpu_count()} CPUs; python {sys.version.split()[0]}", flush=True)
    t_cli0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "icl_symbolic", "verify", "--quiet"], cwd=ROOT, capture_output=True, text=True
    )
    t_cli = time.perf_counter() - t_cli0
    print(
        f"icl-symbolic verify (quick, one process, incl. start-up): {t_cli:.1f} s, exit {proc.returncode}; "
        f"{proc.stdout.strip().splitlines()[-1]}",
        flush=True,
    )

    t_in, results, summary = run_inprocess(full=False)
    run = [r for r in results if r.verdict != "skipped"]
    print(
        f"in-process quick run: {t_in:.1f} s over {len(run)} claims ({sum(r.elapsed for r in run):.1f} s inside claims)"
    )
    slow = sorted(run, key=lambda r: -r.elapsed)[:5]
    print("slowest claims: " + ", ".join(f"{r.claim.id} {r.elapsed:.2f} s" for r in slow))

    # straightforward alternative: one fresh process per claim (sampled, extrapolated)
    ids = [r.claim.id for r in run]
    step = max(1, len(ids) // max(1, args.per_claim_sample))
    sample = ids[::step][: args.per_claim_sample]
    t0 = time.perf_counter()
    for cid in sample:
        p = subprocess.run(
            [sys.executable, "-m", "icl_symbolic", "verify", "--quiet", "--only", cid],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            print(f"  warning: {cid} exited {p.returncode}")
    t_sample = time.perf_counter() - t0
    t_alt = t_sample / len(sample) * len(ids)
    print(
        f"alternative, one process per claim: {t_sample:.1f} s for {len(sample)} claims -> "
        f"{t_alt:.1f} s extrapolated to {len(ids)}; ratio alternative/one-run = {t_alt / t_cli:.1f}x"
    )

    if args.full:
        t_full0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "icl_symbolic", "verify", "--full", "--quiet"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        t_full = time.perf_counter() - t_full0
        print(
            f"icl-symbolic verify --full: {t_full:.1f} s, exit {proc.returncode}; "
            f"{proc.stdout.strip().splitlines()[-1]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
