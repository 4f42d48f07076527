"""A small simulation-backed claim file for tests of the machinery around claims (parallel runs,
streaming, Dask): a real ladder of d = 6, 8, 10 with 10 seeds each, a second of a paired ratio,
seconds to run, instead of the shipped paper-scale claims (minutes); and one symbolic identity claim
(milliseconds) written with any left-hand side and extra keys."""

from __future__ import annotations

from icl_symbolic.verification import claimfile

SMALL_LADDER = """
[[claim]]
id = "small.ladder"
source = "test"
statement = 'x'
method = "sim"
tier = "full"
check = "simulation_extrapolated"
evidence = "simulation"
result = "Result 1"
f = "tanh(g)"
rho = "0.1"
d_list = [6, 8, 10]
n_seeds = [12, 10, 10]
alpha = 2
kappa = 2
tau = 2
n_test = 50
tolerance = { z = 3.29, reason = "test" }
expected = "holds"

[[claim]]
id = "small.ratio"
source = "test"
statement = 'x'
method = "sim"
tier = "full"
check = "simulation_extrapolated"
evidence = "simulation"
result = "Result 1"
f = "tanh(g)"
rho = "0.1"
versus = "linear_equivalent"
d_list = [6, 8, 10]
n_seeds = 10
alpha = 2
kappa = 2
tau = 2
n_test = 50
tolerance = { z = 3.29, reason = "test" }
expected = "holds"
"""


def small_ladder_file(tmp_path):
    path = tmp_path / "small_ladder.toml"
    path.write_text(SMALL_LADDER)
    return path


def small_ladder_claims(tmp_path):
    return claimfile.load_file(str(small_ladder_file(tmp_path)))


def identity_claim(cid: str, lhs: str, rhs: str = "x", symbol: str = "x", extra: str = "", source: str = "p. 1") -> str:
    """One ``symbolic_identity`` claim as TOML text: ``lhs = rhs`` in ``symbol``, expected to hold;
    ``lhs`` is written as given (the caller escapes it), ``extra`` (whole lines) is appended."""
    return f"""
[[claim]]
id = "{cid}"
source = "{source}"
statement = 'x'
method = "symbolic"
check = "symbolic_identity"
evidence = "derivation"
symbols = ["{symbol}"]
lhs = "{lhs}"
rhs = "{rhs}"
tolerance = {{ exact = true, reason = "symbolic identity" }}
expected = "holds"
{extra}"""
