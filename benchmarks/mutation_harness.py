"""Mutation harness: which shipped claims catch which scientifically meaningful library errors.

tests/test_mutations.py mutates the CLAIM FILES (does verify notice a claim file that
states the paper wrongly?); this script mutates the LIBRARY: each mutation of
:data:`MUTATIONS` models one error a derivation or an implementation of the paper
could contain (an error model of the slips catalogue where it maps to code, a wrong
normalisation, a dropped finite-size term, a uniform 0.5 % / 2 % error in the linear
theory, a wrong coefficient in the a1 = 0 fixed point of Eq. (15), a wrong Eq. (11)
limit function, ``d + 1`` for ``d`` in the simulator's sizes, ...), installs it by
monkeypatching every place the library LOOKS the patched object up, runs the claims
(``icl_symbolic.verification.runner.run_claims``, in this one process), and records
which claims stop coming out as expected.  For each mutation it also measures how far
the error moves a paper-facing number (the Fig. 1 theory value at tau = 2, the
Fig. 1 legend value rho_nonlinear/a1^2, ...): the relative change, mutated against
clean, computed by the same library call with and without the mutation.

Commands (docs/benchmarks.md, "Mutation harness")::

    python benchmarks/mutation_harness.py --tier quick --out benchmarks/results/mutations
    python benchmarks/mutation_harness.py --tier full --claims 'result1.*' --only-mutations 'linear_theory_*'
    python benchmarks/mutation_harness.py --list

``--tier quick`` runs the quick claims (``icl-symbolic verify``); ``--tier full`` the
quick and full ones (``verify --full``; every simulator mutation reruns the simulation
claims, so this takes hours); ``--tier deep`` also the deep ones where the claim files
have them.  A mutation is *caught* only on a value: a claim that is ok in the clean run comes
out with the wrong verdict (holds/mismatch) under it, or a test that passes clean fails an
assertion.  A claim ending in ``error`` and a test raising anything but an AssertionError (a
guard, a crash) are listed as errors and never count; a mutation whose run crashed (its test
subprocess died, its paper-facing number raised) is reported as ``crashed``.

Tests.  Under every mutation the pin tests (:data:`PIN_TESTS`, tests/test_library_pins.py) and the
mutation's own tests run in a fresh interpreter with the mutation installed before the test
modules are imported; their outcomes are compared with a clean run of the same selection.
``--smoke`` runs only the smoke mutations against their own tests (no claims; about 1.5 min,
run by ``.ci/run``) and exits 1 unless each is caught on a value.  ``--docs docs/mutations.md``
writes the table there; ``--render JSON`` rewrites the tables from a saved report.

    python benchmarks/mutation_harness.py --smoke
    python benchmarks/mutation_harness.py --tier quick --out benchmarks/results/mutations --docs docs/mutations.md

Caches.  Every cache of the library (the functools caches and the module-level caches of
the check kinds) is cleared when a mutation is installed and again when it is undone, so
nothing computed under a mutation survives it and nothing clean hides it (a narrower rule,
clearing only the caches of modules that import the mutated code, saves nothing here: the
check-kind registry imports the theory, so nearly every module reaches every other).
The one exception is the simulation cache of the simulation check kinds (``_SIM_CACHE``):
a mutation of the theory keeps the clean simulations of the run (the simulations do not
call the theory), while a mutation of the simulator runs with an empty cache and the clean
cache is put back afterwards.
The clean run comes first (it fills the cache) and a clean run of the quick claims comes
last: a negative control that the library was restored (it must be ok again).

Outputs (``--out DIR``): ``mutations_<tier>.json`` (everything) and
``mutations_<tier>.md`` (the table).  Progress goes to stderr.
"""

from __future__ import annotations
import __future__

import argparse
import contextlib
import fnmatch
import functools
import importlib
import inspect
import json
import math
import os
import pkgutil
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np
import sympy

import icl_symbolic
from icl_symbolic.core import caches
from icl_symbolic.core.cost import budget
from icl_symbolic.verification import claimfile, runner
from icl_symbolic.verification.checks import REGISTRY

TIERS = ("quick", "full", "deep")
ROOT = Path(__file__).resolve().parent.parent
#: the fast pin tests every mutation of the full table runs against (in a subprocess, mutation installed)
PIN_TESTS = ("tests/test_library_pins.py",)
#: relative change of the paper-facing number from which a mutation must be caught
PAPER_FACING_THRESHOLD = 0.01


# ---------------------------------------------------------------------------
# patching where the library looks objects up
# ---------------------------------------------------------------------------
def import_library() -> list:
    """Import every module of the package (except the entry point), so that no module is
    first imported under a mutation (it would bind the mutated object by ``from x import y``
    and keep it after the mutation is undone)."""
    names = []
    for info in pkgutil.walk_packages(icl_symbolic.__path__, "icl_symbolic."):
        if info.name.endswith("__main__"):
            continue
        importlib.import_module(info.name)
        names.append(info.name)
    return names


def _library_modules():
    return [
        (name, mod)
        for name, mod in list(sys.modules.items())
        if mod is not None and (name == "icl_symbolic" or name.startswith("icl_symbolic."))
    ]


def lookup_sites(obj) -> list:
    """Every place the library can look ``obj`` up: module globals that are ``obj`` and
    module-level dicts holding it as a value (e.g. ``registry.THEORY_FUNCTIONS``).

    Returns ``[(container, key, label)]``; ``container`` is a module (key: attribute name)
    or a dict (key: its key).
    """
    sites, seen = [], set()
    for name, mod in _library_modules():
        for attr, val in list(vars(mod).items()):
            if val is obj:
                sites.append((mod, attr, f"{name}.{attr}"))
            elif isinstance(val, dict) and id(val) not in seen:
                seen.add(id(val))
                for k, v in list(val.items()):
                    if v is obj:
                        sites.append((val, k, f"{name}.{attr}[{k!r}]"))
    return sites


def _set(container, key, value):
    if isinstance(container, dict):
        container[key] = value
    else:
        setattr(container, key, value)


def _get(container, key):
    return container[key] if isinstance(container, dict) else getattr(container, key)


@dataclass(frozen=True)
class Patch:
    """Replace ``module.attr`` by ``make(original)`` at every lookup site of the original.

    ``only_in``: restrict the sites to these modules (e.g. the simulator's own lookups of
    a function other parts of the library share); ``here_only``: patch this one module
    attribute (a constant such as a cache key).
    """

    module: str
    attr: str
    make: Callable
    only_in: tuple = ()
    here_only: bool = False


class MutationFailed(RuntimeError):
    """A mutation could not be installed (the library code it edits has changed)."""


class Sites(list):
    """Labels of the patched lookup sites; ``modules``: the modules that hold them."""

    modules: set


def _holder(container) -> str:
    """Name of the module that holds a lookup site (a module, or a module-level dict)."""
    if isinstance(container, type(sys)):
        return container.__name__
    for name, mod in _library_modules():
        if any(v is container for v in vars(mod).values()):
            return name
    return "icl_symbolic"


@contextlib.contextmanager
def installed(patches):
    """Install patches; yields their :class:`Sites`; always restores them."""
    done = []  # (container, key, original)
    labels = Sites()
    labels.modules = set()
    try:
        for p in patches:
            mod = importlib.import_module(p.module)
            orig = getattr(mod, p.attr)
            new = p.make(orig)
            if p.here_only:
                sites = [(mod, p.attr, f"{p.module}.{p.attr}")]
            else:
                sites = lookup_sites(orig)
                if p.only_in:
                    sites = [s for s in sites if isinstance(s[0], type(sys)) and s[0].__name__ in p.only_in]
            if not sites:
                raise MutationFailed(f"no lookup site of {p.module}.{p.attr}")
            for container, key, label in sites:
                done.append((container, key, _get(container, key)))
                _set(container, key, new)
                labels.append(label)
                labels.modules.add(_holder(container))
            labels.modules.add(getattr(orig, "__module__", None) or p.module)
        yield labels
    finally:
        for container, key, orig in reversed(done):
            _set(container, key, orig)


# ---------------------------------------------------------------------------
# ways of making a mutant from the original
# ---------------------------------------------------------------------------
def scaled(factor):
    """The original's result times ``factor`` (floats; SymPy expressions get an exact factor)."""

    def make(orig):
        @functools.wraps(orig)
        def mutant(*args, **kwargs):
            out = orig(*args, **kwargs)
            if isinstance(out, sympy.Basic):
                return out * sympy.nsimplify(factor)
            return type(out)(out * factor) if isinstance(out, float) else out * factor

        return mutant

    return make


def source_edit(*edits):
    """The original function recompiled from its source with ``(old, new)`` text edits.

    Each ``old`` must occur exactly once in the function's source (else
    :class:`MutationFailed`: the library changed and the mutation must be updated).
    The new function runs in the original's module globals, so it sees the other
    patches of the same mutation.
    """

    def make(orig):
        src = textwrap.dedent(inspect.getsource(orig))
        for old, new in edits:
            n = src.count(old)
            if n != 1:
                raise MutationFailed(f"{orig.__module__}.{orig.__qualname__}: {old!r} occurs {n} times")
            src = src.replace(old, new)
        flags = __future__.annotations.compiler_flag
        code = compile(
            src, f"<mutant of {orig.__module__}.{orig.__qualname__}>", "exec", flags=flags, dont_inherit=True
        )
        ns: dict = {}
        exec(code, orig.__globals__, ns)  # noqa: S102 - the library's own source, edited here
        return ns[orig.__name__]

    return make


