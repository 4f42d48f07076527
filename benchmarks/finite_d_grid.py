"""The grid of the finite-d theory benchmark, shared by finite_d_sims.py and finite_d_theory.py.

Isotropic tasks (C = I), Gaussian task law w ~ N(0, I) (the paper's setting), rho = 0.1,
ridgeless (lam = 0); alpha = 2 (alpha = 8 for the a1 = 0 teacher, as in docs/finite-size.md);
tau on both sides of the interpolation peak (0.5 and 3); kappa on both sides of 1 (0.5 and 2).
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE_DIR = ROOT / ".cache" / "finite-d-sims"
N_TEST = 1000  # Monte-Carlo test prompts per seed (the benchmark uses the exact functional e)
RHO = 0.1

TEACHERS = {"g": 2.0, "sin(g)": 2.0, "tanh(g)": 2.0, "(g^2-1)/sqrt(2)": 8.0}  # teacher -> alpha
GRID = [
    dict(f=f, alpha=alpha, kappa=kappa, tau=tau, rho=RHO)
    for f, alpha in TEACHERS.items()
    for kappa in (0.5, 2.0)
    for tau in (0.5, 3.0)
]


def setting_of(pt, d):
    """The cache key inputs of one grid point at dimension d."""
    return {
        "f": pt["f"],
        "d": int(d),
        "alpha": pt["alpha"],
        "kappa": pt["kappa"],
        "tau": pt["tau"],
        "rho": pt["rho"],
        "lam": 0.0,
        "tasks": "gaussian",
        "C_train": "identity",
        "C_test": "identity",
        "n_test": N_TEST,
        "exact": True,
    }


def pool(n0, mean0, se0, values):
    """Pooled (mean, SE, count) of a stored summary (n0 seeds 0..n0-1: mean0, SE se0 = sd/sqrt n0) and the
    per-seed values of further seeds n0, n0+1, ... (exact: the pooled sample variance, ddof = 1)."""
    import math

    vals = [float(v) for v in values]
    n1 = len(vals)
    if n1 == 0:
        return float(mean0), float(se0), int(n0)
    n = n0 + n1
    m1 = sum(vals) / n1
    ss1 = sum((v - m1) ** 2 for v in vals)
    ss0 = (se0 * se0 * n0) * (n0 - 1)  # (n0 - 1) * sample variance
    mean = (n0 * mean0 + n1 * m1) / n
    ss = ss0 + ss1 + n0 * n1 / n * (mean0 - m1) ** 2
    return float(mean), float(math.sqrt(ss / (n - 1) / n)), int(n)


def stored_rows(path):
    """The rows of a previous finite_d_theory.py output, keyed by (teacher, d, alpha, kappa, tau, rho)."""
    import json

    p = Path(path)
    if not p.exists():
        return {}
    return {
        (r["teacher"], r["d"], r["alpha"], r["kappa"], r["tau"], r["rho"]): r for r in json.loads(p.read_text())["rows"]
    }


def key_of(pt, d):
    return (pt["f"], int(d), pt["alpha"], pt["kappa"], pt["tau"], pt["rho"])
