"""Small-scale reproduction of the paper's two arena analyses.

1. Environment-diversity scaling: the same SFT budget (a fixed number of oracle trajectories and
   epochs) spread over N training themes (N = 0, 1, 4, 16, ...; N = 0 is the untrained model);
   success is measured on held-out arena themes never trained on.
2. Evolution rounds: starting from the largest-N policy, `agentworld evolve` rounds
   (evaluate -> diagnose -> target -> train) on the arena; each round's gain.

The paper: 4-domain average 18.4% -> 38.5% going from 0 to 1,978 training environments, and
evolution gains that shrink (e.g. +6.8 then +1.8 points on MCP-Mark Postgres).

    python benchmarks/arena_scaling.py                                  # CPU: tiny model from scratch
    python benchmarks/arena_scaling.py --model smollm2-135m --device cuda --examples 2048 --epochs 2 \
        --theme-counts 0,1,4,16,64,256 --eval-tasks 12 --evolve-train-tasks 512

Everything a run writes goes under --out (default benchmarks/results/arena_scaling/); model
checkpoints go under --work (default runs/arena_scaling/, not committed). A finished configuration
is skipped when the script runs again (resume).
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
    evolve_epochs: int = 2
    seed: int = 0
    out: str = "benchmarks/results/arena_scaling"
    work: str = "runs/arena_scaling"
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
    """(arena themes, training themes in a fixed seeded order)."""
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


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    from agentworld_gym.arena import diagnose as dg
    from agentworld_gym.arena.evolve import Evolution, EvolveConfig, arena_tasks
    from agentworld_gym.arena.records import load_records, play, save_records
    from agentworld_gym.arena.trainer_adapter import TrainerLearner

    torch.set_num_threads(args.threads)
    out, work = Path(args.out), Path(args.work)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    difficulties = tuple(int(x) for x in args.difficulties.split(","))
    arena, train = split(args)
    counts = [int(x) for x in args.theme_counts.split(",")]
    if max(counts) > len(train):
        print(f"only {len(train)} training themes registered; dropping counts above it", file=sys.stderr)
        counts = [c for c in counts if c <= len(train)]
    eval_set = arena_tasks(arena, 0, args.eval_tasks, difficulties, ("graph",), args.seed)
    print(f"arena ({len(arena)} themes, {len(eval_set)} tasks): {', '.join(arena)}")
    print(f"training pool: {len(train)} themes; counts {counts}; budget {args.examples} trajectories x {args.epochs} epochs")
    train_opts = dict(batch_size=args.batch_size, lr=args.lr, max_seq_len=args.max_seq_len, save_every=10_000)

    # ---------------------------------------------------------------- 1. diversity scaling
    # one file per configuration (so configurations can run as separate processes), merged below
    (out / "configs").mkdir(exist_ok=True)
    for n in counts:
        cfg_path = out / "configs" / f"n{n}.json"
        if cfg_path.exists() or args.skip_scaling:
            continue
        t0 = time.perf_counter()
        learner = TrainerLearner(args.model, seed=args.seed, device=args.device, epochs=args.epochs, exclude_themes=arena,
                                 max_new_tokens=args.max_new_tokens, **train_opts)
        themes = train[:n]
        ckpt, stats = None, {}
        if n:
            res = learner.train(None, sft_tasks(themes, args.examples, difficulties, args.seed), work / f"sft_n{n}", seed=args.seed)
            ckpt, stats = res.checkpoint, res.stats
        t_train = time.perf_counter() - t0
        records = play(eval_set, learner.policy_for(ckpt), policy=f"{args.model}@N={n}", max_turns=args.max_turns, seed=args.seed)
        save_records(records, work / f"eval_n{n}.jsonl")
        (out / f"diagnosis_n{n}.md").write_text(dg.to_markdown(dg.diagnose(records), f"Arena diagnosis, {n} training themes"))
        row = {**capability(records), "themes": themes, "checkpoint": ckpt, "train_stats": stats,
               "train_seconds": round(t_train, 1), "eval_seconds": round(time.perf_counter() - t0 - t_train, 1)}
        cfg_path.write_text(json.dumps(row, indent=1))
        print(f"N={n}: success {100 * row['success']:.1f}%  working calls {100 * row['working_call_rate']:.0f}%  "
              f"right first tool {100 * row['right_first_tool_rate']:.0f}%  (train {t_train:.0f}s)", flush=True)

    results = {"args": dataclasses.asdict(args), "arena": arena, "paper": PAPER["scaling"],
               "configs": {p.stem[1:]: json.loads(p.read_text()) for p in (out / "configs").glob("n*.json")}}
    (out / "scaling.json").write_text(json.dumps(results, indent=1))

    # ---------------------------------------------------------------- 2. evolution rounds
    evo = json.loads((out / "evolution.json").read_text()) if (out / "evolution.json").exists() else None
    if not args.skip_evolution and str(max(counts)) in results["configs"]:
        start_n = max(counts)
        init = results["configs"][str(start_n)]["checkpoint"]
        cfg = EvolveConfig(out=str(work / "evolve"), rounds=args.rounds, policy=args.model, init=init, arena_themes=tuple(arena),
                           eval_tasks_per_theme=args.eval_tasks, train_tasks=args.evolve_train_tasks, difficulties=difficulties,
                           max_turns=args.max_turns, seed=args.seed, device=args.device,
                           train_options={**train_opts, "epochs": args.evolve_epochs, "max_new_tokens": args.max_new_tokens})
        t0 = time.perf_counter()
        history = Evolution(cfg).run()
        evo = {"start": f"N={start_n} checkpoint", "seconds": round(time.perf_counter() - t0, 1), "paper": PAPER["evolution"],
               "rounds": [{"round": m["round"], "success": m["success_rate"], "gain": m.get("gain"),
                           **{k: v for k, v in capability(load_records(work / "evolve" / f"round_{m['round']}" / "eval.jsonl")).items()
                              if k not in ("n", "success")},
                           "train_seconds": (m.get("train") or {}).get("train_seconds")} for m in history]}
        (out / "evolution.json").write_text(json.dumps(evo, indent=1))
        run_out = out / "evolve_run"
        run_out.mkdir(exist_ok=True)
        for r in range(args.rounds + 1):
            src = work / "evolve" / f"round_{r}"
            for name in ("diagnosis.md", "metrics.json", "targets.json"):
                if (src / name).exists():
                    shutil.copy(src / name, run_out / f"round_{r}_{name}")
        from agentworld_gym.arena.report import build_report

        build_report(work / "evolve", run_out / "report.html")

    write_tables(out, results, evo)
    plot(out, results, evo)
    return 0


def _causes(failures: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(failures.items(), key=lambda kv: -kv[1])[:3])


def write_tables(out: Path, results: dict, evo: dict | None) -> None:
    a = results["args"]
    lines = ["# Arena reproduction (small scale)", "",
             f"Model `{a['model']}` on `{a['device']}`; arena: {', '.join(results['arena'])} "
             f"({a['eval_tasks']} fresh tasks each, difficulty {a['difficulties']}, max {a['max_turns']} turns).",
             f"SFT budget per configuration: {a['examples']} oracle trajectories x {a['epochs']} epochs, lr {a['lr']}, batch {a['batch_size']}.",
             "", "## Environment-diversity scaling", "",
             "| training themes | arena success | readable call | working tool call | right first tool | top failure causes | train s | paper (4-domain avg) |",
             "|---:|---:|---:|---:|---:|---|---:|---|"]
    for n, row in sorted(results["configs"].items(), key=lambda kv: int(kv[0])):
        paper = "18.4% (0 envs)" if n == "0" else ""
        lines.append(f"| {n} | {100 * row['success']:.1f}% | {100 * row['readable_call_rate']:.0f}% | {100 * row['working_call_rate']:.0f}% | "
                     f"{100 * row['right_first_tool_rate']:.0f}% | {_causes(row['failures'])} | {row['train_seconds']:.0f} | {paper} |")
    lines.append("| 1,978 (paper) | | | | | | | 38.5% |")
    if evo:
        lines += ["", "## Evolution rounds", "",
                  "| round | arena success | gain | readable call | working tool call | right first tool | top failure causes | paper gain (MCP-Mark Postgres) |",
                  "|---:|---:|---:|---:|---:|---:|---|---|"]
        paper = {1: "+6.8", 2: "+1.8"}
        for r in evo["rounds"]:
            gain = "" if r["gain"] is None else f"{100 * r['gain']:+.1f} pts"
            lines.append(f"| {r['round']} | {100 * r['success']:.1f}% | {gain} | {100 * r['readable_call_rate']:.0f}% | "
                         f"{100 * r['working_call_rate']:.0f}% | {100 * r['right_first_tool_rate']:.0f}% | {_causes(r['failures'])} | "
                         f"{paper.get(r['round'], '')} |")
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
    ncols = 2 if evo else 1
    fig, axes = plt.subplots(1, ncols, figsize=(5.2 * ncols, 3.6), squeeze=False)
    ax = axes[0][0]
    xs = [int(n) for n, _ in rows]
    xpos = [max(x, 0.5) for x in xs]  # 0 themes drawn at 0.5 on the log axis
    for key, label, style in (("success", "arena success", "o-"), ("readable_call_rate", "readable call", "d-."),
                              ("working_call_rate", "working tool call", "s--"),
                              ("right_first_tool_rate", "right first tool", "^:")):
        ax.plot(xpos, [100 * r[key] for _, r in rows], style, label=label)
    ax.plot([0.5, 1978], [PAPER["scaling"]["0 envs"], PAPER["scaling"]["1,978 envs"]], "kx--", alpha=0.5, label="paper (4-domain avg)")
    ax.set_xscale("log")
    ax.set_xticks(xpos + [1978])
    ax.set_xticklabels([str(x) for x in xs] + ["1978"])
    ax.set_xlabel("training themes (same SFT budget)")
    ax.set_ylabel("% of arena episodes")
    ax.set_title("Environment diversity")
    ax.legend(fontsize=7)
    if evo:
        ax = axes[0][1]
        rs = evo["rounds"]
        ax.plot([r["round"] for r in rs], [100 * r["success"] for r in rs], "o-", label="arena success (this run)")
        ax.plot([r["round"] for r in rs], [100 * r["readable_call_rate"] for r in rs], "d-.", label="readable call")
        ax.plot([r["round"] for r in rs], [100 * r["working_call_rate"] for r in rs], "s--", label="working tool call")
        base = 100 * rs[0]["success"]
        ax.plot([0, 1, 2], [base, base + 6.8, base + 8.6], "kx--", alpha=0.5, label="paper gains (+6.8, +1.8)")
        ax.set_xticks([r["round"] for r in rs])
        ax.set_xlabel("evolution round")
        ax.set_title("Self-evolving arena")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "arena_scaling.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
