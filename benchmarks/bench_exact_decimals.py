"""Cost of proving the decimals of closed forms (``core.values.certified_decimal``) and of the
normalised task-norm rule (``engine.omega_rule``).

``Value.from_exact`` now evaluates a closed form at two working precisions (digits + 10 and twice
that) and keeps the result only when they agree to digits + 2 digits; this measures the time per
call for a few typical forms (exp(-1/2), asin near 1, erf) at 30 digits, and the time of
``e_gamma_isotropic`` at d = 256 .. 4096 (the rule is an eigen-decomposition of an n x n
tridiagonal matrix, independent of d).

    OMP_NUM_THREADS=1 nice -n 5 python benchmarks/bench_exact_decimals.py
"""

from __future__ import annotations

import time

import numpy as np
import sympy

from icl_symbolic.core.values import Value
from icl_symbolic.model.gamma_error import e_gamma_isotropic


def main() -> None:
    a = sympy.Integer(10) ** 15
    forms = {
        "exp(-1/2)": sympy.exp(-sympy.Rational(1, 2)),
        "asin near 1 (erf(g/1e-15) E[f^2])": 2 * sympy.asin(2 * a**2 / (1 + 2 * a**2)) / sympy.pi,
        "sqrt(2)/3 + erf(1/3)": sympy.sqrt(2) / 3 + sympy.erf(sympy.Rational(1, 3)),
    }
    print("| closed form | ms per Value.from_exact (30 digits) |\n|---|---|")
    for name, e in forms.items():
        reps = 200
        t = time.perf_counter()
        for _ in range(reps):
            Value.from_exact(e, digits=30)
        print(f"| {name} | {(time.perf_counter() - t) / reps * 1e3:.2f} |")
    print("\n| d | e_gamma_isotropic seconds | value |\n|---|---|---|")
    rng = np.random.default_rng(1)
    for d in (256, 512, 1024, 4096):
        A = 0.7 * np.eye(d) + 0.3 * rng.standard_normal((d, d)) / np.sqrt(d)
        t = time.perf_counter()
        v = e_gamma_isotropic(A, None, "sin(g)", 0.1, d, d // 2)
        print(f"| {d} | {time.perf_counter() - t:.2f} | {float(v):.12g} |")


if __name__ == "__main__":
    main()
