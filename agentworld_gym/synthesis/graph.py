"""Graph-based task synthesis: weight-biased walks over a theme's tool dependency graph.

Edges between tools come from the entity keys they consume and produce (Tool metadata only):
  * strong (3): an output key of A is a *required* input of B (A must run first);
  * weak (2): an output key of A is an optional input of B, or both handle the same entity;
  * independent (1): nothing shared.
The paper starts walks at tools that produce outputs and have no strong predecessor; a theme often
has only one or two of those, so every read tool with outputs may start a walk, and the paper's
start tools get `PAPER_START_WEIGHT` times the weight. A walk fills each argument from an earlier
output (the chain) or from a value sampled from the database, runs on a fresh copy of the world,
and becomes a goal: what the user wants done or known, with the facts they know (an id, an email),
never the calls or their order. A value that came from an earlier call is described by where it
comes from ("the account of card CD-1001"), so the agent has to plan the chain itself. A walk is
dropped when one of its calls is not needed (a lookup whose result no later call uses) or when a
reference would be ambiguous (an item taken from a list of several).
"""

from __future__ import annotations

import hashlib
import re
import time
import typing
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import TaskError
from ..tasks import Task
from ..theme import Theme, humanize, noun_of, scalar_fields
from ..tools import Tool
from . import depth as D
from . import persona as P
from . import wording as W
from .facts import Facts, Run, capped, facts
from .quality import candidate_problems

STRONG, WEAK, INDEPENDENT = 3, 2, 1
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
PAPER_START_WEIGHT = 3.0  # start tools with no strong predecessor (the paper's rule) are preferred
RETRIES = 4  # draws per walk position before the walk is abandoned
MAX_CALLS = 19  # gold calls per task: with the final submit it fits the env's default max_turns=20
# Walks keep only needed calls; worlds seldom chain more than three needed lookups, so a level asks
# for at least this many needed calls (or its own minimum, if lower) after the walk is pruned.
MIN_NEEDED_CALLS = 3
WALKS_UP_TO = 3  # tasks v3: from this level a theme whose world holds no chain for it makes no graph task (measured:
# walks filtered for depth reached level 3 in 2 of 16 flagship requests, levels 4-5 in none)


@dataclass(frozen=True)
class Level:
    """The knobs behind one difficulty level (recorded on every task under features["knobs"])."""

    calls: tuple[int, int]  # graph: walk length range (inclusive)
    sharpness: float  # edge weights are raised to this power: high follows strong edges, low mixes in weak/independent
    writes: float  # probability that the task must change the database
    conditions: int  # programmatic: filter conditions on the listed entities
    lookups: bool  # programmatic: one lookup call per listed entity (a loop of calls)
    prefix: int  # programmatic: chained steps needed to reach the entity whose list is aggregated


