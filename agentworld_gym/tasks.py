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
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .actions import ToolCall
from .errors import MissingFileError, TaskError, did_you_mean
from .grading import ANSWER_TYPES, MAX_ANSWER_SIZE, _text, answer_type_of, answers_match, reply_claim  # noqa: F401  (re-exported)
from .grading import _as_number as _number  # noqa: F401  (re-exported: synthesis keys answers with it)


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

    def __post_init__(self):
        if self.answer_type not in ANSWER_TYPES:
            raise TaskError(f"Expected answer_type in {ANSWER_TYPES}, got {self.answer_type!r}.{did_you_mean(str(self.answer_type), ANSWER_TYPES)} "
                            "Fix it, or leave it out of the task file to infer it from the answer.")

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
        if d.get("answer_type") is None:  # a task file without a type: read it off the gold answer
            d["answer_type"] = answer_type_of(d.get("answer"))
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
            except TaskError as exc:
                raise TaskError(f"{path}, line {lineno}: {exc}") from None
    return out


# --------------------------------------------------------------------------------------------
# Answers are compared in one place, `grading`; these two helpers key answers for counting (synthesis).


def _items(x: Any) -> list[str]:
    return sorted(_text(i) for i in (x if isinstance(x, (list, tuple, set)) else [x]))


# A request whose wording expects some of it may not happen ("skip any that cannot be changed",
# "if the rules do not allow that, ...") leaves a reply free to say so.
_CONDITIONAL = re.compile(r"\b(?:skip|if|unless|otherwise|instead)\b", re.I)


def expected_outcome(task: Task) -> str | None:
    """What the final reply should say happened: "failure" where a rule forbids the request and the
    world must stay as it was (a refusal task), "success" where the gold changes the world and the
    request has no condition, None where the reply's claim is not graded (an answer-only task, a
    request with a condition, a task imported from another benchmark, which keeps that benchmark's
    grading)."""
    if task.kind == "imported" and task.features.get("source") != "discovery":
        return None  # an imported benchmark (tau2, release questions) keeps its own grading; its state hash is set even when nothing changes
    if task.state_hash is None and (task.features.get("refusal") or task.features.get("outcome") == "refused"):
        return "failure"  # (a path task also records the refusal it works around, then makes the change)
    if task.state_hash is not None and not _CONDITIONAL.search(task.instruction):
        return "success"
    return None


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
        checks["answer"] = answers_match(task.answer, submitted, task.answer_type, task.tolerance, task.instruction)
    if task.state_hash is not None or untouched is not None:
        gold_tables = task.state_hash is None or final_state_hash == task.state_hash
        checks["state"] = gold_tables and untouched is not False
    outcome = expected_outcome(task)
    if outcome is not None:  # a reply that states an outcome must state the right one
        if isinstance(submitted, str) and len(submitted) > MAX_ANSWER_SIZE:
            checks["reply"] = False  # too long to read, as an answer that long is (keeps a step's cost bounded)
        elif (claim := reply_claim(submitted, task.instruction)) is not None:
            checks["reply"] = claim == outcome
    credited = ("state",) if task.state_hash is not None else ()
    return Verification(checks, task.answer, submitted, credited=credited)
