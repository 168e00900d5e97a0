"""Serve a theme, or a live episode, as a real MCP server (the mcp SDK's `MCPServer`).

`theme_server(theme)` exposes the theme's tools, with the JSON Schemas and descriptions the env uses (a tool
error comes back as an MCP tool error, `is_error`, carrying the env's message), plus two session tools.
Every client plays in its own world (a private copy of the theme's database), whatever protocol it speaks:

  * handshake-era clients over HTTP (protocol 2024-11-05 … 2025-11-25, `Client(url, mode="legacy")`): the world
    belongs to the server-issued `Mcp-Session-Id`;
  * stateless clients over HTTP (protocol 2026-07-28, the SDK's default `Client(url)`): there is no session id, so
    the client calls `start_session` once and passes the token it returns as `_meta["agentworld/session"]` on
    every call; a call with neither is refused with an error that says exactly this;
  * stdio and in-process clients: one client per server, one world;
  * a token from `start_session` works on any transport. Ids and tokens are server-issued random secrets
    (`secrets.token_urlsafe(32)`, the SDK's uuid4 session ids), so a client cannot name another's world; a token
    the server did not issue is refused.

`reset_world` (or `_meta["agentworld/reset"] = true` on a call) gives the caller a fresh world. At most
`max_sessions` worlds are kept (`agentworld serve --max-sessions`); past that the least recently used is
dropped, and its client's next call gets "session expired, call reset_world" — never a silent new world.
`agentworld serve --transport http` binds 127.0.0.1 by default and takes `--auth-token` (or
$AGENTWORLD_SERVE_TOKEN): then every HTTP request needs `Authorization: Bearer <token>`.

The theme's schema document is the resource `agentworld://<theme>/schema`.

`episode_server(env)` serves one env's live episode instead: the theme's tools plus submit, every
call played through `env.step()`, so an external MCP agent plays and the Gym side grades.
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import sys
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ..actions import ToolCall
from ..errors import require
from ..tools import ToolResult

log = logging.getLogger(__name__)

SESSION_META = "agentworld/session"
RESET_META = "agentworld/reset"
MAX_SESSIONS = 256
HTTP_PATH = "/mcp"  # where `agentworld serve --transport http` answers (the MCP SDK's default)
START_SESSION, RESET_WORLD = "start_session", "reset_world"
LOCAL = "local"  # stdio or in-process: one client per server
STATELESS = "stateless"  # HTTP without a session id or token: no way to tell clients apart

# run(client key, reset, tool name, arguments) -> ToolResult; the key is LOCAL, STATELESS, "http:<id>" or "token:<t>"
RunFn = Callable[[str, bool, str, dict], ToolResult]

SESSION_TOOLS = [
    {"type": "function", "function": {"name": START_SESSION, "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
     "description": "Start a private world and return its session token. Pass the token as _meta['agentworld/session'] on every "
                    "later call. Needed by clients whose protocol sends no session id (stateless HTTP); optional for others."}},
    {"type": "function", "function": {"name": RESET_WORLD, "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
     "description": "Throw away your world and start a fresh copy (also the way back after 'session expired')."}},
]


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
            key, reset = client_key(context)
            result = self._run(key, reset, name, dict(arguments or {}))
            structured = result.data if result.ok and isinstance(result.data, dict) else None
            return CallToolResult(content=[TextContent(type="text", text=result.content)], structured_content=structured, is_error=not result.ok)

    return ToolServer


def client_key(context) -> tuple[str, bool]:
    """Which client a call comes from (see the module doc), and whether it asks for a fresh world."""
    rc = getattr(context, "request_context", None) if context is not None else None
    if rc is None:
        return LOCAL, False
    meta = rc.meta or {}
    reset = bool(meta.get(RESET_META))
    if meta.get(SESSION_META) is not None:
        return f"token:{meta[SESSION_META]}", reset
    request = rc.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return LOCAL, reset
    session_id = headers.get("mcp-session-id")
    return (f"http:{session_id}", reset) if session_id else (STATELESS, reset)


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


class SessionExpired(Exception):
    pass


class ThemeWorlds:
    """Per-client worlds of one theme: private database copies, at most `max_sessions` of them (least recently
    used dropped first, and remembered, so that client hears "session expired" instead of getting a new world)."""

    def __init__(self, theme, db_seed: int = 0, max_sessions: int = MAX_SESSIONS):
        from ..errors import ConfigError
        from ..world import open_copy

        if max_sessions < 1:
            raise ConfigError(f"Expected max_sessions >= 1, got {max_sessions!r}.")
        self.theme, self.db_seed, self.max_sessions = theme, db_seed, max_sessions
        self._open = open_copy
        self._template = theme.world(db_seed).template
        self._worlds: OrderedDict[str, tuple[Any, Any]] = OrderedDict()
        self._expired: OrderedDict[str, None] = OrderedDict()  # bounded memory of dropped sessions

    def __len__(self) -> int:
        return len(self._worlds)

    def world(self, key: str, reset: bool = False):
        if reset:
            self._drop(key)
            self._expired.pop(key, None)
        elif key in self._expired:
            raise SessionExpired(key)
        if key not in self._worlds:
            conn = self._open(self._template)
            self._worlds[key] = (conn, self.theme.db(conn))
            while len(self._worlds) > self.max_sessions:
                old, (old_conn, _) = self._worlds.popitem(last=False)
                old_conn.close()
                self._expired[old] = None
                while len(self._expired) > 16 * self.max_sessions:
                    self._expired.popitem(last=False)
        self._worlds.move_to_end(key)
        return self._worlds[key][1]

    def _drop(self, key: str) -> None:
        if key in self._worlds:
            self._worlds.pop(key)[0].close()

    def start_session(self) -> str:
        token = secrets.token_urlsafe(32)
        self.world(f"token:{token}")
        return token

    def run(self, key: str, reset: bool, name: str, arguments: dict) -> ToolResult:
        if name == START_SESSION:
            token = self.start_session()
            return ToolResult(True, json.dumps({"session": token, "meta_key": SESSION_META}), {"session": token, "meta_key": SESSION_META})
        if key == STATELESS:
            return ToolResult(False, "Error: this server keeps one private world per client, and your client's protocol (stateless "
                                     f"HTTP) sends no session id. Call {START_SESSION} once and pass the token it returns as "
                                     f"_meta[{SESSION_META!r}] on every call.")
        if key.startswith("token:") and key not in self._worlds and key not in self._expired:
            return ToolResult(False, f"Error: unknown session token; this server did not issue it. Call {START_SESSION} to get one.")
        if name == RESET_WORLD:
            self.world(key, reset=True)
            return ToolResult(True, json.dumps({"reset": True}), {"reset": True})
        try:
            db = self.world(key, reset)
        except SessionExpired:
            return ToolResult(False, f"Error: session expired: this server keeps at most {self.max_sessions} worlds and dropped yours "
                                     f"(the least recently used). Call {RESET_WORLD} to start a fresh world.")
        return self.theme.toolset.call(db, ToolCall(name, arguments))

    def close(self) -> None:
        for conn, _ in self._worlds.values():
            conn.close()
        self._worlds.clear()


def theme_server(theme, db_seed: int = 0, name: str | None = None, max_sessions: int = MAX_SESSIONS):
    """An MCPServer exposing `theme`'s tools (plus start_session and reset_world) over per-client worlds (see the module doc)."""
    if isinstance(theme, str):
        from ..envs import get_theme

        theme = get_theme(theme)
    clash = {START_SESSION, RESET_WORLD} & set(theme.toolset.tools)
    if clash:
        from ..errors import ConfigError

        raise ConfigError(f"Expected no theme tool named {sorted(clash)} (the server's session tools), got one in {theme.id!r}.")
    worlds = ThemeWorlds(theme, db_seed, max_sessions)
    doc = schema_doc(theme)
    resources = [(f"agentworld://{theme.id}/schema", "schema", f"Tables, keys and rules of the {theme.spec.title} world", lambda: doc)]
    server = _server_class()(name or f"agentworld-{theme.id}", [*theme.toolset.schemas, *SESSION_TOOLS], worlds.run, resources,
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


def serve(theme_id: str, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000, db_seed: int = 0,
          max_sessions: int = MAX_SESSIONS, auth_token: str | None = None) -> None:
    """Run a theme's MCP server until interrupted (`agentworld serve`). Where it listens and how a client
    connects go to stderr (stdout is the stdio transport's channel); HTTP says so once the port is bound."""
    server = theme_server(theme_id, db_seed, max_sessions=max_sessions)
    what = f"MCP server of theme {server.worlds.theme.id!r} ({len(server.worlds.theme.toolset.tools)} tools + {len(SESSION_TOOLS)} session tools)"
    if transport == "stdio":
        announce(f"{what} on stdio: an MCP client starts this command and speaks JSON-RPC on its stdin/stdout, e.g. "
                 f"mcp.client.stdio.StdioServerParameters(command='agentworld', args=['serve', {server.worlds.theme.id!r}]). "
                 "Typing here does nothing; Ctrl-D or Ctrl-C stops it.")
        server.run("stdio")
        return
    import socket

    import uvicorn

    if auth_token is None and host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("serving on %s without --auth-token: anyone who can reach this address can use the server", host)
    app = server.streamable_http_app(host=host, streamable_http_path=HTTP_PATH)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))  # listening before announcing, so the URL printed answers at once (and --port 0 works)
    sock.listen(128)
    url = f"http://{f'[{host}]' if ':' in host else host}:{sock.getsockname()[1]}{HTTP_PATH}"
    announce(f"{what} at {url} (streamable HTTP{', bearer token required' if auth_token else ''}); connect with "
             f"mcp.client.streamable_http.streamable_http_client({url!r}). Ctrl-C stops it.")
    config = uvicorn.Config(BearerAuth(app, auth_token) if auth_token else app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


def announce(line: str) -> None:
    print(f"agentworld serve: {line}", file=sys.stderr, flush=True)


class BearerAuth:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>` (else 401)."""

    def __init__(self, app, token: str):
        self.app, self._expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(got, self._expected):
                body = json.dumps({"error": "unauthorized: send the header 'Authorization: Bearer <token>' "
                                            "with the token the server was started with (--auth-token)"}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
