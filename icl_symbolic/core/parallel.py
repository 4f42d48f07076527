"""One way to map a function over the items of a sweep: serially, on local processes, or on Dask.

Written once against joblib's backend interface (``joblib.Parallel``):

* ``jobs = 1`` and no scheduler: a plain loop in this process;
* ``jobs = N > 1``: joblib's ``loky`` backend (N worker processes);
* a Dask scheduler address (``scheduler="tcp://host:8786"`` or the
  environment variable ``ICL_SYMBOLIC_SCHEDULER``): joblib's ``dask`` backend
  through a ``dask.distributed.Client`` (Dask is an optional extra,
  ``pip install "icl-symbolic[dask]"``; imported only when asked for).

Every item runs with the BLAS thread pools pinned (``threadpoolctl``) to
``blas_threads`` (default 1) in the serial loop as in the workers, and results
come back in item order, so a sweep with the same seeds gives bitwise-identical
numbers whatever ``jobs`` or the scheduler (tested).  Items must be picklable
and ``fn`` importable by the workers (a module-level function).
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterable, Sequence

import joblib
from threadpoolctl import threadpool_limits

from icl_symbolic.core.cost import budget, current_budget
from icl_symbolic.core.errors import ICLError

#: Environment variable naming a Dask scheduler address (used when ``scheduler`` is not given).
SCHEDULER_ENV = "ICL_SYMBOLIC_SCHEDULER"
#: Largest --jobs accepted (more than this many processes on one machine is a typo).
MAX_JOBS = 256


def check_jobs(jobs) -> int:
    """Validate ``jobs`` (a positive integer <= MAX_JOBS)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise ICLError(f"jobs must be an integer between 1 and {MAX_JOBS}, got {jobs!r}")
    return jobs


def concurrent_runs(jobs: int, n_items: int, scheduler: str | None = None) -> int:
    """How many items of a sweep run at once on THIS machine: ``min(jobs, n_items)``, or 1 when a
    Dask scheduler runs them elsewhere (the share of memory each item may use is the limit over this).

    >>> concurrent_runs(2, 5), concurrent_runs(4, 3), concurrent_runs(2, 5, "tcp://h:1")
    (2, 3, 1)
    """
    return 1 if resolve_scheduler(scheduler) is not None else max(1, min(check_jobs(jobs), int(n_items)))


#: worker processes the seeds of one simulation may use (:func:`use_seed_jobs`); 1 outside such a block.
#: A context variable, set and reset by the block: no value outlives it or leaks into another context.
_SEED_JOBS: ContextVar[int] = ContextVar("seed_jobs", default=1)


@contextmanager
def use_seed_jobs(jobs: int):
    """Inside the block, :func:`seed_jobs` is ``jobs``: a caller that runs a single work item (e.g. the
    verification runner with one group of claims) lends its workers to that item's seeds.  The numbers
    do not depend on it (every seed pins BLAS to one thread, :func:`map_sweep`)."""
    token = _SEED_JOBS.set(check_jobs(jobs))
    try:
        yield _SEED_JOBS.get()
    finally:
        _SEED_JOBS.reset(token)


def seed_jobs() -> int:
    """Worker processes for the seeds of a simulation run inside :func:`use_seed_jobs` (else 1)."""
    return _SEED_JOBS.get()


def resolve_scheduler(scheduler: str | None) -> str | None:
    """The Dask scheduler address to use: ``scheduler``, else $ICL_SYMBOLIC_SCHEDULER, else None.

    >>> resolve_scheduler("tcp://10.0.0.1:8786")
    'tcp://10.0.0.1:8786'
    """
    addr = scheduler if scheduler else os.environ.get(SCHEDULER_ENV) or None
    if addr is None:
        return None
    if not isinstance(addr, str) or "://" not in addr or any(c.isspace() for c in addr):
        raise ICLError(f"scheduler must be an address like tcp://host:8786, got {addr!r}")
    return addr


def _pinned(fn: Callable, item: Any, blas_threads: int, seconds: float | None = None):
    """``fn(item)`` with ``blas_threads`` BLAS threads, under the caller's work budget ``seconds``
    (:func:`icl_symbolic.core.cost.budget`: a worker process does not inherit it otherwise)."""
    with threadpool_limits(limits=blas_threads), budget(seconds):
        return fn(item)


