"""Graph-based task synthesis: weight-biased walks over a theme's tool dependency graph.

Edges between tools come from the entity keys they consume and produce:
  * strong (3): an output key of A is a *required* input of B (A must run first);
  * weak (2): an output key of A is an optional input of B, or both handle the same entity;
  * independent (1): nothing shared.
A walk starts at a tool that produces outputs and has no strong predecessor, fills each argument
from an earlier output (the chain) or from a value sampled from the database, runs on a fresh copy
of the world, and turns into numbered instructions that name no tool, table or column.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..actions import ToolCall
from ..errors import TaskError
from ..tasks import Task
from ..theme import Theme, humanize, noun_of, scalar_fields
from ..tools import Tool
from ..world import open_copy, state_hash

STRONG, WEAK, INDEPENDENT = 3, 2, 1


@dataclass(frozen=True)
class Level:
    """The knobs behind one difficulty level."""

    calls: tuple[int, int]  # walk length range (inclusive)
    sharpness: float  # edge weights are raised to this power: high = follow strong edges
    writes: bool  # may the walk include write tools
    obscure: bool  # hide the step structure (no numbered steps)


LEVELS = {
    1: Level((1, 1), 4.0, False, False),
    2: Level((2, 2), 4.0, False, False),
    3: Level((2, 3), 2.0, True, False),
    4: Level((3, 4), 1.0, True, False),
    5: Level((4, 6), 0.5, True, True),
}


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
    graph = dependency_graph(theme)
    fed = {b for a, nxt in graph.items() for b, w in nxt.items() if w == STRONG}
    starts = [t.name for t in theme.toolset if t.produces and t.name not in fed and not t.writes]
    return starts or [t.name for t in theme.toolset if not t.writes] or [t.name for t in theme.toolset]


@lru_cache(maxsize=4096)
def _column_values(theme: Theme, db_seed: int, table: str, column: str) -> tuple:
    conn = open_copy(theme.world(db_seed).template)
    try:
        return tuple(r[0] for r in conn.execute(f'SELECT DISTINCT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL ORDER BY 1'))
    finally:
        conn.close()


def _column_table(theme: Theme, column: str) -> str | None:
    for t in theme.spec.tables:
        if any(c.name == column for c in t.columns):
            return t.name
    return None


def _find_key(data: Any, key: str) -> Any:
    """The value of entity `key` in a tool output: a dict field or the first list item's field."""
    if isinstance(data, list):
        data = data[0] if data else None
    if isinstance(data, dict):
        for k in (key, *data):
            if (k == key or k.endswith("_" + key)) and isinstance(data.get(k), (str, int)):
                return data[k]
    return None


class _Walk:
    def __init__(self, theme: Theme, rng: np.random.Generator, db_seed: int):
        self.theme, self.rng, self.db_seed = theme, rng, db_seed
        self.calls: list[ToolCall] = []
        self.outputs: list[Any] = []
        self.refs: list[dict[str, int]] = []  # per call: param -> index of the call it came from
        self.edge_kinds: list[int] = []

    def fill(self, t: Tool) -> tuple[dict, dict] | None:
        args: dict[str, Any] = {}
        refs: dict[str, int] = {}
        required = set(t.parameters.get("required", ()))
        for p, prop in t.parameters.get("properties", {}).items():
            key = self.theme.key_of(p) if p in t.consumes else None
            if key:
                for j in range(len(self.outputs) - 1, -1, -1):
                    v = _find_key(self.outputs[j], key)
                    if v is not None:
                        args[p], refs[p] = v, j
                        break
                else:
                    if p in required or self.rng.random() < 0.3:
                        table, column = self.theme.entity_keys[key]
                        values = _column_values(self.theme, self.db_seed, table, column)
                        if not values:
                            return None
                        args[p] = values[int(self.rng.integers(len(values)))]
                continue
            if p not in required:
                continue
            value = self._sample_plain(t, p, prop)
            if value is None:
                return None
            args[p] = value
        return args, refs

    def _sample_plain(self, t: Tool, p: str, prop: dict) -> Any:
        if p in t.examples:
            ex = t.examples[p]
            return ex[int(self.rng.integers(len(ex)))]
        if "enum" in prop:
            return prop["enum"][int(self.rng.integers(len(prop["enum"])))]
        table = _column_table(self.theme, p)
        if table:
            values = _column_values(self.theme, self.db_seed, table, p)
            if values:
                return values[int(self.rng.integers(len(values)))]
        return None


