"""World realism benchmark: do the generated worlds hold values a real service would, and hold together?

    python benchmarks/bench_world_realism.py                  # the whole pool and the flagships, before and after
    python benchmarks/bench_world_realism.py --sample 50      # a seeded sample first

For every theme the world (db_seed 0) is built twice: by this tree's generator ("after") and by the
generator of `--before` (default: the commit this branch left main at), run in a throwaway git worktree
in a subprocess; both worlds are measured by this tree's checks (agentworld_gym.semantics):

- type violations per semantic type: typed cells (emails, phones, airports, currencies, people, titles,
  ...) whose value is not plausible for the type;
- order and consistency violations: reversed start/end pairs found by the general rule over names and
  value kinds, children created before their parents, statuses disagreeing with the columns recording
  their events, totals that are not the sum of their lines, counts that are not the rows they count;
- lorem share: text cells made only of dictionary filler words none of which is the theme's own;
- names match content, per source: the share of themes whose every table shares a stem with what the
  theme says it is (its id, title and label, the real server's description and its tools' own
  descriptions; the flagship's description);
- world build cost: seconds of `build_database` per theme, before and after, in the same run.

Results: benchmarks/results/world_realism.{json,md}; per-theme records in a resumable journal
(world_realism.jsonl in the world cache). Progress bars on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, fields
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CHECKS = ("order", "lineage", "status", "totals", "counts")


@dataclass
class Args:
    sample: int = 0
    """measure a seeded sample of this many pool themes (0 = every theme); the flagships are always in"""
    seed: int = 0
    before: str = ""
    """git ref of the generator to compare with; default: the merge base of HEAD and main"""
    out: str = str(HERE / "results" / "world_realism")
    """results prefix (.json and .md)"""
    journal: str = ""
    """per-theme records (resume); default: world_realism-<before>.jsonl in the world cache"""
    batch: int = 100
    """themes per before/after batch (the two generators alternate, so machine load hits both alike)"""


# ---------------------------------------------------------------------------------------- building

# Run by both trees: build each theme's spec and world, time build_database, dump spec + database.
_DUMP = r"""
import json, sys, time
from pathlib import Path
ids, out = json.loads(sys.argv[1]), Path(sys.argv[2])
from agentworld_gym.world import build_database
from agentworld_gym.envs import get_theme, FLAGSHIPS
from agentworld_gym.discovery.pipeline import prepare
from agentworld_gym.discovery.pool import load_facts, recipe_source
rows = {r[0]: r for r in json.loads(Path("envs/data/pool_index.json").read_text())["themes"]}
facts = load_facts()
for tid in ids:
    if tid not in FLAGSHIPS and tid not in rows:
        continue  # a theme this tree's pool does not hold (added or dropped since): measured on the other side only
    spec = get_theme(tid).spec if tid in FLAGSHIPS else prepare(recipe_source(rows[tid], facts), tid).spec
    build_database(spec).close()  # warm: imports and caches are not what is compared
    t0 = time.perf_counter()
    conn = build_database(spec)
    seconds = time.perf_counter() - t0
    (out / f"{tid}.sqlite").write_bytes(conn.serialize())
    tools = [t.description for t in get_theme(tid).toolset] if tid in FLAGSHIPS else []  # what this tree's flagship tools say
    (out / f"{tid}.json").write_text(json.dumps({"spec": spec.to_dict(), "seconds": seconds, "tools": tools}, default=str))
