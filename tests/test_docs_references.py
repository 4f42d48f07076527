"""The repository stands alone: no references to files outside it, no issue numbers.

Scanned: README.md, docs/, derivations/, benchmarks/, the package and the tests
(this file excepted, since it spells the patterns).  A reference to a file
outside the repository (the session's shared folders) or to an issue number
would point a reader at something they do not have; the notes the code relies
on are in docs/ (for example docs/finite-size.md and docs/linear-theory.md).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = (
    re.compile(r"\bissues?\s*#?\d+", re.I),  # "issue 4", "Issue #12"
    re.compile(r"(?<![\w.])/work/|\bshared/(reference|paper)\b|\.\./shared"),
)


def _files():
    yield ROOT / "README.md"
    for folder, suffixes in (
        ("docs", (".md",)),
        ("derivations", (".toml", ".md")),
        ("benchmarks", (".py",)),
        ("icl_symbolic", (".py", ".toml", ".md")),
        ("tests", (".py",)),
    ):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in suffixes and path.resolve() != Path(__file__).resolve():
                yield path


def test_no_outside_references_or_issue_numbers():
    bad = []
    for path in _files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(p.search(line) for p in PATTERNS):
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not bad, "references outside the repository or to issue numbers:\n" + "\n".join(bad)


def test_the_patterns_catch_what_they_should():
    # built by concatenation so that this file itself carries no such reference
    hits = ["see issue 4", "Issue #12", "shared/" + "reference/finite-size.md", "/work/shared/x"]
    misses = ["issues are welcome", "docs/finite-size.md", "tissue 4"]
    assert all(any(p.search(t) for p in PATTERNS) for t in hits)
    assert not any(any(p.search(t) for p in PATTERNS) for t in misses)
