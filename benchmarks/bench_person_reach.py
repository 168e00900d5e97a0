"""Level reach of person requests (tasks v3): what `env.reset` gets for each level, on flagships and pool themes.

    AGENTWORLD_REQUESTS=person python benchmarks/bench_person_reach.py [--pool 100] [--seeds 3] [--out ...]

For all 20 flagships and a seeded sample of `pool` pool themes (catalog and Toucan-derived), each level 1-5
and `seeds` seeds: `synthesize_task(theme, level, seed, "mixed", fallback=True)`, as `env.reset` asks for a
task. Per source and level: n requests, the share made at the level asked for, the share that stepped down
(with the mean levels lost), and the share for which no task came back at all (where `env.reset` would try
the next seed, and raise after SYNTHESIS_SEEDS). Prints a markdown table (shares with 95% Wilson intervals);
`--out` writes it, with a JSON of the per-theme results beside. Resumable: themes already in the JSON are
not redone.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

import agentworld_gym  # noqa: F401  (registers the themes)
from agentworld_gym import envs
from agentworld_gym.errors import AgentWorldError
from agentworld_gym.suites.core import wilson
from agentworld_gym.synthesis import LEVELS, synthesize_task
from agentworld_gym.synthesis import persona as P


def reach(theme_id: str, seeds: int) -> dict[str, list]:
    """{level: [level made, or None when no task came back, per seed]}."""
    theme = envs.get_theme(theme_id)
    out = {}
    for lv in LEVELS:
        got = []
        for s in range(seeds):
            try:
                got.append(synthesize_task(theme, lv, s, "mixed", fallback=True).difficulty)
            except AgentWorldError:
                got.append(None)
        out[str(lv)] = got
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pool", type=int, default=100)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="benchmarks/results/person_reach.md")
    args = p.parse_args()
    entries = envs.entries()
    flagships = sorted(e.id for e in entries if e.source == "flagship")
    pool_ids = sorted(e.id for e in entries if e.source != "flagship")
    rng = np.random.default_rng(args.seed)
    pool = sorted(rng.choice(pool_ids, size=min(args.pool, len(pool_ids)), replace=False).tolist())
    source = {e.id: ("flagship" if e.source == "flagship" else "pool") for e in entries}
    store = Path(args.out).with_suffix(".json")
    results = json.loads(store.read_text()) if store.is_file() else {}
    start = time.monotonic()
    for tid in tqdm([t for t in flagships + pool if t not in results], desc="themes", unit="theme"):
        results[tid] = reach(tid, args.seeds)
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(json.dumps(results, indent=1))  # resumable: one theme at a time
    mode = "person" if P.enabled() else "classic"
    lines = [f"# Level reach of {mode} requests (mixed kind, fallback on, as env.reset asks): {len(flagships)} flagships, "
             f"{len(pool)} pool themes (seed {args.seed}), {args.seeds} seeds", "",
             "| source | level | n | made at the level | stepped down | mean levels lost (stepped) | no task at all | themes with no task at some seed |",
             "|---|---|---|---|---|---|---|---|"]
    for src, ids in (("flagship", flagships), ("pool", pool)):
        for lv in LEVELS:
            got = [g for t in ids for g in results[t][str(lv)]]
            n = len(got)
            at = sum(g == lv for g in got)
            down = [lv - g for g in got if g is not None and g != lv]
            none = sum(g is None for g in got)
            bad = sum(any(g is None for g in results[t][str(lv)]) for t in ids)

            def cell(k: int, n: int = n) -> str:
                lo, hi = wilson(k, n)
                return f"{k / n:.1%} [{lo:.1%}, {hi:.1%}]"

            lines.append(f"| {src} | {lv} | {n} | {cell(at)} | {cell(len(down))} | {np.mean(down) if down else 0:.2f} | {cell(none)} | {bad} of {len(ids)} |")
    lines += ["", f"({time.monotonic() - start:.0f} s wall for the themes run now; sources: {dict((s, sum(source[t] == s for t in results)) for s in ('flagship', 'pool'))})"]
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
