"""Rollout throughput: continuous batching (8 slots refilled token by token) vs one episode at a time, in the same run.

Every mode plays the same `episodes` tasks with the same greedy model, each episode in its own env:

* ``continuous``       `batch_size` slots advance together, one forward pass per step; a slot whose reply ends
                       steps its env and feeds its tool results in the next step, packed with the other slots'
                       decoding; a slot whose episode ends takes the next waiting episode (`run_episodes_batched`)
* ``groups``           `batch_size` episodes at a time, one HF `generate` call per turn for the running
                       episodes of the group, each episode's KV cache kept across turns; a group is played
                       to its end before the next starts (`run_episodes_grouped`, the way before)
* ``single``           one episode at a time through the continuous engine (one slot)
* ``single_generate``  one episode at a time through `generate`, cache kept across turns (the baseline of
                       the earlier figures)

Repetitions interleave the modes (the machine may be shared: its load average is recorded) and the
report gives the median and the range over repetitions of generated tokens/s and of the ratios, plus
tokens/s per turn as the episodes' context grows. In float32 the modes produce the same tokens (checked and
recorded); in bfloat16 rounding depends on the batch's shape, so their episodes differ a little.

    nice python benchmarks/rollout_throughput.py --episodes 24 --batch-size 8 --model runs/v2/div64-s2/final --reps 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path

MODES = ("continuous", "groups", "single", "single_generate")


@dataclass
class Args:
    model: str = "smollm2-135m"
    """alias, local HF dir or checkpoint (an SFT checkpoint makes tool calls, so episodes last several turns)"""
    episodes: int = 24
    batch_size: int = 8
    """episodes running at once in the batched modes"""
    theme: str = "finance"
    difficulty: int = 2
    max_new_tokens: int = 48
    max_turns: int = 4
    reps: int = 3
    modes: str = ",".join(MODES)
    dtype: str = "float32"
    """the model's weights and activations in every mode: float32, or bfloat16 where the CPU has bf16 matmul units"""
    threads: int = 1
    """torch threads, fixed (0: torch's default); on a shared 2-core box 2 threads stall on each other"""
    out: str = "benchmarks/results/rollout_throughput.json"


def play(policy, tasks, theme: str, max_turns: int, batch_size: int, mode: str) -> tuple[list[dict], list[dict], float]:
    """(results, per-turn log, seconds) of one mode."""
    from agentworld_gym.env import AgentWorldEnv
    from agentworld_gym.policies.llm import run_episodes_grouped
    from agentworld_gym.policies.slots import run_episodes_batched

    envs = [AgentWorldEnv(theme, tasks=[t], max_turns=max_turns) for t in tasks]
    options = [{"task": t} for t in tasks]
    log: list[dict] = []
    t0 = time.perf_counter()
    if mode in ("continuous", "single"):
        results = run_episodes_batched(envs, policy, options=options, slots=batch_size if mode == "continuous" else 1, turn_log=log)
    else:
        size = batch_size if mode == "groups" else 1
        results = []
        for lo in range(0, len(envs), size):
            group_log: list[dict] = []  # its rows count the group's own turns
            results += run_episodes_grouped(envs[lo:lo + size], policy, options=options[lo:lo + size], turn_log=group_log)
            log += group_log
    seconds = time.perf_counter() - t0
    for env in envs:
        env.close()
    return results, log, seconds


def spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def per_turn(logs_by_rep: list[list[dict]]) -> list[dict]:
    """Per turn index: episodes, mean context, generated tokens and the median over repetitions of tokens/s
    (the turn's tokens over the model time spent on it: whole calls for `generate`, shares of steps for slots)."""
    by_turn: dict[int, list[dict]] = {}
    for log in logs_by_rep:
        totals: dict[int, dict] = {}
        for row in log:
            t = totals.setdefault(row["turn"], {"episodes": 0, "context_tokens": 0, "gen_tokens": 0, "seconds": 0.0})
            for k in t:
                t[k] += row[k]
        for turn, t in totals.items():
            by_turn.setdefault(turn, []).append(t)
    table = []
    for turn, rows in sorted(by_turn.items()):
        table.append({"turn": turn, "episodes": rows[0]["episodes"],
                      "mean_context_tokens": round(rows[0]["context_tokens"] / max(rows[0]["episodes"], 1)),
                      "gen_tokens": rows[0]["gen_tokens"],
                      "seconds_median": statistics.median(r["seconds"] for r in rows),
                      "tokens_per_s_median": statistics.median(r["gen_tokens"] / r["seconds"] for r in rows)})
    return table


