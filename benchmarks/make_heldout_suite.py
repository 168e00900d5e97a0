"""Freeze the held-out suite: task files under agentworld_gym/suites/heldout/<theme>.jsonl.

    python benchmarks/make_heldout_suite.py            # one command; re-run it after the pool changes
    python benchmarks/make_heldout_suite.py --v3       # held-out suite v3: the same themes, tasks-v3 rules

Themes come from the composed catalog themes of the generated pool (Toucan themes only where a
category has too few catalog themes that qualify), never from the flagships, so every flagship stays
available for training; the trainer excludes whatever themes have a file here
(`agentworld_gym.suites.core.heldout_themes`). A theme qualifies only if it meets every pool floor: its
nearest neighbour among all registered themes overlaps its {table.column} set by < MAX_OVERLAP, its
write tools enforce >= MIN_RULES kinds of business rule, and it makes a verified task at every
difficulty 1-5. For each L1 category the first `themes_per_category` qualifying themes (sorted by a
seeded hash of their id, so the pick does not lean on alphabetical order) get `tasks_per_level` tasks
per level (mixed kinds); themes already held out (discovery.pool.FROZEN) that still qualify come first, so
re-running after the pool grows keeps the suite as it is (`--fresh` picks anew). Tasks pass the tasks-v2 quality filter: goals, not scripts; every gold call
needed; no answer a cheap strategy gives. Put the printed ids into discovery.pool.FROZEN, so
rebuilding the pool keeps the worlds the suite plays byte-identical.
Writes to a temporary folder first and swaps it in at the end, so an interrupted run changes nothing.

    python benchmarks/make_heldout_suite.py --redo bankbridge-plugin:3   # re-draw one entry only

`--redo THEME:LEVEL` (repeatable) re-draws the suite's level-LEVEL task of THEME from the next seeds
the build does not use, keeping the theme and the kind (graph or programmatic), and takes the first
task that no cheap strategy of benchmarks/bench_null_baselines.py passes (do-nothing, constants,
first id, random, the mode guess) and the oracle does; that one line of the theme's file changes, in
place, so the rest of the suite stays byte-identical and so does every `--episodes N` sample of it
(the sample picks by position, category and level; run on an entry the sample holds, it says so).
Record the printed seed in REDRAWN so a full rebuild draws the same task; agentworld_gym/suites/heldout/
README.md lists the entries re-drawn and why.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import shutil
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from agentworld_gym import envs
from agentworld_gym.env import REPEAT_DRAWS
from agentworld_gym.errors import AgentWorldError
from agentworld_gym.synthesis import LEVELS, person_requests, synthesize_task, task_key
from agentworld_gym.tasks import save_tasks

SUITES = Path(__file__).resolve().parent.parent / "agentworld_gym" / "suites"  # the frozen suites ship in the package (#40)
OUT = SUITES / "heldout"
OUT_V3 = SUITES / "heldout_v3"
FLAGSHIP_WORLD = 7  # the db_seed of the flagship worlds suite v3 plays (training and env.reset use world 0)

# Entries re-drawn after the suite was frozen (`--redo`): (theme, level, seed the build drew it with) ->
# the seed of the task that replaced it. Why each was re-drawn: agentworld_gym/suites/heldout/README.md.
REDRAWN: dict[tuple[str, int, int], int] = {
    ("bankbridge-plugin", 3, 0): 1,  # the mode guess of bench_null_baselines passed seed 0's task ("time-prove")
    ("compound", 2, 0): 1,  # generator-3 worlds: a constant answer of bench_null_baselines passed seed 0's task
    ("mcp-send-email", 2, 0): 1,  # generator-3 worlds: the same
}


@dataclass
class Args:
    themes_per_category: int = 3
    """pool themes held out per L1 category"""
    tasks_per_level: int = 1
    seed: int = 0
    fallback: str = "toucan"
    """theme source drawn from where a category lacks qualifying composed catalog themes ("" for none)"""
    out: str = str(OUT)
    fresh: bool = False
    """ignore the current held-out themes (discovery.pool.FROZEN) instead of keeping those that still qualify"""
    source: str = str(OUT)
    """--v3: the suite whose themes v3 keeps"""


def _order(theme_id: str, seed: int) -> str:
    return hashlib.sha1(f"{seed}|{theme_id}".encode()).hexdigest()


def floors(ids: set[str]) -> dict[str, tuple[float, int]]:
    """{theme id: (its nearest neighbour's {table.column} Jaccard among every registered theme, how many
    kinds of business rule its kept write tools enforce)} for the pool themes in `ids` (from recipes: no world is built)."""
    from agentworld_gym.envs import catalog

    from agentworld_gym.discovery.pipeline import prepare, rule_count
    from agentworld_gym.discovery.pool import OverlapIndex, features_of, flagship_features, load_facts, recipe_source

    facts = load_facts()
    feats, rules = flagship_features(), {}
    for tid, row in tqdm(catalog._ROWS.items(), desc="theme schemas", unit="theme"):
        prep = prepare(recipe_source(row, facts), tid)
        feats[tid] = features_of(prep.spec)
        if tid in ids:
            rules[tid] = rule_count(prep.spec, [t for t in prep.templates if t["name"] in set(row[5])])
    index = OverlapIndex(feats)
    return {tid: (index.nearest(feats[tid], skip=tid)[1], rules[tid]) for tid in ids}


def _seed(theme_id: str, level: int, seed: int) -> int:
    return REDRAWN.get((theme_id, level, seed), seed)


def cheap_wins(task, mode_sample: int = 6, max_turns: int = 20, seed: int = 0) -> list[str]:
    """The strategies of benchmarks/bench_null_baselines.py (same arguments as its defaults) that pass
    `task`, played through AgentWorldEnv as that benchmark plays the held-out suite; "oracle" is listed
    when the gold replay fails (it must pass)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_null_baselines import mode_answer, play

    from agentworld_gym.env import AgentWorldEnv

    mode = mode_answer(envs.get_theme(task.theme), task.difficulty, mode_sample, seed)
    env = AgentWorldEnv(task.theme, max_turns=max_turns)
    try:
        won = play(env, task, mode, seed)
    finally:
        env.close()
    return [name for name, ok in won.items() if ok != (name == "oracle")]


