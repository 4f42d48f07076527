"""Claim files: load and validate the paper's equations and numbers written as data.

A *claim* is one checkable statement of the paper (an equation, a printed
number, a figure caption) written as data in a TOML file under
``derivations/`` (or a user's own file).  The format is documented in
``docs/claims-format.md``; in short::

    [unit]                       # optional: what part of the paper this file covers
    title = "Fig. 1 (legend and caption)"
    source = "Sec. 3, Fig. 1, p. 3-4"

    [defaults]                   # optional: parameters every claim inherits
    f = "sin(g)"
    rho = "0.1"

    [[claim]]
    id = "fig1.legend_noise"
    source = "Sec. 3, Fig. 1 legend, p. 4"
    statement = 'linear teacher with \\rho = 0.447'
    method = "mpmath"            # symbolic | mpmath | mc | sim
    check = "hermite_value"      # a check kind, see icl_symbolic.verification.checks
    quantity = "rho_nonlinear/a1^2"
    claimed = "0.447"
    tolerance = { abs = 5e-4, reason = "the legend prints 3 decimals" }
    expected = "holds"           # holds | mismatch

Running claims and their verdicts are in :mod:`icl_symbolic.verification.runner`.

User text in claim files is never evaluated as Python: every expression goes
through :func:`icl_symbolic.engine.expr.parse_expr` with an explicit variable
whitelist, at load time, so a malformed file fails before anything runs.
"""

from __future__ import annotations

import fnmatch
import glob
import importlib.resources
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from icl_symbolic.core.errors import ClaimFileError, ICLError
from icl_symbolic.core.limits import MAX_CLAIM_FILE_BYTES, MAX_CLAIMS, check_count, read_text_limited
from icl_symbolic.diagnosis.scale import validate_expected_diagnosis
from icl_symbolic.verification.checks import REGISTRY
from icl_symbolic.verification.evidence import EVIDENCE, NOT_COUNTED
from icl_symbolic.verification.judge import Tolerance

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

METHODS = ("symbolic", "mpmath", "mc", "sim")
EXPECTED = ("holds", "mismatch")
TOLERANCE_KINDS = ("exact", "abs", "rel", "z")
#: Keys of a claim that are not parameters of its check.
CLAIM_KEYS = (
    "id",
    "source",
    "statement",
    "method",
    "check",
    "expected",
    "tolerance",
    "diagnosis",
    "full",
    "tier",
    "note",
    "why",
    "evidence",
    "evidence_reason",
    "result",
    "finding",
    "finding_kind",
)
#: Verification tiers, cheapest first: ``verify`` runs quick claims, ``--full`` adds the full ones,
#: ``--tier deep`` the deep ones too (paper-scale ladders, see docs/benchmarks.md).
TIERS = ("quick", "full", "deep")
#: What a claim's ``finding`` says about the paper: a statement the paper gets wrong (erratum), a
#: quantity off by a scale or an offset (scale slip), a choice the paper's result depends on and does
#: not state (unstated convention).  ``verify`` ends with these, grouped (docs/claims-format.md).
FINDING_KINDS = ("erratum", "scale slip", "unstated convention")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")

#: The shipped claim files in a source checkout that is used without being installed.
SOURCE_DERIVATIONS = Path(__file__).resolve().parents[2] / "derivations"


@dataclass(frozen=True)
class Claim:
    """One checkable statement, as loaded from a claim file."""

    id: str
    source: str
    statement: str
    method: str
    check: str
    expected: str
    tolerance: Tolerance
    params: dict
    parsed: dict
    file: str
    unit: str = ""
    diagnosis: str | None = None
    note: str = ""
    why: str = ""
    evidence: str = "consistency"  # derivation | independent | simulation | consistency | self-test
    result: str = ""  # the paper result the claim backs (verify.evidence.RESULTS)
    tier: str = "quick"  # quick | full | deep (TIERS)
    evidence_reason: str = ""  # why the claim has its evidence kind (required for consistency, self-test)
    finding: str = ""  # one sentence: what this claim shows about the paper (verify's findings block)
    finding_kind: str = ""  # one of FINDING_KINDS when finding is given

    def where(self) -> str:
        return f"{self.file}: claim {self.id!r}"

    @property
    def full(self) -> bool:
        """Deprecated: ``tier != "quick"``; read :attr:`tier` (removed in the next minor release)."""
        warnings.warn(
            'Claim.full is deprecated and will be removed in the next minor release; use claim.tier != "quick"',
            DeprecationWarning,
            stacklevel=2,
        )
        return self.tier != "quick"


