"""Episode records: one JSON line per played episode, the input of diagnosis and of the report.

A record holds everything needed to attribute a failure without re-running anything: the task
(with its gold solution and difficulty features), the OpenAI-format transcript (`info["messages"]`),
the verification report, and where it was played (theme, L1 category, policy, round).

    {"id": "...", "round": 0, "policy": "random", "theme": "finance", "category": "Finance & Markets",
     "task": {...Task.to_dict()...}, "messages": [...], "verification": {...},
     "reward": 0.0, "success": false, "truncated": false, "turns": 3}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import TaskError
from ..tasks import Task

RECORD_FIELDS = ("id", "theme", "task", "messages", "verification", "success")


def category_of(theme_id: str) -> str:
    """The theme's L1 category from the registry ('' when the theme is not registered)."""
    from ..envs.registry import get_entry
    from ..errors import UnknownThemeError

    try:
        return get_entry(theme_id).category
    except UnknownThemeError:
        return ""


def make_record(result: dict, task: Task, *, policy: str = "", round: int = 0, category: str | None = None) -> dict:
    """An episode record from `policies.run_episode`'s result and the task that was played."""
    info = result["info"]
    return {
        "id": f"r{round}-{task.id}",
        "round": round,
        "policy": policy,
        "theme": task.theme,
        "category": category_of(task.theme) if category is None else category,
        "task": task.to_dict(),
        "messages": info["messages"],
        "verification": info.get("verification", {}),
        "reward": float(result["reward"]),
        "success": bool(result["success"]),
        "truncated": bool(result["truncated"]),
        "turns": int(result["turns"]),
    }


def play(tasks: Sequence[Task], policy_for: Callable[[Any], Any], *, policy: str = "", round: int = 0,
         max_turns: int = 8, seed: int = 0, progress: bool = False, workers=None) -> list[dict]:
    """Play each task once with the policy `policy_for(env)` builds; one record per task.

    One env and one policy per theme are reused across that theme's tasks, in task order (the task goes in
    through reset options). With `workers` (`train.ray_rollouts.EnvWorkers`) each theme plays on a Ray env
    worker, the themes side by side; a model policy generates here and steps envs held by the workers.
    """
    if tasks and _batched(policy_for, tasks[0], max_turns):
        return _play_batched(tasks, policy_for, policy=policy, round=round, max_turns=max_turns, seed=seed, workers=workers)
    themes: dict[str, list[int]] = {}
    for i, task in enumerate(tasks):
        themes.setdefault(task.theme, []).append(i)
    jobs = [([tasks[i] for i in index], [seed + i for i in index], policy_for, max_turns) for index in themes.values()]
    if workers is not None:
        results = [g[0] for g in workers.map(_play_theme, [[job] for job in jobs])]
    else:
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(tasks), desc=f"round {round} {policy}", leave=False, disable=None)
        results = [_play_theme(job, bar) for job in jobs]
        if bar is not None:
            bar.close()
    by_index = {i: r for index, rs in zip(themes.values(), results, strict=True) for i, r in zip(index, rs, strict=True)}
    return [make_record(by_index[i], task, policy=policy, round=round) for i, task in enumerate(tasks)]


def _play_theme(job: tuple, bar=None) -> list[dict]:
    """One theme's episodes in order, in one env with one policy: (tasks, seeds, policy_for, max_turns)."""
    from ..env import AgentWorldEnv
    from ..policies import run_episode

    tasks, seeds, policy_for, max_turns = job
    env = AgentWorldEnv(tasks[0].theme, max_turns=max_turns, db_seed=tasks[0].db_seed)
    try:
        p = policy_for(env)
        out = []
        for task, s in zip(tasks, seeds, strict=True):
            out.append(run_episode(env, p, seed=s, options={"task": task}))
            if bar is not None:
                bar.update()
        return out
    finally:
        env.close()


def _batched(policy_for, task: Task, max_turns: int) -> bool:
    """A model policy (one with a batched `generate` and an `encoder`) plays many episodes at once."""
    from ..env import AgentWorldEnv

    env = AgentWorldEnv(task.theme, max_turns=max_turns)
    try:
        p = policy_for(env)
    finally:
        env.close()
    return hasattr(p, "generate") and hasattr(p, "encoder")


def _play_batched(tasks: Sequence[Task], policy_for, *, policy: str, round: int, max_turns: int, seed: int,
                  chunk: int = 64, workers=None) -> list[dict]:
    from ..env import AgentWorldEnv
    from ..policies.slots import run_episodes_batched

    records = []
    for start in range(0, len(tasks), chunk):
        part = list(tasks[start:start + chunk])
        specs = [(t.theme, {"max_turns": max_turns, "db_seed": t.db_seed}) for t in part]
        envs = workers.envs(specs) if workers is not None else [AgentWorldEnv(theme, **kw) for theme, kw in specs]
        try:
            model = policy_for(envs[0])
            results = run_episodes_batched(envs, model, seeds=[seed + start + i for i in range(len(part))],
                                           options=[{"task": t} for t in part])
        finally:
            for env in envs:
                env.close()
        records += [make_record(r, t, policy=policy, round=round) for r, t in zip(results, part, strict=True)]
    return records


def from_trajectory(line: dict) -> dict:
    """An episode record from a `RecordTrajectory` JSONL line (agentworld_gym.wrappers.recording).

    Such lines carry the task id but not the task, so the gold-solution checks (premature answer,
    wrong tool order) cannot apply; every other failure class can.
    """
    steps = line.get("steps") or [{}]
    theme = line.get("theme") or ""
    return {"id": line.get("task_id"), "round": 0, "policy": line.get("policy", ""), "theme": theme,
            "category": category_of(theme) if theme else "",
            "task": {"id": line.get("task_id"), "theme": theme, "difficulty": line.get("difficulty"), "solution": []},
            "messages": line.get("messages", []), "verification": line.get("verification") or {},
            "reward": line.get("reward", 0.0), "success": bool(line.get("success")),
            "truncated": bool(steps[-1].get("truncated")), "turns": line.get("turns", len(steps))}


def save_records(records: Iterable[dict], path: str | Path) -> int:
    n = 0
    from ..checks import atomic_output

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as f:  # an interrupted recording leaves no half file (nor a damaged older one)
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
            n += 1
    return n


def _holds_records(file: Path) -> bool:
    with open(file, encoding="utf-8") as f:
        first = next((line for line in f if line.strip()), "")
    try:
        rec = json.loads(first)
    except json.JSONDecodeError:
        return True  # let load_records report the bad line
    return isinstance(rec, dict) and ("task" in rec or "steps" in rec)


def load_records(path: str | Path) -> list[dict]:
    """Episode records from a JSONL file (or every *.jsonl file in a directory)."""
    path = Path(path)
    # in a directory (an evolve run) other JSONL files sit beside the records, e.g. task files: skip them
    files = [f for f in sorted(path.glob("**/*.jsonl")) if _holds_records(f)] if path.is_dir() else [path]
    if not files:
        raise TaskError(f"Expected episode-record JSONL files in {path}, got none.")
    out = []
    for file in files:
        with open(file, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise TaskError(f"Expected one JSON episode record per line in {file}, line {lineno} is not: {exc.msg}.") from exc
                rec = from_trajectory(rec) if "task" not in rec and "steps" in rec else rec
                missing = [k for k in RECORD_FIELDS if k not in rec]
                if missing:
                    raise TaskError(f"Expected episode-record fields {missing} in {file} line {lineno}, got only {sorted(rec)}. "
                                    "Write records with agentworld_gym.arena.records.make_record.")
                out.append(rec)
    return out
