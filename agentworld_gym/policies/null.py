"""Null baselines: cheap strategies every reported score stands beside.

A policy that beats these uses the tools; one that does not is guessing.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .base import Policy, RandomPolicy

CONSTANT_ANSWERS = ("0", "1", "2", "yes", "no", "true", "done")


def _submit(answer: str) -> str:
    return json.dumps({"name": "submit", "arguments": {"answer": answer}})


class DoNothingPolicy:
    """Submits an empty answer at once, without a tool call."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return _submit("")


class ConstantAnswerPolicy:
    """Submits the same answer at once, whatever the task."""

    def __init__(self, answer: str):
        self.answer = answer

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return _submit(self.answer)


_QUOTED = re.compile(r"""["'“‘]([^"'”’]{1,80})["'”’]""")
_ID = re.compile(r"\b[A-Za-z]{1,8}[-_]?\d[\w-]*\b")


class FirstIdPolicy:
    """Submits the first entity id (or quoted value) appearing in the task instruction."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        users = [m["content"] for m in info.get("messages", []) if m.get("role") == "user"]
        text = users[0] if users else observation
        found = [m for m in (_ID.search(text), _QUOTED.search(text)) if m]
        first = min(found, key=lambda m: m.start()) if found else None
        return _submit(first.group(1) if first and first.re is _QUOTED else first.group(0) if first else "")


def null_policies(seed: int | None = None) -> dict[str, Policy]:
    """Every null baseline by name: do-nothing, constant:<c>, first-id, random."""
    out: dict[str, Policy] = {"do-nothing": DoNothingPolicy()}
    out.update({f"constant:{c}": ConstantAnswerPolicy(c) for c in CONSTANT_ANSWERS})
    out["first-id"] = FirstIdPolicy()
    out["random"] = RandomPolicy(seed)
    return out


__all__ = ["CONSTANT_ANSWERS", "ConstantAnswerPolicy", "DoNothingPolicy", "FirstIdPolicy", "null_policies"]
