"""Dependent chains by construction (tasks v3): level k's lookups, each fed by the one before.

Random walks filtered for depth seldom reach levels 3-5 (a walk drifts into reads whose results
nothing needs). Here the chain is built on the world itself, from a record a person can name:

* the start record is found as a person would point at it (`persona.resolve`: "the patient with
  email a@b.org", "my order on 2025-06-02"), else by its id (a code the person was given);
* each hop reads a record whose key only the record before holds: *up* to the record a field points
  at (`get_account` with the card's account id: "the account of ..."), or *down* to one of the
  records a listing of the current one shows, picked by a field no other listed record shares
  ("the order on 2025-06-02 of ..."); a hop reaching a record or a key value already read is not taken;
* the search is depth-first with backtracking over the hops the tool metadata allows, so a chain of
  the length the level needs (`depth.MIN_DEPENDENT`; level 5: 4) is found when the world has one;
* the end asks for a field of the last record that no earlier result shows, or (write levels)
  makes a change to it, stated as a person's goal with a reason (`persona.frame`).

The task then goes through the same depth rules (`depth.problems`) and quality filter as a walk's.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import TaskError
from ..tasks import Task
from ..theme import Theme, noun_of, scalar_fields
from . import depth as D
from . import persona as P
from . import wording as W
from .facts import Facts, facts
from .graph import (
    _ISO_DATE,
    MAX_CALLS,
    VIABLE_SEEDS,
    WALKS_UP_TO,
    _few_values,
    _phrase_rng,
    capped,
    find_key,
    knobs,
    level,
    lookalikes,
    output_kind,
    sample_key,
    sample_plain,
    state_check,
    task_id,
    viable,
)
from .quality import candidate_problems

AGGREGATE_SHARE = 0.7  # of level 4-5 chains, those that end in an aggregate (the rest chain 3-4 records one by one)
EXPANSIONS = 40  # hops tried per chain before the attempt gives up (the search is bounded whatever the world)


def hops_needed(difficulty: int) -> int:
    """The dependent lookups a chain for `difficulty` is built to (level 5: one more than level 4, since
    a chain has no aggregate)."""
    return D.MIN_DEPENDENT[difficulty] + (1 if difficulty == 5 else 0)


def _one_key_reads(theme: Theme, not_kind: type):
    """(read tool, its one required parameter) for the reads taking a single key, except those returning `not_kind`."""
    for t in theme.toolset:
        req = list(t.parameters.get("required", ()))
        if not t.writes and len(req) == 1 and req[0] in t.consumes and output_kind(t) is not not_kind:
            yield t, req[0]


@lru_cache(maxsize=4096)
def _getters(theme: Theme) -> dict[str, tuple[tuple[str, str], ...]]:
    """{entity key: ((read tool, its key parameter), ...)}: reads that return one record given its key."""
    out: dict[str, list] = {}
    for t, param in _one_key_reads(theme, list):
        key = theme.key_of(param)
        made = [theme.key_of(k) or k for k in t.produces]
        if key and (not made or made[0] == key):
            out.setdefault(key, []).append((t.name, param))
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=4096)
def _listers(theme: Theme) -> dict[str, tuple[tuple[str, str, str], ...]]:
    """{owner key: ((read tool, its key parameter, listed key), ...)}: reads that list an owner's records."""
    out: dict[str, list] = {}
    for t, param in _one_key_reads(theme, dict):
        owner = theme.key_of(param)
        child = next((k2 for k in t.produces if (k2 := theme.key_of(k) or k) != owner and k2 in theme.entity_keys), None)
        if owner and child:
            out.setdefault(owner, []).append((t.name, param, child))
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=4096)
def _writers(theme: Theme) -> dict[str, tuple[tuple[str, str], ...]]:
    """{entity key: ((write tool, its key parameter), ...)}: writes that change one record given its key."""
    out: dict[str, list] = {}
    for t in theme.toolset:
        req = list(t.parameters.get("required", ()))
        keyed = [p for p in req if p in t.consumes and theme.key_of(p)]
        if t.writes and len(keyed) == 1:
            out.setdefault(theme.key_of(keyed[0]), []).append((t.name, keyed[0]))
    return {k: tuple(v) for k, v in out.items()}


