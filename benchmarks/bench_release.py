"""An Agent-World release folder end to end: environments opened, questions loaded, gold replays, step latency, sandbox cost.

For every environment of the release: open it (sandboxed worker, tools loaded), load its questions (gold
chains replayed in the sandbox) and synthesize tasks beside them (`release_tasks`, as the import does),
replay every served task's gold in a fresh episode (the score must be 1.0) beside a do-nothing agent (the
null baseline, must be 0) — release questions and synthesized tasks counted apart — time every gold tool
call, and time episode starts with the sandbox and without it (`unsafe`, the baseline measured in the same
run). Per-environment results go to a JSONL journal as they finish, so an interrupted run resumes.

The run is HEALTHY only when release questions were found and loaded, and every served gold replay scores
1.0; otherwise it prints UNHEALTHY with the reasons and exits 1 (a folder where no question loads never
looks healthy, however many synthesized tasks it has).

    python tests/release_fixture.py /tmp/release --published   # the project's fixture in the published shape
    python benchmarks/bench_release.py /tmp/release --out benchmarks/results/release_fixture
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
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
    synthesized: int = 6
    """synthesized tasks asked for per environment, beside the release's questions (as the import does)"""
    limit: int | None = None
    """only the first N environments"""
    out: str = "benchmarks/results/release"
    """writes OUT.json (summary), OUT.md and OUT.jsonl (per environment, the resume journal)"""


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def wilson95(k: int, n: int) -> list[float]:
    """95% Wilson interval of k/n, rounded for the results file (NaN when nothing was loaded)."""
    from agentworld_gym.suites.core import wilson

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
    from agentworld_gym.mcp.release import ReleaseBackend, release_tasks
    from agentworld_gym.tasks import verify

    row: dict = {"env": env_id}
    try:
        backend = ReleaseBackend(args.path, env_id, args.timeout)
        backend.reset(None)
    except AgentWorldError as exc:
        return {**row, "opened": False, "error": str(exc)[:300]}
    try:
        row["opened"] = True
        tasks, report = release_tasks(backend, args.path, n_tasks=args.synthesized)
        row.update(questions=report["questions"], questions_file=report["questions_file"], loaded=report["loaded"],
                   replayed=report["replayed"], dropped=report["dropped"], not_replayed=report["not_replayed"],
                   criteria_graded=report["criteria_graded"], criteria_not_graded=report["criteria_not_graded"],
                   state_excluded=report["state_excluded"], synthesized=report["synthesized"])
        steps = []
        for source in ("release", "discovery"):
            gold, nothing = [], []
            for task in (t for t in tasks if t.features.get("source") == source):
                backend.reset(task)
                for call in task.gold_calls:
                    t0 = time.perf_counter()
                    backend.call(call)
                    steps.append(time.perf_counter() - t0)
                final = backend.state_hash() if task.state_hash is not None else None
                gold.append(backend.grade(task, verify(task, task.answer if task.answer_type != "none" else "done", final)).passed)
                backend.reset(task)
                final = backend.state_hash() if task.state_hash is not None else None
                nothing.append(backend.grade(task, verify(task, "done", final)).passed)
            row[source] = {"served": len(gold), "gold_passed": sum(gold), "do_nothing_passed": sum(nothing)}
        row.update(step_s=steps, start_s=time_starts(backend, args.starts))
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
    drop_reasons: dict[str, int] = {}
    for r in opened:
        for why in r["dropped"].values():
            key = why.split(":")[0][:60]
            drop_reasons[key] = drop_reasons.get(key, 0) + 1
    out = {"environments": len(rows), "opened": len(opened), "not_opened": {r["env"]: r["error"] for r in rows if not r["opened"]},
           "with_questions": sum(r["questions_file"] is not None for r in opened), "questions": sum(r["questions"] for r in opened),
           "questions_loaded": sum(r["loaded"] for r in opened), "questions_replayed": sum(r["replayed"] for r in opened),
           "questions_dropped": sum(len(r["dropped"]) for r in opened), "drop_reasons": drop_reasons,
           "not_deterministic": sum(len(r["not_replayed"]) for r in opened),
           "criteria_graded": sum(r["criteria_graded"] for r in opened), "criteria_not_graded": sum(r["criteria_not_graded"] for r in opened)}
    for source, name in (("release", "release"), ("discovery", "synthesized")):
        served = sum(r[source]["served"] for r in opened)
        gold = sum(r[source]["gold_passed"] for r in opened)
        nothing = sum(r[source]["do_nothing_passed"] for r in opened)
        out[name] = {"served": served, "gold_replay_score": gold / served if served else None, "gold_replay_ci95": wilson95(gold, served),
                     "do_nothing_score": nothing / served if served else None, "do_nothing_ci95": wilson95(nothing, served)}
    out.update({
        "gold_calls_timed": len(steps), "step_ms_median": 1000 * statistics.median(steps) if steps else None,
        "step_ms_p10_p90": [1000 * percentile(steps, 0.1), 1000 * percentile(steps, 0.9)] if steps else None,
        "starts_timed": len(starts), "sandboxed_start_ms_median": 1000 * statistics.median(starts) if starts else None,
        "sandboxed_start_ms_p10_p90": [1000 * percentile(starts, 0.1), 1000 * percentile(starts, 0.9)],
        "unsafe_start_ms_median": 1000 * statistics.median(unsafe) if unsafe else None,
        "sandbox_start_cost_ratio": statistics.median(starts) / statistics.median(unsafe) if starts and unsafe else None,
    })
    out["problems"] = health_problems(out)
    return out


