"""The release's own tasks: `environment_mix/questions/<id>.json` as verified Tasks.

The release publishes, per environment, `{"env_id": "<id>", "name": ..., "tasks": [...]}` where each task is
`{"task": "<the request, in a person's words>", "reference_answer": "<JSON text: usually the chain's last
tool result, with the authors' generated ids and times>", "grading_rubric": {"success_criteria": ["<what
step k of the chain returns>", ...], "verified_tool_chain": [{"tool": ..., "args": {...}}, ...]}}`.
Also read: a bare list of questions or {"questions": [...]}; the request under `task` | `question` | `query` |
`instruction`; the answer under `reference_answer` | `answer` | `ground_truth` (JSON text or a value); the chain
under `grading_rubric` or `rubric` (`verified_tool_chain` | `tool_chain` | `tool_calls` | `steps`, or the
rubric itself when it is a list), each step {name | tool | tool_name | function, arguments | args | parameters
| params} (arguments may be JSON text).

Each question becomes a Task: the instruction is the request verbatim; the gold is the chain, replayed in the
sandbox (frozen clock, seeded ids: see `release.FROZEN`). Grading uses what the release gives:
* write tasks (the replayed chain changes the data): the end state — the hash of every data file after the
  replay, except call logs (files to which every call of every chain appended exactly one record naming the
  tool called — the Smithery template's `tool_call_logs`), named in `features["state_excluded"]`. Generated
  ids and times are part of it: the frozen clock and per-call seeded ids make them the same in every replay.
  The reference answer is graded too when it is a number or a yes/no (a value the user asked for).
* answer tasks (no change): the reference answer with the project's normaliser (`tasks.answers_match`):
  numbers and booleans as such; otherwise the reference's facts (identifiers, numbers, names) that the
  replayed chain produced, without the authors' random ids and timestamps, without what the request already
  says, and — where the success criteria name some of them — only those (`facts`).
* success criteria: a criterion that names a step ("Step 2 returns ...") and a value or field of that step's
  replayed result is checked mechanically: some successful call of the agent to that step's tool must return
  that value / field (`criterion k` checks, by `grade`). Any other criterion is listed as not graded, or asked
  of a judge policy when the env has one (`judge=`).
A question is dropped, with the reason in the report, when it has no instruction or chain, calls an unknown
tool or invalid arguments, a gold call fails, or no check would fail a do-nothing agent; a task whose gold does
not score 1.0 when replayed in a fresh episode is not served, and the report says which check differed.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..actions import ToolCall
from ..mcp.backend import state_digest
from ..tasks import Task, Verification, verify
from ..tools import validate_arguments

RUBRIC_KEYS = ("grading_rubric", "rubric")
CRITERIA_KEYS = ("success_criteria", "criteria")
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
    replayed: int = 0  # gold replays that score 1.0 in a fresh episode (only these are served)
    dropped: dict[str, str] = field(default_factory=dict)  # question id -> reason
    not_replayed: dict[str, str] = field(default_factory=dict)  # question id -> the check its gold replay failed
    questions: int = 0  # questions in the file
    criteria_graded: int = 0  # success criteria checked mechanically, over the loaded tasks
    criteria_not_graded: int = 0
    state_excluded: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"env": self.env_id, "questions": self.questions, "loaded": self.loaded, "replayed": self.replayed,
                "dropped": self.dropped, "not_replayed": self.not_replayed, "criteria_graded": self.criteria_graded,
                "criteria_not_graded": self.criteria_not_graded, "state_excluded": self.state_excluded}


def questions_file(release_root: Path, env_id: str) -> Path | None:
    for folder in (release_root / "questions", release_root / "environment_mix" / "questions", release_root.parent / "questions"):
        if (folder / f"{env_id}.json").is_file():
            return folder / f"{env_id}.json"
    return None


def read_questions(path: Path) -> list[dict]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(doc, dict):  # the published {"env_id", "name", "tasks": [...]}, or {"questions": [...]}, or one question
        doc = next((doc[k] for k in ("tasks", "questions") if isinstance(doc.get(k), list)), [doc])
    return [q for q in doc if isinstance(q, dict)] if isinstance(doc, list) else []


def _first(d: dict, keys: tuple[str, ...]) -> Any:
    return next((d[k] for k in keys if d.get(k) not in (None, "", [])), None)


def _rubric(q: dict) -> Any:
    rubric = _first(q, RUBRIC_KEYS)
    if isinstance(rubric, str):
        try:
            rubric = json.loads(rubric)
        except json.JSONDecodeError:
            rubric = None
    return rubric


def parse_chain(q: dict) -> list[dict]:
    rubric = _rubric(q)
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


def _leaves(value: Any) -> list[str]:
    """The scalar values of a JSON value, as text (iteratively: a reference may be deep)."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        stack.extend(reversed(list(v.values())) if isinstance(v, dict) else reversed(v) if isinstance(v, list) else [])
        if isinstance(v, str | int | float) and not isinstance(v, bool):
            out.append(str(v))
    return out


