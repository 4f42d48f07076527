"""Per-seed simulation results on disk, so that a long verification resumes where it stopped.

The deep verification tier (``verify --tier deep``, docs/benchmarks.md) simulates
ladders up to d = 192-256 with >= 10 seeds per point; a killed run must not start
again from nothing.  :class:`SeedCache` stores one small JSON file per
(simulation setting, seed).  The key is a SHA-256 of everything that determines the
number:

* every input of :func:`icl_symbolic.simulation.simulator.simulate` that can change a result
  (teacher text, rho, d, alpha, kappa, tau, lam, task law, C_train, C_test, n_test,
  the seed, whether the exact test functional is computed);
* the package version and a digest of the source of the modules the simulation
  runs (simulation, prompts, covariance, gamma_error, matfree, expr, gauss, hermite,
  orthopoly), so an edited simulator never reads a stale number.

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
from pathlib import Path

from icl_symbolic._version import __version__
from icl_symbolic.core.caches import memoize
from icl_symbolic.core.errors import ICLError
from icl_symbolic.output.io import check_name

#: Modules whose source determines a simulated number (digested into every key).
SIMULATOR_MODULES = (
    "simulation/simulator",
    "model/prompts",
    "model/covariance",
    "model/gamma_error",
    "simulation/matfree",
    "engine/expr",
    "engine/gauss",
    "engine/hermite",
    "engine/orthopoly",
)
#: Bumped when the stored record changes shape.
FORMAT = 1


@memoize(maxsize=1)
def simulator_digest() -> str:
    """SHA-256 (hex, first 16) of the package version and the simulator modules' source bytes."""
    h = hashlib.sha256(f"icl-symbolic {__version__} format {FORMAT}".encode())
    root = Path(__file__).resolve().parent.parent
    for name in SIMULATOR_MODULES:
        h.update(name.encode())
        h.update((root / f"{name}.py").read_bytes())
    return h.hexdigest()[:16]


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


_active: SeedCache | None = None  # owned by use_cache(); read by active_cache()


@contextlib.contextmanager
def use_cache(folder):
    """Make ``folder`` (None: no disk cache) the cache of the simulations run inside the block.

    The verification runner wraps every claim in it, in the process that runs the claim
    (worker processes included), so the check kinds find it with :func:`active_cache`.
    """
    global _active
    before = _active
    _active = None if folder is None else SeedCache(folder)
    try:
        yield _active
    finally:
        _active = before


def active_cache() -> SeedCache | None:
    """The cache folder of the running block (:func:`use_cache`), or None."""
    return _active


__all__ = ["SeedCache", "seed_key", "simulator_digest", "use_cache", "active_cache", "SIMULATOR_MODULES"]
