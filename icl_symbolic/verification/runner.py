"""Running claims: one verdict per claim, a summary, and the one-line formats.

A claim's verdict is ``holds`` when the computed and claimed values agree
within the tolerance, ``mismatch`` when they do not (then, where the check can,
a scale-mismatch diagnosis says what the claimed value *is*), ``unavailable``
when the library module backing its check is missing, ``error`` when the
computation itself failed, and ``skipped`` when it needs ``--full``.  A claim
is *ok* when its verdict equals its expected verdict and, for an expected
mismatch, the diagnosis found is the one written in the claim's
``diagnosis`` field.  ``verify`` exits 0 only when every selected claim is ok.
"""

from __future__ import annotations

import functools
import importlib
import textwrap
import time
from dataclasses import dataclass, field

from icl_symbolic.core.cost import announced, duration
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.parallel import check_jobs, heartbeat, map_sweep, resolve_scheduler, use_seed_jobs
from icl_symbolic.diagnosis.scale import expected_diagnosis_ok
from icl_symbolic.simulation.cache import SeedCache, use_cache
from icl_symbolic.verification.checks import REGISTRY
from icl_symbolic.verification.claimfile import TIERS, Claim, load_claims, select
from icl_symbolic.verification.judge import compare, detectable
from icl_symbolic.verification.schedule import marginal_costs, run_estimate, schedule


@dataclass
class ClaimResult:
    """The outcome of running one claim."""

    claim: Claim
    verdict: str  # holds | mismatch | unavailable | error | skipped
    ok: bool
    detail: str
    residual: object = None  # float or str (symbolic)
    zscore: float | None = None
    computed: object = None  # Value
    claimed: object = None  # Value
    diagnosis: object = None  # icl_symbolic.diagnose.Diagnosis
    figures: list = field(default_factory=list)  # [(title, png bytes)]
    elapsed: float = 0.0
    mde_rel: float | None = None  # minimum detectable relative error (90 % power), judge.detectable
    mde_note: str = ""  # how it was obtained

    def mde_text(self) -> str:
        """'MDE 1.8%' for the terminal line ('' when there is none)."""
        if self.mde_rel is None:
            return ""
        if self.mde_rel == 0:
            return "MDE 0 (exact)"
        return f"MDE {_pct(self.mde_rel)}"

    def mde_sentence(self) -> str:
        """The report's sentence on the claim's power."""
        if self.mde_rel is None:
            return f"no minimum detectable error ({self.mde_note})" if self.mde_note else ""
        if self.mde_rel == 0:
            return "would have caught any error (exact comparison)"
        return f"would have caught an error of {_pct(self.mde_rel)} or more ({self.mde_note})"

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
            "id": c.id,
            "source": c.source,
            "verdict": self.verdict,
            "expected": c.expected,
            "ok": self.ok,
            "detail": self.detail,
            "label": self.label,
            "statement": c.statement,
            "method": c.method,
            "check": c.check,
            "file": c.file,
            "tolerance": {"kind": c.tolerance.kind, "value": c.tolerance.value, "reason": c.tolerance.reason},
            "residual": None
            if self.residual is None
            else (self.residual if isinstance(self.residual, str) else float(self.residual)),
            "zscore": self.zscore,
            "elapsed_s": round(self.elapsed, 3),
            "full": c.tier != "quick",
            "tier": c.tier,
            "evidence": c.evidence,
            "evidence_reason": c.evidence_reason or None,
            "result": c.result or None,
            "mde_rel": self.mde_rel,
            "mde_note": self.mde_note,
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


def _pct(x: float) -> str:
    """A relative error as a percentage with two significant digits."""
    p = 100 * x
    return f"{p:.2g}%" if p >= 0.01 else f"{p:.1e}%"


def _self_judged_mde(tol, claimed):
    """The tolerance of a check that judges itself, as a relative error (judge.detectable; None when
    there is no relative scale or the tolerance is statistical)."""
    if tol.kind == "exact" or (tol.kind in ("abs", "rel") and claimed is not None):
        _, rel, how = detectable(None, claimed, tol)
        return rel, how
    return None, f"the check judges itself ({tol.describe()}); no relative scale"


def _needs_available(kind):
    """Library modules (and attributes) a kind names in ``needs`` that cannot be imported."""
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


def run_claim(claim: Claim, progress=None, cache=None) -> ClaimResult:
    """Run one claim and judge it; ``progress`` (callable(str) or None) gets a long check's steps;
    ``cache``: a folder for per-seed simulation results (:mod:`icl_symbolic.simulation.cache`), or None."""
    with use_cache(cache):
        return _run_claim(claim, progress)


