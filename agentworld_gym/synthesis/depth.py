"""Depth that needs reasoning: how many of a task's gold lookups depend on earlier results.

A *dependent lookup* is a gold read each of whose entity arguments (or, for a read that takes no
entity, each argument) is a value the instruction does not state and an earlier gold call's output
holds: the agent can only make it after reading that output. Requests joined by "and" add none.
Level k asks for at least `MIN_DEPENDENT[k]` of them in one request (`chain_lookups`: the lookups one
write or the answer needs, so requests joined by "and" do not add up). Two more rules keep the count honest:

* no gold read is redundant: each read gives a later call (or the answer) a value nothing before it
  gave (else an agent skips it and the count overstates the depth); a loop's lookups (a tool called
  once per listed record) are exempt: they are made for fields the list does not show;
* at levels >= 2 the answer is not a field of a read made straight from the instruction's values
  (a one-hop field grab would answer it).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..theme import Theme
from . import wording as W

MIN_DEPENDENT = {1: 0, 2: 1, 3: 2, 4: 3, 5: 3}  # level 5 also needs an aggregate, a condition or 4 (`deep_enough`)


def scalars(data: Any) -> set:
    """Every scalar of a tool output (a record's fields, each listed record's fields, nested once)."""
    items = data if isinstance(data, list) else [data]
    out = set()
    for x in items:
        if isinstance(x, dict):
            for v in x.values():
                if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                    out.add(v)
                elif isinstance(v, list):
                    out |= {y for y in v if isinstance(y, (str, int, float)) and not isinstance(y, bool)}
        elif isinstance(x, (str, int, float)) and not isinstance(x, bool):
            out.add(x)
    return out


def _inputs(theme: Theme, call: dict) -> list:
    t = theme.toolset[call["name"]]
    args = call.get("arguments", {})
    keyed = [v for p, v in args.items() if p in t.consumes and theme.key_of(p)]
    return keyed or list(args.values())


def _stated(value: Any, instruction: str) -> bool:
    return W.show(value) in instruction


def _sets(outputs: list) -> list[set]:
    """Each output's `scalars`, worked out once for the rules below (they compare every pair of calls)."""
    return [scalars(o) for o in outputs]


def dependent(theme: Theme, solution, outputs: list, instruction: str, sets: list[set] | None = None) -> list[bool]:
    """Per gold call: whether it is a dependent lookup (see the module docstring). `sets`: `_sets(outputs)`, if at hand."""
    sets = _sets(outputs) if sets is None else sets
    seen: set = set()
    out = []
    for call, found in zip(solution, sets, strict=False):
        inputs = _inputs(theme, call)
        out.append(not theme.toolset[call["name"]].writes and bool(inputs)
                   and all(not _stated(v, instruction) and v in seen for v in inputs))
        seen |= found
    return out


def ancestors(theme: Theme, solution, outputs: list, instruction: str, sink: int, sets: list[set] | None = None) -> set[int]:
    """The gold calls `sink` needs: those whose outputs give one of its inputs, and theirs, and so on."""
    sets = _sets(outputs) if sets is None else sets
    need, todo = set(), [sink]
    while todo:
        j = todo.pop()
        inputs = [v for v in _inputs(theme, solution[j]) if not _stated(v, instruction)]
        for i in range(j):
            if i not in need and any(v in sets[i] for v in inputs):
                need.add(i)
                todo.append(i)
    return need


def chain_lookups(theme: Theme, solution, outputs: list, instruction: str, sinks: list[int] | None = None,
                  sets: list[set] | None = None, dep: list[bool] | None = None) -> int:
    """The dependent lookups of the deepest request: for each sink (a write, the call the answer is read
    from; None: the whole gold, as for an aggregate over every call), the dependent lookups it needs,
    itself included; the most of any sink. Independent requests joined by "and" do not add up."""
    sets = _sets(outputs) if sets is None else sets
    dep = dependent(theme, solution, outputs, instruction, sets) if dep is None else dep
    if sinks is None:
        return sum(dep)
    return max((sum(dep[i] for i in ancestors(theme, solution, outputs, instruction, s, sets) | {s}) for s in sinks), default=0)


def redundant_read(theme: Theme, solution, outputs: list, instruction: str, sets: list[set] | None = None) -> bool:
    """A gold read (not the last call) none of whose output values that later calls use is new: every
    one was stated or given by an earlier output, so an agent would not need the read."""
    sets = _sets(outputs) if sets is None else sets
    seen: set = set()
    looped = {n for n, k in Counter(c["name"] for c in solution).items() if k > 1}  # a loop's lookups read fields, not keys
    for i, (call, found) in enumerate(zip(solution, sets, strict=False)):
        if i < len(solution) - 1 and not theme.toolset[call["name"]].writes and call["name"] not in looped:
            later = {v for c in solution[i + 1:] for v in c.get("arguments", {}).values() if isinstance(v, (str, int, float))}
            used = found & later
            if used and all(v in seen or _stated(v, instruction) for v in used):
                return True
        seen |= found
    return False


