"""Claim files: load, validate, run, and judge the paper's equations and numbers.

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
    check = "hermite_value"      # a check kind, see icl_symbolic.checks
    quantity = "rho_nonlinear/a1^2"
    claimed = "0.447"
    tolerance = { abs = 5e-4, reason = "the legend prints 3 decimals" }
    expected = "holds"           # holds | mismatch

A claim's verdict is ``holds`` when the computed and claimed values agree
within the tolerance, ``mismatch`` when they do not (then, where the check can,
a scale-mismatch diagnosis says what the claimed value *is*), ``unavailable``
when the library module backing its check is missing, ``error`` when the
computation itself failed, and ``skipped`` when it needs ``--full``.  A claim
is *ok* when its verdict equals its expected verdict and, for an expected
mismatch, the diagnosis found is the one written in the claim's
``diagnosis`` field.  ``verify`` exits 0 only when every selected claim is ok.

User text in claim files is never evaluated as Python: every expression goes
through :func:`icl_symbolic.expr.parse_expr` with an explicit variable
whitelist, at load time, so a malformed file fails before anything runs.
"""

from __future__ import annotations

import fnmatch
import glob
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ICLError

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

METHODS = ("symbolic", "mpmath", "mc", "sim")
EXPECTED = ("holds", "mismatch")
TOLERANCE_KINDS = ("exact", "abs", "rel", "z")
#: Keys of a claim that are not parameters of its check.
CLAIM_KEYS = ("id", "source", "statement", "method", "check", "expected", "tolerance",
              "diagnosis", "full", "note", "why")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")

DERIVATIONS_DIR = Path(__file__).resolve().parent.parent / "derivations"


class ClaimFileError(ICLError):
    """A claim file that cannot be used; the message names file, claim and problem."""


@dataclass(frozen=True)
class Tolerance:
    """How close is close enough, and why.

    ``kind``: ``exact`` (symbolic residual must simplify to 0), ``abs``
    (|computed - claimed| <= value), ``rel`` (|computed - claimed| <= value
    |claimed|), ``z`` (|computed - claimed| <= value x SE, for Monte Carlo and
    simulation).
    """

    kind: str
    value: float | None
    reason: str
    bias_rel: float | None = None

    def describe(self) -> str:
        if self.kind == "exact":
            return "exact"
        if self.kind == "z":
            return f"|z| <= {self.value:g}" + (f" + bias {self.bias_rel:g} relative" if self.bias_rel else "")
        return f"{self.kind} {self.value:g}"


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
    full: bool = False
    note: str = ""
    why: str = ""

    def where(self) -> str:
        return f"{self.file}: claim {self.id!r}"


@dataclass
class ClaimResult:
    """The outcome of running one claim."""

    claim: Claim
    verdict: str                 # holds | mismatch | unavailable | error | skipped
    ok: bool
    detail: str
    residual: object = None      # float or str (symbolic)
    zscore: float | None = None
    computed: object = None      # Value
    claimed: object = None       # Value
    diagnosis: object = None     # icl_symbolic.diagnose.Diagnosis
    figures: list = field(default_factory=list)   # [(title, png bytes)]
    elapsed: float = 0.0

    @property
    def label(self) -> str:
        """Verdict as shown to people."""
        v, e = self.verdict, self.claim.expected
        if v in ("unavailable", "error", "skipped"):
            return v
        if v == "holds":
            return "holds" if e == "holds" else "HOLDS (a mismatch was expected)"
        if e == "mismatch":
            return "mismatch found as expected" if self.ok else "mismatch, WRONG diagnosis"
        return "FAILS"

    def measure(self) -> str:
        """Residual or z-score, compactly."""
        if self.zscore is not None:
            return f"z={self.zscore:+.2f}"
        r = self.residual
        if r is None:
            return "-"
        if isinstance(r, str):
            return "res=" + (r if len(r) <= 18 else r[:15] + "...")
        return f"|res|={float(r):.2e}"

    def to_json(self) -> dict:
        c = self.claim
        out = {
            "id": c.id, "source": c.source, "verdict": self.verdict, "expected": c.expected,
            "ok": self.ok, "detail": self.detail, "label": self.label,
            "statement": c.statement, "method": c.method, "check": c.check, "file": c.file,
            "tolerance": {"kind": c.tolerance.kind, "value": c.tolerance.value,
                          "reason": c.tolerance.reason},
            "residual": None if self.residual is None else (
                self.residual if isinstance(self.residual, str) else float(self.residual)),
            "zscore": self.zscore, "elapsed_s": round(self.elapsed, 3), "full": c.full,
        }
        if self.computed is not None:
            out["computed"] = self.computed.to_json()
        if self.claimed is not None:
            out["claimed"] = self.claimed.to_json()
        if c.diagnosis:
            out["expected_diagnosis"] = c.diagnosis
        if self.diagnosis is not None:
            out["diagnosis"] = self.diagnosis.to_json()
        return out


