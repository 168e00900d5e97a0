"""The release's own tasks: `environment_mix/questions/<id>.json` as verified Tasks.

A question file holds a list of questions (or {"questions": [...]}); each has the user's task
(`task` | `question` | `query` | `instruction`), a reference answer (`reference_answer` | `answer` |
`ground_truth`) and a rubric holding the verified tool chain (`rubric.tool_chain` |
`verified_tool_chain` | `tool_calls` | `steps`, or the rubric itself when it is a list), each step
{name | tool | tool_name | function, arguments | args | parameters | params} (arguments may be JSON text).

Each question becomes a Task whose gold is that chain, replayed in the sandbox:
* state check: the hash of every data file after the replay, except call logs (files to which every call
  of every chain appended exactly one record naming the tool called — the Smithery template's
  `tool_call_logs`). Excluded files are named in `task.features["state_excluded"]`; nothing else is left out.
* answer check, with the project's normaliser: numbers and booleans as such; otherwise the reference
  answer's facts that the replayed chain actually produced (identifiers, numbers, names found in its
  outputs), with random ids and timestamps masked out, must all appear in the agent's answer (`facts`).
A question is dropped, with the reason in the report, when it has no instruction or chain, calls an unknown
tool or invalid arguments, a gold call fails, or no check would fail a do-nothing agent.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..actions import ToolCall
from ..tasks import Task, verify
from ..tools import validate_arguments
from .release import state_digest

INSTRUCTION_KEYS = ("task", "question", "query", "instruction", "prompt")
ANSWER_KEYS = ("reference_answer", "answer", "ground_truth", "expected_answer")
CHAIN_KEYS = ("tool_chain", "verified_tool_chain", "tool_calls", "tool_sequence", "steps")
NAME_KEYS = ("name", "tool", "tool_name", "function")
ARG_KEYS = ("arguments", "args", "parameters", "params", "input")

# Random ids and wall-clock times: the authors' run produced different ones than any replay will.
VOLATILE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # uuid
                      r"|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"  # ISO date-time
                      r"|\b[0-9a-f]{16,}\b"  # hex tokens
                      r"|\b1[5-9]\d{8}(\d{3})?\b", re.I)  # epoch seconds / milliseconds
FACT = re.compile(r"[A-Za-z0-9][\w.@+-]*[\w]|\d")


def mask_volatile(text: str) -> str:
    return VOLATILE.sub("<volatile>", text)


class Dropped(Exception):
    """Why a question did not become a task."""


@dataclass
class ReleaseTaskReport:
    env_id: str
    loaded: int = 0
    replayed: int = 0  # gold replays that score 1.0 in a fresh episode
    dropped: dict[str, str] = field(default_factory=dict)  # question id -> reason
    state_excluded: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"env": self.env_id, "loaded": self.loaded, "replayed": self.replayed, "dropped": self.dropped,
                "state_excluded": self.state_excluded}


def questions_file(release_root: Path, env_id: str) -> Path | None:
    for folder in (release_root / "questions", release_root / "environment_mix" / "questions", release_root.parent / "questions"):
        if (folder / f"{env_id}.json").is_file():
            return folder / f"{env_id}.json"
    return None


def read_questions(path: Path) -> list[dict]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(doc, dict):
        doc = doc.get("questions") or doc.get("tasks") or [doc]
    return [q for q in doc if isinstance(q, dict)] if isinstance(doc, list) else []


def _first(d: dict, keys: tuple[str, ...]) -> Any:
    return next((d[k] for k in keys if d.get(k) not in (None, "", [])), None)


def parse_chain(q: dict) -> list[dict]:
    rubric = q.get("rubric")
    if isinstance(rubric, str):
        try:
            rubric = json.loads(rubric)
        except json.JSONDecodeError:
            rubric = None
    chain = rubric if isinstance(rubric, list) else _first(rubric, CHAIN_KEYS) if isinstance(rubric, dict) else None
    chain = chain if chain is not None else _first(q, CHAIN_KEYS)
    if not isinstance(chain, list) or not chain:
        raise Dropped("no verified tool chain in the rubric")
    out = []
    for i, step in enumerate(chain):
        if isinstance(step, dict) and isinstance(step.get("function"), dict):  # OpenAI tool-call shape
            step = step["function"]
        name = _first(step, NAME_KEYS) if isinstance(step, dict) else None
        args = _first(step, ARG_KEYS) if isinstance(step, dict) else None
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                raise Dropped(f"step {i + 1}: arguments are not JSON") from None
        if not isinstance(name, str) or not isinstance(args if args is not None else {}, dict):
            raise Dropped(f"step {i + 1}: expected {{name, arguments}}, got {json.dumps(step)[:120]}")
        out.append({"name": name, "arguments": args or {}})
    return out


def _records(value: Any) -> int | None:
    if isinstance(value, list):
        return len(value)
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        return sum(map(len, lists)) if lists else len(value)
    return None


def _appended_log(before: Any, after: Any, tool: str) -> bool:
    """Did this call append exactly one record that names the tool (a call log entry)?"""
    n0, n1 = _records(before), _records(after)
    if n0 is None or n1 != n0 + 1:
        return False
    return f'"{tool}"' in json.dumps(after, default=str) and f'"{tool}"' in json.dumps(_newest(after), default=str)


def _newest(value: Any) -> Any:
    if isinstance(value, list):
        return value[-1]
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list) and v]
        return lists[-1][-1] if lists else list(value.values())[-1]
    return value


def _facts(reference: Any, produced: str) -> list[str]:
    """The reference answer's facts that the replayed chain's outputs contain (volatile ones masked out)."""
    text = reference if isinstance(reference, str) else json.dumps(reference, ensure_ascii=False, default=str)
    leaves = []
    if isinstance(reference, dict | list):
        stack = [reference]
        while stack:
            v = stack.pop()
            stack.extend(v.values() if isinstance(v, dict) else v if isinstance(v, list) else [])
            if isinstance(v, str | int | float) and not isinstance(v, bool):
                leaves.append(str(v))
    else:
        leaves = FACT.findall(mask_volatile(text))
    seen, out, low = set(), [], produced.casefold()
    for leaf in leaves:
        leaf = leaf.strip()
        key = leaf.casefold()
        # a fact is specific: it holds a digit, an @ or an uppercase letter beyond the first, or is a multi-word value
        specific = any(c.isdigit() for c in leaf) or "@" in leaf or any(c.isupper() for c in leaf[1:]) or " " in leaf
        if (leaf and key not in seen and specific and "<volatile>" not in mask_volatile(leaf) and key in low
                and len(leaf) <= 200):
            seen.add(key)
            out.append(leaf)
    return out


def _answer(reference: Any, produced: str) -> tuple[Any, str]:
    if reference is None:
        return None, "none"
    if isinstance(reference, bool):
        return reference, "bool"
    if isinstance(reference, int | float):
        return reference, "number"
    if isinstance(reference, str) and re.fullmatch(r"\s*-?[\d,]*\.?\d+\s*", reference):
        return float(reference.replace(",", "")), "number"
    facts = _facts(reference, produced)
    return (facts, "facts") if facts else (None, "none")


def load_release_tasks(backend, questions: Path, limit: int | None = None) -> tuple[list[Task], ReleaseTaskReport]:
    """Replay every question's chain in `backend`'s sandbox and return the verified tasks and the report."""
    report = ReleaseTaskReport(backend.env_id)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in backend.tools}
    replays: list[tuple[str, dict, list[dict], Any, dict, str]] = []
    log_files: set[str] | None = None
    for i, q in enumerate(read_questions(questions)[:limit]):
        qid = str(q.get("id") or q.get("question_id") or i)
        try:
            instruction = _first(q, INSTRUCTION_KEYS)
            if not isinstance(instruction, str):
                raise Dropped("no task text")
            chain = parse_chain(q)
            for step in chain:
                if step["name"] not in schemas:
                    raise Dropped(f"the chain calls {step['name']!r}, which the environment does not have")
                problem = validate_arguments(schemas[step["name"]], step["arguments"])
                if problem:
                    raise Dropped(f"invalid arguments for {step['name']}: {problem}")
            before, outputs, logs = replay_chain(backend, chain)
            log_files = logs if log_files is None else log_files & logs
            replays.append((qid, q, chain, _first(q, ANSWER_KEYS), before, "\n".join(outputs)))
        except Dropped as why:
            report.dropped[qid] = str(why)
    excluded = sorted(log_files or ())
    backend.excluded = set(excluded)
    report.state_excluded = excluded
    backend.reset(None)
    initial = {k: v for k, v in backend.state().items()}
    tasks = []
    for qid, q, chain, reference, final, produced in replays:
        state = {k: v for k, v in final.items() if k not in backend.excluded}
        answer, answer_type = _answer(reference, produced)
        if answer_type == "none" and state == initial:
            report.dropped[qid] = "no check fails a do-nothing agent (free-text answer with no fact from the chain's outputs, and no writes)"
            continue
        labels = " / ".join(backend.taxonomy.values())
        tasks.append(Task(id=f"{backend.id}-{qid}", theme=backend.id, kind="imported", instruction=q[next(k for k in INSTRUCTION_KEYS if q.get(k))],
                          difficulty=min(5, max(1, len(chain))), solution=tuple(chain), answer=answer, answer_type=answer_type,
                          state_hash=state_digest(state),  # the whole state but the named call logs
                          features={"source": "release", "calls": len(chain), "state_excluded": excluded, "taxonomy": labels,
                                    "reference_answer": reference}))
    report.loaded = len(tasks)
    for task in tasks:  # the proof each task's gold scores 1.0 in a fresh episode
        if replay_score(backend, task) == 1.0:
            report.replayed += 1
    return tasks, report


def replay_chain(backend, chain: list[dict] | tuple[dict, ...]) -> tuple[dict, list[str], set[str]]:
    """Replay `chain` on a fresh episode: (final state with call logs, each call's output, files every call appended a log record to)."""
    backend.reset(None)
    before, outputs, logs = backend.state(include_excluded=True), [], None
    for n, step in enumerate(chain, 1):
        result = backend.call(ToolCall(step["name"], step["arguments"]))
        if not result.ok:
            raise Dropped(f"gold call {n} ({step['name']}) failed in the sandbox: {result.content[:200]}")
        after = backend.state(include_excluded=True)
        appended = {f for f in after if _appended_log(before.get(f), after[f], step["name"])}
        logs = appended if logs is None else logs & appended
        outputs.append(result.content)
        before = after
    return before, outputs, logs or set()


def recheck_synthesized(backend, tasks: list[Task], report: ReleaseTaskReport) -> list[Task]:
    """Synthesized tasks graded like the release's: call logs out of the state, and only tasks a do-nothing agent fails.

    When the release had no questions for this environment, the call logs are detected on these chains."""
    replays = []
    for task in tasks:
        try:
            replays.append((task, *replay_chain(backend, task.solution)))
        except Dropped:
            continue  # discovery verified it; a chain that fails now is not worth keeping
    if not report.state_excluded and replays:
        found = set.intersection(*(logs for *_, logs in replays))
        report.state_excluded = sorted(found)
        backend.excluded = set(found)
    backend.reset(None)
    initial = backend.state()
    kept = []
    for task, final, _, _ in replays:
        state = {k: v for k, v in final.items() if k not in backend.excluded}
        if task.answer_type == "none" and state == initial:
            continue  # its only effect was a call-log entry
        features = {**task.features, "state_excluded": report.state_excluded}
        kept.append(dataclasses.replace(task, state_hash=state_digest(state) if state != initial else None, features=features))
    return [t for t in kept if replay_score(backend, t) == 1.0]


def replay_score(backend, task: Task) -> float:
    backend.reset(task)
    for call in task.gold_calls:
        backend.call(call)
    submitted = task.answer if task.answer_type != "none" else "done"
    final = backend.state_hash(task.state_tables or None) if task.state_hash is not None else None
    return 1.0 if verify(task, submitted, final).passed else 0.0
