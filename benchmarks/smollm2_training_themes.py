"""Print a seeded comma-separated list of training themes: the 20 flagships plus N pool themes, none of
them a held-out suite theme or a sibling of one (same slug apart from the trailing number).

    python benchmarks/smollm2_training_themes.py --pool 96
"""

from __future__ import annotations

import argparse
import random

from agentworld_gym.envs import FLAGSHIPS, theme_ids

from agentworld_gym.arena.evolve import theme_family as base
from agentworld_gym.suites.core import load_heldout


def training_themes(pool: int, seed: int = 0) -> list[str]:
    held = {base(t.theme) for t in load_heldout()}
    flagships = [f for f in FLAGSHIPS if base(f) not in held]
    others = sorted(t for t in theme_ids() if t not in FLAGSHIPS and base(t) not in held)
    return flagships + random.Random(seed).sample(others, pool)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pool", type=int, default=96)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    print(",".join(training_themes(a.pool, a.seed)))
