"""icl-symbolic: a symbolic-numeric derivation checker for

M. Letey, A. Rysmakhanov, Y. M. Lu, C. Pehlevan, J. A. Zavatone-Veth,
*What can linear attention learn from nonlinear teachers in-context?*,
arXiv:2610.10761v1 (2026).

Every approximate number the package returns is a :class:`~icl_symbolic.values.Value`
that says how it was obtained (exact SymPy, mpmath with digits and error
estimate, Monte Carlo with standard error, or simulation with seeds).
"""

from ._version import __version__
from .errors import ICLError
from .values import Value

__all__ = ["ICLError", "Value", "__version__"]
