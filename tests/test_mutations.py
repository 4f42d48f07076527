"""Mutation tests: perturb a shipped claim and `verify` must catch it.

The perturbations are the slips the issue names -- a factor of 2, a dropped a1^2,
rho_f written for rho_nonlinear, tau and alpha swapped -- applied to copies of the
shipped claim files written to tmp_path.  Each case first runs the UNmutated claim
(negative control: it must pass, so the mutation is what makes it fail), then the
mutated one, which must not be ok and must exit 1.
"""

import json
from pathlib import Path

import pytest

from icl_symbolic.cli import main

pytestmark = pytest.mark.heavy

DERIV = Path(__file__).resolve().parent.parent / "derivations"

# (file, claim id, old text, new text, what the mutation is); old must occur exactly once
# in the claim's block.
MUTATIONS = [
    # a factor of 2
    (
        "08_fig1.toml",
        "fig1.legend_noise",
        'quantity = "rho_nonlinear/a1^2"',
        'quantity = "2*rho_nonlinear/a1^2"',
        "factor 2",
    ),
    ("04_lemma1.toml", "lemma1.E_hh", 'E_uuT_I = "rho_f/alpha"', 'E_uuT_I = "2*rho_f/alpha"', "factor 2"),
    (
        "06_a1zero_eq10_eq15.toml",
        "a1zero.eq10_error",
        'below = "rho_nl/(1 - tau)"',
        'below = "2*rho_nl/(1 - tau)"',
        "factor 2",
    ),
    ("05_result1_eq9.toml", "result1.homogeneity_isotropic", 'scale = "a1^2"', 'scale = "2*a1^2"', "factor 2"),
    (
        "10_study_notes_numbers.toml",
        "notes.a1zero_tau_0.9",
        'claimed = "10*rho_nonlinear"',
        'claimed = "20*rho_nonlinear"',
        "factor 2",
    ),
    # a dropped a1^2
    ("08_fig1.toml", "fig1.result1_normalised_mse", 'scale = "a1^2", ', "", "dropped a1^2"),
    ("04_lemma1.toml", "lemma1.E_yH", 'E_yH_ww = "a1^2"', 'E_yH_ww = "1"', "dropped a1^2"),
    (
        "08_fig1.toml",
        "fig1.legend_noise",
        'quantity = "rho_nonlinear/a1^2"',
        'quantity = "rho_nonlinear"',
        "dropped a1^2",
    ),
    # rho_f written for rho_nonlinear
    (
        "08_fig1.toml",
        "fig1.legend_noise",
        'quantity = "rho_nonlinear/a1^2"',
        'quantity = "rho_f/a1^2"',
        "rho_f for rho_nonlinear",
    ),
    (
        "05_result1_eq9.toml",
        "result1.homogeneity_isotropic",
        'rho = "rho_nonlinear/a1^2"',
        'rho = "rho_f/a1^2"',
        "rho_f for rho_nonlinear",
    ),
    (
        "10_study_notes_numbers.toml",
        "notes.tanh_rho_nonlinear",
        'quantity = "rho_nonlinear"',
        'quantity = "rho_f"',
        "rho_f for rho_nonlinear",
    ),
    (
        "07_task_diversity_eq11.toml",
        "eq11.limit_kappa2",
        'claimed = "rho_nonlinear"',
        'claimed = "rho_f"',
        "rho_f for rho_nonlinear",
    ),
    # tau and alpha swapped
    (
        "05_result1_eq9.toml",
        "result1.homogeneity_isotropic",
        'call = { function = "e_nonlinear", args = { a1 = "a1", rho_nonlinear = "rho_nonlinear", alpha = 2, '
        "kappa = 1.5, tau = [0.3, 0.7, 1.5, 3.0, 8.0] } }",
        'call = { function = "e_nonlinear", args = { a1 = "a1", rho_nonlinear = "rho_nonlinear", tau = 2, '
        "kappa = 1.5, alpha = [0.3, 0.7, 1.5, 3.0, 8.0] } }",
        "tau and alpha swapped",
    ),
    (
        "06_a1zero_eq10_eq15.toml",
        "a1zero.eq10_error",
        'above = "rho_nl*tau/(tau - 1)"',
        'above = "rho_nl*alpha/(alpha - 1)"',
        "tau and alpha swapped",
    ),
    (
        "08_fig1.toml",
        "fig1.unnormalised_mse",
        "alpha = 2, kappa = 2, tau = [0.2, 0.4, 0.6, 0.8, 1.2, 1.5, 2, 3, 5, 8] } }\nversus",
        "tau = 2, kappa = 2, alpha = [0.2, 0.4, 0.6, 0.8, 1.2, 1.5, 2, 3, 5, 8] } }\nversus",
        "tau and alpha swapped",
    ),
    # the proof step of Result 1 (Appendix C), f generic: a wrong equivalent teacher or a wrong written form
    ("11_appendix_c.toml", "appc.moments", 'rho_eq = "rho_nonlinear"', 'rho_eq = "rho_f"', "rho_f for rho_nonlinear"),
    (
        "11_appendix_c.toml",
        "appc.test_error_functional",
        'rho_eq = "rho_nonlinear"',
        'rho_eq = "rho_f"',
        "rho_f for rho_nonlinear",
    ),
    (
        "11_appendix_c.toml",
        "appc.finite_size_terms",
        'rho_eq = "rho_nonlinear"',
        'rho_eq = "rho_f"',
        "rho_f for rho_nonlinear",
    ),
    ("11_appendix_c.toml", "appc.moments", 'cov_scale = "a1^2"', 'cov_scale = "a1"', "a1 for a1^2"),
    ("11_appendix_c.toml", "appc.test_error_functional", 'cov_scale = "a1^2"', 'cov_scale = "a1"', "a1 for a1^2"),
    ("11_appendix_c.toml", "appc.test_error_functional", "rho_f*trAtA/alpha + ", "", "dropped 1/alpha term"),
    ("11_appendix_c.toml", "appc.moments", 'E_uuT_I = "rho_f/alpha"', 'E_uuT_I = "0"', "dropped 1/alpha term"),
]


