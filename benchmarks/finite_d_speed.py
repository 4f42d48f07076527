"""Speed and reproducibility of the finite-d theory (``theory --order 1``), old against new in one run.

The old implementation is read from a git commit (``--old-commit``, default the commit before the
``population`` term was rewritten) with ``git show`` and loaded as a separate module, so both are
timed on the same box in the same process (single-threaded BLAS: run it as below).

``time``: seconds of one :func:`e_nonlinear_finite` call (all terms, a fresh process-level cache for
each point) at d = 64 above the interpolation peak (sin(g), alpha/kappa variants) and below it
(tau = 0.5), and of a 40-tau curve above the peak (new path only, one process).

``agree``: the ``population`` term's value (:func:`e_population_ols` at the simulator's integer
sizes, default banks) old against new at teachers sin, tanh, relu, sign, d = 32 and 64, alpha and
kappa in {1, 2, 4}, tau above the peak; |new - old| in units of the combined Monte-Carlo SE
(sqrt(SE_old^2 + SE_new^2); the two use independent banks, so under "same expectation" this is a
standard normal; 4 SE is a false-alarm budget of 6e-5 per point).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/finite_d_speed.py time
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/finite_d_speed.py agree
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/finite_d_speed.py spread
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/finite_d_speed.py cv

``spread``: the a1 != 0 radial term (the value below the peak) recomputed with 8 independent prompt streams
of 50 000 prompts (the default of ``RADIAL_PROMPTS["sphere"]``): its seed-to-seed spread next to the
batch-means SE the library reports.  ``cv``: the ``population`` term's control variate, per-bank prompt SE of its
variance part with and without it, next to the bank-to-bank spread.

Writes benchmarks/results/finite_d_speed_<what>.json and .md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from icl_symbolic.core.caches import clear as clear_all_caches  # noqa: E402
from icl_symbolic.theory import finite_d as new  # noqa: E402

OLD_COMMIT = "b31efc2"
RHO = 0.1
TIME_POINTS = [  # (f, alpha, kappa, tau) at d = 64
    ("sin(g)", 2.0, 2.0, 4.0),
    ("sin(g)", 4.0, 2.0, 4.0),
    ("sin(g)", 2.0, 4.0, 4.0),
    ("sin(g)", 2.0, 2.0, 0.5),
]
AGREE_POINTS = [  # (f, alpha, kappa, tau, d)
    ("sin(g)", 2.0, 2.0, 4.0, 64),
    ("tanh(g)", 1.0, 1.0, 3.0, 64),
    ("relu(g)", 4.0, 2.0, 3.0, 64),
    ("sign(g)", 2.0, 4.0, 6.0, 64),
    ("sin(g)", 2.0, 2.0, 4.0, 32),
    ("tanh(g)", 4.0, 4.0, 3.0, 32),
    ("relu(g)", 1.0, 2.0, 6.0, 32),
    ("sign(g)", 1.0, 1.0, 3.0, 32),
    ("sin(g)", 1.0, 4.0, 3.0, 32),
    ("tanh(g)", 2.0, 1.0, 6.0, 32),
]


def load_old(commit: str):
    """The module ``theory/finite_d.py`` as it was at ``commit`` (its imports resolve to today's package)."""
    src = subprocess.check_output(["git", "show", f"{commit}:icl_symbolic/theory/finite_d.py"], cwd=ROOT, text=True)
    spec = importlib.util.spec_from_loader("finite_d_old", loader=None)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["finite_d_old"] = mod  # dataclasses look their module up there
    exec(compile(src, f"{commit}:icl_symbolic/theory/finite_d.py", "exec"), mod.__dict__)  # noqa: S102
    return mod


def _timed(fn):
    clear_all_caches()
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run_time(old, quick: bool) -> dict:
    rows = []
    for f, a, k, t in TIME_POINTS[:1] + TIME_POINTS[-1:] if quick else TIME_POINTS:
        row = _point(f, a, k, t, 64)
        for name, mod in (("new", new), ("old", old)):
            if mod is None:
                continue
            r, s = _timed(lambda mod=mod: mod.e_nonlinear_finite(f, RHO, a, k, t, d=64, scope=False))
            row[name] = {"seconds": s, "value": r.corrected, "se": r.stderr, "text": r.value_text()}
        rows.append(row)
        print(json.dumps(row), flush=True)
    taus = [2.5 + 0.1 * i for i in range(40)]
    clear_all_caches()
    t0 = time.perf_counter()
    curve = [new.e_nonlinear_finite("sin(g)", RHO, 2.0, 2.0, t, d=64, scope=False) for t in taus]
    curve_s = time.perf_counter() - t0
    print(f"curve: 40 taus in {curve_s:.1f} s", flush=True)
    return {
        "points": rows,
        "curve": {
            "f": "sin(g)",
            "alpha": 2.0,
            "kappa": 2.0,
            "taus": taus,
            "seconds": curve_s,
            "values": [c.corrected for c in curve],
            "se": [c.stderr for c in curve],
        },
    }


def run_agree(old) -> dict:
    rows = []
    for f, a, k, t, d in AGREE_POINTS:
        ell, kk, n = new.finite_sizes(d, a, k, t)
        row = {**_point(f, a, k, t, d), "ell": ell, "k": kk, "n": n}
        po, s = _timed(
            lambda: new.e_population_ols(f, RHO, d, ell, kk, n, new.PopulationMC(banks=new.default_banks(d)))
        )
        row["new"] = {"value": po.value, "se": po.stderr, "seconds": s}
        po, s = _timed(lambda: old.e_population_ols(f, RHO, d, ell, kk, n, banks=old.default_banks(d)))
        row["old"] = {"value": po.value, "se": po.stderr, "seconds": s}
        row["z"] = (row["new"]["value"] - row["old"]["value"]) / math.hypot(row["new"]["se"], row["old"]["se"])
        rows.append(row)
        print(json.dumps(row), flush=True)
    return {"points": rows}


SPREAD_POINTS = [  # (f, alpha, kappa, tau, d): a1 != 0 below the peak, where the radial term sets the value
    ("sin(g)", 2.0, 2.0, 0.5, 64),
    ("tanh(g)", 4.0, 2.0, 0.6, 64),
    ("sin(g)", 2.0, 1.0, 0.5, 32),
    ("tanh(g)", 2.0, 2.0, 0.6, 32),
]


def _mean_sd(xs: list) -> tuple:
    mean = sum(xs) / len(xs)
    return mean, math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))


