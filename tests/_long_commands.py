"""The long commands that once ran silently ("bounded work is announced"), in one place.

Each ran for more than 30 s without a word before; each must now, within a few seconds,
either exit 2 with one refusal line or print its estimate line on stderr
(``... estimated 2 min 10 s (...); progress below ...``, :meth:`icl_symbolic.core.cost.Estimate.line`).
Used by ``tests/test_limits_announce.py`` and ``benchmarks/bench_limits.py --announce``
(docs/benchmarks.md, "Limits"; the estimate-against-run table in docs/limits.md).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

KINKS_70 = "+".join(f"abs(g - {k}/37)" for k in range(1, 71))
#: the shipped example table of ``reproduce`` (docs/reproduce.md), and where killed figures would go
_DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")
_TMP = os.path.join(tempfile.gettempdir(), "icl-symbolic-announce")
REPRODUCE = [
    "reproduce",
    os.path.join(_DOCS, "reproduce-example.csv"),
    *("--f", "(g^2-1)/sqrt(2)", "--alpha", "2", "--tau", "8", "--rho", "0.1", "--convention", "letey2024"),
    *("--columns", "d=d,kappa=kappa,mean=icl_mean,spread=icl_std,runs=runs", "--seeds-per-row", "400"),
]

#: argv after ``icl-symbolic``; the comment says what the command does now
LONG_COMMANDS = [
    ["coeffs", KINKS_70],  # exact path, 70 kinks: estimate, then progress
    ["coeffs", "He(200, g)*tanh(g)"],  # He_200 times a non-polynomial: quadrature estimate
    ["coeffs", "tanh(g)", "--digits", "1000"],  # the largest allowed --digits: quadrature estimate
    ["theory", "tanh(g)", "--digits", "200", "--tau", "2"],  # the largest allowed theory --digits
    ["theory", "tanh(g)", "--tau", "0.1:4:1000", "--alpha", "0.5:4:1000"],  # 1e6 points, the documented cap
    ["theory", "tanh(g)", "--tau", "0.1:4:1001", "--alpha", "0.5:4:1000"],  # past the cap: refused
    ["moments", "tanh(g)", "--d", "1000", "--ell", "1000", "--mc", "1000000"],  # mc ell d = 1e12, the cap
    ["moments", "tanh(g)", "--d", "1000", "--ell", "1000", "--mc", "1000001"],  # past the cap: refused
    ["simulate", "tanh(g)", "--seeds", "10000"],  # the largest allowed --seeds: estimate, ETA per seed
    ["simulate", "tanh(g)", "--d", "64", "--alpha", "1e6", "--seeds", "1"],  # 2.5 GiB: memory, then time
    ["simulate", "tanh(g)", "--features", "hermite:2", "--d", "16", "--seeds", "50"],  # kernel learner, ETA per seed
    ["extrapolate", "tanh(g)", "--seeds", "20"],  # the default ladder: estimate, ETA per (d, seed)
    ["extrapolate", "tanh(g)", "--features", "hermite:2", "--d", "8,10,12", "--seeds", "20"],  # kernel ladder
    ["figure", "1", "--out", os.path.join(_TMP, "fig1")],  # paper-size figures: estimate of all points
    ["figure", "2", "--out", os.path.join(_TMP, "fig2")],
    ["figure", "a1zero", "--out", os.path.join(_TMP, "fig_a1zero")],
    REPRODUCE,  # one simulation per table row: estimate of all rows
    ["verify", "--full"],  # sum of the simulation claims' cost (schedule.claim_cost)
    ["verify", "--tier", "deep"],  # past the ceiling: refused without --max-seconds
    ["theory", "sin(g)", "--order", "1", "--d", "100000", "--tau", "2"],  # finite-d: refused past the ceiling
    ["theory", "sin(g)", "--order", "1", "--d", "64", "--alpha", "1e9", "--tau", "2"],
    ["kernel", "tanh(g)", "--tau", "0.1:4:1000", "--alpha", "0.5:4:1000"],  # 1e6 points: estimate, ETA
    ["coeffs", "sin(" * 64 + "g" + ")" * 64],  # at the nesting limit: quadrature estimate
]

#: a fast subset for the default test run (each reaches its line in ~2-7 s of start-up)
FAST = [LONG_COMMANDS[i] for i in (4, 7, 8, 11, 17)]

ESTIMATE = re.compile(r": estimated [0-9][^()]* \([^)]*\); progress below")


@dataclass
class Announcement:
    kind: str  # "estimate", "refused", "exited" (finished), "silent" (nothing by the limit)
    seconds: float
    line: str
    returncode: int | None
    stderr: str


def first_announcement(argv, limit: float = 30.0, program=None) -> Announcement:
    """Run ``icl-symbolic argv`` (or ``program``) and stop it at its estimate line (or when it
    exits, or at ``limit``)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    t0 = time.monotonic()
    p = subprocess.Popen(
        [*(program or [sys.executable, "-m", "icl_symbolic"]), *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    lines, found = [], threading.Event()
    hit = {}

    def read():
        for line in p.stderr:
            lines.append(line)
            if "estimate" not in hit and ESTIMATE.search(line):
                hit["estimate"] = (time.monotonic() - t0, line.rstrip("\n"))
                found.set()
        found.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    found.wait(limit)
    seconds = time.monotonic() - t0
    if "estimate" not in hit:
        reader.join(0.5)  # stderr closed: the process is exiting
    try:
        rc = p.wait(2) if not reader.is_alive() else p.poll()
    except subprocess.TimeoutExpired:
        rc = None
    if rc is None:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    reader.join(5)
    err = "".join(lines)
    if "estimate" in hit:
        return Announcement("estimate", hit["estimate"][0], hit["estimate"][1], rc, err)
    if rc is not None:
        kind = "refused" if rc == 2 else "exited"
        return Announcement(kind, seconds, err.strip().splitlines()[-1] if err.strip() else "", rc, err)
    return Announcement("silent", seconds, "", None, err)