def chainable(theme: Theme) -> bool:
    """Whether the theme's metadata allows any hop (a getter or a listing keyed by an entity)."""
    return bool(_getters(theme) or _listers(theme))


@lru_cache(maxsize=4096)
def _key_edges(theme: Theme) -> dict[str, frozenset]:
    """{entity key: the keys one hop reaches}, by metadata: up to a key a column of its table points at (a
    getter reads it), down to the children a listing shows of it or of a record it points at."""
    cols = {k: {c.name for c in theme.spec.table(t).columns} for k, (t, _c) in theme.entity_keys.items()}

    def points(k: str, other: str) -> bool:
        return other in cols[k] or any(c.endswith("_" + other) for c in cols[k])

    listers = _listers(theme)
    out = {}
    for k in theme.entity_keys:
        up = {p for p in _getters(theme) if p != k and points(k, p)}
        down = {c for o, tools in listers.items() if o == k or points(k, o) for _n, _p, c in tools}
        out[k] = frozenset(up | down)
    return out


@lru_cache(maxsize=4096)
def _longest(theme: Theme, end: bool) -> int:
    """The most hops a chain can take by metadata (a start picked from an owner's listing counts one more);
    `end`: chains that stop at a key some listing takes (an aggregate's)."""
    edges, owned = _key_edges(theme), {c for tools in _listers(theme).values() for _n, _p, c in tools}

    def walk(k: str, seen: frozenset) -> int:
        here = 0 if not end or k in _listers(theme) else -99
        return max([here, *(1 + walk(n, seen | {n}) for n in edges.get(k, ()) if n not in seen)])

    starts = set(_getters(theme)) | set(_listers(theme)) | owned
    return max((walk(k, frozenset({k})) + (k in owned) for k in starts), default=0)


def reachable(theme: Theme, difficulty: int) -> bool:
    """Whether the theme's metadata allows a chain for `difficulty` (an upper bound: the world may still not
    hold one, then the walks are tried): a cheap test that spares themes without deep chains the search."""
    if not chainable(theme):
        return False
    if _longest(theme, False) >= hops_needed(difficulty):
        return True
    return difficulty >= 4 and _longest(theme, True) + 1 >= D.MIN_DEPENDENT[difficulty]


class _Chain:
    """A chain under construction: gold calls, their outputs, the phrase for the current record."""

    def __init__(self, run, calls: list[dict], outputs: list, phrase: str, mine: bool):
        self.run, self.calls, self.outputs, self.phrase, self.mine = run, calls, outputs, phrase, mine
        self.records: list[tuple[str, Any, dict]] = []  # (key, value, record) along the chain
        self.down = False  # whether the last record was picked from a listing (its key is news from that read)
        self.by_id = False  # whether the start record is named by its id (a getter read only an up hop needs)
        self.scalars = [D.scalars(o) for o in outputs]  # per output, worked out once (every hop reads them)
        self.seen: set = set().union(*self.scalars)

    def of(self, noun: str, by: str = "") -> str:
        """The phrase for a record reached from the current one."""
        by = f" {by}" if by else ""
        if self.mine and self.phrase == "me":
            return f"my {noun}{by}"
        return f"the {noun}{by} of {self.phrase}"


def _hops(theme: Theme, key: str, record: dict, rng) -> list[tuple]:
    """The hops from a record of `key`, in a seeded random order: ("up", tool, param, parent key, value, parent key)
    for each field pointing at a record a getter reads; ("down", tool, param, child key, value, owner key) for
    each listing of this record's children or of the children of a record it points at."""
    out = []
    for pkey, tools in _getters(theme).items():
        if pkey == key:
            continue
        found = find_key(record, pkey)
        if found is not None:
            out += [("up", name, param, pkey, found[1], pkey) for name, param in tools]
    for owner, tools in _listers(theme).items():  # the record's own children, or those of a record it points at
        found = (key, record[key]) if owner == key and key in record else find_key(record, owner)
        if found is not None:
            out += [("down", name, param, child, found[1], owner) for name, param, child in tools]
    order = rng.permutation(len(out)) if out else []
    return [out[i] for i in order]


