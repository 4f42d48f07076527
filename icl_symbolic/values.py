"""The result type: a number together with how it was obtained.

Every approximate number in icl-symbolic says where it comes from, following
the pattern of ``mpmath.quad(..., error=True)`` and ``scipy.integrate.qmc_quad``:

* ``exact``   -- a SymPy closed form (``Value.exact`` holds the expression);
* ``mpmath``  -- high-precision quadrature, ``digits`` significant digits with an
  absolute error estimate ``abs_err``;
* ``mc``      -- a Monte-Carlo mean with standard error ``stderr`` over
  ``n_samples`` draws (seeded: ``seeds``);
* ``sim``     -- a full simulation, mean over ``seeds`` with spread ``stderr``;
* ``numeric`` -- a deterministic floating-point computation (root finding,
  linear algebra) with an estimated absolute error ``abs_err`` where known.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import mpmath
import sympy

METHODS = ("exact", "mpmath", "mc", "sim", "numeric")


@dataclass(frozen=True)
class Value:
    """A number with its provenance.

    Parameters
    ----------
    value : mpmath.mpf, float or int
        The number (for ``exact``, a high-precision decimal evaluation of ``exact``).
    method : str
        One of ``exact``, ``mpmath``, ``mc``, ``sim``, ``numeric``.
    exact : sympy.Expr, optional
        The closed form, when ``method == "exact"``.
    digits : int, optional
        Significant digits certified (``mpmath``) or used for evaluation (``exact``).
    abs_err : float, optional
        Absolute error estimate (``mpmath``, ``numeric``).
    stderr : float, optional
        Standard error (``mc``, ``sim``).
    n_samples : int, optional
        Number of Monte-Carlo draws or simulation repeats.
    seeds : tuple, optional
        Seeds that reproduce a random result.
    note : str
        Free text: what was computed, where it is in the paper.

    Examples
    --------
    >>> import sympy
    >>> v = Value.from_exact(sympy.exp(-sympy.Rational(1, 2)), digits=15)
    >>> v.provenance()
    'exact (SymPy)'
    >>> round(float(v), 12)
    0.606530659713
    """

    value: Any
    method: str
    exact: Any = None
    digits: int | None = None
    abs_err: Any = None
    stderr: float | None = None
    n_samples: int | None = None
    seeds: tuple | None = None
    note: str = ""

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; expected one of {METHODS}")

    # -- construction -------------------------------------------------
    @classmethod
    def from_exact(cls, expr, digits: int = 30, note: str = "") -> "Value":
        """Wrap a SymPy closed form, evaluated to ``digits`` significant digits."""

        num = sympy.N(expr, digits + 5)
        if not num.is_number or num.is_real is False:
            raise ValueError(f"exact value {expr} is not a real number")
        with mpmath.workdps(digits + 5):
            val = mpmath.mpf(str(sympy.Float(num, digits + 5)))
        return cls(value=val, method="exact", exact=expr, digits=digits, note=note)

    def with_note(self, note: str) -> "Value":
        return replace(self, note=note)

    # -- conversions ----------------------------------------------------
    def __float__(self) -> float:
        return float(self.value)

    def to_str(self, digits: int | None = None) -> str:
        """Decimal string with at most the certified number of digits."""
        n = digits or self.digits or 15
        if self.method in ("mc", "sim"):
            n = min(n, 8)
        value = self.value
        if not isinstance(value, (mpmath.mpf, mpmath.mpc, complex)):
            value = mpmath.mpf(value)  # ints and floats are exact in binary: no rounding here
        return mpmath.nstr(value, n)

    def provenance(self) -> str:
        """One phrase saying how the number was obtained."""
        if self.method == "exact":
            return "exact (SymPy)"
        if self.method == "mpmath":
            err = "" if self.abs_err is None else f", |err| <= {mpmath.nstr(mpmath.mpf(self.abs_err), 2)}"
            return f"mpmath quadrature, {self.digits} digits{err}"
        if self.method == "mc":
            return f"Monte Carlo, n={self.n_samples}, SE={_fmt(self.stderr)}" + (
                f", seed={self.seeds[0] if len(self.seeds) == 1 else self.seeds}" if self.seeds else "")
        if self.method == "sim":
            return f"simulation over {self.n_samples} seeds, SE={_fmt(self.stderr)}" + (
                f", seeds={list(self.seeds)}" if self.seeds else "")
        err = "" if self.abs_err is None else f", |err| <= {_fmt(self.abs_err)}"
        return "numeric (float64)" + err

    def to_json(self) -> dict:
        """A JSON-ready dict; high-precision numbers are decimal strings."""
        out: dict = {"value": self.to_str(), "method": self.method, "provenance": self.provenance()}
        if self.exact is not None:
            out["exact"] = str(self.exact)
        for key in ("digits", "n_samples"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        for key in ("abs_err", "stderr"):
            if getattr(self, key) is not None:
                out[key] = _fmt(getattr(self, key))
        if self.seeds is not None:
            out["seeds"] = list(self.seeds)
        if self.note:
            out["note"] = self.note
        return out


def _fmt(x) -> str:
    if x is None:
        return "None"
    try:
        xf = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isfinite(xf) and xf != 0 and (abs(xf) < 1e-300):
        return mpmath.nstr(mpmath.mpf(x), 3)
    return f"{xf:.3g}"
