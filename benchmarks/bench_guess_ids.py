"""Issue 33's two figures that keep person requests opt-in, per flagship theme and level, with the tasks behind them.

    AGENTWORLD_REQUESTS=person python benchmarks/bench_guess_ids.py [--levels 1,2] [--per-theme 15] [--mode-sample 6]

* mode guess: the most frequent answer of `mode-sample` other tasks of the theme and level (`bench_null_baselines.mode_answer`,
  a guesser who has seen training tasks) submitted with no call, graded by `tasks.verify` on the untouched world
  (what `ConstantAnswerPolicy` does in an episode);
* internal ids: requests naming a table's key value (`persona.internal_ids`), beside those naming codes a person holds
  (`persona.held_code`: an order number, a booking reference, an issue number), which are not counted.
* pairs sharing an answer: of the pairs of tasks of one theme and level that change nothing, the share whose answers are the same
  (averaged over themes): what the mode guess passes about as often when no answer stands out, with far less noise
  than the mode guess itself (one mode answer per theme and level decides it).
Tasks: `per-theme` per flagship theme and level, seeds as `bench_null_baselines.py` draws them (mixed kinds,
`fallback=True`), counted at the level asked for. Much faster than the full null-baseline run (no episodes), so the
same figures can be measured before and after a change on one machine. Lists every task either figure counts.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_null_baselines import mode_answer  # noqa: E402

import agentworld_gym  # noqa: F401,E402  (registers the themes)
from agentworld_gym import envs  # noqa: E402
from agentworld_gym.errors import AgentWorldError  # noqa: E402
from agentworld_gym.suites.core import wilson  # noqa: E402
from agentworld_gym.synthesis import persona as P  # noqa: E402
from agentworld_gym.synthesis import synthesize_task  # noqa: E402
from agentworld_gym.synthesis.facts import facts  # noqa: E402
from agentworld_gym.tasks import verify  # noqa: E402


@dataclass
class Args:
    levels: str = "1,2"
    per_theme: int = 15
    mode_sample: int = 6
    seed: int = 0
    themes: str = ""
    """comma-separated flagship themes ("": all 20)"""
    out: str = "benchmarks/results/guess_ids.md"


def held(theme, fx, text: str) -> list[str]:
    """The ids the request names that are codes a person holds (`persona.held_code`): not counted as internal."""
    if not hasattr(P, "held_code"):  # the tree before held codes were told apart
        return []
    codes = {str(v) for t in theme.spec.tables if P.held_code(t.pk) for v in fx.values(t.name, t.pk)}
    return sorted({w.rstrip(".") for w in re.findall(r"[\w@.+-]+", text)} & codes)


def share(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {k / max(n, 1):.3f} [{lo:.3f}, {hi:.3f}]"


def shared_pairs(rows: list[dict]) -> float:
    """Per theme, the share of pairs of its tasks that change nothing with the same answer, averaged over themes (a
    write task's answer, often the count of records changed, passes only with the writes made)."""
    shares = []
    for theme in sorted({r["theme"] for r in rows}):
        counts = Counter(json.dumps(r["answer"], sort_keys=True, default=str) for r in rows if r["theme"] == theme and not r.get("writes") and r["answer"] is not None)
        n = sum(counts.values())
        if n > 1:
            shares.append(sum(k * (k - 1) for k in counts.values()) / (n * (n - 1)))
    return sum(shares) / max(len(shares), 1)


def main(args: Args) -> None:
    if not P.enabled():
        raise SystemExit("run with AGENTWORLD_REQUESTS=person (the figures are of person requests)")
    themes = args.themes.split(",") if args.themes else sorted(e.id for e in envs.entries() if e.source == "flagship")
    levels = [int(x) for x in args.levels.split(",")]
    rows = []
    start = time.process_time()
    for theme_id in themes:
        theme = envs.get_theme(theme_id)
        for level in levels:
            mode = mode_answer(theme, level, args.mode_sample, args.seed)
            for k in range(args.per_theme):
                try:
                    task = synthesize_task(theme, level, args.seed * 1000 + level * 100 + k, "mixed", fallback=True)
                except AgentWorldError:
                    continue
                fx = facts(theme, task.db_seed)
                untouched = fx.initial_hash(task.state_tables) if task.state_tables else None
                ids = P.internal_ids(theme, fx, task.instruction)
                codes = held(theme, fx, task.instruction)
                guessed = mode is not None and verify(task, mode, untouched, True).passed
                rows.append({"theme": theme_id, "level": level, "made": task.difficulty, "kind": task.kind,
                             "requests": task.features.get("requests", "person"), "writes": task.state_hash is not None, "mode": guessed, "ids": ids, "codes": codes,
                             "answer": task.answer, "instruction": task.instruction})
        print(theme_id, f"{time.process_time() - start:.0f}s cpu", flush=True)
    lines = ["# Mode guess and internal ids, flagship themes (person requests)", "",
             f"- {args.per_theme} tasks per theme and level (mixed, fallback=True, counted at the level asked for); mode guess from "
             f"{args.mode_sample} other tasks of the theme and level; cells: k/n = share [95% Wilson interval]; "
             f"CPU {time.process_time() - start:.0f} s", "",
             "| level | n | made at the level | classic fallback | mode guess | pairs sharing an answer | internal ids | naming held codes only (not counted) |",
             "|---|---|---|---|---|---|---|---|"]
    for level in levels:
        g = [r for r in rows if r["level"] == level]
        internal = [r for r in g if set(r["ids"]) - set(r["codes"])]
        codes = [r for r in g if r["codes"] and not set(r["ids"]) - set(r["codes"])]
        at = sum(r["made"] == level for r in g)
        classic = sum(r["requests"] == "classic" for r in g)
        lines.append(f"| {level} | {len(g)} | {share(at, len(g))} | {share(classic, len(g))} | {share(sum(r['mode'] for r in g), len(g))} | {shared_pairs(g):.2%} | {share(len(internal), len(g))} | {len(codes)} |")
    for level in levels:
        g = [r for r in rows if r["level"] == level]
        lines += ["", f"## Level {level}", "",
                  "- internal ids by theme: " + json.dumps(Counter(r["theme"] for r in g if set(r["ids"]) - set(r["codes"]))),
                  "- mode guess by theme: " + json.dumps(Counter(r["theme"] for r in g if r["mode"])), ""]
        for r in g:
            if r["mode"]:
                lines.append(f"- mode guess passes ({r['theme']}, {r['kind']}, answer {r['answer']!r}): {r['instruction']}")
        for r in g:
            if set(r["ids"]) - set(r["codes"]):
                lines.append(f"- ids {sorted(set(r['ids']) - set(r['codes']))} ({r['theme']}, {r['kind']}, made at {r['made']}, "
                             f"{r['requests']}): {r['instruction']}")
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).write_text(text)
    Path(args.out).with_suffix(".json").write_text(json.dumps({"args": asdict(args), "rows": rows}, indent=0, default=str))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in asdict(Args()).items():
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    main(Args(**vars(p.parse_args())))