# ---------------------------------------------------------------------------
# Loading and validation
# ---------------------------------------------------------------------------


def shipped_derivations():
    """The folder of the shipped claim files.

    Installed from a wheel, the repository's top-level ``derivations/`` folder is
    the data package ``icl_symbolic.derivations`` (pyproject.toml maps it) and is
    read through :mod:`importlib.resources`.  In a source checkout (an editable
    install, which puts the checkout on ``sys.path``, or no install at all) that
    package does not exist and the ``derivations/`` folder next to the package
    is used; both cases are exercised by ``.ci/run``.
    """
    try:
        root = importlib.resources.files("icl_symbolic.derivations")
    except ModuleNotFoundError:
        root = SOURCE_DERIVATIONS
    if not root.is_dir():
        raise ICLError(f"shipped derivations not found at {root}; pass claim files explicitly")
    return root


#: the papers whose claims are shipped: name -> (folder under derivations/, "" = the top level; citation)
PAPERS = {
    "letey2026": ("", "M. Letey, A. Rysmakhanov, Y. M. Lu, C. Pehlevan, J. A. Zavatone-Veth, arXiv:2610.10761"),
    "lu2024": ("lu2024", "Y. M. Lu, M. Letey, J. A. Zavatone-Veth, A. Maiti, C. Pehlevan, arXiv:2405.11751"),
}
DEFAULT_PAPER = "letey2026"


def default_files(paper: str = DEFAULT_PAPER) -> list:
    """The shipped claim files of ``paper`` (a key of :data:`PAPERS`, or ``all``), in paper order.

    The checked paper's files sit at the top of ``derivations/``; every further paper has
    its own folder ``derivations/<paper>/`` (``verify --paper``).  Within a paper, file
    names start with the order.
    """
    if paper == "all":
        return [f for name in PAPERS for f in default_files(name)]
    if paper not in PAPERS:
        raise ICLError(f"unknown paper {paper!r}; expected one of {', '.join(PAPERS)} or all")
    root = shipped_derivations()
    folder = root / PAPERS[paper][0] if PAPERS[paper][0] else root
    if not folder.is_dir():
        raise ICLError(f"no shipped claims for {paper} (expected the folder derivations/{PAPERS[paper][0]})")
    return sorted((p for p in folder.iterdir() if p.name.endswith(".toml")), key=lambda p: p.name)


def paper_of_file(path) -> str:
    """The paper a claim file belongs to: a further paper's files sit in a folder named after it
    (``derivations/lu2024/``, :data:`PAPERS`); every other file is the checked paper's."""
    folder = Path(str(path)).parent.name
    return next((name for name, (sub, _) in PAPERS.items() if sub and folder == sub), DEFAULT_PAPER)


def shipped_name(path) -> str:
    """The short name of a shipped claim file: ``04_lemma1.toml`` -> ``lemma1``."""
    stem = Path(str(path)).name.removesuffix(".toml")
    return stem.split("_", 1)[1] if "_" in stem and stem[:2].isdigit() else stem


def resolve_shipped(name: str) -> list:
    """The shipped claim files that ``name`` names, from any folder: its number (``04``, ``4``), its
    short name (``lemma1``), its file name with or without ``.toml`` (``04_lemma1``), a glob of these,
    or such a name inside a folder called ``derivations`` (``derivations/04_lemma1.toml``, the path in a
    checkout).  Empty when none matches (a name in any other folder is no shipped file)."""
    parent = Path(str(name)).parent
    if str(parent) not in ("", ".") and parent.name != "derivations":
        return []
    base = Path(str(name)).name.removesuffix(".toml")
    out = []
    for p in default_files():
        stem = p.name.removesuffix(".toml")
        if (
            base in (stem, shipped_name(p.name))
            or (base.isdigit() and stem[:2].isdigit() and int(base) == int(stem[:2]))
            or any(fnmatch.fnmatchcase(n, base) for n in (p.name, stem, shipped_name(p.name)))
        ):
            out.append(p)
    return out


