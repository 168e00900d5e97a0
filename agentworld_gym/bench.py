"""Benchmark suites: `agentworld bench --suite heldout|bfcl --policy SPEC [--runs N]`.

* ``heldout`` — frozen task files under benchmarks/suites/heldout/<theme>.jsonl (themes the trainer
  never trains on; several per L1 category; difficulties 1-3). Success per L1 category and per
  difficulty.
* ``bfcl`` — BFCL v4 single-turn categories (simple, multiple, parallel, parallel_multiple), scored by
  AST/argument match against the acceptable values. Data: a folder of BFCL_v4_*.json (+ possible_answer/)
  given with --bfcl-path / AGENTWORLD_BFCL, or the `bfcl-eval` package's copy.

Results: JSON + a markdown table + a PNG; with --runs N each figure is mean ± std over N runs.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ConfigError

BFCL_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")
SUITES = ("heldout", "bfcl")


def suites_dir() -> Path:
    """$AGENTWORLD_SUITES, else the suites shipped with the package (benchmarks/suites in a checkout)."""
    if os.environ.get("AGENTWORLD_SUITES"):
        return Path(os.environ["AGENTWORLD_SUITES"])
    try:
        from . import suites
    except ImportError:  # an editable install older than the suites package: `pip install -e .` refreshes it
        return Path(__file__).resolve().parents[1] / "benchmarks" / "suites"
    return Path(suites.__file__).parent


def heldout_themes(path: str | Path | None = None) -> set[str]:
    """Themes of the frozen held-out suite; the trainer never trains on these."""
    folder = Path(path) if path else suites_dir() / "heldout"
    return {p.stem for p in folder.glob("*.jsonl")}


def load_heldout(path: str | Path | None = None):
    from .tasks import load_tasks

    folder = Path(path) if path else suites_dir() / "heldout"
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise ConfigError(f"Expected held-out task files (*.jsonl) in {folder}, got none. "
                          "Freeze them with benchmarks/make_heldout_suite.py.")
    per_theme = [load_tasks(f) for f in files]
    # interleave themes so `--episodes N` takes a spread, not the first theme only
    return [t for group in _zip_longest(per_theme) for t in group]


def _zip_longest(lists):
    for i in range(max(len(x) for x in lists)):
        yield [x[i] for x in lists if i < len(x)]


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    return float(a.mean()) if a.size else 0.0, float(a.std(ddof=1)) if a.size > 1 else 0.0


# --------------------------------------------------------------------------------------------
# Held-out suite


def _play_tasks(tasks, policy_spec: str, seed: int, policy=None, max_turns: int = 5) -> list[dict]:
    """One episode per task; LLM policies play all episodes at once (batched)."""
    from .env import AgentWorldEnv
    from .policies import make_policy, run_episode

    envs = [AgentWorldEnv(t.theme, tasks=[t], max_turns=max_turns) for t in tasks]
    options = [{"task": t} for t in tasks]
    if policy is not None and hasattr(policy, "encoder"):  # batched HF policy
        from .policies.llm import run_episodes_batched

        out = []
        for lo in range(0, len(envs), 32):
            out += run_episodes_batched(envs[lo:lo + 32], policy, [seed + lo + i for i in range(len(envs[lo:lo + 32]))], options[lo:lo + 32])
    else:
        out = []
        for i, (env, opt) in enumerate(zip(envs, options, strict=True)):
            p = policy if policy is not None else make_policy(policy_spec, env=env, seed=seed + i)
            out.append(run_episode(env, p, seed=seed + i, options=opt))
    for e in envs:
        e.close()
    return out


def run_heldout(policy_spec: str, episodes: int | None = None, runs: int = 1, seed: int = 0, policy=None,
                path: str | Path | None = None, max_turns: int = 5) -> dict:
    tasks = load_heldout(path)[:episodes] if episodes else load_heldout(path)
    category = {t.theme: _category(t.theme) for t in tasks}
    per_run: list[dict[str, dict[Any, list[bool]]]] = []
    for r in range(runs):
        _seed_torch(seed + r)
        results = _play_tasks(tasks, policy_spec, seed + 1000 * r, policy, max_turns)
        groups: dict[str, dict[Any, list[bool]]] = {"category": defaultdict(list), "difficulty": defaultdict(list), "theme": defaultdict(list)}
        for t, res in zip(tasks, results, strict=True):
            groups["category"][category[t.theme]].append(res["success"])
            groups["difficulty"][t.difficulty].append(res["success"])
            groups["theme"][t.theme].append(res["success"])
            groups.setdefault("overall", defaultdict(list))["all"].append(res["success"])
            if t.difficulty <= 2:
                groups["overall"]["difficulty_1_2"].append(res["success"])
        per_run.append(groups)
    return _summarise("heldout", policy_spec, per_run, runs, seed, len(tasks))


def _category(theme_id: str) -> str:
    from .envs.registry import get_entry

    return get_entry(theme_id).category


def _seed_torch(seed: int) -> None:
    import sys

    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def _summarise(suite: str, policy_spec: str, per_run: list[dict], runs: int, seed: int, n: int) -> dict:
    out: dict[str, Any] = {"suite": suite, "policy": policy_spec, "runs": runs, "seed": seed, "n_items": n}
    for key in per_run[0]:
        table = {}
        for name in per_run[0][key]:
            rates = [float(np.mean(run[key][name])) for run in per_run]
            mean, std = _mean_std(rates)
            table[str(name)] = {"success_mean": mean, "success_std": std, "n": len(per_run[0][key][name])}
        out[key] = dict(sorted(table.items()))
    return out


# --------------------------------------------------------------------------------------------
# BFCL-style single-turn suite


def bfcl_dir(path: str | Path | None = None) -> Path:
    """--bfcl-path, else $AGENTWORLD_BFCL, else the bfcl-eval package's data folder."""
    if path or os.environ.get("AGENTWORLD_BFCL"):
        p = Path(path or os.environ["AGENTWORLD_BFCL"])
        if not (p / "possible_answer").is_dir():
            raise ConfigError(f"Expected a BFCL v4 folder with BFCL_v4_*.json and possible_answer/, got {p}.")
        return p
    import importlib.util

    spec = importlib.util.find_spec("bfcl_eval")
    if spec is not None and spec.submodule_search_locations:
        p = Path(list(spec.submodule_search_locations)[0]) / "data"
        if (p / "possible_answer").is_dir():
            return p
    raise ConfigError("Expected BFCL v4 data: pass --bfcl-path DIR (e.g. ../shared/data/bfcl), set AGENTWORLD_BFCL, "
                      "or pip install bfcl-eval.")


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_bfcl(path: str | Path | None = None, categories: Sequence[str] = BFCL_CATEGORIES, limit: int | None = None) -> list[dict]:
    """Items {id, category, question (messages), functions, ground_truth}."""
    root = bfcl_dir(path)
    items = []
    for cat in categories:
        q = root / f"BFCL_v4_{cat}.json"
        a = root / "possible_answer" / f"BFCL_v4_{cat}.json"
        if not q.exists() or not a.exists():
            raise ConfigError(f"Expected {q.name} and possible_answer/{a.name} in {root}, got them missing.")
        answers = {x["id"]: x["ground_truth"] for x in _read_jsonl(a)}
        rows = _read_jsonl(q)[:limit] if limit else _read_jsonl(q)
        for x in rows:
            items.append({"id": x["id"], "category": cat, "question": x["question"][0], "functions": x["function"],
                          "ground_truth": answers[x["id"]]})
    return items


