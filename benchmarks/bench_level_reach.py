"""Level reach: the share of themes of a source that can make a task at each level, per task kind.

    python benchmarks/bench_level_reach.py [--source toucan] [--themes 150] [--seeds 3]

For a seeded sample of `themes` themes of `source` (all of them when it has fewer) and each level 1-5,
a theme reaches the level with a kind when `synthesize_task(theme, level, s, kind)` (no fallback: the
task must be made at that level) succeeds for one of `seeds` seeds. Kinds: graph, programmatic, rules
(themes with business rules only), "walk" (graph or programmatic: a task that chains reads of the world;
rule tasks have fixed shapes at levels 1-3) and "any" (one of them). Cells: share of themes [95% Wilson
interval]. The issue (11, item 3) is Toucan-derived themes: few chain tools at level 2 (their tables
share no key a tool takes), so in "mixed" most step down from level 2 to level 1.
Prints a markdown table; `--out` writes it with a JSON of the per-theme results beside.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

import agentworld_gym  # noqa: F401  (registers the themes)
from agentworld_gym import envs
from agentworld_gym.errors import AgentWorldError
from agentworld_gym.suites.core import wilson
from agentworld_gym.synthesis import LEVELS, has_rules, synthesize_task

KINDS = ("graph", "programmatic", "rules")


@dataclass
class Args:
    source: str = "toucan"
    themes: int = 150
    seeds: int = 3
    seed: int = 0
    levels: str = "1,2,3"
    out: str = ""


def reach(theme_id: str, levels: list[int], seeds: int) -> dict[str, dict[str, bool]]:
    """{level: {kind: reached}} for one theme."""
    theme = envs.get_theme(theme_id)
    out = {}
    for lv in levels:
        row = {}
        for kind in KINDS:
            if kind == "rules" and not has_rules(theme):
                row[kind] = False
                continue
            row[kind] = False
            for s in range(seeds):
                try:
                    synthesize_task(theme, lv, s, kind)
                except AgentWorldError:
                    continue
                row[kind] = True
                break
        row["walk"] = row["graph"] or row["programmatic"]  # a task that chains reads of the world
        row["any"] = any(row[k] for k in KINDS)
        out[str(lv)] = row
    return out


def main(args: Args) -> dict:
    start = time.monotonic()
    ids = sorted(e.id for e in envs.entries() if e.source == args.source)
    rng = np.random.default_rng(args.seed)
    picked = sorted(rng.choice(ids, size=min(args.themes, len(ids)), replace=False).tolist())
    levels = [int(x) for x in args.levels.split(",") if int(x) in LEVELS]
    results = {tid: reach(tid, levels, args.seeds) for tid in tqdm(picked, desc="themes", unit="theme")}
    n = len(picked)
    cols = [*KINDS, "walk", "any"]
    lines = [f"# Level reach: {args.source} themes ({n} of {len(ids)}, seed {args.seed}), {args.seeds} seeds per kind and level", "",
             "| level | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for lv in levels:
        cells = []
        for k in cols:
            hits = sum(results[t][str(lv)][k] for t in picked)
            lo, hi = wilson(hits, n)
            cells.append(f"{hits / n:.1%} [{lo:.1%}, {hi:.1%}]")
        lines.append(f"| {lv} | " + " | ".join(cells) + " |")
    lines += ["", f"wall: {time.monotonic() - start:.0f} s"]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
        Path(args.out).with_suffix(".json").write_text(json.dumps({"args": asdict(args), "results": results}, indent=0))
    return results


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in asdict(Args()).items():
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    main(Args(**vars(p.parse_args())))