def main(args: Args) -> dict:
    import torch
    from agentworld_gym.envs import get_theme

    from agentworld_gym.policies.llm import HFPolicy
    from agentworld_gym.synthesis import synthesize_task

    if args.threads:
        torch.set_num_threads(args.threads)
    modes = args.modes.split(",")
    policy = HFPolicy(args.model, max_new_tokens=args.max_new_tokens, temperature=0.0, device="cpu")
    policy.model.to(getattr(torch, args.dtype))
    theme = get_theme(args.theme)
    tasks = [synthesize_task(theme, args.difficulty, seed) for seed in range(args.episodes)]
    policy.generate([[1, 2, 3]] * 2)  # warm-up: the first generate call pays one-off costs (threads, allocator)

    load = [os.getloadavg()[0]]
    runs = {m: [] for m in modes}
    logs = {m: [] for m in modes}
    trajectories = {}
    for rep in range(args.reps):
        for m in (modes if rep % 2 == 0 else modes[::-1]):  # alternate the order: drifting load hits every mode alike
            results, log, seconds = play(policy, tasks, args.theme, args.max_turns, args.batch_size, m)
            tokens = sum(r["gen_tokens"] for r in results)
            runs[m].append({"tokens": tokens, "seconds": seconds, "tokens_per_s": tokens / seconds})
            logs[m].append(log)
            trajectories.setdefault(m, [r["ids"] for r in results])
            turns = [r["turns"] for r in results]
            print(f"rep {rep} {m:17s} {tokens:5d} tokens {seconds:7.1f}s {tokens / seconds:7.1f} tokens/s", flush=True)
        load.append(os.getloadavg()[0])
    same = all(t == trajectories[modes[0]] for t in trajectories.values())

    results = {"args": asdict(args), "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count(),
               "load_average_1min": {"per_rep": load, **spread(load)}, "same_tokens_in_every_mode": same,
               "episode_turns": turns,
               "modes": {m: {"runs": runs[m], "tokens_per_s": spread([r["tokens_per_s"] for r in runs[m]]),
                             "per_turn": per_turn(logs[m])} for m in modes},
               "speedups": {}}
    for a, b in (("continuous", "single"), ("continuous", "single_generate"), ("continuous", "groups"),
                 ("groups", "single_generate"), ("single", "single_generate")):
        if a in runs and b in runs:
            ratios = [x["tokens_per_s"] / y["tokens_per_s"] for x, y in zip(runs[a], runs[b], strict=True)]
            results["speedups"][f"{a}/{b}"] = spread(ratios)

    print(f"\nload average (1 min) {load}; torch threads {torch.get_num_threads()}; turns per episode {turns}; "
          f"same tokens in every mode: {same}")
    for m in modes:
        s = results["modes"][m]["tokens_per_s"]
        print(f"{m:17s} {s['median']:7.1f} tokens/s (median of {s['n']}, range {s['min']:.1f}-{s['max']:.1f})")
    for k, s in results["speedups"].items():
        print(f"{k:34s} {s['median']:5.2f}x (range {s['min']:.2f}-{s['max']:.2f})")
    for m in modes:
        if m != "single_generate":
            print(f"\nper turn, {m}:")
            for row in results["modes"][m]["per_turn"]:
                print(f"  turn {row['turn']}: {row['episodes']} episodes, context {row['mean_context_tokens']:5d} tokens/episode, "
                      f"{row['gen_tokens']:4d} generated, {row['tokens_per_s_median']:6.1f} tokens/s")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in asdict(Args()).items():
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    main(Args(**vars(p.parse_args())))
