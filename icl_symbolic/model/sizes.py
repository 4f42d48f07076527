"""The integer sizes of one simulation from the paper's ratios (Sec. 2, p. 2: ell = alpha d, k = kappa d,
n = tau d^2): the one place the ratios become counts.

:func:`sizes` is what a simulation runs (it refuses a count below 1); :func:`clamped_sizes` is the
reading of the finite-d theory, the same rounding with each count held at 1 or more instead of an
error (the theory evaluates its O(1/d) terms at any point, it never allocates prompts).  A
:class:`~icl_symbolic.model.setting.Setting` computes its sizes once (``Setting.sizes``) through
:func:`counts`, without validating again the ratios it validated on construction.

>>> sizes(20, 2, 0.33, 2), sizes(20, 2, 0.33, 2, "floor-k")
(Sizes(d=20, ell=40, k=7, n=800), Sizes(d=20, ell=40, k=6, n=798))
>>> clamped_sizes(4, 2, 0.1, 2)
Sizes(d=4, ell=8, k=1, n=32)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from icl_symbolic.core.errors import ICLError
from icl_symbolic.model.checks import check_dimension, check_ratio, check_rounding

#: the most items (ell, k or n) one simulation may ask for
MAX_ITEMS = 1e12


def round_half_up(x: float) -> int:
    """The nearest integer, halves up (the ``paper`` rounding)."""
    return int(math.floor(x + 0.5))


@dataclass(frozen=True)
class Sizes:
    """Integer sizes of one simulation (Sec. 2, p. 2: ell = alpha d, k = kappa d, n = tau d^2)."""

    d: int
    ell: int
    k: int
    n: int

    @property
    def p(self) -> int:
        """Number of trainable parameters d (d + 1)."""
        return self.d * (self.d + 1)


def _k_of(d: int, kappa: float, rounding: str) -> tuple:
    """k and how it was rounded (text for the error message)."""
    if rounding == "paper":
        return round_half_up(kappa * d), "k = round(kappa d)"
    if rounding == "floor-k":
        return int(math.floor(kappa * d + 1e-9)), "k = floor(kappa d)"
    return int(kappa * d), "k = int(kappa d)"  # truncate: the authors' np.int64(kappa * d)


def counts(d: int, alpha: float, kappa: float, tau: float, rounding: str = "paper", clamp: bool = False) -> Sizes:
    """The sizes of already validated ratios (a Setting's): :func:`sizes` without the checks of its
    arguments.  A count below 1 is refused (ICLError naming the ratio to increase), or held at 1 with
    ``clamp`` (:func:`clamped_sizes`)."""
    for name, value in (("alpha", alpha), ("kappa", kappa), ("tau", tau)):
        if value * d > MAX_ITEMS or (name == "tau" and value * d * d > MAX_ITEMS):
            raise ICLError(f"{name} = {value:g} at d = {d} gives more than 1e12 items; reduce {name}")
    k, k_txt = _k_of(d, kappa, rounding)
    if clamp:
        k = max(1, k)
    if k < 1 and rounding != "paper":  # n = round(tau d^2 / k) k needs k first
        raise ICLError(f"{k_txt} is {k} at d = {d}; increase kappa")
    if rounding == "paper":
        ell, n, n_txt = round_half_up(alpha * d), round_half_up(tau * d * d), "n = round(tau d^2)"
    else:  # every task the same number of times: n = round(tau d^2 / k) k (Python's round, halves to even)
        n, n_txt = int(round(tau * d * d / k)) * k, "n = round(tau d^2/k) k"
        ell = int(alpha * d) if rounding == "truncate" else round_half_up(alpha * d)
    ell_txt = "ell = int(alpha d)" if rounding == "truncate" else "ell = round(alpha d)"
    if clamp:
        return Sizes(d, max(1, ell), k, max(1, n))
    for text, value, ratio in ((ell_txt, ell, "alpha"), (k_txt, k, "kappa"), (n_txt, n, "tau")):
        if value < 1:
            raise ICLError(f"{text} is {value} at d = {d}; increase {ratio}")
    return Sizes(d, ell, k, n)


def sizes(d, alpha, kappa, tau, rounding: str = "paper") -> Sizes:
    """Integer sizes from the paper's ratios (Sec. 2, p. 2).

    ``rounding="paper"`` (our default): ell = round(alpha d), k = round(kappa d),
    n = round(tau d^2), halves up.  ``rounding="floor-k"``: k = floor(kappa d),
    n = round(tau d^2 / k) k (every task the same number of times; Python's round,
    halves to even as numpy's), ell as in ``paper``.  ``rounding="truncate"`` (the
    authors' simulation code, preset ``letey2024``, docs/conventions.md): their integer
    conversions exactly: ell = int(alpha d) and k = int(kappa d) (the double product
    truncated, as numpy's int64 conversion does), n = round(tau d^2 / k) k.  A count
    below 1 is refused (ICLError).

    >>> sizes(64, 2, 2, 2)
    Sizes(d=64, ell=128, k=128, n=8192)
    >>> sizes(32, 20, 0.5, 10).p
    1056
    >>> sizes(20, 1.53, 0.33, 2, "floor-k").ell, sizes(20, 1.53, 0.33, 2, "truncate").ell
    (31, 30)
    """
    check_rounding(rounding)
    d = check_dimension(d)
    alpha, kappa, tau = (check_ratio(name, v) for name, v in (("alpha", alpha), ("kappa", kappa), ("tau", tau)))
    return counts(d, alpha, kappa, tau, rounding)


def clamped_sizes(d, alpha, kappa, tau) -> Sizes:
    """The sizes the finite-d theory (docs/finite-d.md) reads at dimension ``d``: the ``paper``
    rounding of :func:`sizes` (the simulator's default, which that theory models), with each of
    ell, k, n held at 1 or more instead of refused.  An explicit step of its own: the theory is
    evaluated at points where no simulation runs (a small kappa d), and there its counts are
    floors, not errors.  Where :func:`sizes` succeeds with ``paper`` rounding the two agree.

    >>> clamped_sizes(8, 2, 2, 2) == sizes(8, 2, 2, 2), clamped_sizes(4, 0.1, 0.1, 0.01)
    (True, Sizes(d=4, ell=1, k=1, n=1))
    """
    d = check_dimension(d)
    alpha, kappa, tau = (check_ratio(name, v) for name, v in (("alpha", alpha), ("kappa", kappa), ("tau", tau)))
    return counts(d, alpha, kappa, tau, "paper", clamp=True)


__all__ = ["Sizes", "sizes", "clamped_sizes", "counts", "round_half_up", "MAX_ITEMS"]
