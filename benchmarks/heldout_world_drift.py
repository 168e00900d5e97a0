"""Which frozen held-out suite items still hold on the worlds this tree builds?

    python benchmarks/heldout_world_drift.py

A change to world generation (agentworld_gym.world.GENERATOR_VERSION) regenerates the worlds the
held-out suite (agentworld_gym/suites/heldout) was frozen on. This replays every item's gold solution on
the current world of its theme and runs the same quality check the suite was frozen with
(`synthesis.quality_problems`); an item whose gold replay fails, answers differently or ends in a
different state has drifted and must be redrawn when the suite is re-frozen (make_heldout_suite.py).
Results: benchmarks/results/heldout_world_drift.json (per item: id, theme, level, problems).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DRIFT = ("gold solution has a failing call", "gold replay gives a different answer", "gold replay gives a different final state",
         "gold program does not replay to the same calls")


def main(out: Path, limit: int | None = None) -> dict:
    from agentworld_gym.envs import get_theme
    from tqdm import tqdm

    import agentworld_gym  # noqa: F401  (registers the pool)
    from agentworld_gym.suites.core import suites_dir
    from agentworld_gym.synthesis import quality_problems
    from agentworld_gym.tasks import load_tasks
    from agentworld_gym.world import GENERATOR_VERSION

    files = sorted((suites_dir() / "heldout").glob("*.jsonl"))[:limit]
    items = []
    for f in tqdm(files, desc="held-out themes", unit="theme"):
        theme = get_theme(f.stem)
        for task in load_tasks(f):
            problems = quality_problems(theme, task)
            items.append({"id": task.id, "theme": f.stem, "level": task.difficulty, "drifted": any(p in DRIFT for p in problems),
                          "problems": problems})
    res = {"generator_version": GENERATOR_VERSION, "items": len(items), "drifted": sum(i["drifted"] for i in items),
           "with_any_problem": sum(bool(i["problems"]) for i in items),
           "problems": dict(Counter(p for i in items for p in i["problems"]).most_common()),
           "drifted_ids": [i["id"] for i in items if i["drifted"]], "per_item": items}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1) + "\n")
    print(f"{res['drifted']} of {res['items']} held-out items drifted on generator version {GENERATOR_VERSION}; "
          f"{res['with_any_problem']} fail some quality check. Problems: {res['problems']}")
    return res


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=HERE / "results" / "heldout_world_drift.json")
    p.add_argument("--limit", type=int, default=None, help="only the first N themes")
    a = p.parse_args()
    main(a.out, a.limit)