def _block(text, claim_id):
    start = text.index(f'id = "{claim_id}"')
    end = text.find("[[claim]]", start)
    return start, (len(text) if end < 0 else end)


def _mutated_copy(tmp_path, fname, claim_id, old, new):
    text = (DERIV / fname).read_text()
    a, b = _block(text, claim_id)
    block = text[a:b]
    assert block.count(old) == 1, f"mutation anchor not unique in {claim_id}: {old!r}"
    p = tmp_path / f"mutated_{fname}"
    p.write_text(text[:a] + block.replace(old, new) + text[b:])
    return p


def _verify(capsys, path, claim_id):
    code = main(["verify", "--quiet", "--json", str(path), "--only", claim_id])
    out, _ = capsys.readouterr()
    (r,) = json.loads(out)["points"]
    return code, r


@pytest.mark.parametrize(
    "fname, claim_id, old, new, kind", MUTATIONS, ids=[f"{m[1]}:{m[4].replace(' ', '_')}" for m in MUTATIONS]
)
def test_verify_catches_mutation(tmp_path, capsys, fname, claim_id, old, new, kind):
    code, r = _verify(capsys, DERIV / fname, claim_id)
    assert code == 0 and r["ok"], f"control: unmutated {claim_id} must pass: {r['detail']}"
    code, r = _verify(capsys, _mutated_copy(tmp_path, fname, claim_id, old, new), claim_id)
    assert code == 1, f"{kind} in {claim_id} not caught: {r['verdict']}: {r['detail']}"
    assert not r["ok"] and r["verdict"] == "mismatch"


def test_expected_mismatch_that_starts_to_hold_is_caught(tmp_path, capsys):
    """If someone 'fixes' the Fig. 1 caption claim to the legend value, the expected mismatch is gone."""
    p = _mutated_copy(tmp_path, "08_fig1.toml", "fig1.caption_noise", 'claimed = "1.447029"', 'claimed = "0.447029"')
    code, r = _verify(capsys, p, "fig1.caption_noise")
    assert code == 1 and r["verdict"] == "holds" and not r["ok"]
    assert r["label"] == "HOLDS (a mismatch was expected)"


@pytest.mark.parametrize("wrong", ["rho_nonlinear/a1^2 + 2", "squared"])
def test_wrong_expected_diagnosis_is_caught(tmp_path, capsys, wrong):
    """A wrong family quantity or a wrong error model as the expected diagnosis fails the claim."""
    p = _mutated_copy(
        tmp_path, "08_fig1.toml", "fig1.caption_noise", 'diagnosis = "total_for_residual"', f'diagnosis = "{wrong}"'
    )
    code, r = _verify(capsys, p, "fig1.caption_noise")
    assert code == 1 and r["verdict"] == "mismatch" and not r["ok"]
    assert "Expected diagnosis" in r["detail"] and "total_for_residual" in r["detail"]


def test_expected_diagnosis_as_family_quantity_still_accepted(tmp_path, capsys):
    p = _mutated_copy(
        tmp_path, "08_fig1.toml", "fig1.caption_noise", 'diagnosis = "total_for_residual"', 'diagnosis = "rho_f/a1^2"'
    )
    code, r = _verify(capsys, p, "fig1.caption_noise")
    assert code == 0 and r["ok"]