def run_claim_group(claims, cache=None) -> list[ClaimResult]:
    """Run claims one after the other in this process (a work item of :func:`run_claims`: claims
    that share simulations, :mod:`icl_symbolic.verification.schedule`)."""
    return [run_claim(c, cache=cache) for c in claims]


def _run_claim(claim: Claim, progress=None) -> ClaimResult:
    kind = REGISTRY[claim.check]
    t0 = time.perf_counter()
    missing = _needs_available(kind)
    if missing:
        return ClaimResult(
            claim, "unavailable", False, f"unavailable: needs {', '.join(missing)}", elapsed=time.perf_counter() - t0
        )
    try:
        out = kind.func(claim, progress=progress) if kind.reports_progress else kind.func(claim)
        if out.residual_expr is not None:  # a symbolic identity judged by the check itself
            holds = out.holds
            residual, z, how = out.residual_expr, None, out.detail
            mde_rel, mde_note = out.mde_rel, out.mde_note
            if mde_rel is None and not mde_note:
                mde_rel, mde_note = _self_judged_mde(claim.tolerance, out.claimed)
        else:
            holds, residual, z, how = compare(out.computed, out.claimed, claim.tolerance)
            _, mde_rel, mde_note = detectable(out.computed, out.claimed, claim.tolerance)
            if out.mde_rel is not None or out.mde_note:
                mde_rel, mde_note = out.mde_rel, out.mde_note
        if out.also_required is not None and not out.also_required[0]:
            holds = False
            how += f"; fails: {out.also_required[1]}"
        verdict = "holds" if holds else "mismatch"
        diag = out.diagnosis_fn() if (verdict == "mismatch" and out.diagnosis_fn) else None
    except ICLError as exc:
        return ClaimResult(claim, "error", False, f"error: {exc}", elapsed=time.perf_counter() - t0)
    except Exception as exc:  # a library failure is a verdict, not a crash of the whole run
        return ClaimResult(
            claim, "error", False, f"error: {type(exc).__name__}: {exc}", elapsed=time.perf_counter() - t0
        )
    ok = verdict == claim.expected
    detail = out.detail if out.residual_expr is not None else f"{out.detail}; {how}"
    if verdict == "mismatch" and diag is not None:
        detail += f". Diagnosis: {diag.summary()}"
    if claim.expected == "mismatch" and verdict == "mismatch":
        if not expected_diagnosis_ok(diag, claim.diagnosis):
            found = ([diag.best.name] if diag is not None and diag.best is not None else []) + (
                diag.slip_names() if diag is not None else []
            )
            ok = False
            detail += f". Expected diagnosis {claim.diagnosis!r}, found {', '.join(found) if found else 'none'}"
    return ClaimResult(
        claim,
        verdict,
        ok,
        detail,
        residual=residual,
        zscore=z,
        computed=out.computed,
        claimed=out.claimed,
        diagnosis=diag,
        figures=list(out.figures),
        elapsed=time.perf_counter() - t0,
        mde_rel=mde_rel,
        mde_note=mde_note,
    )


def _as_callback(progress):
    """``progress`` as a callable(str): a text stream (``sys.stderr``) or a callable or None."""
    if progress is None or callable(progress):
        return progress
    return lambda line: print(line, file=progress, flush=True)


def run_tier(full: bool = False, tier: str | None = None) -> str:
    """The tier a run covers: ``tier`` when given (quick | full | deep), else full or quick by ``full``."""
    if tier is None:
        return "full" if full else "quick"
    if tier not in TIERS:
        raise ICLError(f"unknown tier {tier!r}; expected one of {', '.join(TIERS)}")
    if full and tier == "quick":
        raise ICLError("full=True contradicts tier='quick'")
    return tier


def _skip_reason(claim_tier: str) -> str:
    return (
        "skipped: simulation-backed, run with --full"
        if claim_tier == "full"
        else "skipped: paper-scale (deep tier), run with --tier deep"
    )


