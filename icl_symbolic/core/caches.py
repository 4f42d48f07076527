"""Every in-process cache of the package: who owns it, what it holds, and how to empty it.

A cache is made here, never by hand: :func:`memoize` replaces
``functools.lru_cache`` and :func:`store` makes a module-level dict or list.
Both record the owner (module and name) and the kind:

* ``derived``: a pure function of its inputs (parsed expressions, SymPy
  reductions, quadrature set-ups); emptying it changes no result, only time;
* ``simulation``: per-seed simulation results kept for the process (the
  verification's in-memory reuse of a (setting, seed)); emptying it makes the
  next claim simulate again.

:func:`clear` empties them (all, or one kind); :func:`registered` lists them.
The mutation harness (benchmarks/mutation_harness.py) and the tests use these
instead of reaching into private names; tests/test_architecture.py fails on a
module-level cache that was not made here.

>>> @memoize(maxsize=4)
... def square(x):
...     return x * x
>>> square(3), square.cache_info().currsize
(9, 1)
>>> clear() >= 1 and square.cache_info().currsize == 0
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

KINDS = ("derived", "simulation")


@dataclass(frozen=True)
class Cache:
    """One registered cache: ``owner`` (module.name), ``kind``, its ``clear`` and, for a
    dict/list store, the container itself (``store``; None for a memoized function)."""

    owner: str
    kind: str
    clear: Callable[[], None]
    store: dict | list | None = None


_REGISTRY: list[Cache] = []


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"cache kind must be one of {KINDS}, got {kind!r}")


def memoize(maxsize: int = 128, kind: str = "derived"):
    """``functools.lru_cache(maxsize)`` that registers the cache under the function's name."""
    _check_kind(kind)

    def decorate(fn):
        wrapped = functools.lru_cache(maxsize=maxsize)(fn)
        _REGISTRY.append(Cache(f"{fn.__module__}.{fn.__qualname__}", kind, wrapped.cache_clear))
        return wrapped

    return decorate


def store(owner: str, factory=dict, kind: str = "derived"):
    """A new registered container (``dict`` or ``list``) owned by ``owner`` (module.name)."""
    _check_kind(kind)
    obj = factory()
    if not isinstance(obj, (dict, list)):
        raise TypeError(f"a cache store is a dict or a list, got {type(obj).__name__}")
    _REGISTRY.append(Cache(owner, kind, obj.clear, obj))
    return obj


def registered(kind: str | None = None) -> tuple[Cache, ...]:
    """The registered caches (of one kind when given), in registration order."""
    if kind is not None:
        _check_kind(kind)
    return tuple(c for c in _REGISTRY if kind is None or c.kind == kind)


def clear(kind: str | None = None) -> int:
    """Empty every registered cache (of one kind when given); returns how many."""
    caches = registered(kind)
    for c in caches:
        c.clear()
    return len(caches)