def _point(f, alpha, kappa, tau, d) -> dict:
    return {"f": f, "alpha": alpha, "kappa": kappa, "tau": tau, "d": d}


def run_spread(prompts: int, seeds: int) -> dict:
    """The a1 != 0 radial term's seed-to-seed spread: the corrected value below the peak recomputed with
    ``seeds`` independent prompt streams of ``prompts`` prompts (the library's own default seed first, checked
    to reproduce :func:`e_nonlinear_finite`)."""
    rows = []
    for f, a, k, t, d in SPREAD_POINTS:
        ell, kk, n = new.finite_sizes(d, a, k, t)
        p = d * (d + 1)
        a1sq, rnl = new.task_norm_moments(f, RHO, d)
        mf = new._mfun(kk / d, d)
        vals, ses = [], []
        t0 = time.perf_counter()
        for s in range(seeds):
            rm = new.radial_moments(f, RHO, d, ell, n=prompts, seed=12345 + s, law="sphere")
            v, se = new.e_radial_signal_se(rm, rnl / a1sq, RHO / a1sq, ell / d, kk / d, n / p, mf)
            vals.append(a1sq * v)
            ses.append(a1sq * se)
        secs = (time.perf_counter() - t0) / seeds
        lib = new.e_nonlinear_finite(f, RHO, a, k, t, d=d, mc_prompts=prompts, scope=False).corrected
        assert abs(lib - vals[0]) <= 1e-12 * abs(lib), (lib, vals[0])  # the same computation as the library's
        mean, sd = _mean_sd(vals)
        row = {
            **_point(f, a, k, t, d),
            "prompts": prompts,
            "seeds": seeds,
            "values": vals,
            "se_rms": math.sqrt(sum(x * x for x in ses) / len(ses)),
            "mean": mean,
            "sd": sd,
            "rel_sd_pct": 100 * sd / mean,
            "seconds_per_seed": secs,
        }
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "values"}), flush=True)
    return {"points": rows}


CV_POINTS = [
    ("sin(g)", 2.0, 2.0, 4.0, 64),
    ("sign(g)", 2.0, 4.0, 6.0, 64),
    ("tanh(g)", 1.0, 1.0, 3.0, 32),
    ("relu(g)", 4.0, 2.0, 3.0, 64),
]


def run_cv() -> dict:
    """The ``population`` term's control variate: per bank, the prompt-Monte-Carlo SE of the variance part
    E[e^2 w]/E[w] estimated plainly and as e_train + E[e^2 (w - E w)]/E[w] (same prompts, default banks
    and prompts), averaged over the banks; and the bank-to-bank sd of the term."""
    rows = []
    for f, a, k, t, d in CV_POINTS:
        ell, kk, n = new.finite_sizes(d, a, k, t)
        p = d * (d + 1)
        mc = new.PopulationMC(banks=new.default_banks(d))
        plain, cv, tot = [], [], []
        for e_pop, e_train, ratio, r2, e2 in new._population_banks(f, RHO, d, ell, kk, mc):
            delta = new._elliptical_delta(r2, p, n)
            w = r2 / (1.0 + r2 * delta) ** 2
            wb = float(w.mean())
            m = len(w)
            plain.append(float((e2 * w / wb).std()) * delta * ratio / math.sqrt(m))
            cv.append(float((e2 * (w - wb) / wb).std()) * delta * ratio / math.sqrt(m))
            tot.append(e_pop + delta * ratio * (e_train + float((e2 * (w - wb)).mean()) / wb))
        _, sd = _mean_sd(tot)
        row = {
            **_point(f, a, k, t, d),
            "prompts": mc.prompts,
            "prompt_se_plain": sum(plain) / len(plain),
            "prompt_se_cv": sum(cv) / len(cv),
            "bank_sd": sd,
        }
        row["reduction"] = row["prompt_se_plain"] / row["prompt_se_cv"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    return {"points": rows}


def _table(head: list, rows: list) -> list:
    """A Markdown table: the header, the rule, a line per row (cells already formatted)."""
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]


