"""Check kind ``appendix_c``: the proof step of Result 1 (Appendix C, p. 10), f generic.

The mathematics is in :mod:`icl_symbolic.theory.appendix_c`; this module only reads
the claim's parameters, calls :func:`icl_symbolic.theory.appendix_c.reduce_to_linear`
and judges.
"""

from __future__ import annotations

import sympy

from icl_symbolic.core.errors import ICLError
from icl_symbolic.theory.appendix_c import family_to_symbols, parse_form, reduce_to_linear
from icl_symbolic.verification.checks.common import pretty
from icl_symbolic.verification.registry import HERMITE_NAMES, Outcome, Param, check_kind, parse_claim_expr

PARTS = ("moments", "error", "finite_size")


def _forms(v, where_key):
    if not isinstance(v, dict):
        raise ICLError(f"{where_key} must be a table of name = expression")
    return {k: parse_form(e) for k, e in v.items()}


@check_kind(
    "appendix_c",
    params={
        "part": Param(
            "str",
            True,
            doc="'moments' (Lemma 1 moments of both teachers at leading order), "
            "'error' (the test-error functional e(Gamma|w)), or 'finite_size' (the terms that break "
            "the equality)",
            choices=PARTS,
        ),
        "rho_eq": Param(
            "family",
            False,
            "rho_nonlinear",
            "noise variance of the equivalent linear teacher (Result 1: rho_nonlinear)",
        ),
        "cov_scale": Param(
            "family",
            False,
            "a1^2",
            "task-covariance scale of the equivalent linear teacher (Result 1: a1^2, i.e. task a1 w)",
        ),
        "forms": Param(
            "table",
            False,
            None,
            "what the paper writes: moments -> {coefficient = leading form}; "
            "error -> {e = leading e(Gamma|w)}; finite_size -> {coefficient = 1/ell term}; "
            "expressions in a1, rho, rho_f, alpha, d, ell, E_g2f2, E_gf3, E_f4, E_g3f and the "
            "quadratic forms wAw, bw, Aw2, bAw, trAtA, b2",
        ),
    },
    needs=(("theory.appendix_c", "Appendix C reduction"), ("model.moments", "Lemma 1 moments")),
    needs_attrs={"theory.appendix_c": ("reduce_to_linear",)},
)
def check_appendix_c(claim) -> Outcome:
    """Appendix C (p. 10): nonlinear moments and test error = those of the equivalent linear teacher.

    f is generic (its Gaussian functionals are symbols).  ``moments``: every
    leading-order coefficient of Lemma 1 (Eqs. 12-14, p. 8-9) of the nonlinear
    teacher equals that of the linear teacher with task ``sqrt(cov_scale) w``
    and noise ``rho_eq``; ``error``: so does e(Gamma|w) with the quadratic
    forms of Gamma as symbols; ``finite_size``: the exact 1/ell differences
    at omega = 1 equal the claim's ``forms`` (and the omega - 1 terms are
    listed).  The claim's ``forms``, where given, must equal the derived ones.
    """
    p = claim.parsed
    forms = _forms(p["forms"], "forms") if p["forms"] is not None else {}
    cov_scale, rho_eq = (
        parse_claim_expr(v, HERMITE_NAMES) if isinstance(v, str) else v for v in (p["cov_scale"], p["rho_eq"])
    )
    red = reduce_to_linear(family_to_symbols(cov_scale), family_to_symbols(rho_eq))
    mapping = f"equivalent linear teacher: task covariance x {pretty(red.cov_scale)}, noise {pretty(red.rho_eq)}"
    bad, parts = [], []
    part = p["part"]
    if part == "moments":
        for k, diff in red.differences.items():
            if diff != 0:
                bad.append(f"{k}: nonlinear {pretty(red.nonlinear[k])} vs linear {pretty(red.linear[k])}")
        derived = red.nonlinear
        unknown = set(forms) - set(derived)
        if unknown:
            raise ICLError(f"unknown coefficient(s) {', '.join(sorted(unknown))}; known: {', '.join(derived)}")
        parts.append(f"{len(red.differences)} leading-order coefficients compared")
    elif part == "error":
        if red.error_difference != 0:
            bad.append(f"e(Gamma|w) differs by {pretty(red.error_difference)}")
        derived = {"e": red.error_nonlinear}
        if set(forms) - {"e"}:
            raise ICLError("forms for part 'error' take only the key 'e'")
        parts.append(f"leading e(Gamma|w) = {pretty(red.error_nonlinear)}")
    else:
        if not red.holds:
            bad.append("the leading orders differ, so the finite-size terms are not the only difference")
        derived = {b.coefficient: b.term for b in red.breaking if b.order.startswith("O(1/ell)")}
        unknown = set(forms) - set(derived)
        if unknown:
            raise ICLError(
                f"no 1/ell breaking term for {', '.join(sorted(unknown))}; the derived ones are {', '.join(derived)}"
            )
        missing = set(derived) - set(forms)
        if forms and missing:
            bad.append(f"derived 1/ell terms not written in the claim: {', '.join(sorted(missing))}")
        parts.append(
            "breaking terms: " + "; ".join(f"{b.coefficient}: {pretty(b.term)} [{b.order}]" for b in red.breaking)
        )
    for k, form in forms.items():
        diff = sympy.simplify(derived[k] - form)
        if diff != 0:
            bad.append(f"{k}: derived {pretty(derived[k])}, claim writes {pretty(form)}")
    if forms:
        parts.append(f"{len(forms)} written form(s) compared")
    detail = mapping + "; " + "; ".join(parts)
    if not bad:
        return Outcome(detail=detail, holds=True, residual_expr="0")
    return Outcome(detail=detail + "; differences: " + "; ".join(bad), holds=False, residual_expr="; ".join(bad))


KINDS = (check_appendix_c.kind,)
