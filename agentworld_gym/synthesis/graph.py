"""Graph-based task synthesis: weight-biased walks over a theme's tool dependency graph.

Edges between tools come from the entity keys they consume and produce (Tool metadata only):
  * strong (3): an output key of A is a *required* input of B (A must run first);
  * weak (2): an output key of A is an optional input of B, or both handle the same entity;
  * independent (1): nothing shared.
The paper starts walks at tools that produce outputs and have no strong predecessor; a theme often
has only one or two of those, so every read tool with outputs may start a walk, and the paper's
start tools get `PAPER_START_WEIGHT` times the weight. A walk fills each argument from an earlier
output (the chain) or from a value sampled from the database, runs on a fresh copy of the world,
and becomes an instruction that names no tool, table or column.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import TaskError
from ..tasks import Task
from ..theme import Theme, humanize, noun_of, scalar_fields
from ..tools import Tool
from . import wording as W
from .facts import Facts, Run, facts

STRONG, WEAK, INDEPENDENT = 3, 2, 1
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
PAPER_START_WEIGHT = 3.0  # start tools with no strong predecessor (the paper's rule) are preferred
RETRIES = 4  # draws per walk position before the walk is abandoned
MAX_CALLS = 19  # gold calls per task: with the final submit it fits the env's default max_turns=20


@dataclass(frozen=True)
class Level:
    """The knobs behind one difficulty level (recorded on every task under features["knobs"])."""

    calls: tuple[int, int]  # graph: walk length range (inclusive)
    sharpness: float  # edge weights are raised to this power: high follows strong edges, low mixes in weak/independent
    writes: float  # probability that the task must change the database
    conditions: int  # programmatic: filter conditions on the listed entities
    lookups: bool  # programmatic: one lookup call per listed entity (a loop of calls)
    prefix: int  # programmatic: chained steps needed to reach the entity whose list is aggregated
    distractors: int  # near-duplicate entity names mentioned in the instruction
    obscure: bool  # no numbered steps; references worded indirectly


LEVELS: dict[int, Level] = {
    1: Level((1, 1), 4.0, 0.0, 0, False, 0, 0, False),
    2: Level((2, 2), 4.0, 0.0, 1, False, 0, 0, False),
    3: Level((2, 3), 2.0, 0.4, 1, False, 1, 1, False),
    4: Level((3, 4), 1.0, 0.6, 1, True, 1, 1, True),
    5: Level((4, 6), 0.5, 0.8, 2, True, 1, 2, True),
}


@lru_cache(maxsize=16)
def _knobs(lv: Level) -> tuple:
    return tuple(asdict(lv).items())


def knobs(lv: Level) -> dict:
    """The level's knobs as the plain dict recorded on each task."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in _knobs(lv)}


def level(difficulty: int) -> Level:
    if difficulty not in LEVELS:
        raise TaskError(f"Expected difficulty 1-5, got {difficulty!r}.")
    return LEVELS[difficulty]


# ------------------------------------------------------------------------------------------ graph


def edge_weight(theme: Theme, a: Tool, b: Tool) -> int:
    produced = {theme.key_of(k) or k for k in a.produces}
    required = set(b.parameters.get("required", ()))
    req_keys = {theme.key_of(p) for p in b.consumes if p in required}
    opt_keys = {theme.key_of(p) for p in b.consumes if p not in required}
    if produced & req_keys:
        return STRONG
    if produced & opt_keys or produced & {theme.key_of(k) or k for k in b.produces}:
        return WEAK
    return INDEPENDENT


@lru_cache(maxsize=4096)
def dependency_graph(theme: Theme) -> dict[str, dict[str, int]]:
    """{tool: {next_tool: weight}} over every ordered pair of distinct tools."""
    tools = list(theme.toolset)
    return {a.name: {b.name: edge_weight(theme, a, b) for b in tools if b is not a} for a in tools}


def start_tools(theme: Theme) -> list[str]:
    """The paper's start tools: read tools that produce outputs and have no strong predecessor."""
    graph = dependency_graph(theme)
    fed = {b for nxt in graph.values() for b, w in nxt.items() if w == STRONG}
    return [t.name for t in theme.toolset if t.produces and t.name not in fed and not t.writes]


@lru_cache(maxsize=4096)
def start_weights(theme: Theme) -> tuple[tuple[str, ...], np.ndarray]:
    """Every tool a walk may start at, with its weight (the paper's start tools weigh more)."""
    paper = set(start_tools(theme))
    names = [t.name for t in theme.toolset if t.produces and not t.writes]
    names = names or [t.name for t in theme.toolset if not t.writes] or [t.name for t in theme.toolset]
    w = np.array([PAPER_START_WEIGHT if n in paper else 1.0 for n in names])
    return tuple(names), w / w.sum()


