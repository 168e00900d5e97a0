"""Business-rule coverage of the pool (issue 12 item 4), written to benchmarks/results/pool_rules.{json,md}.

    python benchmarks/bench_rules.py               # every registered pool theme (rule scan) + a task sample
    python benchmarks/bench_rules.py --sample 40   # themes sampled for the task measures

Figures:
- pool themes whose write tools enforce (and whose prompt states) >= 2 kinds of rule, and the count of
  stated rules; themes per rule kind; held-out themes (frozen, tools unchanged) listed apart;
- rule tasks on a seeded theme sample: how many themes make each shape (refusal / allowed / path), and
  the verifier's pass rate for the gold replay, do-nothing, and every cheap answer (constants, the
  first id of the instruction, the theme's frequent answers), with n and a 95% Wilson interval;
- the share of default (mixed) tasks whose gold path calls a rule-carrying write, beside the rules kind.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(HERE / "results" / "pool_rules"))
    ap.add_argument("--check", type=int, default=1, help="1: check_env + oracle on every theme given rule companions and on --check-sample others")
    ap.add_argument("--check-sample", type=int, default=100)
    a = ap.parse_args()
    import dataclasses

    from agentworld_gym.envs import catalog, get_theme
    from tqdm import tqdm

    from agentworld_gym.discovery.build import attach_rules
    from agentworld_gym.discovery.pipeline import MIN_RULES, prepare, rule_count
    from agentworld_gym.discovery.pool import load_facts, recipe_source
    from agentworld_gym.errors import TaskError
    from agentworld_gym.suites.core import heldout_themes, wilson
    from agentworld_gym.synthesis import DO_NOTHING, cheap_answers, synthesize_task
    from agentworld_gym.synthesis.facts import facts as facts_of
    from agentworld_gym.tasks import verify

    t0 = time.perf_counter()
    facts = load_facts()
    frozen = heldout_themes()
    kinds = collections.Counter()
    counts, stated, grown, blocked = {}, {}, [], []
    for tid, row in tqdm(sorted(catalog._ROWS.items()), desc="rule scan", unit="theme"):
        prep = prepare(recipe_source(row, facts), tid)
        kept = [t for t in prep.templates if t["name"] in set(row[5])]
        counts[tid] = rule_count(prep.spec, kept)
        if any(t.get("companion") == "rules" for t in kept):
            grown.append(tid)
        if any("children" in t.get("rules", ()) for t in kept):
            blocked.append(tid)
        spec = attach_rules(dataclasses.replace(prep.spec, rules=()), kept)
        stated[tid] = len(spec.rules)
        for m in {m for t in kept for m in t.get("rules", ())}:
            kinds[m] += 1
    n = len(counts)
    below = sorted(t for t, c in counts.items() if c < MIN_RULES)
    res: dict = {"themes": n, "tools": sum(len(r[5]) for r in catalog._ROWS.values()),
                 "themes_ge_2_rule_kinds": sum(c >= MIN_RULES for c in counts.values()),
                 "themes_ge_2_stated_rules": sum(c >= 2 for c in stated.values()),
                 "below_floor": below, "below_floor_heldout": sorted(set(below) & frozen),
                 "themes_per_rule_kind": dict(kinds.most_common()), "scan_seconds": round(time.perf_counter() - t0, 1)}

    paths = 0
    for tid in tqdm(blocked, desc="path tasks", unit="theme"):  # themes with a delete that children can block
        try:
            synthesize_task(get_theme(tid), 3, 0, kind="rules")
            paths += 1
        except TaskError:
            pass
    res["path_tasks"] = {"themes_with_a_blocking_delete": len(blocked), "themes_making_a_path_task": paths}
    rng = random.Random(a.seed)
    sample = rng.sample(sorted(set(counts) - frozen), min(a.sample, n))
    shapes = collections.Counter()
    themes_by_shape = collections.defaultdict(set)
    gold = nothing = cheap = cheap_n = 0
    mixed_rule = mixed_n = 0
    for tid in tqdm(sample, desc="rule tasks", unit="theme"):
        theme = get_theme(tid)
        marked = {t["name"] for t in theme.templates if t.get("rules")}
        for level, seeds in ((1, (0, 1, 2, 3)), (3, (0, 1))):
            for s in seeds:
                try:
                    task = synthesize_task(theme, level, s, kind="rules")
                except TaskError:
                    continue
                shape = task.features["rule_task"]
                shapes[shape] += 1
                themes_by_shape[shape].add(tid)
                fx = facts_of(theme, task.db_seed)
                initial = fx.initial_hash(task.state_tables) if task.state_hash is not None else None
                gold += verify(task, task.answer if task.answer_type != "none" else "done", task.state_hash, True).passed
                nothing += any(verify(task, x, initial, True).passed for x in DO_NOTHING)
                for c in cheap_answers(theme, task):
                    cheap_n += 1
                    cheap += verify(task, c, initial, True).passed
        for s in range(4):  # the default kind: does its gold path call a write that a rule guards?
            try:
                task = synthesize_task(theme, 3, s, kind="mixed", fallback=True)
            except TaskError:
                continue
            mixed_n += 1
            mixed_rule += any(c["name"] in marked for c in task.solution)
    total = sum(shapes.values())
    res["tasks"] = {"sample_themes": len(sample), "made": total, "by_shape": dict(shapes),
                    "themes_making_shape": {k: len(v) for k, v in themes_by_shape.items()},
                    "gold_pass": [gold, total, wilson(gold, total)], "do_nothing_pass": [nothing, total, wilson(nothing, total)],
                    "cheap_answer_pass": [cheap, cheap_n, wilson(cheap, cheap_n)],
                    "mixed_tasks_calling_a_rule_guarded_write": [mixed_rule, mixed_n, wilson(mixed_rule, mixed_n)]}
    res["themes_given_rule_companions"] = len(grown)
    if a.check:
        res["check_env"] = check_themes(grown + rng.sample(sorted(set(counts) - set(grown)), min(a.check_sample, n - len(grown))),
                                        Path(a.out).with_name("pool_rules_check.jsonl"))
    res["seconds"] = round(time.perf_counter() - t0, 1)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    T = res["tasks"]

    def rate(x):
        k, m, (lo, hi) = x
        return f"{k} / {m} ({k / m:.1%}, 95% CI {lo:.1%}-{hi:.1%})" if m else "0 / 0"

    lines = ["# Pool business rules", "",
             f"{n} registered pool themes ({res['tools']} tools), {res['seconds']} s. Rule kinds: terminal / unchanged (state), children / unique / "
             "references (integrity), ownership, balance / nonneg / textcap (limits).", "",
             "| measure | value | target |", "|---|---|---|",
             f"| themes whose write tools enforce >= 2 kinds of rule (stated in the prompt) | {res['themes_ge_2_rule_kinds']} / {n} "
             f"({res['themes_ge_2_rule_kinds'] / n:.1%}) | 100% |",
             f"| themes stating >= 2 rules | {res['themes_ge_2_stated_rules']} / {n} ({res['themes_ge_2_stated_rules'] / n:.1%}) | 100% (was 45.5%) |",
             f"| below the floor (all held-out, frozen) | {len(below)}: {', '.join(below) or '-'} | 0 outside held-out |",
             f"| rule tasks made on {T['sample_themes']} sampled themes (level 1: seeds 0-3; level 3: seeds 0-1) | {T['made']}: {T['by_shape']} | |",
             f"| themes making a refusal / allowed / path task (of the sample) | {T['themes_making_shape']} | |",
             f"| whole pool: themes with a delete that children block / that make a path task (seed 0) | {res['path_tasks']['themes_with_a_blocking_delete']} / "
             f"{res['path_tasks']['themes_making_a_path_task']} | |",
             f"| rule tasks: gold replay passes | {rate(T['gold_pass'])} | 100% |",
             f"| rule tasks: do-nothing passes | {rate(T['do_nothing_pass'])} | 0 |",
             f"| rule tasks: a cheap answer passes (constants, first id, frequent answers) | {rate(T['cheap_answer_pass'])} | 0 |",
             f"| default mixed tasks (level 3) whose gold calls a rule-guarded write | {rate(T['mixed_tasks_calling_a_rule_guarded_write'])} | |",
             (f"| check_env + oracle (seeds 0, 1) on the {res['themes_given_rule_companions']} themes given rule companions and "
              f"{a.check_sample} others | {res['check_env']['passed']} / {res['check_env']['checked']} pass | all |" if a.check else
              "| check_env + oracle | not run here (`--check 0`); every pool theme: `bench_pool.py`, `pool.md` | all |"),
             "", "Themes per rule kind:", ""] + [f"- {k}: {v}" for k, v in res["themes_per_rule_kind"].items()]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def check_themes(ids: list[str], journal: Path) -> dict:
    """check_env + the oracle on each theme (resumable journal, one line per theme)."""
    import gymnasium as gym
    from tqdm import tqdm

    from agentworld_gym.discovery.pool import read_journal
    from agentworld_gym.utils.check import check_env

    done = read_journal(journal)
    with journal.open("a") as log:
        for tid in tqdm([i for i in ids if i not in done], desc="check_env", unit="theme"):
            try:
                check_env(gym.make(f"AgentWorld/{tid}-v0"), seeds=(0, 1))
                rec = {"id": tid, "ok": True}
            except Exception as exc:  # noqa: BLE001  a failing theme is a result
                rec = {"id": tid, "ok": False, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            done[tid] = rec
    recs = [done[i] for i in ids if i in done]
    return {"checked": len(recs), "passed": sum(r["ok"] for r in recs), "failed": [r for r in recs if not r["ok"]][:20]}


if __name__ == "__main__":
    main()