def redo(entry: str, args: Args, tries: int = 200) -> tuple[int, int]:
    """Re-draw the level-LEVEL task of THEME (`entry` = "THEME:LEVEL") in its file under `args.out`, in
    place, by the first seed after the build's that gives another task (so a second --redo of an entry moves
    on from the first). Returns (the build's seed, the new task's seed)."""
    from agentworld_gym.suites.core import heldout_suite
    from agentworld_gym.tasks import Task

    theme_id, _, level_text = entry.rpartition(":")
    if not theme_id or not level_text.isdigit():
        raise SystemExit(f"Expected --redo THEME:LEVEL (e.g. bankbridge-plugin:3), got {entry!r}.")
    level, path = int(level_text), Path(args.out) / f"{theme_id}.jsonl"
    if not path.is_file():
        raise SystemExit(f"Expected a held-out theme (a file {path}), got {theme_id!r}: no such file.")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    tasks = [Task.from_dict(json.loads(line)) for line in lines]
    at = [i for i, t in enumerate(tasks) if t.difficulty == level]
    if len(at) != 1:
        raise SystemExit(f"Expected one level-{level} task in {path}, got {len(at)}: --redo re-draws a suite made with --tasks-per-level 1.")
    i, old = at[0], tasks[at[0]]
    sampled = {t.id for n in (40, 100) for t in heldout_suite(n, args.seed, path=args.out).items}
    if old.id in sampled:
        print(f"note: {old.id} is in the suite's --episodes 40/100 sample (seed {args.seed}); results on that sample no longer apply")
    start = args.seed * 1000  # the seed the build draws the entry with (k = 0 of --tasks-per-level 1)
    theme = envs.get_theme(theme_id)
    for s in range(start + 1, start + 1 + tries):
        try:
            new = synthesize_task(theme, level, s, "mixed")
        except AgentWorldError:
            continue
        if new.kind != old.kind or new.difficulty != level or new.id in {t.id for t in tasks}:  # the entry itself too
            continue
        if won := cheap_wins(new):
            print(f"seed {s}: {new.id} passed by {', '.join(won)}; next seed")
            continue
        lines[i] = new.to_json() + "\n"
        tmp = path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(lines), encoding="utf-8")
        tmp.replace(path)
        print(f"{theme_id} level {level}: {old.id} -> {new.id} (seed {s}): {new.instruction}")
        print(f"record it in REDRAWN: ({theme_id!r}, {level}, {start}): {s},")
        return start, s
    raise SystemExit(f"No level-{level} {old.kind} task of {theme_id} that no cheap strategy passes in seeds {start + 1}..{start + tries}.")