def _keys(value: Any) -> set[str]:
    out, stack = set(), [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            out.update(k for k in v if isinstance(k, str))
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


def _specific(leaf: str) -> bool:
    """A fact is specific: it holds a digit, an @ or an uppercase letter beyond the first, or is a multi-word value."""
    return any(c.isdigit() for c in leaf) or "@" in leaf or any(c.isupper() for c in leaf[1:]) or " " in leaf.strip()


def _facts(candidates: list[str], produced: str, quoted: set[str] = frozenset()) -> list[str]:
    """The specific candidates (or `quoted` ones) that `produced` contains, once each, random ids and times left out."""
    seen, out = set(), []
    for leaf in candidates:
        leaf = leaf.strip()
        key = leaf.casefold()
        if (leaf and key not in seen and len(leaf) <= 200 and (leaf in quoted or _specific(leaf))
                and "<volatile>" not in mask_volatile(leaf) and _mentions(produced, leaf)):
            seen.add(key)
            out.append(leaf)
    return out


def _mentions(text: str, fact: str) -> bool:
    """`fact` stands in `text` as a whole token ("2" is not in "C-2"), case aside."""
    return re.search(rf"(?<![\w.@-]){re.escape(fact)}(?![\w@-]|\.\w)", text, re.I) is not None


def parse_reference(q: dict) -> Any:
    """The reference answer: the release writes JSON text ("2", "true", an object); other text stays text."""
    ref = _first(q, ANSWER_KEYS)
    if isinstance(ref, str) and ref.strip()[:1] in ('{', '[', '"', "-", "t", "f", "n", *"0123456789"):
        try:
            return json.loads(ref)
        except (json.JSONDecodeError, RecursionError, ValueError):
            return ref
    return ref


def _answer(reference: Any, produced: str, request: str, criteria: list[str], n_steps: int) -> tuple[Any, str]:
    """(expected answer, answer type) for the normaliser; (None, "none") when the reference gives no check."""
    if reference is None:
        return None, "none"
    if isinstance(reference, bool):
        return reference, "bool"
    if isinstance(reference, int | float):
        return reference, "number"
    if isinstance(reference, str) and re.fullmatch(r"\s*-?[\d,]*\.?\d+\s*", reference):
        return float(reference.replace(",", "")), "number"
    leaves = _leaves(reference) if isinstance(reference, dict | list) else FACT.findall(mask_volatile(str(reference)))
    facts = [f for f in _facts(leaves, produced) if not _mentions(request, f)]  # what the user said is no evidence
    # The reference is the chain's last result: the criteria about the last step (or no step) say which facts matter.
    said = " ".join(STEP_REF.sub(" ", c) for c in criteria if n_steps in (_steps_named(c, n_steps) or [n_steps]))
    named = [f for f in facts if _mentions(said, f)]
    facts = named or facts
    if len(facts) == 1 and re.fullmatch(r"-?\d+(\.\d+)?", facts[0]):
        return float(facts[0]), "number"  # one number asked for: compared as a number, not as text in the answer
    return (facts, "facts") if facts else (None, "none")


STEP_REF = re.compile(r"\bsteps?\s*(?:#|no\.?\s*)?(\d+(?:\s*(?:,|and|or|&|-|to|through)\s*\d+)*)", re.I)
ORDINAL = re.compile(r"\b(first|second|third|fourth|fifth|sixth|last|final)\s+(?:step|call)\b", re.I)
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6}
QUOTED = re.compile(r"""'([^']{1,200})'|"([^"]{1,200})"|`([^`]{1,200})`""")


