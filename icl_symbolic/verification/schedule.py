"""Order and group claims for a parallel run (``verify --jobs N`` or a Dask cluster).

Two things decide the wall time of ``verify --full`` on a few workers:

* **Shared simulations.**  Several claims simulate the very same setting on the very
  same seeds (Result 1 at tau = 4 and both Fig. 1 ratios; the a1 = 0 teacher's two task
  laws and their difference).  A worker simulates each (setting, seed) once
  (``checks.simulation._SIM_CACHE``), but two workers that take two such claims at the
  same time both simulate it.  Claims whose simulations share a setting are therefore
  one work item, run one after the other in one worker.
* **Balance.**  Work items are handed to the workers in the order given.  The claims
  that simulate nothing come first, in claim order (they take seconds, and their
  verdicts are printed at once); the simulation items follow, sorted by an estimated
  cost, largest first (longest-processing-time-first, within 4/3 of the best possible
  makespan), so the last item to finish is a short one.

The cost is an estimate in seconds from the simulation sizes
(:func:`icl_symbolic.simulation.simulator.seed_cost`: the training solve of the solver ``auto``
would pick, the prompt sampling and the fixed part), summed over the claim's ladder and seeds; claims that simulate nothing
cost 0 and go last.  Only the order and the grouping change: every claim seeds its own
streams, so verdicts and numbers do not depend on the schedule (tested).
"""

from __future__ import annotations

from math import comb

from icl_symbolic.core.cost import Estimate
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.parallel import concurrent_runs
from icl_symbolic.kernel_learner.simulation import feature_seconds
from icl_symbolic.simulation.simulator import DEFAULT_N_TEST, seed_cost, sizes


def _feature_dim(d: int, features) -> int:
    """The learner's input dimension: d, or for ``hermite:K`` features the number of monomials
    of degree 1..K in d variables (the kernel learner's D)."""
    if not features or features == "identity":
        return d
    text = str(features)
    if text.startswith("hermite:"):
        k = int(text.split(":", 1)[1])
        return comb(d + k, k) - 1
    return d


def _sides(claim) -> list[tuple]:
    """What a claim simulates at each (d, seed): its own teacher on its task law, plus the other
    side of a relation (the linear-equivalent teacher, the other task law, a second teacher)."""
    p = claim.parsed
    tasks = str(p.get("tasks") or "gaussian")
    versus = p.get("versus")
    if versus == "other_law":
        return [("main", "gaussian"), ("main", "sphere")]
    if versus == "linear_equivalent":
        return [("main", tasks), ("linear_equivalent", tasks)]  # the scale multiplies, it is not simulated
    if versus not in (None, "", "theory"):
        return [("main", tasks), ("versus", str(claim.params.get("versus_f")), str(claim.params.get("versus_rho")))]
    return [("main", tasks)]


def sim_units(claim) -> dict:
    """The simulations a claim runs, one entry per (side, d, seed) with its estimated seconds
    (:func:`icl_symbolic.simulation.simulator.seed_cost`, what ``simulate`` announces for the same run).

    Claims of one work item (:func:`share_key`) that name the same unit simulate it once, so a
    work item costs the seconds of the union of its claims' units (:func:`group_cost`)."""
    p = claim.parsed
    if not all(k in p for k in ("alpha", "kappa", "tau")) or not ("d_list" in p or "d" in p):
        return {}
    ds = list(p["d_list"]) if p.get("d_list") else [p.get("d")]
    counts = p.get("n_seeds") or 1
    counts = counts if isinstance(counts, list) else [counts] * len(ds)
    seed0 = int(p.get("seed0", 0) or 0)
    key = share_key_of(claim)
    n_test = int(p.get("n_test") or DEFAULT_N_TEST)
    lam = float(p.get("lam", 0.0) or 0.0)
    units = {}
    for d, n_seeds in zip(ds, counts):
        if not isinstance(d, int) or d < 2:
            continue
        D = _feature_dim(d, p.get("features"))
        try:  # the kernel learner's ratios apply to its feature dimension D
            sz = sizes(D, float(p["alpha"]), float(p["kappa"]), float(p["tau"]))
            one = seed_cost(sz, "auto", n_test, lam)[0]
        except (ICLError, ValueError, TypeError):
            continue
        if D != d:  # the kernel learner also maps every context input to its D features
            one += feature_seconds(sz, n_test)
        one = one if one == one and one != float("inf") else 0.0
        for side in _sides(claim):
            for s in range(seed0, seed0 + int(n_seeds)):
                units[(key, side, d, s)] = one
    return units


