"""Per-seed simulation results on disk, so that a long verification resumes where it stopped.

The deep verification tier (``verify --tier deep``, docs/benchmarks.md) simulates
ladders up to d = 192-256 with >= 10 seeds per point; a killed run must not start
again from nothing.  :class:`SeedCache` stores one small JSON file per
(simulation setting, seed).  The key is a SHA-256 of everything that determines the
number:

* every input of :func:`icl_symbolic.simulation.simulator.simulate` that can change a result
  (teacher text, rho, d, alpha, kappa, tau, lam, task law, C_train, C_test, n_test,
  the seed, whether the exact test functional is computed);
* the package version and a digest of the source of every package module the stored
  number depends on: the import closure of the modules that produce it
  (:data:`PRODUCERS`: the simulator, whose :func:`~icl_symbolic.simulation.simulator.simulate`
  trains and tests and whose :func:`~icl_symbolic.simulation.simulator.seed_error` gives
  the stored error), read from their import statements by
  :func:`icl_symbolic.core.sources.import_closure` (so model/moments.py, model/setting.py
  and the generated Lemma 1 forms are covered because the simulator imports them, and a
  new import is covered without anyone editing a list).  An edited module in the closure
  makes every key change; an edit elsewhere (the command line, the theory, the claim
  files) keeps the stored seeds.  The caller's mapping from the setting to the simulator's
  arguments is a pass-through of the keyed fields and is not digested.

The solver path is not part of the key: every path solves the same normal
equations to a certified residual (tested in tests/test_simulate.py and
tests/test_matfree.py).  Files are written atomically (temporary name, then
``os.replace``), so concurrent workers (``--jobs``, Dask workers sharing a
folder) at worst compute a seed twice and never read a half-written file.
A cache folder is only read and written when the caller names one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from contextvars import ContextVar
from pathlib import Path

from icl_symbolic._version import __version__
from icl_symbolic.core.caches import memoize
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.sources import source_digest
from icl_symbolic.output.io import check_name

#: The modules that produce a stored number (``simulate`` and ``seed_error`` live here);
#: the key digests the source of their whole import closure within the package.
PRODUCERS = ("icl_symbolic.simulation.simulator",)
#: Bumped when the stored record changes shape.
FORMAT = 1


def package_root() -> Path:
    """The folder of the icl_symbolic package whose source is digested."""
    return Path(__file__).resolve().parent.parent


@memoize(maxsize=1)
def digested_modules() -> tuple[str, ...]:
    """The modules whose source is in the key: the import closure of :data:`PRODUCERS`."""
    return source_digest(package_root(), "icl_symbolic", PRODUCERS)[1]


@memoize(maxsize=1)
def simulator_digest() -> str:
    """SHA-256 (hex, first 16) of the package version, :data:`FORMAT` and the source bytes of
    every module in the import closure of :data:`PRODUCERS` (computed once per process)."""
    digest, _ = source_digest(package_root(), "icl_symbolic", PRODUCERS, f"icl-symbolic {__version__} format {FORMAT}")
    return digest[:16]


def seed_key(setting: dict, seed: int) -> str:
    """The cache key of one seed of one setting (``setting``: JSON-able inputs, see the module doc)."""
    payload = json.dumps(
        {"setting": setting, "seed": int(seed), "code": simulator_digest()}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(payload.encode()).hexdigest()


class SeedCache:
    """A folder of per-seed records ``{"setting", "seed", "e", "e_mc", "solver", ...}``.

    >>> import tempfile
    >>> c = SeedCache(tempfile.mkdtemp())
    >>> s = {"f": "g", "d": 8}
    >>> c.get(s, 1) is None
    True
    >>> c.put(s, 1, {"e": 0.5})
    >>> c.get(s, 1)["e"], c.get(s, 2) is None, c.get({"f": "g", "d": 9}, 1) is None
    (0.5, True, True)
    """

    def __init__(self, folder):
        check_name(str(folder), "--cache")  # a control character in a folder name: refused, nothing created
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ICLError(f"cache folder {str(folder)!r} cannot be created: {exc.strerror}") from None
        if not os.access(self.folder, os.W_OK | os.X_OK):
            raise ICLError(f"cache folder {str(folder)!r} is not writable")

    def _path(self, setting: dict, seed: int) -> Path:
        k = seed_key(setting, seed)
        return self.folder / k[:2] / f"{k}.json"

    def get(self, setting: dict, seed: int) -> dict | None:
        """The stored record, or None (missing, unreadable or for another setting)."""
        p = self._path(setting, seed)
        try:
            rec = json.loads(p.read_text())
        except (OSError, ValueError):
            return None
        if rec.get("setting") != setting or rec.get("seed") != int(seed):
            return None
        return rec

    def put(self, setting: dict, seed: int, record: dict) -> None:
        """Store ``record`` for (setting, seed), atomically."""
        p = self._path(setting, seed)
        p.parent.mkdir(exist_ok=True)
        rec = dict(record, setting=setting, seed=int(seed), code=simulator_digest())
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(rec, fh)
            os.replace(tmp, p)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.folder.glob("*/*.json"))


#: the cache of the running :func:`use_cache` block (a context variable: set and reset by the block)
_ACTIVE: ContextVar[SeedCache | None] = ContextVar("seed_cache", default=None)


@contextlib.contextmanager
def use_cache(folder):
    """Make ``folder`` (None: no disk cache) the cache of the simulations run inside the block.

    The verification runner wraps every claim in it, in the process that runs the claim
    (worker processes included), so the check kinds find it with :func:`active_cache`.
    """
    token = _ACTIVE.set(None if folder is None else SeedCache(folder))
    try:
        yield _ACTIVE.get()
    finally:
        _ACTIVE.reset(token)


def active_cache() -> SeedCache | None:
    """The cache folder of the running block (:func:`use_cache`), or None."""
    return _ACTIVE.get()


__all__ = ["SeedCache", "seed_key", "simulator_digest", "digested_modules", "use_cache", "active_cache", "PRODUCERS"]
