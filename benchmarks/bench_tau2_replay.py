"""Gold replay of every task of every installed tau2 domain, the scripted-user oracle, beside do-nothing.

    python benchmarks/bench_tau2_replay.py [--domains mock retail airline] [--out benchmarks/results/tau2]

Per domain: the gold replay (OraclePolicy: gold calls, then the required information submitted), the
scripted-user oracle (ConversationOracle: asks the simulated user for each private fact, replays the
gold calls, tells the user the required information; the user ends the conversation) and do-nothing,
all in tau2's protocol (conversation with the scripted user), graded per the task's reward basis.
Each domain writes <out>/<domain>.json when done (rerunning skips finished domains: resumable);
<out>/README.md is the table the project README quotes. Retail takes ~15 minutes on 2 cores, so CI
runs only the mock domain (tests/test_tau2.py).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from agentworld_gym.policies.null import DoNothingPolicy
from agentworld_gym.suites.tau2 import installed_domains, make_tau2_env, replay_report
from agentworld_gym.user_simulator import ConversationOracle


def played(domain: str, make_policy) -> dict:
    """Every task of the domain played by `make_policy(env)`, in conversation with the scripted user."""
    from agentworld_gym.policies import run_episode

    env = make_tau2_env(domain, user="scripted")
    try:
        rows = [(t.features["source_id"], run_episode(env, make_policy(env), options={"task": t})) for t in env.unwrapped.tasks]
    finally:
        env.close()
    return {"n": len(rows), "passed": sum(r["success"] for _, r in rows), "user": "scripted",
            "failed": [i for i, r in rows if not r["success"]], "ended_by_user": sum(r["info"].get("ended_by") == "user_stop" for _, r in rows)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--domains", nargs="*", default=None, help="domains to replay (default: every installed one)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "tau2"), help="results folder")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for domain in args.domains or list(installed_domains()):
        if domain == "agreement":
            continue
        path = out / f"{domain}.json"
        if path.is_file():
            continue
        t0 = time.time()
        rep = replay_report(domain, progress=True)
        rep["do_nothing"] = played(domain, lambda env: DoNothingPolicy())
        rep["scripted_user_oracle"] = played(domain, ConversationOracle)
        rep["protocol"] = "tau2 1.0.x: the scenario held by the scripted user; graded per the task's reward basis"
        rep["wall_s"] = round(time.time() - t0, 1)
        rep["graded_checks"] = sorted({c for r in rep["rows"] for c in r["graded"] or []})
        path.write_text(json.dumps(rep, indent=1))
        print(f"{domain}: {rep['passed']}/{rep['tasks']} gold replays pass; scripted-user oracle "
              f"{rep['scripted_user_oracle']['passed']}/{rep['tasks']}; do-nothing {rep['do_nothing']['passed']}/{rep['tasks']}; {rep['wall_s']} s")
    lines = ["| domain | tasks | gold replay = 1.0, no unrecovered gold-call error | refused gold calls (recovered) | skipped | "
             "scripted-user oracle | do-nothing passes | checks graded | wall s |", "|---|---|---|---|---|---|---|---|---|"]
    for path in sorted(out.glob("*.json")):
        r = json.loads(path.read_text())
        if "domain" not in r:  # agreement.json and other summaries
            continue
        lines.append(f"| {r['domain']} | {r['tasks']} | {r['passed']}/{r['tasks']} | {len(r['gold_with_errors'])} "
                     f"({len(r['gold_errors_recovered'])}) | {len(r['skipped'])} | "
                     f"{r['scripted_user_oracle']['passed']}/{r['scripted_user_oracle']['n']} | "
                     f"{r['do_nothing']['passed']}/{r['do_nothing']['n']} | {', '.join(r['graded_checks'])} | {r['wall_s']} |")
    (out / "README.md").write_text("tau2 gold replay (`benchmarks/bench_tau2_replay.py`)\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