def synthesize_graph_task(theme: Theme, difficulty: int = 1, seed: int = 0, db_seed: int = 0, attempts: int = 60) -> Task:
    """One verified graph task for `theme` at `difficulty`, deterministic in `seed`.

    Raises TaskError when no valid walk is found within `attempts` tries.
    """
    if difficulty not in LEVELS:
        raise TaskError(f"Expected difficulty 1-5, got {difficulty!r}.")
    level = LEVELS[difficulty]
    rng = np.random.default_rng([seed, difficulty, 7919])
    graph = dependency_graph(theme)
    starts = start_tools(theme)
    tools = theme.toolset.tools
    for _ in range(attempts):
        length = int(rng.integers(level.calls[0], level.calls[1] + 1))
        walk = _Walk(theme, rng, db_seed)
        conn = open_copy(theme.world(db_seed).template)
        try:
            initial = state_hash(conn)
            db = theme.db(conn)
            current = starts[int(rng.integers(len(starts)))]
            ok = True
            for step in range(length):
                t = tools[current]
                filled = walk.fill(t)
                if filled is None:
                    ok = False
                    break
                call = ToolCall(t.name, filled[0])
                result = theme.toolset.call(db, call)
                if not result.ok or result.data in (None, [], {}):
                    ok = False
                    break
                walk.calls.append(call)
                walk.outputs.append(result.data)
                walk.refs.append(filled[1])
                if step + 1 < length:
                    nxt = _next_tool(graph[current], tools, level, rng, exclude={c.name for c in walk.calls})
                    if nxt is None:
                        ok = False
                        break
                    walk.edge_kinds.append(graph[current][nxt])
                    current = nxt
            if not ok or len(walk.calls) < level.calls[0]:
                continue
            task = _to_task(theme, walk, difficulty, seed, db_seed, rng, state_hash(conn), initial, level)
            if task is not None:
                return task
        finally:
            conn.close()
    raise TaskError(f"Theme {theme.id!r} yielded no valid walk at difficulty {difficulty} in {attempts} attempts (seed {seed}). Try a lower difficulty.")


def _next_tool(edges: dict[str, int], tools: dict[str, Tool], level: Level, rng, exclude: set) -> str | None:
    names = [n for n in edges if n not in exclude and (level.writes or not tools[n].writes)]
    if not names:
        return None
    w = np.array([edges[n] for n in names], float) ** level.sharpness
    return names[int(rng.choice(len(names), p=w / w.sum()))]


def _render(theme: Theme, t: Tool, args: dict, refs: dict) -> str:
    parts = {}
    for p, v in args.items():
        key = theme.key_of(p) if p in t.consumes else None
        if p in refs:
            parts[p] = f"the {noun_of(key or p)} from step {refs[p] + 1}"
        elif key:
            parts[p] = f"{noun_of(key)} {v}"
        else:
            parts[p] = str(v)
    phrase = t.phrase or humanize(t.name) + "".join(f" {{{p}}}" for p in t.parameters.get("properties", {}))
    filled = phrase.format_map(_Missing(parts))
    return " ".join(filled.split())


class _Missing(dict):
    def __missing__(self, key):  # optional parameters that were not used
        return ""


def _to_task(theme, walk: _Walk, difficulty, seed, db_seed, rng, final_hash, initial_hash, level: Level) -> Task | None:
    last, out = walk.calls[-1], walk.outputs[-1]
    wrote = any(theme.toolset[c.name].writes for c in walk.calls)
    if wrote and final_hash == initial_hash:
        return None
    given = {str(v) for c in walk.calls for v in c.arguments.values()}
    answer, answer_type, question = None, "none", ""
    if isinstance(out, list):
        answer, answer_type = len(out), "number"
        question = f"How many results does step {len(walk.calls)} give?"
    else:
        fields = {k: v for k, v in scalar_fields(out).items() if str(v) not in given and not k.endswith("id")}
        if fields:
            name = sorted(fields)[int(rng.integers(len(fields)))]
            answer = fields[name]
            answer_type = "bool" if isinstance(answer, bool) else "number" if isinstance(answer, (int, float)) else "text"
            question = f"What is the {humanize(name)} in the result of step {len(walk.calls)}?"
    if answer_type == "none" and not wrote:
        return None
    steps = [_render(theme, theme.toolset[c.name], c.arguments, r) for c, r in zip(walk.calls, walk.refs)]
    if len(steps) == 1:
        body = steps[0][0].upper() + steps[0][1:] + "."
        question = question.replace(" in the result of step 1", "").replace(" does step 1 give", " are there")
    else:
        body = "\n".join(f"{i}. {s[0].upper() + s[1:]}." for i, s in enumerate(steps, 1))
    instruction = body + ("\n" + question if question else "\nThen confirm when it is done.")
    solution = tuple({"name": c.name, "arguments": c.arguments} for c in walk.calls)
    strong = sum(1 for k in walk.edge_kinds if k == STRONG)
    features = {
        "calls": len(walk.calls),
        "distinct_tools": len({c.name for c in walk.calls}),
        "writes": sum(1 for c in walk.calls if theme.toolset[c.name].writes),
        "weak_share": round(1 - strong / len(walk.edge_kinds), 3) if walk.edge_kinds else 0.0,
        "chained_args": sum(len(r) for r in walk.refs),
    }
    digest = hashlib.sha1(f"{theme.id}|{difficulty}|{seed}|{db_seed}|{solution}".encode()).hexdigest()[:10]
    return Task(
        id=f"{theme.id}-g{difficulty}-{digest}", theme=theme.id, kind="graph", instruction=instruction,
        difficulty=difficulty, solution=solution, answer=answer, answer_type=answer_type,
        state_tables=tuple(t.name for t in theme.spec.tables) if wrote else (),
        state_hash=final_hash if wrote else None, db_seed=db_seed, features=features,
    )