def _as_tools(functions: list[dict]) -> list[dict]:
    """BFCL docs ("dict", Python type names) as OpenAI tool schemas."""
    names = {"dict": "object", "float": "number", "integer": "integer", "string": "string", "boolean": "boolean",
             "array": "array", "tuple": "array", "any": "any"}
    tools = []
    for f in functions:
        params = f.get("parameters", {})
        props = {k: {**v, "type": names.get(v.get("type", "any"), v.get("type", "any"))} for k, v in params.get("properties", {}).items()}
        tools.append({"type": "function", "function": {"name": f["name"], "description": f.get("description", ""),
                                                         "parameters": {"type": "object", "properties": props, "required": params.get("required", [])}}})
    return tools


def bfcl_messages(item: dict) -> list[dict]:
    from .policies.llm import compact_system_prompt

    system = compact_system_prompt(_as_tools(item["functions"])).split("\nReply with")[0]
    system += '\nReply only with the tool call as JSON: {"name": "<tool>", "arguments": {...}}; several calls as a JSON list.'
    return [{"role": "system", "content": system}, *item["question"]]


def _norm(v: Any) -> Any:
    if isinstance(v, str):
        return re.sub(r"[\s,./\-_*^]", "", v).lower()
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    return v


def _value_ok(got: Any, acceptable: list) -> bool:
    g = _norm(got)
    for a in acceptable:
        if isinstance(a, dict) and isinstance(got, dict):
            if all(k in got and _value_ok(got[k], v) for k, v in a.items() if "" not in v) and set(got) <= set(a):
                return True
        elif _norm(a) == g:
            return True
    return False


