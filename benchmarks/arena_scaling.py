"""Small-scale reproduction of the paper's two arena analyses.

1. Environment-diversity scaling: the same SFT budget (a fixed number of oracle trajectories and
   epochs) spread over N training themes (N = 0, 1, 4, 16, ...; N = 0 is the untrained model);
   success is measured on held-out arena themes never trained on.
2. Evolution rounds: starting from the largest-N policy, `agentworld evolve` rounds
   (evaluate -> diagnose -> target -> train, training by GRPO by default: the paper's loop) on the
   arena, in two arms with the same budget and seeds: tasks targeted at the diagnosed weaknesses,
   and (the ablation) as many untargeted tasks drawn uniformly over the same arena cells. Each
   round's success with 95% intervals, the targeted-minus-untargeted difference, and which
   diagnosed weaknesses moved go to evolution.json.

Every stage runs once per training seed (--seeds 0,1,2); the arena and its tasks depend only on
--seed, so every seed and arm is scored on the same episodes, and the tables give the mean over
seeds, each seed's value and the pooled 95% interval.

The paper: 4-domain average 18.4% -> 38.5% going from 0 to 1,978 training environments, and
evolution gains that shrink (e.g. +6.8 then +1.8 points on MCP-Mark Postgres).

    python benchmarks/arena_scaling.py                                  # CPU: tiny model from scratch
    python benchmarks/arena_scaling.py --model smollm2-135m --device cuda --examples 2048 --epochs 2 \
        --theme-counts 0,1,4,16,64,256 --eval-tasks 12 --evolve-train-tasks 512 --seeds 0,1,2 --rounds 3

Everything a run writes goes under --out (default benchmarks/results/arena_scaling/); model
checkpoints go under --work (default runs/arena_scaling/, not committed). A finished configuration
or evolve step is skipped when the script runs again (resume).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PAPER = {"scaling": {"0 envs": 18.4, "1,978 envs": 38.5, "note": "4-domain average success (%), Agent-World paper"},
         "evolution": {"round 1 gain": 6.8, "round 2 gain": 1.8, "note": "MCP-Mark Postgres, points, Agent-World paper"}}


@dataclass
class Args:
    model: str = "tiny"
    """tiny | tiny:<layers>x<width> (random init, trained from scratch) | smollm2-135m | hf:<dir>"""
    device: str = "cpu"
    theme_counts: str = "0,1,4,16"
    """training-theme counts to compare (nested sets; 0 = the untrained model)"""
    sources: str = "flagship"
    """theme sources to draw the arena and training themes from (comma-separated registry sources)"""
    n_arena: int = 4
    """held-out arena themes when the pool is too small to hold out --arena-per-category per L1 category"""
    arena_per_category: int = 5
    examples: int = 128
    """SFT budget: oracle trajectories per configuration, spread evenly over its themes"""
    epochs: int = 4
    batch_size: int = 8
    lr: float = 3e-3
    max_seq_len: int = 768
    difficulties: str = "1"
    eval_tasks: int = 6
    """fresh arena tasks per arena theme"""
    max_turns: int = 3
    max_new_tokens: int = 56
    rounds: int = 2
    evolve_train_tasks: int = 48
    evolve_method: str = "grpo"
    """how evolve rounds train: grpo (the paper's loop) or sft (oracle trajectories of the tasks)"""
    evolve_arms: str = "targeted,untargeted"
    """targeted (from the diagnosis), untargeted (the ablation: as many tasks, uniform over the same cells) and/or
    frozen (the control: the start checkpoint, never trained, on every round's fresh arena tasks)"""
    evolve_epochs: int = 2
    """sft rounds: epochs over the round's tasks"""
    evolve_steps: int = 4
    """grpo rounds: GRPO steps per round"""
    evolve_group_size: int = 4
    evolve_tasks_per_step: int = 4
    evolve_lr: float = 1e-5
    """grpo rounds: learning rate"""
    evolve_micro_batch: int = 8
    """grpo rounds: trajectories per forward/backward pass (memory only: the gradient is the same)"""
    seed: int = 0
    """arena split and arena tasks (the same for every training seed)"""
    seeds: str = ""
    """training seeds, comma-separated (default: --seed): every configuration and evolve arm runs once per seed"""
    out: str = "benchmarks/results/arena_scaling"
    work: str = "runs/arena_scaling"
    evolve_from: str = ""
    """start the evolve rounds from these checkpoints instead of the scaling stage's largest N: a path with
    {seed} for the training seed, e.g. runs/v2/div16-s{seed}/final"""
    skip_evolution: bool = False
    skip_scaling: bool = False
    """only merge the configurations already run (e.g. in parallel processes) and run the evolution"""
    threads: int = 1
    """torch threads per process"""


def parse_args(argv=None) -> Args:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            p.add_argument(flag, action="store_true")
        else:
            p.add_argument(flag, type=type(f.default), default=f.default)
    return Args(**vars(p.parse_args(argv)))


def split(args: Args) -> tuple[list[str], list[str]]:
    """(arena themes, training themes in a fixed seeded order), both from --seed."""
    from collections import Counter

    from agentworld_gym.envs import entries

    from agentworld_gym.arena.evolve import split_arena

    sources = set(args.sources.split(","))
    usable = sorted(e.id for e in entries() if e.source in sources)
    per_cat = Counter(e.category for e in entries() if e.id in usable)
    rng = np.random.default_rng([args.seed, 99])
    if per_cat and min(per_cat.values()) > args.arena_per_category:
        arena, train = split_arena(args.arena_per_category, args.seed, themes=usable)
    else:
        order = [usable[i] for i in rng.permutation(len(usable))]
        arena, train = sorted(order[:args.n_arena]), order[args.n_arena:]
    train = [train[i] for i in rng.permutation(len(train))]
    return arena, train


def sft_tasks(themes: list[str], n: int, difficulties: tuple[int, ...], seed: int):
    """`n` training tasks spread evenly over `themes` (seeds disjoint from the arena's)."""
    from agentworld_gym.envs import get_theme

    from agentworld_gym.arena.target import TRAIN_SEED_BASE
    from agentworld_gym.errors import TaskError
    from agentworld_gym.synthesis import synthesize_task

    tasks, i = [], 0
    while len(tasks) < n and i < 20 * n:
        theme = themes[i % len(themes)]
        with contextlib.suppress(TaskError):  # a theme without a task at this level: take the next theme
            tasks.append(synthesize_task(get_theme(theme), difficulties[i % len(difficulties)], TRAIN_SEED_BASE + 7 * seed + i))
        i += 1
    return tasks


def capability(records: list[dict]) -> dict:
    """Success plus graded signals read off the transcripts by the diagnosis code."""
    from agentworld_gym.arena import diagnose as dg

    n = max(len(records), 1)
    ev = [dg.events_of(r["messages"]) for r in records]
    gold_first = []
    for r, es in zip(records, ev, strict=True):
        calls = [e for e in es if e.kind == "call"]
        gold = r["task"]["solution"]
        gold_first.append(bool(calls) and bool(gold) and calls[0].name == gold[0]["name"])
    report = dg.diagnose(records)
    return {
        "n": len(records),
        "success": sum(r["success"] for r in records) / n,
        "readable_call_rate": sum(any(e.kind == "call" for e in es) for es in ev) / n,
        "working_call_rate": sum(any(e.kind == "call" and e.error is None for e in es) for es in ev) / n,
        "right_first_tool_rate": sum(gold_first) / n,
        "failures": report["failures"],
    }


def training_seeds(args: Args) -> list[int]:
    return [int(x) for x in args.seeds.split(",") if x.strip()] or [args.seed]


def theme_order(train: list[str], args: Args, seed: int) -> list[str]:
    """The nested training-theme subsets of one training seed (--seed's own order for --seed)."""
    if seed == args.seed:
        return train
    rng = np.random.default_rng([seed, 98])
    return [train[i] for i in rng.permutation(len(train))]


def load_configs(out: Path, default_seed: int) -> dict[int, dict[int, dict]]:
    """{training themes: {seed: row}} from configs/n<N>_s<seed>.json (and n<N>.json of older runs, one seed)."""
    import re

    rows: dict[int, dict[int, dict]] = {}
    for path in (out / "configs").glob("n*.json"):
        m = re.fullmatch(r"n(\d+)(?:_s(\d+))?", path.stem)
        if m:
            rows.setdefault(int(m[1]), {})[int(m[2]) if m[2] is not None else default_seed] = json.loads(path.read_text())
    return rows


def aggregate(rows: list[dict]) -> dict:
    """Per-seed rows of one configuration -> mean over seeds, each seed's value and the pooled interval."""
    from agentworld_gym.suites.core import over_seeds

    agg = over_seeds([round(r["success"] * r["n"]) for r in rows], [r["n"] for r in rows])
    for key in ("readable_call_rate", "working_call_rate", "right_first_tool_rate"):
        agg[key] = round(float(np.mean([r[key] for r in rows])), 4)
    failures: dict[str, int] = {}
    for r in rows:
        for k, v in r["failures"].items():
            failures[k] = failures.get(k, 0) + v
    agg["failures"] = failures
    agg["train_seconds"] = round(float(np.mean([r.get("train_seconds") or 0 for r in rows])), 1)
    return agg


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    from agentworld_gym.arena import diagnose as dg
    from agentworld_gym.arena.evolve import arena_tasks
    from agentworld_gym.arena.records import play, save_records
    from agentworld_gym.arena.trainer_adapter import TrainerLearner

    torch.set_num_threads(args.threads)
    out, work = Path(args.out), Path(args.work)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    difficulties = tuple(int(x) for x in args.difficulties.split(","))
    seeds = training_seeds(args)
    arena, train = split(args)
    counts = [int(x) for x in args.theme_counts.split(",")]
    if max(counts) > len(train):
        print(f"only {len(train)} training themes registered; dropping counts above it", file=sys.stderr)
        counts = [c for c in counts if c <= len(train)]
    eval_set = arena_tasks(arena, 0, args.eval_tasks, difficulties, ("graph",), args.seed)
    print(f"arena ({len(arena)} themes, {len(eval_set)} tasks): {', '.join(arena)}")
    print(f"training pool: {len(train)} themes; counts {counts}; budget {args.examples} trajectories x {args.epochs} epochs; seeds {seeds}")
    train_opts = dict(batch_size=args.batch_size, lr=args.lr, max_seq_len=args.max_seq_len, save_every=10_000)

    # ---------------------------------------------------------------- 1. diversity scaling
    # one file per configuration and seed (so they can run as separate processes), merged below
    (out / "configs").mkdir(exist_ok=True)
    for seed in seeds:
        order = theme_order(train, args, seed)
        for n in counts:
            cfg_path = out / "configs" / f"n{n}_s{seed}.json"
            if cfg_path.exists() or args.skip_scaling:
                continue
            t0 = time.perf_counter()
            learner = TrainerLearner(args.model, seed=seed, device=args.device, epochs=args.epochs, exclude_themes=arena,
                                     max_new_tokens=args.max_new_tokens, **train_opts)
            themes = order[:n]
            ckpt, stats = None, {}
            if n:
                res = learner.train(None, sft_tasks(themes, args.examples, difficulties, seed), work / f"sft_n{n}_s{seed}", seed=seed)
                ckpt, stats = res.checkpoint, res.stats
            t_train = time.perf_counter() - t0
            records = play(eval_set, learner.policy_for(ckpt), policy=f"{args.model}@N={n}", max_turns=args.max_turns, seed=args.seed)
            save_records(records, work / f"eval_n{n}_s{seed}.jsonl")
            (out / f"diagnosis_n{n}_s{seed}.md").write_text(dg.to_markdown(dg.diagnose(records), f"Arena diagnosis, {n} training themes, seed {seed}"))
            row = {**capability(records), "seed": seed, "themes": themes, "checkpoint": ckpt, "train_stats": stats,
                   "train_seconds": round(t_train, 1), "eval_seconds": round(time.perf_counter() - t0 - t_train, 1)}
            cfg_path.write_text(json.dumps(row, indent=1))
            print(f"N={n} seed {seed}: success {100 * row['success']:.1f}%  working calls {100 * row['working_call_rate']:.0f}%  "
                  f"right first tool {100 * row['right_first_tool_rate']:.0f}%  (train {t_train:.0f}s)", flush=True)

    per_seed = load_configs(out, args.seed)
    results = {"args": dataclasses.asdict(args), "arena": arena, "paper": PAPER["scaling"],
               "configs": {str(n): {"seeds": {str(s): row for s, row in sorted(rows.items())}, **aggregate(list(rows.values()))}
                           for n, rows in sorted(per_seed.items())}}
    (out / "scaling.json").write_text(json.dumps(results, indent=1))

    # ---------------------------------------------------------------- 2. evolution rounds, targeted vs untargeted
    evo = json.loads((out / "evolution.json").read_text()) if (out / "evolution.json").exists() else None
    start_n = max(counts)
    if args.evolve_from:
        start, inits = f"checkpoint {args.evolve_from} of each seed", {s: args.evolve_from.format(seed=s) for s in seeds}
    elif all(s in per_seed.get(start_n, {}) for s in seeds):
        start, inits = f"N={start_n} checkpoint of each seed", {s: per_seed[start_n][s]["checkpoint"] for s in seeds}
    else:
        start, inits = None, None
    if not args.skip_evolution and inits:
        evo = run_evolution(args, arena, inits, start, difficulties, train_opts)
        (out / "evolution.json").write_text(json.dumps(evo, indent=1))
        from agentworld_gym.arena.report import build_evolution_report

        build_evolution_report(evo, out / "evolve_report.html")
    missing = not args.skip_evolution and inits is None
    if missing:
        print(f"evolution needs the N={start_n} configuration of every seed {seeds}; run the scaling stage first "
              "or give --evolve-from", file=sys.stderr)

    write_tables(out, results, evo)
    plot(out, results, evo)
    return 1 if missing else 0


def run_evolution(args: Args, arena: list[str], inits: dict[int, str | None], start: str, difficulties, train_opts: dict) -> dict:
    """Every (arm, seed) evolve run from its seed's checkpoint in `inits` (each resumes on its own); their per-round rows,
    the per-round aggregate over seeds, the targeted-minus-untargeted difference and the weaknesses that moved."""
    from agentworld_gym.arena.evolve import Evolution, EvolveConfig
    from agentworld_gym.arena.records import load_records
    from agentworld_gym.arena.report import build_report

    work, out = Path(args.work), Path(args.out)
    arms = [a for a in args.evolve_arms.split(",") if a]
    if args.evolve_method == "grpo":
        options = {"steps": args.evolve_steps, "group_size": args.evolve_group_size, "tasks_per_step": args.evolve_tasks_per_step,
                   "lr": args.evolve_lr, "micro_batch": args.evolve_micro_batch, "max_turns": args.max_turns, "save_every": 1, "max_new_tokens": args.max_new_tokens}
    else:
        options = {**train_opts, "epochs": args.evolve_epochs, "max_new_tokens": args.max_new_tokens}
    runs: dict[str, list[dict]] = {}
    t0 = time.perf_counter()
    for seed in inits:
        for arm in arms:
            name = f"{arm}_s{seed}"
            run_dir = work / "evolve" / name
            if arm == "frozen":
                runs[name] = frozen_run(args, arena, inits[seed], seed, difficulties, run_dir)
                continue
            cfg = EvolveConfig(out=str(run_dir), rounds=args.rounds, policy=args.model, init=inits[seed], arena_themes=tuple(arena),
                               eval_tasks_per_theme=args.eval_tasks, train_tasks=args.evolve_train_tasks, difficulties=difficulties,
                               max_turns=args.max_turns, seed=seed, eval_seed=args.seed, method=args.evolve_method, task_source=arm,
                               device=args.device, train_options=options)
            print(f"evolve {name}: {args.rounds} rounds of {args.evolve_method} on {args.evolve_train_tasks} {arm} tasks", flush=True)
            history = Evolution(cfg).run()
            runs[name] = [{"round": m["round"], "success": m["success_rate"], "n": m["n"], "successes": m["successes"], "ci95": m["ci95"],
                           "gain": m.get("gain"), "weaknesses_moved": m.get("weaknesses_moved", []),
                           **{k: v for k, v in capability(load_records(run_dir / f"round_{m['round']}" / "eval.jsonl")).items()
                              if k not in ("n", "success")},
                           "train_seconds": (m.get("train") or {}).get("train_seconds"),
                           "train_skipped": (m.get("train") or {}).get("skipped")} for m in history]
            copy = out / "evolve_run" / name  # the committed trace of each run (the checkpoints stay under --work)
            copy.mkdir(parents=True, exist_ok=True)
            for r in range(args.rounds + 1):
                for file in ("diagnosis.md", "metrics.json", "targets.json"):
                    if (run_dir / f"round_{r}" / file).exists():
                        shutil.copy(run_dir / f"round_{r}" / file, copy / f"round_{r}_{file}")
            build_report(run_dir, copy / "report.html")
    return {"start": start, "method": args.evolve_method, "arms": arms, "seeds": list(inits),
            "train_tasks_per_round": args.evolve_train_tasks, "seconds": round(time.perf_counter() - t0, 1), "paper": PAPER["evolution"],
            "runs": runs, **summarize_evolution(runs, arms, list(inits), args.rounds),
            "null_baselines": arena_nulls(arena, args.rounds, args.eval_tasks, difficulties, args.max_turns, args.seed)}


def arena_nulls(arena: list[str], rounds: int, per_theme: int, difficulties, max_turns: int, seed: int) -> list[dict]:
    """Per round, the best null baseline (do-nothing, constant answers, first-id, random) on that round's arena tasks,
    which every seed and arm plays: what success an agent gets without solving anything."""
    from agentworld_gym.arena.evolve import EvolveConfig, arena_tasks
    from agentworld_gym.suites.core import best_null, play_nulls

    rows = []
    for r in range(rounds + 1):
        tasks = arena_tasks(arena, r, per_theme, difficulties, EvolveConfig(out="").kinds, seed)  # the kinds evolve runs play
        hits = play_nulls(tasks, seed, max_turns, "arena")
        best = best_null(hits)
        rows.append({"round": r, "n": len(tasks), "best": best["name"], "success": round(best["success"], 4), "ci95": best["ci95"],
                     "successes": {name: sum(h) for name, h in hits.items()}})
    return rows


def frozen_run(args: Args, arena: list[str], init: str | None, seed: int, difficulties, run_dir: Path) -> list[dict]:
    """The control arm: the start checkpoint on each round's arena tasks, played as an evolve run plays them (so round 0
    equals the trained arms' round 0). Rounds differ only in their fresh tasks, so this is how much success moves with
    the tasks alone."""
    from agentworld_gym.arena.evolve import EvolveConfig, play_arena_round
    from agentworld_gym.arena.learner import make_learner
    from agentworld_gym.arena.records import load_records, save_records
    from agentworld_gym.suites.core import wilson

    learner = make_learner(args.model, seed=seed, device=args.device, exclude_themes=arena, max_new_tokens=args.max_new_tokens)
    rows = []
    for r in range(args.rounds + 1):
        path = run_dir / f"round_{r}.jsonl"
        if not path.exists():  # resume: a round already played is read back
            save_records(play_arena_round(arena, r, args.eval_tasks, difficulties, EvolveConfig(out="").kinds, args.seed,
                                          learner.policy_for(init), policy=learner.name, max_turns=args.max_turns), path)
        records = load_records(path)
        wins = sum(bool(x["success"]) for x in records)
        rows.append({"round": r, "success": wins / len(records), "n": len(records), "successes": wins,
                     "ci95": [round(v, 4) for v in wilson(wins, len(records))],
                     "gain": None if r == 0 else round((wins - rows[-1]["successes"]) / len(records), 4), "weaknesses_moved": [],
                     **{k: v for k, v in capability(records).items() if k not in ("n", "success")},
                     "train_seconds": None, "train_skipped": "frozen: the control arm is never trained"})
    return rows


def summarize_evolution(runs: dict[str, list[dict]], arms: list[str], seeds: list[int], rounds: int) -> dict:
    """Per arm and round: success over seeds (mean, per seed, pooled interval), the mean gain and the pooled
    moves of the previous round's diagnosed weak cells; per round: targeted minus untargeted with its interval."""
    from agentworld_gym.suites.core import diff_interval, over_seeds

    per_arm: dict[str, list[dict]] = {}
    for arm in arms:
        rows = []
        for r in range(rounds + 1):
            got = [runs[f"{arm}_s{s}"][r] for s in seeds if len(runs.get(f"{arm}_s{s}", [])) > r]
            if not got:
                continue
            moved: dict[tuple[str, str], list[float]] = {}
            for g in got:
                for m in g["weaknesses_moved"]:
                    acc = moved.setdefault((m["dim"], m["key"]), [0, 0, 0, 0])
                    acc[0] += m["before_success"] * m["before_n"]
                    acc[1] += m["before_n"]
                    if m["after_n"]:
                        acc[2] += m["after_success"] * m["after_n"]
                        acc[3] += m["after_n"]
            rows.append({"round": r, **over_seeds([g["successes"] for g in got], [g["n"] for g in got]),
                         "gain_mean": None if r == 0 else round(float(np.mean([g["gain"] for g in got])), 4),
                         "weaknesses_moved": [{"dim": d, "key": k, "before": round(a[0] / a[1], 4), "before_n": a[1],
                                               "after": round(a[2] / a[3], 4) if a[3] else None, "after_n": a[3],
                                               "delta": round(a[2] / a[3] - a[0] / a[1], 4) if a[3] else None}
                                              for (d, k), a in moved.items()]})
        per_arm[arm] = rows
    def compare(a: str, b: str) -> list[dict]:  # a minus b, round by round, on the same arena tasks
        rows = []
        for x, y in zip(per_arm[a], per_arm[b], strict=False):
            d, lo, hi = diff_interval(x["successes"], x["n"], y["successes"], y["n"])
            rows.append({"round": x["round"], a: x["pooled"], b: y["pooled"], "difference": round(d, 4),
                         "ci95": [round(lo, 4), round(hi, 4)], "beyond_noise": lo > 0 or hi < 0})
        return rows

    ablation = compare("targeted", "untargeted") if {"targeted", "untargeted"} <= set(per_arm) else []
    versus_frozen = {arm: compare(arm, "frozen") for arm in per_arm if arm != "frozen" and "frozen" in per_arm}
    return {"rounds": per_arm, "ablation": ablation, "versus_frozen": versus_frozen}


def _causes(failures: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(failures.items(), key=lambda kv: -kv[1])[:3])


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100 * x:.1f}%"


