"""Pool benchmark: registration/import cost, cold and warm `gym.make`, and check_env + oracle over
every catalog theme (resumable: finished themes are kept in a journal; Ctrl-C loses nothing).

    python benchmarks/bench_pool.py                 # everything, all themes
    python benchmarks/bench_pool.py --limit 200     # check a random sample of 200 themes
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, fields
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass
class Args:
    limit: int | None = None
    """check at most this many themes (a random sample); None = all"""
    seeds: str = "0,1"
    """reset seeds check_env runs the oracle on"""
    make_samples: int = 8
    """themes timed for cold/warm make"""
    journal: str = str(HERE / "results" / "pool_check.jsonl")
    """where finished checks are kept (resume)"""
    out: str = str(HERE / "results" / "pool.md")
    """the results table"""
    seed: int = 0


def _py(code: str, env: dict | None = None) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600).stdout


def import_cost(repeats: int = 5) -> dict:
    """Wall time of `import agentworld_gym` with and without the catalog (min of repeats), and gymnasium alone."""
    stmt = "import time; t=time.perf_counter(); import {m}; print(time.perf_counter()-t)"
    def best(m, env=None):
        return min(float(_py(stmt.format(m=m), env)) for _ in range(repeats))
    full, bare, gym_only = best("agentworld_gym"), best("agentworld_gym", {"AGENTWORLD_NO_CATALOG": "1"}), best("gymnasium")
    reg = ("import os, time, agentworld_gym; del os.environ['AGENTWORLD_NO_CATALOG']; from agentworld_gym.envs import catalog; "
           "t=time.perf_counter(); n=catalog.register_catalog(); print(time.perf_counter()-t)")
    register = min(float(_py(reg, {"AGENTWORLD_NO_CATALOG": "1"})) for _ in range(repeats))
    return {"import_s": full, "import_without_catalog_s": bare, "gymnasium_import_s": gym_only, "catalog_registration_s": register}


def make_times(ids: list[str]) -> dict:
    """Cold (fresh cache dir, new process: builds the world), warm (same process) and disk-cached make."""
    code = ("import json, time, gymnasium as gym, agentworld_gym; out=[]\n"
            "for i in json.loads(__import__('sys').argv[1]):\n"
            "    t=time.perf_counter(); e=gym.make(f'AgentWorld/{i}-v0'); a=time.perf_counter()-t; e.close()\n"
            "    t=time.perf_counter(); e=gym.make(f'AgentWorld/{i}-v0'); b=time.perf_counter()-t; e.close(); out.append((a,b))\n"
            "print(json.dumps(out))")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "AGENTWORLD_CACHE": cache}
        run = lambda: json.loads(subprocess.run([sys.executable, "-c", code, json.dumps(ids)], capture_output=True, text=True, env=env, timeout=600).stdout)  # noqa: E731
        cold = run()
        disk = run()  # a new process, worlds already on disk
    with tempfile.TemporaryDirectory() as cache:  # the baseline: a flagship's cold make, same conditions
        base = json.loads(subprocess.run([sys.executable, "-c", code, json.dumps(["finance"])], capture_output=True, text=True,
                                         env={**os.environ, "AGENTWORLD_CACHE": cache}, timeout=600).stdout)
    return {"cold_make_median_s": statistics.median(a for a, _ in cold), "cold_make_max_s": max(a for a, _ in cold),
            "warm_make_median_ms": 1000 * statistics.median(b for _, b in cold), "warm_make_max_ms": 1000 * max(b for _, b in cold),
            "disk_cached_make_median_s": statistics.median(a for a, _ in disk), "flagship_finance_make_s": base[0][0]}


def check_all(args: Args, ids: list[str]) -> dict:
    import gymnasium as gym
    from tqdm import tqdm

    from agentworld_gym.discovery.pool import read_journal
    from agentworld_gym.utils.check import check_env

    journal = Path(args.journal)
    journal.parent.mkdir(parents=True, exist_ok=True)
    done = read_journal(journal)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    with journal.open("a") as log:
        for tid in tqdm([i for i in ids if i not in done], desc="check_env", unit="theme"):
            t = time.perf_counter()
            try:
                env = gym.make(f"AgentWorld/{tid}-v0")
                check_env(env, seeds=seeds)
                rec = {"id": tid, "ok": True}
            except Exception as exc:  # noqa: BLE001  a failing theme is a result, not a crash
                rec = {"id": tid, "ok": False, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            rec["seconds"] = round(time.perf_counter() - t, 3)
            log.write(json.dumps(rec) + "\n")
            log.flush()
            done[tid] = rec
    recs = [done[i] for i in ids if i in done]
    return {"checked": len(recs), "passed": sum(r["ok"] for r in recs), "failed": [r for r in recs if not r["ok"]][:20],
            "check_median_s": statistics.median(r["seconds"] for r in recs) if recs else 0.0}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in fields(Args):
        p.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default) if f.default is not None else int, default=f.default)
    args = Args(**vars(p.parse_args()))
    from agentworld_gym.envs import catalog

    import agentworld_gym  # noqa: F401
    from agentworld_gym.discovery.cli import pool_stats

    stats = pool_stats()
    rng = random.Random(args.seed)
    ids = sorted(catalog._ROWS)
    sample = rng.sample(ids, min(args.limit, len(ids))) if args.limit else ids
    cost = import_cost()
    makes = make_times(rng.sample(ids, args.make_samples))
    checks = check_all(args, sample)
    lines = [
        "# Pool benchmark", "",
        f"themes {stats['themes']} (flagship {stats['flagship']}, catalog {stats['catalog']}, toucan {stats['toucan']}), "
        f"tools {stats['tools']}, L1 {stats['categories']}, L2 {stats['subcategories']}, "
        f"tool test pass rate {stats['tool_test_pass_rate']}, distinct schema fingerprints {stats['schema_fingerprints']}", "",
        "| measure | value | budget |", "|---|---|---|",
        f"| import agentworld_gym (whole pool registered) | {cost['import_s']:.3f} s | ≤ 0.5 s |",
        f"| same import without the catalog (baseline) | {cost['import_without_catalog_s']:.3f} s | |",
        f"| import gymnasium alone | {cost['gymnasium_import_s']:.3f} s | |",
        f"| catalog registration (register_catalog, in process) | {cost['catalog_registration_s'] * 1000:.0f} ms | |",
        f"| cold gym.make (builds the world), median / max | {makes['cold_make_median_s']:.3f} / {makes['cold_make_max_s']:.3f} s | ≤ 1 s |",
        f"| flagship finance cold make, same run (ratio) | {makes['flagship_finance_make_s']:.3f} s ({makes['cold_make_median_s'] / makes['flagship_finance_make_s']:.2f}x) | |",
        f"| new process, world on disk, median | {makes['disk_cached_make_median_s']:.3f} s | |",
        f"| warm gym.make (cached), median / max | {makes['warm_make_median_ms']:.1f} / {makes['warm_make_max_ms']:.1f} ms | ≤ 50 ms |",
        f"| check_env + oracle (seeds {args.seeds}) | {checks['passed']} / {checks['checked']} themes pass, median {checks['check_median_s']:.2f} s | all |",
    ]
    if checks["failed"]:
        lines += ["", "Failures (first 20):", *[f"- {r['id']}: {r['error']}" for r in checks["failed"]]]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
