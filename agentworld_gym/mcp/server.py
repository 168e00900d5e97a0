"""Serve a theme, or a live episode, as a real MCP server (the mcp SDK's `MCPServer`).

`theme_server(theme)` exposes exactly the theme's tools, with the JSON Schemas and descriptions the
env uses; a tool error comes back as an MCP tool error (`is_error`) carrying the env's message.
Every client session plays in its own world (a private copy of the theme's database):

  * the session is `_meta["agentworld/session"]` on the call when the client sends one, else the
    streamable-HTTP session id (`Mcp-Session-Id`), else the process (stdio: one client per process);
  * `_meta["agentworld/reset"] = true` on a call gives that session a fresh world before the call;
  * a new session starts in a fresh world; at most MAX_SESSIONS worlds are kept (least recent dropped).

The theme's schema document is the resource `agentworld://<theme>/schema`.

`episode_server(env)` serves one env's live episode instead: the theme's tools plus submit, every
call played through `env.step()`, so an external MCP agent plays and the Gym side grades.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ..actions import ToolCall
from ..errors import require
from ..tools import ToolResult

SESSION_META = "agentworld/session"
RESET_META = "agentworld/reset"
MAX_SESSIONS = 256
DEFAULT_SESSION = "default"

# run(session, reset, tool name, arguments) -> ToolResult
RunFn = Callable[[str, bool, str, dict], ToolResult]


@lru_cache(maxsize=1)
def _server_class():
    """The MCPServer subclass (built on first use so the SDK is imported lazily)."""
    require("mcp", "mcp")
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.resources import FunctionResource
    from mcp_types import CallToolResult, TextContent
    from mcp_types import Tool as MCPTool

    class ToolServer(MCPServer):
        """An MCPServer whose tools are given as JSON Schemas plus one dispatch function.

        MCPServer derives schemas from Python signatures; ours already exist (derived once from the
        tool definitions), so listing and calling are overridden to serve them unchanged.
        """

        def __init__(self, name: str, tools: list[dict], run: RunFn, resources: list[tuple[str, str, str, Callable[[], str]]] = (),
                     instructions: str | None = None):
            super().__init__(name, instructions=instructions, log_level="WARNING")
            self._tools = {t["function"]["name"]: t["function"] for t in tools}
            self._run = run
            for uri, rname, description, fn in resources:
                self.add_resource(FunctionResource(uri=uri, name=rname, description=description, mime_type="text/markdown", fn=fn))

        async def list_tools(self) -> list:
            return [MCPTool(name=f["name"], description=f.get("description", ""), input_schema=f["parameters"]) for f in self._tools.values()]

        def _tool_input_schema(self, name: str) -> dict | None:
            f = self._tools.get(name)
            return None if f is None else f["parameters"]

        async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
            session, reset = DEFAULT_SESSION, False
            rc = getattr(context, "request_context", None) if context is not None else None
            if rc is not None:
                meta = rc.meta or {}
                request = rc.request
                header = request.headers.get("mcp-session-id") if request is not None and hasattr(request, "headers") else None
                session = str(meta.get(SESSION_META) or header or DEFAULT_SESSION)
                reset = bool(meta.get(RESET_META))
            result = self._run(session, reset, name, dict(arguments or {}))
            structured = result.data if result.ok and isinstance(result.data, dict) else None
            return CallToolResult(content=[TextContent(type="text", text=result.content)], structured_content=structured, is_error=not result.ok)

    return ToolServer


def schema_doc(theme) -> str:
    """The theme's world described for a reader: tables, columns, keys, rules (markdown)."""
    spec = theme.spec
    lines = [f"# {spec.title}", "", spec.description, "", f"Category: {spec.category} / {spec.subcategory}", ""]
    if spec.rules:
        lines += ["## Rules", *[f"- {r}" for r in spec.rules], ""]
    lines.append("## Tables")
    for t in spec.tables:
        cols = ", ".join(f"{c.name} ({c.type}{', references ' + str(c.arg) if c.gen == 'fk' else ''})" for c in t.columns)
        lines.append(f"- **{t.name}** (key {t.pk}): {cols}")
    lines += ["", "## Tools", *[f"- `{s['function']['name']}`: {s['function']['description']}" for s in theme.toolset.schemas]]
    return "\n".join(lines) + "\n"


