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

`reset_world` (or `_meta["agentworld/reset"] = true` on a call) gives the caller a fresh world, and `end_session`
gives its world back. Sessions are created only by the server: a handshake session id counts only on the
handshake path, where the SDK has checked it (the 2026-07-28 path ignores the header), and a token is signed with
a secret the server draws at start, so the server recognises every token it ever issued without storing it.
An unknown, ended or expired session never gets a silent new world; every path answers with an error that names
the fix. Worlds end explicitly: `end_session`, a handshake client's DELETE, `idle_timeout` seconds without a call
(default 900), or eviction of the least recently used one past `max_sessions` worlds (default 256). One client (an
IP address on HTTP) may hold at most `sessions_per_client` worlds (default 16), so no client can push everyone
else's worlds out. `agentworld serve --transport http` binds 127.0.0.1 by default and takes `--auth-token` (or
$AGENTWORLD_SERVE_TOKEN): then every HTTP request needs `Authorization: Bearer <token>`; a request whose body
does not arrive within `--read-timeout` seconds is answered 408 and closed, idle keep-alive connections close
after `--keep-alive` seconds, and at most `--max-connections` are served at once (503 beyond). docs/robustness.md
has the whole lifecycle.

The theme's schema document is the resource `agentworld://<theme>/schema`.

