"""Memory of a vector of N envs of one theme (budget: 64 envs <= 1 GB), beside the process baseline.

    python benchmarks/bench_memory.py [--theme finance] [--envs 64] [--steps 200]

Baseline = resident memory after importing the package and building one env (interpreter, gymnasium,
the theme's world template). The vector's cost is what N envs add on top after `steps` random steps
(every env holds its own SQLite copy and transcript). Linux only (reads /proc/self/status).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import gymnasium as gym

import agentworld_gym


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--theme", default="finance")
    p.add_argument("--envs", type=int, default=64)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--out", default="benchmarks/results/bench_memory.json")
    args = p.parse_args()

    gym.register_envs(agentworld_gym)
    env_id = f"AgentWorld/{args.theme}-v0"
    one = gym.make(env_id)
    one.reset(seed=0)
    baseline = rss_mib()
    vec = gym.vector.SyncVectorEnv([lambda: gym.make(env_id, max_turns=20) for _ in range(args.envs)])
    vec.reset(seed=0)
    vec.action_space.seed(0)
    for _ in range(args.steps):
        vec.step(vec.action_space.sample())
    total = rss_mib()
    added = total - baseline
    figures = {"theme": args.theme, "envs": args.envs, "steps": args.steps, "baseline_mib": round(baseline, 1),
               "total_mib": round(total, 1), "added_mib": round(added, 1), "per_env_mib": round(added / args.envs, 2),
               "added_over_baseline": round(added / baseline, 2)}
    print(f"baseline (package + one env)        {baseline:8.1f} MiB")
    print(f"{args.envs} envs after {args.steps} steps           {total:8.1f} MiB   (budget <= 1024 MiB)")
    print(f"added by the vector                 {added:8.1f} MiB   = {added / args.envs:.2f} MiB/env, {added / baseline:.2f}x the baseline")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