def _steps_named(text: str, n_steps: int) -> list[int]:
    steps = []
    for m in STEP_REF.finditer(text):
        nums = [int(x) for x in re.findall(r"\d+", m.group(1))]
        ranged = re.search(r"\d+\s*(?:-|to|through)\s*\d+", m.group(1))
        steps += list(range(nums[0], nums[-1] + 1)) if ranged and len(nums) == 2 else nums
    for m in ORDINAL.finditer(text):
        word = m.group(1).lower()
        steps.append(n_steps if word in ("last", "final") else ORDINALS[word])
    if not steps and n_steps == 1:
        steps = [1]  # a one-call chain: every criterion is about that call
    return sorted(set(steps))


def compile_criteria(criteria: list[str], chain: list[dict], outputs: list[tuple[str, Any]]) -> list[dict]:
    """Each success criterion as a mechanical check where it names a step and a value or field of its result.

    Returns [{"text", "graded", "steps": {k: {"tool", "facts", "keys"}}, "why" (when not graded)}]."""
    out = []
    for text in criteria:
        if not isinstance(text, str):
            continue
        steps = _steps_named(text, len(chain))
        rest = ORDINAL.sub(" ", STEP_REF.sub(" ", text))  # a step number is not a value the step returns
        quoted = {next(g for g in m.groups() if g) for m in QUOTED.finditer(rest)}
        candidates = [*quoted, *FACT.findall(rest)]
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", rest))
        checks, why = {}, None
        for k in steps:
            if not 1 <= k <= len(chain):
                why = f"it names step {k}, but the chain has {len(chain)}"
                checks = {}
                break
            produced, data = outputs[k - 1]
            facts = _facts(candidates, produced, quoted)
            keys = sorted(words & _keys(data))
            if facts or keys:
                checks[str(k)] = {"tool": chain[k - 1]["name"], "facts": facts, "keys": keys}
        if not steps:
            why = "it names no step of the chain"
        elif not checks and why is None:
            why = "it names no value or field that the step's result holds"
        out.append({"text": text, "graded": bool(checks), "steps": checks, **({"why": why} if not checks else {})})
    return out


def criterion_met(criterion: dict, log: list[dict]) -> bool:
    """Every step the criterion names is matched by a successful call of the agent to that step's tool whose result
    holds the step's facts and fields."""
    for need in criterion["steps"].values():
        results = [e["text"] for e in log if e["ok"] and e["name"] == need["tool"]]
        if not any(all(_mentions(r, f) for f in need["facts"]) and all(f'"{k}"' in r for k in need["keys"])
                   for r in results):
            return False
    return True


JUDGE_PROMPT = """You grade whether an assistant's episode meets one success criterion.
Request: {request}
Tool results the assistant got:
{results}
The assistant's final answer: {answer}
Criterion: {criterion}
Does the episode meet the criterion? Answer yes or no."""


def grade(task: Task, verification: Verification, log: list[dict], judge=None) -> Verification:
    """Add the task's success criteria to `verification`: the mechanical ones as `criterion k` checks, the others
    asked of `judge` (any policy: `act(prompt, info) -> str`, yes/no) when given, else listed as not graded."""
    criteria = task.features.get("criteria") or []
    if not criteria:
        return verification
    checks, not_graded = dict(verification.checks), []
    for i, c in enumerate(criteria, 1):
        if c["graded"]:
            checks[f"criterion {i}"] = criterion_met(c, log)
        elif judge is not None:
            results = "\n".join(f"- {e['name']}: {e['text'][:2000]}" for e in log[-20:]) or "(none)"
            prompt = JUDGE_PROMPT.format(request=task.instruction, results=results, answer=verification.submitted_answer,
                                         criterion=c["text"])
            messages = [{"role": "user", "content": prompt}]  # the shape every policy reads (LLM policies: info["messages"])
            reply = str(judge.act(prompt, {"messages": messages, "tools": [], "criterion": c["text"], "task_id": task.id}))
            checks[f"criterion {i} (judge)"] = reply.strip().lower().startswith("yes")
        else:
            not_graded.append(c["text"])
    details = {**verification.details, "criteria_not_graded": not_graded}
    return dataclasses.replace(verification, checks=checks, details=details)