def v3_seed(theme_id: str, level: int, n: int) -> int:
    """The synthesis seed of the n-th try of a v3 request: drawn per theme and level, so that the draws a seed decides
    (which kind a mixed request tries first, rule tasks among them) differ between themes as they do between resets;
    one seed for every theme made 32 of the first freeze's 74 level-5 requests one-call rule tasks at level 1."""
    return int(hashlib.sha1(f"v3|{theme_id}|{level}|{n}".encode()).hexdigest()[:8], 16)


def _distinct_tasks(theme, world: int, args: Args) -> list:
    """`tasks_per_level` tasks per level for the v3 freeze, each a person's request (not the classic request a theme
    with none falls back to) and none repeating another (`task_key`). A request that steps down gives the task the
    lower level's request of the same seed gives; such a request, or one that came out classic, takes the next seeds
    (`v3_seed`) at the level it was made at, so the suite keeps the levels requests reach and asks each question
    once; one for which no seed gives such a task is left out. A theme whose first seed makes no task raises."""
    tasks, seen = [], set()

    def fits(task) -> bool:
        return task is not None and task_key(task) not in seen and task.features.get("requests") != "classic"

    for d in LEVELS:
        for k in range(args.tasks_per_level):
            task = synthesize_task(theme, d, v3_seed(theme.id, d, args.seed * 1000 + k), "mixed", world, fallback=True)
            made = task.difficulty
            for j in range(1, REPEAT_DRAWS + 1):
                if fits(task):
                    break
                try:
                    task = synthesize_task(theme, made, v3_seed(theme.id, d, args.seed * 1000 + k + 100 * j), "mixed", world)
                except AgentWorldError:
                    task = None
            if fits(task):
                seen.add(task_key(task))
                if task.difficulty != d:  # (a rule task asked at level 2 is a one-call level-1 task and says so only here)
                    task = dataclasses.replace(task, features={**task.features, "requested_difficulty": d})
                tasks.append(task)
    return tasks