def edited_result(fn):
    """The original's result passed through ``fn`` (e.g. one Lemma 1 coefficient changed)."""

    def make(orig):
        @functools.wraps(orig)
        def mutant(*args, **kwargs):
            return fn(orig(*args, **kwargs))

        return mutant

    return make


def edited_arguments(fn):
    """The original called with its arguments passed through ``fn(args, kwargs) -> (args, kwargs)``."""

    def make(orig):
        @functools.wraps(orig)
        def mutant(*args, **kwargs):
            a, k = fn(args, kwargs)
            return orig(*a, **k)

        return mutant

    return make


def constant(value):
    return lambda orig: value


# ---------------------------------------------------------------------------
# caches
# ---------------------------------------------------------------------------
def clear_caches(keep_simulations: bool = True) -> int:
    """Empty the library's registered caches (:mod:`icl_symbolic.core.caches`); returns how many.

    The in-process simulation results are kept when ``keep_simulations`` (a theory
    mutation does not change them) and emptied otherwise.
    """
    n = caches.clear("derived")
    if not keep_simulations:
        n += caches.clear("simulation")
    return n


@contextlib.contextmanager
def fresh_simulations():
    """Run with empty simulation caches; put the clean ones back afterwards."""
    stores = [c.store for c in caches.registered("simulation")]
    saved = [dict(c) for c in stores]
    for c in stores:
        c.clear()
    try:
        yield
    finally:
        for c, s in zip(stores, saved):
            c.clear()
            c.update(s)


# ---------------------------------------------------------------------------
# paper-facing numbers
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Probe:
    """A paper-facing number, computed by library calls (so a mutation moves it)."""

    name: str
    description: str
    fn: Callable  # () -> float, or () -> per-seed array (then mean and paired SE)


def _fig1_tau2():
    from icl_symbolic.theory import asymptotic as theory

    return float(theory.e_nonlinear("sin(g)", theory.Ratios(rho=0.1, alpha=2, kappa=2, tau=2)))


def _fig1_legend():
    from icl_symbolic.engine import hermite

    return float(hermite.hermite_coeffs("sin(g)", rho="0.1").noise_normalized.value)


def _relu_rho_nonlinear():
    from icl_symbolic.engine import hermite

    return float(hermite.hermite_coeffs("relu(g)", rho="0.1").rho_nonlinear.value)


def _eq11_kappa_half():
    from icl_symbolic.engine import hermite
    from icl_symbolic.theory import asymptotic as theory

    r = hermite.hermite_coeffs("sin(g)", rho="0.1")
    return float(theory.task_diversity_limit(0.5, float(r.rho_nonlinear.value), a1=float(r.a1.value), ratio=0.5))


def _eq11_kappa_two():
    from icl_symbolic.engine import hermite
    from icl_symbolic.theory import asymptotic as theory

    r = hermite.hermite_coeffs("sin(g)", rho="0.1")
    return float(theory.task_diversity_limit(2.0, float(r.rho_nonlinear.value), a1=float(r.a1.value), ratio=0.5))


def _a1zero_ridge():
    from icl_symbolic.theory import asymptotic as theory

    return float(theory.e_nonlinear(None, theory.Ratios(alpha=2, kappa=2, tau=2, lam=0.1), a1=0.0, rho_nonlinear=0.5))


def _a1zero_tau2():
    from icl_symbolic.theory import asymptotic as theory

    return float(theory.e_nonlinear(None, theory.Ratios(alpha=2, kappa=2, tau=2), a1=0.0, rho_nonlinear=0.5))


def _eq15_lam_tilde_limit():
    from icl_symbolic.theory import a1zero

    D = a1zero.derive()
    s = D.symbols
    return float(D.lam_tilde_limit_below.subs({s["q"]: sympy.Rational(1, 4), s["tau"]: sympy.Rational(1, 2)}))


def _lemma1(name):
    def fn():
        from icl_symbolic.model import moments

        return float(getattr(moments.conditional_moments("sin(g)", "0.1", d=64, ell=128), name).value)

    return fn


def _simulated_fig1_point():
    from icl_symbolic.simulation import simulator as simulation

    res = simulation.simulate_many(
        [dict(f="sin(g)", d=32, alpha=2, kappa=2, tau=2, rho=0.1, seeds=tuple(range(10)), n_test=200)]
    )[0]
    return np.array([float(r.e) for r in res.runs])


F_A1ZERO = "(g**2-1)/sqrt(2)"
F_KERNEL = "g + (g**2 - 1)/sqrt(2)"


def _finite_d(f, upto, d, tau, **kw):
    def fn():
        from icl_symbolic.theory import finite_d

        terms = finite_d.TERMS[: finite_d.TERMS.index(upto) + 1]
        return float(finite_d.e_nonlinear_finite(f, 0.1, 2.0, 2.0, tau, d=d, terms=terms, **kw).corrected)

    return fn


def _sizes_probe(rounding):
    def fn():
        from icl_symbolic.simulation import simulator as simulation

        sz = simulation.sizes(20, 2.025, 0.325, 0.5125, rounding)
        return float(sz.ell * 1_000_000 + sz.k * 1_000 + sz.n)  # any change of ell, k or n moves it

    return fn


def _letey_sizes():
    from icl_symbolic.model.setting import CONVENTIONS
    from icl_symbolic.simulation import simulator as simulation

    sz = simulation.sizes(20, 2, 0.33, 2, CONVENTIONS["letey2024"].rounding)
    return float(sz.k * 1_000 + sz.n)


def _default_assignment_random():
    from icl_symbolic.model.setting import CONVENTIONS

    return float(CONVENTIONS["default"].assignment == "random")


def _kernel_rho_eff():
    from icl_symbolic.kernel_learner import theory as kt

    return float(kt.kernel_spectrum(F_KERNEL, "hermite:2", rho=0.1, d=10, tasks="gaussian").rho_eff)


def _ladder_se():
    from icl_symbolic.studies.extrapolate import LadderPoint, fit_ladder

    rng = np.random.default_rng(1)
    pts = []
    for d in (16, 24, 32, 48):
        v = 0.7 + 1.3 / d + 0.05 * rng.standard_normal(10)
        pts.append(LadderPoint(d, float(v.mean()), float(v.std(ddof=1) / math.sqrt(10)), values=tuple(v)))
    return float(fit_ladder(pts, model="c1/d").e_inf_se)


def _reproduce_se():
    from icl_symbolic.studies.reproduce import parse_columns, read_table

    fixed = {"alpha": 2, "kappa": 2, "tau": 2, "rho": 0.1, "lam": 0.0}
    cols = parse_columns("d=d,mean=mean,spread=sd,runs=runs")
    return float(read_table("d,mean,sd,runs\n32,1.5,0.4,16\n", cols, fixed)[0].theirs_se)


def _eq10_factor(tasks, tau):
    def fn():
        from icl_symbolic.verification.checks.simulation import eq10_exact_factors

        p = dict(versus="theory", error="icl", tasks=tasks, lam=0.0, C_train="identity", alpha=2.0, kappa=2.0, tau=tau)
        return float(eq10_exact_factors(F_A1ZERO, 0.1, p, [16], "identity")[16])

    return fn


def _lu2024_iso():
    from icl_symbolic.theory import asymptotic as theory

    return float(theory.e_linear_isotropic(0.1, 2.0, 0.5, 0.3))


