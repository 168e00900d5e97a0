"""Diagnosis: attribute every failed episode to one cause, then rank the weak cells.

Each failure is classified from the transcript, the task and the verification alone (no replay):

  truncated           the turn budget ran out before an answer
  parse_error         a tool call the parser could not read, never followed by a working call
  unknown_tool        a call to a tool that does not exist, never followed by a working call
  bad_arguments       a call rejected by the schema check, never followed by a working call
  ignored_tool_error  an error observation answered directly by a submit (no recovery)
  premature_answer    submitted before making every tool call of the gold solution
  wrong_tool_order    made the gold solution's calls, but not in its order
  state_mismatch      the database ended in a different state than the gold solution leaves
  wrong_answer        the answer check failed
  other               failed, but none of the above applies (e.g. a task with no checks)

Several may hold at once (`tags`); the `cause` is the first in this order, which goes from the
earliest boundary (format, tool choice, arguments, error handling) to the latest (planning, outcome).
Weak cells are then ranked by a smoothed failure rate over themes, L1 categories, tools, task kinds,
difficulty levels and difficulty features.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..wrappers.chat import tool_call_arguments

FAILURE_CLASSES = ("truncated", "parse_error", "unknown_tool", "bad_arguments", "ignored_tool_error",
                   "premature_answer", "wrong_tool_order", "state_mismatch", "wrong_answer", "other")
DIMENSIONS = ("theme", "category", "tool", "kind", "difficulty", "feature")

PARSE_PREFIX = "Error: could not read"
UNKNOWN_PREFIX = "Error: unknown tool"
BAD_ARGS_PREFIX = "Error: invalid arguments"
_BIND_ERRORS = ("positional arguments", "got multiple values")  # Tool.bind's errors are argument errors too


@dataclass(frozen=True)
class Event:
    """One thing that happened in an episode, read off the transcript."""

    kind: str  # call | submit | parse_error
    name: str = ""
    arguments: dict = field(default_factory=dict, compare=False)
    error: str | None = None  # None = ok; else unknown_tool | bad_arguments | tool_error | parse_error


def events_of(messages: Sequence[dict]) -> list[Event]:
    """The calls, errors and answer of an episode, in order, from its OpenAI-format messages."""
    args_by_id: dict[str, tuple[str, dict]] = {}
    events: list[Event] = []
    last_assistant_answered = True
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            if not last_assistant_answered:  # the previous assistant turn was a plain-text answer
                events.append(Event("submit"))
            calls = m.get("tool_calls") or []
            for c in calls:
                args_by_id[c.get("id", "")] = (c.get("function", {}).get("name", ""), tool_call_arguments(c))
            last_assistant_answered = False
        elif role == "tool":
            last_assistant_answered = True
            name, content = m.get("name", ""), str(m.get("content", ""))
            if name == "parser" and content.startswith(PARSE_PREFIX):
                events.append(Event("parse_error", error="parse_error"))
                continue
            called, arguments = args_by_id.get(m.get("tool_call_id", ""), (name, {}))
            if called == "submit" or name == "submit":
                events.append(Event("submit", "submit", arguments))
                continue
            error = None
            if content.startswith(UNKNOWN_PREFIX):
                error = "unknown_tool"
            elif content.startswith(BAD_ARGS_PREFIX) or (content.startswith("Error:") and any(s in content for s in _BIND_ERRORS)):
                error = "bad_arguments"
            elif content.startswith("Error:"):
                error = "tool_error"
            events.append(Event("call", called or name, arguments, error))
    if not last_assistant_answered:
        events.append(Event("submit"))
    return events


def _is_subsequence(needle: Sequence[str], hay: Sequence[str]) -> bool:
    it = iter(hay)
    return all(any(x == y for y in it) for x in needle)


def classify(record: dict) -> dict:
    """{"success", "cause", "tags", "evidence"} for one episode record (cause None on success)."""
    events = events_of(record.get("messages", []))
    verification = record.get("verification") or {}
    checks = verification.get("checks", {})
    success = bool(record.get("success", verification.get("passed", False)))
    submitted = any(e.kind == "submit" for e in events)
    truncated = bool(record.get("truncated")) or not submitted
    gold = [c["name"] for c in (record.get("task") or {}).get("solution", ())]
    ok_calls = [e.name for e in events if e.kind == "call" and e.error is None]
    evidence = {"gold_tools": gold, "ok_calls": ok_calls,
                "errors": dict(Counter(e.error for e in events if e.error)), "submitted": submitted}
    if success:
        return {"success": True, "cause": None, "tags": [], "evidence": evidence}

    tags: set[str] = set()
    if truncated:
        tags.add("truncated")
    # An error counts when no working call came after it (the agent never recovered).
    last_ok = max((i for i, e in enumerate(events) if e.kind == "call" and e.error is None), default=-1)
    for i, e in enumerate(events):
        if e.error in ("parse_error", "unknown_tool", "bad_arguments") and i > last_ok:
            tags.add(e.error)
    answer_at = next((i for i, e in enumerate(events) if e.kind == "submit"), None)
    if answer_at is not None and answer_at > 0 and events[answer_at - 1].error is not None:
        tags.add("ignored_tool_error")
    if submitted and gold:
        missing = Counter(gold) - Counter(ok_calls)
        if missing:
            tags.add("premature_answer")
            evidence["missing_gold_tools"] = sorted(missing.elements())
        elif not _is_subsequence(gold, ok_calls):
            tags.add("wrong_tool_order")
    if checks.get("state") is False:
        tags.add("state_mismatch")
    if checks.get("answer") is False:
        tags.add("wrong_answer")
    if not tags:
        tags.add("other")
    ordered = [c for c in FAILURE_CLASSES if c in tags]
    return {"success": False, "cause": ordered[0], "tags": ordered, "evidence": evidence}


# --------------------------------------------------------------------------------------------
# Aggregation


def cells_of(record: dict) -> dict[str, list[str]]:
    """The cells (per dimension) an episode belongs to; a task with three tools is in three tool cells."""
    task = record.get("task") or {}
    features = task.get("features") or {}
    feats = []
    for k, v in sorted(features.items()):
        if isinstance(v, (dict, list, tuple)) or v is None:
            continue  # structured features (knob settings, lists) are not cells
        if isinstance(v, (bool, str)):
            feats.append(f"{k}={str(v)[:40]}")
        elif isinstance(v, float) and not float(v).is_integer():
            feats.append(f"{k}>0" if v > 0 else f"{k}=0")
        else:
            feats.append(f"{k}={int(v)}" if v < 4 else f"{k}>=4")
    if task.get("answer_type"):
        feats.append(f"answer_type={task['answer_type']}")
    return {
        "theme": [record.get("theme") or task.get("theme", "?")],
        "category": [record.get("category") or "?"],
        "tool": sorted({c["name"] for c in task.get("solution", ())}),
        "kind": [str(task.get("kind", "?"))],
        "difficulty": [str(task.get("difficulty", "?"))],
        "feature": feats,
    }


def weakness(failures: int, n: int) -> float:
    """Failure rate smoothed towards 1/2 (Laplace), so one failure in one try ranks below 9 in 10."""
    return (failures + 1) / (n + 2)


@dataclass
class _Cell:
    n: int = 0
    failures: int = 0
    causes: Counter = field(default_factory=Counter)

    def row(self, key: str) -> dict:
        return {"key": key, "n": self.n, "failures": self.failures, "success_rate": round(1 - self.failures / self.n, 4),
                "failure_rate": round(self.failures / self.n, 4), "weakness": round(weakness(self.failures, self.n), 4),
                "top_cause": self.causes.most_common(1)[0][0] if self.causes else None,
                "causes": dict(self.causes.most_common())}


def diagnose(records: Iterable[dict], *, min_count: int = 2, top: int = 5) -> dict:
    """Classify every failure and rank the weak cells of every dimension.

    Returns a JSON-serialisable report with `status`: "ok", "no_failures" (every episode passed:
    nothing to target) or "no_episodes".
    """
    records = list(records)
    per_episode = []
    totals = Counter()
    tag_totals = Counter()
    cells: dict[str, dict[str, _Cell]] = {d: defaultdict(_Cell) for d in DIMENSIONS}
    for rec in records:
        c = classify(rec)
        per_episode.append({"id": rec.get("id"), "theme": rec.get("theme"), "task_id": (rec.get("task") or {}).get("id"),
                            "success": c["success"], "cause": c["cause"], "tags": c["tags"]})
        if not c["success"]:
            totals[c["cause"]] += 1
            tag_totals.update(c["tags"])
        for dim, keys in cells_of(rec).items():
            for key in keys:
                cell = cells[dim][key]
                cell.n += 1
                if not c["success"]:
                    cell.failures += 1
                    cell.causes[c["cause"]] += 1
    n = len(records)
    n_fail = sum(totals.values())
    by = {dim: sorted((cell.row(k) for k, cell in cs.items()), key=lambda r: (-r["weakness"], -r["n"], r["key"]))
          for dim, cs in cells.items()}
    weak = {dim: [r for r in rows if r["n"] >= min_count and r["failures"] > 0][:top] for dim, rows in by.items()}
    status = "no_episodes" if n == 0 else "no_failures" if n_fail == 0 else "ok"
    notes = {"no_episodes": "No episodes to diagnose.",
             "no_failures": f"All {n} episodes passed: there is no capability gap to target on this arena; "
                            "raise the difficulty or add arena themes.",
             "ok": ""}[status]
    return {
        "status": status,
        "notes": notes,
        "n_episodes": n,
        "n_success": n - n_fail,
        "success_rate": round((n - n_fail) / n, 4) if n else 0.0,
        "failures": {k: totals[k] for k in FAILURE_CLASSES if totals[k]},
        "failure_shares": {k: round(totals[k] / n_fail, 4) for k in FAILURE_CLASSES if totals[k]},
        "tags": {k: tag_totals[k] for k in FAILURE_CLASSES if tag_totals[k]},
        "by": by,
        "weak": weak,
        "episodes": per_episode,
    }


# --------------------------------------------------------------------------------------------
# Markdown


def _table(rows: list[dict], limit: int = 15) -> str:
    out = ["| cell | n | failures | success | weakness | top cause |", "|---|---:|---:|---:|---:|---|"]
    for r in rows[:limit]:
        out.append(f"| {r['key']} | {r['n']} | {r['failures']} | {r['success_rate']:.0%} | {r['weakness']:.2f} | {r['top_cause'] or ''} |")
    if len(rows) > limit:
        out.append(f"| ... {len(rows) - limit} more | | | | | |")
    return "\n".join(out)


def to_markdown(report: dict, title: str = "Diagnosis") -> str:
    lines = [f"# {title}", "",
             f"{report['n_episodes']} episodes, {report['n_success']} passed "
             f"({report['success_rate']:.1%}). Status: **{report['status']}**."]
    if report["notes"]:
        lines += ["", report["notes"]]
    if report["failures"]:
        lines += ["", "## Failure causes", "", "| cause | episodes | share of failures | tagged (any) |", "|---|---:|---:|---:|"]
        for k, v in report["failures"].items():
            lines.append(f"| {k} | {v} | {report['failure_shares'][k]:.0%} | {report['tags'].get(k, v)} |")
    for dim in DIMENSIONS:
        rows = report["by"].get(dim) or []
        if rows:
            lines += ["", f"## By {dim} (weakest first)", "", _table(rows)]
    return "\n".join(lines) + "\n"


def summary_line(report: dict) -> str:
    top = ", ".join(f"{k} {v}" for k, v in list(report["failures"].items())[:4]) or "none"
    weak = ", ".join(r["key"] for r in report["weak"].get("theme", [])[:3]) or "none"
    return f"success {report['success_rate']:.1%} of {report['n_episodes']}; failures: {top}; weakest themes: {weak}"


def as_json(report: dict) -> str:
    return json.dumps(report, indent=1, ensure_ascii=False, default=_default)


def _default(o: Any):
    return str(o)
