"""MCP sessions only the server creates (issue 38 item 1): the real mcp 2.x client over HTTP on loopback, against
the real server app (`http_app`, served by uvicorn in a thread so the test can look at its worlds)."""

from __future__ import annotations

import json
import socket
import threading
import time

import anyio
import pytest

pytest.importorskip("mcp")
import httpx2  # noqa: E402
import uvicorn  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

import agentworld_gym  # noqa: E402,F401
from agentworld_gym.errors import ConfigError  # noqa: E402
from agentworld_gym.mcp import server as server_mod  # noqa: E402
from agentworld_gym.mcp.server import ThemeWorlds, http_app, theme_server  # noqa: E402

WRITE = ("transfer_funds", {"from_account_id": "AC-1001", "to_account_id": "AC-1002", "amount": 1.0})
READ = ("get_account", {"account_id": "AC-1001"})


class Served:
    def __init__(self, **kwargs):
        read_timeout = kwargs.pop("read_timeout", 30.0)
        self.server = theme_server("finance", **kwargs)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        config = uvicorn.Config(http_app(self.server, idle_timeout=kwargs.get("idle_timeout", 900.0), read_timeout=read_timeout),
                                host="127.0.0.1", port=self.port, log_level="warning", timeout_keep_alive=5)
        self.uv = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.uv.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.uv.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the server did not start"
            time.sleep(0.05)

    def stop(self):
        self.uv.should_exit = True
        self.thread.join(10)


@pytest.fixture
def served(request):
    s = Served(**getattr(request, "param", {}))
    yield s
    s.stop()


def _client(url, mode, headers=None, local_address=None):
    transport = httpx2.AsyncHTTPTransport(local_address=local_address) if local_address else None
    http = httpx2.AsyncClient(headers=headers or {}, transport=transport)
    return http, Client(streamable_http_client(url, http_client=http), mode=mode)


async def _token(client) -> str:
    r = await client.call_tool("start_session", {})
    assert not r.is_error, r.content[0].text
    return json.loads(r.content[0].text)["session"]


def _text(r) -> str:
    return r.content[0].text


@pytest.mark.timeout(60)
def test_a_session_id_the_server_never_issued_gets_no_world(served):
    """On the 2026-07-28 path the SDK does not check Mcp-Session-Id: the server ignores it instead of trusting it."""
    async def main():
        for forged in ("forged", "0" * 32, "http:1"):
            http, client = _client(served.url, "2026-07-28", headers={"Mcp-Session-Id": forged})
            async with http, client:
                r = await client.call_tool(*READ)
                assert r.is_error and "start_session" in _text(r) and "ignored" in _text(r), _text(r)
                assert (await client.call_tool("reset_world", {})).is_error
        assert len(served.server.worlds) == 0

    anyio.run(main)


@pytest.mark.timeout(60)
def test_a_deleted_handshake_session_is_gone_on_every_path(served):
    async def main():
        http, legacy = _client(served.url, "legacy")
        async with http:
            async with legacy:
                assert not (await legacy.call_tool(*WRITE)).is_error
                assert len(served.server.worlds) == 1
                sid = next(iter(served.server.worlds._worlds))[len("http:"):]
            # leaving the client sent DELETE: the SDK closed the session, and its world went with it
            deadline = time.monotonic() + 10
            while len(served.server.worlds) and time.monotonic() < deadline:
                await anyio.sleep(0.05)
            assert len(served.server.worlds) == 0
            # the old id on the 2026-07-28 path: no world, an error naming the fix
            http2, modern = _client(served.url, "2026-07-28", headers={"Mcp-Session-Id": sid})
            async with http2, modern:
                r = await modern.call_tool(*READ)
                assert r.is_error and "start_session" in _text(r)
            # and on the handshake path the SDK answers 404 for the id it closed
            r = await http.post(served.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": READ[0], "arguments": READ[1]}},
                                headers={"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18", "Accept": "application/json, text/event-stream"})
            assert r.status_code == 404
        assert len(served.server.worlds) == 0

    anyio.run(main)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("served", [{"max_sessions": 2, "sessions_per_client": 100}], indirect=True)
def test_eviction_is_explicit_for_the_servers_whole_life(served):
    """Long after an eviction (here 60 more sessions through a 2-world server), the evicted token still hears
    'session expired', never a fresh world; a handshake client's evicted world the same."""
    async def main():
        http, stateless = _client(served.url, "2026-07-28")
        async with http, stateless:
            first = await _token(stateless)
            meta = {"agentworld/session": first}
            assert not (await stateless.call_tool(*WRITE, meta=meta)).is_error
            hl, legacy = _client(served.url, "legacy")
            async with hl, legacy:
                assert not (await legacy.call_tool(*READ)).is_error
                for _ in range(60):
                    await _token(stateless)
                assert len(served.server.worlds) == 2
                r = await legacy.call_tool(*READ)
                assert r.is_error and "session expired" in _text(r) and "reset_world" in _text(r)
                assert not (await legacy.call_tool("reset_world", {})).is_error
                assert not (await legacy.call_tool(*READ)).is_error
            held = len(served.server.worlds)  # the legacy client's exit (DELETE) gave its world back
            r = await stateless.call_tool(*READ, meta=meta)
            assert r.is_error and "session expired" in _text(r) and "reset_world" in _text(r), _text(r)
            forged = {"agentworld/session": first[:-2] + ("AA" if not first.endswith("AA") else "BB")}
            r = await stateless.call_tool(*READ, meta=forged)
            assert r.is_error and "did not issue" in _text(r)
            assert len(served.server.worlds) == held  # no silent new world anywhere
            assert not (await stateless.call_tool("reset_world", {}, meta=meta)).is_error
            assert not (await stateless.call_tool(*READ, meta=meta)).is_error

    anyio.run(main)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("served", [{"max_sessions": 8, "sessions_per_client": 3}], indirect=True)