class ThemeWorlds:
    """Per-session worlds of one theme: private database copies, least recently used dropped first."""

    def __init__(self, theme, db_seed: int = 0, max_sessions: int = MAX_SESSIONS):
        from ..world import open_copy

        self.theme, self.db_seed, self.max_sessions = theme, db_seed, max_sessions
        self._open = open_copy
        self._template = theme.world(db_seed).template
        self._worlds: OrderedDict[str, tuple[Any, Any]] = OrderedDict()

    def world(self, session: str, reset: bool = False):
        if reset and session in self._worlds:
            self._worlds.pop(session)[0].close()
        if session not in self._worlds:
            conn = self._open(self._template)
            self._worlds[session] = (conn, self.theme.db(conn))
            while len(self._worlds) > self.max_sessions:
                self._worlds.popitem(last=False)[1][0].close()
        self._worlds.move_to_end(session)
        return self._worlds[session][1]

    def run(self, session: str, reset: bool, name: str, arguments: dict) -> ToolResult:
        return self.theme.toolset.call(self.world(session, reset), ToolCall(name, arguments))

    def close(self) -> None:
        for conn, _ in self._worlds.values():
            conn.close()
        self._worlds.clear()


def theme_server(theme, db_seed: int = 0, name: str | None = None):
    """An MCPServer exposing `theme`'s tools over per-session worlds (see the module doc)."""
    if isinstance(theme, str):
        from ..envs import get_theme

        theme = get_theme(theme)
    worlds = ThemeWorlds(theme, db_seed)
    doc = schema_doc(theme)
    resources = [(f"agentworld://{theme.id}/schema", "schema", f"Tables, keys and rules of the {theme.spec.title} world", lambda: doc)]
    server = _server_class()(name or f"agentworld-{theme.id}", theme.toolset.schemas, worlds.run, resources,
                             instructions=f"{theme.spec.title}: {theme.spec.description}")
    server.worlds = worlds
    return server


def episode_server(env, name: str | None = None):
    """An MCPServer over `env`'s live episode: its tools plus submit, each call played through `env.step()`."""
    env = env.unwrapped

    def run(session: str, reset: bool, tool: str, arguments: dict) -> ToolResult:
        if env._done:
            v = env.verification.to_dict() if env.verification is not None else None
            return ToolResult(False, f"Error: the episode is over (verification: {json.dumps(v, default=str)}). The Gym side resets it.")
        before = len(env.messages)
        env.step(json.dumps({"name": tool, "arguments": arguments}, default=str))
        replies = [m for m in env.messages[before:] if m["role"] == "tool"]
        content = replies[-1]["content"] if replies else ""
        return ToolResult(not content.startswith("Error"), content, None)

    def task_text() -> str:
        return env.task.instruction if env.task is not None else "No episode yet: reset the env."

    resources = [(f"agentworld://{env.theme.id}/task", "task", "The current episode's task, as the user asked it", task_text)]
    if env.backend is None:
        doc = schema_doc(env.theme)
        resources.append((f"agentworld://{env.theme.id}/schema", "schema", "Tables, keys and rules of the world", lambda: doc))
    return _server_class()(name or f"agentworld-episode-{env.theme.id}", env.theme.tool_schemas, run, resources,
                           instructions=env.theme.system_prompt)


def serve(theme_id: str, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000, db_seed: int = 0) -> None:
    """Run a theme's MCP server until interrupted (`agentworld serve`)."""
    server = theme_server(theme_id, db_seed)
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)
