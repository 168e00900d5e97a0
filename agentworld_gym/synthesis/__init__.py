"""Verifiable task synthesis. `synthesize_task` is the entry point envs use on reset."""

from __future__ import annotations

from ..errors import TaskError
from ..tasks import Task, answers_match, verify
from ..theme import Theme
from .graph import LEVELS, dependency_graph, synthesize_graph_task

KINDS = ("graph",)


def synthesize_task(theme: Theme, difficulty: int = 1, seed: int = 0, kind: str = "graph", db_seed: int = 0) -> Task:
    """One task, deterministic in (theme, difficulty, seed, kind, db_seed)."""
    if kind not in KINDS:
        raise TaskError(f"Expected kind in {KINDS}, got {kind!r}.")
    return synthesize_graph_task(theme, difficulty, seed, db_seed)


def quality_problems(theme: Theme, task: Task) -> list[str]:
    """Why a task should be dropped (empty list = keep): the gold solution must replay to the same
    answer/state, and the verifier must reject a do-nothing and a wrong-answer attempt."""
    problems = []
    results, final = theme.replay(task.gold_calls, task.db_seed)
    if not all(r.ok for r in results):
        problems.append("gold solution has a failing call")
    if task.state_hash is not None and final != task.state_hash:
        problems.append("gold replay gives a different final state")
    _, initial = theme.replay([], task.db_seed)
    if verify(task, None, initial).passed:
        problems.append("a do-nothing attempt passes")
    if task.answer_type != "none":
        wrong = "definitely-wrong" if task.answer_type != "number" else (task.answer or 0) + 1000
        if task.answer_type == "bool":
            wrong = not task.answer
        if answers_match(task.answer, wrong, task.answer_type, task.tolerance):
            problems.append("a wrong answer passes")
    return problems


__all__ = ["KINDS", "LEVELS", "dependency_graph", "quality_problems", "synthesize_task"]
