"""Benchmark: exact Lemma 1 moments and exact e(Gamma) vs Monte Carlo, side by side.

What: (1) the exact conditional moments for f = tanh at d = 64, ell = 128
(omega = 1, rho = 0.1) at 30 digits, next to a Monte-Carlo estimate from
sampled prompts (the straightforward alternative) and the standard error it
reaches; (2) the ICL test error e(Gamma) of one d = 64 Gamma = [A, b] for
isotropic test tasks: exact (Gauss-Laguerre over omega, cold and warm cache),
exact-per-task Monte Carlo over tasks, and the plain Monte-Carlo test error on
fresh prompts, with the standard error reached and the time the prompt Monte
Carlo would need to reach 1e-4 (extrapolated as SE^2 ~ 1/n).

Run:  python benchmarks/bench_moments.py      (about 1 minute on 2 cores)
"""

from __future__ import annotations

import platform
import time

import numpy as np


def timed(fn, *a, **k):
    t = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t


def main():
    from icl_symbolic.model import gamma_error as E
    from icl_symbolic.model import moments as M

    print(
        f"machine: {platform.machine()}, {platform.system()}, python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    d, ell, rho, f = 64, 128, "0.1", "tanh(g)"

    print("\n(1) Lemma 1 moments, tanh, d = 64, ell = 128, omega = 1, rho = 0.1")
    ex, t_ex = timed(M.conditional_moments, f, rho, d, ell, omega=1, digits=30)
    print(
        f"  exact (mpmath, 30 digits):            {t_ex:8.3f} s   "
        f"max abs_err {max(float(v.abs_err) for v in ex.coefficients().values()):.1e}"
    )
    w = np.ones(d)
    for n in (2_000, 10_000):
        mc, t_mc = timed(M.mc_moments, f, 0.1, d, ell, w, n, np.random.default_rng(20261160))
        worst = max(mc[k].stderr / abs(float(getattr(ex, k))) for k in mc)
        n_needed = n * (worst / 1e-4) ** 2
        print(
            f"  Monte Carlo, n = {n:6d} prompts:       {t_mc:8.3f} s   worst relative SE {worst:.1e}  "
            f"(ratio MC/exact time {t_mc / t_ex:.1f}; relative SE 1e-4 would need n ~ {n_needed:.2g}, "
            f"~{t_mc * n_needed / n:.2g} s = {t_mc * n_needed / n / t_ex:.2g} x exact)"
        )

    print("\n(2) e(Gamma), d = 64 Gamma, ell = 128, tanh, rho = 0.1, test tasks w ~ N(0, I)")
    rng = np.random.default_rng(20261161)
    A = 0.5 * np.eye(d) + 0.05 * rng.standard_normal((d, d)) / np.sqrt(d)
    b = 0.05 * rng.standard_normal(d) / np.sqrt(d)
    E._functionals_at.cache_clear()
    iso, t_cold = timed(E.e_gamma_isotropic, A, b, f, 0.1, d, ell)
    iso2, t_warm = timed(E.e_gamma_isotropic, A * 1.01, b, f, 0.1, d, ell)
    print(f"  exact isotropic (cold cache):         {t_cold:8.4f} s   e = {float(iso):.10f} +- {iso.abs_err:.1e}")
    print(f"  exact isotropic (warm, new Gamma):    {t_warm:8.4f} s")
    wv = rng.standard_normal(d)
    gw, t_gw = timed(E.e_gamma_given_w, A, b, f, "0.1", wv, ell, digits=30)
    print(f"  exact given one w (30 digits):        {t_gw:8.4f} s   abs_err {float(gw.abs_err):.1e}")
    tk, t_tk = timed(E.e_gamma_mc_tasks, A, b, f, 0.1, ell, "identity", 20_000, 20261162)
    print(
        f"  MC over 20000 tasks (exact per task): {t_tk:8.4f} s   e = {float(tk):.6f} +- {tk.stderr:.1e} "
        f"(z vs exact {(float(tk) - float(iso)) / tk.stderr:+.2f})"
    )
    for n in (5_000, 20_000):
        mc, t_mc = timed(E.e_gamma_mc_prompts, A, b, f, 0.1, ell, n, 20261163)
        n_needed = n * (mc.stderr / 1e-4) ** 2
        print(
            f"  MC test error, n = {n:6d} prompts:    {t_mc:8.3f} s   e = {float(mc):.6f} +- {mc.stderr:.1e} "
            f"(z vs exact {(float(mc) - float(iso)) / mc.stderr:+.2f}); "
            f"SE 1e-4 would need n ~ {n_needed:.2g}, ~{t_mc * n_needed / n:.3g} s "
            f"= {t_mc * n_needed / n / t_warm:.2g} x the warm exact time"
        )


if __name__ == "__main__":
    main()
