"""Appendix A: the concentration facts of sigma_w and Result 1's conditions, per covariance."""

from __future__ import annotations

from icl_symbolic.core import defaults as D
from icl_symbolic.core.errors import ICLError
from icl_symbolic.model.covariance import AppendixA, resolve_covariance
from icl_symbolic.model.covariance import appendix_a as _appendix_a


def appendix_a(*covariances, d: int = D.D) -> tuple:
    """One :class:`AppendixA` per covariance (``identity``, ``powerlaw:p``, ``spiked:f:r``,
    ``lowrank:r``, a ``.npy`` path, an array): E[sigma_w] = tr C/d, Var(sigma_w) = 2 tr C^2/d^2,
    r_eff = tr(C)^2/tr(C^2) and whether Result 1's conditions hold (``holds``: True, False or None
    when they cannot be decided at one d); ``d`` sizes the named families."""
    if not covariances:
        raise ICLError("appendix_a needs at least one covariance")
    if isinstance(d, bool) or int(d) != d or d < 1:
        raise ICLError(f"d: expected an integer >= 1, got {d!r}")
    return tuple(_appendix_a(resolve_covariance(c, int(d))) for c in covariances)


__all__ = ["appendix_a", "AppendixA"]
