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

``--calibrate-sim`` measures only the simulation constants (twelve shapes, nonnegative least
squares, each shape's fit printed) and the kernel learner's feature-map constants.
``--check-estimates`` runs a few commands with every estimate printed and compares the estimate
with the run (docs/limits.md, "Announced work").

``--announce`` runs each of the long commands (``tests/_long_commands.py``, the one
list) as a subprocess and reports when it printed its estimate line or its refusal (killed
then; the work itself is not waited for): the record in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp_proc
import os
import platform
import sys
import time

from icl_symbolic.model.moments import MonteCarlo
from icl_symbolic.theory.asymptotic import Ratios, TaskCovariances

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
    t = _wall(lambda: curve(None, Ratios(rho=0.1, alpha=np.linspace(0.5, 4, 100), tau=tau), a1=0.6, rho_nonlinear=0.13))
    out["theory_point"] = t / n
    t = _wall(
        lambda: curve(
            None, Ratios(rho=0.1, alpha=2.0, tau=tau), TaskCovariances(C_train="powerlaw:1", C_test=None, d=400)
        )
    )
    out["theory_point_eig"] = max(t / tau.size - out["theory_point"], 0.0) / 400
    # kernel learner: 2000 points of hermite:2 at d = 16 (after one point: the spectrum, cached)
    from icl_symbolic.api.kernel_learner import kernel

    kernel("tanh(g)", tau=[2.0])
    t = _wall(lambda: kernel("tanh(g)", tau=np.linspace(0.1, 4, 50), alpha=np.linspace(0.5, 4, 40)))
    out["kernel_point"] = t / 2000
    # a covariance matrix's eigendecomposition, per d^3 (d = 2000)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2000, 2000))
    a = a + a.T
    out["cov_eigh"] = _wall(lambda: np.linalg.eigh(a)) / 2000**3
    # Monte Carlo: 2000 prompts of 200 x 200
    t = _wall(lambda: mc_moments("tanh(g)", 0.1, 200, 200, np.ones(200), MonteCarlo(2000, 1)))
    out["mc_entry"] = t / (2000 * 200 * 200)
    # simulation: per-seed time over the shapes the claims run (d 16-128; alpha 2-400; the three solvers),
    # nonnegative least squares for (fixed, per draw, per flop); a warm-up run first (first-call tables)
    out.update(calibrate_simulation())
    out.update(calibrate_features())
    return out


#: (d, alpha, kappa, tau) of the simulation calibration: the full and deep tiers' shapes (d 16-128)
SIM_SHAPES = (
    (16, 2.0, 2.0, 2.0),
    (32, 2.0, 2.0, 2.0),
    (48, 2.0, 2.0, 2.0),
    (64, 2.0, 2.0, 4.0),
    (96, 2.0, 2.0, 2.0),
    (128, 2.0, 2.0, 2.0),
    (32, 2.0, 2.0, 0.5),
    (48, 2.0, 2.0, 0.5),
    (16, 40.0, 0.5, 20.0),
    (32, 20.0, 0.5, 10.0),
    (32, 40.0, 2.0, 20.0),
    (24, 400.0, 2.0, 2.0),
)


def _fit_relative(X, y):
    """Nonnegative least squares of ``y`` on the columns of ``X``, weighted by 1/|y| so that each
    row counts by its relative error (the calibrations below)."""
    from scipy.optimize import nnls

    w = 1.0 / abs(y)
    return nnls(X * w[:, None], y * w)[0]


def calibrate_simulation(seeds=(1, 2), verbose: bool = True) -> dict:
    """``sim_seed``, ``sim_draw``, ``sim_flop`` of cost.SECONDS_PER: each shape of SIM_SHAPES simulated
    for ``seeds`` (tanh, rho = 0.1, the exact functional, solver auto) after one warm-up run; the
    per-seed wall time fitted by nonnegative least squares on (1, draws, flops) of
    simulator.seed_cost, weighted by 1/time (relative errors).  Prints each shape's measured and
    fitted time when ``verbose``."""
    import numpy as np

    from icl_symbolic.simulation import simulator as S

    S.simulate_many([dict(f="tanh(g)", d=16, alpha=2.0, kappa=2.0, tau=2.0, rho=0.1, seeds=[0])])[0]  # warm-up
    rows, times = [], []
    for d, alpha, kappa, tau in SIM_SHAPES:
        sz = S.sizes(d, alpha, kappa, tau)
        _, flops, draws = S.seed_cost(sz)
        t = _wall(
            lambda: S.simulate_many(
                [dict(f="tanh(g)", d=d, alpha=alpha, kappa=kappa, tau=tau, rho=0.1, seeds=list(seeds))]
            )[0]
        ) / len(seeds)
        rows.append([1.0, draws, flops])
        times.append(t)
    X, y = np.asarray(rows), np.asarray(times)
    coef = _fit_relative(X, y)
    if verbose:
        fit = X @ coef
        for shape, t, f in zip(SIM_SHAPES, y, fit):
            print(f"  # d, alpha, kappa, tau = {shape}: {t:.3f} s/seed measured, {f:.3f} fitted ({f / t:.2f}x)")
    return dict(zip(("sim_seed", "sim_draw", "sim_flop"), (float(c) for c in coef)))


#: d of the kernel learner's calibration (hermite:2 features, alpha 16, kappa 2, tau 4: its claims' shape)
FEATURE_DS = (4, 6, 8, 10)


def calibrate_features(seeds=(1, 2), n_test: int = 4000, verbose: bool = True) -> dict:
    """``sim_feature_seed``, ``sim_feature_entry`` of cost.SECONDS_PER: the kernel learner's seconds per
    seed on top of simulator.seed_cost in its feature dimension D (a fixed part, and one per feature
    entry computed, (n + n_test) ell D), fitted by nonnegative least squares (relative errors) over
    FEATURE_DS after one warm-up run."""
    import numpy as np

    from icl_symbolic.api.simulation import simulate
    from icl_symbolic.kernel_learner.simulation import feature_entries
    from icl_symbolic.simulation import simulator as S

    kw = dict(alpha=16.0, kappa=2.0, tau=4.0, features="hermite:2", n_test=n_test)
    simulate("tanh(g)", d=4, seeds=[0], **kw)  # warm-up
    rows, times = [], []
    for d in FEATURE_DS:
        D = math.comb(d + 2, 2) - 1
        sz = S.sizes(D, 16.0, 2.0, 4.0)
        t = _wall(lambda: simulate("tanh(g)", d=d, seeds=list(seeds), **kw)) / len(seeds)
        rows.append([1.0, feature_entries(sz, n_test)])
        times.append(t - S.seed_cost(sz, "auto", n_test)[0])
    X, y = np.asarray(rows), np.asarray(times)
    coef = _fit_relative(X, y)
    if verbose:
        for d, t, f in zip(FEATURE_DS, y, X @ coef):
            print(f"  # kernel learner, d = {d}: {t:.3f} s/seed over seed_cost, {f:.3f} fitted ({f / t:.2f}x)")
    return dict(zip(("sim_feature_seed", "sim_feature_entry"), (float(c) for c in coef)))


def announce_report(limit: float) -> None:
    """docs/benchmarks.md: when each long command printed its estimate line or its refusal."""
    from _long_commands import LONG_COMMANDS, first_announcement

    for argv in LONG_COMMANDS:
        res = first_announcement(argv, limit)
        shown = " ".join(a if len(a) < 40 else a[:37] + "..." for a in argv)
        print(f"  {shown[:90]:92} {res.kind:9} after {res.seconds:5.1f} s: {res.line[:110]}")


#: commands whose estimate is compared with the run (--check-estimates): the simulation cost model's
#: shapes from small to large, the kernel learner, a ladder and a few simulation claims of verify
ESTIMATE_CHECKS = (
    ["simulate", "tanh(g)", "--d", "8", "--seeds", "4"],
    ["simulate", "tanh(g)", "--d", "64", "--seeds", "2"],
    ["simulate", "tanh(g)", "--d", "96", "--seeds", "1"],
    ["simulate", "tanh(g)", "--d", "32", "--alpha", "40", "--kappa", "0.5", "--tau", "20", "--seeds", "2"],
    ["simulate", "tanh(g)", "--features", "hermite:2", "--d", "8", "--seeds", "2"],
    ["simulate", "tanh(g)", "--features", "hermite:2", "--d", "12", "--seeds", "2"],
    ["extrapolate", "tanh(g)", "--d", "8,16", "--seeds", "2"],
    ["extrapolate", "tanh(g)", "--features", "hermite:2", "--d", "6,8", "--seeds", "2"],
    ["figure", "a1zero", "--quick", "--seeds", "2"],
    ["verify", "--full", "--only", "fig2.sim_alpha20_kappa2"],
)


def check_estimates(commands=ESTIMATE_CHECKS) -> list:
    """Each command run in this process with every estimate printed (``cost.ANNOUNCE_SECONDS = 0``):
    its first estimate line against the wall time of the whole command (the estimate covers the
    announced work; the command adds its start-up).  Returns (argv, estimated seconds, actual)."""
    import contextlib
    import io
    import re
    import tempfile

    from icl_symbolic.cli import main as cli_main
    from icl_symbolic.core import cost

    unit = {"d": 86400.0, "h": 3600.0, "min": 60.0, "s": 1.0, "ms": 1e-3}
    rows = []
    cost.ANNOUNCE_SECONDS = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for argv in commands:
            err = io.StringIO()
            extra = ["--out", os.path.join(tmp, "fig")] if argv[0] == "figure" else []
            t0 = time.monotonic()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                cli_main([*argv, *extra])
            actual = time.monotonic() - t0
            line = next((ln for ln in err.getvalue().splitlines() if ": estimated " in ln), "")
            m = re.search(r": estimated ((?:[0-9.]+ (?:d|h|min|s|ms) ?)+)", line)
            est = None
            if m:
                parts = re.findall(r"([0-9.]+) (d|h|min|s|ms)", m.group(1))
                est = sum(float(v) * unit[u] for v, u in parts)
            rows.append((argv, est, actual))
            shown = " ".join(argv)
            est_txt = "-" if est is None else f"{est:8.1f} s"
            ratio = "" if not est else f"{est / actual:5.2f}x"
            print(f"  {shown[:88]:90} estimate {est_txt:>10}  actual {actual:8.1f} s  {ratio}", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--calibrate", action="store_true", help="measure cost.SECONDS_PER and print it")
    ap.add_argument("--calibrate-sim", action="store_true", help="only the simulation constants (sim_*)")
    ap.add_argument("--announce", action="store_true", help="time to the estimate line of each long command")
    ap.add_argument("--check-estimates", action="store_true", help="estimate against the actual run, a few commands")
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, load average {os.getloadavg()[0]:.1f}"
    )
    if args.calibrate or args.calibrate_sim:
        print("SECONDS_PER = {")
        sim = {**calibrate_simulation(), **calibrate_features()} if args.calibrate_sim else None
        for k, v in (calibrate() if args.calibrate else sim).items():
            print(f'    "{k}": {v:.2g},')
        print("}")
        return
    if args.announce:
        announce_report(args.timeout)
        return
    if args.check_estimates:
        check_estimates()
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
