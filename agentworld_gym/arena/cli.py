"""`agentworld evolve`, `agentworld diagnose` and `agentworld report`."""

from __future__ import annotations

import contextlib
import json
import logging
from pathlib import Path

from ..checks import write_text_atomic
from ..train.ray_rollouts import add_ray_options


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip())


def cmd_diagnose(args) -> int:
    from . import diagnose as dg
    from .records import load_records

    report = dg.diagnose(load_records(args.results), min_count=args.min_count, top=args.top)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / "diagnosis.json", dg.as_json(report))
        write_text_atomic(out / "diagnosis.md", dg.to_markdown(report, f"Diagnosis of {args.results}"))
    if args.json:
        print(dg.as_json({k: v for k, v in report.items() if k != "episodes"}))
    else:
        print(dg.to_markdown(report, f"Diagnosis of {args.results}"))
    return 0


@contextlib.contextmanager
def _env_workers(args):
    """`--ray`'s env workers for the command's duration (None without --ray)."""
    from ..train.ray_rollouts import env_workers

    workers = env_workers(args)
    try:
        yield workers
    finally:
        if workers is not None:
            workers.close()


def cmd_record(args) -> int:
    """Play fresh tasks with any policy and write episode records (the input of `diagnose`)."""
    from ..envs.registry import get_theme
    from ..synthesis import synthesize_task
    from .learner import make_learner
    from .records import play, save_records

    levels = _ints(args.difficulty)
    tasks = [synthesize_task(get_theme(t), levels[i % len(levels)], args.seed + i, args.kind)
             for t in args.themes.split(",") for i in range(args.episodes)]
    learner = make_learner(args.policy, seed=args.seed, device=args.device)
    with _env_workers(args) as workers:
        records = play(tasks, learner.policy_for(args.checkpoint), policy=args.policy, max_turns=args.max_turns, seed=args.seed,
                       progress=True, workers=workers)
    n = save_records(records, args.out)
    print(f"wrote {n} episode records to {args.out} (success {sum(r['success'] for r in records) / max(n, 1):.1%})")
    return 0


def cmd_evolve(args) -> int:
    from . import diagnose as dg
    from .evolve import Evolution, EvolveConfig

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")  # the CLI's own output, not at import
    config = EvolveConfig(
        out=args.out, rounds=args.rounds, policy=args.policy, init=args.init, arena_per_category=args.arena_per_category,
        arena_themes=tuple(t for t in (args.arena_themes or "").split(",") if t), max_categories=args.max_categories,
        eval_tasks_per_theme=args.eval_tasks, train_tasks=args.train_tasks, replay_share=args.replay_share,
        difficulties=_ints(args.difficulties), kinds=tuple(args.kinds.split(",")), max_turns=args.max_turns, eta=args.eta,
        complexify=args.complexify, seed=args.seed, eval_seed=args.eval_seed, method=args.method, task_source=args.task_source,
        device=args.device,
        train_options=json.loads(args.train_options) if args.train_options else {},
    )
    with _env_workers(args) as workers:
        history = Evolution(config, workers=workers).run()
    for m in history:
        gain = f"  gain {100 * m['gain']:+.1f} pts" if "gain" in m else ""
        print(f"round {m['round']}: success {m['success_rate']:.1%} on {m['n']} arena episodes{gain}")
    for r in range(len(history)):
        report = json.loads((Path(args.out) / f"round_{r}" / "diagnosis.json").read_text())
        print(f"  round {r} diagnosis: {dg.summary_line(report)}")
    if args.report:
        from .report import build_report

        print(f"report: {build_report(args.out)}")
    return 0