def expand_paths(patterns) -> list[Path]:
    """Files from paths and globs; a name that is no file here names a shipped claim file
    (:func:`resolve_shipped`: ``lemma1``, ``04``, ``derivations/04_lemma1.toml`` from any folder);
    a pattern matching nothing is an error."""
    out: list[Path] = []
    for pat in patterns:
        hits = sorted(glob.glob(pat)) if any(ch in pat for ch in "*?[") else [pat]
        if (not hits or not Path(hits[0]).exists()) and not Path(pat).name[:1].isdigit():
            # the shipped files carry a paper-order prefix: derivations/lemma1.* finds 04_lemma1.toml
            alt = str(Path(pat).parent / f"[0-9][0-9]_{Path(pat).name}")
            hits = sorted(glob.glob(alt)) or hits
        if (not hits or not Path(hits[0]).exists()) and Path(pat).parent.name in ("", "derivations"):
            # only a bare name or derivations/NAME names a shipped file (nope/*.toml names nothing)
            hits = [str(p) for p in resolve_shipped(pat)] or hits
        if not hits:
            raise ICLError(f"no claim files match {pat!r}")
        for h in hits:
            p = Path(h)
            if p.is_dir():  # its subfolders too: derivations/ holds the further papers in derivations/<paper>/
                out.extend(sorted(p.rglob("*.toml")))
            elif not p.exists():
                raise ICLError(
                    f"claim file {h} does not exist (a shipped file is named by its number or "
                    "name from any folder: icl-symbolic verify --list)"
                )
            else:
                out.append(p)
    seen, uniq = set(), []
    for p in out:
        r = p.resolve()
        if r not in seen:
            seen.add(r)
            uniq.append(p)
    return uniq


def load_file(path) -> list[Claim]:
    """Load and validate one claim file; every problem names the file and the claim."""
    path = Path(path)
    name = str(path)
    try:
        data = tomllib.loads(read_text_limited(path, MAX_CLAIM_FILE_BYTES, "claim file"))
    except tomllib.TOMLDecodeError as exc:
        raise ClaimFileError(f"{name}: not valid TOML: {exc}") from None
    except ICLError as exc:
        raise ClaimFileError(str(exc)) from None
    unknown_top = set(data) - {"unit", "defaults", "claim"}
    if unknown_top:
        raise ClaimFileError(
            f"{name}: unknown top-level key(s) {', '.join(sorted(unknown_top))}; "
            "expected [unit], [defaults] and [[claim]]"
        )
    unit = data.get("unit", {})
    defaults = data.get("defaults", {})
    if not isinstance(unit, dict) or not isinstance(defaults, dict):
        raise ClaimFileError(f"{name}: [unit] and [defaults] must be tables")
    raw_claims = data.get("claim")
    if not isinstance(raw_claims, list) or not raw_claims:
        raise ClaimFileError(f"{name}: no [[claim]] entries")
    check_count(len(raw_claims), MAX_CLAIMS, f"{name}: [[claim]] entries", "split the file")
    claims, ids = [], set()
    for i, raw in enumerate(raw_claims):
        if not isinstance(raw, dict):
            raise ClaimFileError(f"{name}: claim #{i + 1} is not a table")
        cid = raw.get("id")
        where = f"{name}: claim {cid!r}" if isinstance(cid, str) else f"{name}: claim #{i + 1}"
        claim = _build_claim(raw, defaults, unit, name, where, REGISTRY)
        if claim.id in ids:
            raise ClaimFileError(f"{where}: duplicate id")
        ids.add(claim.id)
        claims.append(claim)
    return claims


def _need_str(raw, key, where):
    v = raw.get(key)
    if v is None:
        raise ClaimFileError(f"{where}: missing required key {key!r}")
    if not isinstance(v, str) or not v.strip():
        raise ClaimFileError(f"{where}: {key!r} must be a non-empty string")
    return v.strip()


