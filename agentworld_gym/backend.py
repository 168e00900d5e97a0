"""Backends: where an episode's tools run when the world is not a theme's SQLite database.

`AgentWorldEnv` owns the episode (turns, transcript, termination, grading). For a `Theme` it runs
tools against a private SQLite copy (the default). For anything else — an external MCP server, a
tau2 domain, an Agent-World release environment — it talks to a `Backend`: the four operations the
episode needs (fresh state, call a tool, hash the state, close) and the tool list the agent sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .actions import ToolCall
from .tasks import Task
from .tools import ToolResult


@runtime_checkable
class Backend(Protocol):
    id: str  # used as the Task.theme of the backend's tasks
    system_prompt: str
    tools: list[dict]  # OpenAI-format schemas of the backend's tools
    tool_schemas: list[dict]  # what the agent sees: `tools` plus submit

    def reset(self, task: Task | None = None) -> None:
        """Start a fresh episode state (for `task`, when the backend has per-task initial states)."""

    def call(self, call: ToolCall) -> ToolResult:
        """Run one tool call; every failure is an error result (`ok=False`, content 'Error: ...')."""

    def state_hash(self, tables: Sequence[str] | None = None) -> str:
        """A stable hash of the current state (of `tables`, where the backend has tables)."""

    def close(self) -> None:
        """Release processes and files; idempotent."""