def _pick(items: list[dict], child: str, seen: set, rng) -> tuple[dict, str, str] | None:
    """A listed record with a new key value and a field that tells it apart: (record, its key field, 'on <date>' / 'named X')."""
    fresh = [x for x in items if isinstance(x, dict) and (f := _kfield(x, child)) and x[f] not in seen]
    if not fresh:
        return None
    rec = fresh[int(rng.integers(len(fresh)))]
    f = _kfield(rec, child)
    if len(items) == 1:
        return rec, f, ""
    for col in sorted(rec, key=lambda c: (P._pick_rank(c, rec[c]), c)):
        v = rec[col]
        if (col.lower().endswith("id") or isinstance(v, bool) or not isinstance(v, (str, int, float))
                or (isinstance(v, str) and (not v.strip() or len(v) > 40)) or sum(1 for x in items if isinstance(x, dict) and x.get(col) == v) != 1):
            continue
        return rec, f, (f"on {v}" if isinstance(v, str) and _ISO_DATE.match(v) else P._by(col, v))
    return None


def _kfield(record: dict, key: str) -> str | None:
    v = P._field(record, key)
    return v if v is not None and isinstance(record.get(v), (str, int)) and not isinstance(record.get(v), bool) else None


def _extend(theme: Theme, ch: _Chain, key: str, record: dict, need: int, rng, budget: list[int], end: frozenset | None = None) -> bool:
    """Depth-first: add `need` hops from `record` (backtracking on dead ends), ending at a record of a key
    in `end` (None: any); True when done."""
    if need <= 0:
        return end is None or key in end
    for kind, name, param, nkey, value, owner in _hops(theme, key, record, rng):
        if budget[0] <= 0:
            return False
        budget[0] -= 1
        if kind == "down" and ch.by_id and len(ch.records) == 1:
            continue  # the listing would take the stated id: the start's getter read would not be needed
        if any(value in s for s in ch.scalars[:-1]):
            continue  # an earlier result already gave this key: the current read would not be needed for it
        res = ch.run.call(name, {param: value})
        if not res.ok or not res.data:
            continue
        data = res.data
        if kind == "up":
            if not isinstance(data, dict) or any(v == value for k, v, _r in ch.records):
                continue
            nrec, nval, phrase = data, value, ch.of(noun_of(nkey))
        else:
            if not isinstance(data, list):
                continue
            picked = _pick(data, nkey, ch.seen, rng)
            if picked is None:
                continue
            nrec, f, by = picked
            nval, phrase = nrec[f], ch.of(noun_of(nkey), by)
            if owner != key:  # the children of the record a field points at: "the issue titled X of the repo of ..."
                phrase = f"the {noun_of(nkey)}{' ' + by if by else ''} of {ch.of(noun_of(owner))}"
        found = D.scalars(data)
        if not found - ch.seen:
            continue
        state = (ch.phrase, ch.mine, set(ch.seen), ch.down)
        ch.calls.append({"name": name, "arguments": {param: value}})
        ch.outputs.append(data)
        ch.scalars.append(found)
        ch.records.append((nkey, nval, nrec))
        ch.phrase, ch.mine, ch.down = phrase, False, kind == "down"
        ch.seen |= found
        if _extend(theme, ch, nkey, nrec, need - 1, rng, budget, end):
            return True
        ch.calls.pop(), ch.outputs.pop(), ch.scalars.pop(), ch.records.pop()
        ch.phrase, ch.mine, ch.seen, ch.down = state
    return False