def _build_claim(raw, defaults, unit, name, where, registry) -> Claim:
    cid = _need_str(raw, "id", where)
    if not _ID.match(cid):
        raise ClaimFileError(f"{where}: id may only contain letters, digits and _ . : -")
    source = _need_str(raw, "source", where)
    statement = _need_str(raw, "statement", where)
    method = _need_str(raw, "method", where)
    if method not in METHODS:
        raise ClaimFileError(f"{where}: method {method!r} is not one of {', '.join(METHODS)}")
    check = _need_str(raw, "check", where)
    if check not in registry:
        raise ClaimFileError(f"{where}: unknown check {check!r}; known: {', '.join(sorted(registry))}")
    expected = _need_str(raw, "expected", where)
    if expected not in EXPECTED:
        raise ClaimFileError(f"{where}: expected must be 'holds' or 'mismatch', got {expected!r}")
    tier = _tier(raw, where)
    if method == "sim" and tier == "quick":
        raise ClaimFileError(
            f'{where}: simulation claims (method = \'sim\') must set full = true or tier = "full" / "deep"'
        )
    tol = _tolerance(raw.get("tolerance"), where, method)
    diagnosis = raw.get("diagnosis")
    if expected == "mismatch":
        if not isinstance(diagnosis, str) or not diagnosis.strip():
            raise ClaimFileError(
                f"{where}: an expected mismatch needs 'diagnosis' "
                '(the quantity the claimed value is, e.g. "rho_f/a1^2")'
            )
    elif diagnosis is not None:
        raise ClaimFileError(f"{where}: 'diagnosis' is only for expected = 'mismatch'")
    for key in ("note", "why"):
        if key in raw and not isinstance(raw[key], str):
            raise ClaimFileError(f"{where}: {key!r} must be a string")
    evidence = _need_str(raw, "evidence", where)
    if evidence not in EVIDENCE:
        raise ClaimFileError(f"{where}: evidence {evidence!r} is not one of {', '.join(EVIDENCE)}")
    evidence_reason = _evidence_reason(raw, evidence, where)
    result = raw.get("result", unit.get("result", ""))
    if not isinstance(result, str):
        raise ClaimFileError(f"{where}: 'result' must be a string (the paper result the claim backs)")
    kind = registry[check]
    params = {k: v for k, v in defaults.items() if k in kind.params}
    params.update({k: v for k, v in raw.items() if k not in CLAIM_KEYS})
    parsed = kind.validate(params, where)
    if expected == "mismatch":
        try:
            validate_expected_diagnosis(diagnosis)
        except ICLError as exc:
            raise ClaimFileError(f"{where}: diagnosis {diagnosis!r}: {exc}") from None
    return Claim(
        id=cid,
        source=source,
        statement=statement,
        method=method,
        check=check,
        expected=expected,
        tolerance=tol,
        params=params,
        parsed=parsed,
        file=name,
        unit=str(unit.get("title", "")),
        diagnosis=diagnosis.strip() if diagnosis else None,
        note=str(raw.get("note", "")),
        why=str(raw.get("why", "")),
        evidence=evidence,
        result=result.strip(),
        tier=tier,
        evidence_reason=evidence_reason,
        **_finding(raw, where),
    )


def _tier(raw, where) -> str:
    """The claim's tier from ``tier`` (quick | full | deep) or the older ``full = true``."""
    full = raw.get("full")
    if full is not None and not isinstance(full, bool):
        raise ClaimFileError(f"{where}: 'full' must be true or false")
    tier = raw.get("tier")
    if tier is None:
        return "full" if full else "quick"
    if tier not in TIERS:
        raise ClaimFileError(f"{where}: tier {tier!r} is not one of {', '.join(TIERS)}")
    if full is not None and full != (tier != "quick"):
        raise ClaimFileError(f"{where}: 'full = {str(full).lower()}' contradicts tier = {tier!r}; give only 'tier'")
    return tier


def _finding(raw, where) -> dict:
    """The optional ``finding`` (one sentence about the paper, a non-empty string) and its
    ``finding_kind`` (one of :data:`FINDING_KINDS`): both or neither."""
    text, kind = raw.get("finding"), raw.get("finding_kind")
    if text is None and kind is None:
        return {}
    if text is None or kind is None:
        raise ClaimFileError(f"{where}: 'finding' and 'finding_kind' go together (give both or neither)")
    if not isinstance(text, str) or not text.strip():
        raise ClaimFileError(f"{where}: 'finding' must be a non-empty string (one sentence about the paper)")
    if kind not in FINDING_KINDS:
        raise ClaimFileError(f"{where}: finding_kind {kind!r} is not one of {', '.join(FINDING_KINDS)}")
    return {"finding": " ".join(text.split()), "finding_kind": kind}


