"""MCPBackend: an external MCP server as the world of an `AgentWorldEnv` (`AgentWorld/mcp-v0`).

One server process per env at a time. A fresh episode state comes from one of:
  * "restart" (default): a new server process, with fresh copies of `files` in a private episode
    folder (`{episode_dir}` in the command and env is replaced by that folder);
  * "call": a reset tool call (`reset_call`, e.g. tau2's reset_state), with `{task_id}` filled in;
  * "keep": nothing (a stateless server such as a calculator).
The state hash is the hash of what `state_calls` (read-only calls) return, or of `state_fn(backend)`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..actions import ToolCall
from ..errors import BackendError, ConfigError
from ..tasks import Task
from ..theme import SUBMIT_SCHEMA, tools_prompt
from ..tools import ToolResult
from .client import MCPToolset

FRESH_MODES = ("restart", "call", "keep")


def json_hash(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]


def _fill(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, str):
        for k, v in mapping.items():
            value = value.replace("{" + k + "}", v)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, mapping) for v in value]
    return value


class MCPBackend:
    """A `Backend` over one MCP server.

    Args:
        command / url: the server (see `MCPToolset`).
        id: the backend's id (the `theme` field of its tasks).
        files: {name: path} copied into each episode's private folder before the server starts.
        fresh: "restart" | "call" | "keep" (see the module doc).
        reset_call: {"name", "arguments"} run on reset when fresh="call".
        state_calls: read-only calls whose results define the state (for state-checked tasks).
        state_fn: alternatively, a function of the backend returning the state as JSON-able data.
        hidden_tools: server tools the agent does not see (reset and logging tools).
        fixed_arguments: {argument: value} sent with every call and hidden from the agent's schemas.
        intro: the first lines of the system prompt.
        env, timeout, start_timeout, skip_bad_tools, mode: passed to `MCPToolset`.
    """

    def __init__(self, command: Sequence[str] | None = None, url: str | None = None, *, id: str = "mcp",
                 files: dict[str, str] | None = None, fresh: str = "restart", reset_call: dict | None = None,
                 state_calls: Sequence[dict] = (), state_fn: Callable[[MCPBackend], Any] | None = None,
                 hidden_tools: Sequence[str] = (), fixed_arguments: dict[str, Any] | None = None, intro: str | None = None,
                 env: dict[str, str] | None = None, timeout: float = 30.0, start_timeout: float = 30.0,
                 skip_bad_tools: bool = False, mode: str = "legacy"):
        if fresh not in FRESH_MODES:
            raise ConfigError(f"Expected fresh in {FRESH_MODES}, got {fresh!r}.")
        if fresh == "call" and not reset_call:
            raise ConfigError("Expected reset_call={'name': ..., 'arguments': {...}} with fresh='call', got none.")
        if url is not None and fresh == "restart":
            fresh = "keep"  # a remote server cannot be restarted from here
        self._config = dict(command=command, url=url, id=id, files=files, fresh=fresh, reset_call=reset_call,
                            state_calls=state_calls, state_fn=state_fn, hidden_tools=hidden_tools,
                            fixed_arguments=fixed_arguments, intro=intro, env=env, timeout=timeout,
                            start_timeout=start_timeout, skip_bad_tools=skip_bad_tools, mode=mode)
        self.id = id
        self.command, self.url, self.files, self.fresh = command, url, dict(files or {}), fresh
        self.reset_call, self.state_calls, self.state_fn = reset_call, list(state_calls), state_fn
        self.hidden_tools, self.fixed_arguments = set(hidden_tools), dict(fixed_arguments or {})
        self.env, self.timeout, self.start_timeout, self.skip_bad_tools, self.mode = env, timeout, start_timeout, skip_bad_tools, mode
        for name, path in self.files.items():
            if not Path(path).is_file():
                raise ConfigError(f"Expected files[{name!r}] to be an existing file, got {path!r}.")
        self.task: Task | None = None
        self.episode_dir: Path | None = None
        self.toolset: MCPToolset | None = None
        self._used = False  # has the running server seen a call since it started
        self._start()
        self._publish(intro)

    def _publish(self, intro: str | None) -> None:
        """The agent's tools (the server's, less hidden ones and fixed arguments) and the system prompt."""
        self.tools = [s for s in self.toolset.schemas() if s["function"]["name"] not in self.hidden_tools]
        for s in self.tools:
            params = copy.deepcopy(s["function"]["parameters"])
            for arg in self.fixed_arguments:
                params.get("properties", {}).pop(arg, None)
                if arg in params.get("required", []):
                    params["required"] = [r for r in params["required"] if r != arg]
            s["function"]["parameters"] = params
        self._schemas = {s["function"]["name"]: s["function"]["parameters"] for s in self.tools}
        self.tool_schemas = [*self.tools, SUBMIT_SCHEMA]
        self.system_prompt = tools_prompt(intro or f"You are an assistant working with the tools of the {self.toolset.label} service.",
                                          self.tool_schemas)

    # ------------------------------------------------------------------ process lifecycle
    def _start(self) -> None:
        self._stop()
        mapping = {}
        if self.command is not None and (self.files or "{episode_dir}" in json.dumps([self.command, self.env])):
            self.episode_dir = Path(tempfile.mkdtemp(prefix="agentworld-mcp-"))
            for name, path in self.files.items():
                shutil.copyfile(path, self.episode_dir / name)
            mapping["episode_dir"] = str(self.episode_dir)
        self.toolset = MCPToolset(_fill(self.command, mapping) if self.command else None, self.url,
                                  env=_fill(self.env, mapping), cwd=str(self.episode_dir) if self.episode_dir else None,
                                  timeout=self.timeout, start_timeout=self.start_timeout, mode=self.mode,
                                  skip_bad_tools=self.skip_bad_tools)
        self._used = False

    def _stop(self) -> None:
        if self.toolset is not None:
            self.toolset.close()
            self.toolset = None
        if self.episode_dir is not None:
            shutil.rmtree(self.episode_dir, ignore_errors=True)
            self.episode_dir = None

    # ------------------------------------------------------------------ Backend
    def reset(self, task: Task | None = None) -> None:
        self.task = task
        if self.toolset is None or not self.toolset.alive or (self.fresh == "restart" and self._used):
            self._start()
        if self.fresh == "call":
            task_id = str(task.features.get("source_id", task.id)) if task is not None else ""
            call = _fill(self.reset_call, {"task_id": task_id})
            result = self.toolset.call(call["name"], {**call.get("arguments", {}), **self.fixed_arguments})
            if not result.ok:
                raise BackendError(f"Expected the reset call {call['name']} to succeed on {self.toolset.label!r}, got: {result.content}")
        self._used = self.fresh != "restart"  # a restart server is pristine until the first call

    def call(self, call: ToolCall) -> ToolResult:
        if self.toolset is None:
            return ToolResult(False, "Error: the tool server is not running; the episode must be reset.")
        schema = self._schemas.get(call.name)
        if schema is None or call.name in self.hidden_tools:
            return _unknown(call.name, list(self._schemas))
        if call.args:
            order = list(schema.get("properties", {}))
            if len(call.args) > len(order):
                return ToolResult(False, f"Error: {call.name} takes at most {len(order)} positional arguments, got {len(call.args)}.")
            arguments = {**dict(zip(order, call.args, strict=False)), **call.arguments}
        else:
            arguments = dict(call.arguments)
        from ..tools import validate_arguments

        problem = validate_arguments(schema, arguments)
        if problem:
            return ToolResult(False, f"Error: invalid arguments for {call.name}: {problem}")
        self._used = True
        return self.toolset.call(call.name, {**arguments, **self.fixed_arguments})

    def state(self) -> Any:
        """The current state as JSON-able data (what `state_hash` hashes)."""
        if self.state_fn is not None:
            return self.state_fn(self)
        out = []
        for c in self.state_calls:
            r = self.toolset.call(c["name"], {**c.get("arguments", {}), **self.fixed_arguments})
            out.append(r.data if r.ok else r.content)
        return out

    def state_hash(self, tables: Sequence[str] | None = None) -> str:
        state = self.state()
        if tables and isinstance(state, dict):
            state = {k: v for k, v in state.items() if k in tables}
        return json_hash(state)

    def close(self) -> None:
        self._stop()

    # ------------------------------------------------------------------ pickling: by configuration
    def __getstate__(self) -> dict:
        return {"config": self._config}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["config"])

    def __repr__(self) -> str:
        return f"MCPBackend({self.id!r}, {len(self.tools)} tools, fresh={self.fresh!r})"


def _unknown(name: str, names: list[str]) -> ToolResult:
    from ..errors import did_you_mean

    return ToolResult(False, f"Error: unknown tool {name[:80]!r}.{did_you_mean(name, names)} Available tools: {', '.join(names)}.")


def make_mcp_env(command: Sequence[str] | None = None, url: str | None = None, tasks=None, *, name: str = "mcp", max_turns: int = 20,
                 reward_mode: str = "binary", render_mode: str | None = None, discover: int = 0, seed: int = 0, **backend_kwargs):
    """`gym.make("AgentWorld/mcp-v0", command=[...], tasks=...)`: an AgentWorldEnv over an external MCP server.

    `tasks` is a JSONL path or a list of Tasks/dicts whose `theme` is `name` (the backend id; gym.make
    reserves `id`). With `discover=N` and no tasks, N tasks are synthesized from the live server.
    """
    from ..env import AgentWorldEnv

    backend = MCPBackend(command, url, id=name, **backend_kwargs)
    try:
        if tasks is None and discover:
            from .discovery import discover_tasks

            tasks = discover_tasks(backend, n_tasks=discover, seed=seed).tasks
        return AgentWorldEnv(backend, tasks=tasks, max_turns=max_turns, reward_mode=reward_mode, render_mode=render_mode)
    except BaseException:
        backend.close()
        raise


def state_digest(state: dict) -> str:
    """The state hash of a `ReleaseBackend.state()` dict (file by file, as `state_hash` computes it)."""
    return json_hash({name: json_hash(value) for name, value in state.items()})
