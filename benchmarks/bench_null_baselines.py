"""Null baselines: how often strategies that never look at the world pass synthesized tasks.

    python benchmarks/bench_null_baselines.py [--pool 300] [--per-level 1] [--mode-sample 6]

Strategies (`agentworld_gym.policies.null`): do-nothing, each constant of CONSTANT_ANSWERS, the first
id / quoted value of the instruction, the random policy (well-formed random calls for up to
max_turns), and "mode": the answer most frequent for the task's theme and level, read from a separate
sample of `mode-sample` tasks of that theme and level (other seeds), as a guesser who has seen
training tasks would. Beside them the oracle (gold replay, the ceiling: 1.0).
Tasks: every flagship theme and a seeded sample of `pool` pool themes, `per-level` tasks per level
1-5 (mixed kinds, `fallback=True` as env.reset does; each task is counted at the level it has), plus
the frozen held-out suite. Every episode is played through AgentWorldEnv with binary reward.
Issue 33's strategies that read the instruction (`instruction_strategies`): writes parsed from the
instruction with no read, echo of the instruction's values, one-hop field grab (levels >= 2),
probe-and-mode, shotgun lists; graded by `tasks.verify` on the state they leave.
Target (issues 11, 33): every cheap strategy <= 1% at every level and on the held-out suite.
Resumable: per-theme results go to <out>.progress.jsonl and are reused on the next run.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

import agentworld_gym  # noqa: F401  (registers the themes)
from agentworld_gym import envs
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.errors import AgentWorldError
from agentworld_gym.policies import OraclePolicy, run_episode
from agentworld_gym.policies.null import ConstantAnswerPolicy, null_policies
from agentworld_gym.suites.core import load_heldout, wilson
from agentworld_gym.synthesis import LEVELS, instruction_values, synthesize_task
from agentworld_gym.synthesis import depth as D
from agentworld_gym.synthesis.facts import facts
from agentworld_gym.synthesis.wording import show
from agentworld_gym.tasks import verify


@dataclass
class Args:
    pool: int = 300
    per_level: int = 1
    mode_sample: int = 6
    max_turns: int = 20
    seed: int = 0
    max_minutes: float = 0.0
    """stop starting new themes after this long (0: no limit) and report over the themes done (printed)"""
    heldout: int = 1
    """1: also play the frozen held-out suite; 0: leave it out (the report says so)"""
    synthesis: str = "v4.1"
    """the task rules the rows were made under: progress rows of another version are not reused"""
    suite: str = "agentworld_gym/suites/heldout_v3"
    """the frozen held-out suite played with --heldout 1 ("" for the default, agentworld_gym/suites/heldout)"""
    suite_sample: int = 0
    """play about this many of the suite's tasks, every k-th (0: all; the report gives n)"""
    skip_pool: int = 0
    """1: flagship themes only (with the suite); the pool sample is left out (the report says so)"""
    suite_only: int = 0
    """1: the held-out suite only (after a re-freeze); no theme is sampled"""
    out: str = "benchmarks/results/null_baselines.md"



def _key(answer) -> str:
    return json.dumps(answer, sort_keys=True, default=str)


def mode_answer(theme, level: int, n: int, seed: int) -> str | None:
    """The most frequent answer of `n` tasks of this theme and level drawn with seeds apart from the test tasks."""
    counts: Counter = Counter()
    for s in range(n):
        try:
            t = synthesize_task(theme, level, 10**6 + seed * 1000 + s, "mixed", fallback=True)
        except AgentWorldError:
            continue
        if t.answer_type != "none":
            counts[_key(t.answer)] += 1
    if not counts:
        return None
    value = json.loads(counts.most_common(1)[0][0])
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def play(env: AgentWorldEnv, task, mode: str | None, seed: int) -> dict[str, bool]:
    """Success of every strategy (and the oracle) on one task."""
    out = {}
    policies = dict(null_policies(seed))
    if mode is not None:
        policies["mode"] = ConstantAnswerPolicy(mode)
    for name, policy in policies.items():
        out[name] = run_episode(env, policy, seed=seed, options={"task": task})["success"]
    out["oracle"] = run_episode(env, OraclePolicy(env), seed=seed, options={"task": task})["success"]
    if mode is None:
        out["mode"] = False  # no answer task of this theme and level in the sample: nothing to guess
    return out


INSTRUCTION_STRATEGIES = ("writes-no-read", "echo", "one-hop", "probe-mode", "shotgun")


