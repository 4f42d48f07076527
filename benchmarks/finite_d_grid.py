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
