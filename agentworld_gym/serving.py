"""The one env server behind remote rollouts: the lean request path that the MCP HTTP server
(`agentworld serve --transport http`) and the OpenEnv-compatible server (`agentworld serve-openenv`) share.

A tool call is a sub-millisecond SQLite step, so what a server spends per request is the transport's: in the
MCP SDK's path, about six pydantic validations, anyio task groups and Starlette middleware per call; in
openenv-core's `/ws`, pydantic messages and observations and a hop to a per-session thread. Here the hot
requests are answered straight from the ASGI scope, on the event loop, with the standard json module (orjson
when installed) and no thread hop:

  * `McpFastPath`: a stateless (2026-07-28) `tools/call` POST that carries a session token is run on the
    server's worlds and answered with the reply the SDK would give; anything else (handshakes, listing,
    resources, malformed or unusual requests) goes on to the SDK app unchanged, so its errors stay its own;
  * `openenv_ws`: OpenEnv's WebSocket protocol (`reset`, `step`, `state`, `close` messages; `observation`,
    `state` and `error` replies) over sessions held in a `SessionPool`.

`SessionPool` bounds the live sessions and ends them explicitly: a full pool refuses a newcomer with one typed
line (`CAPACITY_REACHED`) and keeps serving the others; a session that sends nothing for `idle_timeout`
seconds is told so (`SESSION_EXPIRED`) and closed; a malformed frame is an error reply to that client only.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

try:  # optional: about 3x faster encoding and decoding of the same JSON
    import orjson

    def dumps(obj: Any) -> bytes:
        return orjson.dumps(obj, default=str)

    loads = orjson.loads
except ImportError:  # pragma: no cover - the standard library is the default
    _encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode

    def dumps(obj: Any) -> bytes:
        return _encode(obj).encode()

    loads = json.loads


def settle() -> None:
    """Call once the server is built, before it serves: everything made at start (the theme registry, tool schemas,
    imported modules: about 110,000 objects) moves out of the cyclic collector's reach. A full collection over them
    costs about 75 ms of CPU, a pause every request in flight waits out (hundreds of ms on a busy machine)."""
    gc.collect()
    gc.freeze()


# ------------------------------------------------------------------------------------------------ the pool
class PoolFullError(Exception):
    """The pool holds `capacity` live sessions: the newcomer is refused, nobody is evicted."""


class SessionPool:
    """At most `capacity` live sessions, each a small object (the world or env it plays in, and when it last spoke).

    Sessions end explicitly: `end(key)`, or `expired()` naming those idle for `idle_timeout` seconds (only the
    stale head of the least-recently-used order is read, so a sweep costs nothing while everyone is active)."""

    def __init__(self, capacity: int, idle_timeout: float | None = 900.0, clock: Callable[[], float] = time.monotonic):
        from .checks import Number

        Number(low=1).check("capacity", capacity)
        Number(integer=False, low=0, open_low=True, optional=True).check("idle_timeout", idle_timeout)
        self.capacity, self.idle_timeout, self._clock = capacity, idle_timeout, clock
        self._live: OrderedDict[Any, float] = OrderedDict()  # key -> last activity; least recent first

    def __len__(self) -> int:
        return len(self._live)

    def admit(self, key: Any) -> None:
        if len(self._live) >= self.capacity:
            raise PoolFullError(f"the server holds {self.capacity} live sessions, its limit; retry later or start it with a larger "
                                f"--max-sessions")
        self._live[key] = self._clock()

    def touch(self, key: Any) -> None:
        self._live[key] = self._clock()
        self._live.move_to_end(key)

    def end(self, key: Any) -> None:
        self._live.pop(key, None)

    def expired(self) -> list:
        if self.idle_timeout is None:
            return []
        limit = self._clock() - self.idle_timeout
        out = []
        for key, last in self._live.items():
            if last > limit:
                break
            out.append(key)
        return out

    def deadline(self, key: Any) -> float | None:
        """Seconds until `key` expires if it stays silent (None: never)."""
        if self.idle_timeout is None:
            return None
        return max(0.0, self._live.get(key, self._clock()) + self.idle_timeout - self._clock())


# ------------------------------------------------------------------------------------------------ ASGI plumbing
class BodyTimeout(Exception):
    """The request body did not arrive within the time allowed."""


class BodyTooLarge(Exception):
    """The request body is over the size allowed."""


async def read_body(receive, limit: int, timeout: float | None = None) -> bytes | None:
    """The whole request body; None when the client left; `BodyTooLarge` over `limit` bytes, `BodyTimeout` when it
    took over `timeout` seconds. (A timer handle that cancels this task: a fraction of an anyio cancel scope's cost,
    paid on every request.)"""
    timer, fired = None, []
    if timeout is not None:
        task = asyncio.current_task()

        def expire() -> None:
            fired.append(True)
            task.cancel()

        timer = asyncio.get_running_loop().call_later(timeout, expire)
    chunks, size = [], 0
    try:
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                raise BodyTooLarge(f"request body over {limit:,} bytes")
            if not message.get("more_body", False):
                return b"".join(chunks)
    except asyncio.CancelledError:
        if not fired:
            raise
        if hasattr(task, "uncancel"):  # Python 3.11+: this cancellation is handled, not pending
            task.uncancel()
        raise BodyTimeout from None
    finally:
        if timer is not None:
            timer.cancel()


async def send_json(send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def replaying(body: bytes, receive):
    """A `receive` that hands the already-read body to the next app first."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay():
        return pending.pop() if pending else await receive()

    return replay


