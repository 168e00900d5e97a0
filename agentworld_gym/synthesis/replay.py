"""Replaying a task's gold solution: a programmatic task's program run on a world (`execute`) and a graph task's
answer read from its last output (`answer_of`). Programmatic synthesis runs a program to make its task and the
quality checks (`quality.quality_problems`) replay both kinds, so they sit below both."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..theme import Theme
from .facts import Run


def answer_of(data: Any, path: list) -> Any:
    """The answer a graph task reads from its last output: a field, a count of listed items,
    (path [call, "#0", field]) a field of the only listed item, (path [call, "#where", key field,
    value, field]) a field of the listed record with that key, or (path [call, "#max" or "#min", field,
    key field]) the key of the listed record with the most or least of a field."""
    field = path[1]
    if field == "#count":
        return len(data)
    if field in ("#max", "#min"):  # [call, "#max", field, key field]: the key of the listed record with the most of field (`chain`)
        items = [x for x in data if isinstance(x, dict)] if isinstance(data, list) else []
        return (max if field == "#max" else min)(items, key=lambda x: x[path[2]])[path[3]] if items else None
    if field == "#where":  # [call, "#where", key field, key value, field]: a field of the listed record with that key (`chain`)
        items = [x for x in data if isinstance(x, dict) and x.get(path[2]) == path[3]] if isinstance(data, list) else []
        return items[0].get(path[4]) if len(items) == 1 else None
    if field == "#0":
        data, field = (data[0] if isinstance(data, list) and len(data) == 1 else None), path[2]
    return data.get(field) if isinstance(data, dict) else None


def execute(theme: Theme, program: str, run: Run, savepoints: set[int] | frozenset = frozenset(),
            outputs: list | None = None, classic: bool = False) -> tuple[Any, list[dict], bool]:
    """Run a gold program on `run`'s world: (answer, trace of the calls that succeeded, ok).

    The program is source `programmatic` generated (never agent or user text); it sees only `call`.
    A read that fails aborts it (ok False); a write that fails returns None to the program, which
    skips it, so the trace holds exactly the calls that took effect. For each i of `savepoints`, a
    savepoint `w<i>` is set before the call that becomes the trace's i-th (refused writes tried
    before it change nothing). `classic`: a call with an argument called `name` fails, as it did before
    tasks v3 (classic synthesis keeps the tasks it made; `persona.enabled`).
    """
    trace: list[dict] = []
    placed: set[int] = set()

    def call(tool: str, /, **arguments):  # positional-only: a tool may take a `name` argument
        if classic and "name" in arguments:
            raise TypeError("call() got multiple values for argument 'name'")
        if len(trace) in savepoints and len(trace) not in placed:
            placed.add(len(trace))
            run.conn.execute(f"SAVEPOINT w{len(trace)}")
        result = run.call(tool, arguments)
        if not result.ok:
            if theme.toolset[tool].writes:
                return None
            raise _ReadFailed(tool)
        trace.append({"name": tool, "arguments": arguments})
        if outputs is not None:  # what each traced call returned (depth checks read them)
            outputs.append(result.data)
        return result.data

    namespace: dict[str, Any] = {"__builtins__": {"len": len, "round": round, "sum": sum, "max": max, "min": min, "sorted": sorted}}
    try:
        exec(_compiled(program), namespace)  # noqa: S102 - our own generated source
        answer = namespace["solve"](call)
    except (_ReadFailed, KeyError, TypeError, ValueError, IndexError):
        return None, trace, False
    return answer, trace, True


@lru_cache(maxsize=256)
def _compiled(program: str):
    return compile(program, "<gold program>", "exec")  # cached: the quality check re-runs each program


class _ReadFailed(Exception):
    pass


__all__ = ["answer_of", "execute"]