`episode_server(env)` serves one env's live episode instead: the theme's tools plus submit, every
call played through `env.step()`, so an external MCP agent plays and the Gym side grades.
"""

from __future__ import annotations

import base64
import contextvars
import hashlib
import hmac
import json
import logging
import secrets
import sys
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from functools import lru_cache
from itertools import takewhile
from typing import Any

from ..actions import ToolCall
from ..errors import require
from ..tools import ToolResult

log = logging.getLogger(__name__)

SESSION_META = "agentworld/session"
RESET_META = "agentworld/reset"
MAX_SESSIONS = 256
SESSIONS_PER_CLIENT = 16
IDLE_TIMEOUT_S = 900.0
READ_TIMEOUT_S = 30.0
KEEP_ALIVE_S = 5.0
MAX_CONNECTIONS = 256
HTTP_PATH = "/mcp"  # where `agentworld serve --transport http` answers (the MCP SDK's default)
START_SESSION, RESET_WORLD, END_SESSION = "start_session", "reset_world", "end_session"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # protocols whose session ids the SDK checks
CLIENT = contextvars.ContextVar("agentworld_mcp_client", default="local")  # who is calling: an IP address on HTTP
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
    {"type": "function", "function": {"name": END_SESSION, "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
     "description": "Give your world back to the server (it counts against your client's session limit until then)."}},
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
            CLIENT.set(client_address(context))
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
    if session_id and headers.get("mcp-protocol-version", HANDSHAKE_VERSIONS[0]) in HANDSHAKE_VERSIONS:
        return f"http:{session_id}", reset  # the SDK admitted only ids it issued and still holds
    return STATELESS, reset  # 2026-07-28: no session ids on this path; a header there names nothing the server made


def client_address(context) -> str:
    """The caller's IP address on HTTP ("local" for stdio and in-process clients): what per-client limits count."""
    rc = getattr(context, "request_context", None) if context is not None else None
    client = getattr(getattr(rc, "request", None), "client", None)
    return getattr(client, "host", None) or "local"


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
    """Per-client worlds of one theme: private database copies, created only by the server (see the module doc).

    Keys: LOCAL (stdio / in-process), "http:<id>" (a handshake session the SDK admitted) and "token:<t>" (from
    start_session; `t` carries an HMAC of the server's secret, so an issued token is recognised for the server's
    whole life at no memory cost). Ended handshake sessions leave a tombstone until the SDK forgets the id."""

    def __init__(self, theme, db_seed: int = 0, max_sessions: int = MAX_SESSIONS, sessions_per_client: int = SESSIONS_PER_CLIENT,
                 idle_timeout: float | None = IDLE_TIMEOUT_S, clock: Callable[[], float] = time.monotonic):
        from ..checks import Number
        from ..world import open_copy

        Number(low=1).check("max_sessions", max_sessions)
        Number(low=1).check("sessions_per_client", sessions_per_client)
        Number(integer=False, low=0, open_low=True, optional=True).check("idle_timeout", idle_timeout)
        self.theme, self.db_seed, self.max_sessions = theme, db_seed, max_sessions
        self.sessions_per_client, self.idle_timeout, self._clock = sessions_per_client, idle_timeout, clock
        self._open = open_copy
        self._template = theme.world(db_seed).template
        self._secret = secrets.token_bytes(32)
        self._worlds: OrderedDict[str, list] = OrderedDict()  # key -> [conn, db, client, last used]; least recent first
        self._clients: Counter[str] = Counter()  # client -> worlds it holds
        self._ended: dict[str, str] = {}  # "http:<id>" -> why it ended (until the SDK forgets the id)

    def __len__(self) -> int:
        return len(self._worlds)

    # -------------------------------------------------------------- tokens
    def _sign(self, nonce: str) -> str:
        mac = hmac.new(self._secret, nonce.encode(), hashlib.sha256).digest()[:18]
        return base64.urlsafe_b64encode(mac).decode()

    def issued(self, token: str) -> bool:
        nonce, _, mac = token.partition(".")
        return bool(nonce) and hmac.compare_digest(mac, self._sign(nonce))

    # -------------------------------------------------------------- lifecycle
    def _create(self, key: str, client: str) -> str | None:
        """A fresh world for `key`; or why not (the client holds its limit)."""
        self._end(key, None)
        if key != LOCAL and self._clients[client] >= self.sessions_per_client:
            wait = f", or wait {self.idle_timeout:g} s for an idle one to end" if self.idle_timeout is not None else ""
            return (f"Error: your client already holds {self.sessions_per_client} live sessions, the most one client may hold. "
                    f"Reuse one or give one back with {END_SESSION}{wait}.")
        while len(self._worlds) >= self.max_sessions:
            self._end(next(iter(self._worlds)), f"dropped as the least recently used of the server's {self.max_sessions} worlds")
        conn = self._open(self._template)
        self._worlds[key] = [conn, self.theme.db(conn), client, self._clock()]
        self._clients[client] += 1
        return None

    def _end(self, key: str, why: str | None) -> None:
        entry = self._worlds.pop(key, None)
        if entry is not None:
            entry[0].close()
            self._clients[entry[2]] -= 1
            if self._clients[entry[2]] <= 0:
                del self._clients[entry[2]]
        if why is not None and (key.startswith("http:") or key == LOCAL):  # tokens need no tombstone: they are signed
            self._ended[key] = why
        elif why is None:
            self._ended.pop(key, None)

    def _sweep(self) -> None:
        if self.idle_timeout is None:
            return
        limit = self._clock() - self.idle_timeout
        # least recently used first: only the stale head is read (this runs on every call, so never all N worlds)
        stale = [key for key, _ in takewhile(lambda item: item[1][3] <= limit, self._worlds.items())]
        for key in stale:
            if key != LOCAL:  # stdio / in-process: the one client's world is not taken away
                self._end(key, f"ended after {self.idle_timeout:g} s without a call")

    def forget(self, session_id: str) -> None:
        """A handshake session the SDK has closed (DELETE or its idle timeout): its world goes, and so does the
        tombstone, since the SDK itself now answers that id with 'unknown or expired session'."""
        self._end(f"http:{session_id}", None)

    def start_session(self, client: str = "local") -> tuple[str | None, str | None]:
        nonce = secrets.token_urlsafe(24)
        token = f"{nonce}.{self._sign(nonce)}"
        refused = self._create(f"token:{token}", client)
        return (None, refused) if refused else (token, None)

    # -------------------------------------------------------------- calls
    def run(self, key: str, reset: bool, name: str, arguments: dict) -> ToolResult:
        client = CLIENT.get()
        self._sweep()
        if name == START_SESSION:
            token, refused = self.start_session(client)
            if refused:
                return ToolResult(False, refused)
            return ToolResult(True, json.dumps({"session": token, "meta_key": SESSION_META}), {"session": token, "meta_key": SESSION_META})
        if key == STATELESS:
            return ToolResult(False, "Error: this server keeps one private world per client, and this request names none: the "
                                     "2026-07-28 protocol sends no session id (an Mcp-Session-Id header is ignored on it). Call "
                                     f"{START_SESSION} once and pass the token it returns as _meta[{SESSION_META!r}] on every call.")
        if key.startswith("token:") and key not in self._worlds and not self.issued(key[6:]):  # a live key was issued
            return ToolResult(False, f"Error: unknown session token; this server did not issue it. Call {START_SESSION} to get one.")
        if name == END_SESSION:
            self._end(key, "ended by its client")
            return ToolResult(True, json.dumps({"ended": True}), {"ended": True})
        if name == RESET_WORLD or reset:
            refused = self._create(key, client)
            if refused:
                return ToolResult(False, refused)
            if name == RESET_WORLD:
                return ToolResult(True, json.dumps({"reset": True}), {"reset": True})
        entry = self._worlds.get(key)
        if entry is None:
            why = self._ended.get(key)
            if why is not None or key.startswith("token:"):
                return ToolResult(False, f"Error: session expired: your world is gone ({why or 'ended by end_session, idle too long, or dropped at the server limit'}). "
                                         f"Call {RESET_WORLD} to start a fresh world, or {START_SESSION} for a new session.")
            refused = self._create(key, client)  # the first call of a session the server made (LOCAL, a handshake id)
            if refused:
                return ToolResult(False, refused)
            entry = self._worlds[key]
        entry[3] = self._clock()
        self._worlds.move_to_end(key)
        return self.theme.toolset.call(entry[1], ToolCall(name, arguments))

    def close(self) -> None:
        for key in list(self._worlds):
            self._end(key, None)