def call_matches(call, gold: dict) -> bool:
    """One parsed ToolCall against one ground-truth entry {name: {param: [acceptable values]}}."""
    (name, params), = gold.items()
    if call.name != name or call.args:
        return False
    if set(call.arguments) - set(params):
        return False  # an argument the function does not take
    for p, acceptable in params.items():
        if p not in call.arguments:
            if "" not in acceptable:
                return False  # a required argument is missing
        elif not _value_ok(call.arguments[p], acceptable):
            return False
    return True


def score_bfcl(text: str, ground_truth: list[dict]) -> bool:
    """AST match: the reply's calls and the gold calls pair up one to one (any order)."""
    from .actions import parse_action

    calls = list(parse_action(text).calls)
    if len(calls) != len(ground_truth):
        return False
    left = list(ground_truth)
    for c in calls:
        hit = next((i for i, g in enumerate(left) if call_matches(c, g)), None)
        if hit is None:
            return False
        left.pop(hit)
    return True


def gold_reply(item: dict) -> str:
    """A correct reply (first acceptable value of each given argument): the scorer's sanity check."""
    def first(acceptable: list) -> Any:
        v = acceptable[0]
        return {k: first(x) for k, x in v.items() if x and x[0] != ""} if isinstance(v, dict) else v

    calls = []
    for g in item["ground_truth"]:
        (name, params), = g.items()
        calls.append({"name": name, "arguments": {k: first(v) for k, v in params.items() if v and v[0] != ""}})
    return json.dumps(calls if len(calls) > 1 else calls[0])


def _bfcl_replies(items: list[dict], policy_spec: str, policy, seed: int) -> list[str]:
    if policy_spec == "oracle":
        return [gold_reply(x) for x in items]
    if policy is not None and hasattr(policy, "encoder"):
        enc = policy.encoder
        replies = []
        for lo in range(0, len(items), 32):
            prompts = [enc.start(bfcl_messages(x)).ids for x in items[lo:lo + 32]]
            for gen in policy.generate(prompts):
                replies.append(enc.tok.decode(gen[:-1] if gen[-1:] == [enc.end_id] else gen, skip_special_tokens=True))
        return replies
    if policy is not None and hasattr(policy, "complete"):
        return [policy.complete(bfcl_messages(x)) for x in items]
    from .policies import make_policy

    p = make_policy(policy_spec, seed=seed)
    return [p.act("", {"messages": bfcl_messages(x), "tools": _as_tools(x["functions"])}) for x in items]