# ------------------------------------------------------------------------------------------ helpers shared with programmatic


def find_key(data: Any, key: str) -> tuple[str, Any] | None:
    """(field, value) of entity `key` in a tool output: a dict field or the first list item's field."""
    if isinstance(data, list):
        data = data[0] if data else None
    if isinstance(data, dict):
        if isinstance(data.get(key), (str, int)) and not isinstance(data.get(key), bool):
            return key, data[key]
        for k, v in data.items():
            if k.endswith("_" + key) and isinstance(v, (str, int)) and not isinstance(v, bool):
                return k, v
    return None


def sample_plain(theme: Theme, fx: Facts, t: Tool, p: str, prop: dict, rng) -> tuple[Any, tuple | None] | None:
    """A value for a non-entity parameter: from the tool's examples, the schema enum, or a column
    of the same name. Returns (value, (table, column) it came from or None), or None if none fits."""
    if p in t.examples and t.examples[p]:
        ex = t.examples[p]
        return ex[int(rng.integers(len(ex)))], None
    if "enum" in prop:
        return prop["enum"][int(rng.integers(len(prop["enum"])))], None
    where = fx.column_of(p)
    if where:
        values = fx.values(*where)
        if values:
            return values[int(rng.integers(len(values)))], where
    return None


def sample_key(fx: Facts, key: str, rng) -> Any:
    where = fx.key_column(key)
    values = fx.values(*where) if where else ()
    return values[int(rng.integers(len(values)))] if values else None


def capped(t: Tool, arguments: dict, data: Any) -> bool:
    """True when a list output may have been cut by a page-size parameter (a count would be ambiguous)."""
    if not isinstance(data, list):
        return False
    for p, prop in t.parameters.get("properties", {}).items():
        if prop.get("type") == "integer" and p not in t.consumes:
            limit = arguments.get(p, prop.get("default"))
            if isinstance(limit, int) and len(data) >= limit:
                return True
    return False


def record_noun(theme: Theme, fx: Facts, t: Tool, data: dict) -> str | None:
    """The entity a dict output is the record of (its key plus most of its table's columns)."""
    keys = [theme.key_of(k) or k for k in t.produces] + list(theme.entity_keys)
    for key in keys:
        where = fx.key_column(key)
        if where and key in data:
            cols = fx.table_columns[where[0]]
            if len(cols & set(data)) * 2 >= len(cols):
                return noun_of(key)
    return None


def answer_of(data: Any, path: list) -> Any:
    """The answer a graph task reads from its last output: a field, or a count of listed items."""
    field = path[1]
    if field == "#count":
        return len(data)
    return data.get(field) if isinstance(data, dict) else None


def add_distractors(theme: Theme, fx: Facts, given: list[tuple], n: int, rng) -> list[str]:
    """Up to `n` sentences naming near-duplicates of directly given values (AC-1038 vs AC-1039)."""
    out, seen = [], set()
    order = [given[i] for i in rng.permutation(len(given))] if given else []
    stated = {v for *_, v in given}
    for rank in (0, 1):  # first one decoy per stated value, then a second one
        for noun, table, column, value in order:
            decoys = [d for d in fx.neighbours(table, column, value) if d not in stated]
            if len(out) < n and len(decoys) > rank and (table, column, value, rank) not in seen:
                seen.add((table, column, value, rank))
                out.append(W.distractor_text(noun, W.show(value), W.show(decoys[rank])))
    return out


def task_id(theme: Theme, kind: str, difficulty: int, seed: int, db_seed: int, body: str) -> str:
    digest = hashlib.sha1(f"{theme.id}|{kind}|{difficulty}|{seed}|{db_seed}|{body}".encode()).hexdigest()[:10]
    return f"{theme.id}-{kind[0]}{difficulty}-{digest}"


def state_check(fx: Facts, run: Run) -> tuple[tuple[str, ...], str] | None:
    """(tables the chain wrote, their hash), or None when the writes left the state unchanged."""
    tables = tuple(sorted(run.written))
    final = fx.state_hash(run.conn, tables)
    return None if final == fx.initial_hash(tables) else (tables, final)


# ------------------------------------------------------------------------------------------ walks


