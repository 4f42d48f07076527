"""Hostile claim files: the Markdown report shows their text inert; 'where' substitutions are bounded."""

from __future__ import annotations

import re
import time

from icl_symbolic.cli import main

HOSTILE = """
[[claim]]
id = "u.hostile"
source = "<script>alert(1)</script> [link](javascript:alert(1)) **bold** | cell"
statement = 'x ``` <img src=x onerror=alert(1)> ````'
method = "symbolic"
check = "symbolic_identity"
evidence = "derivation"
evidence_reason = "<script>alert(2)</script> `code` [x](javascript:alert(2))"
symbols = ["x"]
lhs = "x"
rhs = "x"
note = "<iframe src='http://example.invalid'></iframe> ![img](http://example.invalid/x.png)"
tolerance = { exact = true, reason = "symbolic <b>bold</b>" }
expected = "holds"
"""


def test_markdown_report_escapes_claim_text(tmp_path, capsys):
    f = tmp_path / "h.toml"
    f.write_text(HOSTILE, encoding="utf-8")
    out = tmp_path / "r.md"
    assert main(["verify", str(f), "--report", str(out), "--quiet"]) == 0
    capsys.readouterr()
    md = out.read_text(encoding="utf-8")
    outside = re.sub(r"^(`{3,})math\n.*?\n\1$", "", md, flags=re.M | re.S)  # drop the fenced statement
    for raw in ("<script", "<iframe", "<img", "<b>", "](javascript:", "![img](http"):
        assert not re.search(r"(?<!\\)" + re.escape(raw), outside), raw  # only backslash-escaped
    # the statement's fence is longer than any backtick run inside it: it cannot be closed early
    fences = re.findall(r"^(`{3,})math$", md, flags=re.M)
    assert fences and all(len(fence) >= 5 for fence in fences)
    # the statement is still shown as typed inside its fence
    assert "x ``` <img src=x onerror=alert(1)> ````" in md
    assert "Evidence reason (derivation): \\<script\\>alert\\(2\\)" in md  # shown, escaped


GROWING = """
[[claim]]
id = "u.grow"
source = "user, p. 1"
statement = 'x'
method = "symbolic"
check = "symbolic_identity"
evidence = "derivation"
symbols = ["a", "b", "c", "x"]
lhs = "a"
rhs = "x"
where = { a = "(b+2)**8", b = "(c+2)**8", c = "(x+2)**8" }
tolerance = { exact = true, reason = "symbolic" }
expected = "holds"
"""


def test_where_substitutions_are_bounded(tmp_path, capsys):
    # ((((x+2)^8 + 2)^8 + 2)^8 has degree 512: refused by the size limits, not simplified for minutes
    f = tmp_path / "g.toml"
    f.write_text(GROWING, encoding="utf-8")
    t0 = time.monotonic()
    rc = main(["verify", str(f), "--quiet"])
    out, err = capsys.readouterr()
    assert time.monotonic() - t0 < 30
    assert rc == 1 and "Traceback" not in err
    assert "expression too large" in out + err
