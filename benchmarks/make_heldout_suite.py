"""Freeze the held-out suite: task files under benchmarks/suites/heldout/<theme>.jsonl.

Themes come from the generated pool (source "catalog"), never from the flagships, so every flagship
stays available for training; the trainer excludes whatever themes have a file here
(`agentworld_gym.bench.heldout_themes`). For each L1 category present in the pool, the first
`themes_per_category` themes (in sorted id order) that synthesize verified tasks at every level get one
task per difficulty in `difficulties`.

    python benchmarks/make_heldout_suite.py --themes-per-category 2
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from agentworld_gym import envs
from agentworld_gym.errors import AgentWorldError
from agentworld_gym.synthesis import synthesize_task
from agentworld_gym.tasks import save_tasks

OUT = Path(__file__).resolve().parent / "suites" / "heldout"


@dataclass
class Args:
    themes_per_category: int = 2
    """pool themes held out per L1 category"""
    difficulties: tuple[int, ...] = (1, 2, 3)
    tasks_per_level: int = 1
    seed: int = 0
    source: str = "catalog"


def main(args: Args) -> None:
    by_cat: dict[str, list[str]] = defaultdict(list)
    for e in envs.entries():
        if e.source == args.source:
            by_cat[e.category].append(e.id)
    OUT.mkdir(parents=True, exist_ok=True)
    total = 0
    for cat in sorted(by_cat):
        kept, bases = 0, set()
        for theme_id in sorted(by_cat[cat]):
            if kept == args.themes_per_category:
                break
            base = theme_id.rstrip("0123456789").rstrip("-")
            if base in bases:
                continue  # variants of one blueprint are too alike: take distinct ones
            bases.add(base)
            try:
                theme = envs.get_theme(theme_id)
                tasks = [synthesize_task(theme, d, args.seed + k, "graph") for d in args.difficulties for k in range(args.tasks_per_level)]
            except AgentWorldError as exc:
                print(f"skip {theme_id}: {exc}")
                continue
            save_tasks(tasks, OUT / f"{theme_id}.jsonl")
            kept += 1
            total += len(tasks)
            print(f"{cat:40s} {theme_id:40s} {len(tasks)} tasks")
    print(f"{total} tasks in {OUT}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--themes-per-category", type=int, default=Args.themes_per_category)
    p.add_argument("--seed", type=int, default=Args.seed)
    a = p.parse_args()
    main(Args(themes_per_category=a.themes_per_category, seed=a.seed))