class _Walk:
    """One attempt: the calls made so far on a private copy, and how each argument was obtained."""

    def __init__(self, theme: Theme, fx: Facts, rng: np.random.Generator):
        self.theme, self.fx, self.rng = theme, fx, rng
        self.run = fx.run()
        self.refs: list[dict[str, int]] = []  # per call: param -> index of the call it came from
        self.edge_kinds: list[int] = []
        self.given: list[tuple] = []  # (noun, table, column, value) stated directly in the instruction
        self.unique: list[tuple] = []  # (table, column, value) that must identify one row

    @property
    def outputs(self) -> list[Any]:
        return [r.data for r in self.run.results]

    def fill(self, t: Tool) -> tuple[dict, dict] | None:
        args: dict[str, Any] = {}
        refs: dict[str, int] = {}
        required = set(t.parameters.get("required", ()))
        outputs = self.outputs
        for p, prop in t.parameters.get("properties", {}).items():
            key = self.theme.key_of(p) if p in t.consumes else None
            if key:
                for j in range(len(outputs) - 1, -1, -1):
                    found = find_key(outputs[j], key)
                    if found is not None and found[1] not in args.values():
                        args[p], refs[p] = found[1], j
                        break
                else:
                    if p in required or self.rng.random() < 0.3:
                        value = sample_key(self.fx, key, self.rng)
                        if value is None:
                            return None
                        args[p] = value
                        self.given.append((noun_of(key), *self.fx.key_column(key), value))
                continue
            if p not in required and not (self.rng.random() < 0.3 and ("enum" in prop or p in t.examples)):
                continue
            sampled = sample_plain(self.theme, self.fx, t, p, prop, self.rng)
            if sampled is None:
                if p in required:
                    return None
                continue
            args[p], where = sampled
            if where is not None:
                self.given.append((humanize(p), *where, args[p]))
                self.unique.append((*where, args[p]))
        return args, refs

    def step(self, t: Tool) -> bool:
        """Fill and run one call; on failure the call is forgotten (a failed write changed nothing)."""
        marks = len(self.given), len(self.unique)
        filled = self.fill(t)
        if filled is not None:
            result = self.run.call(t.name, filled[0])
            if result.ok and result.data not in (None, [], {}):
                self.refs.append(filled[1])
                return True
            del self.run.calls[-1], self.run.results[-1]
        del self.given[marks[0]:], self.unique[marks[1]:]
        return False


def _next_tool(edges: dict[str, int], tools: dict[str, Tool], lv: Level, rng, used: set, writes: bool | None) -> str | None:
    """Weight-biased choice of the next tool; `writes` True/False restricts to write/read tools."""
    names = [n for n in edges if writes is None or tools[n].writes == writes]
    fresh = [n for n in names if n not in used]
    names = fresh or names  # repeat a tool only when the theme has no other
    if not names:
        return None
    w = np.array([edges[n] for n in names], float) ** lv.sharpness
    return names[int(rng.choice(len(names), p=w / w.sum()))]


def synthesize_graph_task(theme: Theme, difficulty: int = 1, seed: int = 0, db_seed: int = 0, attempts: int = 60, check: bool = True) -> Task:
    """One verified graph task for `theme` at `difficulty`, deterministic in `seed`.

    Bounded: at most `attempts` walks. Raises TaskError when none gives a valid task.
    """
    lv = level(difficulty)
    rng = np.random.default_rng([seed, difficulty, db_seed, 7919])
    fx = facts(theme, db_seed)
    graph = dependency_graph(theme)
    names, weights = start_weights(theme)
    tools = theme.toolset.tools
    has_writes = any(t.writes for t in tools.values())
    problems: list[str] = []
    for _ in range(attempts):
        length = int(rng.integers(lv.calls[0], lv.calls[1] + 1))
        need_write = has_writes and length > 1 and rng.random() < lv.writes
        walk = _Walk(theme, fx, rng)
        try:
            previous, ok = None, True
            for i in range(length):
                restrict = True if (i + 1 == length and need_write) else (None if need_write else False)
                for _ in range(RETRIES):  # a step that fails is redrawn; the chain so far is kept
                    if previous is None:
                        current = names[int(rng.choice(len(names), p=weights))]
                    else:
                        current = _next_tool(graph[previous], tools, lv, rng, {c.name for c in walk.run.calls}, restrict)
                        if current is None:
                            break
                    if walk.step(tools[current]):
                        break
                else:
                    current = None
                if current is None:
                    ok = False
                    break
                if previous is not None:
                    walk.edge_kinds.append(graph[previous][current])
                previous = current
            if not ok:
                continue
            task = _to_task(theme, fx, walk, difficulty, seed, db_seed, lv, rng)
            if task is None:
                continue
            if check:
                problems = quality(theme, task, walk.run)
                if problems:
                    continue
            return task
        finally:
            walk.run.close()
    raise TaskError(f"Expected theme {theme.id!r} to yield a valid graph task at difficulty {difficulty}, got none in "
                    f"{attempts} walks (seed {seed}{'; last problems: ' + ', '.join(problems) if problems else ''}). "
                    "Try a lower difficulty, kind='programmatic', or pass fallback=True to synthesize_task.")