PROBES = {
    p.name: p
    for p in (
        Probe(
            "fig1_theory_tau2", "Fig. 1 theory: e_nonlinear(sin(g), rho = 0.1, alpha = kappa = 2, tau = 2)", _fig1_tau2
        ),
        Probe("fig1_legend", "Fig. 1 legend: rho_nonlinear/a1^2 = 0.447029 for sin(g), rho = 0.1", _fig1_legend),
        Probe(
            "relu_rho_nonlinear", "rho_nonlinear of relu(g) at rho = 0.1 (a0 = 1/sqrt(2 pi) != 0)", _relu_rho_nonlinear
        ),
        Probe(
            "eq11_limit_kappa0.5",
            "Eq. (11) limit function at kappa = 0.5, tau/alpha = 1/2, sin(g), rho = 0.1",
            _eq11_kappa_half,
        ),
        Probe(
            "eq11_limit_kappa2",
            "Eq. (11) limit function at kappa = 2 (the paper's floor rho_nonlinear), sin(g), rho = 0.1",
            _eq11_kappa_two,
        ),
        Probe(
            "a1zero_ridge_tau2", "a1 = 0 branch at lam = 0.1: e(rho_nonlinear = 0.5, alpha = 2, tau = 2)", _a1zero_ridge
        ),
        Probe("a1zero_eq10_tau2", "a1 = 0 branch, Eq. (10): e(rho_nonlinear = 0.5, tau = 2) = 1", _a1zero_tau2),
        Probe(
            "eq15_lam_tilde_limit",
            "Eq. (15): lim_{lam -> 0} lam_tilde at q = 1/4, tau = 1/2 (derived in SymPy)",
            _eq15_lam_tilde_limit,
        ),
        Probe(
            "lemma1_E_uuT_I",
            "Lemma 1: E[u u^T|w] identity coefficient, sin(g), rho = 0.1, d = 64, ell = 128",
            _lemma1("E_uuT_I"),
        ),
        Probe("lemma1_E_us", "Lemma 1: E[u s|w] coefficient, sin(g), rho = 0.1, d = 64, ell = 128", _lemma1("E_us")),
        Probe("lemma1_E_s2", "Lemma 1: E[s^2|w], sin(g), rho = 0.1, d = 64, ell = 128", _lemma1("E_s2")),
        Probe(
            "sim_fig1_d32",
            "simulated Fig. 1 point: sin(g), rho = 0.1, alpha = kappa = tau = 2 at d = 32, "
            "10 seeds (exact test functional)",
            _simulated_fig1_point,
        ),
        Probe(
            "fd_sin_d20",
            "finite-d theory, sin(g), rho = 0.1, alpha = kappa = 2, tau = 0.5, d = 20: limit + sizes, param_count, "
            "task_norm, bank_resolvent",
            _finite_d("sin(g)", "bank_resolvent", 20, 0.5),
        ),
        Probe(
            "fd_a1zero_radial_d16",
            "finite-d theory, (g^2-1)/sqrt(2), tau = 0.5, d = 16: limit + terms up to radial (40000 prompts)",
            _finite_d(F_A1ZERO, "radial", 16, 0.5, mc_prompts=40_000),
        ),
        Probe(
            "fd_sin_population_d6",
            "finite-d theory, sin(g), tau = 4, d = 6: limit + terms up to population (8 banks)",
            _finite_d("sin(g)", "population", 6, 4.0, banks=8),
        ),
        Probe(
            "sizes_paper_d20",
            "simulator sizes at d = 20, alpha = 2.025, kappa = 0.325, tau = 0.5125 (paper rounding), "
            "as ell 1e6 + k 1e3 + n",
            _sizes_probe("paper"),
        ),
        Probe(
            "sizes_floork_d20",
            "simulator sizes at d = 20, alpha = 2.025, kappa = 0.325, tau = 0.5125 (floor-k), as ell 1e6 + k 1e3 + n",
            _sizes_probe("floor-k"),
        ),
        Probe(
            "letey2024_sizes",
            "simulator k 1e3 + n at d = 20, alpha = 2, kappa = 0.33, tau = 2 with the letey2024 preset's rounding",
            _letey_sizes,
        ),
        Probe(
            "default_assignment", "1 when the default preset draws tasks at random, else 0", _default_assignment_random
        ),
        Probe(
            "kernel_rho_eff",
            "kernel learner rho_eff, f = g + h_2(g), hermite:2, Gaussian tasks, d = 10 (exact: 0.2)",
            _kernel_rho_eff,
        ),
        Probe(
            "ladder_se",
            "SE of e_inf of a fixed planted ladder (d = 16-48, 10 seeds, model c1/d; the jackknife)",
            _ladder_se,
        ),
        Probe("reproduce_se", "reproduce: the SE read from std = 0.4, runs = 16 (exact: 0.1)", _reproduce_se),
        Probe(
            "eq10_factor_sphere",
            "exact finite-d factor of Eq. (10), sphere tasks, tau = 0.5, d = 16",
            _eq10_factor("sphere", 0.5),
        ),
        Probe(
            "eq10_factor_gaussian",
            "exact finite-d factor of Eq. (10), Gaussian tasks, tau = 0.5, d = 16",
            _eq10_factor("gaussian", 0.5),
        ),
        Probe(
            "lu2024_isotropic",
            "Lu et al. isotropic closed form e_ICL(rho = 0.1, alpha = 2, kappa = 0.5, tau = 0.3)",
            _lu2024_iso,
        ),
    )
}


# ---------------------------------------------------------------------------
# the mutations
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Mutation:
    name: str
    models: str  # the scientific error
    code: str  # how it maps to the code
    patches: tuple
    probe: str  # name in PROBES
    simulator: bool = False  # changes the simulator: simulations rerun
    expect: tuple = ()  # claim ids (globs) expected to catch it (documentation, tests)
    tests: tuple = ()  # pytest node ids run under it besides PIN_TESTS (--smoke runs only these)
    smoke: bool = False  # in the CI smoke subset (--smoke)


def _replace_moment(name, fn):
    """symbolic_moments() with coefficient ``name`` replaced by ``fn(expr, symbols by name)``."""

    def edit(forms):
        forms = dict(forms)
        e = forms[name]
        syms = {s.name: s for s in e.free_symbols}
        forms[name] = sympy.simplify(fn(e, syms))
        return forms

    return edit


def _E_s2_leading(e, s):
    # (1 - 1/ell) R^2 + (1/ell)(E_f4 + 6 rho E_f2 + 3 rho^2)  ->  R^2: the 1/ell term dropped
    return sympy.limit(e, s["ell"], sympy.oo)


def _E_us_wrong_isserlis(e, s):
    # (1/ell)(E_zf3 + 3 rho E_zf)/omega -> (1/ell)(E_zf3 + rho E_zf)/omega: E[eps^2] counted once
    E_zf = [a for a in e.atoms(sympy.Function) if a.func.__name__ == "E_zf"][0]
    return e - 2 * s["rho"] * E_zf / (s["ell"] * s["omega"])


def _physicists_h(orig):
    @functools.wraps(orig)
    def h(m, x=None):
        from icl_symbolic.core.symbols import g

        x = g if x is None else x
        m = int(m)
        return sympy.expand(sympy.hermite(m, x)) / sympy.sqrt(2**m * sympy.factorial(m))

    return h


def _scale_tasks(orig):
    @functools.wraps(orig)
    def sample_tasks(cov, k, rng, *args, **kwargs):
        return orig(cov, k, rng, *args, **kwargs) * math.sqrt(1.02)

    return sample_tasks


def _noise_x102(args, kwargs):
    task = args[0]
    return (replace(task, rho=task.rho * 1.02),) + tuple(args[1:]), kwargs


def _sizes_d_plus_1(orig):
    @functools.wraps(orig)
    def counts(d, alpha, kappa, tau, rounding="paper", clamp=False):
        sz = orig(int(d) + 1, alpha, kappa, tau, rounding, clamp)
        return type(sz)(int(d), sz.ell, sz.k, sz.n)

    return counts


def _closed_form_scaled(factor):
    """e_linear_isotropic x factor on its closed-form branch (lam = 0) only: with lam > 0 it calls
    theory._error, which the same mutation already scales."""

    def make(orig):
        @functools.wraps(orig)
        def mutant(rho, alpha, kappa, tau, lam=0.0):
            out = orig(rho, alpha, kappa, tau, lam)
            return out * factor if lam == 0 else out

        return mutant

    return make


def _linear_scaled(f):
    return (
        Patch("icl_symbolic.theory.asymptotic", "_error", scaled(f)),
        Patch("icl_symbolic.theory.asymptotic", "e_linear_isotropic", _closed_form_scaled(f)),
    )


