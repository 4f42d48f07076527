"""The power table of docs/power.md from a `verify --json-out` file.

    icl-symbolic verify --full --jobs 2 --json-out full.json
    python benchmarks/power_table.py full.json > table.md

One row per statistical claim that ran (a z tolerance): its MDE (minimum detectable
relative error at 90 % power, judge.detectable), the target of its paper result
(Result 1: 2 %, Eqs. (10), (11) and Fig. 2: 3 % in --full; 1 % in the deep tier), whether
the target is met, the z-score, and the claim's own seconds.  Separation claims (the value
differs from a reference, or a peak stands out: ``mde_note`` "separation: ...") have no
target: their MDE is the smallest separation they could confirm, not an error they could
miss.
"""

from __future__ import annotations

import json
import sys

#: MDE targets (relative) per paper result and tier; others: none stated.
TARGETS = {
    ("Result 1", "full"): 0.02,
    ("Fig. 1", "full"): 0.02,
    ("Eq. 10", "full"): 0.03,
    ("Eq. 11", "full"): 0.03,
    ("Fig. 2", "full"): 0.03,
}
DEEP_TARGET = 0.01


def target(result: str, tier: str, evidence: str):
    if evidence != "simulation":
        return None
    if tier == "deep":
        return DEEP_TARGET
    return TARGETS.get((result, tier))


def rows(doc: dict) -> list[dict]:
    out = []
    for p in doc["points"]:
        if p["tolerance"]["kind"] != "z" or p["verdict"] == "skipped":
            continue
        t = target(p.get("result") or "", p.get("tier", "full" if p.get("full") else "quick"), p["evidence"])
        m = p.get("mde_rel")
        if (p.get("mde_note") or "").startswith("separation:"):
            # a claim that the value differs (or a peak stands out): its MDE is the smallest separation it
            # could confirm; the error it guards against (no separation) is its observed separation itself
            t = None
        out.append(
            {
                "id": p["id"],
                "result": p.get("result"),
                "tier": p.get("tier"),
                "evidence": p["evidence"],
                "verdict": p["verdict"],
                "ok": p["ok"],
                "z": p.get("zscore"),
                "mde_rel": m,
                "target": t,
                "met": None if (t is None or m is None) else m <= t,
                "seconds": p.get("elapsed_s"),
            }
        )
    return out


def markdown(rs) -> str:
    lines = [
        "| claim | result | tier | verdict | z | MDE | target | met | s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rs:
        z = "" if r["z"] is None else f"{r['z']:+.2f}"
        m = "-" if r["mde_rel"] is None else f"{100 * r['mde_rel']:.2g} %"
        t = "-" if r["target"] is None else f"{100 * r['target']:.0f} %"
        met = "-" if r["met"] is None else ("yes" if r["met"] else "**no**")
        lines.append(
            f"| `{r['id']}` | {r['result']} | {r['tier']} | {r['verdict']} | {z} | {m} | {t} | {met} | "
            f"{r['seconds']:.0f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python benchmarks/power_table.py VERIFY.json", file=sys.stderr)
        return 2
    with open(argv[0]) as fh:
        doc = json.load(fh)
    rs = rows(doc)
    print(markdown(rs))
    with_t = [r for r in rs if r["met"] is not None]
    print(f"\n{sum(r['met'] for r in with_t)}/{len(with_t)} simulation claims meet their MDE target.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
