"""Freeze the held-out suite: task files under benchmarks/suites/heldout/<theme>.jsonl.

    python benchmarks/make_heldout_suite.py            # one command; re-run it after the pool changes

Themes come from the generated pool (source "catalog" by default), never from the flagships, so every
flagship stays available for training; the trainer excludes whatever themes have a file here
(`agentworld_gym.bench.heldout_themes`). For each of the L1 categories, the first
`themes_per_category` themes (sorted by a seeded hash of their id, so the pick does not lean on
alphabetical order, one per blueprint) that make a verified task at every difficulty 1-5 get
`tasks_per_level` tasks per level (mixed kinds). Tasks pass the tasks-v2 quality filter: goals, not
scripts; every gold call needed; no answer a cheap strategy gives. Its 60 themes are frozen in the
pool build (discovery.pool.FROZEN), so rebuilding the pool does not change the worlds the suite plays.
Writes to a temporary folder first and swaps it in at the end, so an interrupted run changes nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from agentworld_gym import envs
from agentworld_gym.errors import AgentWorldError
from agentworld_gym.synthesis import LEVELS, synthesize_task
from agentworld_gym.tasks import save_tasks

OUT = Path(__file__).resolve().parent / "suites" / "heldout"


@dataclass
class Args:
    themes_per_category: int = 3
    """pool themes held out per L1 category"""
    tasks_per_level: int = 1
    seed: int = 0
    sources: str = "catalog"
    """comma-separated theme sources to draw from (never "flagship")"""
    out: str = str(OUT)


def _order(theme_id: str, seed: int) -> str:
    return hashlib.sha1(f"{seed}|{theme_id}".encode()).hexdigest()


def main(args: Args) -> None:
    sources = set(args.sources.split(",")) - {"flagship"}
    by_cat: dict[str, list[str]] = defaultdict(list)
    for e in envs.entries():
        if e.source in sources:
            by_cat[e.category].append(e.id)
    out = Path(args.out)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    total, short = 0, []
    for cat in tqdm(sorted(by_cat), desc="categories", unit="category"):
        kept, bases = 0, set()
        for theme_id in sorted(by_cat[cat], key=lambda t: _order(t, args.seed)):
            if kept == args.themes_per_category:
                break
            base = theme_id.rstrip("0123456789").rstrip("-")
            if base in bases:
                continue  # variants of one blueprint are too alike: take distinct ones
            try:
                theme = envs.get_theme(theme_id)
                tasks = [synthesize_task(theme, d, args.seed * 1000 + k, "mixed") for d in LEVELS for k in range(args.tasks_per_level)]
            except AgentWorldError as exc:
                tqdm.write(f"skip {theme_id}: {str(exc)[:160]}")
                continue
            bases.add(base)
            save_tasks(tasks, tmp / f"{theme_id}.jsonl")
            kept += 1
            total += len(tasks)
            tqdm.write(f"{cat:40s} {theme_id:40s} {len(tasks)} tasks")
        if kept < args.themes_per_category:
            short.append(f"{cat} ({kept})")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    print(f"{total} tasks over {len(by_cat)} categories in {out}")
    if short:
        print("categories with fewer themes than asked: " + ", ".join(short))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--themes-per-category", type=int, default=Args.themes_per_category)
    p.add_argument("--tasks-per-level", type=int, default=Args.tasks_per_level)
    p.add_argument("--seed", type=int, default=Args.seed)
    p.add_argument("--sources", default=Args.sources)
    p.add_argument("--out", default=Args.out)
    a = p.parse_args()
    main(Args(a.themes_per_category, a.tasks_per_level, a.seed, a.sources, a.out))
