"""Task synthesis: verified tasks/s per core, and what each difficulty level means in numbers.

    python benchmarks/bench_synthesis.py [--themes finance,retail] [--per-level 20] [--episodes 40]

Throughput = `synthesize_task(..., check=True)`: a walk/program on a fresh copy of the world, the
instruction, and the quality filter (gold replay to the same answer/state, unique entities,
do-nothing and wrong answers rejected), in CPU seconds of this one process (so "per core" even on a
shared machine). Baseline, measured in the same run: replaying each finished task's gold solution
once (`Theme.replay`, the least work that could produce its ground truth).
Tasks are asked for with `fallback=True` (as `env.reset` does): the share a theme could only make at a
lower level is printed. Per level: mean gold calls, distinct tools, share of write tasks, look-alike
records in the world for the values stated (the distractors), and the success of a
random-candidate baseline (uniform over grounded candidate calls and submits of observed values,
`agentworld_gym.wrappers.candidate_actions`). Reset: `env.reset` with a known task.
One-time work per world is timed apart: the world build, the answer priors (with person requests: the seen answers,
and the classic prior a theme falls back to); the viability probes (`graph.viable`) run inside the rows, and their CPU
time is also reported apart ('after probes').
Budgets (ARCHITECTURE.md): >= 200 verified tasks/s per core on flagship themes; reset <= 1 ms.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from agentworld_gym.envs import entries, get_theme
from agentworld_gym.wrappers import candidate_actions

import agentworld_gym  # noqa: F401  (registers the themes)
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.errors import TaskError
from agentworld_gym.synthesis import LEVELS, answer_prior, seen_answers, synthesize_task
from agentworld_gym.synthesis.facts import facts
from agentworld_gym.synthesis.persona import enabled as person_enabled
from agentworld_gym.synthesis.persona import person_requests


@dataclass
class Args:
    themes: str = ""
    """comma-separated theme ids (default: every registered flagship theme)"""
    kinds: str = "graph,programmatic"
    per_level: int = 10
    """tasks per (theme, level, kind) for the throughput and feature statistics"""
    episodes: int = 300
    """random-candidate episodes per (level, kind), over the themes"""
    max_turns: int = 12
    resets: int = 2000
    seed: int = 0
    out: str = "benchmarks/results/synthesis.md"
    world_cpu: float = 0.0
    prior_cpu: float = 0.0
    failed: dict = dataclasses.field(default_factory=dict)
    tool_calls: dict = dataclasses.field(default_factory=dict)
    probe_cpu: dict = dataclasses.field(default_factory=dict)
    """CPU seconds of each row spent in the viability probes (`graph.viable`: once per world, level and kind)"""


class RandomCandidatePolicy:
    """Uniform over the grounded candidate actions of the current observation (the baseline)."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def act(self, observation: str, info: dict) -> str:
        candidates = candidate_actions(info)
        return candidates[int(self.rng.integers(len(candidates)))]


def synthesize_all(args: Args, themes: list[str]) -> tuple[dict, dict]:
    """{(level, kind): [tasks]} and {(level, kind): cpu seconds}, every theme built beforehand."""
    start = time.process_time()
    for t in themes:
        synthesize_task(get_theme(t), 1, 0)  # world build + caches: not synthesis
    args.world_cpu = time.process_time() - start
    start = time.process_time()
    for t in themes:  # each (theme, level)'s answer prior (tasks v3: and seen answers) is built once, like the world: timed apart
        for level in LEVELS:
            answer_prior(get_theme(t), level)
            if person_enabled():
                seen_answers(get_theme(t), level)
                with person_requests(False):  # the prior of the classic requests a theme falls back to
                    answer_prior(get_theme(t), level)
    args.prior_cpu = time.process_time() - start
    tasks, cpu = {}, {}
    args.tool_calls, args.probe_cpu = {}, {}
    for kind in args.kinds.split(","):
        for level in LEVELS:
            start = time.process_time()
            calls_before = sum(facts(get_theme(t), 0).tool_calls for t in themes)
            probes_before = sum(facts(get_theme(t), 0).probe_cpu for t in themes)
            made = []
            for t in themes:
                for s in range(args.per_level):
                    try:
                        made.append(synthesize_task(get_theme(t), level, args.seed * 100_003 + s, kind, fallback=True))
                    except TaskError:  # counted: the failed attempts' time stays in the figure
                        args.failed[f"{kind} {level}"] = args.failed.get(f"{kind} {level}", 0) + 1
            tasks[level, kind] = made
            cpu[level, kind] = time.process_time() - start
            args.tool_calls[f"{kind} {level}"] = sum(facts(get_theme(t), 0).tool_calls for t in themes) - calls_before
            args.probe_cpu[f"{kind} {level}"] = sum(facts(get_theme(t), 0).probe_cpu for t in themes) - probes_before
    return tasks, cpu