def claim_cost(claim) -> float:
    """Estimated seconds of a claim's simulations run alone (0 for a claim that simulates nothing)."""
    return float(sum(sim_units(claim).values()))


def group_cost(claims) -> float:
    """Estimated seconds of a work item: each (side, d, seed) its claims share is simulated once."""
    units = {}
    for c in claims:
        units.update(sim_units(c))
    return float(sum(units.values()))


def marginal_costs(claims, indices) -> dict:
    """Per claim (position in ``claims``), the seconds of the simulations it adds to those of the claims
    before it in its work item: the ETA of a run counts each shared simulation once."""
    out = {}
    for group in schedule(claims, indices):
        seen: set = set()
        for i in group:
            units = sim_units(claims[i])
            out[i] = float(sum(v for k, v in units.items() if k not in seen))
            seen.update(units)
    return out


def run_estimate(claims, jobs: int = 1, scheduler: str | None = None, what: str = "verify") -> Estimate:
    """What the simulations of ``claims`` cost before the first one runs: the sum of
    :func:`claim_cost` (seconds of each seed run, :func:`icl_symbolic.simulation.simulator.seed_cost`:
    the solve, the context tokens drawn and the fixed part) over the simulation claims (tier ``full`` or
    ``deep``; the quick tier's checks take seconds, whatever sizes their claims name), divided by the
    work items that go on at once (claims sharing a simulation are one item, and a simulation they
    share is counted once: :func:`group_cost`).  Seeds already in a ``--cache`` folder are not
    subtracted: a resumed run is announced as if it started afresh."""
    claims = [c for c in claims if c.tier != "quick"]
    groups = schedule(claims, range(len(claims)))
    seconds = sum(group_cost([claims[i] for i in g]) for g in groups)
    units: set = set()
    for c in claims:
        units.update(sim_units(c))
    heavy = sum(1 for g in groups if any(claim_cost(claims[i]) > 0 for i in g))
    # one heavy work item lends its workers to its seeds (runner.run_claims, core.parallel.use_seed_jobs)
    at_once = concurrent_runs(jobs, jobs if heavy == 1 else max(heavy, 1), scheduler)
    sims = sum(1 for c in claims if claim_cost(c) > 0)
    what = f"{what}: {sims} simulation claim(s)" + (f" on {at_once} processes" if at_once > 1 else "")
    return Estimate(
        seconds / at_once,
        len(units),
        "seed runs",
        what,
        "--only CLAIM, a cheaper --tier, --jobs N, --cache DIR",
    )


def share_key(claim):
    """Claims with equal keys simulate a common setting (teacher, rho, alpha, kappa, tau, lam, C_train)."""
    if claim_cost(claim) == 0.0:
        return None
    return share_key_of(claim)


def share_key_of(claim):
    """The setting part of :func:`share_key`, for any claim (whether or not it simulates): every input
    of a seed's cache key (studies.ladder_runs.seed_setting) but the task law, which :func:`_sides` names
    per side (a claim comparing the two laws shares the seeds of both)."""
    p = claim.parsed
    f = claim.params.get("f")
    C_train = str(p.get("C_train") or "identity")
    return (
        str(f),
        str(claim.params.get("rho")),
        float(p["alpha"]),
        float(p["kappa"]),
        float(p["tau"]),
        float(p.get("lam", 0.0) or 0.0),
        C_train,
        str(p.get("C_test") or C_train),
        str(p.get("n_test", "")),
        str(p.get("error") or "icl"),
        str(p.get("features", "")),
    )


def schedule(claims, indices) -> list[list[int]]:
    """Work items for a parallel run: groups of ``indices`` (positions in ``claims``), claims sharing a
    simulated setting together (in claim order), the groups by estimated cost, largest first.

    >>> schedule([], [])
    []
    """
    groups: dict = {}
    order = []
    for i in indices:
        key = share_key(claims[i])
        key = ("claim", i) if key is None else key
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(i)
    cost = {k: group_cost([claims[i] for i in groups[k]]) for k in order}
    cheap = [groups[k] for k in order if cost[k] == 0.0]
    heavy = sorted((k for k in order if cost[k] > 0.0), key=lambda k: -cost[k])
    return cheap + [groups[k] for k in heavy]


__all__ = [
    "schedule",
    "claim_cost",
    "group_cost",
    "marginal_costs",
    "sim_units",
    "run_estimate",
    "share_key",
]