def health_problems(summary: dict) -> list[str]:
    """Why the release does not look healthy (empty: healthy). Synthesized tasks never make up for its questions."""
    problems = []
    if not summary["opened"]:
        problems.append("no environment opened")
    if not summary["questions"]:
        problems.append("no release question found (questions/<id>.json)")
    elif not summary["questions_loaded"]:
        problems.append(f"0 of {summary['questions']} release questions loaded")
    elif not summary["questions_replayed"]:
        problems.append(f"0 of {summary['questions_loaded']} loaded questions replay to 1.0")
    for name in ("release", "synthesized"):
        score = summary[name]["gold_replay_score"]
        if score is not None and score < 1.0:
            problems.append(f"{name} gold replays score {score:.3f}, not 1.0")
        if summary[name]["do_nothing_score"]:
            problems.append(f"a do-nothing agent passes {summary[name]['do_nothing_score']:.3f} of the {name} tasks")
    return problems


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
               **summarize([done[e] for e in env_ids]),
               "host_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    Path(args.out + ".json").write_text(json.dumps(summary, indent=1))
    rel, syn = summary["release"], summary["synthesized"]

    def ms(x):
        return "n/a" if x is None else f"{x:.1f} ms"

    lines = [f"# Release benchmark: {args.path}", "",
             "**HEALTHY**" if not summary["problems"] else "**UNHEALTHY**: " + "; ".join(summary["problems"]), "",
             f"sandbox: {isolation['mechanism']} (uid {isolation['uid']}, no network, read-only root, nproc {isolation['nproc']}, "
             f"cgroups {isolation['cgroups']}, episode quota: {isolation['episode_quota']}); {summary['cpus']} CPUs, load average "
             f"{summary['load_average'][0]:.1f} (a shared machine: latencies are upper bounds)", "",
             "| measure | result |", "|---|---|",
             f"| environments opened | {summary['opened']} / {summary['environments']} |",
             f"| release questions: found / loaded / replayed to 1.0 (served) | {summary['questions']} / {summary['questions_loaded']} / "
             f"{summary['questions_replayed']} |",
             f"| release questions dropped | {summary['questions_dropped']} ({summary['drop_reasons']}) |",
             f"| release questions not deterministic (not served) | {summary['not_deterministic']} |",
             f"| success criteria checked mechanically / not graded | {summary['criteria_graded']} / {summary['criteria_not_graded']} |",
             f"| release gold replay score (n={rel['served']}, 95% CI) | {rel['gold_replay_score']} {rel['gold_replay_ci95']} |",
             f"| release do-nothing score, null baseline (n={rel['served']}, 95% CI) | {rel['do_nothing_score']} {rel['do_nothing_ci95']} |",
             f"| synthesized tasks served (asked {args.synthesized} per environment) | {syn['served']} |",
             f"| synthesized gold replay score (n={syn['served']}, 95% CI) | {syn['gold_replay_score']} {syn['gold_replay_ci95']} |",
             f"| synthesized do-nothing score (n={syn['served']}, 95% CI) | {syn['do_nothing_score']} {syn['do_nothing_ci95']} |",
             f"| gold tool call latency, median [p10, p90] (n={summary['gold_calls_timed']}) | {ms(summary['step_ms_median'])} "
             f"[{', '.join(ms(x) for x in summary['step_ms_p10_p90'] or [])}] |",
             f"| episode start sandboxed, median [p10, p90] (n={summary['starts_timed']}) | {ms(summary['sandboxed_start_ms_median'])} "
             f"[{', '.join(ms(x) for x in summary['sandboxed_start_ms_p10_p90'])}] |",
             f"| episode start unsafe (baseline, same run) | {ms(summary['unsafe_start_ms_median'])} |",
             f"| sandbox start cost ratio | {summary['sandbox_start_cost_ratio'] or float('nan'):.2f}x |",
             f"| host process peak RSS | {summary['host_peak_rss_mb']:.0f} MB |",
             "", "| environment | questions | loaded | replayed | dropped | not deterministic | synthesized |", "|---|---|---|---|---|---|---|"]
    for e in env_ids:
        r = done[e]
        if r["opened"]:
            lines.append(f"| {e} | {r['questions']} | {r['loaded']} | {r['replayed']} | {len(r['dropped'])} | {len(r['not_replayed'])} | "
                         f"{r['synthesized']} |")
        else:
            lines.append(f"| {e} | not opened: {r['error'][:80]} | | | | | |")
    Path(args.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path")
    for name, default in asdict(Args()).items():
        if name != "path":
            parser.add_argument("--" + name.replace("_", "-"), type=type(default) if default is not None else int, default=default)
    args = Args(**vars(parser.parse_args()))
    os.environ.setdefault("AGENTWORLD_DATA", tempfile.mkdtemp(prefix="bench-release-"))  # a fresh task cache: build and replay now
    sys.exit(1 if main(args)["problems"] else 0)
