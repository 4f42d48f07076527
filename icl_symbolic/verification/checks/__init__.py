"""The check kinds, one module per paper unit, collected in one explicit table.

========================  =====================================================
module                    kinds (paper unit)
========================  =====================================================
``hermite``               hermite_value, gauss_expectation, mc_expectation
                          (Eq. 2, p. 2; Eq. 8, p. 3)
``identities``            family_identity, symbolic_identity
``moments``               moments_leading, moments_mc (Lemma 1, p. 8-9)
``theory``                theory_value (Result 1 Eq. 9; Eqs. 10, 11)
``a1zero``                a1zero_limit (Eq. 10, p. 3; Eq. 15, p. 10)
``appendix_a``            appendix_a, appendix_a_condition (Appendix A, p. 7)
``simulation``            simulation, simulation_extrapolated (Figs. 1-2),
                          simulation_finite_d (one d against our finite-d theory)
``appendix_c``            appendix_c (Appendix C, p. 10: the proof step of Result 1)
``setup``                 setup (Sec. 2, Eqs. (1), (3)-(7), p. 2-3: Eq. (6)'s ridge
                          normalisation, d(d+1) parameters, the finite-d peak)
``kernel``                kernel_value, kernel_simulation, kernel_gap_decay
                          (our extension, the kernel learner; not the paper's)
``dual``                  dual_value (the dual kernel: K_f(1) = E[f^2], Kdot_f(0) = a1^2,
                          Eq. 8, p. 3; literature closed forms), deep_relu_literature
                          (deep ReLU NNGP/NTK against the arc-cosine recursion; our extension)
``coverage``              hermite_field (printed fields of hermite_coeffs that no
                          other kind reads: Eq. 2, p. 2; Eq. 8, p. 3), a1zero_derivation
                          (steps of the a1 = 0 derivation the limits do not read: Eq. 15, p. 10)
``calibration``           se_calibration (the SEs the simulation verdicts divide by are
                          calibrated: Monte Carlo over replicate ladders; Figs. 1-2, p. 4)
========================  =====================================================

A new kind is a function decorated with
:func:`icl_symbolic.verification.registry.check_kind` in the module of its paper
unit, listed in that module's ``KINDS`` and reached from :data:`REGISTRY` here.
"""

from __future__ import annotations

from icl_symbolic.verification import registry
from icl_symbolic.verification.checks import (
    a1zero,
    appendix_a,
    appendix_c,
    calibration,
    coverage,
    dual,
    hermite,
    identities,
    kernel,
    moments,
    setup,
    simulation,
    theory,
)

_MODULES = (
    setup,
    hermite,
    dual,
    identities,
    moments,
    theory,
    a1zero,
    appendix_a,
    appendix_c,
    simulation,
    kernel,
    coverage,
    calibration,
)

#: check name -> :class:`~icl_symbolic.verification.registry.CheckKind`, for every shipped kind.
REGISTRY = {kind.name: kind for module in _MODULES for kind in module.KINDS}


def describe() -> str:
    """Plain-text list of the check kinds and their parameters."""
    return registry.describe(REGISTRY)
