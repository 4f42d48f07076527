"""icl-symbolic: a symbolic-numeric derivation checker for

M. Letey, A. Rysmakhanov, Y. M. Lu, C. Pehlevan, J. A. Zavatone-Veth,
*What can linear attention learn from nonlinear teachers in-context?*,
arXiv:2610.10761v1 (2026).

Every approximate number the package returns is a :class:`~icl_symbolic.core.values.Value`
that says how it was obtained (exact SymPy, mpmath with digits and error
estimate, Monte Carlo with standard error, or simulation with seeds).

The public API (:mod:`icl_symbolic.api`, documented in docs/api.md)::

    import icl_symbolic as ics
    r = ics.hermite_coeffs("tanh(g)", rho="0.1", digits=40)
    r.a1 + 1, float(r.rho_nonlinear)
    ics.e_nonlinear("sin(g)", rho="0.1", alpha=2, kappa=2, tau=[0.5, 2, 4])
    ics.simulate("sin(g)", d=64, tau=2, seeds=3)
    ics.simulate(ics.Setting("sin(g)", d=64, tau=2), seeds=3)   # the same, one Setting
    ics.extrapolate("sin(g)", d=[24, 32, 48])     # a ladder in d, compared with the theory
    ics.verify()

The names of :mod:`icl_symbolic.api` are loaded on first use (PEP 562
``__getattr__``), so ``import icl_symbolic`` (and the command line, which
imports only the sub-command it runs) does not pay for SymPy, SciPy and the
verification machinery until something needs them.
"""

import importlib
from typing import TYPE_CHECKING

from icl_symbolic._version import __version__
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.values import Value

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load lazily
    from icl_symbolic.api import *  # noqa: F401,F403

#: the public names that live in :mod:`icl_symbolic.api` (its NAMES, repeated here so that
#: ``import icl_symbolic`` does not import the api package; tests/test_api.py checks they agree)
_API = (
    "hermite_coeffs",
    "e_nonlinear",
    "e_linear",
    "e_finite_d",
    "finite_d_theory",
    "conditional_moments",
    "simulate",
    "extrapolate",
    "reproduce",
    "kernel",
    "appendix_a",
    "figure",
    "verify",
    "diagnose",
    "plot_spectrum",
    "plot_theory",
    "plot_simulation",
    "plot_extrapolation",
    "plot_reproduction",
    "Setting",
    "HermiteResult",
    "TheoryCurve",
    "SimResult",
    "SimSweep",
    "Extrapolation",
    "Reproduction",
    "KernelCurve",
    "AppendixA",
    "VerifyResult",
    "Moments",
    "Diagnosis",
)

__all__ = ["__version__", "ICLError", "Value", *_API]


def __getattr__(name):
    if name in _API:
        value = getattr(importlib.import_module(".api", __name__), name)
        globals()[name] = value  # later lookups skip this hook
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_API))