def _evidence_reason(raw, evidence, where) -> str:
    """The optional ``evidence_reason``: a non-empty string; required when the kind is not counted as
    evidence (consistency, self-test), since such a label says the claim could not fail if the paper
    were wrong, and the reader should be told why."""
    if "evidence_reason" not in raw:
        if evidence in NOT_COUNTED:
            raise ClaimFileError(
                f"{where}: evidence {evidence!r} needs 'evidence_reason' (why a wrong "
                "statement in the paper could not make this claim fail)"
            )
        return ""
    v = raw["evidence_reason"]
    if not isinstance(v, str) or not v.strip():
        raise ClaimFileError(f"{where}: 'evidence_reason' must be a non-empty string")
    return " ".join(v.split())


def _tolerance(t, where, method) -> Tolerance:
    if not isinstance(t, dict):
        raise ClaimFileError(
            f"{where}: missing 'tolerance' table, e.g. tolerance = {{ abs = 1e-20, reason = \"...\" }}"
        )
    reason = t.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ClaimFileError(f"{where}: tolerance needs a 'reason' (why this tolerance)")
    kinds = [k for k in TOLERANCE_KINDS if k in t]
    extra = set(t) - set(TOLERANCE_KINDS) - {"reason", "bias_rel"}
    if extra:
        raise ClaimFileError(f"{where}: unknown tolerance key(s) {', '.join(sorted(extra))}")
    if len(kinds) != 1:
        raise ClaimFileError(f"{where}: tolerance needs exactly one of exact/abs/rel/z")
    kind = kinds[0]
    if kind == "exact":
        if t["exact"] is not True:
            raise ClaimFileError(f"{where}: tolerance exact must be true")
        if method != "symbolic":
            raise ClaimFileError(f"{where}: an exact tolerance needs method = 'symbolic'")
        return Tolerance("exact", None, reason.strip())
    v = t[kind]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or v != v or v == float("inf"):
        raise ClaimFileError(f"{where}: tolerance {kind} must be a positive finite number")
    if kind == "z" and method not in ("mc", "sim"):
        raise ClaimFileError(f"{where}: a z tolerance is for method 'mc' or 'sim'")
    if method in ("mc", "sim") and kind != "z":
        raise ClaimFileError(f"{where}: Monte-Carlo and simulation claims need a z tolerance (in standard errors)")
    bias = t.get("bias_rel")
    if bias is not None:
        if kind != "z":
            raise ClaimFileError(f"{where}: bias_rel is only allowed with a z tolerance")
        if isinstance(bias, bool) or not isinstance(bias, (int, float)) or not 0 <= bias < 1:
            raise ClaimFileError(f"{where}: bias_rel must be a number in [0, 1)")
        bias = float(bias)
    return Tolerance(kind, float(v), reason.strip(), bias)


def load_claims(paths=None, paper: str | None = None) -> list[Claim]:
    """Load claim files; ids must be unique.  Without ``paths``: the shipped claims of ``paper``
    (default the checked paper, :func:`default_files`).  With ``paths`` (files, folders with their
    subfolders, globs): every claim in them, or with ``paper`` only the files of that paper
    (:func:`paper_of_file`; ``all``: every one)."""
    files = default_files(paper or DEFAULT_PAPER) if not paths else expand_paths(paths)
    if paths and paper not in (None, "all"):
        if paper not in PAPERS:
            raise ICLError(f"unknown paper {paper!r}; expected one of {', '.join(PAPERS)} or all")
        files = [f for f in files if paper_of_file(f) == paper]
        if not files:
            raise ICLError(f"no claim files of the paper {paper} among the files given")
    if not files:
        raise ICLError("no claim files to load")
    claims, owner = [], {}
    for f in files:
        more = load_file(f)
        check_count(len(claims) + len(more), MAX_CLAIMS, "claims in one run", "fewer files, or --only")
        for c in more:
            if c.id in owner:
                raise ClaimFileError(f"{c.file}: claim {c.id!r}: id already used in {owner[c.id]}")
            owner[c.id] = c.file
            claims.append(c)
    return claims


def select(claims, only=None) -> list[Claim]:
    """Claims whose id equals, or matches the glob, of one of ``only``; unknown ids are errors."""
    if not only:
        return list(claims)
    keep = []
    for pat in only:
        hits = [c for c in claims if c.id == pat or fnmatch.fnmatchcase(c.id, pat)]
        if not hits:
            close = [c.id for c in claims if pat.split(".")[0] in c.id][:5]
            hint = f"; similar: {', '.join(close)}" if close else ""
            raise ICLError(f"--only: unknown claim id {pat!r}{hint}")
        keep.extend(h for h in hits if h not in keep)
    return [c for c in claims if c in keep]
