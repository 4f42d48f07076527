"""Claim sets of more than one paper: derivations/<paper>/, ``verify --paper``, the tally grouped by paper."""

import json

from icl_symbolic.cli import main
from icl_symbolic.verification.claimfile import PAPERS, default_files, load_claims
from icl_symbolic.verification.evidence import OTHER_PAPER_RESULTS, OUR_RESULTS, RESULTS


def test_default_is_the_checked_paper_and_other_papers_have_their_folder():
    base = load_claims()
    assert not any(c.id.startswith("lu2024.") for c in base)
    assert all(c.result in RESULTS + OUR_RESULTS for c in base)
    lu = load_claims(paper="lu2024")
    assert lu and all(c.id.startswith("lu2024.") and c.result in OTHER_PAPER_RESULTS for c in lu)
    assert all("/lu2024/" in c.file.replace("\\", "/") for c in lu)
    assert len(default_files("all")) == len(default_files()) + len(default_files("lu2024"))
    assert set(PAPERS) == {"letey2026", "lu2024"}


def test_verify_paper_runs_and_groups_the_tally_by_paper(capsys):
    assert main(["verify", "--paper", "lu2024", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["ok"] and len(doc["points"]) == len(load_claims(paper="lu2024"))
    assert set(doc["evidence"]) <= set(OTHER_PAPER_RESULTS)
    assert all(k.startswith("arXiv:2405.11751: ") for k in doc["evidence"])


def test_bad_paper_input_is_one_line_exit_2(capsys, tmp_path):
    assert main(["verify", "--paper", "nobody"]) == 2
    assert main(["verify", "--paper", "lu2024", str(tmp_path / "x.toml")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 2


def test_a_wrong_number_of_the_sister_paper_is_caught(tmp_path, capsys):
    """The IDG value claims can fail: the same claim with its number off by 1e-6 relative is a mismatch."""
    text = default_files("lu2024")[0].read_text()
    start = text.index('[[claim]]\nid = "lu2024.idg_below_peak"')
    block = text[start : text.index("[[claim]]", start + 5)]
    bad = block.replace('claimed = "0.998949214247828"', 'claimed = "0.998950213"')
    assert bad != block
    f = tmp_path / "wrong.toml"
    f.write_text(bad)
    assert main(["verify", str(f), "--quiet"]) == 1
    assert "lu2024.idg_below_peak" in capsys.readouterr().out


def test_a_folder_includes_its_subfolders_and_paper_filters_the_files_given():
    """``verify derivations/`` used to leave out derivations/lu2024 without a word, and ``--paper``
    with files was refused: a folder now brings its subfolders, and ``--paper`` keeps that paper's
    files among those given."""
    from icl_symbolic.verification.claimfile import shipped_derivations

    root = str(shipped_derivations())
    every = load_claims([root])
    ids = {c.id for c in every}
    lu_ids = {c.id for c in load_claims(paper="lu2024")}
    base_ids = {c.id for c in load_claims()}
    assert ids == lu_ids | base_ids and lu_ids and base_ids
    assert {c.id for c in load_claims([root], paper="lu2024")} == lu_ids
    assert {c.id for c in load_claims([root], paper="letey2026")} == base_ids
    assert {c.id for c in load_claims([root], paper="all")} == ids


def test_paper_with_files_of_another_paper_is_one_line_exit_2(capsys):
    from icl_symbolic.verification.claimfile import default_files

    assert main(["verify", str(default_files()[0]), "--paper", "lu2024", "--list"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no claim files of the paper lu2024" in err[0]
