"""Transfer: does training in this suite move an agent on benchmarks this project did not generate?

Every stage (a policy spec; `{seed}` in it is replaced by each training seed) is scored in ONE harness,
`agentworld bench`'s suites with the same chat template and tool format, on:

* ``bfcl``    - every BFCL category that runs offline (single- and multi-turn), per category and overall
  with BFCL V4's weighting (non-live 10, live 10, irrelevance 10, multi-turn 30, agentic 40; the
  agentic categories need the internet and are left out, the other weights renormalised);
* ``tau2``    - the installed tau2 domains, in the mode `agentworld bench --suite tau2` plays (its
  `notes` say which; every result keeps that label);
* ``heldout`` - the project's own held-out suite.

Scores are pooled over seeds (Wilson 95% interval over every episode) beside the per-seed rates, the
best null baseline on the same items, and differences against the untrained stage (Newcombe
interval): a difference whose interval holds 0 is no gain. Results go to OUT/runs/<stage>/s<seed>/
<suite>.json (a finished file is never recomputed, so a cut-off run resumes), the summary to
OUT/summary.json, every command and wall time to OUT/wall_times.tsv.

`--audit` writes OUT/overlap.json: the pool themes whose tools overlap a benchmark's (tool names,
argument names, entity names, instruction 8-grams), which training must leave out (`--exclude`
lists them for `agentworld train sft --themes`).

    .venv/bin/python benchmarks/transfer.py --audit
    .venv/bin/python benchmarks/transfer.py --stage untrained=smollm2-135m --episodes 300
    .venv/bin/python benchmarks/transfer.py --stage untrained=smollm2-135m \\
        --stage sft=hf:runs/v2/div64e512-s{seed}/final --seeds 0,1,2 --device cuda   # the same on a GPU
    .venv/bin/python benchmarks/transfer.py --summary-only
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "transfer"
SUITES = ("bfcl", "tau2", "heldout")
BASE = "untrained"
# Differences reported beside the gains over BASE: the remedy and the diversity control against the recipe they vary
# (results/transfer/run_seeds.sh trains all three), and 4x the SFT budget against 1x (run_budget.sh).
CONTRASTS = (("sft_callmix", "sft"), ("sft_1theme", "sft"), ("sft128", "sft"), ("sft128_callmix", "sft_callmix"),
             ("sft128_callmix", "sft128"), ("sft512_callmix", "sft128_callmix"))

# BFCL V4's overall score: a weighted mean of five groups (bfcl-eval's eval_runner_helper, weights [10, 10, 10, 30, 40]).
# Within a group BFCL averages its categories unweighted (non-live, multi-turn, irrelevance) or by item count (live).
V4_GROUPS = {
    "non_live": (10, ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple")),
    "live": (10, ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")),
    "irrelevance": (10, ("irrelevance", "live_irrelevance")),
    "multi_turn": (30, ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")),
    "agentic": (40, ("web_search", "memory")),  # need the internet or their own backends: not run here
}
OFFLINE_BFCL = tuple(c for name, (_, cats) in V4_GROUPS.items() if name != "agentic" for c in cats)


@dataclass
class Args:
    stage: list[str] = field(default_factory=list)
    """NAME=POLICY_SPEC, repeatable; `{seed}` in the spec is each training seed (e.g. sft=hf:runs/sft-s{seed}/final)"""
    seeds: str = "0"
    """training seeds of the stages whose spec holds {seed}"""
    suites: str = ",".join(SUITES)
    episodes: int | None = None
    """items per suite (stratified, the same items for every stage); None: every item"""
    bfcl_categories: str = ",".join(OFFLINE_BFCL)
    out: Path = DEFAULT_OUT
    device: str | None = None
    dtype: str | None = None
    max_new_tokens: int = 128
    audit: bool = False
    summary_only: bool = False


def parse_args(argv=None) -> Args:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", action="append", default=[], help="NAME=POLICY_SPEC, repeatable ({seed} = each training seed)")
    ap.add_argument("--seeds", default=Args.seeds)
    ap.add_argument("--suites", default=Args.suites)
    ap.add_argument("--episodes", type=int, default=None, help="items per suite, stratified (default: all)")
    ap.add_argument("--bfcl-categories", default=Args.bfcl_categories)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--max-new-tokens", type=int, default=Args.max_new_tokens)
    ap.add_argument("--audit", action="store_true", help="write OUT/overlap.json (training themes vs benchmark domains)")
    ap.add_argument("--summary-only", action="store_true", help="rebuild OUT/summary.json from finished runs")
    ns = ap.parse_args(argv)
    args = Args(**{k: v for k, v in vars(ns).items()})
    _validate(args)
    return args


def _validate(args: Args) -> None:
    from agentworld_gym.errors import ConfigError

    for s in args.stage:
        if not re.fullmatch(r"[A-Za-z0-9_.+-]+=\S+", s):
            raise ConfigError(f"Expected --stage NAME=POLICY_SPEC, got {s!r} (e.g. --stage sft=hf:runs/sft-s{{seed}}/final).")
    bad = [s for s in args.suites.split(",") if s not in SUITES]
    if bad:
        raise ConfigError(f"Expected --suites from {SUITES}, got {bad}.")
    if args.episodes is not None and args.episodes < 1:
        raise ConfigError(f"Expected --episodes >= 1, got {args.episodes}.")
    if not re.fullmatch(r"\d+(,\d+)*", args.seeds):
        raise ConfigError(f"Expected --seeds as comma-separated integers, got {args.seeds!r}.")


def stage_runs(args: Args) -> list[tuple[str, int | None, str]]:
    """(stage name, seed or None, policy spec) for every run the stages ask for."""
    runs = []
    for s in args.stage:
        name, spec = s.split("=", 1)
        if "{seed}" in spec:
            runs += [(name, int(seed), spec.format(seed=seed)) for seed in args.seeds.split(",")]
        else:
            runs.append((name, None, spec))
    return runs


def run_file(out: Path, stage: str, seed: int | None, suite: str) -> Path:
    return out / "runs" / stage / ("base" if seed is None else f"s{seed}") / f"{suite}.json"


def _write_json(path: Path, data) -> None:
    """Write to a temporary file and move it into place: a cut-off run never leaves half a result."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def evaluate_runs(args: Args) -> None:
    from agentworld_gym.suites import core as bench

    wanted = args.suites.split(",")
    todo = [(r, s) for r in stage_runs(args) for s in wanted if not run_file(args.out, r[0], r[1], s).exists()]
    loaded_spec, loaded = None, None
    for i, ((stage, seed, spec), suite) in enumerate(todo):
        if spec != loaded_spec:  # one model load per stage and seed, shared by its suites
            loaded, loaded_spec = bench.load_policy(spec, 0.0, args.max_new_tokens, args.device, args.dtype), spec
        print(f"[{i + 1}/{len(todo)}] {stage} seed={seed} {suite} ({spec})", flush=True)
        t0 = time.time()
        cats = args.bfcl_categories.split(",") if suite == "bfcl" else None
        nulls = stage == BASE or not any(s.split("=", 1)[0] == BASE for s in args.stage)
        result = bench.run_suite(suite, spec, args.episodes, 1, 0, 0.0, None, args.max_new_tokens, cats, nulls=nulls,
                                 loaded=loaded, device=args.device, dtype=args.dtype)
        result.update(stage=stage, training_seed=seed)
        _write_json(run_file(args.out, stage, seed, suite), result)
        with open(args.out / "wall_times.tsv", "a") as f:
            f.write(f"{stage}\t{seed}\t{suite}\t{spec}\t{time.time() - t0:.0f}\t{' '.join(sys.argv)}\n")