def _start(theme: Theme, fx: Facts, run, rng) -> tuple[_Chain, str, Any, dict, str | None, list] | None:
    """The start record: (chain, key, value, record, identity sentence, unique values) or None."""
    keys = sorted(set(_getters(theme)) | set(_listers(theme)))
    if not keys:
        return None
    key = keys[int(rng.integers(len(keys)))]
    value = sample_key(fx, key, rng)
    if value is None:
        return None
    res = P.resolve(theme, fx, key, value)
    if res is not None:
        outputs = [run.call(c["name"], c["arguments"]).data for c in res.calls]
        record = _record_in(outputs[-1], key, value)
        if record is None:
            return None
        mine = res.mine is not None
        phrase = res.mine if mine and res.mine != "me" else ("me" if mine else res.phrase)
        ch = _Chain(run, [dict(c) for c in res.calls], outputs, phrase, mine)
        return ch, key, value, record, res.identity, [list(u) for u in res.unique]
    getter = _getters(theme).get(key)
    if not getter or P._finders(theme) and not P.held_code(key):
        # a record no tool finds by what a person knows keeps its id only where the id is a code the person was
        # given (`persona.held_code`: an order number, an issue number) or in a theme where no record can be found
        # that way: a chain is searched many times per task, so a per-try share (`persona.ID_KEPT`) would let most
        # themes' tasks through with an id
        return None
    name, param = getter[0]
    out = run.call(name, {param: value})
    if not out.ok or not isinstance(out.data, dict):
        return None
    ch = _Chain(run, [{"name": name, "arguments": {param: value}}], [out.data], f"{noun_of(key)} {W.show(value)}", False)
    ch.by_id = True
    return ch, key, value, out.data, None, []


def _record_in(data: Any, key: str, value: Any) -> dict | None:
    items = data if isinstance(data, list) else [data]
    return next((x for x in items if isinstance(x, dict) and (f := P._field(x, key)) and x[f] == value), None)


def _question(theme: Theme, fx: Facts, ch: _Chain, rng) -> tuple[str, Any, list] | None:
    """(question, answer, answer path) about a field of the last record no earlier result shows."""
    last = ch.outputs[-1]
    rec = ch.records[-1][2] if ch.records else None
    if rec is None:
        return None
    earlier = {W.show(v) for o in ch.outputs[:-1] for v in D.scalars(o)}
    given = {W.show(v) for c in ch.calls for v in c["arguments"].values()}
    fields = {k: v for k, v in scalar_fields(rec).items()
              if not k.lower().endswith("id") and W.show(v) not in earlier | given and W.show(v) not in ch.phrase and not (isinstance(v, str) and (len(v) > 80 or not v.strip()))
              and not _few_values(fx, k, v) and not theme.key_of(k)}
    if not fields:
        return None
    name = sorted(fields)[int(rng.integers(len(fields)))]
    answer = fields[name]
    field = W.field_name(name)
    if isinstance(answer, str) and _ISO_DATE.match(answer) and not {"date", "time", "day"} & set(field.split()):
        field += " date"
    question = W.when(name, ch.phrase) or W.field_question(field, ch.phrase, answer)
    n = len(ch.calls) - 1
    if isinstance(last, dict):
        return question, answer, [n, name]
    key, value, _rec = ch.records[-1]  # a record picked from a listing: read off it by its key
    return question, answer, [n, "#where", _kfield(rec, key), value, name]


MIN_CANDIDATES = 3  # an aggregate compares at least this many records (the floor)


def _aggregate(theme: Theme, fx: Facts, ch: _Chain, rng) -> tuple[str, Any, list, int] | None:
    """(question, answer, answer path, candidates) of "which of the <children> of <record> has the highest <field>?":
    one more dependent lookup (the listing) and an aggregate over at least MIN_CANDIDATES records."""
    key, value, _rec = ch.records[-1]
    options = _listers(theme).get(key, ())
    for i in (rng.permutation(len(options)) if options else []):
        name, param, child = options[int(i)]
        res = ch.run.call(name, {param: value})
        items = [x for x in res.data if isinstance(x, dict)] if res.ok and isinstance(res.data, list) else []
        if len(items) < MIN_CANDIDATES or capped(theme.toolset[name], {param: value}, res.data) or not _kfield(items[0], child):
            continue
        idf = _kfield(items[0], child)
        numeric = sorted(c for c, v in items[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool) and not theme.key_of(c)
                         and all(isinstance(x.get(c), (int, float)) and not isinstance(x.get(c), bool) for x in items))
        if not numeric:
            continue
        target = numeric[int(rng.integers(len(numeric)))]
        op = ("#max", "#min")[int(rng.integers(2))]
        vals = sorted((x[target] for x in items), reverse=op == "#max")
        if vals[0] == vals[1]:
            continue  # a tie: no one answer
        ch.calls.append({"name": name, "arguments": {param: value}})
        ch.outputs.append(res.data)
        field = W.field_name(target)
        which = ("most" if op == "#max" else "fewest") if W.is_plural(field) else ("highest" if op == "#max" else "lowest")
        best = (max if op == "#max" else min)(items, key=lambda x: x[target])
        question = (f"Among the {W.plural(noun_of(child))} of {ch.phrase}, which has the {which} {field}? "
                    f"Answer with its {W.field_name(idf)}.")
        return question, best[idf], [len(ch.calls) - 1, op, target, idf], len(items)
    return None


