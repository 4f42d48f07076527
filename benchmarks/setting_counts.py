"""Benchmark: how often one API call validates its setting, builds its teacher and parses its text.

What: one representative call each of ``ics.simulate`` (d = 8, 2 seeds, one point), ``ics.e_nonlinear``
over a 3-point tau list (the ``theory`` command's curve) and ``ics.reproduce`` (a two-row table at
d = 6 and 8, 10 seeds per row, the fewest it takes), run with counters wrapped around the functions that do the repeated
work (monkeypatched in this process only, at every module that imported them):

* ``check_ratio``: one validation of one of alpha, kappa, tau (model/setting.py);
* ``Setting``: Settings constructed (each validates every field);
* ``teacher``: calls of ``engine.expr.teacher`` (any argument: a text, an expression, a Teacher);
* ``teacher built``: Teachers actually built from a text or an expression (``_from_sympy``: the
  SymPy simplification, the breakpoints, the lambdified numpy and mpmath forms);
* ``parse_expr``: texts parsed by the whitelist parser;
* ``sizes``: integer sizes (ell, k, n) computed from the ratios (``model.sizes.counts``; before it
  existed, ``simulation.simulator.sizes``).

The counts are exact (no timing): they depend only on the code path.  The caches of the package are
cleared before each call (``core.caches.clear``) so each call is counted as a first call in a
fresh process.  Run:  python benchmarks/setting_counts.py [--json]   (about 20 s on one core)
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import pkgutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import icl_symbolic
import icl_symbolic as ics
from icl_symbolic.core import caches
from icl_symbolic.engine import expr as E
from icl_symbolic.model import setting as S

#: (counter name, module, attribute): the functions counted
TARGETS = (
    ("check_ratio", S, "check_ratio"),
    ("teacher", E, "teacher"),
    ("teacher built", E, "_from_sympy"),
    ("parse_expr", E, "parse_expr"),
)
COUNTERS = ("check_ratio", "Setting", "teacher", "teacher built", "parse_expr", "sizes")


def _import_all() -> list:
    """Every module of the package (the API loads its modules lazily; the counters must reach them all)."""
    mods = []
    for info in pkgutil.walk_packages(icl_symbolic.__path__, "icl_symbolic."):
        if info.name.endswith("__main__"):
            continue
        mods.append(importlib.import_module(info.name))
    return mods


def _sizes_target() -> tuple:
    """The function that turns ratios into counts: ``model.sizes.counts`` (which ``sizes`` and
    ``Setting.sizes`` call) where it exists, else ``simulation.simulator.sizes`` (before the refactor)."""
    try:
        return importlib.import_module("icl_symbolic.model.sizes"), "counts"
    except ImportError:
        return importlib.import_module("icl_symbolic.simulation.simulator"), "sizes"


def _rewire(holder: dict, original, counted) -> None:
    """Replace ``original`` by ``counted`` among the values of ``holder`` (a module's namespace or a
    table in it), also inside ``functools.partial`` objects and one level of dict tables."""
    for name, value in list(holder.items()):
        if value is original:
            holder[name] = counted
        elif isinstance(value, functools.partial) and value.func is original:
            holder[name] = functools.partial(counted, *value.args, **value.keywords)
        elif isinstance(value, dict):
            for k, v in list(value.items()):
                if v is original:
                    value[k] = counted
                elif isinstance(v, functools.partial) and v.func is original:
                    value[k] = functools.partial(counted, *v.args, **v.keywords)


def install(counts: dict) -> None:
    """Wrap every target at every module that holds a reference to it."""
    modules = _import_all()
    targets = [*TARGETS, ("sizes", *_sizes_target())]
    for key, mod, attr in targets:
        original = getattr(mod, attr)

        def counted(*a, _orig=original, _key=key, **kw):
            counts[_key] += 1
            return _orig(*a, **kw)

        functools.update_wrapper(counted, original)
        for m in modules:
            _rewire(vars(m), original, counted)
    post_init = S.Setting.__post_init__

    def counted_post_init(self, _orig=post_init):
        counts["Setting"] += 1
        return _orig(self)

    S.Setting.__post_init__ = counted_post_init


def _table(tmp: Path) -> Path:
    """A two-row table in the ``reproduce`` format (the values are not the point: only the counts are)."""
    p = tmp / "table.csv"
    p.write_text("d,icl_mean,icl_std,runs\n6,1.0,0.5,10\n8,1.0,0.5,10\n")
    return p


def calls(tmp: Path) -> dict:
    """The representative calls, by name."""
    table = _table(tmp)
    return {
        "simulate": lambda: ics.simulate("tanh(g)", d=8, alpha=2, kappa=2, tau=2, rho=0.1, seeds=2, n_test=200),
        "theory": lambda: ics.e_nonlinear("tanh(g)", rho=0.1, alpha=2, kappa=2, tau=[0.5, 2, 4]),
        "reproduce": lambda: ics.reproduce(
            table,
            columns="d=d,mean=icl_mean,spread=icl_std,runs=runs",
            f="tanh(g)",
            alpha=2,
            kappa=2,
            tau=2,
            rho=0.1,
            seeds=10,
            n_test=50,
        ),
    }


def measure() -> dict:
    counts = dict.fromkeys(COUNTERS, 0)
    install(counts)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in calls(Path(tmp)).items():
            caches.clear()
            for k in counts:
                counts[k] = 0
            fn()
            out[name] = dict(counts)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = ap.parse_args(argv)
    out = measure()
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print("| call | " + " | ".join(COUNTERS) + " |")
    print("|---|" + "---:|" * len(COUNTERS))
    for name, c in out.items():
        print(f"| {name} | " + " | ".join(str(c[k]) for k in COUNTERS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