MUTATIONS = (
    Mutation(
        "linear_theory_x1.005",
        "a uniform +0.5 % error in the linear ICL error e_linear (Lu et al.; Result 1 reuses it)",
        "theory._error (the recipe behind e_linear, e_nonlinear, "
        "e_nonlinear_normalized, curve and the ridge branch of e_linear_isotropic) and the closed form "
        "of theory.e_linear_isotropic (lam = 0) x 1.005",
        _linear_scaled(1.005),
        "fig1_theory_tau2",
        expect=("eq11.limit_kappa2", "a1zero.continuity_result1", "fig2.floor_is_limit"),
    ),
    Mutation(
        "linear_theory_x1.02",
        "a uniform +2 % error in the linear ICL error",
        "as linear_theory_x1.005, x 1.02",
        _linear_scaled(1.02),
        "fig1_theory_tau2",
        expect=("eq11.limit_kappa2",),
    ),
    Mutation(
        "linear_recipe_steps45_x1.005",
        "+0.5 % in steps 4-5 of the linear theory (the error formula given M, M')",
        "linear_recipe.linear_error x 1.005 (used by theory._error and, in SymPy, by a1zero.derive)",
        (Patch("icl_symbolic.theory.linear_recipe", "linear_error", scaled(1.005)),),
        "fig1_theory_tau2",
        expect=("coverage.a1zero_ridge_from_linear_recipe",),
    ),
    Mutation(
        "stieltjes_M_x1.01",
        "the Stieltjes transform M(nu) of the task covariance 1 % too large",
        "stieltjes.stieltjes (.M field) and stieltjes.stieltjes_isotropic (M) x 1.01",
        (
            Patch("icl_symbolic.theory.stieltjes", "stieltjes", edited_result(lambda st: replace(st, M=st.M * 1.01))),
            Patch(
                "icl_symbolic.theory.stieltjes", "stieltjes_isotropic", edited_result(lambda mm: (mm[0] * 1.01, mm[1]))
            ),
        ),
        "fig1_theory_tau2",
    ),
    Mutation(
        "result1_cov_scale_a1_not_a1sq",
        "Result 1 maps the task covariance to a1 C instead of a1^2 C (an a1^2 normalisation slip in Eq. (9))",
        "theory.e_nonlinear: .scaled(a1f * a1f) -> .scaled(abs(a1f))",
        (
            Patch(
                "icl_symbolic.theory.asymptotic",
                "e_nonlinear",
                source_edit((".scaled(a1f * a1f)", ".scaled(abs(a1f))")),
            ),
        ),
        "fig1_theory_tau2",
        expect=("result1.homogeneity_*",),
    ),
    Mutation(
        "a1zero_fixed_point_2lam",
        "Eq. (15) fixed point with a wrong coefficient: chi0 = q/(q tau/(1 + chi0) + 2 tau lam) (numeric root)",
        "a1zero.chi0_value: A = tau lam -> 2 tau lam, B = q tau + tau lam - q -> q tau + 2 tau lam - q",
        (
            Patch(
                "icl_symbolic.theory.a1zero",
                "chi0_value",
                source_edit(
                    ("A = tau * lam", "A = 2.0 * tau * lam"),
                    ("B = q * tau + tau * lam - q", "B = q * tau + 2.0 * tau * lam - q"),
                ),
            ),
        ),
        "a1zero_ridge_tau2",
        expect=("coverage.a1zero_ridge_branch",),
    ),
    Mutation(
        "a1zero_fixed_point_2lam_symbolic",
        "the same wrong Eq. (15) coefficient in the SymPy derivation",
        "a1zero.derive: tau * lam -> 2 * tau * lam in the fixed point and its quadratic",
        (
            Patch(
                "icl_symbolic.theory.a1zero",
                "derive",
                source_edit(
                    (
                        "fixed = sp.Eq(chi, q / (q * tau / (1 + chi) + tau * lam))",
                        "fixed = sp.Eq(chi, q / (q * tau / (1 + chi) + 2 * tau * lam))",
                    ),
                    (
                        "quad = sp.expand(chi * (q * tau + tau * lam * (1 + chi)) - q * (1 + chi))",
                        "quad = sp.expand(chi * (q * tau + 2 * tau * lam * (1 + chi)) - q * (1 + chi))",
                    ),
                ),
            ),
        ),
        "eq15_lam_tilde_limit",
        expect=("a1zero.eq15_lam_tilde",),
    ),
    Mutation(
        "a1zero_ridge_lam_for_lam_tilde",
        "the a1 = 0 ridge branch (lam > 0) with the bare ridge lam where the "
        "renormalised lam_tilde = lam (1 + chi0) belongs",
        "a1zero.e_a1zero: (q + lt) ** 2 -> (q + lam) ** 2",
        (Patch("icl_symbolic.theory.a1zero", "e_a1zero", source_edit(("(q + lt) ** 2", "(q + lam) ** 2"))),),
        "a1zero_ridge_tau2",
        expect=("coverage.a1zero_ridge_branch",),
    ),
    Mutation(
        "a1zero_eq10_drop_tau",
        "Eq. (10) above the peak without its factor tau: rho_nonlinear/(tau - 1)",
        "a1zero.e_a1zero: rho_nonlinear * tau / (tau - 1.0) -> rho_nonlinear / (tau - 1.0)",
        (
            Patch(
                "icl_symbolic.theory.a1zero",
                "e_a1zero",
                source_edit(("rho_nonlinear * tau / (tau - 1.0)", "rho_nonlinear / (tau - 1.0)")),
            ),
        ),
        "a1zero_eq10_tau2",
        expect=("notes.a1zero_tau_two", "a1zero.continuity_result1"),
    ),
    Mutation(
        "eq11_limit_drop_ratio",
        "the Eq. (11) limit function below kappa = 1 without the tau/alpha ratio",
        "theory.task_diversity_limit: rho_nonlinear / (rho_f * ratio) -> rho_nonlinear / rho_f",
        (
            Patch(
                "icl_symbolic.theory.asymptotic",
                "task_diversity_limit",
                source_edit(("/ (rho_f * ratio)))", "/ rho_f))")),
            ),
        ),
        "eq11_limit_kappa0.5",
        expect=("coverage.eq11_limit_function_below",),
    ),
    Mutation(
        "eq11_limit_drop_a1sq",
        "the Eq. (11) limit function below kappa = 1 with the unseen signal (1 - kappa) not scaled by a1^2",
        "theory.task_diversity_limit: c * (1 - kappa) -> (1 - kappa)",
        (
            Patch(
                "icl_symbolic.theory.asymptotic",
                "task_diversity_limit",
                source_edit(("c * (1 - kappa)", "(1 - kappa)")),
            ),
        ),
        "eq11_limit_kappa0.5",
        expect=("coverage.eq11_limit_function_below",),
    ),
    Mutation(
        "eq11_limit_floor_over_a1sq",
        "the Eq. (11) floor above kappa = 1 in the normalised units of the "
        "equivalent linear teacher, rho_nonlinear/a1^2, instead of rho_nonlinear (the slips catalogue's "
        "a1^2 normalisation)",
        "theory.task_diversity_limit: return float(rho_nonlinear) -> return float(rho_nonlinear) / float(a1) ** 2",
        (
            Patch(
                "icl_symbolic.theory.asymptotic",
                "task_diversity_limit",
                source_edit(("return float(rho_nonlinear)\n", "return float(rho_nonlinear) / float(a1) ** 2\n")),
            ),
        ),
        "eq11_limit_kappa2",
        expect=("coverage.eq11_limit_function_above",),
    ),
    Mutation(
        "hermite_rho_f_for_rho_nonlinear",
        "rho_f used where rho_nonlinear belongs (Eq. (8): the a1^2 term not "
        "removed; the slips catalogue's total_for_residual)",
        "hermite.hermite_coeffs: rho_nl = rho_f - a1_sq -> rho_nl = rho_f",
        (
            Patch(
                "icl_symbolic.engine.hermite",
                "hermite_coeffs",
                source_edit(("rho_nl = rho_f - a1_sq", "rho_nl = rho_f")),
            ),
        ),
        "fig1_legend",
        expect=("notes.sin_rho_nonlinear", "fig1.legend_noise"),
    ),
    Mutation(
        "hermite_noise_not_over_a1sq",
        "the normalised noise rho_nonlinear/a1^2 without the division by a1^2 (dropped a1^2 normalisation)",
        "hermite.hermite_coeffs: noise_norm = (rho_nl / a1_sq).value -> rho_nl.value",
        (
            Patch(
                "icl_symbolic.engine.hermite",
                "hermite_coeffs",
                source_edit(("noise_norm = (rho_nl / a1_sq).value(", "noise_norm = rho_nl.value(")),
            ),
        ),
        "fig1_legend",
    ),
    Mutation(
        "hermite_drop_m0",
        "rho_nonlinear without the m = 0 term a0^2 (Eq. (8) sums over m != 1, m = 0 included)",
        "hermite.hermite_coeffs: rho_nl = rho_f - a1_sq -> rho_f - a1_sq - a0^2",
        (
            Patch(
                "icl_symbolic.engine.hermite",
                "hermite_coeffs",
                source_edit(("rho_nl = rho_f - a1_sq", "rho_nl = rho_f - a1_sq - _Q.of(a_vals[0]) * _Q.of(a_vals[0])")),
            ),
        ),
        "relu_rho_nonlinear",
        expect=("eq8.rho_nonlinear_sum_includes_m0",),
    ),
    Mutation(
        "hermite_physicists",
        "the physicists' Hermite polynomials H_m/sqrt(2^m m!) (weight exp(-g^2)) "
        "instead of the probabilists' h_m = He_m/sqrt(m!) (slips catalogue: Hermite conventions)",
        "orthopoly.h at every lookup site (hermite, expr, ...)",
        (Patch("icl_symbolic.engine.orthopoly", "h", _physicists_h),),
        "fig1_legend",
        expect=("eq2.orthonormal_h2", "notes.sin_a1_squared"),
    ),
    Mutation(
        "hermite_not_normalised",
        "He_m without the 1/sqrt(m!) (monic, not orthonormal)",
        "orthopoly.h -> orthopoly.he at every lookup site",
        (
            Patch(
                "icl_symbolic.engine.orthopoly",
                "h",
                lambda orig: importlib.import_module("icl_symbolic.engine.orthopoly").he,
            ),
        ),
        "fig1_legend",
        expect=("eq2.orthonormal_h2",),
    ),
    Mutation(
        "lemma1_E_uuT_I_no_noise",
        "Lemma 1 with a wrong moment coefficient: E[u u^T|w] = (d/ell) E[f^2] I "
        "(the label noise rho left out of R = E[y^2|w])",
        "moments.symbolic_moments: E_uuT_I with rho = 0 (and the generated NumPy forms rebuilt from it)",
        (
            Patch(
                "icl_symbolic.model.moments",
                "symbolic_moments",
                edited_result(_replace_moment("E_uuT_I", lambda e, s: e.subs(s["rho"], 0))),
            ),
            Patch("icl_symbolic.model._lemma1_forms", "KEY", constant("mutated"), here_only=True),
        ),
        "lemma1_E_uuT_I",
        expect=("lemma1.E_hh",),
    ),
    Mutation(
        "lemma1_E_us_isserlis",
        "Lemma 1's finite-ell term of E[u s|w] with 3 rho E_zf counted as rho E_zf "
        "(a wrong Isserlis coefficient, O(1/ell))",
        "moments.symbolic_moments: E_us - 2 rho E_zf/(ell omega)",
        (
            Patch(
                "icl_symbolic.model.moments",
                "symbolic_moments",
                edited_result(_replace_moment("E_us", _E_us_wrong_isserlis)),
            ),
            Patch("icl_symbolic.model._lemma1_forms", "KEY", constant("mutated"), here_only=True),
        ),
        "lemma1_E_us",
        expect=("lemma1.finite_ell_E_us_mc",),
    ),
    Mutation(
        "lemma1_drop_finite_ell_E_s2",
        "the finite-context term of E[s^2|w] dropped (only the ell -> infinity "
        "limit R^2 kept): a dropped finite-size term",
        "moments.symbolic_moments: E_s2 -> its ell -> infinity limit",
        (
            Patch(
                "icl_symbolic.model.moments", "symbolic_moments", edited_result(_replace_moment("E_s2", _E_s2_leading))
            ),
            Patch("icl_symbolic.model._lemma1_forms", "KEY", constant("mutated"), here_only=True),
        ),
        "lemma1_E_s2",
        expect=("lemma1.finite_ell_E_s2_mc",),
    ),
    Mutation(
        "sim_sizes_d_plus_1",
        "d + 1 for d in the simulator's sizes: ell = alpha (d+1), k = kappa (d+1), n = tau (d+1)^2 at dimension d",
        "model.sizes.counts (what simulation.sizes and Setting.sizes compute) at every lookup site",
        (Patch("icl_symbolic.model.sizes", "counts", _sizes_d_plus_1),),
        "sim_fig1_d32",
        simulator=True,
        expect=("setup.finite_d_peak",),
        tests=("tests/test_library_pins.py::test_simulator_sizes_hand_values",),
        smoke=True,
    ),
    Mutation(
        "sim_task_variance_x1.02",
        "tasks drawn with 1.02 times the task covariance in the simulator",
        "covariance.sample_tasks as the simulator looks it up (simulation, kernel_sim): w x sqrt(1.02)",
        (
            Patch(
                "icl_symbolic.model.covariance",
                "sample_tasks",
                _scale_tasks,
                only_in=("icl_symbolic.simulation.simulator", "icl_symbolic.kernel_learner.simulation"),
            ),
        ),
        "sim_fig1_d32",
        simulator=True,
    ),
    Mutation(
        "sim_label_noise_x1.02",
        "label noise rho x 1.02 in the simulator (training prompts, test prompts and the exact test functional)",
        "simulation._run_seed: the seed task's rho x 1.02",
        (Patch("icl_symbolic.simulation.simulator", "_run_seed", edited_arguments(_noise_x102)),),
        "sim_fig1_d32",
        simulator=True,
    ),
    Mutation(
        "sim_sizes_floork_n_not_multiple",
        "the floor-k rounding without its multiple of k: n = round(tau d^2) instead of round(tau d^2/k) k",
        "model.sizes.counts: int(round(tau * d * d / k)) * k -> int(round(tau * d * d))",
        (
            Patch(
                "icl_symbolic.model.sizes",
                "counts",
                source_edit(("int(round(tau * d * d / k)) * k", "int(round(tau * d * d))")),
            ),
        ),
        "sizes_floork_d20",
        simulator=True,
    ),
    Mutation(
        "sim_sizes_floork_ell_floor",
        "ell = floor(alpha d) instead of round(alpha d) under the floor-k rounding",
        "model.sizes.counts: ell = ... else round_half_up(alpha * d) -> ... else int(alpha * d)",
        (
            Patch(
                "icl_symbolic.model.sizes",
                "counts",
                source_edit(("else round_half_up(alpha * d)", "else int(alpha * d)")),
            ),
        ),
        "sizes_floork_d20",
        simulator=True,
    ),
    Mutation(
        "preset_letey2024_rounding_paper",
        "the letey2024 preset with the paper rounding instead of its documented one",
        "model.setting.CONVENTIONS['letey2024'].rounding -> the other rounding",
        (
            Patch(
                "icl_symbolic.model.setting",
                "CONVENTIONS",
                lambda orig: {
                    **orig,
                    "letey2024": replace(
                        orig["letey2024"], rounding="paper" if orig["letey2024"].rounding != "paper" else "floor-k"
                    ),
                },
            ),
        ),
        "letey2024_sizes",
        tests=(
            "tests/test_library_pins.py::test_every_preset_matches_its_documented_values",
            "tests/test_library_pins.py::test_simulator_uses_the_preset_rounding",
        ),
        smoke=True,
    ),
    Mutation(
        "preset_default_assignment_random",
        "the default preset drawing each prompt's task at random instead of its documented assignment",
        "model.setting.CONVENTIONS['default'].assignment -> the other assignment",
        (
            Patch(
                "icl_symbolic.model.setting",
                "CONVENTIONS",
                lambda orig: {
                    **orig,
                    "default": replace(
                        orig["default"],
                        assignment="random" if orig["default"].assignment != "random" else "round-robin",
                    ),
                },
            ),
        ),
        "default_assignment",
    ),
    Mutation(
        "fd_sizes_k_floor",
        "the finite-d theory's sizes term with k = floor(kappa d) where the simulator it models rounds",
        "finite_d.finite_sizes: k = round(kappa d) -> max(1, int(kappa d))",
        (
            Patch(
                "icl_symbolic.theory.finite_d",
                "finite_sizes",
                source_edit(("return (sz.ell, sz.k, sz.n)", "return (sz.ell, max(1, int(kappa * d)), sz.n)")),
            ),
        ),
        "fd_sin_d20",
    ),
    Mutation(
        "fd_param_count_d_squared",
        "the param_count term with p = d^2 parameters (the b column forgotten): tau_eff = n/d^2",
        "finite_d.e_nonlinear_finite: ta = (...) / p -> ta = (...) / (d * d)",
        (
            Patch(
                "icl_symbolic.theory.finite_d",
                "e_nonlinear_finite",
                source_edit(
                    (
                        'ta = (n if "sizes" in on else tau * d * d) / p',
                        'ta = (n if "sizes" in on else tau * d * d) / (d * d)',
                    )
                ),
            ),
        ),
        "fd_sin_d20",
        tests=("tests/test_library_pins.py::test_finite_d_param_count_term_is_tau_over_d_plus_1",),
        smoke=True,
    ),
    Mutation(
        "fd_task_norm_a1sq_x1.005",
        "the task_norm term's a1_eff^2 0.5 % too large",
        "finite_d.task_norm_moments: a1_eff^2 x 1.005",
        (Patch("icl_symbolic.theory.finite_d", "task_norm_moments", edited_result(lambda t: (t[0] * 1.005, t[1]))),),
        "fd_sin_d20",
    ),
    Mutation(
        "fd_task_norm_rho_nl_x1.005",
        "the task_norm term's rho_nl_eff 0.5 % too large",
        "finite_d.task_norm_moments: rho_nl_eff x 1.005",
        (Patch("icl_symbolic.theory.finite_d", "task_norm_moments", edited_result(lambda t: (t[0], t[1] * 1.005))),),
        "fd_sin_d20",
    ),
    Mutation(
        "fd_bank_resolvent_x1.005",
        "the Bai-Silverstein mean shift g(-nu) of the bank_resolvent term 0.5 % too large",
        "finite_d.bs_mean_correction x 1.005",
        (Patch("icl_symbolic.theory.finite_d", "bs_mean_correction", scaled(1.005)),),
        "fd_sin_d20",
    ),
    Mutation(
        "fd_bank_resolvent_complex_case",
        "the complex-Gaussian Bai-Silverstein mean (zero) instead of the real case: the term vanishes",
        "finite_d.bs_mean_correction -> 0",
        (Patch("icl_symbolic.theory.finite_d", "bs_mean_correction", scaled(0.0)),),
        "fd_sin_d20",
    ),
    Mutation(
        "fd_radial_x1.005",
        "the radial (elliptical) a1 = 0 error 0.5 % too large",
        "finite_d.e_radial: value x 1.005",
        (Patch("icl_symbolic.theory.finite_d", "e_radial", edited_result(lambda t: (t[0] * 1.005, t[1]))),),
        "fd_a1zero_radial_d16",
    ),
    Mutation(
        "fd_radial_minnorm_factor",
        "the radial min-norm variance factor n/(p - n + 1) instead of n/(p - n) (an off-by-one in p)",
        "finite_d.e_radial: n / (p - n - (1 if wishart else 0)) -> n / (p - n + 1 - (1 if wishart else 0))",
        (
            Patch(
                "icl_symbolic.theory.finite_d",
                "e_radial",
                source_edit(
                    ("factor = n / (p - n - (1 if wishart else 0))", "factor = n / (p - n + 1 - (1 if wishart else 0))")
                ),
            ),
        ),
        "fd_a1zero_radial_d16",
    ),
    Mutation(
        "fd_population_x1.005",
        "the population term (a1 != 0, n > p) 0.5 % too large",
        "finite_d.e_population_ols: value x 1.005",
        (
            Patch(
                "icl_symbolic.theory.finite_d",
                "e_population_ols",
                edited_result(lambda po: replace(po, value=po.value * 1.005)),
            ),
        ),
        "fd_sin_population_d6",
    ),
    Mutation(
        "fd_population_x1.05",
        "the population term (a1 != 0, n > p) 5 % too large",
        "finite_d.e_population_ols: value x 1.05",
        (
            Patch(
                "icl_symbolic.theory.finite_d",
                "e_population_ols",
                edited_result(lambda po: replace(po, value=po.value * 1.05)),
            ),
        ),
        "fd_sin_population_d6",
    ),
    Mutation(
        "eq10_wishart_drop_minus_1",
        "Eq. (10)'s exact finite-d form without the inverse-Wishart -1: n/(p - n) instead of n/(p - n - 1)",
        "finite_d._eq10_wishart: nn / (p - nn - 1.0) -> nn / (p - nn)",
        (
            Patch(
                "icl_symbolic.theory.finite_d", "_eq10_wishart", source_edit(("nn / (p - nn - 1.0)", "nn / (p - nn)"))
            ),
        ),
        "eq10_factor_gaussian",
    ),
    Mutation(
        "eq10_sphere_law_task_norm",
        "the sphere-law factor of Eq. (10) with the Gaussian task-norm noise 3/d (sphere tasks have none)",
        "checks.simulation.eq10_exact_factors: the sphere law's terms gain task_norm",
        (
            Patch(
                "icl_symbolic.verification.checks.simulation",
                "eq10_exact_factors",
                source_edit(
                    (
                        'else ("sizes", "param_count", "wishart")',
                        'else ("sizes", "param_count", "task_norm", "wishart")',
                    )
                ),
            ),
        ),
        "eq10_factor_sphere",
    ),
    Mutation(
        "kernel_omega_moment",
        "the kernel learner's Gaussian-task mode split with E omega^j = prod (1 + i/d) instead of prod (1 + 2i/d)",
        "kernel_learner.theory._omega_moment: Fraction(d + 2 * i, d) -> Fraction(d + i, d)",
        (
            Patch(
                "icl_symbolic.kernel_learner.theory",
                "_omega_moment",
                source_edit(("Fraction(d + 2 * i, d)", "Fraction(d + i, d)")),
            ),
        ),
        "kernel_rho_eff",
    ),
    Mutation(
        "kernel_rho_eff_linear_only",
        "the kernel learner's rho_eff with only the linear mode removed (the captured higher modes left in the noise)",
        "kernel_learner.theory.kernel_spectrum: rho + E f^2 - captured -> rho + E f^2 - B[1, 1]",
        (
            Patch(
                "icl_symbolic.kernel_learner.theory",
                "kernel_spectrum",
                source_edit(
                    (
                        "rho_eff = float(rho) + bm.E_f2_float - captured",
                        "rho_eff = float(rho) + bm.E_f2_float - float(bm.B[1, 1])",
                    )
                ),
            ),
        ),
        "kernel_rho_eff",
    ),
    Mutation(
        "stats_jackknife_se_x0.7",
        "the standard error the ladder verdicts use (the grouped jackknife) 30 % too small",
        "core.stats.grouped_jackknife_se x 0.7 at every lookup site",
        (Patch("icl_symbolic.core.stats", "grouped_jackknife_se", scaled(0.7)),),
        "ladder_se",
        tests=("tests/test_library_pins.py::test_grouped_jackknife_se_of_linear_statistics_is_the_textbook_se",),
        smoke=True,
    ),
    Mutation(
        "stats_jackknife_se_x1.2",
        "the standard error the ladder verdicts use (the grouped jackknife) 20 % too large",
        "core.stats.grouped_jackknife_se x 1.2 at every lookup site",
        (Patch("icl_symbolic.core.stats", "grouped_jackknife_se", scaled(1.2)),),
        "ladder_se",
    ),
    Mutation(
        "reproduce_std_as_se",
        "reproduce reading a per-run standard deviation as the standard error of the mean",
        "studies.reproduce.read_table: se = sp / sqrt(runs) -> se = sp",
        (
            Patch(
                "icl_symbolic.studies.reproduce",
                "read_table",
                source_edit(('se = sp / math.sqrt(runs if spread == "std" else runs - 1)', "se = sp")),
            ),
        ),
        "reproduce_se",
        tests=("tests/test_library_pins.py::test_reproduce_reads_a_per_run_std_as_std_over_sqrt_runs",),
        smoke=True,
    ),
    Mutation(
        "lu2024_closed_form_x1.005",
        "the sister paper's isotropic closed form e_ICL (Lu et al.) 0.5 % too large (the general recipe unchanged)",
        "theory.e_linear_isotropic x 1.005 on its closed-form branch (lam = 0)",
        (Patch("icl_symbolic.theory.asymptotic", "e_linear_isotropic", _closed_form_scaled(1.005)),),
        "lu2024_isotropic",
        expect=("lu2024.icl_isotropic_closed_form",),
    ),
)


# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------
def claim_tier(c) -> str:
    """The claim's tier: its ``tier`` field where the claim files have one, else quick / full."""
    t = getattr(c, "tier", None)
    return t if t in TIERS else ("full" if c.full else "quick")


#: claim folders run besides the default paper's claims (``verify`` leaves the sister paper's out)
EXTRA_CLAIMS = ("derivations/lu2024",)


def load(claims_globs=None, paths=None):
    claims = claimfile.load_claims(paths)
    if paths is None:
        claims += claimfile.load_claims([str(ROOT / p) for p in EXTRA_CLAIMS if (ROOT / p).exists()])
    if claims_globs:
        claims = [c for c in claims if any(fnmatch.fnmatchcase(c.id, g) for g in claims_globs)]
    return claims


@contextlib.contextmanager
def without_diagnosis_of_holds_claims():
    """Run the check kinds without the scale-mismatch diagnosis for claims expected to HOLD.

    A claim expected to hold is not ok on any mismatch, whatever the diagnosis says, so the
    diagnosis (a search of the family and of the slips catalogue at every point of a sweep,
    seconds per claim) cannot change whether it catches a mutation.  Claims expected to be
    mismatches keep it: their diagnosis decides whether they are ok.
    """
    table = REGISTRY
    saved = dict(table)

    def wrap(kind):
        def func(claim, *args, **kwargs):
            out = kind.func(claim, *args, **kwargs)
            if claim.expected == "holds":
                out.diagnosis_fn = None
            return out

        return replace(kind, func=func)

    try:
        for name, kind in saved.items():
            table[name] = wrap(kind)
        yield
    finally:
        table.clear()
        table.update(saved)