def run_claims(
    claims,
    full: bool = False,
    progress=None,
    on_result=None,
    jobs: int = 1,
    scheduler: str | None = None,
    tier: str | None = None,
    cache=None,
) -> list[ClaimResult]:
    """Run claims in order; claims above the run's tier are skipped (explicitly).

    ``tier``: ``quick`` (the default), ``full`` (``full=True`` means the same) or ``deep``;
    a run covers its own tier and every cheaper one (:data:`~.claimfile.TIERS`).
    ``cache``: a folder where simulated seeds are stored and found again, so that a killed
    run resumes (:mod:`icl_symbolic.simulation.cache`; on a Dask cluster, a folder every worker sees).

    ``progress``: None (silent), a callable taking one line of text, or a text
    stream (e.g. ``sys.stderr``): one line per claim, and the steps of long
    (simulation-backed) checks indented below it.  ``on_result(result)`` is called
    as soon as each verdict is decided, in claim order (the CLI prints it at once);
    with it, the per-claim progress line is left out (the verdict line takes its place).

    ``jobs`` / ``scheduler``: the claims run through :func:`icl_symbolic.core.parallel.map_sweep`,
    on ``jobs`` worker processes or a Dask cluster (one claim per item; the steps of a
    long check are then not reported).  Every claim runs with one BLAS thread whatever
    ``jobs`` is, and each check seeds its own random streams, so the verdicts and
    numbers do not depend on ``jobs`` (tested).
    """
    jobs = check_jobs(jobs)
    address = resolve_scheduler(scheduler)
    rank = TIERS.index(run_tier(full, tier))
    if cache is not None:
        SeedCache(cache)  # refuse an unusable folder before any claim runs
        cache = str(cache)
    say = _as_callback(progress)
    serial = jobs == 1 and address is None
    step = None if (say is None or not serial) else (lambda line: say(f"    {line}"))
    n = len(claims)
    results: list = [None] * n
    todo = []
    for i, c in enumerate(claims):
        if TIERS.index(c.tier) > rank:
            results[i] = ClaimResult(c, "skipped", True, _skip_reason(c.tier))
        else:
            todo.append(i)
    emitted = 0
    # the simulations' time, estimated from the claims' cost (schedule.claim_cost) before any
    # claim runs, then progress with an ETA weighted by that cost
    heavy = [i for i in todo if claims[i].tier != "quick"]  # as run_estimate: shared simulations once
    costs = {i: 0.0 for i in todo} | marginal_costs(claims, heavy)
    est = run_estimate([claims[i] for i in todo], jobs, address, f"verify --tier {TIERS[rank]}")
    watch = announced(say, est, total=sum(costs.values()) or 1.0)
    finished = 0.0

    def tick(indices):
        nonlocal finished
        finished += sum(costs[i] for i in indices)
        if any(costs[i] > 0 for i in indices):
            watch.update(finished)

    def emit_ready():
        nonlocal emitted
        while emitted < n and results[emitted] is not None:
            if on_result is not None:
                on_result(results[emitted])
            emitted += 1

    def run_one(i):
        if serial and say is not None and on_result is None:
            say(f"[{i + 1}/{n}] {claims[i].id} ...")
        return run_claim(claims[i], progress=step, cache=cache)

    def done(j, result):
        results[todo[j]] = result
        emit_ready()
        tick([todo[j]])

    emit_ready()
    if serial:
        map_sweep(run_one, todo, on_item=done)
    else:
        groups = schedule(claims, todo)
        # one work item that simulates (the rest take seconds): its seeds get the workers instead, after
        # the others (as schedule.run_estimate assumes)
        heavy_groups = [j for j, g in enumerate(groups) if any(costs[i] > 0 for i in g)]
        lent = heavy_groups[0] if address is None and len(heavy_groups) == 1 else None
        rest = [j for j in range(len(groups)) if j != lent]
        if say is not None:
            say(
                f"{len(todo)} claims in {len(groups)} work items (claims sharing simulations together, "
                f"largest first) on {'the Dask cluster ' + address if address else f'{jobs} workers'}"
                + (f"; one of them simulates, so its seeds run on the {jobs} workers" if lent is not None else "")
            )

        groups_done = []

        def group_done(j, group_results):
            for i, result in zip(groups[j], group_results):
                results[i] = result
            groups_done.append(j)
            emit_ready()
            tick(groups[j])

        def still_running():
            # the work items run on other processes and say nothing until they finish
            return (
                f"{est.what}: {len(groups_done)}/{len(rest)} work items done after "
                f"{duration(time.monotonic() - watch.t0)} (announced {duration(est.seconds)}); still running"
            )

        with heartbeat(say if est.long and heavy else None, still_running):
            map_sweep(
                functools.partial(run_claim_group, cache=cache),
                [[claims[i] for i in groups[j]] for j in rest],
                jobs=jobs,
                scheduler=address,
                on_item=lambda k, group_results: group_done(rest[k], group_results),
                progress=None if (say is None or on_result is not None) else say,
                label="work item",
            )
        if lent is not None:
            # its seeds' progress is the run's progress (this item is all that is left): always shown
            inner = None if say is None else (lambda line: say(f"    {line}"))
            with use_seed_jobs(jobs):
                group_done(lent, [run_claim(claims[i], progress=inner, cache=cache) for i in groups[lent]])
    emit_ready()
    return results


