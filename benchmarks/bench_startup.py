"""Start-up time of the package and of a command (to be kept at its level when the front end changes).

Measures, as the median of ``--repeat`` fresh interpreters (wall time):

* ``import icl_symbolic`` (the API names load lazily, so this stays cheap);
* ``import icl_symbolic.api`` (everything the API functions need);
* ``icl-symbolic simulate --help``: the command's start-up (imports its module, builds its parser;
  no computation), run as ``python -m icl_symbolic``;
* ``icl-symbolic simulate g --d 32 --seeds 1 --n-test 100 --quiet``: start-up plus a small run.

``--src DIR`` measures the package found in DIR (e.g. an exported older commit) instead of the
installed one.  Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_startup.py [--repeat 7] [--src DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CASES = {
    "import icl_symbolic": ["-c", "import icl_symbolic"],
    "import icl_symbolic.api": ["-c", "import icl_symbolic.api"],
    "simulate --help": ["-m", "icl_symbolic", "simulate", "--help"],
    "simulate g --d 32 (1 seed)": [
        "-m",
        "icl_symbolic",
        "simulate",
        "g",
        "--d",
        "32",
        "--seeds",
        "1",
        "--n-test",
        "100",
        "--quiet",
    ],
}


def timed(argv, env) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *argv], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--src", default=None, help="folder holding the icl_symbolic package to measure")
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
    if args.src:
        env["PYTHONPATH"] = os.path.abspath(args.src)
    for name, argv in CASES.items():
        times = [timed(argv, env) for _ in range(args.repeat)]
        print(
            f"{name:<30} median {statistics.median(times):.3f} s  (min {min(times):.3f}, "
            f"max {max(times):.3f}, n = {args.repeat})"
        )


if __name__ == "__main__":
    main()
