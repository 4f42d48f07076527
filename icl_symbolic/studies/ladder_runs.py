"""How the (d, seed) simulations of a ladder in d are run: one explicit runner, no module state.

A ladder (Result 1, Eq. (9), p. 3, tested at several finite d and extrapolated in
1/d, :mod:`icl_symbolic.studies.extrapolate`) needs one number per (d, seed): the
error of one trained Gamma (Sec. 2, Eqs. (6)-(7), p. 2-3).  Three callers need
them, and all three go through :class:`SeedRunner`:

* the ``extrapolate`` command (:func:`icl_symbolic.studies.extrapolate.run_ladder`),
* ``verify``'s simulation claims (:mod:`icl_symbolic.verification.checks.simulation`),
  which add a per-process memo (one (setting, seed) simulated once per run, shared
  between claims) and a cache folder (``verify --cache DIR``: a killed run resumes),
* the kernel learner's ladder (:mod:`icl_symbolic.kernel_learner.ladder`), which maps
  its own per-seed function through :meth:`SeedRunner.sweep`.

Everything a run depends on is a field of the runner the caller builds (workers,
Dask scheduler, progress, memo, cache folder); nothing is read from or left in
module state.  Each seed has its own random streams and every run pins BLAS to
one thread (:func:`icl_symbolic.core.parallel.map_sweep`), so the numbers do not
depend on ``jobs``, on the chunking, or on what came from the memo or the cache.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Mapping, MutableMapping, NamedTuple, Sequence

import numpy as np

from icl_symbolic.core.cost import Estimate, announced
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.parallel import map_sweep
from icl_symbolic.model.setting import Setting, resolve_convention
from icl_symbolic.simulation.simulator import run_estimate, seed_cost, seed_error, simulate, sized_plan, sizes

#: with a cache folder, seconds of simulation (estimated) between two writes to it
STORE_EVERY = 60.0
#: what shortens a ladder (the options of ``extrapolate``)
LADDER_REDUCE = "fewer --seeds, fewer or smaller --d, a smaller --alpha or --tau"
#: the loose keywords that configure a :class:`SeedRunner` (:meth:`SeedRunner.from_options`)
RUN_OPTIONS = ("jobs", "scheduler", "progress")


class Rung(NamedTuple):
    """The per-seed values at one d (in the order of its seeds) and the seconds their runs took
    (0 for values read from the memo or the cache folder)."""

    values: np.ndarray
    seconds: float


def seed_setting(st: Setting, error: str = "icl") -> dict | None:
    """The JSON-able key of one rung's per-seed value (memo and cache folder); None when the
    setting has no text form (a callable teacher or an array covariance: such runs are not stored).

    The fields are those ``verify`` has always stored, so a cache folder written before stays valid;
    a convention other than the default with one task law, and an error other than ``icl``, add a field.
    """
    if not all(isinstance(x, str) for x in (st.f, st.C_train, st.C_test)) or st.d is None or st.n_test is None:
        return None
    key = {
        "f": st.f,
        "rho": float(st.rho),
        "d": int(st.d),
        "alpha": float(st.alpha),
        "kappa": float(st.kappa),
        "tau": float(st.tau),
        "lam": float(st.lam),
        "n_test": int(st.n_test),
        "tasks": st.tasks,
        "C_train": str(st.C_train),
        "C_test": str(st.C_test),
        "exact": True,
    }
    conv = st.convention
    if conv.train_tasks != conv.test_tasks or conv != resolve_convention(None, conv.train_tasks):
        key["convention"] = conv.to_json()
    if error != "icl":  # (ICL settings keep their old keys)
        key["error"] = error
    return key


def _seed_item(item) -> tuple:
    """One seed at one d (the unit of :func:`map_sweep`): (value, how, e_mc, solver, seconds);
    the value is :func:`icl_symbolic.simulation.simulator.seed_error` of the run (``error``)."""
    st, seed, error = item
    run = simulate(st, seeds=(seed,)).runs[0]
    value, how = seed_error(run, error)
    return value, how, float(run.e_mc.value), run.solver, float(run.seconds)


@dataclass(frozen=True)
class SeedRunner:
    """How the seeds of a ladder run.

    ``jobs`` worker processes or a Dask ``scheduler`` (:func:`icl_symbolic.core.parallel.map_sweep`);
    ``progress`` a callable taking one line; ``memo`` a mapping the caller owns in which each
    (setting, seed) value is kept (``verify``: one per process, cleared with the simulation caches);
    ``cache`` a :class:`icl_symbolic.simulation.cache.SeedCache` (``verify --cache DIR``), written in
    chunks of about ``store_every`` seconds of simulation so a killed run loses at most one chunk.
    """

    jobs: int = 1
    scheduler: str | None = None
    progress: Callable[[str], None] | None = None
    memo: MutableMapping | None = field(default=None, compare=False)
    cache: object = None
    store_every: float | None = None  # None: STORE_EVERY

    def __post_init__(self):
        if isinstance(self.jobs, bool) or int(self.jobs) != self.jobs or self.jobs < 1:
            raise ICLError(f"jobs must be an integer >= 1, got {self.jobs!r}")
        object.__setattr__(self, "jobs", int(self.jobs))

    @classmethod
    def from_options(cls, options: dict) -> "SeedRunner":
        """The runner of the loose keywords ``jobs``, ``scheduler``, ``progress`` (removed from ``options``;
        the rest are the setting's fields)."""
        given = {k: options.pop(k) for k in RUN_OPTIONS if k in options}
        return cls(**{k: v for k, v in given.items() if v is not None})

    # -- the parallel map ------------------------------------------------------------------
    def sweep(self, fn, items: Sequence, estimate: Estimate, note: str | None = None) -> list:
        """``fn`` over ``items`` (one (d, seed) run each) after announcing ``estimate`` (then progress
        with an ETA); ``note``: a line said first when the runs go on several workers."""
        watch = announced(self.progress, estimate, total=len(items), unit="runs (d, seed)")
        if self.progress is not None and note:
            self.progress(note)
        return self._map(fn, items, watch, 0)

    def _map(self, fn, items, watch, done: int, label: str = "run (d, seed)") -> list:
        return map_sweep(
            fn,
            list(items),
            jobs=self.jobs,
            scheduler=self.scheduler,
            progress=self.progress,
            label=label,
            on_item=lambda i, _: watch.update(done + i + 1),
        )

    # -- the model's per-seed errors -------------------------------------------------------
    def values(self, st: Setting, seeds: Sequence[int], error: str = "icl") -> np.ndarray:
        """The per-seed errors of one setting (``st.d`` set), in the order of ``seeds``."""
        return self.ladder(st, {st.d: seeds}, error, what=f"d={st.d}")[st.d].values

    def ladder(
        self, st: Setting, seeds_at: Mapping[int, Sequence[int]], error: str = "icl", what: str = "extrapolate"
    ) -> dict[int, Rung]:
        """The per-seed errors at every d of ``seeds_at`` (d -> its seeds) of setting ``st`` (its ``d``
        replaced by each), ``error`` as :func:`icl_symbolic.simulation.simulator.seed_error`: from the
        memo, then the cache folder, then simulated (every missing (d, seed) one item of one parallel
        map, or of chunks of it when there is a cache folder); ``what`` names the run in its time estimate."""
        rungs = {int(d): st.replace(d=int(d)) for d in seeds_at}
        keys = {d: seed_setting(rungs[d], error) for d in rungs}
        found, seconds = self._stored(seeds_at, keys), dict.fromkeys(rungs, 0.0)
        missing = [(int(d), int(s)) for d, seeds in seeds_at.items() for s in seeds if (int(d), int(s)) not in found]
        if missing:
            watch = announced(self.progress, self._estimate(rungs, missing, what), len(missing), "runs (d, seed)")
            if self.progress is not None and self.jobs > 1:
                self.progress(f"{len(missing)} runs (d x seeds) on {self.jobs} workers")
            done, label = 0, "run (d, seed)" if len(rungs) > 1 else f"seed run at d={next(iter(rungs))}"
            for chunk in self._chunks(rungs, missing):
                out = self._map(_seed_item, [(rungs[d], s, error) for d, s in chunk], watch, done, label)
                done += len(chunk)
                for (d, s), rec in zip(chunk, out):
                    found[(d, s)] = rec[0]
                    seconds[d] += rec[4]
                    self._store(keys[d], s, rec)
        return {
            int(d): Rung(np.array([found[(int(d), int(s))] for s in seeds], dtype=float), seconds[int(d)])
            for d, seeds in seeds_at.items()
        }

    def _stored(self, seeds_at, keys) -> dict:
        """(d, seed) -> value of the seeds in the memo or the cache folder (each read once into the memo)."""
        found = {}
        for d, seeds in seeds_at.items():
            key, read = keys[int(d)], 0
            if key is None:
                continue
            text = json.dumps(key, sort_keys=True)
            for s in seeds:
                mk = (text, int(s))
                if self.memo is not None and mk in self.memo:
                    found[(int(d), int(s))] = self.memo[mk]
                elif self.cache is not None and (rec := self.cache.get(key, s)) is not None:
                    found[(int(d), int(s))] = float(rec["e"])
                    if self.memo is not None:
                        self.memo[mk] = float(rec["e"])
                    read += 1
            if read and self.progress is not None:
                self.progress(f"d={d}: {read} seed(s) read from the cache folder {self.cache.folder}")
        return found

    def _store(self, key, seed: int, rec: tuple) -> None:
        if key is None:
            return
        value, how, e_mc, solver, secs = rec
        if self.memo is not None:
            self.memo[(json.dumps(key, sort_keys=True), int(seed))] = value
        if self.cache is not None:
            self.cache.put(
                key, seed, {"e": value, "e_method": how, "e_mc": e_mc, "solver": solver, "seconds": round(secs, 3)}
            )

    def _estimate(self, rungs, missing, what: str) -> Estimate:
        """The simulator's cost model (:func:`icl_symbolic.simulation.simulator.run_estimate`) of the missing runs."""
        counts = {d: sum(1 for dd, _ in missing if dd == d) for d in rungs}
        plans = [sized_plan(_sizes(rungs[d]), n, rungs[d].n_test, rungs[d].lam or 0.0) for d, n in counts.items() if n]
        return run_estimate(plans, self.jobs, self.scheduler, what, LADDER_REDUCE)

    def _chunks(self, rungs, missing) -> list:
        """All missing runs in one map; with a cache folder, chunks of about ``store_every`` seconds of
        wall time per d, each stored as it is done (the numbers do not depend on it)."""
        if self.cache is None:
            return [missing]
        out = []
        for d, st in rungs.items():
            mine = [pair for pair in missing if pair[0] == d]
            one = seed_cost(_sizes(st), "auto", int(st.n_test), float(st.lam))[0]
            every = STORE_EVERY if self.store_every is None else self.store_every
            size = max(self.jobs, self.jobs * int(every / max(one, 1e-9)))
            out += [mine[i : i + size] for i in range(0, len(mine), size)]
        return out


def _sizes(st: Setting):
    return sizes(int(st.d), st.alpha, st.kappa, st.tau)


__all__ = ["SeedRunner", "Rung", "seed_setting", "STORE_EVERY", "LADDER_REDUCE", "RUN_OPTIONS"]
