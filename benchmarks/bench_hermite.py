"""Benchmarks for the Hermite engine, each side by side with the
straightforward alternative, in one run:

1. the whole ``--library`` table (a_0..a_8, 30 digits; target < 10 s) versus the
   straightforward route: one ``mpmath.quad`` per coefficient per teacher
   (orthonormal Hermite via ``mpmath.hermite`` rescaled to He_m) at 30 digits;
2. tanh a_0..a_20 at 50 digits (target < 2 s) versus 21 separate ``mpmath.quad``
   calls at 50 digits;
3. ``sympy.stats.E(Z*f(Z))`` for sin, exp, tanh (each in a subprocess with a
   time limit, so tanh cannot hang the run) versus ``hermite_coeffs(f, M=1).a1``,
   also in a fresh subprocess: both timed cold (no warm caches), after imports.

Run:  python benchmarks/bench_hermite.py [--timeout 60] [--skip-naive-library]
Takes about 2-4 minutes on the 2-core box (mostly the sympy.stats timeouts).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp_proc
import platform
import time

import mpmath


def _naive_coeff(f_mp, m, dps):
    """a_m = E[f h_m] by one mpmath.quad: He_m(x) = 2^(-m/2) H_m(x/sqrt 2)."""
    with mpmath.workdps(dps):
        c = mpmath.mpf(2) ** (-mpmath.mpf(m) / 2) / mpmath.sqrt(mpmath.factorial(m))

        def integrand(x):
            return f_mp(x) * c * mpmath.hermite(m, x / mpmath.sqrt(2)) * mpmath.npdf(x)

        return mpmath.quad(integrand, [-mpmath.inf, 0, mpmath.inf])


def bench_library(naive=True):
    from icl_symbolic.engine.expr import teacher
    from icl_symbolic.engine.library import LIBRARY, library_coeffs

    t0 = time.perf_counter()
    res = library_coeffs(M=8, rho="0.1", digits=30)
    ours = time.perf_counter() - t0
    methods = {name: r.method for name, r in res}
    row = {"ours_s": ours, "methods": methods}
    if naive:
        t0 = time.perf_counter()
        worst = 0
        for name, text in LIBRARY.items():
            T = teacher(text)
            ours_r = dict(res)[name]
            for m in range(9):
                v = _naive_coeff(T.mp, m, 30)
                worst = max(worst, float(abs(v - ours_r.a[m].value)))
        row["naive_s"] = time.perf_counter() - t0
        row["max_abs_diff"] = worst
    return row


def bench_tanh():
    from icl_symbolic.engine.hermite import hermite_coeffs

    t0 = time.perf_counter()
    r = hermite_coeffs("tanh(g)", M=20, digits=50)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    naive = [_naive_coeff(mpmath.tanh, m, 50) for m in range(21)]
    naive_s = time.perf_counter() - t0
    with mpmath.workdps(60):
        diff = max(abs(a - b.value) for a, b in zip(naive, r.a))
    return {
        "ours_s": ours,
        "naive_s": naive_s,
        "max_abs_diff": float(diff),
        "min_certified_digits": min(v.digits for v in r.a),
    }


def _sympy_stats_worker(name, q):
    import sympy
    from sympy.stats import E, Normal

    Z = Normal("Z", 0, 1)
    f = {"sin": sympy.sin, "exp": sympy.exp, "tanh": sympy.tanh}[name]
    t0 = time.perf_counter()
    val = E(Z * f(Z))
    dt = time.perf_counter() - t0
    try:
        num = complex(sympy.N(val, 15))
        is_number = val.is_number and not val.has(sympy.Integral)
    except (TypeError, ValueError):
        num, is_number = None, False
    q.put((dt, str(val)[:80], is_number, None if num is None else num.real))


def _ours_worker(name, q):
    from icl_symbolic.engine.hermite import hermite_coeffs

    t0 = time.perf_counter()
    r = hermite_coeffs(f"{name}(g)", M=1, digits=30)
    dt = time.perf_counter() - t0
    q.put((dt, r.a1.to_str(20), r.a1.method, str(r.a1.exact) if r.a1.method == "exact" else None))


def _ours_cold(name, ctx):
    """Ours in a fresh (spawned) process, after its imports: cold caches, like the sympy.stats call."""
    q = ctx.Queue()
    p = ctx.Process(target=_ours_worker, args=(name, q))
    t0 = time.perf_counter()
    p.start()
    p.join()
    wall = time.perf_counter() - t0
    return q.get(), wall


def bench_sympy_stats(timeout):
    rows = []
    ctx = mp_proc.get_context("spawn")
    for name in ("sin", "exp", "tanh"):
        q = ctx.Queue()
        p = ctx.Process(target=_sympy_stats_worker, args=(name, q))
        t0 = time.perf_counter()
        p.start()
        p.join(timeout)
        if p.is_alive():
            p.terminate()
            p.join()
            stats = (f"did not return within {timeout} s", None, False, None)
        else:
            stats = q.get() if not q.empty() else ("crashed", None, False, None)
        wall = time.perf_counter() - t0
        (ours, a1, method, exact), ours_wall = _ours_cold(name, ctx)
        rows.append(
            {
                "f": name,
                "sympy_stats_wall_s": wall,
                "sympy_stats": stats,
                "ours_s": ours,
                "ours_wall_s": ours_wall,
                "ours_a1": a1,
                "ours_method": method,
                "ours_exact": exact,
            }
        )
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per sympy.stats call")
    ap.add_argument("--skip-naive-library", action="store_true")
    ap.add_argument("--only-stats", action="store_true", help="run only section 3")
    args = ap.parse_args()
    print(
        f"machine: {platform.platform()}, {mp_proc.cpu_count()} cores, Python {platform.python_version()}, "
        f"mpmath backend {mpmath.libmp.BACKEND}"
    )

    if args.only_stats:
        return stats_section(args.timeout)
    lib = bench_library(naive=not args.skip_naive_library)
    print("\n## 1. --library table, a_0..a_8, 30 digits (target < 10 s)")
    print(f"ours: {lib['ours_s']:.2f} s   methods: {lib['methods']}")
    if "naive_s" in lib:
        print(
            f"one mpmath.quad per coefficient: {lib['naive_s']:.2f} s   ratio naive/ours = "
            f"{lib['naive_s'] / lib['ours_s']:.1f}   max |diff| = {lib['max_abs_diff']:.2e}"
        )

    tanh = bench_tanh()
    print("\n## 2. tanh a_0..a_20 at 50 digits (target < 2 s)")
    print(
        f"ours: {tanh['ours_s']:.2f} s (min certified digits {tanh['min_certified_digits']})   "
        f"21 x mpmath.quad: {tanh['naive_s']:.2f} s   ratio = {tanh['naive_s'] / tanh['ours_s']:.1f}   "
        f"max |diff| = {tanh['max_abs_diff']:.2e}"
    )

    stats_section(args.timeout)


def stats_section(timeout):
    print(
        f"\n## 3. sympy.stats.E(Z*f(Z)) vs ours (a1 = E[g f(g)]), time limit {timeout:.0f} s; both cold: "
        "each call in a fresh spawned process, timed after its imports"
    )
    print("| f | sympy.stats time | sympy.stats result | number? | ours time | ours a1 | how |")
    print("|---|---|---|---|---|---|---|")
    for r in bench_sympy_stats(timeout):
        st = r["sympy_stats"]
        t = st[0] if isinstance(st[0], str) else f"{st[0]:.2f} s"
        print(
            f"| {r['f']} | {t} (wall {r['sympy_stats_wall_s']:.1f} s) | {st[1]} | {st[2]} | "
            f"{r['ours_s']:.3f} s (wall {r['ours_wall_s']:.1f} s) | {r['ours_a1']} | {r['ours_method']}"
            f"{' = ' + r['ours_exact'] if r['ours_exact'] else ''} |"
        )


if __name__ == "__main__":
    main()
