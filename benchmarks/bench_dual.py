"""Timing and accuracy of the certified dual kernels against their peers, in ONE run (docs/dual-kernels.md).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_dual.py \
        [--n 1000] [--depth 5] [--skip-plain] [--baseline-src DIR] [--out dual-bench.md]

"cold" cases run each in a fresh subprocess (imports excluded from the time).  ``--baseline-src DIR``
(a checkout of an earlier commit, e.g. ``git worktree add /tmp/base <commit>``) runs the same cold
cases with ``PYTHONPATH=DIR`` as well, so before and after are measured in one run on the same load;
each subprocess reports the path it imported the package from, and the run stops if it is not DIR.

Writes a Markdown table (stdout, and --out) with, side by side:

1. k_tanh(rho) = E[tanh(u) tanh(v)], unit variances, 20 certified digits, at every rho of RHOS:
   the route, the certified bound, the time in a fresh process (cold: coefficient passes and
   moment quadratures included) and in one process after the others (warm: cached passes);
2. peers at the same rho: a plain mpmath 2-D quadrature (``mpmath.quad`` over R^2 at 20 digits,
   no error bound) and a plain Gauss-Hermite tensor rule in float64 with 25 nodes per axis (the
   default rule of neural-tangents' numerical elementwise kernel), each with its actual error
   against the certified value;
3. the depth-L tanh NNGP/NTK Gram of n random inputs on the sphere (sigma_w^2 = 1, sigma_b^2 = 0
   and sigma_w^2 = 2, sigma_b^2 = 0.1): cold/warm time and certified max errors; the Gauss-Hermite
   peer on the Gram of the first --nt-n inputs with its actual max error against ours (whose bound
   is far below it).

neural-tangents itself is run through ``--nt-python PATH`` (the interpreter of a separate throwaway
environment; never a dependency of the package): k_tanh(0.5) and the same Gram on the first
--nt-n inputs with its actual errors against ours, or its exact import error.  neural-tangents
0.6.5 runs with jax 0.4.30, jaxlib 0.4.30 and tf2jax 0.3.6 (with today's jax 0.10.2 it fails to
import: ``cannot import name 'Jaxpr' from 'jax.core'``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from fractions import Fraction

import mpmath
import numpy as np

RHOS = (
    "-1",
    "-0.99",
    "-0.9",
    "-0.5",
    "0",
    "0.3",
    "0.5",
    "0.7",
    "0.9",
    "0.95",
    "0.97",
    "0.98",
    "0.99",
    "0.995",
    "0.999",
    "1",
)
PLAIN_RHOS = ("0.5", "0.99")
GH_DEG = 25

_COLD = """
import json, sys, time
import icl_symbolic
from icl_symbolic.engine.dual import dual_map
t = time.perf_counter()
p = dual_map("tanh(g)", 1, 1, sys.argv[1], digits=20, derivative=False)
s = time.perf_counter() - t
print(json.dumps({"s": s, "value": p.nngp.to_str(20), "src": icl_symbolic.__file__}))
"""

_COLD_GRAM = """
import json, sys, time
import numpy as np
import icl_symbolic
from icl_symbolic.engine.dual_deep import deep_gram
n, depth, sw, sb = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
X = np.random.default_rng(0).standard_normal((n, 50))
t = time.perf_counter()
G = deep_gram("tanh(g)", X, depth, sigma_w2=sw, sigma_b2=sb)
s = time.perf_counter() - t
print(json.dumps({"s": s, "value": [G.nngp_err, G.ntk_err], "src": icl_symbolic.__file__}))
"""


def _cold(script: str, argv, src: str | None = None) -> dict:
    """One case in a fresh interpreter: {"s": seconds, "value": ..., "src": the package's path}.
    With ``src`` the package is imported from that checkout (PYTHONPATH, run outside the repo)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.path.abspath(src)
    out = subprocess.run(
        [sys.executable, "-c", script, *map(str, argv)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=os.path.abspath(src) if src else None,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if src and not os.path.abspath(got["src"]).startswith(os.path.abspath(src)):
        raise SystemExit(f"the baseline run imported {got['src']}, not the checkout {src}")
    return got


def gauss_hermite_kernel(rho: np.ndarray, deg: int = GH_DEG, fn=np.tanh) -> np.ndarray:
    """E[f(u) f(v)] at unit variances by a deg x deg Gauss-Hermite tensor rule in float64 (the
    rule neural-tangents' numerical kernel uses): u = x, v = rho x + sqrt(1 - rho^2) z."""
    x, w = np.polynomial.hermite_e.hermegauss(deg)
    w = w / np.sqrt(2 * np.pi)
    rho = np.asarray(rho, dtype=float)
    s = np.sqrt(np.clip(1 - rho**2, 0, None))
    out = np.zeros_like(rho)
    for xi, wi in zip(x, w):
        inner = np.zeros_like(rho)
        for zj, wj in zip(x, w):
            inner += wj * fn(rho * xi + s * zj)
        out += wi * fn(xi) * inner
    return out


def gauss_hermite_deep(R: np.ndarray, depth: int, sw: float, sb: float, deg: int = GH_DEG):
    """The depth-L tanh NNGP/NTK Gram by the Gauss-Hermite rule per layer (float64, no bound)."""
    K = sw * R + sb
    Th = K.copy()
    for _ in range(depth):
        q = float(K[0, 0])
        rho = np.clip(K / q, -1, 1)
        sq = np.sqrt(q)
        kf = _gh_scaled(rho, sq, deg, np.tanh)
        kd = _gh_scaled(rho, sq, deg, lambda t: 1 - np.tanh(t) ** 2)
        K, Th = sw * kf + sb, sw * kf + sb + sw * kd * Th
    return K, Th


def _gh_scaled(rho, sq, deg, fn):
    return gauss_hermite_kernel(rho, deg, lambda t: fn(sq * t))


def _plain_quad(rho: str):
    r = mpmath.mpf(rho)
    s = mpmath.sqrt(1 - r * r)
    t = time.perf_counter()
    with mpmath.workdps(20):
        v = mpmath.quad(
            lambda x, z: (
                mpmath.tanh(x) * mpmath.tanh(r * x + s * z) * mpmath.exp(-(x * x + z * z) / 2) / (2 * mpmath.pi)
            ),
            [-mpmath.inf, 0, mpmath.inf],
            [-mpmath.inf, 0, mpmath.inf],
        )
    return v, time.perf_counter() - t


_NT = """
import sys, time
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from neural_tangents import stax
sw, sb, depth, path = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
layers = [stax.Dense(1, W_std=sw ** 0.5, b_std=sb ** 0.5 if sb else None)]
for _ in range(depth):
    layers += [stax.ElementwiseNumerical(jnp.tanh, deg=25), stax.Dense(1, W_std=sw ** 0.5, b_std=sb ** 0.5 if sb else None)]
_, _, kf = stax.serial(*layers)
_, _, k1 = stax.serial(stax.Dense(1), stax.ElementwiseNumerical(jnp.tanh, deg=25))
x = jnp.array([[1.0, 0.0], [0.5, 0.75 ** 0.5]]) * 2 ** 0.5
t = time.perf_counter(); k = float(k1(x, None, "nngp")[0, 1]); t1 = time.perf_counter() - t
X = jnp.asarray(np.load(path + ".X.npy"))
t = time.perf_counter(); g = kf(X, None, ("nngp", "ntk")); nngp = np.asarray(g.nngp); ntk = np.asarray(g.ntk)
t2 = time.perf_counter() - t
np.save(path + ".K.npy", nngp); np.save(path + ".T.npy", ntk)
print(k, t1, t2)
"""


def _nt_run(python: str, Xs: np.ndarray, sw, sb, depth: int):
    """neural-tangents in its own environment: (k_tanh(0.5), seconds, Gram NNGP, NTK, seconds) or
    the exact error line when it does not run."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "nt")
        np.save(path + ".X.npy", Xs)
        r = subprocess.run(
            [python, "-c", _NT, str(float(sw)), str(float(Fraction(str(sb)))), str(depth), path],
            capture_output=True,
            text=True,
        )
        if r.returncode:
            return "does not run: " + r.stderr.strip().splitlines()[-1]
        k, t1, t2 = (float(v) for v in r.stdout.split()[-3:])
        return k, t1, np.load(path + ".K.npy"), np.load(path + ".T.npy"), t2


def _nt_lines(args, X, dual_map, deep_gram) -> list:
    """neural-tangents' numerical kernel (25 Gauss-Hermite nodes, float64) on the first nt_n inputs
    (on the sphere, as ours), its actual errors against the certified values."""
    n = min(args.nt_n, X.shape[0])
    Xs = np.sqrt(X.shape[1]) * X[:n] / np.linalg.norm(X[:n], axis=1)[:, None]
    out = ["", f"neural-tangents 0.6.5 (ElementwiseNumerical, deg=25, float64; {args.nt_python}):", ""]
    ref = mpmath.mpf(dual_map("tanh(g)", 1, 1, "0.5", digits=20, derivative=False).nngp.value)
    for sw, sb in ((1, 0), (2, "1/10")):
        got = _nt_run(args.nt_python, Xs, sw, sb, args.depth)
        if isinstance(got, str):
            return out + [got]
        k, t1, K, T, t2 = got
        G = deep_gram("tanh(g)", X[:n], args.depth, sigma_w2=sw, sigma_b2=sb)
        out.append(
            f"* k_tanh(0.5): {k!r} in {t1:.2f} s, error {mpmath.nstr(abs(k - ref), 2)}; depth-{args.depth} Gram "
            f"{n} x {n} (sigma_w^2 = {sw}, sigma_b^2 = {sb}) in {t2:.2f} s, actual max error NNGP "
            f"{np.max(np.abs(K - G.nngp)):.1e}, NTK {np.max(np.abs(T - G.ntk)):.1e} (ours certified "
            f"{G.nngp_err:.1e}, {G.ntk_err:.1e})"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--skip-plain", action="store_true")
    ap.add_argument("--nt-python", default=None)
    ap.add_argument("--nt-n", type=int, default=400)
    ap.add_argument("--out", default=None)
    ap.add_argument("--baseline-src", default=None, help="a checkout of an earlier commit: its cold times too")
    args = ap.parse_args()
    from icl_symbolic.engine.dual import dual_map
    from icl_symbolic.engine.dual_deep import deep_gram

    lines = [
        f"cpus={os.cpu_count()} OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} load={os.getloadavg()[0]:.1f}",
        "",
        "| rho | k_tanh(rho), 20 certified digits | route | bound | cold s | cold s, baseline | in order s |"
        " Gauss-Hermite 25x25 error | plain mpmath.quad 2-D: error, s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rho in RHOS:
        got = _cold(_COLD, [rho])
        cold = got["s"]
        base = _cold(_COLD, [rho], args.baseline_src) if args.baseline_src else None
        if base is not None and base["value"] != got["value"]:
            raise SystemExit(f"rho = {rho}: the baseline prints {base['value']}, this tree {got['value']}")
        t = time.perf_counter()
        p = dual_map("tanh(g)", 1, 1, rho, digits=20, derivative=False)
        warm = time.perf_counter() - t
        val = mpmath.mpf(p.nngp.value)
        gh = abs(float(gauss_hermite_kernel(np.array(float(rho)))) - val)
        plain = ""
        if rho in PLAIN_RHOS and not args.skip_plain:
            v, dt = _plain_quad(rho)
            plain = f"{mpmath.nstr(abs(v - val), 2)}, {dt:.1f}"
        lines.append(
            f"| {rho} | {p.nngp.to_str(20)} | {p.routes[0]} | {mpmath.nstr(p.nngp.abs_err, 2)} | {cold:.2f} |"
            f" {'' if base is None else format(base['s'], '.2f')} | {warm:.2f} | {mpmath.nstr(gh, 2)} | {plain} |"
        )
        print(lines[-1], flush=True)
    lines += [
        "",
        "| Gram (tanh, depth, n x n) | sigma_w^2, sigma_b^2 | cold s | cold s, baseline | warm s |"
        " certified max err NNGP, NTK | Gauss-Hermite 25x25 on the first inputs: s, actual max err NNGP, NTK |",
        "|---|---|---|---|---|---|---|",
    ]
    X = np.random.default_rng(0).standard_normal((args.n, 50))
    U = X / np.linalg.norm(X, axis=1)[:, None]
    R = np.clip(U @ U.T, -1, 1)
    np.fill_diagonal(R, 1)
    for sw, sb in ((1, 0), (2, "1/10")):
        cold = _cold(_COLD_GRAM, [args.n, args.depth, sw, sb])
        base = _cold(_COLD_GRAM, [args.n, args.depth, sw, sb], args.baseline_src) if args.baseline_src else None
        times = []
        for _ in ("first call in this process", "warm"):
            t = time.perf_counter()
            G = deep_gram("tanh(g)", X, args.depth, sigma_w2=sw, sigma_b2=sb)
            times.append(time.perf_counter() - t)
        if cold["value"] != [G.nngp_err, G.ntk_err]:
            raise SystemExit(f"the fresh process certifies {cold['value']}, this one {[G.nngp_err, G.ntk_err]}")
        m = min(args.nt_n, args.n)  # the peer on the first m inputs (its cost is m^2 x 625 tanh per map)
        t = time.perf_counter()
        Kg, Tg = gauss_hermite_deep(R[:m, :m], args.depth, float(sw), float(Fraction(str(sb))))
        tg = time.perf_counter() - t
        eK, eT = float(np.max(np.abs(Kg - G.nngp[:m, :m]))), float(np.max(np.abs(Tg - G.ntk[:m, :m])))
        lines.append(
            f"| depth {args.depth}, {args.n} x {args.n} | {sw}, {sb} | {cold['s']:.2f} |"
            f" {'' if base is None else format(base['s'], '.2f')} | {times[1]:.2f} |"
            f" {G.nngp_err:.1e}, {G.ntk_err:.1e} | {m} x {m}: {tg:.1f}, {eK:.1e}, {eT:.1e} |"
        )
        print(lines[-1], flush=True)
    if args.nt_python:
        lines += _nt_lines(args, X, dual_map, deep_gram)
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
