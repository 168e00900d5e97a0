"""The BFCL graders against BFCL's own checkers, item by item, on every single- and multi-turn category.

    python benchmarks/bfcl_agreement.py [--seeds 3] [--out benchmarks/results/bfcl]

For every gradable item: the reference answer, other acceptable answers and perturbed wrong ones
(agentworld_gym.suites.bfcl.perturbations), each graded by agentworld_gym.suites.bfcl and by the installed
bfcl-eval package's ast_checker; every multi-turn item's gold turns and perturbed ones played as
episodes (agentworld_gym.suites.bfcl_multi_turn) against the package's multi_turn_checker (one seed: each
answer replays a whole conversation). Writes agreement.json (every disagreement, per-category counts,
skipped items and why) and agreement.md. tests/test_bfcl.py runs the same check with one seed.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from importlib.metadata import version
from pathlib import Path

import numpy as np

from agentworld_gym.suites import bfcl


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3, help="perturbation seeds per item (default: %(default)s)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "bfcl"), help="results folder (default: %(default)s)")
    args = ap.parse_args()
    t0 = time.time()
    reference = bfcl.reference_checker()
    skipped: dict[str, str] = {}
    items = bfcl.load_bfcl(skipped=skipped)
    rows: dict[str, dict] = defaultdict(lambda: {"items": 0, "answers": 0, "accepted": 0, "rejected": 0, "disagreements": 0,
                                                 "oracle_pass": 0})
    disagreements = []
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        for item in items:
            row = rows[item["category"]]
            row["items"] += seed == 0
            for label, calls in bfcl.perturbations(item, rng):
                ours, theirs = bfcl.safe_grade(calls, item), reference(calls, item)
                row["answers"] += 1
                row["accepted" if theirs else "rejected"] += 1
                if label == "oracle" and seed == 0:
                    row["oracle_pass"] += ours and theirs
                if ours != theirs:
                    row["disagreements"] += 1
                    disagreements.append({"id": item["id"], "label": label, "ours": ours, "bfcl": theirs, "calls": calls})
    # multi-turn: every item's gold turns and perturbed ones, played as episodes, against BFCL's multi-turn checker
    from agentworld_gym.suites import bfcl_multi_turn as mt

    multi_reference = mt.reference_checker()
    rng = np.random.default_rng(0)
    for cat in [c for c in bfcl.categories() if c.startswith(mt.PREFIX)]:
        for item in mt.load_multi_turn(None, cat, skipped=skipped):
            row = rows[cat]
            row["items"] += 1
            for label, turn_calls in mt.perturbations(item, rng):
                ours, theirs = mt.play(item, mt.oracle_act(item, turn_calls))["passed"], multi_reference(item, turn_calls)
                row["answers"] += 1
                row["accepted" if theirs else "rejected"] += 1
                row["oracle_pass"] += label == "oracle" and ours and theirs
                if ours != theirs:
                    row["disagreements"] += 1
                    disagreements.append({"id": item["id"], "label": label, "ours": ours, "bfcl": theirs, "calls": turn_calls})
    total = {k: sum(r[k] for r in rows.values()) for k in ("items", "answers", "accepted", "rejected", "disagreements", "oracle_pass")}
    result = {"bfcl_eval_version": version("bfcl-eval"), "seeds": args.seeds, "total": total, "categories": dict(sorted(rows.items())),
              "skipped": skipped, "disagreements": disagreements, "wall_s": round(time.time() - t0, 1)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "agreement.json").write_text(json.dumps(result, indent=1))
    lines = [f"BFCL grader vs bfcl-eval {result['bfcl_eval_version']}'s ast_checker ({args.seeds} perturbation seeds, "
             f"{result['wall_s']} s): {total['answers'] - total['disagreements']:,}/{total['answers']:,} verdicts agree "
             "(multi_turn_*: BFCL's multi_turn_checker, one seed)",
             "", "| category | items | answers checked | BFCL accepts / rejects | disagreements | reference answer passes |",
             "|---|---|---|---|---|---|"]
    for cat, r in sorted(rows.items()):
        lines.append(f"| {cat} | {r['items']} | {r['answers']:,} | {r['accepted']:,} / {r['rejected']:,} | {r['disagreements']} | "
                     f"{r['oracle_pass']}/{r['items']} |")
    lines.append(f"| **all** | {total['items']:,} | {total['answers']:,} | {total['accepted']:,} / {total['rejected']:,} | "
                 f"{total['disagreements']} | {total['oracle_pass']:,}/{total['items']:,} |")
    lines += ["", f"{len(skipped)} items skipped as ungradable (no answer can pass BFCL's checker, or no function docs):", ""]
    lines += [f"- `{k}`: {v}" for k, v in sorted(skipped.items())]
    (out / "agreement.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