LEVELS: dict[int, Level] = {
    1: Level((1, 1), 4.0, 0.0, 0, False, 0),
    2: Level((2, 2), 4.0, 0.0, 1, False, 0),
    3: Level((2, 3), 2.0, 0.4, 1, False, 1),
    4: Level((3, 4), 1.0, 0.6, 1, True, 1),
    5: Level((4, 6), 0.5, 0.8, 2, True, 1),
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
    if difficulty == 3 and P.enabled():  # tasks v3: a lookup per listed record, the depth level 3 asks for (`depth.MIN_DEPENDENT`)
        return replace(LEVELS[3], lookups=True)
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
def start_weights(theme: Theme, relay: bool = False, want: tuple[int, ...] = ()) -> tuple[tuple[str, ...], np.ndarray]:
    """Every tool a walk may start at, with its weight (the paper's start tools weigh more); `relay`: a
    walk that goes on starts at a tool that can pass a key on (`relays`), if the theme has one, and whose
    chain reaches the first length of `want` any reaches (`chain_depth`)."""
    paper = set(start_tools(theme))
    names = [t.name for t in theme.toolset if t.produces and not t.writes]
    if relay:
        names = _deep_enough([n for n in names if n in relays(theme)], chain_depth(theme), want) or names
    names = names or [t.name for t in theme.toolset if not t.writes] or [t.name for t in theme.toolset]
    w = np.array([PAPER_START_WEIGHT if n in paper else 1.0 for n in names])
    return tuple(names), w / w.sum()


def draw(rng: np.random.Generator, cdf: np.ndarray) -> int:
    """The index `rng.choice(len(p), p=p)` draws, given `cdf = cumulative(p)`: the same index from the same
    single uniform draw (so seeded outputs stay byte for byte), without choice's checks and cumulative
    sum on every draw."""
    return int(cdf.searchsorted(rng.random(), side="right"))


def cumulative(p: np.ndarray) -> np.ndarray:
    """The cumulative distribution `Generator.choice` builds from probabilities `p` (cache it for `draw`)."""
    cdf = p.cumsum()
    cdf /= cdf[-1]
    return cdf


@lru_cache(maxsize=4096)
def _start_cdf(theme: Theme, relay: bool, want: tuple[int, ...]) -> np.ndarray:
    return cumulative(start_weights(theme, relay, want)[1])


@lru_cache(maxsize=65536)
def _edge_cdf(weights: tuple[int, ...], sharpness: float) -> np.ndarray:
    w = np.array(weights, float) ** sharpness
    return cumulative(w / w.sum())


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


def lookalikes(fx: Facts, given: list[tuple]) -> int:
    """How many directly stated values have a near-duplicate record in the world (AC-1038 beside
    AC-1039): records the agent must tell apart. These distractors are part of the world, never
    sentences in the instruction."""
    return sum(1 for _noun, table, column, value in given if fx.neighbours(table, column, value))


FEW_VALUES = 8  # a field whose column holds this few distinct values is guessed right at least 1 time in 8
COMMON_SHARE = 0.05  # a value held by this share of its column's rows is what a guesser tries first


def _few_values(fx: Facts, name: str, value: Any) -> bool:
    """A yes/no field, one whose column holds only a few values (a status), or a value common in its column
    (a default date, a usual count): a guess is too likely to be right for it to be an answer."""
    if isinstance(value, bool) or (isinstance(value, (int, float)) and value == int(value) and few_items(abs(int(value)))):
        return True  # a yes/no, or a small whole number (a count field): few values to guess among
    where = fx.column_of(name)
    return where is not None and (len(fx.values(*where)) <= FEW_VALUES or fx.share(*where, value) >= COMMON_SHARE)


VIABLE_SEEDS = 3  # tasks v3: probe seeds a (theme, level, kind) must yield a task for before other seeds are searched


def viable(fx: Facts, key: tuple, make, seeds: int = VIABLE_SEEDS) -> bool:
    """Whether `make(seed)` yields a checked task for any of `seeds` fixed probe seeds (worked out once per world and
    `key`, whatever was asked before, so every seed's task stays deterministic): a level a theme cannot make (its records
    too few, its answers all guessable) then fails at once instead of after every candidate of every seed. With person
    requests the verdict is first asked for while `synthesis.seen_answers` samples the level (before any other task of
    it), against fewer guesses than later tasks meet: a level it finds unmakeable stays so with more guesses, and one it
    finds makeable is searched as before."""
    cache = fx.derived.setdefault("viable", {})
    if key not in cache:
        cache[key] = True  # the probes themselves search
        ok, outer, start = False, not fx.probing, time.process_time()
        fx.probing = True
        try:
            for s in range(seeds):
                try:
                    make(2**29 + s)
                except TaskError:
                    continue
                ok = True
                break
        finally:
            if outer:  # (a probe's own probes are inside its time)
                fx.probing = False
                fx.probe_cpu += time.process_time() - start
        cache[key] = ok
    return cache[key]


def few_items(n: int) -> bool:
    """A count of this few items is a guess among few values (lists in a world mostly hold a handful of
    items, so small counts repeat across tasks): like a few-valued field, it is not used as an answer."""
    return n <= FEW_VALUES


def _phrase_rng(body) -> np.random.Generator:
    """The draws that word a task (its reason), seeded by the task itself: wording never shifts the walks."""
    return np.random.default_rng(int(hashlib.sha1(repr(body).encode()).hexdigest()[:12], 16))


def task_id(theme: Theme, kind: str, difficulty: int, seed: int, db_seed: int, body: str) -> str:
    digest = hashlib.sha1(f"{theme.id}|{kind}|{difficulty}|{seed}|{db_seed}|{body}".encode()).hexdigest()[:10]
    return f"{theme.id}-{kind[0]}{difficulty}-{digest}"


def state_check(fx: Facts, run: Run) -> tuple[tuple[str, ...], str] | None:
    """(tables the chain wrote, their hash), or None when the writes left the state unchanged. The rows
    read for the hash stay on the run (`Run.state_rows`): the quality filter compares its replay with them."""
    tables = tuple(sorted(run.written))
    run.state_rows = {}
    final = fx.state_hash(run.conn, tables, run.state_rows, unchanged=set(tables) - run.changed)
    return None if final == fx.initial_hash(tables) else (tables, final)


# ------------------------------------------------------------------------------------------ walks


@lru_cache(maxsize=4096)
def _consumed_keys(theme: Theme) -> frozenset:
    return frozenset(k for t in theme.toolset for p in t.consumes if (k := theme.key_of(p)))


@lru_cache(maxsize=65536)
def _tool_keys(theme: Theme, name: str) -> frozenset:
    return frozenset(k for p in theme.toolset[name].consumes if (k := theme.key_of(p)))


@lru_cache(maxsize=4096)
def relays(theme: Theme) -> frozenset:
    """Read tools whose metadata says they can pass a new key on: a record output (not a list) holding a
    key the tool was not given that some tool takes. Only these can sit mid-chain and be needed."""

    consumed = _consumed_keys(theme)
    return frozenset(t.name for t in theme.toolset if not t.writes and output_kind(t) in (dict, None)
                     and ({theme.key_of(k) or k for k in t.produces} - _tool_keys(theme, t.name)) & consumed)


@lru_cache(maxsize=4096)
def chain_depth(theme: Theme) -> dict[str, int]:
    """{tool: the most calls a chain of needed calls starting at it can have}, by metadata: a relay passes a
    key on to a tool that takes it; any other tool ends its chain (capped at MAX_DEPTH)."""
    relay = relays(theme)
    passes = {n: ({theme.key_of(k) or k for k in theme.toolset[n].produces} - _tool_keys(theme, n)) for n in relay}
    takers = {n: [b.name for b in theme.toolset if b.name != n and _tool_keys(theme, b.name) & passes[n]] for n in relay}
    depth = dict.fromkeys((t.name for t in theme.toolset), 1)
    for _ in range(MAX_DEPTH):
        depth = {n: min(MAX_DEPTH, 1 + max((depth[b] for b in takers[n]), default=0)) if n in relay else 1 for n in depth}
    return depth


MAX_DEPTH = 6


def _deep_enough(names: list[str], depth: dict[str, int], want: tuple[int, ...]) -> list[str]:
    """The names whose chains reach the first length of `want` any of them reaches (all names if none does)."""
    for d in want:
        deep = [n for n in names if depth[n] >= d]
        if deep:
            return deep
    return names


class _Walk:
    """One attempt: the calls made so far on a private copy, and how each argument was obtained."""

    def __init__(self, theme: Theme, fx: Facts, rng: np.random.Generator):
        self.theme, self.fx, self.rng = theme, fx, rng
        self.run = fx.run(memo=True)
        self.refs: list[dict[str, int]] = []  # per call: param -> index of the call it came from
        self.edge_kinds: list[int] = []
        self.given: list[tuple] = []  # (noun, table, column, value) stated directly in the instruction
        self.unique: list[tuple] = []  # (table, column, value) that must identify one row

    @property
    def outputs(self) -> list[Any]:
        return [r.data for r in self.run.results]

    def _known_before(self, j: int) -> set:
        """Values the calls up to j were given: no news when call j's output repeats one of them."""
        return {v for c in self.run.calls[:j + 1] for v in c.arguments.values() if isinstance(v, (str, int, float))}

    def _source(self, j: int) -> bool:
        """Whether call j's output may feed a later argument (a record, or a list of exactly one)."""
        data = self.run.results[j].data
        return isinstance(data, dict) or (isinstance(data, list) and len(data) == 1)

    def waiting(self) -> int | None:
        """The read whose result nothing has used yet, if any: the next call must use it (every lookup
        is needed by construction). Only the latest call can be waiting, since each call uses the one before."""
        j = len(self.run.calls) - 1
        if j < 0 or self.theme.toolset[self.run.calls[j].name].writes or any(j in refs.values() for refs in self.refs):
            return None
        return j

    def news(self, j: int) -> frozenset:
        """The entity keys call j's output holds a value for that no call up to j was given (what a later
        call can take from it)."""
        if not self._source(j):
            return frozenset()
        known, data = self._known_before(j), self.run.results[j].data
        return frozenset(k for k in _consumed_keys(self.theme) if (f := find_key(data, k)) is not None and f[1] not in known)

    def fill(self, t: Tool, feed: int | None = None) -> tuple[dict, dict] | None:
        """Arguments for `t` and, per argument taken from an earlier output, that call's index. With
        `feed`, that call's output is tried first and must supply at least one argument (else None)."""
        args: dict[str, Any] = {}
        refs: dict[str, int] = {}
        required = set(t.parameters.get("required", ()))
        outputs = self.outputs
        order = range(len(outputs) - 1, -1, -1) if feed is None else [feed, *(j for j in range(len(outputs) - 1, -1, -1) if j != feed)]
        chained: dict[str, Any] = {}  # entity arguments taken from earlier outputs, found first so sampled ones can pair with them
        for p in t.parameters.get("properties", {}):
            key = self.theme.key_of(p) if p in t.consumes else None
            for j in order if key else ():
                found = find_key(outputs[j], key) if self._source(j) else None
                # a value call j was given is no news from it: the user states it, call j is not needed for it
                if found is not None and found[1] not in chained.values() and found[1] not in self._known_before(j):
                    chained[p], refs[p] = found[1], j
                    break
        for p, prop in t.parameters.get("properties", {}).items():
            key = self.theme.key_of(p) if p in t.consumes else None
            if key:
                if p in chained:
                    args[p] = chained[p]
                elif p in required or self.rng.random() < 0.3:
                    value = self._paired(t, key, {**args, **chained})
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
        if feed is not None and feed not in refs.values():
            return None
        return args, refs

    def _paired(self, t: Tool, key: str, args: dict) -> Any:
        """A value for entity `key`: one a row of the world holds beside an entity argument `t` already has
        (`Facts.related`: the user a document is shared with, not any user, whom a write would mostly
        refuse), else any value of the key."""
        for q, v in args.items():
            other = self.theme.key_of(q) if q in t.consumes else None
            if other and other != key:
                values = self.fx.related(other, v, key)
                if values:
                    return values[int(self.rng.integers(len(values)))]
        named = P.named_pool(self.theme, self.fx, key) if P.enabled() else ()  # tasks v3: a record a person can name, where any
        return named[int(self.rng.integers(len(named)))] if named else sample_key(self.fx, key, self.rng)

    def step(self, t: Tool, feeds_next: bool = False) -> bool:
        """Fill and run one call (taking the waiting read's result, if any); on failure the call is
        forgotten (a failed write changed nothing). With `feeds_next`, a read must give a result a
        later call can take a key from (else a later call could not need it)."""
        marks = len(self.given), len(self.unique)
        filled = self.fill(t, self.waiting())
        if filled is not None:
            result = self.run.call(t.name, filled[0])
            if result.ok and result.data not in (None, [], {}):
                self.refs.append(filled[1])
                if not (feeds_next and not t.writes and not self.news(len(self.run.calls) - 1)):
                    return True
                del self.refs[-1]  # a read: forgetting it leaves the copy as it was
            del self.run.calls[-1], self.run.results[-1]
        del self.given[marks[0]:], self.unique[marks[1]:]
        return False


def _next_tool(edges: dict[str, int], tools: dict[str, Tool], lv: Level, rng, used: set, writes: bool | None,
               feed: frozenset | None = None, theme: Theme | None = None, relay: bool = False, failed: frozenset = frozenset(),
               want: tuple[int, ...] = ()) -> str | None:
    """Weight-biased choice of the next tool; `writes` True/False restricts to write/read tools, and
    `feed` (the keys a waiting read's result holds) to tools that take one of them: None when no tool can.
    `relay`: a call a later one must use; reads that cannot pass a key on (`relays`) are left out.
    `failed`: tools that already failed at this position (with a key from the chain they would fail again)."""
    names = [n for n in edges if (writes is None or tools[n].writes == writes) and n not in failed]
    if feed is not None:
        names = [n for n in names if _tool_keys(theme, n) & feed]
    if relay:
        names = [n for n in names if tools[n].writes or n in relays(theme)]
    if want:  # reads whose chains can still reach the walk's length (or at least the level's minimum)
        depth = chain_depth(theme)
        reads = _deep_enough([n for n in names if not tools[n].writes], depth, want)
        names = [n for n in names if tools[n].writes or n in reads]
    names = [n for n in names if n not in used] or names  # repeat a tool only when the theme has no other
    if not names:
        return None
    return names[draw(rng, _edge_cdf(tuple(edges[n] for n in names), lv.sharpness))]


def synthesize_walk_task(theme: Theme, difficulty: int = 1, seed: int = 0, db_seed: int = 0, attempts: int = 60, check: bool = True,
                         answers_only: bool = False) -> Task:
    """One verified task from weight-biased walks over the tool dependency graph for `theme` at `difficulty`,
    deterministic in `seed` (the graph kind's classic tasks; `synthesis.synthesize_graph_task`).

    Bounded: at most `attempts` walks. Raises TaskError when none gives a valid task. `answers_only`:
    no writes (the tasks `answer_prior` samples: only tasks that change nothing are guessed).
    """
    lv = level(difficulty)
    rng = np.random.default_rng([seed, difficulty, db_seed, 7919])
    fx = facts(theme, db_seed)
    graph = dependency_graph(theme)
    tools = theme.toolset.tools
    writers = [n for n, t in tools.items() if t.writes]
    has_writes = bool(writers)
    problems: list[str] = []
    for _ in range(attempts):
        length = int(rng.integers(lv.calls[0], lv.calls[1] + 1))
        need_write = has_writes and length > 1 and rng.random() < lv.writes and not answers_only
        walk = _Walk(theme, fx, rng)
        try:
            previous, ok = None, True
            for i in range(length):
                restrict = True if (i + 1 == length and need_write) else (None if need_write else False)
                failed: set[str] = set()
                for _ in range(RETRIES):  # a step that fails is redrawn; the chain so far is kept
                    want = (length - i, max(min(lv.calls[0], MIN_NEEDED_CALLS) - i, 1))  # calls still to come, counting this one
                    if previous is None and need_write and rng.random() < 0.5:
                        # a request that needs no lookup may open a write task (chains mostly end at a few writes)
                        current = writers[int(rng.integers(len(writers)))]
                    elif previous is None:
                        names = start_weights(theme, relay=length > 1, want=want)[0]
                        current = names[draw(rng, _start_cdf(theme, length > 1, want))]
                    else:
                        waiting = walk.waiting()
                        feed = walk.news(waiting) if waiting is not None else None
                        current = _next_tool(graph[previous], tools, lv, rng, {c.name for c in walk.run.calls}, restrict, feed, theme,
                                             i + 1 < length, frozenset(failed) if feed else frozenset(), want)
                        if current is None:
                            break
                    if walk.step(tools[current], feeds_next=i + 1 < length):
                        break
                    failed.add(current)
                else:
                    current = None
                if current is None:  # the chain cannot go on: a walk long enough for the level ends here
                    ok = i >= min(lv.calls[0], MIN_NEEDED_CALLS)
                    break
                if previous is not None:
                    walk.edge_kinds.append(graph[previous][current])
                previous = current
            if not ok:
                continue
            _prune(theme, walk, graph)
            if len(walk.run.calls) < min(lv.calls[0], MIN_NEEDED_CALLS):
                continue  # what is left is an easier level's task
            task = _to_task(theme, fx, walk, difficulty, seed, db_seed, lv, rng)
            if task is None:
                continue
            if check:
                problems = candidate_problems(theme, task, walk.run, seed)
                if problems:
                    continue
            return task
        finally:
            walk.run.close()
    raise TaskError(f"Expected theme {theme.id!r} to yield a valid graph task at difficulty {difficulty}, got none in "
                    f"{attempts} walks (seed {seed}{'; last problems: ' + ', '.join(problems) if problems else ''}). "
                    "Try a lower difficulty, kind='programmatic', or pass fallback=True to synthesize_task.")


def _ref_phrase(theme: Theme, walk: _Walk, param: str, j: int) -> str:
    """An argument that came from call `j`'s output, described by where it comes from."""
    return _subject(theme, walk, j, W.entity_noun(theme, param))


def _subject(theme: Theme, walk: _Walk, i: int, noun: str | None) -> str:
    """'the account of card CD-1001': call `i`'s result as a noun phrase built from its arguments
    (its entity argument after "of", other arguments after "with"), recursively for chained ones."""
    call, refs = walk.run.calls[i], walk.refs[i]
    t = theme.toolset[call.name]
    of, of_noun, extra = None, None, []
    for p, v in call.arguments.items():
        key = theme.key_of(p) if p in t.consumes else None
        if p in refs:
            text = _ref_phrase(theme, walk, p, refs[p])
        else:
            text = W.labelled_text(theme, t, p, v)
        if key and of is None:
            of, of_noun = text, noun_of(key)
        elif key:
            extra.append(text)
        else:
            extra.append(text if p not in refs else f"{W.field_name(p)} {text}")
    if noun is not None and noun == of_noun and not extra:
        return of  # the record of the entity it was asked for: "account AC-1", not "the account of account AC-1"
    return W.described(noun or "result", of, extra)


def _facts_text(theme: Theme, walk: _Walk, i: int) -> str:
    """Call `i`'s arguments as the facts a question names: 'account AC-1 and category dining'."""
    call, refs = walk.run.calls[i], walk.refs[i]
    t = theme.toolset[call.name]
    parts = [_ref_phrase(theme, walk, p, refs[p]) if p in refs else W.labelled_text(theme, t, p, v) for p, v in call.arguments.items()]
    return " and ".join(parts)


def _request(theme: Theme, walk: _Walk, i: int) -> str:
    """A write call as something the user asks for (the tool's phrase, arguments described)."""
    call, refs = walk.run.calls[i], walk.refs[i]
    t = theme.toolset[call.name]
    parts = {p: _ref_phrase(theme, walk, p, refs[p]) if p in refs else W.argument_text(theme, t, p, v) for p, v in call.arguments.items()}
    return W.clause(theme, t, parts)


def _needless_call(theme: Theme, walk: _Walk) -> bool:
    """A read before the last call whose result no later call uses (the instruction would have to
    narrate it, or an agent could skip it): the walk is not a task."""
    used = {j for refs in walk.refs for j in refs.values()}
    calls = walk.run.calls
    return any(j not in used and not theme.toolset[c.name].writes for j, c in enumerate(calls[:-1]))


def _prune(theme: Theme, walk: _Walk, graph: dict) -> None:
    """Drop the reads nothing needs: a read is needed when it is the last call or feeds a needed call.
    Reads change nothing, so the rest of the walk (its outputs, its end state) stays as it ran."""
    calls = walk.run.calls
    needed = {len(calls) - 1} | {i for i, c in enumerate(calls) if theme.toolset[c.name].writes}
    for i in range(len(calls) - 1, -1, -1):
        if i in needed:
            needed.update(walk.refs[i].values())
    if len(needed) == len(calls):
        return
    keep = sorted(needed)
    new_index = {old: new for new, old in enumerate(keep)}
    walk.run.calls[:] = [calls[i] for i in keep]
    walk.run.results[:] = [walk.run.results[i] for i in keep]
    walk.refs = [{p: new_index[j] for p, j in walk.refs[i].items()} for i in keep]
    names = [c.name for c in walk.run.calls]
    walk.edge_kinds = [graph[a][b] if a != b else STRONG for a, b in zip(names, names[1:], strict=False)]


def _ambiguous_reference(walk: _Walk) -> bool:
    """An argument taken from a list of several items: "the first one listed" depends on an order the
    user never stated."""
    outputs = walk.outputs
    return any(isinstance(outputs[j], list) and len(outputs[j]) != 1 for refs in walk.refs for j in refs.values())


def _to_task(theme: Theme, fx: Facts, walk: _Walk, difficulty: int, seed: int, db_seed: int, lv: Level, rng) -> Task | None:
    calls, outputs = walk.run.calls, walk.outputs
    last, out = theme.toolset[calls[-1].name], outputs[-1]
    wrote = any(theme.toolset[c.name].writes for c in calls)
    if any(fx.count(*u) != 1 for u in walk.unique):
        return None  # a directly given value that matches several rows would make the task ambiguous
    if _needless_call(theme, walk) or _ambiguous_reference(walk):
        return None
    tables, final = (), None
    if wrote:
        changed = state_check(fx, walk.run)
        if changed is None:
            return None
        tables, final = changed
    given = {W.show(v) for c in calls for v in c.arguments.values()}
    answer, answer_type, question, path = None, "none", "", None
    n = len(calls) - 1
    one = isinstance(out, list) and len(out) == 1 and isinstance(out[0], dict)
    if one:  # a list of one: ask about the record (its count, 1, is what a guesser says first)
        out = out[0]
    if isinstance(out, list) and not last.writes:
        if not capped(last, calls[-1].arguments, out) and not few_items(len(out)) and all(isinstance(x, dict) for x in out):
            key = next((theme.key_of(k) for k in last.produces if find_key(out, theme.key_of(k) or k)), None)
            noun = W.plural(noun_of(key)) if key else "items"
            answer, answer_type, path = len(out), "number", [n, "#count"]
            where = _facts_text(theme, walk, n)
            question = f"How many {noun} are there for {where}?" if where else f"How many {noun} are there?"
    elif isinstance(out, dict) and (not wrote or rng.random() < 0.5):
        fields = {k: v for k, v in scalar_fields(out).items()
                  if W.show(v) not in given and not k.lower().endswith("id") and not (isinstance(v, str) and (len(v) > 80 or not v.strip()))}
        fields = {k: v for k, v in fields.items() if not _few_values(fx, k, v)}
        earlier = [x for d in outputs[:-1] for x in (d if isinstance(d, list) else [d]) if isinstance(x, dict)]
        fields = {k: v for k, v in fields.items() if not any(x.get(k) == v for x in earlier)}  # else the last call is not needed
        if fields:
            name = sorted(fields)[int(rng.integers(len(fields)))]
            answer = fields[name]
            answer_type = "bool" if isinstance(answer, bool) else "number" if isinstance(answer, (int, float)) else "text"
            path = [n, "#0", name] if one else [n, name]
            field = W.field_name(name)  # "duration in minutes", "start time"
            if isinstance(answer, str) and _ISO_DATE.match(answer) and not {"date", "time", "day"} & set(field.split()):
                field += " date"  # "opened" -> "opened date"
            noun = record_noun(theme, fx, last, out)
            if last.writes and (answer_type == "bool" or sum(theme.toolset[c.name].writes for c in calls) > 1):
                answer, answer_type, path = None, "none", None  # "it" would be ambiguous among several requests
            elif last.writes:
                question = f"What {field} does the system report for it?"
            elif noun is None:
                question = W.field_question(field, _facts_text(theme, walk, n), answer, of="for")
            else:  # "Tell me when session SE-1 started." for a column saying when something happened
                subject = _subject(theme, walk, n, noun)
                question = W.when(name, subject) or W.field_question(field, subject, answer)
    if answer_type == "none" and not wrote:
        return None
    if not last.writes and answer_type == "none":
        return None  # the last lookup would answer nothing
    requests = [_request(theme, walk, i) for i, c in enumerate(calls) if theme.toolset[c.name].writes]
    person = P.enabled()  # tasks v3 (opt-in): a person's request with a depth floor
    instruction = W.goal(requests, question or ("Let me know once it is done." if person else "Tell me when it is done."))
    solution = tuple({"name": c.name, "arguments": dict(c.arguments)} for c in calls)
    v3: dict = {}
    if person:
        made = _as_person(theme, fx, walk, difficulty, rng, instruction, solution, outputs, path, answer, answer_type, wrote)
        if made is None:
            return None
        instruction, solution, path, v3 = made
    strong = sum(1 for k in walk.edge_kinds if k == STRONG)
    features = {
        "calls": len(solution),
        "distinct_tools": len({c["name"] for c in solution}),
        "writes": sum(1 for c in calls if theme.toolset[c.name].writes),
        "weak_share": round(1 - strong / len(walk.edge_kinds), 3) if walk.edge_kinds else 0.0,
        "chained_args": sum(len(r) for r in walk.refs),
        "aggregation": 0,
        "branching": 0,
        "distractors": lookalikes(fx, walk.given),
        "answer_path": path,
        **{k: v for k, v in v3.items() if k != "unique"},
        "unique": [list(u) for u in walk.unique] + v3.get("unique", []),
        "knobs": knobs(lv),
    }
    return Task(
        id=task_id(theme, "graph", difficulty, seed, db_seed, repr(solution)), theme=theme.id, kind="graph",
        instruction=instruction, difficulty=difficulty, solution=solution, answer=answer, answer_type=answer_type,
        state_tables=tables, state_hash=final, db_seed=db_seed, features=features,
    )


def _as_person(theme: Theme, fx: Facts, walk: _Walk, difficulty: int, rng, instruction: str, solution: tuple, outputs: list,
               path, answer, answer_type: str, wrote: bool):
    """Tasks v3 (`persona.enabled`): the request as a person makes it (records named by what a person knows,
    found by reads that open the gold, a speaker with a reason), kept only at the level's depth floor.
    (instruction, solution, answer path, v3 features), or None for a candidate v3 rejects."""
    instruction, found, identity = P.personalize(theme, fx, instruction, walk.given)
    if P.keeps_ids(theme, instruction, walk.given, rng):
        return None  # a record named by its row id: most such candidates give way to one a person can name
    reads = P.gold_reads(found)
    solution = (*reads, *solution)
    if path is not None:
        path = [path[0] + len(reads), *path[1:]]
    outputs = [*(D.outputs_of(fx, reads) or [None] * len(reads)), *outputs] if reads else outputs
    if answer_type != "none" and any(answer in D.scalars(o) for o in outputs[:len(reads)]):
        return None  # a resolving read already shows the answer: the rest of the gold is not needed
    sinks = [i for i, c in enumerate(solution) if theme.toolset[c["name"]].writes] + ([path[0]] if path else [])
    deep, dependent = D.problems(theme, difficulty, solution, outputs, instruction, answer, aggregate=False, sinks=sinks,
                                 probe=answer if answer_type != "none" else None)
    if deep:
        return None
    kind = "change" if wrote else "count" if path and path[1] == "#count" else "ask"
    instruction = P.frame(instruction, kind, _phrase_rng(solution), identity)
    return instruction, solution, path, {"dependent_lookups": dependent, "resolved": len(found), "resolving_reads": len(reads),
                                         "unique": [list(u) for r in found for u in r.unique]}


def output_kind(t: Tool) -> type | None:
    """list or dict from the tool function's return annotation; None when it does not say."""
    hint = getattr(t.fn, "__annotations__", {}).get("return")
    if isinstance(hint, str):  # postponed annotations: "list", "list[dict]", "dict"
        hint = hint.split("[")[0].strip()
        return {"list": list, "dict": dict}.get(hint)
    origin = typing.get_origin(hint) or hint
    return origin if origin in (list, dict) else None