def run(claims, tier: str, progress=None, cache=None):
    """run_claims for the claims of ``tier`` (and the tiers below it); ``cache``: a folder of simulated
    seeds (verify --cache) for runs whose simulator is NOT mutated (the cache key digests the source
    files, not a monkeypatch, so a simulator mutation must never read it)."""
    rank = TIERS.index(tier)
    chosen = [c for c in claims if TIERS.index(claim_tier(c)) <= rank]
    params = inspect.signature(runner.run_claims).parameters
    with without_diagnosis_of_holds_claims():
        if "tier" in params:
            results = runner.run_claims(chosen, tier=tier, progress=progress, cache=cache)
        else:
            results = runner.run_claims(chosen, full=rank > 0, progress=progress)
    return {r.claim.id: r for r in results if r.verdict != "skipped"}


def measure(probe: Probe) -> dict:
    """The probe's value (and its per-seed values); ``{"error": ...}`` when it raises."""
    try:
        out = probe.fn()
    except Exception as exc:  # a probe that raises under a mutation: reported, never a catch
        return {"error": _short(f"{type(exc).__name__}: {exc}")}
    if isinstance(out, np.ndarray):
        return {"values": out.tolist(), "value": float(out.mean())}
    return {"value": float(out)}


def relative_change(clean: dict, mutated: dict) -> dict:
    """Relative change of the probe; for per-seed probes the SE of the paired relative differences."""
    if "error" in clean or "error" in mutated:
        return {"clean": clean.get("value"), "mutated": None, "rel_change": None, "error": mutated.get("error")}
    c, m = clean["value"], mutated["value"]
    rel = (m - c) / abs(c) if c != 0 else (0.0 if m == 0 else math.inf)
    out = {"clean": c, "mutated": m, "rel_change": rel}
    if "values" in clean and "values" in mutated:
        diffs = np.array(mutated["values"]) / np.array(clean["values"]) - 1.0
        out["rel_change_se"] = float(diffs.std(ddof=1) / math.sqrt(diffs.size))
        out["n_seeds"] = int(diffs.size)
    return out


def _short(detail: str, n: int = 160) -> str:
    d = " ".join(str(detail).split())
    return d if len(d) <= n else d[: n - 3] + "..."


# ---------------------------------------------------------------------------
# the pin tests, run in a subprocess with the mutation installed
# ---------------------------------------------------------------------------
def _recorder():
    """A pytest plugin recording each test's outcome: ``passed``, ``skipped``, ``value`` (an assertion on a
    value failed: an AssertionError in the test body, pytest.approx included) or ``error`` (any other
    exception, in the body, a fixture or the collection: a guard or a crash, never a catch)."""
    import pytest

    class Recorder:
        def __init__(self):
            self.results = {}

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            outcome = yield
            rep = outcome.get_result()
            if rep.passed and rep.when != "call":
                return
            if rep.passed:
                kind = "passed"
            elif rep.skipped:
                kind = "skipped"
            elif rep.when == "call" and call.excinfo is not None and call.excinfo.errisinstance(AssertionError):
                kind = "value"
            else:
                kind = "error"
            msg = ""
            if call.excinfo is not None and not rep.skipped:
                text = str(call.excinfo.value).strip().splitlines()
                msg = _short(f"{call.excinfo.typename}: {text[0] if text else ''}")
            prev = self.results.get(item.nodeid)
            if prev is None or prev["outcome"] in ("passed", "skipped"):
                self.results[item.nodeid] = {"outcome": kind, "when": rep.when, "message": msg}

        def pytest_collectreport(self, report):
            if report.failed:
                self.results[f"<collection of {report.nodeid}>"] = {
                    "outcome": "error",
                    "when": "collect",
                    "message": _short(str(report.longrepr).strip().splitlines()[-1]),
                }

    return Recorder()


CLEAN = "clean"


def tests_under(name: str, tests, out: str) -> int:
    """(Subprocess entry) run ``tests`` with mutation ``name`` (or none: ``clean``) installed before the test
    modules are imported, so their ``from ... import`` names bind the mutant; write the outcomes to ``out``."""
    import pytest

    import_library()
    patches = () if name == CLEAN else {m.name: m for m in MUTATIONS}[name].patches
    rec = _recorder()
    try:
        with installed(patches):
            clear_caches(keep_simulations=False)
            pytest.main(
                ["-q", "-p", "no:cacheprovider", "-o", "addopts=", "--no-header", "-W", "ignore", *tests],
                plugins=[rec],
            )
    except MutationFailed as exc:
        Path(out).write_text(json.dumps({"_not_installed": str(exc)}), encoding="utf-8")
        return 0
    Path(out).write_text(json.dumps(rec.results), encoding="utf-8")
    return 0


