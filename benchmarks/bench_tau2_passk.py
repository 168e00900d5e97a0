"""pass^k of the bundled SmolLM2-135M-Instruct (untrained) on tau2, in tau2's protocol (the scripted user
holds the scenario), beside the null baselines, on a small sample per domain:

    nice python benchmarks/bench_tau2_passk.py [--runs 2] [--per-domain 10] [--temperature 1.0]

mock: all 10 tasks; airline, retail, telecom: `--per-domain` tasks each (stratified by difficulty,
seed 0). k runs at temperature > 0 (runs at temperature 0 against a deterministic user are identical,
and pass^k would equal pass^1). Each domain's result is written as soon as it is done to
benchmarks/results/tau2/smollm2_passk.json; a rerun skips the domains already there (resumable).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from agentworld_gym.suites.core import load_policy, run_suite, wilson

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "tau2" / "smollm2_passk.json"
POLICY = "smollm2-135m"


def summary(result: dict) -> dict:
    """The figures the docs table needs: n, pass^k with intervals, and each null baseline's rate with its interval."""
    items = result["items"]
    nulls = {name: [it["null"][name] for it in items] for name in result["null_baselines"]}
    row = result["overall"]["all"]
    return {"n": len(items), "runs": result["runs"], "temperature": result["temperature"], "wall_s": result["wall_s"],
            "user": result["notes"]["user"], "graded_checks": result["notes"]["graded_checks"],
            "pass_k": row.get("pass_k") or {"1": {"value": float(np.mean([it["success"][0] for it in items]))}},
            "nulls": {n: {"success": float(np.mean(h)), "ci95": [round(v, 4) for v in wilson(sum(h), len(h))]} for n, h in nulls.items()},
            "items": [{"id": it["id"], "success": it["success"], "null": it["null"]} for it in items]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--per-domain", type=int, default=10)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--domains", nargs="+", default=["mock", "airline", "retail", "telecom"])
    args = ap.parse_args()
    done = json.loads(OUT.read_text()) if OUT.is_file() else {"policy": POLICY, "domains": {}}
    loaded = load_policy(POLICY, args.temperature)
    for domain in args.domains:
        if domain in done["domains"]:
            continue
        t0 = time.time()
        result = run_suite("tau2", POLICY, None if domain == "mock" else args.per_domain, runs=args.runs, temperature=args.temperature,
                           categories=[domain], loaded=loaded)
        done["domains"][domain] = summary(result)
        OUT.write_text(json.dumps(done, indent=1))
        print(domain, {k: v["value"] for k, v in done["domains"][domain]["pass_k"].items()}, f"{time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