def replay_baseline(tasks: dict) -> float:
    """CPU seconds to run every gold solution once on a fresh copy (no hashing, no checks)."""
    from agentworld_gym.actions import ToolCall
    from agentworld_gym.world import open_copy

    start = time.process_time()
    for group in tasks.values():
        for task in group:
            theme = get_theme(task.theme)
            conn = open_copy(theme.world(task.db_seed).template)
            db = theme.db(conn)
            for c in task.solution:
                theme.toolset.call(db, ToolCall(c["name"], c["arguments"]))
            conn.close()
    return time.process_time() - start


def random_success(args: Args, group: list, envs: dict) -> float:
    policy = RandomCandidatePolicy(args.seed)
    rng = np.random.default_rng(args.seed)
    wins = 0
    for i in range(args.episodes):
        task = group[int(rng.integers(len(group)))]
        env = envs.get(task.theme) or envs.setdefault(task.theme, AgentWorldEnv(task.theme, max_turns=args.max_turns))
        obs, info = env.reset(seed=i, options={"task": task})
        while True:
            obs, reward, terminated, truncated, info = env.step(policy.act(obs, info))
            if terminated or truncated:
                wins += reward == 1.0
                break
    return wins / args.episodes


def bench_reset(args: Args, task) -> float:
    env = AgentWorldEnv(task.theme, tasks=[task])
    env.reset(seed=0)
    start = time.perf_counter()
    for i in range(args.resets):
        env.reset(seed=i)
    return (time.perf_counter() - start) / args.resets * 1e6


