"""icl-symbolic: a symbolic-numeric derivation checker for

M. Letey, A. Rysmakhanov, Y. M. Lu, C. Pehlevan, J. A. Zavatone-Veth,
*What can linear attention learn from nonlinear teachers in-context?*,
arXiv:2610.10761v1 (2026).

Every approximate number the package returns is a :class:`~icl_symbolic.values.Value`
that says how it was obtained (exact SymPy, mpmath with digits and error
estimate, Monte Carlo with standard error, or simulation with seeds).

The public API (:mod:`icl_symbolic.api`, documented in docs/api.md)::

    import icl_symbolic as ics
    r = ics.hermite_coeffs("tanh(g)", rho="0.1", digits=40)
    r.a1 + 1, float(r.rho_nonlinear)
    ics.e_nonlinear("sin(g)", rho="0.1", alpha=2, kappa=2, tau=[0.5, 2, 4])
    ics.simulate("sin(g)", d=64, tau=2, seeds=3)
    ics.verify()
"""

from ._version import __version__
from .api import (Diagnosis, HermiteResult, Moments, SimResult, SimSweep, TheoryCurve, VerifyResult,
                  conditional_moments, diagnose, e_linear, e_nonlinear, hermite_coeffs, plot_simulation,
                  plot_spectrum, plot_theory, simulate, verify)
from .errors import ICLError
from .values import Value

__all__ = ["__version__", "ICLError", "Value",
           "hermite_coeffs", "e_nonlinear", "e_linear", "conditional_moments", "simulate", "verify", "diagnose",
           "plot_spectrum", "plot_theory", "plot_simulation",
           "HermiteResult", "TheoryCurve", "SimResult", "SimSweep", "VerifyResult", "Moments", "Diagnosis"]