def quality(theme: Theme, task: Task, run: Run) -> list[str]:
    from . import quality_problems

    return quality_problems(theme, task, reference=run.conn.serialize() if task.state_hash else None)


def _render(theme: Theme, walk: _Walk, lv: Level) -> list[str]:
    outputs = walk.outputs
    steps = []
    for i, (call, refs) in enumerate(zip(walk.run.calls, walk.refs, strict=True)):
        t = theme.toolset[call.name]
        parts = {}
        for p, v in call.arguments.items():
            if p in refs:
                j = refs[p]
                parts[p] = W.reference_text(theme, p, j, isinstance(outputs[j], list), lv.obscure, i)
            else:
                parts[p] = W.argument_text(theme, t, p, v)
        steps.append(W.clause(theme, t, parts))
    return steps


def _to_task(theme: Theme, fx: Facts, walk: _Walk, difficulty: int, seed: int, db_seed: int, lv: Level, rng) -> Task | None:
    calls, outputs = walk.run.calls, walk.outputs
    last, out = theme.toolset[calls[-1].name], outputs[-1]
    wrote = any(theme.toolset[c.name].writes for c in calls)
    if any(fx.count(*u) != 1 for u in walk.unique):
        return None  # a directly given value that matches several rows would make the task ambiguous
    tables, final = (), None
    if wrote:
        changed = state_check(fx, walk.run)
        if changed is None:
            return None
        tables, final = changed
    given = {W.show(v) for c in calls for v in c.arguments.values()}
    answer, answer_type, question, path = None, "none", "", None
    if isinstance(out, list):
        if not capped(last, calls[-1].arguments, out) and all(isinstance(x, dict) for x in out):
            key = next((theme.key_of(k) for k in last.produces if find_key(out, theme.key_of(k) or k)), None)
            noun = W.plural(noun_of(key)) if key else "items"
            answer, answer_type, path = len(out), "number", [len(calls) - 1, "#count"]
            where = "" if len(calls) == 1 else " by the last step" if lv.obscure else f" in step {len(calls)}"
            question = f"How many {noun} are listed{where}?"
    elif isinstance(out, dict) and (not wrote or rng.random() < 0.5):
        fields = {k: v for k, v in scalar_fields(out).items()
                  if W.show(v) not in given and not k.lower().endswith("id") and not (isinstance(v, str) and (len(v) > 80 or not v.strip()))}
        if fields:
            name = sorted(fields)[int(rng.integers(len(fields)))]
            answer = fields[name]
            answer_type = "bool" if isinstance(answer, bool) else "number" if isinstance(answer, (int, float)) else "text"
            path = [len(calls) - 1, name]
            noun = record_noun(theme, fx, last, out)
            field = humanize(name)
            if isinstance(answer, str) and _ISO_DATE.match(answer) and not {"date", "at", "on", "day"} & set(field.split()):
                field += " date"  # "opened" -> "opened date"
            question = f"What is the {field} of that {noun}?" if noun else f"What {field} does that give?"
    if answer_type == "none" and not wrote:
        return None
    steps = _render(theme, walk, lv)
    body = W.join_steps(steps, lv.obscure)
    distractors = add_distractors(theme, fx, walk.given, lv.distractors, rng)
    tail = question or "Confirm when it is done."
    instruction = "\n".join([body, *distractors, tail])
    solution = tuple({"name": c.name, "arguments": dict(c.arguments)} for c in calls)
    strong = sum(1 for k in walk.edge_kinds if k == STRONG)
    features = {
        "calls": len(calls),
        "distinct_tools": len({c.name for c in calls}),
        "writes": sum(1 for c in calls if theme.toolset[c.name].writes),
        "weak_share": round(1 - strong / len(walk.edge_kinds), 3) if walk.edge_kinds else 0.0,
        "chained_args": sum(len(r) for r in walk.refs),
        "aggregation": 0,
        "branching": 0,
        "distractors": len(distractors),
        "obscured": lv.obscure,
        "answer_path": path,
        "unique": [list(u) for u in walk.unique],
        "knobs": knobs(lv),
    }
    return Task(
        id=task_id(theme, "graph", difficulty, seed, db_seed, repr(solution)), theme=theme.id, kind="graph",
        instruction=instruction, difficulty=difficulty, solution=solution, answer=answer, answer_type=answer_type,
        state_tables=tables, state_hash=final, db_seed=db_seed, features=features,
    )