def bench_synth_reset(args: Args, theme: str, level: int, n: int = 100) -> float:
    """Mean ms of env.reset when the env synthesizes (and verifies) a fresh task on each reset."""
    env = AgentWorldEnv(theme, difficulty=level, task_kind="mixed")
    env.reset(seed=0)
    start = time.perf_counter()
    for i in range(n):
        env.reset(seed=i)
    return (time.perf_counter() - start) / n * 1e3


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(Args):
        if f.name in ("failed", "tool_calls", "probe_cpu"):
            continue
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    args = Args(**vars(p.parse_args()))
    themes = args.themes.split(",") if args.themes else sorted(e.id for e in entries() if e.source == "flagship")
    tasks, cpu = synthesize_all(args, themes)
    n = sum(len(g) for g in tasks.values())
    total_cpu = sum(cpu.values())
    base = replay_baseline(tasks)
    envs: dict = {}
    rows = []
    for (level, kind), group in sorted(tasks.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        f = [t.features for t in group]
        rows.append({
            "kind": kind, "level": level, "tasks_per_s": len(group) / cpu[level, kind],
            "tasks_per_s_after_probes": len(group) / max(cpu[level, kind] - args.probe_cpu[f"{kind} {level}"], 1e-9),
            "calls": np.mean([x["calls"] for x in f]), "tools": np.mean([x["distinct_tools"] for x in f]),
            "writes": np.mean([bool(t.state_hash) for t in group]), "weak": np.mean([x["weak_share"] for x in f]),
            "branching": np.mean([x["branching"] for x in f]), "distractors": np.mean([x["distractors"] for x in f]),
            "random": random_success(args, group, envs),
            "stepped_down": np.mean([t.difficulty != level for t in group]),
            "tool_calls": args.tool_calls[f"{kind} {level}"] / max(len(group), 1),
        })
    reset_us = bench_reset(args, tasks[1, args.kinds.split(",")[0]][0])
    synth_reset_ms = {lv: bench_synth_reset(args, themes[0], lv) for lv in LEVELS}
    lines = [
        f"# Task synthesis ({len(themes)} flagship themes, {n} verified tasks)",
        "",
        f"- verified tasks/s per core (CPU time, all levels and kinds): **{n / total_cpu:.0f}** (budget >= 200)",
        f"- slowest level: **{min(r['tasks_per_s'] for r in rows):.0f}** tasks/s/core (budget >= 200 at every level)",
        f"- of that CPU time, {sum(args.probe_cpu.values()):.1f} s ({sum(args.probe_cpu.values()) / total_cpu:.0%}) went to the viability probes "
        "(`graph.viable`: a few fixed seeds tried once per world, level, kind and attempt budget, so that a level a theme cannot "
        f"make fails at once); without them: **{n / (total_cpu - sum(args.probe_cpu.values())):.0f}** tasks/s/core, slowest level "
        f"**{min(r['tasks_per_s_after_probes'] for r in rows):.0f}** (column 'after probes': what a long run of resets pays per task)",
        f"- baseline, gold replay only: {n / base:.0f} tasks/s; synthesis costs {total_cpu / base:.1f}x a bare replay",
        f"- one-time costs, not in the figures above: world build + caches {args.world_cpu:.1f} s CPU; answer priors "
        f"(`answer_prior`{', and `seen_answers` with person requests' if person_enabled() else ''}, {len(themes)} themes x {len(LEVELS)} levels) {args.prior_cpu:.1f} s CPU, "
        f"{args.prior_cpu / (len(themes) * len(LEVELS)) * 1e3:.0f} ms per (theme, level)",
        f"- env.reset with a known task: {reset_us:.0f} us (budget <= 1000 us)",
        f"- env.reset that synthesizes a verified task ({themes[0]}, mixed kinds), ms by level: "
        + ", ".join(f"{lv}: {ms:.1f}" for lv, ms in synth_reset_ms.items()),
        f"- random-candidate baseline: {args.episodes} episodes per row, max_turns={args.max_turns}",
        f"- requests no task came back for (a theme that cannot make that kind even at level 1): {args.failed or 'none'}",
        "- tool calls per kept task: every call synthesis ran on a world copy for the level (walks, plans, the verifying "
        "replays, the left-out-write variants, failed attempts too; not those answered from the read memo) over the tasks "
        f"kept; a bare replay runs the gold calls only ({np.mean([len(t.solution) for g in tasks.values() for t in g]):.2f} "
        "per task on average). Unlike tasks/s it does not depend on the machine's load.",
        "",
        "| kind | level | tasks/s/core | after probes | tool calls per kept task | stepped down a level | mean calls | distinct tools | write tasks | weak/indep. edge share | branches | look-alike records | random-candidate success |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['kind']} | {r['level']} | {r['tasks_per_s']:.0f} | {r['tasks_per_s_after_probes']:.0f} | {r['tool_calls']:.1f} | {r['stepped_down']:.2f} | {r['calls']:.2f} | {r['tools']:.2f} | {r['writes']:.2f} | "
                     f"{r['weak']:.2f} | {r['branching']:.2f} | {r['distractors']:.2f} | {r['random']:.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    Path(args.out).with_suffix(".json").write_text(json.dumps({"args": dataclasses.asdict(args), "themes": themes,
                                                               "tasks_per_s": n / total_cpu, "replay_tasks_per_s": n / base,
                                                               "reset_us": reset_us, "synth_reset_ms": synth_reset_ms, "rows": rows}, indent=1, default=float))


if __name__ == "__main__":
    main()
