"""A theme: its spec (data), its tools, and what follows from them (prompt, entity keys, replay)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cached_property, lru_cache
from typing import Any

from .actions import ToolCall
from .tools import Db, Tool, ToolResult, Toolset
from .world import ThemeSpec, World, open_copy, state_hash

SUBMIT_SCHEMA = {
    "type": "function",
    "function": {
        "name": "submit",
        "description": "Finish the task and give the final answer to the user. Call it once, last.",
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": ["string", "number", "boolean", "array"], "description": "The final answer (use \"done\" when the task asks for no value)."}},
            "required": ["answer"],
        },
    },
}


USE_TOOLS = "Use the tools to solve the user's task. When you are done, call submit with the final answer."
TOOLS_HEADER = "\nTools (JSON Schema):\n"  # where an all-in-text system prompt's tool list starts


def tools_prompt(intro: str, tool_schemas: Iterable[dict]) -> str:
    """A system prompt with everything in text: who the assistant is, every tool schema, how to call them.
    Themes and external backends (MCP servers, tau2, release environments) all use this shape."""
    tools = "\n".join(json.dumps(s["function"], ensure_ascii=False) for s in tool_schemas)
    return (f"{intro.strip()}{TOOLS_HEADER}{tools}\n"
            'Call one tool per turn as JSON: {"name": "<tool>", "arguments": {...}}. '
            'When you are done, call submit with the final answer, e.g. {"name": "submit", "arguments": {"answer": "42"}}.')


class Theme:
    """One environment theme: spec + toolset. Every AgentWorldEnv is built from one of these."""

    def __init__(self, spec: ThemeSpec, tools: Iterable[Tool]):
        self.spec = spec
        self.toolset = Toolset(tools)
        self.templates: list[dict] = []  # forged themes: their tools' template specs with rule marks (discovery.forge)
        self._worlds: dict[tuple[int, float], World] = {}

    @property
    def id(self) -> str:
        return self.spec.id

    def __repr__(self) -> str:
        return f"Theme({self.spec.id!r}, {len(self.toolset)} tools, {len(self.spec.tables)} tables)"

    @cached_property
    def tool_schemas(self) -> list[dict]:
        """The tools the agent sees: the theme's tools plus `submit`."""
        return [*self.toolset.schemas, SUBMIT_SCHEMA]

    @cached_property
    def _intro(self) -> str:
        rules = "".join(f"\n- {r}" for r in self.spec.rules)
        return f"You are an assistant for {self.spec.title}. {self.spec.description}\nPolicy:{rules or ' none'}"

    @cached_property
    def instructions(self) -> str:
        """The system prompt without tool text, for chat templates that render `tools=` themselves."""
        return f"{self._intro}\n{USE_TOOLS}"

    @cached_property
    def system_prompt(self) -> str:
        """Everything in text: who the assistant is, its policy, every tool schema and the call format."""
        return tools_prompt(self._intro, self.tool_schemas)

    @cached_property
    def entity_keys(self) -> dict[str, tuple[str, str]]:
        """Entity key -> (table, column): every table's primary key names an entity."""
        return {t.pk: (t.name, t.pk) for t in self.spec.tables}

    def key_of(self, param: str) -> str | None:
        """The entity key a parameter carries: itself, or a known key it ends with (from_account_id)."""
        keys = self.entity_keys
        if param in keys:
            return param
        for key in sorted(keys, key=len, reverse=True):
            if param.endswith("_" + key) or param.endswith(key):
                return key
        return None

    def world(self, db_seed: int = 0, scale: float = 1.0) -> World:
        w = self._worlds.get((db_seed, scale))
        if w is None:
            w = self._worlds[(db_seed, scale)] = World(self.spec, db_seed, scale)
        return w

    def db(self, conn) -> Db:
        return Db(conn, self.spec.now, self.spec.primary_keys)

    def replay(self, calls: Iterable[ToolCall | dict], db_seed: int = 0, scale: float = 1.0):
        """Run calls on a fresh copy of the world; returns (results, state hash of all tables)."""
        conn = open_copy(self.world(db_seed, scale).template)
        try:
            db = self.db(conn)
            results: list[ToolResult] = []
            for c in calls:
                call = c if isinstance(c, ToolCall) else ToolCall(c["name"], dict(c.get("arguments", {})))
                results.append(self.toolset.call(db, call))
            return results, state_hash(conn)
        finally:
            conn.close()


@lru_cache(maxsize=65536)
def humanize(name: str) -> str:
    """'credit_limit' -> 'credit limit', 'accountId' -> 'account id' (cached: synthesis words the same names often)."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return " ".join(name.replace("_", " ").replace("-", " ").split()).lower()


@lru_cache(maxsize=65536)
def noun_of(key: str) -> str:
    """'account_id' -> 'account'."""
    words = humanize(key).split()
    if len(words) > 1 and words[-1] in ("id", "code", "number", "key", "no"):
        words = words[:-1]
    return " ".join(words) or key


def scalar_fields(data: Any) -> dict[str, Any]:
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if isinstance(v, (str, int, float, bool)) and v is not None}
    return {}


_IE_WORDS = frozenset(("movie", "cookie", "zombie", "calorie", "selfie", "rookie", "genie", "tie", "pie", "lie"))


def singular(word: str) -> str:
    if word[:-1] in _IE_WORDS:
        return word[:-1]  # movies -> movie, not movy
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "news", "data")):
        return word[:-1]
    return word