# --------------------------------------------------------------------------------------------
# Summary


def wins(result: dict) -> tuple[int, int]:
    items = result["items"]
    return sum(bool(x["success"][0]) for x in items), len(items)


def _by_category(result: dict) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for x in result["items"]:
        out[x["category"]][0] += bool(x["success"][0])
        out[x["category"]][1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def bfcl_v4_overall(by_cat: dict[str, tuple[int, int]]) -> dict:
    """BFCL V4's weighted overall over the groups that were run (weights renormalised), with a normal
    95% interval from the per-category binomial variances."""
    score, var, weight_sum, groups = 0.0, 0.0, 0.0, {}
    for name, (weight, cats) in V4_GROUPS.items():
        present = [c for c in cats if c in by_cat and by_cat[c][1]]
        if not present:
            continue
        if name == "live":  # BFCL weights live categories by item count
            s, n = sum(by_cat[c][0] for c in present), sum(by_cat[c][1] for c in present)
            acc, v = s / n, (s / n) * (1 - s / n) / n
        else:  # unweighted mean of categories
            accs = [by_cat[c][0] / by_cat[c][1] for c in present]
            acc = sum(accs) / len(accs)
            v = sum(a * (1 - a) / by_cat[c][1] for a, c in zip(accs, present, strict=True)) / len(present) ** 2
        groups[name] = {"accuracy": round(acc, 4), "categories": present, "weight": weight}
        score, var, weight_sum = score + weight * acc, var + weight ** 2 * v, weight_sum + weight
    if not weight_sum:
        return {"accuracy": None, "groups": {}}
    mean, half = score / weight_sum, 1.96 * math.sqrt(var) / weight_sum
    return {"accuracy": round(mean, 4), "ci95": [round(max(0.0, mean - half), 4), round(min(1.0, mean + half), 4)],
            "groups": groups, "left_out": [g for g in V4_GROUPS if g not in groups]}


def summarise(out: Path) -> dict:
    from agentworld_gym.suites.core import diff_interval, wilson

    per: dict[tuple[str, str], dict] = defaultdict(dict)  # (stage, suite) -> {seed: result}
    for f in sorted((out / "runs").glob("*/*/*.json")):
        r = json.loads(f.read_text())
        per[(r["stage"], r["suite"])][r.get("training_seed")] = r
    stages, pooled = [], {}
    for (stage, suite), runs in sorted(per.items()):
        counts = [wins(r) for r in runs.values()]
        s, n = sum(c[0] for c in counts), sum(c[1] for c in counts)
        lo, hi = wilson(s, n)
        row = {"name": stage, "suite": suite, "seeds": [k for k in runs if k is not None] or None,
               "per_seed": [round(a / b, 4) if b else 0.0 for a, b in counts], "mean": round(s / n, 4) if n else 0.0,
               "ci95": [round(lo, 4), round(hi, 4)], "n": n, "mode": next(iter(runs.values())).get("notes", {}).get("mode")}
        nulls = [r["overall"]["all"].get("best_null") for r in runs.values() if r["overall"]["all"].get("best_null")]
        if nulls:
            row["best_null"] = nulls[0]
        if suite == "bfcl":
            cats: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for r in runs.values():
                for c, (a, b) in _by_category(r).items():
                    cats[c][0] += a
                    cats[c][1] += b
            row["per_category"] = {c: round(a / b, 4) for c, (a, b) in sorted(cats.items())}
            row["bfcl_v4_overall"] = bfcl_v4_overall({c: (a, b) for c, (a, b) in cats.items()})
        stages.append(row)
        pooled[(stage, suite)] = (s, n)
    pairs = [(stage, BASE, suite) for stage, suite in sorted(pooled) if stage != BASE]
    pairs += [(a, b, suite) for a, b in CONTRASTS for suite in SUITES]
    differences = []
    for a, b, suite in pairs:
        if (a, suite) not in pooled or (b, suite) not in pooled:
            continue
        d, lo, hi = diff_interval(*pooled[(a, suite)], *pooled[(b, suite)])
        differences.append({"a": a, "b": b, "suite": suite, "points": round(100 * d, 1),
                            "ci95": [round(100 * lo, 1), round(100 * hi, 1)], "beyond_noise": lo > 0 or hi < 0})
    summary = {"stages": stages, "differences": differences,
               "bfcl_weighting": {k: w for k, (w, _) in V4_GROUPS.items()}, "offline_bfcl_categories": list(OFFLINE_BFCL)}
    _write_json(out / "summary.json", summary)
    return summary


# --------------------------------------------------------------------------------------------
# Overlap audit


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower()) if len(w) > 2}