def _where(r: dict) -> list:
    return [r["f"], f"{r['alpha']:g}", f"{r['kappa']:g}", f"{r['tau']:g}", str(r["d"])]


WHERE = ["f", "alpha", "kappa", "tau", "d"]


def _mde_pct(r: dict) -> float:
    return 100 * (4.0 + 0.84) * math.hypot(r["new"]["se"], r["old"]["se"]) / r["old"]["value"]


def markdown(what: str, res: dict, commit: str) -> str:
    lines = [f"# finite-d speed ({what}), old = {commit}, new = working tree", ""]
    pts = res["points"]
    if what == "cv":
        head = WHERE + ["prompts per bank", "prompt SE plain", "prompt SE with the control variate", "reduction"]
        rows = [
            _where(r)
            + [str(r["prompts"]), f"{r['prompt_se_plain']:.1e}", f"{r['prompt_se_cv']:.1e}", f"{r['reduction']:.1f}"]
            + [f"{r['bank_sd']:.1e}"]
            for r in pts
        ]
        lines += _table(head + ["bank-to-bank sd"], rows)
    elif what == "spread":
        head = WHERE + ["prompts", "seeds", "mean", "sd over seeds", "sd %", "reported SE (rms)", "s per seed"]
        rows = [
            _where(r)
            + [str(r["prompts"]), str(r["seeds"]), f"{r['mean']:.6f}", f"{r['sd']:.1e}", f"{r['rel_sd_pct']:.4f}"]
            + [f"{r['se_rms']:.1e}", f"{r['seconds_per_seed']:.2f}"]
            for r in pts
        ]
        lines += _table(head, rows)
    elif what == "time":
        rows = []
        for r in pts:
            o = r.get("old", {})
            old_s = f"{o['seconds']:.1f}" if o else "-"
            rows.append(_where(r) + [old_s, o.get("text", "-"), f"{r['new']['seconds']:.2f}", r["new"]["text"]])
        lines += _table(WHERE + ["old s", "old value", "new s", "new value"], rows)
        c = res["curve"]
        lines += ["", f"40-tau curve (sin(g), alpha = kappa = 2, tau 2.5..6.4, d = 64), new path: {c['seconds']:.1f} s"]
    else:
        rows = [
            _where(r)
            + [f"{r['old']['value']:.5f} ({r['old']['se']:.1e})", f"{r['new']['value']:.5f} ({r['new']['se']:.1e})"]
            + [f"{r['z']:+.2f}", f"{_mde_pct(r):.2f}", f"{r['new']['seconds']:.2f}", f"{r['old']['seconds']:.1f}"]
            for r in pts
        ]
        head = WHERE + ["old value (SE)", "new value (SE)", "z = diff/combined SE", "MDE %", "new s", "old s"]
        lines += _table(head, rows)
        zs = [abs(r["z"]) for r in pts]
        lines += [
            "",
            f"max |z| = {max(zs):.2f} over {len(zs)} points (4 SE: false-alarm budget 6e-5 per point); MDE = the shift "
            "detected with 80 % power at that threshold, (4 + 0.84) combined SE, in % of the old value",
        ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("what", choices=["time", "agree", "spread", "cv"])
    ap.add_argument("--prompts", type=int, default=50_000, help="spread: prompts of the radial Monte Carlo")
    ap.add_argument("--seeds", type=int, default=8, help="spread: independent prompt streams per point")
    ap.add_argument("--old-commit", default=OLD_COMMIT)
    ap.add_argument("--no-old", action="store_true", help="time the new path only")
    ap.add_argument("--quick", action="store_true", help="time two points only (one above, one below the peak)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--render", action="store_true", help="only rewrite the Markdown from the saved JSON of WHAT")
    a = ap.parse_args(argv)
    out = Path(a.out)
    if a.render:
        res = json.loads((out / f"finite_d_speed_{a.what}.json").read_text())
        (out / f"finite_d_speed_{a.what}.md").write_text(markdown(a.what, res, res["old_commit"]))
        return 0
    old = None if (a.no_old or a.what in ("spread", "cv")) else load_old(a.old_commit)
    if a.what == "spread":
        res = run_spread(a.prompts, a.seeds)
    elif a.what == "cv":
        res = run_cv()
    else:
        res = run_time(old, a.quick) if a.what == "time" else run_agree(old)
    res["old_commit"] = a.old_commit
    out.mkdir(parents=True, exist_ok=True)
    (out / f"finite_d_speed_{a.what}.json").write_text(json.dumps(res, indent=1) + "\n")
    (out / f"finite_d_speed_{a.what}.md").write_text(markdown(a.what, res, a.old_commit))
    print(markdown(a.what, res, a.old_commit))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
