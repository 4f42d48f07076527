"""The kernel learner's figures (docs/kernel.md): crossover against ell/D, and the finite-size gap against d.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/kernel_figures.py \
        --gap-json kernel_finite_size.json --out docs/

1. docs/kernel-crossover.png (+ .json): f = g + h_2(g), rho = 0.1, d = 6 (D = 27), k/D = 4, n/D^2 = 16;
   ell/D swept.  Kernel learner (hermite:2) and plain attention trained on the SAME ell, k, n
   (plain attention's own ratios are ell/d, k/d, n/d^2), 3 seeds each, with both predictions and
   the floors rho + a2^2 (plain, d -> infinity), rho + sum_{m>=3} a_m^2 (kernel, d -> infinity)
   and the finite-d kernel floor rho_eff.
2. docs/kernel-gap.png: the absolute gap of benchmarks/kernel_finite_size.py's JSON against D (log-log,
   with each variant's power law) and D x gap (flat for gap = c/D); the legend gives the seeds per point.

Runtime on the shared 2-core machine: about 5 minutes for the crossover simulations.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from icl_symbolic.theory.asymptotic import Ratios

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from icl_symbolic.kernel_learner import simulation as kernel_sim
from icl_symbolic.kernel_learner import theory as kernel
from icl_symbolic.output.io import save_figure, write_json  # noqa: E402
from icl_symbolic.output.plotting import kernel_crossover_figure, kernel_gap_figure  # noqa: E402
from icl_symbolic.simulation import simulator as simulation  # noqa: E402

F = "g + (g^2-1)/sqrt(2)"
RHO = 0.1


def crossover(
    out: Path, d=6, kappa=4.0, tau=16.0, alphas=(0.25, 0.5, 1, 2, 4, 8, 16, 32), seeds=(0, 1, 2), replot=False
):
    grid = np.geomspace(0.1, 64, 60)
    kc = kernel.kernel_curve(F, "hermite:2", Ratios(rho=RHO, alpha=grid, kappa=kappa, tau=tau), d=d)
    ks = kc.spectrum
    ksim, psim, rows = [], [], []
    if replot:  # the simulation points of an earlier run
        rows = json.loads((out / "kernel-crossover.json").read_text())["points"]
        ksim = [(r["alpha_D"], r["kernel_e"], r["kernel_se"]) for r in rows]
        psim = [(r["alpha_D"], r["plain_e"], r["plain_se"]) for r in rows]
        alphas = ()
    for a in alphas:
        r = kernel_sim.simulate_kernel(F, d, a, kappa, tau, RHO, seeds=seeds, n_test=2000, theory=False)
        p = simulation.simulate_many(
            [dict(f=F, d=d, alpha=r.ell / d, kappa=r.k / d, tau=r.n / d**2, rho=RHO, seeds=seeds, n_test=4000)]
        )[0]
        assert (p.ell, p.k, p.n) == (r.ell, r.k, r.n)
        ksim.append((a, float(r.e_query), r.e_query.stderr))
        psim.append((a, float(p.e), p.e.stderr))
        rows.append(
            {
                "alpha_D": a,
                "ell": r.ell,
                "k": r.k,
                "n": r.n,
                "kernel_e": float(r.e_query),
                "kernel_se": r.e_query.stderr,
                "plain_e": float(p.e),
                "plain_se": p.e.stderr,
            }
        )
        print(rows[-1], flush=True)
    plain_d = RHO + ks.moments.E_f2_float - float(ks.moments.B[1, 1])
    floors = [
        (RHO + 1.0, "plain floor rho + a2^2 = 1.1 (d -> infinity)", ("grey", "--")),
        (plain_d, f"plain floor at d = {d}, Gaussian tasks: rho + a2^2 (1 + 3/d) = {plain_d:.4g}", ("grey", ":")),
        (RHO, "kernel floor rho + sum_{m>=3} a_m^2 = 0.1 (d -> infinity)", ("green", "--")),
        (ks.rho_eff, f"kernel floor at d = {d}: rho_eff = rho + a2^2/d = {ks.rho_eff:.4g}", ("green", ":")),
    ]
    title = (
        f"f = g + h2(g), rho = {RHO}, d = {d} (D = {ks.D}), k/D = {kappa:g}, n/D^2 = {tau:g}; "
        f"same ell, k, n for both learners; Gaussian tasks"
    )
    save_figure(kernel_crossover_figure(kc, ksim, psim, floors, title), out / "kernel-crossover.png")
    write_json(
        out / "kernel-crossover.json",
        {
            "teacher": F,
            "rho": RHO,
            "d": d,
            "D": ks.D,
            "kappa_D": kappa,
            "tau_D": tau,
            "seeds": list(seeds),
            "points": rows,
        },
    )


def gap(out: Path, gap_json: Path):
    doc = json.loads(Path(gap_json).read_text())
    pt = doc["point"]
    title = (
        f"excess over the prediction, f = g + h2(g), rho = 0.1, ell/D = {pt['alpha']:g}, k/D = {pt['kappa']:g}, "
        f"n/D^2 = {pt['tau']:g}; SE over seeds"
    )
    save_figure(kernel_gap_figure(doc["rows"], doc["fits"], title), out / "kernel-gap.png")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="docs")
    ap.add_argument("--gap-json", default=None)
    ap.add_argument("--skip-crossover", action="store_true")
    ap.add_argument("--replot", action="store_true", help="re-plot the crossover from its JSON (no simulation)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if not args.skip_crossover:
        crossover(out, replot=args.replot)
    if args.gap_json:
        gap(out, Path(args.gap_json))


if __name__ == "__main__":
    main()