# ---------------------------------------------------------------------------
# Loading and validation
# ---------------------------------------------------------------------------

def default_files() -> list[Path]:
    """The shipped derivation files, in paper order."""
    if not DERIVATIONS_DIR.is_dir():
        raise ICLError(f"shipped derivations not found at {DERIVATIONS_DIR}; pass claim files explicitly")
    return sorted(DERIVATIONS_DIR.glob("*.toml"))


def expand_paths(patterns) -> list[Path]:
    """Files from paths and globs; a pattern matching nothing is an error."""
    out: list[Path] = []
    for pat in patterns:
        hits = sorted(glob.glob(pat)) if any(ch in pat for ch in "*?[") else [pat]
        if (not hits or not Path(hits[0]).exists()) and not Path(pat).name[:1].isdigit():
            # the shipped files carry a paper-order prefix: derivations/lemma1.* finds 04_lemma1.toml
            alt = str(Path(pat).parent / f"[0-9][0-9]_{Path(pat).name}")
            hits = sorted(glob.glob(alt)) or hits
        if not hits:
            raise ICLError(f"no claim files match {pat!r}")
        for h in hits:
            p = Path(h)
            if p.is_dir():
                out.extend(sorted(p.glob("*.toml")))
            elif not p.exists():
                raise ICLError(f"claim file {h} does not exist")
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
    from .checks import REGISTRY

    path = Path(path)
    name = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ClaimFileError(f"{name}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ClaimFileError(f"{name}: cannot read: {exc}") from None
    unknown_top = set(data) - {"unit", "defaults", "claim"}
    if unknown_top:
        raise ClaimFileError(f"{name}: unknown top-level key(s) {', '.join(sorted(unknown_top))}; "
                             "expected [unit], [defaults] and [[claim]]")
    unit = data.get("unit", {})
    defaults = data.get("defaults", {})
    if not isinstance(unit, dict) or not isinstance(defaults, dict):
        raise ClaimFileError(f"{name}: [unit] and [defaults] must be tables")
    raw_claims = data.get("claim")
    if not isinstance(raw_claims, list) or not raw_claims:
        raise ClaimFileError(f"{name}: no [[claim]] entries")
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
    full = raw.get("full", False)
    if not isinstance(full, bool):
        raise ClaimFileError(f"{where}: 'full' must be true or false")
    if method == "sim" and not full:
        raise ClaimFileError(f"{where}: simulation claims (method = 'sim') must set full = true")
    tol = _tolerance(raw.get("tolerance"), where, method)
    diagnosis = raw.get("diagnosis")
    if expected == "mismatch":
        if not isinstance(diagnosis, str) or not diagnosis.strip():
            raise ClaimFileError(f"{where}: an expected mismatch needs 'diagnosis' "
                                 "(the quantity the claimed value is, e.g. \"rho_f/a1^2\")")
    elif diagnosis is not None:
        raise ClaimFileError(f"{where}: 'diagnosis' is only for expected = 'mismatch'")
    for key in ("note", "why"):
        if key in raw and not isinstance(raw[key], str):
            raise ClaimFileError(f"{where}: {key!r} must be a string")
    kind = registry[check]
    params = {k: v for k, v in defaults.items() if k in kind.params}
    params.update({k: v for k, v in raw.items() if k not in CLAIM_KEYS})
    parsed = kind.validate(params, where)
    if expected == "mismatch":
        from .diagnose import family_expr
        try:
            family_expr(diagnosis)
        except ICLError as exc:
            raise ClaimFileError(f"{where}: diagnosis {diagnosis!r}: {exc}") from None
    return Claim(id=cid, source=source, statement=statement, method=method, check=check,
                 expected=expected, tolerance=tol, params=params, parsed=parsed, file=name,
                 unit=str(unit.get("title", "")), diagnosis=diagnosis.strip() if diagnosis else None,
                 full=full, note=str(raw.get("note", "")), why=str(raw.get("why", "")))


def _tolerance(t, where, method) -> Tolerance:
    if not isinstance(t, dict):
        raise ClaimFileError(f"{where}: missing 'tolerance' table, e.g. "
                             "tolerance = { abs = 1e-20, reason = \"...\" }")
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
        raise ClaimFileError(f"{where}: Monte-Carlo and simulation claims need a z tolerance "
                             "(in standard errors)")
    bias = t.get("bias_rel")
    if bias is not None:
        if kind != "z":
            raise ClaimFileError(f"{where}: bias_rel is only allowed with a z tolerance")
        if isinstance(bias, bool) or not isinstance(bias, (int, float)) or not 0 <= bias < 1:
            raise ClaimFileError(f"{where}: bias_rel must be a number in [0, 1)")
        bias = float(bias)
    return Tolerance(kind, float(v), reason.strip(), bias)


def load_claims(paths=None) -> list[Claim]:
    """Load claim files (default: the shipped ``derivations/``); ids must be unique."""
    files = default_files() if not paths else expand_paths(paths)
    if not files:
        raise ICLError("no claim files to load")
    claims, owner = [], {}
    for f in files:
        for c in load_file(f):
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


# ---------------------------------------------------------------------------
# Running and judging
# ---------------------------------------------------------------------------

def z_to_t(z: float, dof: int | None) -> float:
    """The Student-t quantile with the same two-sided false-alarm rate as normal ``z``.

    Simulation values are means over a few seeds whose SE is itself estimated;
    with ``dof = seeds - 1`` the normal quantile would understate the limit.

    >>> round(z_to_t(3.29, None), 2), round(z_to_t(3.29, 3), 1)
    (3.29, 12.9)
    """
    if not dof or dof >= 1000:
        return float(z)
    from scipy import stats
    p = 2 * stats.norm.sf(z)
    return float(stats.t.isf(p / 2, dof))


def compare(computed, claimed, tol: Tolerance):
    """Apply a tolerance: returns ``(holds, residual, zscore, text)``.

    ``computed`` and ``claimed`` are :class:`~icl_symbolic.values.Value`.
    ``exact``: the symbolic difference must simplify to 0 (both exact).
    ``abs``/``rel``: the absolute difference, plus the computed value's own
    error estimate, within the tolerance (the estimate is *added* to the
    tolerance only when the claimed side is a printed number: a certified
    error bound of the computation can never make a claim fail).
    ``z``: the difference in units of the combined standard error.
    """
    import mpmath
    import sympy

    if tol.kind == "exact":
        if computed.exact is None or claimed.exact is None:
            raise ICLError("an exact tolerance needs exact values on both sides")
        diff = sympy.simplify(computed.exact - claimed.exact)
        if diff == 0:
            return True, "0", None, "symbolic difference simplifies to 0"
        return False, str(diff), None, f"symbolic difference {diff}"
    with mpmath.workdps(40):
        c, k = mpmath.mpf(computed.value), mpmath.mpf(claimed.value)
        diff = c - k
        if tol.kind == "z":
            se2 = sum(float(v.stderr) ** 2 for v in (computed, claimed) if v.stderr is not None)
            if se2 <= 0:
                raise ICLError("a z tolerance needs a Monte-Carlo or simulation value with a standard error")
            z = float(diff) / se2 ** 0.5
            dofs = [v.n_samples - 1 for v in (computed, claimed)
                    if v.method == "sim" and v.stderr is not None and v.n_samples]
            zq = z_to_t(tol.value, min(dofs) if dofs else None)
            qtxt = "" if zq == tol.value else f" (Student-t for {min(dofs)} dof: {zq:.3g})"
            if tol.bias_rel:
                bias = tol.bias_rel * abs(float(k))
                lim = zq * se2 ** 0.5 + bias
                return (abs(float(diff)) <= lim, abs(float(diff)), z,
                        f"z = {z:+.2f}; |diff| = {abs(float(diff)):.3g} vs {zq:.3g} SE{qtxt} + bias "
                        f"{bias:.3g} = {lim:.3g}")
            return abs(z) <= zq, abs(float(diff)), z, f"z = {z:+.2f} (limit {zq:.3g}{qtxt})"
        slack = 0.0
        for v in (computed, claimed):
            if v.abs_err is not None:
                slack += float(v.abs_err)
        bound = tol.value if tol.kind == "abs" else tol.value * float(abs(k))
        res = abs(float(diff))
        return res <= bound + slack, res, None, f"|diff| = {res:.3g} (limit {bound:.3g})"


def _needs_available(kind):
    import importlib
    missing = []
    for mod, what in kind.needs:
        try:
            m = importlib.import_module(f"icl_symbolic.{mod}")
        except ImportError:
            missing.append(f"icl_symbolic.{mod} ({what})")
            continue
        except Exception as exc:  # a module that exists but fails to import is unusable too
            missing.append(f"icl_symbolic.{mod} ({what}; import failed: {type(exc).__name__})")
            continue
        attr = getattr(kind, "needs_attrs", {}).get(mod, ())
        lacking = [a for a in attr if not hasattr(m, a)]
        if lacking:
            missing.append(f"icl_symbolic.{mod}.{'/'.join(lacking)} ({what})")
    return missing


def run_claim(claim: Claim) -> ClaimResult:
    """Run one claim and judge it."""
    from .checks import REGISTRY

    kind = REGISTRY[claim.check]
    t0 = time.perf_counter()
    missing = _needs_available(kind)
    if missing:
        return ClaimResult(claim, "unavailable", False, f"unavailable: needs {', '.join(missing)}",
                           elapsed=time.perf_counter() - t0)
    try:
        out = kind.func(claim)
        if out.residual_expr is not None:      # a symbolic identity judged by the check itself
            holds = out.holds
            residual, z, how = out.residual_expr, None, out.detail
        else:
            holds, residual, z, how = compare(out.computed, out.claimed, claim.tolerance)
        if out.also_required is not None and not out.also_required[0]:
            holds = False
            how += f"; fails: {out.also_required[1]}"
        verdict = "holds" if holds else "mismatch"
        diag = out.diagnosis_fn() if (verdict == "mismatch" and out.diagnosis_fn) else None
    except ICLError as exc:
        return ClaimResult(claim, "error", False, f"error: {exc}", elapsed=time.perf_counter() - t0)
    except Exception as exc:  # a library failure is a verdict, not a crash of the whole run
        return ClaimResult(claim, "error", False, f"error: {type(exc).__name__}: {exc}",
                           elapsed=time.perf_counter() - t0)
    ok = verdict == claim.expected
    detail = out.detail if out.residual_expr is not None else f"{out.detail}; {how}"
    if verdict == "mismatch" and diag is not None:
        detail += f". Diagnosis: {diag.summary()}"
    if claim.expected == "mismatch" and verdict == "mismatch":
        found = diag.best if diag is not None else None
        from .diagnose import family_expr, _key
        if found is None or _key(found.expr) != _key(family_expr(claim.diagnosis)):
            ok = False
            detail += (f". Expected diagnosis {claim.diagnosis!r}, found "
                       f"{found.name if found is not None else 'none'}")
    return ClaimResult(claim, verdict, ok, detail, residual=residual, zscore=z,
                       computed=out.computed, claimed=out.claimed, diagnosis=diag,
                       figures=list(out.figures), elapsed=time.perf_counter() - t0)


def run_claims(claims, full: bool = False, progress=None) -> list[ClaimResult]:
    """Run claims in order; ``full=False`` skips (explicitly) the ``full = true`` ones.

    ``progress``: a text stream (e.g. ``sys.stderr``) for one line per claim.
    """
    from .checks_model import PROGRESS

    results = []
    n = len(claims)
    saved, PROGRESS["stream"] = PROGRESS["stream"], progress
    try:
        for i, c in enumerate(claims, 1):
            if c.full and not full:
                results.append(ClaimResult(c, "skipped", True, "skipped: simulation-backed, run with --full"))
                continue
            if progress is not None:
                print(f"[{i}/{n}] {c.id} ...", file=progress, flush=True)
            results.append(run_claim(c))
    finally:
        PROGRESS["stream"] = saved
    return results


def summarize(results) -> dict:
    """Counts by outcome; ``ok`` is True only when every run claim has its expected verdict."""
    s = {"total": len(results), "holds": 0, "mismatch_expected": 0, "failed": 0,
         "unavailable": 0, "error": 0, "skipped": 0}
    for r in results:
        if r.verdict == "skipped":
            s["skipped"] += 1
        elif r.verdict == "unavailable":
            s["unavailable"] += 1
        elif r.verdict == "error":
            s["error"] += 1
        elif not r.ok:
            s["failed"] += 1
        elif r.verdict == "holds":
            s["holds"] += 1
        else:
            s["mismatch_expected"] += 1
    s["ok"] = s["failed"] == 0 and s["unavailable"] == 0 and s["error"] == 0
    return s


def summary_line(s: dict) -> str:
    parts = [f"{s['total']} claims: {s['holds']} hold",
             f"{s['mismatch_expected']} mismatches found as expected",
             f"{s['failed']} failed"]
    if s["unavailable"]:
        parts.append(f"{s['unavailable']} unavailable")
    if s["error"]:
        parts.append(f"{s['error']} errors")
    if s["skipped"]:
        parts.append(f"{s['skipped']} skipped (need --full)")
    return ", ".join(parts) + (" -- OK" if s["ok"] else " -- NOT OK")


def format_line(r: ClaimResult, width: int = 34) -> str:
    """One line per claim: status, id, verdict, residual or z, short reason.

    A mismatch (expected or not) gets its diagnosis, and an expected mismatch
    its ``why``, in full on indented continuation lines.
    """
    mark = "ok " if r.ok else "!! "
    reason = r.detail.split(". Diagnosis: ")[0]
    reason = reason if len(reason) <= 150 else reason[:147] + "..."
    line = f"{mark}{r.claim.id:<{width}} {r.label:<28} {r.measure():<16} {reason}"
    if r.verdict == "mismatch":
        if r.diagnosis is not None:
            line += "\n      diagnosis: " + r.diagnosis.summary()
        if r.claim.expected == "mismatch" and r.claim.why:
            line += "\n      why: " + " ".join(r.claim.why.split())
        if not r.ok and ". Expected diagnosis" in r.detail:
            line += "\n      expected diagnosis" + r.detail.split(". Expected diagnosis", 1)[1]
    return line


def verify(paths=None, only=None, full=False, progress=None):
    """Library entry point: load, select, run; returns ``(results, summary)``."""
    claims = select(load_claims(paths), only)
    results = run_claims(claims, full=full, progress=progress)
    return results, summarize(results)


__all__ = ["Claim", "ClaimResult", "Tolerance", "ClaimFileError", "load_file", "load_claims",
           "select", "compare", "run_claim", "run_claims", "summarize", "summary_line",
           "format_line", "verify", "default_files", "expand_paths"]


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use: icl-symbolic verify")