"""


def before_tree(ref: str) -> Path:
    """A throwaway worktree of `ref` whose package sees its own envs/, wrappers/ and suites/ (the
    editable install maps those to this tree)."""
    tree = Path(tempfile.mkdtemp(prefix="world-before-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), ref], check=True, capture_output=True)
    for link, target in (("envs", "../envs"), ("wrappers", "../wrappers"), ("suites", "../benchmarks/suites")):
        if not (tree / "agentworld_gym" / link).exists():  # trees after issue #40 hold suites/ in the package
            (tree / "agentworld_gym" / link).symlink_to(target)
    return tree


def dump(tree: Path, ids: list[str], out: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(tree), "AGENTWORLD_NO_CATALOG": "1"}
    subprocess.run([sys.executable, "-c", _DUMP, json.dumps(ids), str(out)], cwd=tree, env=env, check=True)


# ---------------------------------------------------------------------------------------- measuring


def measure(spec_dict: dict, blob: bytes, said: str) -> dict:
    import sqlite3

    from agentworld_gym import semantics
    from agentworld_gym.world import ThemeSpec

    spec = ThemeSpec.from_dict(spec_dict)
    conn = sqlite3.connect(":memory:")
    conn.deserialize(blob)
    v = semantics.violations(conn, limit=3)
    types = semantics.type_report(spec, conn)
    cells, lorem, lorem_examples = semantics.lorem_report(spec, conn)
    conn.close()
    matched = table_names_match(spec, said)
    return {"violations": {k: v["n_" + k] for k in CHECKS}, "violation_examples": [e for k in CHECKS for e in v[k][:1]],
            "types": types, "text_cells": cells, "lorem": lorem, "lorem_examples": lorem_examples,
            "tables": len(matched), "tables_matched": sum(matched)}


def _stems(text: str) -> set[str]:
    from agentworld_gym.semantics import singular, stem

    # camelCase split ('getUserProfile': get, user, profile) and each word whole too: 'YouTube' is 'youtube', not 'you tube'
    words = re.findall(r"[a-z][a-z0-9]+", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).lower()) + re.findall(r"[a-z][a-z0-9]+", text.lower())
    return {stem(singular(w)) for w in words if len(w) > 2}


def table_names_match(spec, said: str) -> list[bool]:
    """For each table: does a word of its name (or of its entity's synonyms in the entity library)
    share a stem with what the theme says it is?"""
    from agentworld_gym.discovery.entities import ENTITIES
    from agentworld_gym.discovery.infer import _SHORT
    from agentworld_gym.semantics import singular

    synonyms: dict[str, set[str]] = {}
    for e in ENTITIES.values():
        synonyms.setdefault(e.table, set()).update(e.words)
    words = _stems(said)

    def own(name: str) -> set[str]:  # a table's words, short forms spelled out as the pipeline spells them ('repos': repository)
        parts = name.split("_")
        return _stems(" ".join(parts + [_SHORT.get(singular(w), "").replace("_", " ") for w in parts]))

    return [bool((own(t.name) | {stem_ for w in synonyms.get(t.name, ()) for stem_ in _stems(w)}) & words) for t in spec.tables]


def said_of(tid: str, row, facts, spec_dict: dict, tools: list[str] | None = None) -> str:
    """What a theme says it is: id, title and label (a catalog theme's category only); a catalog theme's server description; a Toucan
    theme's tools' own descriptions; a flagship's description and its tools' docstrings."""
    # a composed catalog theme's label lists its own tables ("category: a, b, c"): only the category is what it says
    parts = [tid, spec_dict["title"], spec_dict["label"].split(":")[0] if row is not None and isinstance(row[4], dict) else spec_dict["label"]]
    if row is None:
        from agentworld_gym.envs import get_theme

        parts += [spec_dict["description"], *(tools if tools is not None else (t.description for t in get_theme(tid).toolset))]
    elif isinstance(row[4], dict):
        parts += [row[4]["name"], row[4]["about"]]
    elif row[3] == "toucan":
        name, labels, facts_tools = facts[int(row[4])]
        parts += [name, *labels] + [t[3] for t in facts_tools if len(t) > 3]
        parts += [str(s.get("description", "")) for t in facts_tools for s in t[1].values() if isinstance(s, dict)]
    return " ".join(parts)


# ---------------------------------------------------------------------------------------- summary


def summarise(records: list[dict]) -> dict:
    res: dict = {"themes": len({r["id"] for r in records})}
    for side in ("before", "after"):
        rs = [r[side] for r in records if side in r]
        types: dict = defaultdict(lambda: [0, 0])
        for r in rs:
            for k, t in r["types"].items():
                types[k][0] += t["cells"]
                types[k][1] += t["implausible"]
        typed = sum(c for c, _ in types.values())
        bad = sum(b for _, b in types.values())
        by_source: dict = defaultdict(list)
        for rec in records:
            if side in rec:
                by_source[rec["source"]].append(rec[side])
        text = sum(r["text_cells"] for r in rs)
        res[side] = {
            "themes": len(rs),
            "violations": {k: sum(r["violations"][k] for r in rs) for k in CHECKS},
            "themes_with_violations": sum(any(r["violations"].values()) for r in rs),
            "typed_cells": typed, "typed_plausible": round(1 - bad / typed, 5) if typed else None,
            "types": {k: {"cells": c, "implausible": b, "plausible": round(1 - b / c, 4) if c else None} for k, (c, b) in sorted(types.items())},
            "text_cells": text, "lorem_cells": sum(r["lorem"] for r in rs), "lorem_share": round(sum(r["lorem"] for r in rs) / text, 5) if text else None,
            "names_match_content": {src: {"themes": len(v), "all_tables": round(sum(r["tables_matched"] == r["tables"] for r in v) / len(v), 4),
                                          "tables": round(sum(r["tables_matched"] for r in v) / max(1, sum(r["tables"] for r in v)), 4)}
                                    for src, v in sorted(by_source.items())},
            "build_seconds": round(sum(r["seconds"] for r in rs), 2),
            "examples": {"violations": [e for r in rs for e in r["violation_examples"]][:10], "lorem": [e for r in rs for e in r["lorem_examples"]][:10],
                         "implausible": [e for r in rs for t in r["types"].values() for e in t["examples"]][:10]},
        }
    both = [r for r in records if "before" in r and "after" in r]  # the cost compares the themes both sides build
    if sum(r["before"]["seconds"] for r in both):
        res["build_cost_ratio"] = round(sum(r["after"]["seconds"] for r in both) / sum(r["before"]["seconds"] for r in both), 3)
    return res


def table(res: dict) -> str:
    b, a = res["before"], res["after"]
    lines = [f"World realism over {b['themes']:,} themes before and {a['themes']:,} after (db_seed 0; before = {res['before_ref']}, "
             "after = this tree; each side's own pool)", "",
             "| measure | before | after | target |", "|---|---:|---:|---|"]
    for k in CHECKS:
        lines.append(f"| {k} violations | {b['violations'][k]:,} | {a['violations'][k]:,} | 0 |")
    lines.append(f"| themes with any violation | {b['themes_with_violations']:,} | {a['themes_with_violations']:,} | 0 |")
    lines.append(f"| typed cells plausible | {b['typed_plausible']:.2%} of {b['typed_cells']:,} | {a['typed_plausible']:.2%} of {a['typed_cells']:,} | 100% |")
    lines.append(f"| lorem share of text cells | {b['lorem_share']:.2%} of {b['text_cells']:,} | {a['lorem_share']:.2%} of {a['text_cells']:,} | <= 1% |")
    for src in a["names_match_content"]:
        nb, na = b["names_match_content"].get(src, {}), a["names_match_content"][src]
        lines.append(f"| names match content: {src} (themes with every table / tables) | {nb.get('all_tables', 0):.1%} / {nb.get('tables', 0):.1%} "
                     f"| {na['all_tables']:.1%} / {na['tables']:.1%} | >= 90% |")
    lines.append(f"| world build seconds (sum) | {b['build_seconds']} | {a['build_seconds']} | after <= 1.5x before (themes on both sides): {res.get('build_cost_ratio')}x |")
    lines += ["", "| semantic type | cells after | plausible before | plausible after |", "|---|---:|---:|---:|"]
    for k, t in a["types"].items():
        tb = b["types"].get(k, {})
        lines.append(f"| {k} | {t['cells']:,} | {tb.get('plausible') if tb.get('plausible') is not None else '-'} | {t['plausible']} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- main


def main(args: Args) -> dict:
    from agentworld_gym.envs import FLAGSHIPS
    from tqdm import tqdm

    from agentworld_gym.discovery.pool import load_facts
    from agentworld_gym.world import cache_dir

    before = args.before or subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], check=True, capture_output=True, text=True).stdout.strip()
    before = subprocess.run(["git", "-C", str(ROOT), "rev-parse", before], check=True, capture_output=True, text=True).stdout.strip()
    rows = {r[0]: r for r in json.loads((ROOT / "envs" / "data" / "pool_index.json").read_text())["themes"]}
    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{before}:envs/data/pool_index.json"], check=True, capture_output=True, text=True).stdout
    before_rows = {r[0]: r for r in json.loads(shown)["themes"]}
    side_rows = {"before": before_rows, "after": rows}
    pool = sorted(set(rows) | set(before_rows))  # each side measures the pool it holds (themes dropped or added since)
    if args.sample:
        pool = sorted(random.Random(args.seed).sample(pool, min(args.sample, len(pool))))
    ids = sorted(FLAGSHIPS) + pool
    facts = load_facts()
    journal = Path(args.journal or cache_dir() / f"world_realism-{before[:10]}.jsonl")
    journal.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if journal.exists():
        for line in journal.read_text().splitlines():
            try:
                rec = json.loads(line)
                done[rec["id"]] = rec
            except (json.JSONDecodeError, KeyError):
                continue  # a torn last line is redone
    todo = [t for t in ids if t not in done]
    tree = before_tree(before) if todo else None
    try:
        with journal.open("a") as log, tqdm(total=len(ids), initial=len(ids) - len(todo), desc="world realism", unit="theme") as bar:
            for i in range(0, len(todo), args.batch):
                chunk = todo[i: i + args.batch]
                with tempfile.TemporaryDirectory() as b_dir, tempfile.TemporaryDirectory() as a_dir:
                    dump(tree, chunk, Path(b_dir))
                    dump(ROOT, chunk, Path(a_dir))
                    for tid in chunk:
                        row = rows.get(tid) or before_rows.get(tid)
                        rec = {"id": tid, "source": row[3] if row else "flagship"}
                        for side, d in (("before", b_dir), ("after", a_dir)):
                            if not (Path(d) / f"{tid}.json").exists():
                                continue  # not in this side's pool
                            meta = json.loads((Path(d) / f"{tid}.json").read_text())
                            said = said_of(tid, side_rows[side].get(tid), facts, meta["spec"], meta.get("tools") if tid not in side_rows[side] else None)
                            rec[side] = {**measure(meta["spec"], (Path(d) / f"{tid}.sqlite").read_bytes(), said), "seconds": meta["seconds"]}
                        log.write(json.dumps(rec) + "\n")
                        log.flush()
                        done[tid] = rec
                        bar.update(1)
    finally:
        if tree is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
    res = {"before_ref": before, "sample": args.sample, "seed": args.seed, **summarise([done[t] for t in ids])}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(res, indent=1) + "\n")
    text = table(res)
    out.with_suffix(".md").write_text(text + "\n")
    print(text)
    return res


def parse_args(argv=None) -> Args:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in fields(Args):
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    return Args(**vars(p.parse_args(argv)))


if __name__ == "__main__":
    main(parse_args())
