"""Vector-env throughput: gymnasium SyncVectorEnv vs AsyncVectorEnv for 1, 2, 4, 8 envs.

Each sub-env plays random well-formed tool calls (the action space's `sample()`), with
gymnasium's NextStep autoreset. Prints env-steps per second and async/sync, next to a single
un-vectorized env measured in the same run (the baseline).

    .venv/bin/python benchmarks/bench_vector.py
    .venv/bin/python benchmarks/bench_vector.py --steps 200 --sizes 1,2
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Args:
    env_id: str = "AgentWorld/finance-v0"
    """env to vectorize"""
    difficulty: int = 2
    """task difficulty"""
    max_turns: int = 8
    """turns before truncation (episodes also end on a random submit)"""
    sizes: str = "1,2,4,8"
    """comma-separated numbers of sub-envs"""
    steps: int = 400
    """vector steps per measurement"""
    seed: int = 0
    """reset seed"""
    out: str = "benchmarks/results/bench_vector.json"
    """results file"""


def parse_args() -> Args:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        parser.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    return Args(**vars(parser.parse_args()))


def single_env_rate(args: Args) -> float:
    from agentworld_gym.vector import make_env

    env = make_env(args.env_id, difficulty=args.difficulty, max_turns=args.max_turns)()
    env.action_space.seed(args.seed)
    env.reset(seed=args.seed)
    start = time.perf_counter()
    for _ in range(args.steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    rate = args.steps / (time.perf_counter() - start)
    env.close()
    return rate


def vector_rate(args: Args, mode: str, n: int) -> float:
    from agentworld_gym.vector import make_vector_env

    envs = make_vector_env(args.env_id, n, mode=mode, difficulty=args.difficulty, max_turns=args.max_turns)
    envs.action_space.seed(args.seed)
    envs.reset(seed=args.seed)
    for _ in range(5):  # warm up (async workers start lazily)
        envs.step(envs.action_space.sample())
    start = time.perf_counter()
    for _ in range(args.steps):
        envs.step(envs.action_space.sample())
    rate = n * args.steps / (time.perf_counter() - start)
    envs.close()
    return rate


def main() -> None:
    args = parse_args()
    import agentworld_gym  # noqa: F401

    sizes = [int(s) for s in args.sizes.split(",")]
    base = single_env_rate(args)
    print(f"{args.env_id} difficulty {args.difficulty}, random tool calls, {os.cpu_count()} CPUs")
    print(f"single env (no vector): {base:,.0f} steps/s")
    print(f"{'envs':>5} {'sync steps/s':>13} {'async steps/s':>14} {'async/sync':>11} {'sync/single':>12}")
    rows = []
    for n in sizes:
        sync = vector_rate(args, "sync", n)
        async_ = vector_rate(args, "async", n)
        rows.append({"envs": n, "sync": round(sync, 1), "async": round(async_, 1)})
        print(f"{n:>5} {sync:>13,.0f} {async_:>14,.0f} {async_ / sync:>11.2f} {sync / base:>12.2f}", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"args": dataclasses.asdict(args), "cpus": os.cpu_count(),
                                          "single_env": round(base, 1), "rows": rows}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
