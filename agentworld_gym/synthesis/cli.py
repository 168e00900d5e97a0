"""`agentworld synth THEME --difficulty D -n N [--seed S] [--kind graph|programmatic|mixed] -o FILE.jsonl`."""

from __future__ import annotations

import sys
import time

import numpy as np


def synth_tasks(theme_id: str, difficulty: int, n: int, seed: int = 0, kind: str = "graph", db_seed: int = 0,
                fallback: bool = False, progress: bool = True, requests: str | None = None):
    """Yield `n` distinct verified tasks, deterministic in the arguments (task i uses the i-th seed
    drawn from `seed`); stops with a TaskError if the theme cannot make them. `requests`: "person" / "classic"
    wording, None: the process's (`persona.requests_as`)."""
    from tqdm import tqdm

    from ..envs import get_theme
    from ..errors import TaskError
    from . import synthesize_task, task_key
    from .persona import requests_as

    theme = get_theme(theme_id)
    seeds = np.random.default_rng(seed).integers(2**31, size=max(4 * n, n + 50))
    seen: set[str] = set()
    bar = tqdm(total=n, desc=f"synth {theme_id} d{difficulty} {kind}", unit="task", disable=not progress or None, file=sys.stderr)
    try:
        for s in seeds:
            if len(seen) >= n:
                return
            with requests_as(requests):
                task = synthesize_task(theme, difficulty, int(s), kind, db_seed, fallback=fallback)
            if task_key(task) in seen:  # two seeds may reach the same task (per theme); keep the file free of duplicates
                continue
            seen.add(task_key(task))
            bar.update(1)
            yield task
        raise TaskError(f"Expected {n} distinct tasks for {theme_id!r} at difficulty {difficulty}, got only {len(seen)}; "
                        "the theme's world is too small for that many. Ask for fewer or another difficulty.")
    finally:
        bar.close()


def cmd_synth(args) -> int:
    from ..checks import atomic_output
    from ..envs import get_theme

    get_theme(args.theme)  # an unknown theme fails before the output is touched
    start, count = time.perf_counter(), 0
    try:
        # written beside the output and moved onto it at the end: a failure leaves an existing file as it was;
        # Ctrl-C still moves the tasks written so far into place (nothing finished is lost)
        with atomic_output(args.out, keep_partial_on_interrupt=True) as f:
            for task in synth_tasks(args.theme, args.difficulty, args.n, args.seed, args.kind, args.db_seed, args.fallback,
                                    requests=args.requests):
                f.write(task.to_json() + "\n")
                f.flush()
                count += 1
    except KeyboardInterrupt:
        print(f"interrupted: {count} tasks written to {args.out}", file=sys.stderr)
        return 130
    elapsed = time.perf_counter() - start
    print(f"{count} tasks written to {args.out} ({count / max(elapsed, 1e-9):.0f} verified tasks/s)")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("synth", help="synthesize verified tasks for a theme into a JSONL file")
    p.add_argument("theme", help="theme id, e.g. finance")
    p.add_argument("--difficulty", "-d", type=int, default=1, choices=range(1, 6), metavar="{1-5}", help="difficulty level")
    p.add_argument("-n", type=int, default=100, help="number of tasks")
    p.add_argument("--seed", type=int, default=0, help="seed the task seeds are drawn from")
    p.add_argument("--kind", choices=("graph", "programmatic", "mixed", "rules"), default="graph",
                   help="tool-graph walks, programs with loops and branches, both, or tasks that exercise business rules (refusals, rule-respecting paths)")
    p.add_argument("--db-seed", type=int, default=0, help="which world of the theme")
    p.add_argument("--fallback", action="store_true", help="step down a level when the theme cannot make the requested one")
    p.add_argument("--requests", choices=("person", "classic"), default=None,
                   help="wording: a person's requests (tasks v3) or classic ones (default: AGENTWORLD_REQUESTS, else classic)")
    p.add_argument("-o", "--out", required=True, help="output FILE.jsonl")
    p.set_defaults(func=cmd_synth)
