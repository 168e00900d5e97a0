"""Join run_bfcl_parts.sh's category groups into one BFCL run file per stage and seed (every item with its verdict
and null verdicts; the best null recomputed over all of them), append the parts' wall times, rebuild summary.json.

    .venv/bin/python benchmarks/results/transfer/merge_parts.py
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
import transfer  # noqa: E402


def main() -> None:
    from agentworld_gym.suites.core import _row, best_null

    files = sorted(HERE.glob("parts/g*/runs/*/*/bfcl.json"))
    runs_of = {(f.parent.parent.name, f.parent.name) for f in files}
    groups = {g.name for g in HERE.glob("parts/g*")}
    done = sorted(g for g in groups if all((HERE / "parts" / g / "runs" / st / sd / "bfcl.json").exists() for st, sd in runs_of))
    if len(done) < len(groups):  # every stage on the same items: a group some stage has not finished is left out
        print(f"left out (not finished by every stage): {sorted(groups - set(done))}")
    parts: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for f in files:
        if f.parents[3].name in done:
            parts[(f.parent.parent.name, f.parent.name)].append(json.loads(f.read_text()))
    for (stage, seed_dir), runs in sorted(parts.items()):
        merged = dict(runs[0])
        merged["items"] = [x for r in runs for x in r["items"]]
        merged["n_items"] = len(merged["items"])
        merged["wall_s"] = round(sum(r.get("wall_s", 0) for r in runs), 1)
        merged["parts"] = [sorted({x["category"] for x in r["items"]}) for r in runs]
        hits: dict[str, list[bool]] = defaultdict(list)
        for x in merged["items"]:
            for name, ok in x.get("null", {}).items():
                hits[name].append(ok)
        wins = [x["success"][0] for x in merged["items"]]
        merged["overall"] = {"all": {**_row([wins]), **({"best_null": best_null(dict(hits))} if hits else {})}}
        merged["category"] = {c: row for r in runs for c, row in r["category"].items()}  # the parts' categories are disjoint
        out = HERE / "runs" / stage / seed_dir / "bfcl.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(merged, indent=1))
        print(f"{stage} {seed_dir}: {len(runs)} parts, {len(wins)} items -> {out.relative_to(HERE)}")
    walls = [line for f in sorted(HERE.glob("parts/g*/wall_times.tsv")) for line in f.read_text().splitlines()]
    known = set((HERE / "wall_times.tsv").read_text().splitlines()) if (HERE / "wall_times.tsv").exists() else set()
    with open(HERE / "wall_times.tsv", "a") as fh:
        fh.writelines(line + "\n" for line in walls if line not in known)
    transfer.main(["--summary-only", "--out", str(HERE)])


if __name__ == "__main__":
    main()