def test_one_client_cannot_evict_the_others(served):
    async def main():
        ha, other = _client(served.url, "2026-07-28", local_address="127.0.0.2")
        hb, greedy = _client(served.url, "2026-07-28")
        async with ha, other, hb, greedy:
            mine = await _token(other)
            tokens = [await _token(greedy) for _ in range(3)]
            r = await greedy.call_tool("start_session", {})
            assert r.is_error and "3 live sessions" in _text(r) and "end_session" in _text(r)
            for _ in range(20):  # a loop of start_session changes nothing
                assert (await greedy.call_tool("start_session", {})).is_error
            assert not (await other.call_tool(*READ, meta={"agentworld/session": mine})).is_error
            assert not (await greedy.call_tool("end_session", {}, meta={"agentworld/session": tokens[0]})).is_error
            r = await greedy.call_tool(*READ, meta={"agentworld/session": tokens[0]})
            assert r.is_error and "session expired" in _text(r)
            await _token(greedy)  # a freed slot can be used again
            assert len(served.server.worlds) == 4

    anyio.run(main)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("served", [{"idle_timeout": 1.0}], indirect=True)
def test_idle_sessions_end_and_say_so(served):
    async def main():
        http, client = _client(served.url, "2026-07-28")
        async with http, client:
            meta = {"agentworld/session": await _token(client)}
            assert not (await client.call_tool(*READ, meta=meta)).is_error
            await anyio.sleep(1.5)
            r = await client.call_tool(*READ, meta=meta)
            assert r.is_error and "session expired" in _text(r) and "start_session" in _text(r), _text(r)
            assert len(served.server.worlds) == 0

    anyio.run(main)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("served", [{"read_timeout": 1.0}], indirect=True)
def test_a_slow_request_body_times_out(served):
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as s:
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n"
                  b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n{\"jsonrpc\"")
        start = time.monotonic()
        reply = b""
        while chunk := s.recv(4096):  # the server answers, then closes the connection
            reply += chunk
        waited = time.monotonic() - start
    assert reply.startswith(b"HTTP/1.1 408") and b"did not arrive within 1 s" in reply
    assert waited < 5


def test_session_rules_unit():
    """The same lifecycle without HTTP, on a fake clock: idle expiry names its cause on a handshake session;
    the stdio client's one world is never taken for idleness; the LOCAL world evicted at the limit is told so."""
    from agentworld_gym.envs import get_theme

    now = [0.0]
    worlds = ThemeWorlds(get_theme("finance"), idle_timeout=10, max_sessions=2, clock=lambda: now[0])
    for key in (server_mod.LOCAL, "http:abc"):
        assert worlds.run(key, False, *READ).ok
    now[0] = 11
    r = worlds.run("http:abc", False, *READ)
    assert not r.ok and "session expired" in r.content and "10 s without a call" in r.content
    assert worlds.run(server_mod.LOCAL, False, *READ).ok  # still there
    assert worlds.run("http:abc", False, "reset_world", {}).ok and worlds.run("http:abc", False, *READ).ok
    worlds.start_session()  # a third world at max_sessions=2: the least recently used (LOCAL) goes, explicitly
    r = worlds.run(server_mod.LOCAL, False, *READ)
    assert not r.ok and "least recently used" in r.content
    token, _ = worlds.start_session()
    assert worlds.issued(token) and not worlds.issued(token + "x") and not worlds.issued("abc.def")
    for bad in (0, -1):
        with pytest.raises(ConfigError):
            ThemeWorlds(get_theme("finance"), sessions_per_client=bad)
    with pytest.raises(ConfigError):
        ThemeWorlds(get_theme("finance"), idle_timeout=0)
    forever = ThemeWorlds(get_theme("finance"), idle_timeout=None, sessions_per_client=1)
    assert forever.start_session()[0] is not None
    _, refused = forever.start_session()
    assert refused is not None and "1 live sessions" in refused and "wait" not in refused


@pytest.mark.timeout(60)
def test_an_oversized_request_body_is_refused(served):
    big = b"x" * (server_mod.SlowRequestTimeout.MAX_BODY + 1)
    r = httpx2.post(served.url, content=big, headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    assert r.status_code == 413 and "request body over" in r.text