def summarize(results) -> dict:
    """Counts by outcome; ``ok`` is True only when every run claim has its expected verdict."""
    s = {
        "total": len(results),
        "holds": 0,
        "mismatch_expected": 0,
        "failed": 0,
        "unavailable": 0,
        "error": 0,
        "skipped": 0,
    }
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
    parts = [
        f"{s['total']} claims: {s['holds']} hold",
        f"{s['mismatch_expected']} mismatches found as expected",
        f"{s['failed']} failed",
    ]
    if s["unavailable"]:
        parts.append(f"{s['unavailable']} unavailable")
    if s["error"]:
        parts.append(f"{s['error']} errors")
    if s["skipped"]:
        parts.append(f"{s['skipped']} skipped (--full/--tier deep)")
    return ", ".join(parts) + (" -- OK" if s["ok"] else " -- NOT OK")


#: the terminal width verify's lines fit in (details wrap under the line)
COLUMNS = 100
#: without --verbose: the reason is cut at this many characters, each other detail at DETAIL_LINES lines
REASON_CHARS = 150
DETAIL_LINES = 3


def _wrapped(label: str, text: str, verbose: bool, max_lines: int | None = None) -> list:
    """``text`` under its claim line, indented, wrapped at :data:`COLUMNS`; cut (``...``) unless ``verbose``."""
    words = " ".join(str(text).split())
    lines = textwrap.wrap(
        f"{label}{words}",
        COLUMNS,
        initial_indent="      ",
        subsequent_indent="        ",
        break_long_words=True,
        break_on_hyphens=False,
    )
    if not verbose and max_lines is not None and len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: COLUMNS - 4].rstrip() + " ..."
    return lines


def format_line(r: ClaimResult, width: int = 34, verbose: bool = False) -> str:
    """One line per claim (status, id, verdict, residual or z, MDE), then its details under it.

    Every line fits in :data:`COLUMNS` characters.  The reason follows on the
    next lines, cut at :data:`REASON_CHARS` characters; a mismatch (expected or
    not) gets its diagnosis, and an expected mismatch its ``why``, each cut at
    :data:`DETAIL_LINES` lines.  ``verbose``: nothing is cut, and the computed
    and claimed numbers with their provenance and the tolerance with its reason
    follow.
    """
    mark = "ok " if r.ok else "!! "
    head = f"{mark}{r.claim.id:<{min(width, 40)}} {r.label:<26} {r.measure():<14} {r.mde_text()}".rstrip()
    if len(head) > COLUMNS:
        head = " ".join([mark.strip(), r.claim.id, r.label, r.measure(), r.mde_text()]).rstrip()
    lines = [head]
    reason = " ".join(r.detail.split(". Diagnosis: ")[0].split())
    if not verbose and len(reason) > REASON_CHARS:
        reason = reason[: REASON_CHARS - 3] + "..."
    lines += _wrapped("", reason, verbose)
    if verbose:
        for name, v in (("computed", r.computed), ("claimed", r.claimed)):
            if v is not None:
                lines += _wrapped(f"{name}: ", f"{v.to_str(15)} ({v.provenance()})", verbose)
        tol = r.claim.tolerance
        lines += _wrapped("tolerance: ", f"{tol.describe()}: {tol.reason}", verbose)
    if r.verdict == "mismatch":
        if r.diagnosis is not None:
            lines += _wrapped("diagnosis: ", r.diagnosis.summary(), verbose, DETAIL_LINES)
        if r.claim.expected == "mismatch" and r.claim.why:
            lines += _wrapped("why: ", r.claim.why, verbose, DETAIL_LINES)
        if not r.ok and ". Expected diagnosis" in r.detail:
            lines += _wrapped("expected diagnosis", r.detail.split(". Expected diagnosis", 1)[1], verbose, DETAIL_LINES)
    return "\n".join(lines)


def verify(
    paths=None,
    only=None,
    full=False,
    progress=None,
    jobs: int = 1,
    scheduler: str | None = None,
    tier: str | None = None,
    cache=None,
):
    """Library entry point: load, select, run (``jobs`` processes or a Dask ``scheduler``, ``tier``
    quick | full | deep, see :func:`run_claims`); returns ``(results, summary)``."""
    run_tier(full, tier)
    claims = select(load_claims(paths), only)
    results = run_claims(claims, full=full, progress=progress, jobs=jobs, scheduler=scheduler, tier=tier, cache=cache)
    return results, summarize(results)