def theme_server(theme, db_seed: int = 0, name: str | None = None, max_sessions: int = MAX_SESSIONS,
                 sessions_per_client: int = SESSIONS_PER_CLIENT, idle_timeout: float | None = IDLE_TIMEOUT_S):
    """An MCPServer exposing `theme`'s tools (plus start_session, reset_world, end_session) over per-client worlds (see the module doc)."""
    if isinstance(theme, str):
        from ..envs import get_theme

        theme = get_theme(theme)
    clash = {START_SESSION, RESET_WORLD, END_SESSION} & set(theme.toolset.tools)
    if clash:
        from ..errors import ConfigError

        raise ConfigError(f"Expected no theme tool named {sorted(clash)} (the server's session tools), got one in {theme.id!r}.")
    worlds = ThemeWorlds(theme, db_seed, max_sessions, sessions_per_client, idle_timeout)
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
          max_sessions: int = MAX_SESSIONS, auth_token: str | None = None, sessions_per_client: int = SESSIONS_PER_CLIENT,
          idle_timeout: float = IDLE_TIMEOUT_S, read_timeout: float = READ_TIMEOUT_S, keep_alive: float = KEEP_ALIVE_S,
          max_connections: int = MAX_CONNECTIONS) -> None:
    """Run a theme's MCP server until interrupted (`agentworld serve`). Where it listens and how a client
    connects go to stderr (stdout is the stdio transport's channel); HTTP says so once the port is bound."""
    server = theme_server(theme_id, db_seed, max_sessions=max_sessions, sessions_per_client=sessions_per_client, idle_timeout=idle_timeout)
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
    app = http_app(server, host, auth_token, idle_timeout, read_timeout)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))  # listening before announcing, so the URL printed answers at once (and --port 0 works)
    sock.listen(128)
    url = f"http://{f'[{host}]' if ':' in host else host}:{sock.getsockname()[1]}{HTTP_PATH}"
    announce(f"{what} at {url} (streamable HTTP{', bearer token required' if auth_token else ''}); connect with "
             f"mcp.client.streamable_http.streamable_http_client({url!r}). Ctrl-C stops it.")
    config = uvicorn.Config(app, log_level="warning", timeout_keep_alive=keep_alive, limit_concurrency=max_connections)
    from ..serving import settle

    settle()
    uvicorn.Server(config).run(sockets=[sock])