def one_hop(theme: Theme, solution, outputs: list, instruction: str, answer: Any, sets: list[set] | None = None,
            dep: list[bool] | None = None) -> bool:
    """Whether the answer is a field of a read whose inputs all come from the instruction."""
    if answer is None or isinstance(answer, (list, bool)):
        return False
    sets = _sets(outputs) if sets is None else sets
    dep = dependent(theme, solution, outputs, instruction, sets) if dep is None else dep
    shown = W.show(answer)
    for call, found, d in zip(solution, sets, dep, strict=False):
        if theme.toolset[call["name"]].writes or d:
            continue
        inputs = _inputs(theme, call)
        if all(_stated(v, instruction) for v in inputs) and any(W.show(v) == shown for v in found):
            return True
    return False


def probe_guesses(theme: Theme, solution, outputs: list, instruction: str) -> list:
    """What a probe-and-mode strategy submits: make the first read whose inputs the instruction states, then
    answer its most frequent field value, or the length of its list."""
    for call, data in zip(solution, outputs, strict=False):
        args = list(call.get("arguments", {}).values())
        if theme.toolset[call["name"]].writes or not args or not all(_stated(v, instruction) for v in args):
            continue
        items = data if isinstance(data, list) else [data]
        values = [W.show(v) for x in items if isinstance(x, dict) for v in x.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        guesses = [Counter(values).most_common(1)[0][0]] if values else []
        return guesses + ([len(data)] if isinstance(data, list) else [])
    return []


def deep_enough(level: int, n_dependent: int, aggregate: bool) -> bool:
    """Level k's floor: MIN_DEPENDENT[k] dependent lookups; level 5 also an aggregate or one more lookup."""
    if n_dependent < MIN_DEPENDENT[level]:
        return False
    return level < 5 or aggregate or n_dependent >= 4


def problems(theme: Theme, level: int, solution, outputs: list, instruction: str, answer: Any, aggregate: bool,
             sinks: list[int] | None = None, probe: Any = None) -> tuple[list[str], int]:
    """(why the gold is not deep enough for `level`, the dependent lookups of its deepest request, `chain_lookups`).
    `probe`: the task's answer, checked against `probe_guesses` (None: an answer-free task)."""
    sets = _sets(outputs)
    dep = dependent(theme, solution, outputs, instruction, sets)
    n = chain_lookups(theme, solution, outputs, instruction, sinks, sets, dep)
    out = []
    if not deep_enough(level, n, aggregate):
        out.append(f"{n} dependent lookups, level {level} needs {MIN_DEPENDENT[level]}")
    if redundant_read(theme, solution, outputs, instruction, sets):
        out.append("a gold read gives nothing new")
    if level >= 2 and one_hop(theme, solution, outputs, instruction, answer, sets, dep):
        out.append("a one-hop read answers it")
    if probe is not None and any(W.show(g) == W.show(probe) for g in probe_guesses(theme, solution, outputs, instruction)):
        out.append("a probe-and-mode guess answers it")
    return out, n


def task_depth(theme: Theme, task) -> int | None:
    """`chain_lookups` of a finished task, from a replay of its gold (None if the replay fails): an
    aggregate counts every lookup, other tasks the deepest write or the call the answer is read from."""
    from .facts import facts

    outputs = outputs_of(facts(theme, task.db_seed), task.solution)
    if outputs is None:
        return None
    if task.program and task.features.get("operation") in ("count", "sum", "argmax", "argmin", "top", "write"):
        sinks = None
    else:
        path = task.features.get("answer_path")
        sinks = [i for i, c in enumerate(task.solution) if theme.toolset[c["name"]].writes] + ([path[0]] if path else [])
        sinks = sinks or [len(task.solution) - 1]
    return chain_lookups(theme, task.solution, outputs, task.instruction, sinks)


def outputs_of(fx, solution) -> list | None:
    """The outputs of replaying `solution` (reads from the world's memo where it holds); None if a call fails."""
    with fx.run(memo=True) as run:
        out = []
        for c in solution:
            r = run.call(c["name"], c.get("arguments", {}))
            if not r.ok:
                return None
            out.append(r.data)
        return out


__all__ = ["MIN_DEPENDENT", "ancestors", "probe_guesses", "chain_lookups", "deep_enough", "dependent", "one_hop", "outputs_of", "problems", "redundant_read", "task_depth"]
