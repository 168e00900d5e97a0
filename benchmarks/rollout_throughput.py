"""Rollout throughput: batched multi-episode generation vs one episode at a time, in the same run.

Both sides play the same `episodes` tasks with the same greedy model, each episode in its own env;
the batched side makes one `generate` call per turn for all running episodes (left padding, KV cache),
the baseline plays the episodes one after another. Prints generated tokens/s of both and the ratio
(target >= 4x).

    python benchmarks/rollout_throughput.py --episodes 8 --model smollm2-135m
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Args:
    model: str = "smollm2-135m"
    """alias, local HF dir or checkpoint"""
    episodes: int = 8
    theme: str = "finance"
    difficulty: int = 1
    max_new_tokens: int = 48
    max_turns: int = 3
    temperature: float = 0.0
    """0: greedy (evaluation); 1.0: sampling, as in GRPO rollouts"""
    threads: int = 0
    """torch threads (0: torch's default)"""
    out: str = "benchmarks/results/rollout_throughput.json"


def make_env(theme: str, task, max_turns: int):
    from agentworld_gym.env import AgentWorldEnv

    return lambda: AgentWorldEnv(theme, tasks=[task], max_turns=max_turns)


def main(args: Args) -> dict:
    import torch
    from agentworld_gym.envs import get_theme

    from agentworld_gym.policies.llm import HFPolicy, run_episodes_batched
    from agentworld_gym.synthesis import synthesize_task

    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    policy = HFPolicy(args.model, max_new_tokens=args.max_new_tokens, temperature=args.temperature)
    theme = get_theme(args.theme)
    tasks = [synthesize_task(theme, args.difficulty, seed) for seed in range(args.episodes)]
    thunks = [make_env(args.theme, t, args.max_turns) for t in tasks]
    options = [{"task": t} for t in tasks]

    policy.generate([[1, 2, 3]] * 2)  # warm-up: the first generate call pays one-off costs (threads, allocator)
    t0 = time.perf_counter()
    batched = run_episodes_batched([f() for f in thunks], policy, options=options)
    t_batched = time.perf_counter() - t0

    t0 = time.perf_counter()
    single = [run_episodes_batched([f()], policy, options=[o])[0] for f, o in zip(thunks, options, strict=True)]
    t_single = time.perf_counter() - t0

    tok_b = sum(r["gen_tokens"] for r in batched)
    tok_s = sum(r["gen_tokens"] for r in single)
    result = {"args": asdict(args), "batched": {"tokens": tok_b, "seconds": round(t_batched, 2), "tokens_per_s": tok_b / t_batched},
              "one_at_a_time": {"tokens": tok_s, "seconds": round(t_single, 2), "tokens_per_s": tok_s / t_single},
              "torch_threads": torch.get_num_threads()}
    result["speedup"] = result["batched"]["tokens_per_s"] / result["one_at_a_time"]["tokens_per_s"]
    print(f"batched        {tok_b:6d} tokens in {t_batched:7.1f}s  {result['batched']['tokens_per_s']:7.1f} tokens/s")
    print(f"one at a time  {tok_s:6d} tokens in {t_single:7.1f}s  {result['one_at_a_time']['tokens_per_s']:7.1f} tokens/s")
    print(f"speedup {result['speedup']:.2f}x (target >= 4x)")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in asdict(Args()).items():
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    main(Args(**vars(p.parse_args())))