def _grams(text: str, n: int = 8) -> set[tuple[str, ...]]:
    toks = re.findall(r"[a-z0-9]+", text.lower())
    return {tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)}


def benchmark_domains() -> dict[str, dict[str, set]]:
    """Per benchmark domain: tool names, argument names, entity words and instruction 8-grams."""
    from agentworld_gym.suites import bfcl
    from agentworld_gym.suites import bfcl_multi_turn as mt

    domains: dict[str, dict[str, set]] = defaultdict(lambda: {"tools": set(), "args": set(), "entities": set(), "grams": set()})
    try:
        items = bfcl.load_bfcl(None, None)
        for cat in ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"):
            items += mt.load_multi_turn(None, cat)
        for x in items:
            d = domains[f"bfcl:{x['category']}"]
            for f in x["functions"]:
                d["tools"].add(f["name"].rsplit(".", 1)[-1].lower())
                d["args"] |= {a.lower() for a in f.get("parameters", {}).get("properties", {})}
                d["entities"] |= _words(f["name"])
            question = x.get("question")
            d["grams"] |= _grams(json.dumps(question) if question is not None else "")
    except Exception as e:  # noqa: BLE001 - a missing bfcl-eval only narrows the audit; say so
        print(f"audit: BFCL not available ({e}); left out", file=sys.stderr)
    try:
        from agentworld_gym.suites.tau2 import installed_domains, make_tau2_env

        for name in installed_domains():
            env = make_tau2_env(name)
            try:
                d = domains[f"tau2:{name}"]
                _, info = env.reset(seed=0)  # the tools come from the domain's MCP server
                for tool in info["tools"]:
                    fn = tool.get("function", tool)
                    d["tools"].add(fn["name"].lower())
                    d["args"] |= {p.lower() for p in fn.get("parameters", {}).get("properties", {})}
                    d["entities"] |= _words(fn["name"])
                for task in env.unwrapped.tasks:
                    d["grams"] |= _grams(task.instruction)
            finally:
                env.close()
    except Exception as e:  # noqa: BLE001
        print(f"audit: tau2 not available ({e}); left out", file=sys.stderr)
    return dict(domains)