# ------------------------------------------------------------------------------------------------ MCP
MODERN = "2026-07-28"  # the stateless protocol: no handshake, the session token rides in _meta
ENVELOPE = ("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities")


class McpFastPath:
    """ASGI: answers stateless `tools/call` requests that name a session token straight from `worlds.run`
    (what the SDK's path would call, in the reply shape it would send); every other request goes to `app`.

    `run(client, key, reset, name, arguments) -> ToolResult`, `tools` the names it may answer, `server_info`
    the SDK's `_meta` serverInfo object, `session_meta` / `reset_meta` the `_meta` keys of a token and a reset."""

    MAX_BODY = 4 * 1024 * 1024

    def __init__(self, app, path: str, run: Callable, tools: set[str], server_info: dict, session_meta: str, reset_meta: str):
        self.app, self.path, self.run, self.tools = app, path, run, tools
        self.meta = {"io.modelcontextprotocol/serverInfo": server_info}
        self.session_meta, self.reset_meta = session_meta, reset_meta

    def _eligible(self, scope) -> bool:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            return False
        h = dict(scope["headers"])
        return (h.get(b"mcp-protocol-version") == MODERN.encode() and h.get(b"mcp-method") == b"tools/call"
                and b"application/json" in h.get(b"accept", b"") and b"application/json" in h.get(b"content-type", b"")
                and b"mcp-session-id" not in h and b"mcp-name" in h
                and b"origin" not in h)  # a browser's request: the SDK checks its Origin (DNS rebinding)

    def _parse(self, scope, body: bytes):
        """(id, name, arguments, token, reset) of a well-formed request this path answers; None for the SDK."""
        try:
            req = loads(body)
        except ValueError:
            return None
        if not isinstance(req, dict) or req.get("jsonrpc") != "2.0" or req.get("method") != "tools/call" or set(req) - {"jsonrpc", "id", "method", "params"}:
            return None
        rid, params = req.get("id"), req.get("params")
        if type(rid) not in (int, str) or not isinstance(params, dict):
            return None
        name, arguments, meta = params.get("name"), params.get("arguments", {}), params.get("_meta")
        if (not isinstance(name, str) or name not in self.tools or not isinstance(arguments, dict) or not isinstance(meta, dict)
                or set(params) - {"name", "arguments", "_meta"} or dict(scope["headers"]).get(b"mcp-name") != name.encode()
                or meta.get(ENVELOPE[0]) != MODERN or ENVELOPE[1] not in meta or not isinstance(meta.get(self.session_meta), str)):
            return None
        return rid, name, arguments, meta[self.session_meta], bool(meta.get(self.reset_meta))

    async def __call__(self, scope, receive, send) -> None:
        if not self._eligible(scope):
            await self.app(scope, receive, send)
            return
        try:
            body = await read_body(receive, self.MAX_BODY)
        except BodyTooLarge as e:
            await send_json(send, 413, dumps({"error": str(e)}))
            return
        if body is None:  # the client left
            return
        parsed = self._parse(scope, body)
        if parsed is None:
            await self.app(scope, replaying(body, receive), send)
            return
        rid, name, arguments, token, reset = parsed
        client = (scope.get("client") or ("local",))[0] or "local"
        result = self.run(client, f"token:{token}", reset, name, arguments)
        reply: dict[str, Any] = {"content": [{"text": result.content, "type": "text"}], "isError": not result.ok, "resultType": "complete"}
        if result.ok and isinstance(result.data, dict):
            reply["structuredContent"] = result.data
        reply["_meta"] = self.meta
        await send_json(send, 200, dumps({"jsonrpc": "2.0", "id": rid, "result": reply}))


# ------------------------------------------------------------------------------------------------ OpenEnv
CAPACITY_REACHED, SESSION_EXPIRED = "CAPACITY_REACHED", "SESSION_EXPIRED"


class FrameError(ValueError):
    """A client frame whose data does not fit the message (answered VALIDATION_ERROR, as openenv-core does)."""


def ws_frame(kind: bytes, payload: dict | bytes) -> bytes:
    """A reply frame; `payload` a dict, or bytes the env already encoded as JSON (constant parts cached)."""
    return b'{"type":"%s","data":%s}' % (kind, payload if isinstance(payload, bytes) else dumps(payload))


