"""Worst-case parse + validation time over the hostile corpora, side by side with what
the same inputs cost without the size limits (a subprocess with a time limit).

The promise of docs/limits.md: no input of the grammar under 1 kB runs longer
than 30 s in parse and validation (``icl_symbolic.engine.expr.teacher``).  Corpora:
the injection payloads of tests/test_injection.py and the hostile expressions
of tests/test_audit_regressions.py.  For the expensive ones, the "without
limits" column runs the operation the limits exist to prevent (the full
``sympy.expand`` of the parsed expression, the old 50-digit mpmath kink scan)
in a subprocess killed after ``--timeout`` seconds.

Run:  python benchmarks/bench_limits.py [--timeout 60]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp_proc
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, ".."))

from icl_symbolic.core.errors import ICLError  # noqa: E402
from icl_symbolic.engine.expr import teacher  # noqa: E402

HOSTILE = {
    "He(20,He(20,g))": "expand",
    "(sin(g)+cos(g)+tanh(g)+erf(g)+exp(g))**64": "expand",
    "max(" + ",".join(f"sin({k}*g)" for k in range(1, 11)) + ")": "kinks",
    "+".join(f"abs(g-{k}/100)" for k in range(300)): None,  # exact kinks before too; its cost was the integral
    "sign(sin(1000*g))": "kinks",
}


def _unlimited(text, what):
    """The work the limits prevent: a full expand, or a 4801-point 50-digit mpmath kink scan."""
    import mpmath
    import sympy

    from icl_symbolic.engine import expr as E
    from icl_symbolic.engine.expr import _kink_arguments, g

    limits = (E.MAX_DEGREE, E.MAX_EXPAND_TERMS)
    E.MAX_DEGREE, E.MAX_EXPAND_TERMS = 10**9, 10**30
    try:
        e = E.parse_expr(text)
    finally:
        E.MAX_DEGREE, E.MAX_EXPAND_TERMS = limits
    if what == "expand":
        sympy.expand(e)
        return
    for u in _kink_arguments(e):
        f = sympy.lambdify(g, u, "mpmath")
        with mpmath.workdps(50):
            vals = [f(mpmath.mpf(-60) + 120 * mpmath.mpf(k) / 4800) for k in range(4801)]
            for a, b, k in zip(vals[:-1], vals[1:], range(4800)):
                if a * b < 0:
                    mpmath.findroot(
                        f,
                        (
                            mpmath.mpf(-60) + 120 * mpmath.mpf(k) / 4800,
                            mpmath.mpf(-60) + 120 * mpmath.mpf(k + 1) / 4800,
                        ),
                        solver="anderson",
                    )


def _timed_subprocess(text, what, timeout):
    p = mp_proc.Process(target=_unlimited, args=(text, what))
    t0 = time.monotonic()
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        return f"> {timeout:g} s (killed)"
    return f"{time.monotonic() - t0:.1f} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()
    from test_injection import PAYLOADS

    corpus = [p for p in PAYLOADS if len(p.encode()) < 1024] + [h for h in HOSTILE if len(h.encode()) < 4096]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"
    )
    times = []
    for text in corpus:
        t0 = time.monotonic()
        try:
            teacher(text)
            outcome = "accepted"
        except ICLError as exc:
            outcome = "refused: " + str(exc)[:70]
        times.append((time.monotonic() - t0, text, outcome))
    times.sort(reverse=True)
    print(f"{len(corpus)} inputs; worst parse+validation times (teacher()):")
    for dt, text, outcome in times[:6]:
        print(f"  {dt:7.2f} s  {text[:50]!r:54} {outcome}")
    print("\nwith the limits vs the work the limits prevent (subprocess, killed after --timeout):")
    for text, what in HOSTILE.items():
        t0 = time.monotonic()
        try:
            teacher(text)
        except ICLError:
            pass
        now = time.monotonic() - t0
        other = "-" if what is None else f"without ({what}): {_timed_subprocess(text, what, args.timeout)}"
        print(f"  {text[:44]!r:48} limits: {now:6.2f} s   {other}")


if __name__ == "__main__":
    main()
