"""Verifiable task synthesis. `synthesize_task` is the entry point envs use on reset.

Two kinds: `graph` (weight-biased walks over the tool dependency graph, graph.py) and
`programmatic` (a generated Python program with loops, branches and aggregation, programmatic.py);
`mixed` picks one per task. Every task is checked by `quality_problems` before it is returned:
its gold solution replays to the same answer/state, the entities it names are unambiguous, and its
verifier rejects a do-nothing and a wrong-answer attempt.
"""

from __future__ import annotations

import numpy as np

from ..errors import TaskError
from ..tasks import Task, answers_match, verify
from ..theme import Theme
from .facts import facts
from .graph import LEVELS, Level, answer_of, dependency_graph, start_tools, start_weights, synthesize_graph_task
from .programmatic import execute, synthesize_programmatic_task

KINDS = ("graph", "programmatic", "mixed")
DO_NOTHING = (None, "done", "")  # what an agent that did nothing submits; no task may accept it


def synthesize_task(theme: Theme, difficulty: int = 1, seed: int = 0, kind: str = "graph", db_seed: int = 0,
                    *, check: bool = True, fallback: bool = False, attempts: int = 60) -> Task:
    """One verified task, deterministic in (theme, difficulty, seed, kind, db_seed).

    Bounded: each kind tries at most `attempts` candidates. When none is valid a TaskError says so;
    with `fallback=True` the next lower difficulty is tried instead (the task's
    `features["requested_difficulty"]` records what was asked for), down to level 1.
    """
    if kind not in KINDS:
        raise TaskError(f"Expected kind in {KINDS}, got {kind!r}.")
    if difficulty not in LEVELS:
        raise TaskError(f"Expected difficulty 1-5, got {difficulty!r}.")
    order = [kind]
    if kind == "mixed":  # one kind by the seed; the other if the theme cannot make the first
        first = ("graph", "programmatic")[int(np.random.default_rng([seed, difficulty, 31]).integers(2))]
        order = [first, "programmatic" if first == "graph" else "graph"]
    errors = []
    for level in range(difficulty, 0 if fallback else difficulty - 1, -1):
        for k in order:
            make = synthesize_graph_task if k == "graph" else synthesize_programmatic_task
            try:
                task = make(theme, level, seed, db_seed, attempts=attempts, check=check)
            except TaskError as exc:
                errors.append(str(exc))
                continue
            if level != difficulty:
                task.features["requested_difficulty"] = difficulty
            return task
    raise TaskError(errors[-1] if len(errors) == 1 else " / ".join(errors))


def quality_problems(theme: Theme, task: Task, reference: bytes | None = None) -> list[str]:
    """Why a task should be dropped (empty list = keep).

    * its gold solution replays on a fresh copy with every call succeeding, to the same answer
      (graph: the recorded answer path; programmatic: the program re-executed gives the same answer
      and the same trace) and the same final state;
    * the values it states directly identify one row each (the answer is unique);
    * its verifier rejects a do-nothing attempt and a wrong answer.
    `reference` is the serialized final database of the synthesis run, if at hand: a replay that
    reproduces it byte for byte needs no second state hash.
    """
    problems = []
    fx = facts(theme, task.db_seed)
    with fx.run() as run:
        if task.program:
            answer, trace, ok = execute(theme, task.program, run)
            if not ok or [dict(c) for c in task.solution] != trace:
                problems.append("gold program does not replay to the same calls")
        else:
            results = [run.call(c["name"], c.get("arguments", {})) for c in task.solution]
            ok = all(r.ok for r in results)
            if not ok:
                problems.append("gold solution has a failing call")
            path = task.features.get("answer_path")
            answer = answer_of(results[path[0]].data, path) if path and ok else task.answer
        if task.answer_type != "none" and not answers_match(task.answer, answer, task.answer_type, task.tolerance):
            problems.append("gold replay gives a different answer")
        if task.state_hash is not None:
            same = reference is not None and run.conn.serialize() == reference
            if not same and fx.state_hash(run.conn, task.state_tables) != task.state_hash:
                problems.append("gold replay gives a different final state")
            initial = fx.initial_hash(task.state_tables)
            if initial == task.state_hash or any(verify(task, nothing, initial, True).passed for nothing in DO_NOTHING):
                problems.append("a do-nothing attempt passes")
    if any(fx.count(*u) != 1 for u in task.features.get("unique", ())):
        problems.append("a value in the instruction matches several rows")
    if task.state_hash is None and any(verify(task, nothing, None, True).passed for nothing in DO_NOTHING):
        problems.append("a do-nothing attempt passes")
    if task.answer_type != "none" and answers_match(task.answer, _wrong(task), task.answer_type, task.tolerance):
        problems.append("a wrong answer passes")
    if not task.checks:
        problems.append("the task checks nothing")
    return problems


def _wrong(task: Task):
    if task.answer_type == "bool":
        return not task.answer
    if task.answer_type == "number":
        return (float(task.answer) if task.answer is not None else 0.0) + 1000
    if task.answer_type == "set":
        return [*(task.answer or []), "definitely-wrong"]
    return f"{task.answer} definitely-wrong"


__all__ = ["KINDS", "LEVELS", "Level", "dependency_graph", "quality_problems", "start_tools", "start_weights", "synthesize_task"]