def cmd_report(args) -> int:
    from .report import build_report, screenshot

    path = build_report(args.dir, args.out)
    print(f"report: {path}")
    if args.screenshot:
        print(f"screenshot: {screenshot(path, args.screenshot)}")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("diagnose", help="classify the failures in episode records and rank weak cells")
    p.add_argument("results", help="an episode-record JSONL file (or a directory of them, e.g. an evolve run)")
    p.add_argument("--out", help="also write diagnosis.json and diagnosis.md into this directory")
    p.add_argument("--min-count", type=int, default=2, help="cells with fewer episodes are not ranked as weak")
    p.add_argument("--top", type=int, default=5, help="weak cells to rank and report")
    p.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    p.set_defaults(func=cmd_diagnose)

    p = sub.add_parser("record", help="play fresh tasks with a policy and write episode records for `diagnose`")
    p.add_argument("--themes", default="finance", help="comma-separated theme ids")
    p.add_argument("--policy", default="random", help="oracle | random | openai:... | a trainer model spec")
    p.add_argument("--checkpoint", help="trained checkpoint for a trainer model")
    p.add_argument("--episodes", type=int, default=20, help="per theme")
    p.add_argument("--difficulty", default="1,2,3", help="comma-separated difficulty levels, used in turn")
    p.add_argument("--kind", default="graph", choices=("graph", "programmatic", "mixed"), help="how tasks are synthesized")
    p.add_argument("--max-turns", type=int, default=8, help="turns before an episode is cut off")
    p.add_argument("--seed", type=int, default=0, help="seed of the first task (task i uses seed + i)")
    p.add_argument("--device", default="cpu", help="torch device for a trainer model (cpu, cuda)")
    p.add_argument("--out", required=True, help="episode-record JSONL file to write")
    add_ray_options(p, "the episodes")
    p.set_defaults(func=cmd_record)

    p = sub.add_parser("evolve", help="self-evolving arena: evaluate -> diagnose -> target -> train, R rounds")
    p.add_argument("--rounds", type=int, default=2, help="evaluate-diagnose-target-train rounds")
    p.add_argument("--policy", "--model", dest="policy", default="tiny", help="trainer model (tiny, smollm2-135m, hf:<id>) or oracle/random")
    p.add_argument("--init", help="checkpoint to start from")
    p.add_argument("--out", required=True, help="run directory (round_<r>/ folders, state.json; an interrupted run resumes)")
    p.add_argument("--arena-per-category", type=int, default=5, help="K held-out arena themes per L1 category")
    p.add_argument("--arena-themes", help="explicit comma-separated arena themes (overrides K)")
    p.add_argument("--max-categories", type=int, help="hold out arena themes in only the first N categories")
    p.add_argument("--eval-tasks", type=int, default=6, help="fresh arena tasks per theme per round")
    p.add_argument("--train-tasks", type=int, default=64, help="training tasks per round")
    p.add_argument("--replay-share", type=float, default=0.25, help="share of each round's training tasks drawn uniformly (against forgetting)")
    p.add_argument("--difficulties", default="1,2", help="comma-separated difficulty levels of arena and training tasks")
    p.add_argument("--kinds", default="graph", help="comma-separated task kinds (graph, programmatic)")
    p.add_argument("--max-turns", type=int, default=6, help="turns before an episode is cut off")
    p.add_argument("--eta", type=float, default=3.0, help="targeting step size")
    p.add_argument("--complexify", action="store_true", help="half the targeted tasks one level harder on a fresh database")
    p.add_argument("--seed", type=int, default=0, help="seed of arena selection, tasks and training")
    p.add_argument("--eval-seed", type=int, help="seed of the arena split and arena tasks only (default: --seed); fix it to "
                                                 "compare training seeds on the same arena")
    p.add_argument("--method", default="sft", choices=("sft", "grpo"),
                   help="how each round trains: SFT on oracle trajectories, or GRPO on the tasks' rewards (the paper's loop)")
    p.add_argument("--task-source", default="targeted", choices=("targeted", "untargeted"),
                   help="training tasks from the diagnosis, or (the ablation) as many drawn uniformly over the same arena cells")
    p.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    p.add_argument("--train-options", help='JSON of trainer options, e.g. \'{"epochs": 2, "lr": 3e-4}\'')
    p.add_argument("--report", action="store_true", help="write report.html at the end")
    add_ray_options(p, "each round's arena evaluation")
    p.set_defaults(func=cmd_evolve)

    p = sub.add_parser("report", help="HTML report of an evolve run or of episode records")
    p.add_argument("dir", help="an evolve --out directory, or an episode-record JSONL")
    p.add_argument("--out", help="where to write the HTML (default: DIR/report.html)")
    p.add_argument("--screenshot", help="also render a PNG of the report with headless chromium (skipped when it is missing)")
    p.set_defaults(func=cmd_report)
