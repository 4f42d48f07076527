"""Regenerate the example tables of `icl-symbolic reproduce` (docs/reproduce.md) from our own simulator.

    OMP_NUM_THREADS=1 python benchmarks/make_reproduce_example.py

Writes ``docs/reproduce-example.csv`` (the a1 = 0 teacher (g^2-1)/sqrt(2), alpha = 2,
tau = 8, rho = 0.1, d = 24 and 32, kappa = 0.5 and 1, ICL error as the exact test
functional, mean and per-run std over 100 runs with seeds 10^6 .. 10^6 + 99, under the
``letey2024`` convention), ``docs/reproduce-example-slipped.csv`` (the same runs with
one planted convention slip: Gaussian test tasks replaced by tasks on the sphere,
``letey2024+test_tasks=sphere``) and ``docs/reproduce-example.json`` (the provenance:
package version, settings, seeds, conventions, this command).  No third-party data.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

from icl_symbolic import __version__
from icl_symbolic.simulation.simulator import resolve_convention
from icl_symbolic.studies.reproduce import EXAMPLE, EXAMPLE_COLUMNS, EXAMPLE_DS, EXAMPLE_KAPPAS, example_table

DOCS = Path(__file__).resolve().parent.parent / "docs"
SEEDS = tuple(range(10**6, 10**6 + 100))
PLANTED = {"test_tasks": "sphere"}


def main() -> int:
    t0 = time.monotonic()
    conv = resolve_convention("letey2024")
    slipped = resolve_convention(conv, **PLANTED)
    (DOCS / "reproduce-example.csv").write_text(example_table(conv, SEEDS))
    (DOCS / "reproduce-example-slipped.csv").write_text(example_table(slipped, SEEDS))
    prov = {
        "what": "example tables for `icl-symbolic reproduce` (docs/reproduce.md), made by icl-symbolic's own simulator",
        "generator": "python benchmarks/make_reproduce_example.py (icl_symbolic.studies.reproduce.example_table)",
        "package_version": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "settings": {
            **EXAMPLE,
            "d": list(EXAMPLE_DS),
            "kappa": list(EXAMPLE_KAPPAS),
            "n_test": 100,
            "quantity": "ICL error, exact test functional of each trained Gamma",
        },
        "columns": EXAMPLE_COLUMNS,
        "spread": "std (per-run sample standard deviation, ddof 1) over `runs` runs",
        "seeds": [SEEDS[0], SEEDS[-1]],
        "tables": {
            "reproduce-example.csv": {"convention": conv.to_json()},
            "reproduce-example-slipped.csv": {
                "convention": slipped.to_json(),
                "planted_slip": "test_tasks: gaussian -> sphere",
            },
        },
        "seconds": round(time.monotonic() - t0, 1),
    }
    (DOCS / "reproduce-example.json").write_text(json.dumps(prov, indent=1) + "\n")
    print(f"wrote docs/reproduce-example*.csv/json in {prov['seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