def announce(line: str) -> None:
    print(f"agentworld serve: {line}", file=sys.stderr, flush=True)


def http_app(server, host: str = "127.0.0.1", auth_token: str | None = None, idle_timeout: float | None = IDLE_TIMEOUT_S,
             read_timeout: float | None = READ_TIMEOUT_S, lean: bool = True):
    """The server's streamable-HTTP ASGI app: handshake sessions end after `idle_timeout` (the SDK's timer), and
    their worlds with them; slow request bodies time out; with `auth_token`, bearer auth in front; with `lean`
    (a theme server), token tool calls answered on the lean path (`fast_path`)."""
    app = server.streamable_http_app(host=host, streamable_http_path=HTTP_PATH, session_idle_timeout=idle_timeout)
    if lean and hasattr(server, "worlds"):
        app = fast_path(app, server)
    manager = server.session_manager
    discard = getattr(manager, "_discard_session", None)
    if discard is not None and hasattr(server, "worlds"):  # the SDK closed a session (DELETE, idle): its world goes too
        async def discard_and_forget(session_id, transport):
            server.worlds.forget(session_id)
            await discard(session_id, transport)

        manager._discard_session = discard_and_forget
    if read_timeout is not None:
        app = SlowRequestTimeout(app, read_timeout)
    return BearerAuth(app, auth_token) if auth_token else app


def fast_path(app, server):
    """`app` with stateless token `tools/call` requests answered by `serving.McpFastPath` (the reply the SDK
    would give, without its per-request validation layers); a request with an Origin header (a browser's,
    which the SDK checks against DNS rebinding) and every other request go to the SDK's app."""
    from ..serving import McpFastPath

    worlds = server.worlds

    def run(client: str, key: str, reset: bool, name: str, arguments: dict) -> ToolResult:
        CLIENT.set(client)
        return worlds.run(key, reset, name, arguments)

    lowlevel = getattr(server, "_lowlevel_server", None)
    info = lowlevel.server_info_stamp if lowlevel is not None else {"name": server.name, "version": ""}
    return McpFastPath(app, HTTP_PATH, run, set(server._tools), info, SESSION_META, RESET_META)


class SlowRequestTimeout:
    """ASGI middleware: the request body is read here first, and one that does not arrive within `seconds` is
    answered 408 and dropped (one over MAX_BODY bytes 413), so a slow or stalled client cannot hold a worker; the
    app then gets the body whole. (Slow headers are the HTTP server's to bound: uvicorn's keep-alive timeout
    closes idle connections.)"""

    MAX_BODY = 4 * 1024 * 1024

    def __init__(self, app, seconds: float):
        self.app, self.seconds = app, seconds

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from ..serving import BodyTimeout, BodyTooLarge, read_body, replaying

        try:
            body = await read_body(receive, self.MAX_BODY, self.seconds)
        except BodyTimeout:
            await _reply(send, 408, f"request timeout: the request body did not arrive within {self.seconds:g} s")
            return
        except BodyTooLarge as e:
            await _reply(send, 413, str(e))
            return
        if body is None:
            return  # the client went away
        await self.app(scope, replaying(body, receive), send)


async def _reply(send, status: int, error: str) -> None:
    body = json.dumps({"error": error}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json"), (b"connection", b"close"),
                                                                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


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