def _write(theme: Theme, fx: Facts, ch: _Chain, rng) -> str | None:
    """Make a change to a record the last read gave the key of (other values sampled): the request, or None.
    The target is the last record itself when it was picked from a listing (its key is news from that read),
    else a record one of its fields points at (a write's key must come from the last read, else that read
    would not be needed)."""
    options = _write_targets(theme, ch)
    for i in (rng.permutation(len(options)) if options else []):
        name, param, value, phrase = options[int(i)]
        t = theme.toolset[name]
        args: dict = {param: value}
        parts = {param: phrase}
        ok = True
        for p, prop in t.parameters.get("properties", {}).items():
            if p == param or (p not in t.parameters.get("required", ()) and not (rng.random() < 0.5 and ("enum" in prop or p in t.examples))):
                continue
            if p in t.consumes and theme.key_of(p):
                ok = False  # a second record to name: not this chain's request
                break
            sampled = sample_plain(theme, fx, t, p, prop, rng)
            if sampled is None:
                ok = p not in t.parameters.get("required", ())
                if not ok:
                    break
                continue
            args[p] = sampled[0]
            parts[p] = W.argument_text(theme, t, p, sampled[0])
        if not ok:
            continue
        res = ch.run.call(name, args)
        if res.ok:
            ch.calls.append({"name": name, "arguments": args})
            ch.outputs.append(res.data)
            return W.clause(theme, t, parts)
    return None


def _write_targets(theme: Theme, ch: _Chain) -> list[tuple[str, str, Any, str]]:
    """(write tool, its key parameter, key value, phrase) for each change the end of the chain allows."""
    key, value, rec = ch.records[-1]
    earlier = set().union(*(D.scalars(o) for o in ch.outputs[:-1])) if len(ch.outputs) > 1 else set()
    out = [(n, p, value, ch.phrase) for n, p in _writers(theme).get(key, ())] if ch.down else []
    for wkey, tools in _writers(theme).items():
        found = find_key(rec, wkey) if wkey != key else None
        if found is not None and found[1] not in earlier:
            out += [(n, p, found[1], ch.of(noun_of(wkey))) for n, p in tools]
    return out


def synthesize_chain_task(theme: Theme, difficulty: int, seed: int = 0, db_seed: int = 0, attempts: int = 20, check: bool = True,
                          answers_only: bool = False) -> Task:
    """One verified graph task whose depth is built in (see the module docstring); TaskError when none is
    found in `attempts` chains."""
    lv = level(difficulty)
    if not chainable(theme):
        raise TaskError(f"Expected theme {theme.id!r} to have a read that takes an entity key, got none; use the walks (kind='graph').")
    rng = np.random.default_rng([seed, difficulty, db_seed, 4099])
    fx = facts(theme, db_seed)
    # where no chain means no graph task (from WALKS_UP_TO), a level no probe seed makes fails at once (a chain is
    # searched with few attempts: more probe seeds)
    if check and difficulty >= WALKS_UP_TO and not viable(fx, ("chain", difficulty, attempts, answers_only), lambda s: synthesize_chain_task(
            theme, difficulty, s, db_seed, attempts, True, answers_only), 2 * VIABLE_SEEDS):
        raise TaskError(f"Expected theme {theme.id!r} to yield a chain task at difficulty {difficulty} for some of {2 * VIABLE_SEEDS} probe seeds, "
                        "got none. Try a lower difficulty or fallback=True.")
    problems: list[str] = []
    for _ in range(attempts):
        with fx.run(memo=True) as run:
            task = _attempt(theme, fx, run, lv, difficulty, seed, db_seed, rng, answers_only, problems)
            if task is None:
                continue
            if check:
                problems = candidate_problems(theme, task, run, seed)
                if problems:
                    continue
            return task
    raise TaskError(f"Expected theme {theme.id!r} to yield a chain task at difficulty {difficulty}, got none in {attempts} chains"
                    f"{' (last problems: ' + ', '.join(problems) + ')' if problems else ''}. Try a lower difficulty or fallback=True.")


