"""An Agent-World release folder end to end: environments opened, tasks loaded, gold replays, step latency, sandbox cost.

For every environment of the release: open it (sandboxed worker, tools loaded), load its questions/
tasks (gold chains replayed in the sandbox), replay every loaded task's gold in a fresh episode (the
score must be 1.0) beside a do-nothing agent (the null baseline, must be 0), time every gold tool call,
and time episode starts with the sandbox and without it (`unsafe`, the baseline measured in the same run).
Per-environment results go to a JSONL journal as they finish, so an interrupted run resumes.

    python tests/release_fixture.py /tmp/release --hostile   # the project's fixture in the real layout
    python benchmarks/bench_release.py /tmp/release --out benchmarks/results/release_fixture
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Args:
    path: str = ""
    """release folder (holding environment_mix/, or the environments themselves)"""
    starts: int = 10
    """timed episode starts per environment, sandboxed and unsafe each"""
    timeout: float = 5.0
    """per-call time limit in the worker"""
    limit: int | None = None
    """only the first N environments"""
    out: str = "benchmarks/results/release"
    """writes OUT.json (summary), OUT.md and OUT.jsonl (per environment, the resume journal)"""


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def wilson95(k: int, n: int) -> list[float]:
    """95% Wilson interval of k/n, rounded for the results file (NaN when nothing was loaded)."""
    from agentworld_gym.bench import wilson

    return [round(x, 3) for x in wilson(k, n)] if n else [float("nan"), float("nan")]


def time_starts(backend, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        backend.reset(None)
        out.append(time.perf_counter() - t0)
    return out


def bench_env(args: Args, env_id: str) -> dict:
    from agentworld_gym.errors import AgentWorldError
    from agentworld_gym.mcp.release import ReleaseBackend
    from agentworld_gym.mcp.release_tasks import load_release_tasks, questions_file
    from agentworld_gym.tasks import verify

    row: dict = {"env": env_id}
    try:
        backend = ReleaseBackend(args.path, env_id, args.timeout)
        backend.reset(None)
    except AgentWorldError as exc:
        return {**row, "opened": False, "error": str(exc)[:300]}
    try:
        row["opened"] = True
        questions = questions_file(Path(args.path), env_id)
        tasks, report = load_release_tasks(backend, questions) if questions else ([], None)
        row.update(questions=questions is not None, loaded=len(tasks), dropped=report.dropped if report else {},
                   state_excluded=report.state_excluded if report else [])
        gold, nothing, steps = [], [], []
        for task in tasks:
            backend.reset(task)
            for call in task.gold_calls:
                t0 = time.perf_counter()
                backend.call(call)
                steps.append(time.perf_counter() - t0)
            final = backend.state_hash() if task.state_hash is not None else None
            gold.append(verify(task, task.answer if task.answer_type != "none" else "done", final).passed)
            backend.reset(task)
            nothing.append(verify(task, "done", backend.state_hash() if task.state_hash is not None else None).passed)
        row.update(gold_passed=sum(gold), do_nothing_passed=sum(nothing), step_s=steps, start_s=time_starts(backend, args.starts))
    finally:
        backend.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unsafe baseline warns by design
        unsafe = ReleaseBackend(args.path, env_id, args.timeout, unsafe=True)
    try:
        row["unsafe_start_s"] = time_starts(unsafe, args.starts)
    finally:
        unsafe.close()
    return row


def summarize(rows: list[dict]) -> dict:
    opened = [r for r in rows if r["opened"]]
    steps = [s for r in opened for s in r["step_s"]]
    starts = [s for r in opened for s in r["start_s"]]
    unsafe = [s for r in opened for s in r["unsafe_start_s"]]
    loaded = sum(r["loaded"] for r in opened)
    drop_reasons: dict[str, int] = {}
    for r in opened:
        for why in r["dropped"].values():
            key = why.split(":")[0][:60]
            drop_reasons[key] = drop_reasons.get(key, 0) + 1
    return {
        "environments": len(rows), "opened": len(opened), "not_opened": {r["env"]: r["error"] for r in rows if not r["opened"]},
        "with_questions": sum(r["questions"] for r in opened), "tasks_loaded": loaded,
        "tasks_dropped": sum(len(r["dropped"]) for r in opened), "drop_reasons": drop_reasons,
        "gold_replay_score": sum(r["gold_passed"] for r in opened) / loaded if loaded else None,
        "gold_replay_ci95": wilson95(sum(r["gold_passed"] for r in opened), loaded),
        "do_nothing_score": sum(r["do_nothing_passed"] for r in opened) / loaded if loaded else None,
        "do_nothing_ci95": wilson95(sum(r["do_nothing_passed"] for r in opened), loaded),
        "gold_calls_timed": len(steps), "step_ms_median": 1000 * statistics.median(steps) if steps else None,
        "step_ms_p10_p90": [1000 * percentile(steps, 0.1), 1000 * percentile(steps, 0.9)] if steps else None,
        "starts_timed": len(starts), "sandboxed_start_ms_median": 1000 * statistics.median(starts),
        "sandboxed_start_ms_p10_p90": [1000 * percentile(starts, 0.1), 1000 * percentile(starts, 0.9)],
        "unsafe_start_ms_median": 1000 * statistics.median(unsafe),
        "sandbox_start_cost_ratio": statistics.median(starts) / statistics.median(unsafe),
    }


def main(args: Args) -> dict:
    from tqdm import tqdm

    from agentworld_gym.mcp.release import find_environments
    from agentworld_gym.sandbox import check_isolation

    isolation = check_isolation()
    journal = Path(args.out + ".jsonl")
    journal.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if journal.exists():
        done = {r["env"]: r for r in map(json.loads, journal.read_text().splitlines()) if r}
    env_ids = list(find_environments(args.path))[: args.limit]
    with journal.open("a") as f:
        for env_id in tqdm(env_ids, desc="release envs"):
            if env_id in done:
                continue
            done[env_id] = bench_env(args, env_id)
            f.write(json.dumps(done[env_id]) + "\n")
            f.flush()
    summary = {"args": asdict(args), "isolation": isolation, "load_average": os.getloadavg(), "cpus": os.cpu_count(),
               **summarize([done[e] for e in env_ids])}
    Path(args.out + ".json").write_text(json.dumps(summary, indent=1))
    lines = [f"# Release benchmark: {args.path}", "",
             f"sandbox: {isolation['mechanism']} (uid {isolation['uid']}, no network, read-only root, nproc {isolation['nproc']}); "
             f"{summary['cpus']} CPUs, load average {summary['load_average'][0]:.1f} (a shared machine: latencies are upper bounds)", "",
             "| measure | result |", "|---|---|",
             f"| environments opened | {summary['opened']} / {summary['environments']} |",
             f"| release tasks loaded / dropped | {summary['tasks_loaded']} / {summary['tasks_dropped']} ({summary['drop_reasons']}) |",
             f"| gold replay score (n={summary['tasks_loaded']}, 95% CI) | {summary['gold_replay_score']} {summary['gold_replay_ci95']} |",
             f"| do-nothing score, null baseline (n={summary['tasks_loaded']}, 95% CI) | {summary['do_nothing_score']} "
             f"{summary['do_nothing_ci95']} |",
             f"| gold tool call latency, median [p10, p90] (n={summary['gold_calls_timed']}) | "
             f"{summary['step_ms_median']:.2f} ms [{summary['step_ms_p10_p90'][0]:.2f}, {summary['step_ms_p10_p90'][1]:.2f}] |",
             f"| episode start sandboxed, median [p10, p90] (n={summary['starts_timed']}) | {summary['sandboxed_start_ms_median']:.1f} ms "
             f"[{summary['sandboxed_start_ms_p10_p90'][0]:.1f}, {summary['sandboxed_start_ms_p10_p90'][1]:.1f}] |",
             f"| episode start unsafe (baseline, same run) | {summary['unsafe_start_ms_median']:.1f} ms |",
             f"| sandbox start cost ratio | {summary['sandbox_start_cost_ratio']:.2f}x |"]
    Path(args.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path")
    for name, default in asdict(Args()).items():
        if name != "path":
            parser.add_argument("--" + name.replace("_", "-"), type=type(default) if default is not None else int, default=default)
    main(Args(**vars(parser.parse_args())))