def freeze_v3(args: Args) -> None:
    """Held-out suite v3 (issue 33: a person's request, depth by dependent lookups): the themes of the v2
    suite (`source`, so the train/held-out split is unchanged) and the flagship themes on world
    FLAGSHIP_WORLD, each with `synthesize_task(theme, level,
    seed, "mixed", fallback=True)` for levels 1-5 under today's rules; a level a theme cannot make at
    the v3 depth floor comes out lower, with `features["requested_difficulty"]`. Written to a temporary
    folder and swapped in at the end, with a README of how it was made. One command, re-run after the
    pool's worlds change (the tasks name values of the worlds they were made on):

        python benchmarks/make_heldout_suite.py --v3
    """
    from agentworld_gym.suites.core import heldout_themes

    # the held-out pool themes (world 0, as v2), and the flagship themes on a world the trainer never sees
    # (db_seed FLAGSHIP_WORLD): pool themes seldom chain the lookups levels 3-5 ask for, flagships do
    flagships = sorted(e.id for e in envs.entries() if e.source == "flagship")
    themes = [(t, 0) for t in sorted(heldout_themes(args.source))] + [(t, FLAGSHIP_WORLD) for t in flagships]
    out = Path(args.out)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    total, made_at, left_out = 0, defaultdict(int), 0
    for theme_id, world in tqdm(themes, desc="themes", unit="theme"):
        try:
            tasks = _distinct_tasks(envs.get_theme(theme_id), world, args)
        except AgentWorldError as exc:
            tqdm.write(f"skip {theme_id}: {str(exc)[:160]}")
            continue
        left_out += len(LEVELS) * args.tasks_per_level - len(tasks)
        save_tasks(tasks, tmp / f"{theme_id}.jsonl")
        total += len(tasks)
        for t in tasks:
            made_at[t.features.get("requested_difficulty", t.difficulty), t.difficulty] += 1
    lines = ["# Held-out suite v3", "", "Made by `python benchmarks/make_heldout_suite.py --v3` (see `freeze_v3` there): the themes of",
             "the v2 suite (world 0, themes the trainer never trains on) and the 20 flagship themes on world",
             f"{FLAGSHIP_WORLD} (`db_seed`; a world the trainer never sees), one task per requested level 1-5 under the tasks-v3",
             "rules (a person's request, depth counted in dependent lookups; `docs/tasks.md`). v2 stays in",
             "`agentworld_gym/suites/heldout` for comparison. Pool themes seldom chain the dependent lookups levels 3-5 ask",
             "for, so their tasks are mostly levels 1-2; the flagship part carries the deep levels.", "",
             f"{total} tasks over {len(list(tmp.glob('*.jsonl')))} themes. Requested level -> level made (a theme that cannot reach a",
             "level's depth floor steps down, as `env.reset` does):", ""]
    lines += [f"- {a} -> {b}: {n}" for (a, b), n in sorted(made_at.items())]
    lines += ["", "Every task is distinct and a person's request. A request that steps down to a lower level gives the task that",
              "level's request of the same seed gives, and a theme with no person's request falls back to the classic one;",
              f"such a request takes the next seeds (up to {REPEAT_DRAWS}) at the level it was made at until its task is new to the",
              f"theme's file and a person's; {left_out} requests gave none and are left out."]
    (tmp / "README.md").write_text("\n".join(lines) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    print(f"{total} tasks over {len(list(out.glob('*.jsonl')))} themes in {out}")


def main(args: Args) -> None:
    from agentworld_gym.envs import catalog

    from agentworld_gym.discovery.pipeline import MIN_RULES
    from agentworld_gym.discovery.pool import FROZEN, MAX_OVERLAP

    fallback = {args.fallback} - {"", "flagship", "catalog"}
    by_cat: dict[str, list[str]] = defaultdict(list)
    for e in envs.entries():
        composed = e.source == "catalog" and isinstance(catalog._ROWS[e.id][4], dict)
        if composed or e.source in fallback:
            by_cat[e.category].append(e.id)
    ok = floors({tid for ids in by_cat.values() for tid in ids})
    kept = set() if args.fresh else FROZEN
    for cat in by_cat:  # held-out themes first, then composed catalog themes, each group in seeded-hash order
        by_cat[cat].sort(key=lambda t: (t not in kept, envs.registry.get_entry(t).source != "catalog", _order(t, args.seed)))
    out = Path(args.out)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    total, short = 0, []
    for cat in tqdm(sorted(by_cat), desc="categories", unit="category"):
        kept = 0
        for theme_id in by_cat[cat]:
            if kept == args.themes_per_category:
                break
            overlap, kinds = ok[theme_id]
            if overlap >= MAX_OVERLAP or kinds < MIN_RULES:
                continue
            try:
                theme = envs.get_theme(theme_id)
                tasks = [synthesize_task(theme, d, _seed(theme_id, d, args.seed * 1000 + k), "mixed")
                         for d in LEVELS for k in range(args.tasks_per_level)]
            except AgentWorldError as exc:
                tqdm.write(f"skip {theme_id}: {str(exc)[:160]}")
                continue
            save_tasks(tasks, tmp / f"{theme_id}.jsonl")
            kept += 1
            total += len(tasks)
            tqdm.write(f"{cat:40s} {theme_id:40s} {len(tasks)} tasks")
        if kept < args.themes_per_category:
            short.append(f"{cat} ({kept})")
    for note in out.glob("*.md"):  # the suite's README (how it was made, entries re-drawn) stays
        shutil.copy2(note, tmp / note.name)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    print(f"{total} tasks over {len(by_cat)} categories in {out}")
    print("held-out themes (discovery.pool.FROZEN): " + " ".join(sorted(p.stem for p in out.glob("*.jsonl"))))
    if short:
        print("categories with fewer themes than asked: " + ", ".join(short))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--themes-per-category", type=int, default=Args.themes_per_category)
    p.add_argument("--tasks-per-level", type=int, default=Args.tasks_per_level)
    p.add_argument("--seed", type=int, default=Args.seed)
    p.add_argument("--fallback", default=Args.fallback)
    p.add_argument("--out", default=Args.out)
    p.add_argument("--fresh", action="store_true", help="pick anew, ignoring the current held-out themes")
    p.add_argument("--redo", action="append", default=[], metavar="THEME:LEVEL",
                   help="re-draw only this entry of the current suite (repeatable); nothing else changes")
    p.add_argument("--v3", action="store_true", help="freeze held-out suite v3 (the v2 themes, tasks-v3 rules) into suites/heldout_v3")
    a = p.parse_args()
    args = Args(a.themes_per_category, a.tasks_per_level, a.seed, a.fallback, a.out, a.fresh)
    if a.v3:
        with person_requests():  # tasks v3 is opt-in (synthesis.persona.enabled)
            freeze_v3(dataclasses.replace(args, out=str(OUT_V3) if a.out == str(OUT) else a.out))
    elif a.redo:
        for entry in a.redo:
            redo(entry, args)
    else:
        main(args)
