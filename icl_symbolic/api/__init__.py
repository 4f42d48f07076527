r"""The public Python API, re-exported from the package root (``import icl_symbolic as ics``).

One module per topic (``coeffs``, ``theory``, ``moments``, ``simulation``, ``extrapolation``,
``reproduction``, ``kernel_learner``, ``covariance``, ``figures``, ``verification``, ``diagnosis``; named apart
from the functions they define, so that a function never hides behind its module); this package loads a topic
on first use of one of its names (PEP 562), so importing one topic -- as each command does --
does not import the others.

One order and one set of names everywhere, the paper's: the teacher ``f`` first
(positional), then keyword-only ``rho, alpha, kappa, tau, lam, d, C_train,
C_test`` and the method options (``digits``, ``seeds``, ...).  Defaults are those
of every command (:mod:`icl_symbolic.core.defaults`: rho = 0.1, alpha = kappa = tau =
2, lam = 0, d = 64).  Numbers given as strings are read exactly (``"0.1"`` is
1/10); floats through their shortest repr.

Every function returns a result object that says how its numbers were obtained
(:class:`~icl_symbolic.core.values.Value`), prints as a short table, renders as
HTML/LaTeX in a notebook, and converts with ``to_json()``.

>>> import icl_symbolic as ics
>>> r = ics.hermite_coeffs("sin(g)", rho="0.1")
>>> r.a1.exact, (r.a1 ** 2).exact
(exp(-1/2), exp(-1))
>>> (r.rho_nonlinear / r.a1 ** 2).to_str(6)        # the Fig. 1 legend value
'0.447029'
>>> e = ics.e_nonlinear("sin(g)", rho="0.1", alpha=2, kappa=2, tau=[0.5, 1, 4])
>>> [p["e"] for p in e.points()][1], e.points()[1]["reason"]
(inf, 'tau = 1 with lam = 0: the ridgeless error diverges (interpolation peak)')
"""

from __future__ import annotations

import importlib

#: public name -> the topic module that defines it
NAMES = {
    "hermite_coeffs": "coeffs",
    "plot_spectrum": "coeffs",
    "HermiteResult": "coeffs",
    "e_nonlinear": "theory",
    "e_linear": "theory",
    "plot_theory": "theory",
    "TheoryCurve": "theory",
    "e_finite_d": "theory",
    "conditional_moments": "moments",
    "Moments": "moments",
    "simulate": "simulation",
    "plot_simulation": "simulation",
    "finite_d_theory": "simulation",
    "SimResult": "simulation",
    "SimSweep": "simulation",
    "Setting": "simulation",
    "extrapolate": "extrapolation",
    "plot_extrapolation": "extrapolation",
    "Extrapolation": "extrapolation",
    "reproduce": "reproduction",
    "plot_reproduction": "reproduction",
    "Reproduction": "reproduction",
    "kernel": "kernel_learner",
    "KernelCurve": "kernel_learner",
    "appendix_a": "covariance",
    "AppendixA": "covariance",
    "figure": "figures",
    "verify": "verification",
    "VerifyResult": "verification",
    "diagnose": "diagnosis",
    "Diagnosis": "diagnosis",
}

__all__ = list(NAMES)


def __getattr__(name):
    if name in NAMES:
        value = getattr(importlib.import_module(f".{NAMES[name]}", __name__), name)
        globals()[name] = value  # later lookups skip this hook
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(NAMES))