def instruction_strategies(theme, task) -> dict[str, bool]:
    """Issue 33's cheap strategies that read only the instruction (and at most one read made from it),
    graded by the verifier the env uses (`tasks.verify`) on the world they leave:

    * writes-no-read: make every gold write whose arguments the instruction states (a perfect parser), no read;
    * echo: submit a value of the instruction (each id, quoted value, email, date, number; passes if any does);
    * one-hop (levels >= 2): make a read whose inputs the instruction states and submit one of its fields
      (passes if any field of any such read does: an upper bound on guessing the field);
    * probe-and-mode: that read's most frequent field value, or the length of its list;
    * shotgun: every field of every such read, submitted as one list (a superset the grader must refuse)."""
    fx = facts(theme, task.db_seed)
    text = task.instruction
    untouched = fx.initial_hash(task.state_tables) if task.state_tables else None

    def passes(answer) -> bool:
        return verify(task, answer, untouched, True).passed

    out = dict.fromkeys(INSTRUCTION_STRATEGIES, False)
    writes = [c for c in task.solution if theme.toolset[c["name"]].writes
              and all(show(v) in text for v in c.get("arguments", {}).values())]
    if writes:
        with fx.run() as run:
            for c in writes:
                run.call(c["name"], c.get("arguments", {}))
            state = fx.state_hash(run.conn, task.state_tables) if task.state_tables else None
            out["writes-no-read"] = verify(task, "done", state, run.changed <= set(task.state_tables)).passed
    out["echo"] = any(passes(v) for v in instruction_values(text))
    probes = []  # outputs of reads whose inputs the instruction states
    outputs = D.outputs_of(fx, task.solution) or []
    for c, data in zip(task.solution, outputs, strict=False):
        args = list(c.get("arguments", {}).values())
        if not theme.toolset[c["name"]].writes and args and all(show(v) in text for v in args):
            probes.append(data)
    fields = [v for data in probes for v in D.scalars(data)]
    if task.difficulty >= 2:
        out["one-hop"] = any(passes(v) for v in fields)
    out["probe-mode"] = any(passes(g) for g in D.probe_guesses(theme, task.solution, outputs, text))
    if fields:
        out["shotgun"] = passes([show(v) for v in fields])
    return out


def theme_rows(theme_id: str, args: Args) -> list[dict]:
    theme = envs.get_theme(theme_id)
    env = AgentWorldEnv(theme_id, max_turns=args.max_turns)
    rows, modes = [], {}
    for level in LEVELS:
        for k in range(args.per_level):
            task = synthesize_task(theme, level, args.seed * 1000 + level * 100 + k, "mixed", fallback=True)
            lv = task.difficulty
            if lv not in modes:
                modes[lv] = mode_answer(theme, lv, args.mode_sample, args.seed)
            rows.append({"theme": theme_id, "level": lv, "task": task.id, **play(env, task, modes[lv], args.seed + k),
                         **instruction_strategies(theme, task)})
    env.close()
    return rows