# names too common to mean a shared domain ("search", "get", "id"): ignored as tool and argument names
GENERIC_ARGS = {"id", "name", "query", "limit", "type", "status", "value", "key", "date", "start", "end", "text", "page", "url"}


def _sample_tasks(theme) -> list:
    from agentworld_gym.synthesis import synthesize_task

    tasks = []
    for level in (1, 2, 3):
        with contextlib.suppress(Exception):  # a theme without a task at this level has nothing to compare
            tasks.append(synthesize_task(theme, difficulty=level, seed=level))
    return tasks


def audit(out: Path, arg_jaccard: float = 0.5, min_shared_args: int = 3, theme_ids: list[str] | None = None,
          domains: dict[str, dict[str, set]] | None = None) -> dict:
    """Pool themes vs benchmark domains. A theme overlaps a domain when it shares a non-generic tool
    name, or at least `min_shared_args` non-generic argument names covering >= `arg_jaccard` of its
    own, or an 8-gram of its synthesized task instructions (levels 1-3) with the domain's questions."""
    from agentworld_gym.envs import registry
    from tqdm import tqdm

    import agentworld_gym  # noqa: F401 - registers the pool

    domains = benchmark_domains() if domains is None else domains
    theme_ids = registry.theme_ids() if theme_ids is None else theme_ids
    rows, excluded = [], []
    for theme_id in tqdm(theme_ids, desc="audit themes", mininterval=5):
        theme = registry.get_theme(theme_id)
        tools = {t.name.lower() for t in theme.toolset} - GENERIC_ARGS
        args = {p.lower() for t in theme.toolset for p in t.parameters.get("properties", {})} - GENERIC_ARGS
        entities = {w for tb in theme.spec.tables for w in _words(tb.name)}
        grams = set().union(*(_grams(t.instruction) for t in _sample_tasks(theme)))
        hits = {}
        for dom, d in domains.items():
            shared_tools = sorted(tools & d["tools"])
            shared_args = sorted(args & (d["args"] - GENERIC_ARGS))
            jac = len(shared_args) / len(args) if args else 0.0
            reasons = {}
            if shared_tools:
                reasons["tools"] = shared_tools
            if len(shared_args) >= min_shared_args and jac >= arg_jaccard:
                reasons["args"] = shared_args
            shared_grams = grams & d["grams"]
            if shared_grams:
                reasons["instruction_8grams"] = sorted(" ".join(g) for g in shared_grams)[:5]
            if reasons:
                reasons["entities"] = sorted(entities & d["entities"])
                hits[dom] = reasons
        if hits:
            excluded.append(theme_id)
            rows.append({"theme": theme_id, "source": registry.get_entry(theme_id).source, "overlaps": hits})
    report = {"themes": len(theme_ids), "excluded": excluded, "n_excluded": len(excluded), "rows": rows,
              "domains": {k: {f: len(v) for f, v in d.items()} for k, d in domains.items()},
              "rule": f"a shared tool name, an 8-gram shared by a synthesized instruction and a benchmark question, or >= {min_shared_args} shared non-generic argument names covering >= {arg_jaccard:.0%} "
                      "of the theme's own (generic names ignored: " + ", ".join(sorted(GENERIC_ARGS)) + ")"}
    _write_json(out / "overlap.json", report)
    return report


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.audit:
        report = audit(args.out)
        print(f"overlap audit: {report['n_excluded']} of {report['themes']} themes overlap a benchmark domain -> {args.out / 'overlap.json'}")
    if args.stage and not args.summary_only:
        evaluate_runs(args)
    if args.stage or args.summary_only:
        summary = summarise(args.out)
        for row in summary["stages"]:
            extra = f"  BFCL V4 overall {row['bfcl_v4_overall']['accuracy']}" if row["suite"] == "bfcl" else ""
            print(f"{row['name']:>12} {row['suite']:>8}  {100 * row['mean']:5.1f}%  [{100 * row['ci95'][0]:.1f}, "
                  f"{100 * row['ci95'][1]:.1f}]  n={row['n']}{extra}")
        for d in summary["differences"]:
            print(f"{d['a']} - {d['b']} on {d['suite']}: {d['points']:+.1f} points {d['ci95']}" + ("" if d["beyond_noise"] else " (inside the noise)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
