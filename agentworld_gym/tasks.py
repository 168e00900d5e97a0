"""Tasks as data, and their verifiers.

A task's ground truth is always computed by executing its gold solution on a fresh copy of the
world (`replay_gold`); nothing here is written by hand. The verifier checks the submitted answer
(with a normaliser) and the final state of the whole world: the tables the gold solution wrote must
hash to the gold end state, and every other table must still hold its initial rows, so a write the
task did not ask for fails the episode.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .actions import ToolCall
from .errors import MissingFileError, TaskError

ANSWER_TYPES = ("number", "text", "set", "bool", "facts", "none")  # facts: every listed fact appears in the answer


@dataclass(frozen=True)
class Task:
    id: str
    theme: str
    kind: str  # graph | programmatic | imported
    instruction: str
    difficulty: int
    solution: tuple[dict, ...]  # gold call chain: ({"name", "arguments"}, ...)
    answer: Any = None  # expected answer (None when only the state is checked)
    answer_type: str = "none"
    state_tables: tuple[str, ...] = ()  # tables the gold solution changes (every other table must stay as it was)
    state_hash: str | None = None  # hash of state_tables after replaying the gold solution
    db_seed: int = 0
    program: str | None = None  # programmatic tasks: the Python source that produced `solution`
    features: dict = field(default_factory=dict, hash=False, compare=False)
    tolerance: float = 0.01

    @property
    def gold_calls(self) -> list[ToolCall]:
        return [ToolCall(c["name"], dict(c.get("arguments", {}))) for c in self.solution]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict) -> Task:
        names = {f.name for f in dataclasses.fields(cls)}
        missing = {"id", "theme", "instruction", "solution"} - set(d)
        if missing:
            raise TaskError(f"Expected task fields {sorted(missing)}, got only {sorted(d)}.")
        d = {k: v for k, v in d.items() if k in names}
        d.setdefault("kind", "imported")
        d.setdefault("difficulty", 1)
        d["solution"] = tuple(d["solution"])
        d["state_tables"] = tuple(d.get("state_tables") or ())
        if d.get("answer_type", "none") not in ANSWER_TYPES:
            raise TaskError(f"Expected answer_type in {ANSWER_TYPES}, got {d['answer_type']!r}.")
        return cls(**d)

    @property
    def checks(self) -> list[str]:
        out = []
        if self.answer_type != "none":
            out.append("answer")
        if self.state_hash is not None:
            out.append("state")
        return out


def save_tasks(tasks: Iterable[Task], path: str | Path) -> int:
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        for t in tasks:
            f.write(t.to_json() + "\n")
            n += 1
    return n


def load_tasks(path: str | Path) -> list[Task]:
    if not Path(path).is_file():
        raise MissingFileError(f"Expected a JSONL task file, got {str(path)!r}: no such file. "
                               "Write one with `agentworld synth THEME -n 20 -o tasks.jsonl`.")
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(Task.from_dict(json.loads(line)))
            except (json.JSONDecodeError, TypeError) as exc:
                raise TaskError(f"Expected one JSON task per line in {path}, line {lineno} is not: {exc}.") from exc
    return out


# --------------------------------------------------------------------------------------------
# Answer normalisation


# Matched only on short, stripped text (see _number), so the optional parts around the number stay cheap.
_NUMBER = re.compile(r"[$€£]?\s*(-?\d[\d,]*(?:\.\d+)?|-?\.\d+)\s*%?\s*[A-Za-z]{0,4}\.?")


def _number(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        try:
            return float(x)
        except OverflowError:  # an integer beyond float range is no answer to a numeric task
            return None
    if isinstance(x, str) and len(x) <= 100:  # a number is short; the bound keeps the match cheap on any text
        m = _NUMBER.fullmatch(x.strip())
        if m:
            try:
                return float(m.group(1).replace(",", ""))
            except ValueError:
                return None
    return None


def _text(x: Any) -> str:
    return " ".join(str(x).casefold().strip().strip(".").split())


def _items(x: Any) -> list[str]:
    if isinstance(x, (list, tuple, set)):
        return sorted(_text(i) for i in x)
    if isinstance(x, str):
        # Split on the separators, then trim: a regex with \s* on both sides of them backtracks quadratically.
        return sorted(_text(i) for i in re.split(r"[,;\n]", x.strip().strip("[]")) if i.strip())
    return [_text(x)]


# An answer this long (characters, or items of a list) matches no task's answer; refusing it up front keeps
# verification of a pathological 100,000-character answer from splitting and sorting it.
MAX_ANSWER_SIZE = 10_000


def answers_match(expected: Any, got: Any, answer_type: str, tolerance: float = 0.01) -> bool:
    if isinstance(got, (str, list, tuple, dict)) and len(got) > MAX_ANSWER_SIZE:
        return False
    if answer_type == "number":
        a, b = _number(expected), _number(got)
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=tolerance)  # 1e-6 of 26 million is 26: too loose
    if answer_type == "set":
        return _items(expected) == _items(got)
    if answer_type == "bool":
        yes = {"true", "yes", "1", "y"}
        no = {"false", "no", "0", "n"}
        g = _text(got)
        return (g in yes and bool(expected)) or (g in no and not expected)
    if answer_type == "text":
        return _text(expected) == _text(got)
    if answer_type == "facts":  # imported free-text answers: the facts the gold chain produced must all be stated
        said = _text(" ".join(map(str, got)) if isinstance(got, (list, tuple)) else got)
        return bool(expected) and all(_text(f) in said for f in expected)
    return True


@dataclass
class Verification:
    checks: dict[str, bool]
    expected_answer: Any = None
    submitted_answer: Any = None
    details: dict = field(default_factory=dict)
    credited: tuple[str, ...] = ()  # checks that earn partial credit (none a cheap guess can pass)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(self.checks.values())

    @property
    def fraction(self) -> float:
        """The partial reward: 1 when every check passes; else the share of checks passed among those
        no guess can pass. Only a requested change of the world is such a check (a do-nothing attempt
        fails it by construction); an answer can be guessed and an unchanged world is free, so neither
        earns anything alone."""
        if self.passed:
            return 1.0
        return sum(self.checks[c] for c in self.credited) / len(self.checks) if self.checks else 0.0

    def to_dict(self) -> dict:
        """The report for `info["verification"]`. Answers are JSON text: an answer is a number in one task and
        text in the next, and gymnasium's vector envs type each info key by the first value they see."""
        return {"passed": self.passed, "fraction": self.fraction, "checks": dict(self.checks),
                "expected_answer": json.dumps(self.expected_answer, ensure_ascii=False, default=str),
                "submitted_answer": json.dumps(self.submitted_answer, ensure_ascii=False, default=str), **self.details}


def verify(task: Task, submitted: Any, final_state_hash: str | None, untouched: bool | None = None) -> Verification:
    """Grade an episode's submitted answer and final state against the task.

    `final_state_hash` is the hash of `task.state_tables` at the end of the episode; `untouched` says
    whether every other table still holds its initial rows (None: not known, e.g. an external backend,
    then only the gold tables are checked). The "state" check passes when both hold, so the whole world
    must equal the gold end state.
    """
    checks: dict[str, bool] = {}
    if task.answer_type != "none":
        checks["answer"] = submitted is not None and answers_match(task.answer, submitted, task.answer_type, task.tolerance)
    if task.state_hash is not None or untouched is not None:
        gold_tables = task.state_hash is None or final_state_hash == task.state_hash
        checks["state"] = gold_tables and untouched is not False
    credited = ("state",) if task.state_hash is not None else ()
    return Verification(checks, task.answer, submitted, credited=credited)