def run_bfcl(policy_spec: str, episodes: int | None = None, runs: int = 1, seed: int = 0, policy=None,
             path: str | Path | None = None) -> dict:
    items = load_bfcl(path, limit=episodes)
    per_run = []
    for r in range(runs):
        _seed_torch(seed + r)
        replies = _bfcl_replies(items, policy_spec, policy, seed + r)
        groups: dict[str, dict[Any, list[bool]]] = {"category": defaultdict(list), "overall": defaultdict(list)}
        for x, reply in zip(items, replies, strict=True):
            ok = score_bfcl(reply, x["ground_truth"])
            groups["category"][x["category"]].append(ok)
            groups["overall"]["all"].append(ok)
        per_run.append(groups)
    return _summarise("bfcl", policy_spec, per_run, runs, seed, len(items))


# --------------------------------------------------------------------------------------------
# Running and reporting


def run_suite(suite: str, policy: str, episodes: int | None = None, runs: int = 1, seed: int = 0,
              temperature: float = 0.0, bfcl_path: str | None = None, max_new_tokens: int = 64) -> dict:
    """Evaluate `policy` (a spec) on a suite; LLM policies are loaded once and generate in batches."""
    if suite not in SUITES:
        raise ConfigError(f"Expected --suite in {SUITES}, got {suite!r}.")
    if runs < 1:
        raise ConfigError(f"Expected --runs >= 1, got {runs}.")
    loaded = None
    if policy.startswith(("hf:", "openai:")) or policy == "smollm2-135m":
        from .policies.llm import make_llm_policy

        kwargs = {"temperature": temperature}
        if not policy.startswith("openai:"):
            kwargs["max_new_tokens"] = max_new_tokens
        loaded = make_llm_policy(policy, **kwargs)
    t0 = time.time()
    if suite == "heldout":
        result = run_heldout(policy, episodes, runs, seed, loaded)
    else:
        result = run_bfcl(policy, episodes, runs, seed, loaded, bfcl_path)
    result["wall_s"] = round(time.time() - t0, 1)
    result["temperature"] = temperature
    return result


def markdown_table(result: dict) -> str:
    runs = result["runs"]
    lines = [f"**{result['suite']}** — policy `{result['policy']}`, {result['n_items']} items, {runs} run(s)"
             f"{' (mean ± std)' if runs > 1 else ''}", "", "| group | success | n |", "|---|---|---|"]
    for key in ("overall", "difficulty", "category"):
        for name, row in result.get(key, {}).items():
            cell = f"{100 * row['success_mean']:.1f}%" + (f" ± {100 * row['success_std']:.1f}" if runs > 1 else "")
            label = name if key != "difficulty" else f"difficulty {name}"
            lines.append(f"| {label} | {cell} | {row['n']} |")
    return "\n".join(lines) + "\n"


def plot_result(result: dict, png: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = result["category"]
    names = list(rows)
    fig, ax = plt.subplots(figsize=(max(4, 0.9 * len(names) + 2), 3.2))
    ax.bar(range(len(names)), [100 * rows[n]["success_mean"] for n in names],
           yerr=[100 * rows[n]["success_std"] for n in names], capsize=3)
    ax.set_xticks(range(len(names)), [n[:18] for n in names], rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("success %")
    ax.set_ylim(0, 100)
    ax.set_title(f"{result['suite']}: {result['policy'][-40:]}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return png


def save_result(result: dict, out: str | Path) -> dict[str, str]:
    """out.json, out.md and out.png next to each other (out is a path without suffix)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1))
    out.with_suffix(".md").write_text(markdown_table(result))
    png = plot_result(result, out.with_suffix(".png"))
    return {"json": str(out.with_suffix(".json")), "md": str(out.with_suffix(".md")), "png": str(png) if png else ""}


def cmd_suite(args) -> int:
    result = run_suite(args.suite, args.policy, args.episodes, args.runs, args.seed,
                       getattr(args, "temperature", 0.0), getattr(args, "bfcl_path", None))
    if getattr(args, "out", None):
        save_result(result, args.out)
    print(json.dumps(result) if args.json else markdown_table(result))
    return 0


__all__ = ["BFCL_CATEGORIES", "SUITES", "call_matches", "heldout_themes", "load_bfcl", "load_heldout", "markdown_table",
           "run_bfcl", "run_heldout", "run_suite", "save_result", "score_bfcl"]