def _interval(ci) -> str:
    return "" if not ci else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _per_seed(row: dict) -> str:
    return ", ".join(f"{100 * v:.1f}" for v in row["per_seed"])


def write_tables(out: Path, results: dict, evo: dict | None) -> None:
    a = results["args"]
    lines = ["# Arena reproduction (small scale)", "",
             f"Model `{a['model']}` on `{a['device']}`; arena: {', '.join(results['arena'])} "
             f"({a['eval_tasks']} fresh tasks each, difficulty {a['difficulties']}, max {a['max_turns']} turns; the same tasks for every seed).",
             "Success is the mean over training seeds, then each seed's value, then the 95% Wilson interval of all episodes pooled."]
    if results["configs"]:  # none when the evolve rounds start from given checkpoints (--evolve-from)
        lines += [f"SFT budget per configuration: {a['examples']} oracle trajectories x {a['epochs']} epochs, lr {a['lr']}, batch {a['batch_size']}.",
                  "", "## Environment-diversity scaling", "",
                  "| training themes | seeds | arena success (mean) | per seed (%) | pooled 95% interval | readable call | working tool call | "
                  "right first tool | top failure causes | train s | paper (4-domain avg) |",
                  "|---:|---:|---:|---|---|---:|---:|---:|---|---:|---|"]
        for n, row in sorted(results["configs"].items(), key=lambda kv: int(kv[0])):
            paper = "18.4% (0 envs)" if n == "0" else ""
            lines.append(f"| {n} | {row['seeds']} | {_pct(row['mean'])} | {_per_seed(row)} | {_interval(row['ci95_pooled'])} (n={row['n']}) | "
                         f"{100 * row['readable_call_rate']:.0f}% | {100 * row['working_call_rate']:.0f}% | {100 * row['right_first_tool_rate']:.0f}% | "
                         f"{_causes(row['failures'])} | {row['train_seconds']:.0f} | {paper} |")
        lines.append("| 1,978 (paper) | | | | | | | | | | 38.5% |")
    if evo and "ablation" in evo:
        from agentworld_gym.arena.report import evolution_markdown

        lines += ["", "## Evolution rounds: targeted vs untargeted", "", *evolution_markdown(evo),
                  "", "Paper (MCP-Mark Postgres): +6.8 then +1.8 points over two rounds."]
    for extra in ("NOTES.md", "COMMANDS.md"):  # hand-written reading of the numbers, and the exact commands run
        if (out / extra).exists():
            lines += ["", (out / extra).read_text().strip()]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def plot(out: Path, results: dict, evo: dict | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(results["configs"].items(), key=lambda kv: int(kv[0]))
    evo = evo if evo and "ablation" in evo else None
    panels = ["scaling"] * bool(rows) + ["evolve"] * bool(evo)  # no scaling panel when evolve started from given checkpoints
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.6), squeeze=False)
    ax_of = dict(zip(panels, axes[0], strict=True))
    xs = [int(n) for n, _ in rows]
    xpos = [max(x, 0.5) for x in xs]  # 0 themes drawn at 0.5 on the log axis

    def errorbars(ax, x, rs, label, style):
        mean = [100 * r["mean"] for r in rs]
        lo = [m - 100 * r["ci95_pooled"][0] for m, r in zip(mean, rs, strict=True)]
        hi = [100 * r["ci95_pooled"][1] - m for m, r in zip(mean, rs, strict=True)]
        ax.errorbar(x, mean, yerr=[lo, hi], fmt=style, capsize=3, label=label)

    if rows:
        ax = ax_of["scaling"]
        errorbars(ax, xpos, [r for _, r in rows], "arena success (mean over seeds, pooled 95%)", "o-")
        for key, label, style in (("readable_call_rate", "readable call", "d-."), ("working_call_rate", "working tool call", "s--"),
                                  ("right_first_tool_rate", "right first tool", "^:")):
            ax.plot(xpos, [100 * r[key] for _, r in rows], style, label=label, alpha=0.6)
        ax.plot([0.5, 1978], [PAPER["scaling"]["0 envs"], PAPER["scaling"]["1,978 envs"]], "kx--", alpha=0.5, label="paper (4-domain avg)")
        ax.set_xscale("log")
        ax.set_xticks(xpos + [1978])
        ax.set_xticklabels([str(x) for x in xs] + ["1978"])
        ax.set_xlabel("training themes (same SFT budget)")
        ax.set_ylabel("% of arena episodes")
        ax.set_title("Environment diversity")
        ax.legend(fontsize=7)
    if evo:
        ax = ax_of["evolve"]
        for (arm, rs), style in zip(evo["rounds"].items(), ("o-", "s--", "^:"), strict=False):
            errorbars(ax, [r["round"] for r in rs], rs, arm if arm == "frozen" else f"{arm} ({evo['method']})", style)
        ax.set_xticks(range(max(len(rs) for rs in evo["rounds"].values())))
        ax.set_xlabel("evolution round")
        ax.set_ylabel("% of arena episodes")
        ax.set_title("Self-evolving arena: targeted vs untargeted")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "arena_scaling.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
