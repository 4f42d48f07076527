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

``--calibrate`` measures the constants of the cost model (``icl_symbolic.core.cost.SECONDS_PER``:
seconds per unit of work of each kind: exact kink integrals, theory grid points, Monte-Carlo
prompt entries, simulation draws and flops) on small instances, wall clock with one BLAS
thread, and prints the table to paste into core/cost.py.

``--announce`` runs each of the long commands (``tests/_long_commands.py``, the one
list) as a subprocess and reports when it printed its estimate line or its refusal (killed
then; the work itself is not waited for): the record in docs/benchmarks.md.
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


def _wall(fn):
    t0 = time.monotonic()
    fn()
    return time.monotonic() - t0


def calibrate() -> dict:
    """Seconds per unit of work of each kind, measured on small instances (wall clock)."""
    import numpy as np

    from icl_symbolic.engine.expr import teacher as parse
    from icl_symbolic.engine.gauss import exact_work
    from icl_symbolic.engine.hermite import hermite_coeffs
    from icl_symbolic.model.moments import mc_moments
    from icl_symbolic.simulation import simulator as S
    from icl_symbolic.theory.asymptotic import curve

    out = {}
    # exact path with kinks: 40 terms abs(g - k/37) minus 2 terms (the fixed part), per unit of work
    big, small = ("+".join(f"abs(g - {k}/37)" for k in range(1, n + 1)) for n in (40, 2))
    hermite_coeffs(small, rho="0.2")  # warm-up: first calls, caches
    t_small = _wall(lambda: hermite_coeffs(small, rho="0.1"))
    t_big = _wall(lambda: hermite_coeffs(big, rho="0.1"))
    w_big, w_small = (exact_work(parse(x).expr, 8) for x in (big, small))
    out["exact_unit"] = (t_big - t_small) / (w_big - w_small)
    # theory: 20 000 points of the identity curve; 200 points of powerlaw:1 at d = 400
    tau = np.linspace(0.1, 4, 200)
    n = 100 * tau.size
    t = _wall(lambda: curve(a1=0.6, rho_nonlinear=0.13, rho=0.1, alpha=np.linspace(0.5, 4, 100), tau=tau))
    out["theory_point"] = t / n
    t = _wall(lambda: curve(None, "powerlaw:1", None, rho=0.1, alpha=2.0, tau=tau, d=400))
    out["theory_point_eig"] = max(t / tau.size - out["theory_point"], 0.0) / 400
    # Monte Carlo: 2000 prompts of 200 x 200
    t = _wall(lambda: mc_moments("tanh(g)", 0.1, 200, 200, np.ones(200), 2000, 1))
    out["mc_entry"] = t / (2000 * 200 * 200)
    # simulation: per-seed time at three sizes, least squares for (fixed, per draw, per flop)
    rows, times = [], []
    for d, alpha in ((16, 2.0), (48, 2.0), (16, 400.0)):
        sz = S.sizes(d, alpha, 2.0, 2.0)
        _, flops, draws = S.seed_cost(sz)
        t = _wall(lambda d=d, alpha=alpha: S.simulate("tanh(g)", d, alpha, 2.0, 2.0, 0.1, seeds=[0]))
        rows.append([1.0, draws, flops])
        times.append(t)
    coef = np.linalg.lstsq(np.asarray(rows), np.asarray(times), rcond=None)[0]
    out["sim_seed"], out["sim_draw"], out["sim_flop"] = (max(float(c), 0.0) for c in coef)
    return out


def announce_report(limit: float) -> None:
    """docs/benchmarks.md: when each long command printed its estimate line or its refusal."""
    from _long_commands import LONG_COMMANDS, first_announcement

    for argv in LONG_COMMANDS:
        res = first_announcement(argv, limit)
        shown = " ".join(a if len(a) < 40 else a[:37] + "..." for a in argv)
        print(f"  {shown[:90]:92} {res.kind:9} after {res.seconds:5.1f} s: {res.line[:110]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--calibrate", action="store_true", help="measure cost.SECONDS_PER and print it")
    ap.add_argument("--announce", action="store_true", help="time to the estimate line of each long command")
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, load average {os.getloadavg()[0]:.1f}"
    )
    if args.calibrate:
        print("SECONDS_PER = {")
        for k, v in calibrate().items():
            print(f'    "{k}": {v:.2g},')
        print("}")
        return
    if args.announce:
        announce_report(args.timeout)
        return
    from test_injection import PAYLOADS

    corpus = [p for p in PAYLOADS if len(p.encode()) < 1024] + [h for h in HOSTILE if len(h.encode()) < 4096]
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
