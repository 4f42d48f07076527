"""Check kind ``se_calibration``: the standard errors every statistical verdict divides by are
calibrated (derivations/16_calibration.toml).

The simulation claims of Figs. 1-2 (p. 4) and of the finite-d theory judge an offset in
standard errors: the SE of a mean over seeds, and the delete-a-group jackknife SE of a
ladder's extrapolation in 1/d.  This kind simulates a small pool of per-seed errors (Sec. 2,
Eqs. (6)-(7), p. 2-3) at a few tiny d, draws many replicate ladders from it and compares the
mean of the reported SE^2 with the exact variance of the statistic
(:func:`icl_symbolic.studies.calibration.se_calibration`, where the design is explained).
The computed value is that calibration ratio with its Monte-Carlo SE, the claimed value 1;
the detail states the probability that SEs 20 % too small or too large are flagged.
"""

from __future__ import annotations

import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.stats import t_limit
from icl_symbolic.core.values import Value
from icl_symbolic.studies.calibration import WHICH, power_for_scale, se_calibration
from icl_symbolic.verification.checks.common import claim_setting, setting_params
from icl_symbolic.verification.checks.simulation import per_seed_errors
from icl_symbolic.verification.registry import Outcome, Param, check_kind, param_text

#: the SE errors whose detection probability the detail states (a factor on every SE)
SCALES = (0.8, 1.2)


@check_kind(
    "se_calibration",
    params={
        **setting_params(("d_list", Param("int_list", True, doc="the tiny dimensions of the pool"))),
        "se": Param("str", True, doc="which SE: " + " or ".join(WHICH), choices=WHICH),
        "pool": Param("int", True, doc="simulated seeds per d (seed0, seed0 + 1, ...): the population drawn from"),
        "counts": Param(
            "int_list", True, doc="seeds per d of one replicate (ladder_jackknife: multiples of the smallest)"
        ),
        "replicates": Param("int", True, doc="replicate ladders drawn from the pool (with replacement)"),
        "draw_seed": Param("int", True, doc="seed of the replicate draws"),
        "seed0": Param("int", False, 20261007, "first simulated seed"),
        "n_test": Param("int", False, 200, "test prompts per seed (the exact test functional is used)"),
    },
    needs=(("simulation.simulator", "simulated training"),),
    needs_attrs={"simulation.simulator": ("simulate",)},
    reports_progress=True,
)
def check_se_calibration(claim, progress=None) -> Outcome:
    """Mean of SE^2 / exact variance over replicate ladders drawn from a simulated pool, vs 1.

    Tolerance: a ``z`` budget on the Monte-Carlo SE of the mean ratio (the replicates are
    i.i.d. given the pool, so the ratio's SE is s/sqrt(R) and the reference is exact).
    """
    p = claim.parsed
    if len(p["counts"]) != len(p["d_list"]):
        raise ICLError(f"counts has {len(p['counts'])} entries for {len(p['d_list'])} dimensions")
    seeds = [p["seed0"] + i for i in range(p["pool"])]
    f = param_text(claim.params["f"])
    pool = {d: per_seed_errors(claim_setting(claim, d=d, n_test=p["n_test"]), seeds, progress) for d in p["d_list"]}
    cal = se_calibration(pool, p["counts"], p["se"], p["replicates"], p["draw_seed"])
    limit = t_limit(claim.tolerance.value, None)
    powers = ", ".join(f"SE x{c:g}: {power_for_scale(c, cal.ratio_se, limit):.4f}" for c in SCALES)
    what = (
        "mean over d of SE_d^2 / (sigma_d^2/n_d), SE_d = s/sqrt(n_d) (core.stats.seed_mean_se)"
        if p["se"] == "seed_mean"
        else f"jackknife SE^2 / exact variance of the extrapolation sum_d c_d mean_d "
        f"(core.stats.grouped_jackknife_se, {cal.groups} groups; exact variance {cal.truth[0]:.4g})"
    )
    ds = sorted(p["d_list"])
    detail = (
        f"{what}: {cal.ratio:.4f} +- {cal.ratio_se:.2g} over {cal.replicates} replicates "
        f"(seeds per d {'/'.join(map(str, cal.counts))}, drawn with replacement from {p['pool']} simulated seeds "
        f"at d = {ds}, {f}, alpha = {p['alpha']:g}, kappa = {p['kappa']:g}, tau = {p['tau']:g}); "
        f"probability that SEs off by a factor are flagged at |z| > {limit:.3g}: {powers}"
    )
    computed = Value(
        cal.ratio,
        "mc",
        stderr=cal.ratio_se,
        n_samples=cal.replicates,
        seeds=(p["draw_seed"],),
        note=f"Monte Carlo over {cal.replicates} replicate ladders drawn from simulated seeds {seeds[0]}..{seeds[-1]}",
    )
    claimed = Value.from_exact(sympy.Integer(1), note="a calibrated SE: E[SE^2] equals the statistic's variance")
    return Outcome(computed=computed, claimed=claimed, detail=detail)


KINDS = (check_se_calibration.kind,)