def heldout_rows(args: Args) -> list[dict]:
    rows, modes, envs_ = [], {}, {}
    tasks = load_heldout(args.suite or None)
    if args.suite_sample and args.suite_sample < len(tasks):  # every k-th: the loader interleaves themes, so a spread
        tasks = tasks[::-(-len(tasks) // args.suite_sample)]
    for task in tqdm(tasks, desc="held-out", unit="task"):
        theme = envs.get_theme(task.theme)
        key = (task.theme, task.difficulty)
        if key not in modes:
            modes[key] = mode_answer(theme, task.difficulty, args.mode_sample, args.seed)
        env = envs_.get(task.theme) or envs_.setdefault(task.theme, AgentWorldEnv(task.theme, max_turns=args.max_turns))
        rows.append({"theme": task.theme, "level": task.difficulty, "task": task.id, **play(env, task, modes[key], args.seed),
                     **instruction_strategies(theme, task)})
    return rows


def table(rows: list[dict], strategies: list[str], title: str) -> list[str]:
    groups = defaultdict(list)
    for r in rows:
        groups[r["level"]].append(r)
    groups["all"] = rows
    lines = [f"### {title}", "", "| level | n | " + " | ".join(strategies) + " |", "|---" * (len(strategies) + 2) + "|"]
    for level in [*sorted(k for k in groups if k != "all"), "all"]:
        g = groups[level]
        if not g:
            continue
        cells = []
        for s in strategies:
            k = sum(r[s] for r in g)
            lo, hi = wilson(k, len(g))
            cells.append(f"{k / len(g):.3f} [{lo:.3f}, {hi:.3f}]")
        lines.append(f"| {level} | {len(g)} | " + " | ".join(cells) + " |")
    return lines + [""]


def _same(args: Args) -> dict:
    """The arguments that decide a theme's results (a time limit does not)."""
    return {k: v for k, v in asdict(args).items() if k not in ("max_minutes", "out", "heldout", "suite", "skip_pool", "suite_sample", "suite_only")}


def main(args: Args) -> None:
    start = time.monotonic()
    rng = np.random.default_rng(args.seed)
    flagships = [] if args.suite_only else sorted(e.id for e in envs.entries() if e.source == "flagship")
    pool_ids = sorted(e.id for e in envs.entries() if e.source != "flagship")
    pool = [] if args.skip_pool or args.suite_only else sorted(rng.choice(pool_ids, size=min(args.pool, len(pool_ids)), replace=False).tolist())
    progress = Path(args.out).with_suffix(".progress.jsonl")
    done: dict[str, list[dict]] = {}
    if progress.exists():
        for line in progress.read_text().splitlines():
            d = json.loads(line)
            if {k: d.get("args", {}).get(k) for k in _same(args)} == _same(args):
                done[d["theme"]] = d["rows"]
    skipped = []
    with progress.open("a") as f:
        for theme_id in tqdm([*flagships, *pool], desc="themes", unit="theme"):
            if theme_id in done:
                continue
            if args.max_minutes and time.monotonic() - start > args.max_minutes * 60:
                tqdm.write(f"time limit of {args.max_minutes} min reached: reporting over the themes done")
                break
            try:
                rows = theme_rows(theme_id, args)
            except AgentWorldError as exc:
                rows = []
                skipped.append(theme_id)
                tqdm.write(f"skip {theme_id}: {str(exc)[:150]}")
            done[theme_id] = rows
            f.write(json.dumps({"args": _same(args), "theme": theme_id, "rows": rows}) + "\n")
            f.flush()
    strategies = [*null_policies(0), "mode", *INSTRUCTION_STRATEGIES, "oracle"]
    flag_rows = [r for t in flagships for r in done.get(t, [])]
    pool_rows = [r for t in pool for r in done.get(t, [])]
    held = heldout_rows(args) if args.heldout else []
    cheap = [s for s in strategies if s != "oracle"]
    worst = {name: max((sum(r[s] for r in g) / len(g), s) for s in cheap)
             for name, g in (("flagship", flag_rows), ("pool", pool_rows), ("held-out", held)) if g}
    lines = [
        "# Null baselines (binary reward, every episode played through AgentWorldEnv)",
        "",
        "- themes: none sampled (--suite-only 1: the held-out suite alone)" if args.suite_only else
        f"- themes: {sum(t in done for t in flagships)} of {len(flagships)} flagship + {sum(t in done for t in pool)} of a seeded sample of "
        f"{len(pool)} pool themes (seed {args.seed}; fewer than the sample only where a time limit stopped the run); "
        f"{len(skipped)} could not make a task at all and are left out: {', '.join(skipped) or 'none'}",
        f"- {args.per_level} task(s) per theme and level (mixed kinds, counted at the level made); mode strategy from "
        f"{args.mode_sample} other tasks of the same theme and level; random: max_turns={args.max_turns}",
        "- cells: success rate [95% Wilson interval]; target: every cheap strategy <= 0.01 at every level; oracle 1.0",
        "- best cheap strategy overall: " + "; ".join(f"{k} {v[1]} {v[0]:.3f}" for k, v in worst.items()),
        "",
        *(table(flag_rows, strategies, "Flagship themes") if flagships else []),
        *(table(pool_rows, strategies, "Pool themes") if pool else []),
        *(table(held, strategies, f"Held-out suite ({args.suite or 'agentworld_gym/suites/heldout'})") if held else
          ["### Held-out suite", "", "Not played in this run (`--heldout 0`).", ""]),
    ]
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text)
    Path(args.out).with_suffix(".json").write_text(json.dumps({"args": asdict(args), "flagship": flag_rows, "pool": pool_rows,
                                                               "heldout": held, "skipped": skipped}, indent=0))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in asdict(Args()).items():
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    main(Args(**vars(p.parse_args())))