def _dask_client(address: str):
    try:
        from dask.distributed import Client
    except ImportError as exc:
        raise ICLError(
            f"a Dask scheduler ({address}) was requested but dask.distributed is not installed; "
            f'install the extra: pip install "icl-symbolic[dask]"'
        ) from exc
    try:
        return Client(address, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ICLError(f"cannot connect to the Dask scheduler at {address}: {exc}") from exc


#: seconds between the "still running" lines of a parallel verify (:func:`heartbeat`)
HEARTBEAT_EVERY = 120.0


@contextmanager
def heartbeat(say: Callable[[str], None] | None, line: Callable[[], str], every: float = HEARTBEAT_EVERY):
    """While the block runs, ``say(line())`` every ``every`` seconds (from a daemon thread).

    For sweeps whose items are long and report nothing while they run: a parallel
    ``verify --tier deep`` has work items of tens of minutes on other processes.
    ``say=None`` (quiet) or ``every <= 0``: nothing.  No line after the block has ended.
    """
    if say is None or every <= 0:
        yield
        return
    stop = threading.Event()

    def beat():
        while not stop.wait(every):
            say(line())

    thread = threading.Thread(target=beat, name="heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def map_sweep(
    fn: Callable[[Any], Any],
    items: Iterable,
    jobs: int = 1,
    scheduler: str | None = None,
    blas_threads: int = 1,
    progress: Callable[[str], None] | None = None,
    label: str = "item",
    on_item: Callable[[int, Any], None] | None = None,
) -> list:
    """``[fn(item) for item in items]``, serially, on ``jobs`` processes, or on a Dask cluster.

    Parameters
    ----------
    fn : callable
        A module-level function of one argument (workers import it by name).
    items : iterable
        The sweep's items (picklable).
    jobs : int
        Worker processes (1 = in this process).  Ignored for Dask (the cluster's workers).
    scheduler : str, optional
        Dask scheduler address; default ``$ICL_SYMBOLIC_SCHEDULER`` if set.
    blas_threads : int
        BLAS threads per item (``threadpoolctl``), in the serial loop too, so that
        results do not depend on ``jobs``.
    progress : callable(str), optional
        Receives ``"<label> i/N done (elapsed s)"`` lines as items finish (in order).
    on_item : callable(index, result), optional
        Called with each result as soon as it and all items before it are done
        (in item order), e.g. to print a verdict while the sweep goes on.

    Returns
    -------
    list
        The results in item order.

    >>> map_sweep(abs, [-1, 2, -3])
    [1, 2, 3]
    >>> map_sweep(abs, [-1, 2, -3], jobs=2)
    [1, 2, 3]
    """
    items: Sequence = list(items)
    jobs = check_jobs(jobs)
    address = resolve_scheduler(scheduler)
    total = len(items)
    t0 = time.monotonic()

    def report(i):
        if on_item is not None:
            on_item(i - 1, out[i - 1])
        if progress is not None:
            progress(f"{label} {i}/{total} done ({time.monotonic() - t0:.1f} s)")

    if address is None and (jobs == 1 or total <= 1):
        out = []
        for i, item in enumerate(items):
            out.append(_pinned(fn, item, blas_threads, current_budget()))
            report(i + 1)
        return out
    seconds = current_budget()
    calls = (joblib.delayed(_pinned)(fn, item, blas_threads, seconds) for item in items)
    out = []
    if address is None:
        runner = joblib.Parallel(n_jobs=min(jobs, total), backend="loky", return_as="generator")
        for i, res in enumerate(runner(calls)):
            out.append(res)
            report(i + 1)
        return out
    client = _dask_client(address)
    try:
        with joblib.parallel_config(backend="dask", client=client, wait_for_workers_timeout=30):
            runner = joblib.Parallel(n_jobs=-1, return_as="generator")
            for i, res in enumerate(runner(calls)):
                out.append(res)
                report(i + 1)
    finally:
        client.close()
    return out