def load_release_tasks(backend, questions: Path, limit: int | None = None) -> tuple[list[Task], ReleaseTaskReport]:
    """Replay every question's chain in `backend`'s sandbox and return the verified tasks and the report."""
    report = ReleaseTaskReport(backend.env_id)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in backend.tools}
    replays: list[tuple[str, dict, list[dict], dict, list[tuple[str, Any]]]] = []
    log_files: set[str] | None = None
    try:
        found = read_questions(questions)[:limit]
    except (OSError, json.JSONDecodeError, RecursionError, ValueError) as exc:
        report.dropped[questions.name] = f"unreadable question file ({type(exc).__name__}: {str(exc)[:200]})"
        return [], report
    report.questions = len(found)
    for i, q in enumerate(found):
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
            replays.append((qid, q, chain, before, outputs))
        except Dropped as why:
            report.dropped[qid] = str(why)
    excluded = sorted(log_files or ())
    backend.excluded = set(excluded)
    report.state_excluded = excluded
    backend.reset(None)
    initial = backend.state()
    labels = " / ".join(backend.taxonomy.values())
    tasks = []
    for qid, q, chain, final, outputs in replays:
        state = {k: v for k, v in final.items() if k not in backend.excluded}
        writes = state != initial
        request = q[next(k for k in INSTRUCTION_KEYS if q.get(k))]
        rubric = _rubric(q)
        criteria = [c for c in (_first(rubric, CRITERIA_KEYS) or []) if isinstance(c, str)] if isinstance(rubric, dict) else []
        reference = parse_reference(q)
        answer, answer_type = _answer(reference, "\n".join(text for text, _ in outputs), request, criteria, len(chain))
        if writes and not isinstance(reference, bool | int | float):
            answer, answer_type = None, "none"  # a write task is graded on its end state; the record it echoes is not asked for
        if answer_type == "none" and not writes:
            report.dropped[qid] = "no check fails a do-nothing agent (free-text answer with no fact from the chain's outputs, and no writes)"
            continue
        compiled = compile_criteria(criteria, chain, outputs)
        tasks.append(Task(id=f"{backend.id}-{qid}", theme=backend.id, kind="imported", instruction=request,
                          difficulty=min(5, max(1, len(chain))), solution=tuple(chain), answer=answer, answer_type=answer_type,
                          state_hash=state_digest(state) if writes else None,  # the whole state but the named call logs
                          features={"source": "release", "calls": len(chain), "state_excluded": excluded, "taxonomy": labels,
                                    "reference_answer": reference, "criteria": compiled, "writes": writes}))
    report.loaded = len(tasks)
    served = []
    for task in tasks:  # the proof each task's gold scores 1.0 in a fresh episode; only those are served
        v = replay_verification(backend, task)
        if v.passed:
            served.append(task)
            report.criteria_graded += sum(c["graded"] for c in task.features["criteria"])
            report.criteria_not_graded += sum(not c["graded"] for c in task.features["criteria"])
        else:
            failed = sorted(k for k, ok in v.checks.items() if not ok)
            report.not_replayed[task.id.rsplit("-", 1)[1]] = (
                f"the gold replay failed {', '.join(failed)}: the chain is not deterministic under the frozen clock and seeded "
                "ids (it reads a source of time or randomness the worker does not freeze)")
    report.replayed = len(served)
    return served, report


def replay_chain(backend, chain: list[dict] | tuple[dict, ...]) -> tuple[dict, list[tuple[str, Any]], set[str]]:
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
        outputs.append((result.content, result.data))
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


def replay_verification(backend, task: Task) -> Verification:
    """The gold chain played in a fresh episode and graded as an agent's episode is (criteria included)."""
    backend.reset(task)
    for call in task.gold_calls:
        backend.call(call)
    submitted = task.answer if task.answer_type != "none" else "done"
    final = backend.state_hash(task.state_tables or None) if task.state_hash is not None else None
    return grade(task, verify(task, submitted, final), backend.episode_log)


def replay_score(backend, task: Task) -> float:
    return 1.0 if replay_verification(backend, task).passed else 0.0