def _attempt(theme, fx, run, lv, difficulty, seed, db_seed, rng, answers_only, problems) -> Task | None:
    started = _start(theme, fx, run, rng)
    if started is None:
        return None
    ch, key, value, record, identity, unique = started
    resolving = sum(D.dependent(theme, ch.calls, ch.outputs, ""))  # lookups the start already needs (a pick from an owner's list)
    ch.records.append((key, value, record))
    # from level 4 the chain may end in an aggregate over the last record's listing (one more lookup, and
    # level 5's aggregate): worlds seldom chain 3-4 records one by one
    aggregate = difficulty >= 4 and rng.random() < AGGREGATE_SHARE if _listers(theme) else False
    need = D.MIN_DEPENDENT[difficulty] - 1 if aggregate else hops_needed(difficulty)
    if not _extend(theme, ch, key, record, max(need - resolving, 1), rng, [EXPANSIONS], frozenset(_listers(theme)) if aggregate else None):
        return None
    write = not aggregate and not answers_only and bool(_write_targets(theme, ch)) and rng.random() < lv.writes
    tables, final, answer, answer_type, path, requests, candidates = (), None, None, "none", None, [], 0
    if aggregate:
        asked = _aggregate(theme, fx, ch, rng)
        if asked is None:
            return None
        question, answer, path, candidates = asked
        answer_type = "text"
    elif write:
        request = _write(theme, fx, ch, rng)
        if request is None:
            return None
        requests.append(request)
        changed = state_check(fx, run)
        if changed is None:
            return None
        tables, final = changed
        question = "Let me know once it is done."
    else:
        asked = _question(theme, fx, ch, rng)
        if asked is None:
            return None
        question, answer, path = asked
        answer_type = "bool" if isinstance(answer, bool) else "number" if isinstance(answer, (int, float)) else "text"
    if len(ch.calls) > MAX_CALLS:
        return None
    instruction = W.goal(requests, question)
    sinks = None if aggregate else [len(ch.calls) - 1]  # an aggregate counts every lookup (`depth.task_depth`)
    deep, dependent = D.problems(theme, difficulty, ch.calls, ch.outputs, instruction, None if aggregate else answer, aggregate=aggregate,
                                 sinks=sinks, probe=answer if answer_type != "none" else None)
    if deep:
        problems[:] = deep
        return None
    solution = tuple({"name": c["name"], "arguments": dict(c["arguments"])} for c in ch.calls)
    instruction = P.frame(instruction, "pick" if aggregate else "change" if write else "ask", _phrase_rng(solution), identity)
    features = {
        "calls": len(solution), "distinct_tools": len({c["name"] for c in solution}), "writes": int(bool(write)),
        "weak_share": 0.0, "chained_args": len(solution) - 1, "aggregation": int(aggregate), "operation": "argmax" if aggregate else None, "branching": 0,
        "distractors": lookalikes(fx, []), "answer_path": path, "chain": True, "dependent_lookups": dependent,
        **({"candidates": candidates} if aggregate else {}),
        "resolved": int(bool(unique)), "unique": unique, "knobs": knobs(lv),
    }
    return Task(id=task_id(theme, "graph", difficulty, seed, db_seed, repr(solution)), theme=theme.id, kind="graph",
                instruction=instruction, difficulty=difficulty, solution=solution, answer=answer, answer_type=answer_type,
                state_tables=tables, state_hash=final, db_seed=db_seed, features=features)


__all__ = ["chainable", "hops_needed", "reachable", "synthesize_chain_task"]
