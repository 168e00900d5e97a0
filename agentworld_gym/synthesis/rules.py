"""Rule tasks: tasks that exercise a theme's business rules (the ones its write tools enforce and its
system prompt states, see discovery.build.attach_rules).

Three shapes, all verified like every task (gold replay, whole-world state check, cheap answers):

* refusal: the user asks for a change a rule forbids on the named record (change a closed record,
  delete one that still has children, write past a limit, an update that changes nothing), and asks,
  if the rules do not allow it, for a fact about that record the agent must look up (its owner or
  another field). The world must stay unchanged and the answer is the looked-up fact, so doing
  nothing or answering a constant fails.
* allowed: the same request on a record the rules allow; the change must be made (state check).
  Its wording is the refusal's, so the agent cannot tell the two apart without checking; half of
  the one-record tasks are refusals and half allowed.
* path: "remove X along with its Y": deleting X directly is refused while children refer to it,
  so the gold path lists the children, removes each, and only then removes X.

The synthesizer reads the rule marks of the forged tools' template specs (`Theme.templates`, set by
discovery.pipeline.forge_theme), never a theme's specifics; hand-written themes make no rule task.
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from ..errors import TaskError
from ..tasks import Task
from ..theme import Theme, humanize
from ..world import sql_name
from . import persona as P
from . import wording as W
from .facts import facts
from .quality import quality_problems

SHAPES = ("refusal", "allowed", "path")


def _noun(table: str) -> str:
    from ..theme import singular

    return humanize(singular(table))


def _templates(theme: Theme) -> dict[str, dict]:
    """The rule-carrying template of each forged write tool, by tool name (empty for hand-written themes)."""
    return {t["name"]: t for t in theme.templates if t.get("rules")}


def _getter(theme: Theme, table: str) -> dict | None:
    """The template of a tool that reads one record of `table` by its key alone."""
    for t in theme.templates:
        if t["kind"] == "get" and t["table"] == table and [p["role"] for p in t["params"] if p.get("required")] == ["key"]:
            return t
    return None


def _key_param(t: dict) -> dict | None:
    req = [p for p in t["params"] if p.get("required")]
    key = next((p for p in t["params"] if p["role"] == "key"), None)
    return key if key is not None and all(p is key or p["role"] == "value" for p in req) else None


def _fact(theme: Theme, table: str, row: dict, rng, db_seed: int, written: set) -> tuple[str, object] | None:
    """A field of `row` the agent must look up: its owner (a parent key) first, else a text or number
    field that varies across records (never the key, a status, a value with few distinct values, or a
    column the request names, whose value the instruction would give away). Tasks v3 never asks for the owner: a
    person does not ask for "the task list id of the task titled ...", and a world with few owners lets a guesser
    who has seen other tasks give it (2 of the 6 cheap-strategy wins on the third v3 freeze were such answers)."""
    fx = facts(theme, db_seed)
    cols = theme.spec.table(table).columns
    cols = [c for c in cols if c.name not in written]
    owners = [c.name for c in cols if c.gen == "fk" and row.get(c.name) is not None]
    if owners and not P.enabled():
        return owners[0], row[owners[0]]
    others = [c.name for c in cols if c.gen not in ("choice", "id", "fk") and isinstance(row.get(c.name), (str, int, float))
              and not isinstance(row.get(c.name), bool) and len(fx.values(table, c.name)) >= 8]
    if not others:
        return None
    c = others[int(rng.integers(len(others)))]
    return c, row[c]


def _request(t: dict, noun: str, key, values: dict) -> str:
    if t["kind"] == "cancel":
        return f"Mark {noun} {key} as {t['value']}."
    if t["kind"] == "delete":
        return f"Delete {noun} {key}."
    what = " and ".join(f"the {W.field_name(c)} to {v}" for c, v in values.items())
    return f"For {noun} {key}, set {what}."


def _candidates(theme: Theme, t: dict, rng, db_seed: int) -> list[tuple[str, dict, dict, dict]]:
    """(rule, row, arguments, written values) for calls of write template `t` on single records: rule
    is the rule the call breaks, or "" for an allowed call."""
    fx = facts(theme, db_seed)
    table = t["table"]
    pk = theme.spec.table(table).pk
    key = _key_param(t)
    if key is None:
        return []
    cur = fx._conn.execute(f'SELECT * FROM {sql_name(table)} ORDER BY 1')
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    if not rows:
        return []
    values_p = [p for p in t["params"] if p["role"] == "value" and p.get("required")]
    out = []
    for row in [rows[int(i)] for i in rng.choice(len(rows), size=min(6, len(rows)), replace=False)]:
        args = {key["name"]: row[pk]}
        vals = {}
        broken = ""
        if t["kind"] == "update" and values_p:
            p = values_p[0]
            col = p["column"]
            if "enum" in p["schema"]:
                other = [v for v in p["schema"]["enum"] if v != row.get(col)]
                v = other[int(rng.integers(len(other)))] if other and rng.random() < 0.7 else row.get(col)
            elif col in t.get("nonneg", ()) and rng.random() < 0.5:
                v = int(t["upper"][col]) * 3  # past the ceiling the prompt states
            elif isinstance(row.get(col), (int, float)) and not isinstance(row.get(col), bool):
                v = row[col] + 1 if rng.random() < 0.7 else row[col]
            else:
                continue
            if v is None or len(values_p) > 1:
                continue
            args[p["name"]] = v
            vals[col] = v
            if "terminal" in t.get("rules", ()) and row.get(t["terminal"][0]) in t["terminal"][1]:
                broken = "terminal"
            elif col in t.get("nonneg", ()) and isinstance(v, (int, float)) and not 0 <= v <= t["upper"][col]:
                broken = "nonneg"
            elif "unchanged" in t.get("rules", ()) and row.get(col) == v:
                broken = "unchanged"
        elif t["kind"] == "cancel" and not values_p:
            if "terminal" in t.get("rules", ()) and row.get(t["terminal"][0]) in t["terminal"][1]:
                broken = "terminal"
            elif row.get(t["column"]) == t["value"]:
                continue  # "already cancelled" is a refusal too, but terminal covers the common case
        elif t["kind"] == "delete" and not values_p:
            kids = [(c, f) for c, f in t.get("children", ())]
            if any(fx.count(c, f, row[pk]) for c, f in kids):
                broken = "children"
        else:
            continue
        out.append((broken, row, args, vals))
    return out


def _task(theme: Theme, shape: str, rule, seed: int, db_seed: int, instruction: str, solution: list[dict], difficulty: int, **kw) -> Task:
    extra = kw.pop("features", {})
    return Task(id=f"{theme.spec.id}-rules-{shape}-{seed}-{db_seed}", theme=theme.spec.id, kind="rules", instruction=instruction,
                difficulty=difficulty, solution=tuple(solution), db_seed=db_seed, **kw,
                features={"rule": rule, "rule_task": shape, "calls": len(solution), **extra})


def _one_record(theme: Theme, seed: int, db_seed: int, want: str, attempts: int, check: bool) -> Task:
    """A refusal or allowed task (see the module docstring)."""
    rng = np.random.default_rng([seed, 4242, db_seed, SHAPES.index(want)])
    templates = _templates(theme)
    writes = sorted(n for n, t in templates.items() if _getter(theme, t["table"]))
    if not writes:
        raise TaskError(f"Theme {theme.spec.id!r} has no rule-carrying write tool with a lookup: it makes no rule task.")
    fx = facts(theme, db_seed)
    for _ in range(attempts):
        t = templates[writes[int(rng.integers(len(writes)))]]
        getter = _getter(theme, t["table"])
        key_name = next(p["name"] for p in getter["params"] if p["role"] == "key")
        noun, pk = _noun(t["table"]), theme.spec.table(t["table"]).pk
        for broken, row, args, vals in _candidates(theme, t, rng, db_seed):
            if (want == "refusal") != bool(broken):
                continue
            fact = _fact(theme, t["table"], row, rng, db_seed, set(vals))
            if fact is None:
                continue
            col, value = fact
            key = row[pk]
            instruction = _request(t, noun, key, vals) + f" If the rules do not allow that, tell me the {W.field_name(col)} of {noun} {key} instead."
            with fx.run() as run:
                write = run.call(t["name"], args)
                if write.ok == bool(broken) or (broken and run.written):
                    continue  # the tool disagrees with the rule read off the record, or a refused call wrote: not a clean case
                if broken:
                    got = run.call(getter["name"], {key_name: key})
                    if not got.ok or not isinstance(got.data, dict) or got.data.get(col) != value:
                        continue
                    task = _task(theme, "refusal", broken, seed, db_seed, instruction, [{"name": getter["name"], "arguments": {key_name: key}}], 1,
                                 answer=value, answer_type="number" if isinstance(value, (int, float)) else "text",
                                 features={"answer_path": [0, col], "writes": 0, "refused_call": {"name": t["name"], "arguments": args},
                                           "refusal": write.content[:200], "unique": [[t["table"], pk, key]]})
                else:
                    tables = tuple(sorted(run.written))
                    task = _task(theme, "allowed", sorted(t["rules"]), seed, db_seed, instruction, [{"name": t["name"], "arguments": args}], 1,
                                 state_tables=tables, state_hash=fx.state_hash(run.conn, tables), features={"writes": 1, "unique": [[t["table"], pk, key]]})
            task = _personal(theme, fx, task, [(noun, t["table"], pk, key)]) if P.enabled() else task  # tasks v3 (opt-in)
            if not check or not quality_problems(theme, task):
                return task
    raise TaskError(f"No {want} rule task for theme {theme.spec.id!r} (seed {seed}) in {attempts} attempts.")


def _path(theme: Theme, seed: int, db_seed: int, attempts: int, check: bool) -> Task:
    """A path task: remove a record along with the children that block its deletion."""
    rng = np.random.default_rng([seed, 4243, db_seed])
    all_t = theme.templates
    deletes = {t["table"]: t for t in all_t if t["kind"] == "delete" and _key_param(t) is not None}
    plans = []
    for t in deletes.values():
        for child, fk in t.get("children", ()):
            lister = next((x for x in all_t if x["kind"] == "list" and x["table"] == child and
                           any(p["role"] == "fk" and p["column"] == fk for p in x["params"]) and
                           all(p["role"] == "fk" and p["column"] == fk for p in x["params"] if p.get("required"))), None)
            if lister is not None and child in deletes and child != t["table"]:
                plans.append((t, child, fk, lister))
    if not plans:
        raise TaskError(f"Theme {theme.spec.id!r} has no delete blocked by children that another delete can clear: it makes no path task.")
    fx = facts(theme, db_seed)
    for _ in range(attempts):
        t, child, fk, lister = plans[int(rng.integers(len(plans)))]
        pk, cpk = theme.spec.table(t["table"]).pk, theme.spec.table(child).pk
        kids = {c for c, _ in t["children"]}
        keys = [k for k in fx.values(child, fk) if 1 <= fx.count(child, fk, k) <= 3
                and all(fx.count(c, f, k) == 0 for c, f in t["children"] if c != child)]
        if not keys or len(kids) > 2:
            continue
        key = keys[int(rng.integers(len(keys)))]
        list_arg = next(p["name"] for p in lister["params"] if p["role"] == "fk" and p["column"] == fk)
        with fx.run() as run:
            listed = run.call(lister["name"], {list_arg: key})
            if not listed.ok or not isinstance(listed.data, list) or len(listed.data) != fx.count(child, fk, key):
                continue
            dkey = _key_param(deletes[child])["name"]
            pkey = _key_param(t)["name"]
            solution = [{"name": lister["name"], "arguments": {list_arg: key}}]
            solution += [{"name": deletes[child]["name"], "arguments": {dkey: r[cpk]}} for r in listed.data]
            solution.append({"name": t["name"], "arguments": {pkey: key}})
            direct = run.call(t["name"], {pkey: key})  # refused while the children exist (nothing written)
            results = [run.call(c["name"], c["arguments"]) for c in solution[1:]]
            if direct.ok or not all(r.ok for r in results):
                continue
            tables = tuple(sorted(run.written))
            noun = _noun(t["table"])
            task = _task(theme, "path", "children", seed, db_seed, f"Remove {noun} {key} along with all of its {humanize(child)}.", solution, 3,
                         state_tables=tables, state_hash=fx.state_hash(run.conn, tables),
                         features={"writes": len(solution) - 1, "refused_call": {"name": t["name"], "arguments": {pkey: key}},
                                   "refusal": direct.content[:200], "unique": [[t["table"], pk, key]]})
        task = _personal(theme, fx, task, [(noun, t["table"], pk, key)]) if P.enabled() else task  # tasks v3 (opt-in)
        if not check or not quality_problems(theme, task):
            return task
    raise TaskError(f"No path rule task for theme {theme.spec.id!r} (seed {seed}) in {attempts} attempts.")


def _personal(theme: Theme, fx, task: Task, given: list[tuple]) -> Task:
    """Tasks v3 (`persona.enabled`): the rule task as a person asks it: the record named by what a person knows, the reads
    that find it first in the gold, a speaker with a reason."""
    text, found, identity = P.personalize(theme, fx, task.instruction, given)
    reads = P.gold_reads(found)
    features = dict(task.features)
    if features.get("answer_path"):
        features["answer_path"] = [features["answer_path"][0] + len(reads), *features["answer_path"][1:]]
    features["unique"] = [*features.get("unique", ()), *([list(u) for r in found for u in r.unique])]
    features["calls"] = len(task.solution) + len(reads)
    features["resolved"] = len(found)
    text = P.frame(text, "change", _rng(task), identity)
    return dataclasses.replace(task, instruction=text, solution=(*reads, *task.solution), features=features)


def _rng(task: Task) -> np.random.Generator:
    return np.random.default_rng(int(hashlib.sha1(task.id.encode()).hexdigest()[:12], 16))


def synthesize_rule_task(theme: Theme, difficulty: int = 1, seed: int = 0, db_seed: int = 0, attempts: int = 30, *, check: bool = True) -> Task:
    """One verified rule task. Levels 1-2: a refusal or its allowed twin (by the seed, half each, so
    neither "always write" nor "never write" wins more than half); levels 3-5: a path task. Raises
    TaskError when the theme cannot make that shape (the env's fallback then steps down a level)."""
    if difficulty >= 3:
        task = _path(theme, seed, db_seed, attempts, check)
    else:
        task = _one_record(theme, seed, db_seed, "allowed" if seed % 2 else "refusal", attempts, check)
    if task.difficulty != difficulty:
        task.features["level"] = difficulty  # the level asked for (one-record tasks are one call at levels 1 and 2)
    return task
