"""Null policies: strategies that never look at the world, the floor every reported score stands beside.

A task that one of these passes teaches nothing and measures nothing, so synthesis rejects such tasks
(`agentworld_gym.synthesis.cheap_answers` uses the same answers) and benchmarks print the best of them
beside every score.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .base import Policy, RandomPolicy

CONSTANT_ANSWERS = ("0", "1", "2", "yes", "no", "true", "done")

# A quoted value, an email, or an id-like token (letters and digits joined by - or _, or letters then digits).
_VALUE = re.compile(r'"([^"\n]{1,80})"|“([^”\n]{1,80})”|([\w.+-]+@[\w-]+\.[\w.-]+)'
                    r"|\b([A-Za-z][A-Za-z0-9]*[-_][A-Za-z0-9_-]*\d[A-Za-z0-9_-]*|[A-Z]{2,}\d+)\b")


def first_value(instruction: str) -> str | None:
    """The first entity id or quoted value in an instruction (what `FirstIdPolicy` submits)."""
    m = _VALUE.search(instruction or "")
    return next(g for g in m.groups() if g) if m else None


def _task_text(observation: str, info: dict[str, Any]) -> str:
    """The task instruction: the first user message of the episode (the observation as a fallback)."""
    for m in info.get("messages", ()):
        if m.get("role") == "user":
            return str(m.get("content", ""))
    return observation


def _submit(answer: str) -> str:
    return json.dumps({"name": "submit", "arguments": {"answer": answer}})


class DoNothingPolicy:
    """Submits an empty answer at once, without a tool call."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return _submit("")


class ConstantAnswerPolicy:
    """Submits one fixed answer at once, without a tool call."""

    def __init__(self, answer: str):
        self.answer = answer

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return _submit(self.answer)


class FirstIdPolicy:
    """Submits the first entity id / quoted value of the task instruction at once (empty if none)."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return _submit(first_value(_task_text(observation, info)) or "")


def null_policies(seed: int | None = None) -> dict[str, Policy]:
    """name -> policy: "do-nothing", "constant:<c>" for each of CONSTANT_ANSWERS, "first-id", "random"."""
    out: dict[str, Policy] = {"do-nothing": DoNothingPolicy()}
    out.update({f"constant:{c}": ConstantAnswerPolicy(c) for c in CONSTANT_ANSWERS})
    out["first-id"] = FirstIdPolicy()
    out["random"] = RandomPolicy(seed)
    return out


__all__ = ["CONSTANT_ANSWERS", "ConstantAnswerPolicy", "DoNothingPolicy", "FirstIdPolicy", "first_value", "null_policies"]