def run_tests(name: str, tests, timeout: float = 1800.0) -> dict:
    """``tests`` under mutation ``name`` in a fresh interpreter: {node id: outcome}; ``{"_crash": why}``
    when the subprocess died without its report, ``{"_not_installed": why}`` when the mutation does not
    install."""
    if not tests:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tests.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--tests-under", name, "--tests-out", str(out)]
        cmd += ["--tests", *tests]
        env = dict(os.environ)
        env.setdefault("HYPOTHESIS_PROFILE", "dev")
        try:
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return {"_crash": f"the tests did not finish in {timeout:.0f} s"}
        if not out.exists():
            lines = (proc.stderr or proc.stdout or "").strip().splitlines()
            return {"_crash": _short(lines[-1] if lines else f"exit status {proc.returncode}")}
        return json.loads(out.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# one mutation
# ---------------------------------------------------------------------------
#: claim verdicts computed from a value (a claim with another verdict, e.g. "error", did not judge a value)
VALUE_VERDICTS = ("holds", "mismatch")


def mutation_tests(mut: Mutation, smoke: bool) -> list:
    """The tests run under ``mut``: its own (smoke) or the pin files and its own (full table)."""
    return list(mut.tests) if smoke else list(dict.fromkeys(PIN_TESTS + tuple(mut.tests)))


def _claims_under(mut, tier, claims_globs, verbose, cache):
    """Install ``mut`` in this process, run the claims (None: none) and measure its paper-facing number."""
    scope = fresh_simulations() if mut.simulator else contextlib.nullcontext()
    with scope:
        try:
            with installed(mut.patches) as sites:
                clear_caches(keep_simulations=not mut.simulator)
                results = {}
                if tier is not None:
                    results = run(
                        load(claims_globs),
                        tier,
                        progress=sys.stderr if verbose else None,
                        cache=None if mut.simulator else cache,
                    )
                probe = measure(PROBES[mut.probe])
        finally:  # nothing computed under the mutation survives it
            clear_caches(keep_simulations=not mut.simulator)
    return list(sites), results, probe


def run_mutation(
    mut: Mutation,
    tier,
    clean_results: dict,
    clean_probes: dict,
    claims_globs=None,
    say=print,
    verbose=False,
    cache=None,
    clean_tests=None,
    smoke: bool = False,
) -> dict:
    """Install ``mut``, run the claims of ``tier`` (None: no claims) in this process and its tests in a
    subprocess, measure its paper-facing number, undo it; returns its record.

    A check *catches* the mutation only on a value: a claim ok when clean whose verdict under the mutation is
    a wrong ``holds``/``mismatch``, or a test passing when clean that fails an assertion.  A claim ending in
    ``error``, a test raising anything else, are listed as errors and never count; a mutation whose run
    crashed (the test subprocess died, the paper-facing number raised) is ``crashed``."""
    t0 = time.perf_counter()
    record = {
        "name": mut.name,
        "models": mut.models,
        "code": mut.code,
        "simulator": mut.simulator,
        "expect": list(mut.expect),
        "probe": mut.probe,
        "probe_description": PROBES[mut.probe].description,
    }
    try:
        sites, results, probe = _claims_under(mut, tier, claims_globs, verbose, cache)
    except MutationFailed as exc:
        record.update(error=str(exc), status="not installed", caught={}, failed=[], tests_caught=[], errors=[])
        return record
    record["sites"] = sites
    caught_claims, errors = [], []
    for cid, r in results.items():
        base = clean_results.get(cid)
        if base is None or not base.ok or r.ok:
            continue  # not ok when clean: cannot catch anything
        entry = {"id": cid, "tier": claim_tier(r.claim), "verdict": r.verdict, "detail": _short(r.detail)}
        (caught_claims if r.verdict in VALUE_VERDICTS else errors).append(entry)
    tests = mutation_tests(mut, smoke)
    tres = run_tests(mut.name, tests)
    crash = tres.get("_crash") or tres.get("_not_installed")
    tests_caught = []
    for nid, r in tres.items():
        if nid.startswith("_") or (clean_tests or {}).get(nid, {}).get("outcome") != "passed":
            continue
        if r["outcome"] == "value":
            tests_caught.append({"id": nid, "detail": r["message"]})
        elif r["outcome"] == "error":
            errors.append({"id": nid, "tier": "test", "verdict": "error", "detail": r["message"]})
    if "error" in probe:
        crash = crash or f"its paper-facing number raised: {probe['error']}"
    record["failed"] = caught_claims
    record["errors"] = errors
    record["tests_run"] = tests
    record["tests_caught"] = tests_caught
    record["z"] = {cid: r.zscore for cid, r in results.items() if r.zscore is not None}
    ids = {f["id"] for f in caught_claims}
    record["expected_but_held"] = [
        g
        for g in mut.expect
        if not any(fnmatch.fnmatchcase(i, g) for i in ids) and any(fnmatch.fnmatchcase(i, g) for i in results)
    ]
    tiers = () if tier is None else TIERS[: TIERS.index(tier) + 1]
    record["caught"] = {t: any(TIERS.index(f["tier"]) <= TIERS.index(t) for f in caught_claims) for t in tiers}
    record["caught"]["tests"] = bool(tests_caught)
    if crash:
        record["status"], record["crash"] = "crashed", crash
    elif caught_claims or tests_caught:
        record["status"] = "caught"
    else:
        record["status"] = "not caught (errors only)" if errors else "not caught"
    record["paper_number"] = relative_change(clean_probes[mut.probe], probe)
    record["elapsed_s"] = round(time.perf_counter() - t0, 1)
    return record


def score(records, tier) -> dict:
    """Caught (on a value) / total, by the claims of each tier up to ``tier``, by the tests, by either; and
    among mutations moving their paper number by >= PAPER_FACING_THRESHOLD (relative)."""
    ok = [r for r in records if r["status"] != "not installed"]
    big = [
        r
        for r in ok
        if r["paper_number"].get("rel_change") is not None
        and abs(r["paper_number"]["rel_change"]) >= PAPER_FACING_THRESHOLD
    ]
    out = {
        "caught": sum(r["status"] == "caught" for r in ok),
        "total": len(ok),
        "crashed": [r["name"] for r in ok if r["status"] == "crashed"],
        "not_caught": [r["name"] for r in ok if r["status"].startswith("not caught")],
        "not_installed": [r["name"] for r in records if r["status"] == "not installed"],
        "caught_paper_facing": sum(r["status"] == "caught" for r in big),
        "paper_facing": len(big),
    }
    for t in (TIERS[: TIERS.index(tier) + 1] if tier else ()) + ("tests",):
        out[f"by_{t}"] = sum(bool(r["caught"].get(t)) for r in ok)
    return out


def _rel_text(pn: dict) -> str:
    if pn.get("rel_change") is None:
        return "raised"
    rel = f"{100 * pn['rel_change']:+.3g} %"
    if "rel_change_se" in pn:
        rel += f" (SE {100 * pn['rel_change_se']:.2g} %)"
    return rel


def _test_name(nodeid: str) -> str:
    return nodeid.split("::", 1)[-1] if nodeid.startswith("tests/test_library_pins.py::") else nodeid


def _tests_text(entries) -> str:
    """Test names, the parametrised cases of one test collapsed into ``name (k cases)``."""
    counts = {}
    for e in entries:
        base = _test_name(e["id"]).split("[", 1)[0]
        counts[base] = counts.get(base, 0) + 1
    return ", ".join(f"`{b}`" + (f" ({k} cases)" if k > 1 else "") for b, k in counts.items()) or "none"


def markdown(report: dict, title: str | None = None) -> str:
    tier = report["tier"]
    s = report["score"]
    lines = [
        title or f"# Mutation harness, {'smoke' if report['smoke'] else f'tier {tier}'}",
        "",
        f"Generated by `{report['command']}` on {report['date']} ({report['machine']}; wall time "
        f"{report['elapsed_s']:.0f} s).  ",
        f"Claims run under each mutation: {report['n_claims'] if tier else 'none'}"
        + (f" (tier {tier}, sister-paper claims included)" if tier else "")
        + "; tests run under each mutation: "
        + (", ".join(f"`{t}`" for t in PIN_TESTS) + " and the mutation's own" if not report["smoke"] else "its own")
        + f".  Clean run: {report['clean']['not_ok'] or 'every claim ok'}; clean tests: "
        + (f"{report['clean']['tests_not_passed']}" if report["clean"]["tests_not_passed"] else "every test passes")
        + f"; restoration control: {report['restored']['not_ok'] or 'ok'}.",
        "",
        f"**Caught on a value: {s['caught']} of {s['total']} mutations**"
        + (f"; crashed: {', '.join(s['crashed'])}" if s["crashed"] else "; none crashed")
        + (f"; not caught: {', '.join(s['not_caught'])}" if s["not_caught"] else "; none missed")
        + (f"; not installed: {', '.join(s['not_installed'])}" if s["not_installed"] else "")
        + ".  "
        + ", ".join(f"by {k[3:]}: {v}" for k, v in s.items() if k.startswith("by_"))
        + f"; among the {s['paper_facing']} that move their paper-facing number by >= "
        f"{100 * PAPER_FACING_THRESHOLD:g} %: {s['caught_paper_facing']} caught.",
        "",
        "A mutation is *caught* only when a check fails on a value: a claim that is ok when clean and comes out "
        "with the wrong verdict (holds/mismatch), or a test that passes when clean and fails an assertion.  Claims "
        "ending in an error and tests raising anything but an assertion are listed under *errors* and never count; "
        "a mutation whose run crashed is *crashed*.",
        "",
        "| mutation | status | paper-facing number | rel. change | caught by claims | caught by tests | errors (not counted) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in report["mutations"]:
        if r["status"] == "not installed":
            lines.append(f"| {r['name']} | not installed: {_short(r['error'], 80)} | - | - | - | - | - |")
            continue
        claims = ", ".join(f"`{f['id']}`" for f in r["failed"]) or "none"
        tests = _tests_text(r["tests_caught"])
        errs = _tests_text(r["errors"]) if r["errors"] else "-"
        status = r["status"] + (f" ({_short(r['crash'], 80)})" if r.get("crash") else "")
        lines.append(
            f"| {r['name']} | {status} | {r['probe']} | {_rel_text(r['paper_number'])} | {claims} | {tests} | {errs} |"
        )
    lines += ["", "## The mutations", "", "| mutation | models | code |", "|---|---|---|"]
    for r in report["mutations"]:
        lines.append(f"| {r['name']} | {r['models']} | {r['code']} |")
    lines += ["", "Paper-facing numbers (clean values):", ""]
    for name in sorted({r["probe"] for r in report["mutations"]}):
        p = report["clean_probes"][name]
        val = f"{p['value']:.10g}" if "value" in p else f"raised ({p['error']})"
        lines.append(f"* `{name}`: {PROBES[name].description}; clean value {val}")
    return "\n".join(lines) + "\n"


def _not_ok(results: dict) -> list:
    return [f"{cid}: {r.verdict}" for cid, r in results.items() if not r.ok]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tier", choices=TIERS, default="quick", help="claims to run (default quick)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the CI smoke subset: the smoke mutations against their own tests only (no claims); exit 1 unless "
        "every one is caught on a value",
    )
    ap.add_argument("--only-mutations", nargs="+", metavar="GLOB", help="run only these mutations (globs)")
    ap.add_argument("--claims", nargs="+", metavar="GLOB", help="run only these claims (id globs)")
    ap.add_argument("--out", default="benchmarks/results/mutations", help="folder for the JSON and Markdown output")
    ap.add_argument("--docs", metavar="PATH", help="also write the table to this Markdown page (docs/mutations.md)")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        help="the budget of one claim run (as the command line's --max-seconds; the deep tier needs it: "
        "a run estimated above 1 h is refused without it, docs/limits.md)",
    )
    ap.add_argument(
        "--cache",
        default=None,
        metavar="DIR",
        help="folder of simulated seeds (verify --cache) for the clean run and the theory mutations; "
        "simulator mutations never read it",
    )
    ap.add_argument("--verbose", action="store_true", help="print every claim's progress")
    ap.add_argument(
        "--render", metavar="JSON", help="only rewrite the tables (--out, --docs) from a saved mutations_*.json"
    )
    ap.add_argument("--tests-under", help=argparse.SUPPRESS)
    ap.add_argument("--tests-out", help=argparse.SUPPRESS)
    ap.add_argument("--tests", nargs="+", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.only_mutations:
        names = [m.name for m in MUTATIONS]
        for g in args.only_mutations:
            if not any(fnmatch.fnmatchcase(n, g) for n in names):
                ap.exit(2, f"mutation_harness: no mutation matches {g!r} (--list shows them)\n")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    with budget(args.max_seconds):  # the work ceiling of docs/limits.md: each claim run is priced against it
        return _run(args, argv)


def _run(args, argv) -> int:
    if args.tests_under:
        return tests_under(args.tests_under, args.tests, args.tests_out)
    if args.render:
        report = json.loads(Path(args.render).read_text(encoding="utf-8"))
        stem = Path(args.render).stem
        (Path(args.out) / f"{stem}.md").write_text(markdown(report), encoding="utf-8")
        if args.docs:
            Path(args.docs).write_text(markdown(report, DOCS_TITLE) + DOCS_FOOTER, encoding="utf-8")
        return 0
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:<36} {'[smoke] ' if m.smoke else ''}{'[simulator] ' if m.simulator else ''}{m.models}")
        return 0
    muts = [
        m
        for m in MUTATIONS
        if (not args.only_mutations or any(fnmatch.fnmatchcase(m.name, g) for g in args.only_mutations))
        and (m.smoke or not args.smoke)
    ]
    tier = None if args.smoke else args.tier
    claims = []
    if tier is not None:
        try:
            claims = load(args.claims)
        except Exception as exc:  # a claim file that does not load: bad input
            print(f"mutation_harness: {exc}", file=sys.stderr)
            return 2
        if not claims:
            print(f"mutation_harness: no claim matches {args.claims}", file=sys.stderr)
            return 2
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    def say(line):
        print(line, file=sys.stderr, flush=True)

    t_start = time.perf_counter()
    import_library()
    clear_caches(keep_simulations=False)
    clean = {}
    if tier is not None:
        say(f"clean run: {len(claims)} claims (tier {tier}) ...")
        t0 = time.perf_counter()
        clean = run(claims, tier, progress=sys.stderr if args.verbose else None, cache=args.cache)
        say(f"clean run: {len(clean)} run, not ok: {_not_ok(clean) or 'none'} ({time.perf_counter() - t0:.1f} s)")
    all_tests = list(dict.fromkeys(t for m in muts for t in mutation_tests(m, args.smoke)))
    say(f"clean tests: {len(all_tests)} selections ...")
    clean_tests = run_tests(CLEAN, all_tests)
    tests_not_passed = [
        f"{k}: {v}" if k.startswith("_") else f"{k}: {v['outcome']}"
        for k, v in clean_tests.items()
        if k.startswith("_") or v["outcome"] not in ("passed", "skipped")
    ]
    say(f"clean tests: {len(clean_tests)} run, not passed: {tests_not_passed or 'none'}")
    clean_probes = {name: measure(PROBES[name]) for name in sorted({m.probe for m in muts})}
    records = []
    for i, m in enumerate(muts, 1):
        say(f"[{i}/{len(muts)}] {m.name}{' (simulator: simulations rerun)' if m.simulator and tier else ''} ...")
        rec = run_mutation(
            m, tier, clean, clean_probes, args.claims, say, args.verbose, args.cache, clean_tests, args.smoke
        )
        records.append(rec)
        if rec["status"] == "not installed":
            say(f"    NOT INSTALLED: {rec['error']}")
            continue
        by = [f["id"] for f in rec["failed"]] + [_test_name(t["id"]) for t in rec["tests_caught"]]
        pn = rec["paper_number"]
        say(
            f"    {rec['status']}{': ' + rec['crash'] if rec.get('crash') else ''}; by {', '.join(by) or 'nothing'}"
            + (f"; errors (not counted): {', '.join(e['id'] for e in rec['errors'])}" if rec["errors"] else "")
            + f"; its probe {m.probe} {_rel_text(pn)} ({rec['elapsed_s']} s)"
        )
    say("restoration control ...")
    clear_caches(keep_simulations=True)
    restored = run(load(args.claims), "quick") if tier is not None else {}
    not_restored = _not_ok(restored) + [
        f"probe {n} changed" for n, v in clean_probes.items() if measure(PROBES[n]).get("value") != v.get("value")
    ]
    by_tier = {}
    for c in claims:
        by_tier[claim_tier(c)] = by_tier.get(claim_tier(c), 0) + 1
    command = "python benchmarks/mutation_harness.py " + " ".join(sys.argv[1:] if argv is None else argv)
    report = {
        "tier": tier,
        "smoke": args.smoke,
        "command": command.strip(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": (
            f"{platform.machine()}, {platform.system()} {platform.release()}, Python {platform.python_version()}"
        ),
        "n_claims": len(clean),
        "claims_by_tier": by_tier,
        "clean": {
            "not_ok": _not_ok(clean),
            "tests_not_passed": tests_not_passed,
            "z": {cid: r.zscore for cid, r in clean.items() if r.zscore is not None},
        },
        "restored": {"not_ok": not_restored},
        "clean_probes": clean_probes,
        "mutations": records,
        "score": score(records, tier),
        "elapsed_s": time.perf_counter() - t_start,
    }
    stem = "mutations_smoke" if args.smoke else f"mutations_{tier}"
    (out_dir / f"{stem}.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (out_dir / f"{stem}.md").write_text(markdown(report), encoding="utf-8")
    say(f"wrote {out_dir / f'{stem}.json'} and .md")
    if args.docs:
        Path(args.docs).write_text(markdown(report, DOCS_TITLE) + DOCS_FOOTER, encoding="utf-8")
        say(f"wrote {args.docs}")
    s = report["score"]
    say(
        f"caught on a value: {s['caught']}/{s['total']}; crashed: {s['crashed'] or 'none'}; "
        f"not caught: {s['not_caught'] or 'none'}; not installed: {s['not_installed'] or 'none'}"
    )
    healthy = not report["restored"]["not_ok"] and not report["clean"]["not_ok"] and not tests_not_passed
    if args.smoke:
        return 0 if healthy and s["caught"] == s["total"] == len(muts) else 1
    return 0 if healthy else 1


DOCS_TITLE = "# Mutations: which checks catch which library errors"
DOCS_FOOTER = """
This page is generated by `benchmarks/mutation_harness.py --docs docs/mutations.md` (the command above);
do not edit it by hand.  `python benchmarks/mutation_harness.py --list` lists the mutations;
`--smoke` runs the CI subset (`.ci/run`), which fails when a smoke mutation is not caught on a value
or the harness crashes.
"""


if __name__ == "__main__":
    sys.exit(main())