def ws_error(message: str, code: str, **extra) -> bytes:
    return dumps({"type": "error", "data": {"message": message, "code": code, **extra}})


def openenv_ws(pool: SessionPool, factory: Callable[[], Any], max_frame: int = 1 << 20):
    """An ASGI WebSocket handler speaking OpenEnv's `/ws` protocol over sessions from `pool`.

    `factory()` builds a session's env: an object with `reset_payload(data)`, `step_payload(data)` (payloads as
    OpenEnv's `serialize_observation` writes them, as a dict or as its JSON bytes, raising `FrameError` for
    malformed data), `state_payload()` and `close()`. Every message is handled on the event loop: an env step is a
    sub-millisecond SQLite call, cheaper than a hop to a thread. A silent session is ended by one timer that
    re-arms itself while the session keeps talking (a per-message `wait_for` made a task per message)."""

    async def handler(scope, receive, send) -> None:
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        key = object()
        try:
            pool.admit(key)
        except PoolFullError as e:  # one typed line, then close: the others keep being served
            await send({"type": "websocket.send", "text": ws_error(str(e), CAPACITY_REACHED, active_sessions=len(pool),
                                                                   max_sessions=pool.capacity).decode()})
            await send({"type": "websocket.close", "code": 1013})
            return
        env = None
        try:
            try:
                env = factory()
            except Exception as e:  # noqa: BLE001 - the env could not be built: this client is told why, the server goes on
                await send({"type": "websocket.send", "text": ws_error(f"{type(e).__name__}: {e}", "FACTORY_ERROR").decode()})
                await send({"type": "websocket.close", "code": 1011})
                return
            timer = Expiry(pool, key)
            try:
                while True:
                    message = await receive()
                    if message["type"] == "websocket.disconnect":
                        return
                    pool.touch(key)
                    reply = answer(env, message, max_frame)
                    if reply is None:  # "close"
                        await send({"type": "websocket.close", "code": 1000})
                        return
                    await send({"type": "websocket.send", "text": reply.decode()})
            except asyncio.CancelledError:
                if not timer.fired:
                    raise
                timer.handled()
                await send({"type": "websocket.send", "text": ws_error(
                    f"session expired: nothing arrived for {pool.idle_timeout:g} s; open a new session", SESSION_EXPIRED).decode()})
                await send({"type": "websocket.close", "code": 1000})
            finally:
                timer.cancel()
        finally:
            pool.end(key)
            if env is not None:
                env.close()

    return handler


class Expiry:
    """Cancels the current task once `key` has been silent for the pool's idle timeout. It wakes at the deadline
    the pool gives and sleeps again if the session spoke meanwhile: nothing to do per message."""

    def __init__(self, pool: SessionPool, key: Any):
        self.pool, self.key, self.fired, self.handle = pool, key, False, None
        self.task, self.loop = asyncio.current_task(), asyncio.get_running_loop()
        self._arm()

    def _arm(self) -> None:
        left = self.pool.deadline(self.key)
        if left is None:
            return
        if left > 0:
            self.handle = self.loop.call_later(left, self._arm)
        else:
            self.fired = True
            self.task.cancel()

    def handled(self) -> None:
        if hasattr(self.task, "uncancel"):  # Python 3.11+: this cancellation is handled, not pending
            self.task.uncancel()

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()


def answer(env, message: dict, max_frame: int) -> bytes | None:
    """The reply to one client frame (None: the client asked to close). Errors are replies, never raised."""
    raw = message.get("text")
    if raw is None:
        raw = message.get("bytes") or b""
    if len(raw) > max_frame:
        return ws_error(f"message of {len(raw):,} bytes, over the {max_frame:,} byte limit", "INVALID_JSON")
    try:
        msg = loads(raw)
    except ValueError as e:
        return ws_error(f"Invalid JSON: {e}", "INVALID_JSON")
    if not isinstance(msg, dict):
        return ws_error(f"Expected a JSON object with a 'type', got {type(msg).__name__}", "VALIDATION_ERROR")
    kind, data = msg.get("type"), msg.get("data", {})
    if not isinstance(data, dict):
        return ws_error(f"Expected 'data' to be an object, got {type(data).__name__}", "VALIDATION_ERROR")
    try:
        if kind == "reset":
            return ws_frame(b"observation", env.reset_payload(data))
        if kind == "step":
            if "data" not in msg:
                return ws_error("Expected 'data' (the action) in a step message", "VALIDATION_ERROR")
            return ws_frame(b"observation", env.step_payload(data))
        if kind == "state":
            return ws_frame(b"state", env.state_payload())
        if kind == "close":
            return None
    except FrameError as e:
        return ws_error(str(e), "VALIDATION_ERROR")
    except Exception as e:  # noqa: BLE001 - the env's failure is this client's error reply, as in openenv-core
        return ws_error(str(e), "EXECUTION_ERROR")
    return ws_error(f"Unknown message type: {kind}", "UNKNOWN_TYPE")
