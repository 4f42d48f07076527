"""Check kind ``setup``: the model of Sec. 2, Eqs. (1), (3)-(7), p. 2-3, as the simulator implements it.

``ridge_normalisation``  Eq. (6): the structured solver of :mod:`icl_symbolic.simulation.simulator`
                         (Kronecker Gram / kernel form, never the n x d(d+1) feature
                         matrix) against the explicit features ``h = vec(x_test [u^T, s])``
                         and ``((n/d) lam I + H^T H)^{-1} H^T y`` by NumPy; a wrong
                         regulariser (``lam`` instead of ``(n/d) lam``) is shown to differ.
``parameter_count``      Eq. (5): Gamma = [A, b] has d(d+1) entries and no intercept: the
                         trained predictor is exactly 0 at x_test = 0 and linear in x_test.
``peak_position``        the finite-d ridgeless interpolation peak sits at n = d(d+1), i.e.
                         tau = (d+1)/d, not at tau = 1: simulated errors on a grid of n
                         around d^2 and d(d+1), same seeds.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import mde_abs, sample_se, t_limit
from icl_symbolic.model.setting import Setting
from icl_symbolic.simulation.simulator import fit_gamma, predict, simulate, sizes
from icl_symbolic.verification.registry import Outcome, Param, check_kind

PARTS = ("ridge_normalisation", "parameter_count", "peak_position")


def _explicit_ridge(X, V, y, lam):
    n, d = X.shape
    H = np.einsum("ni,na->nia", X, V).reshape(n, -1)  # row-major vec: h[i (d+1) + a] = x_i v_a
    G = H.T @ H + (n / d) * lam * np.eye(H.shape[1])
    return np.linalg.solve(G, H.T @ y).reshape(d, d + 1)


@check_kind(
    "setup",
    params={
        "part": Param("str", True, doc="ridge_normalisation | parameter_count | peak_position", choices=PARTS),
        "d": Param("int", False, 6, "dimension"),
        "n": Param("int", False, 60, "prompts for ridge_normalisation"),
        "lam": Param("number", False, 0.3, "ridge lam for ridge_normalisation"),
        "n_seeds": Param("int", False, 6, "seeds for peak_position"),
        "seed0": Param("int", False, 20261007, "first seed"),
    },
    needs=(("simulation.simulator", "simulation"),),
    needs_attrs={"simulation.simulator": ("fit_gamma",)},
    reports_progress=True,
)
def check_setup(claim, progress=None) -> Outcome:
    """Sec. 2, Eqs. (1), (3)-(7), p. 2-3: Eq. (6)'s normalisation, d(d+1) parameters, the finite-d peak."""
    p = claim.parsed
    d, part = p["d"], p["part"]
    rng = np.random.default_rng(p["seed0"])
    if part == "ridge_normalisation":
        n = p["n"]
        X, V, y = rng.standard_normal((n, d)), rng.standard_normal((n, d + 1)), rng.standard_normal(n)
        ref = _explicit_ridge(X, V, y, p["lam"])
        bad = []
        for solver in ("gram", "kernel"):
            G, _ = fit_gamma(X, V, y, p["lam"], solver)
            err = float(np.max(np.abs(G - ref)) / np.max(np.abs(ref)))
            if err > 1e-8:
                bad.append(f"{solver} solver differs from the explicit ridge by {err:.2g} (relative)")
        wrong = _explicit_ridge(X, V, y, p["lam"] * d / n)  # regulariser lam instead of (n/d) lam
        sep = float(np.max(np.abs(wrong - ref)) / np.max(np.abs(ref)))
        if sep < 1e-3:
            bad.append(f"the wrong normalisation lam I is not distinguishable ({sep:.2g}); choose n != d")
        detail = (
            f"d = {d}, n = {n}, lam = {p['lam']}: gram and kernel solvers equal the explicit "
            f"((n/d) lam I + H^T H)^-1 H^T y to 1e-8 relative; the regulariser lam I instead would "
            f"change Gamma by {sep:.2g} (relative)"
        )
    elif part == "parameter_count":
        bad = []
        sz = sizes(d, 2, 2, 2)
        X, V, y = rng.standard_normal((sz.n, d)), rng.standard_normal((sz.n, d + 1)), rng.standard_normal(sz.n)
        G, _ = fit_gamma(X, V, y, 0.0)
        if G.size != d * (d + 1) or sz.p != d * (d + 1):
            bad.append(f"Gamma has {G.size} entries, sizes().p = {sz.p}, expected d(d+1) = {d * (d + 1)}")

        u, s = rng.standard_normal((5, d)), rng.standard_normal(5)
        x = rng.standard_normal((5, d))
        at0 = predict(G, SimpleNamespace(x_test=np.zeros((5, d)), u=u, s=s))
        lin = predict(G, SimpleNamespace(x_test=2 * x, u=u, s=s)) - 2 * predict(G, SimpleNamespace(x_test=x, u=u, s=s))
        if np.max(np.abs(at0)) != 0 or np.max(np.abs(lin)) > 1e-12:
            bad.append("the predictor is not linear in x_test without intercept")
        detail = (
            f"d = {d}: Gamma = [A, b] has d(d+1) = {d * (d + 1)} entries; y_hat(x_test = 0) = 0 exactly "
            f"and y_hat(2 x) = 2 y_hat(x) for the trained Gamma (no intercept)"
        )
    else:
        seeds = tuple(p["seed0"] + i for i in range(p["n_seeds"]))
        ns = [d * d - d, d * d, d * (d + 1), d * (d + 1) + d, d * (d + 1) + 2 * d]
        logs = []
        for n in ns:
            res = simulate(
                Setting("g", d=d, alpha=2, kappa=2, tau=n / d**2, rho=0.5, n_test=200), seeds, progress=progress
            )
            if sizes(d, 2, 2, n / d**2).n != n:
                raise ICLError(f"tau = {n / d**2} does not give n = {n} at d = {d}")
            logs.append(np.log([float((r.e if r.e is not None else r.e_mc).value) for r in res.runs]))
        logs = np.array(logs)  # (grid, seeds)
        i_peak = ns.index(d * (d + 1))
        mean = logs.mean(axis=1)
        others = [i for i in range(len(ns)) if i != i_peak]
        j = max(others, key=lambda i: mean[i])
        diff = logs[i_peak] - logs[j]
        z = float(diff.mean() / sample_se(diff))

        zq = t_limit(claim.tolerance.value, diff.size - 1)
        # the power of this separation test: the smallest true excess of the peak (as a factor on the
        # error) that it finds with probability 0.9 at its one-sided limit
        mde_log = mde_abs(float(sample_se(diff)), zq, diff.size - 1)
        mde = float(np.expm1(mde_log))
        bad = []
        if int(np.argmax(mean)) != i_peak:
            bad.append(f"the largest mean log-error is at n = {ns[int(np.argmax(mean))]}")
        if not z > zq:
            bad.append(f"the peak is not separated from n = {ns[j]} (z = {z:+.2f} <= {zq:.3g})")
        grid = ", ".join(f"n={n}: {np.exp(m):.3g}" for n, m in zip(ns, mean))
        detail = (
            f"d = {d}, linear teacher, rho = 0.5, {len(seeds)} seeds, geometric-mean errors {grid}; the "
            f"peak is at n = d(d+1) = {d * (d + 1)} (tau = (d+1)/d = {(d + 1) / d:.4g}), above the "
            f"next-highest n = {ns[j]} by a factor {np.exp(diff.mean()):.3g} (paired z = {z:+.2f}, "
            f"one-sided limit {zq:.3g})"
        )
    power = (
        {}
        if part != "peak_position"
        else {
            "mde_rel": mde,
            "mde_note": "separation: the smallest excess of the peak's error over the next-highest "
            "grid point (relative) that this paired test finds with probability 0.9",
        }
    )
    if not bad:
        return Outcome(detail=detail, holds=True, residual_expr="0", **power)
    return Outcome(detail=detail + "; fails: " + "; ".join(bad), holds=False, residual_expr="; ".join(bad), **power)


KINDS = (check_setup.kind,)
