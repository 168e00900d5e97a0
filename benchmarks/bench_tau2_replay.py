"""Gold replay of every task of every installed tau2 domain, beside the do-nothing baseline.

    python benchmarks/bench_tau2_replay.py [--domains mock retail airline] [--out benchmarks/results/tau2]

Each domain writes <out>/<domain>.json when done (rerunning skips finished domains: resumable);
<out>/README.md is the table the project README quotes. Retail takes ~15 minutes on 2 cores, so CI
runs only the mock domain (tests/test_tau2.py).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from agentworld_gym.mcp.tau2 import installed_domains, make_tau2_env, replay_report


def do_nothing(domain: str) -> dict:
    from agentworld_gym.policies import run_episode
    from agentworld_gym.policies.null import DoNothingPolicy

    env = make_tau2_env(domain)
    try:
        wins = [run_episode(env, DoNothingPolicy(), options={"task": t})["success"] for t in env.unwrapped.tasks]
    finally:
        env.close()
    return {"n": len(wins), "passed": sum(wins)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--domains", nargs="*", default=None, help="domains to replay (default: every installed one)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "tau2"), help="results folder")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for domain in args.domains or list(installed_domains()):
        path = out / f"{domain}.json"
        if path.is_file():
            continue
        t0 = time.time()
        rep = replay_report(domain, progress=True)
        rep["do_nothing"] = do_nothing(domain)
        rep["wall_s"] = round(time.time() - t0, 1)
        rep["graded_checks"] = sorted({c for r in rep["rows"] for c in r["graded"] or []})
        path.write_text(json.dumps(rep, indent=1))
        print(f"{domain}: {rep['passed']}/{rep['tasks']} gold replays pass; do-nothing {rep['do_nothing']['passed']}/{rep['tasks']}; "
              f"{rep['wall_s']} s")
    lines = ["| domain | tasks | gold replay = 1.0, no unrecovered gold-call error | refused gold calls (recovered) | skipped | "
             "do-nothing passes | checks graded | wall s |", "|---|---|---|---|---|---|---|---|"]
    for path in sorted(out.glob("*.json")):
        r = json.loads(path.read_text())
        lines.append(f"| {r['domain']} | {r['tasks']} | {r['passed']}/{r['tasks']} | {len(r['gold_with_errors'])} "
                     f"({len(r['gold_errors_recovered'])}) | {len(r['skipped'])} | "
                     f"{r['do_nothing']['passed']}/{r['do_nothing']['n']} | {', '.join(r['graded_checks'])} | {r['wall_s']} |")
    (out / "README.md").write_text("tau2 gold replay (`benchmarks/bench_tau2_replay.py`)\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
