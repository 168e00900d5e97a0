"""The lean serving path (agentworld_gym/serving.py): the MCP fast path answers exactly what the SDK's path answers,
and the OpenEnv WebSocket path keeps bad input per client: a full pool refuses one newcomer with a typed line, a
silent client is expired, a malformed frame is an error for its sender only, and everyone else keeps playing."""

from __future__ import annotations

import json
import socket
import time

import anyio
import pytest

from agentworld_gym import serving
from agentworld_gym.serving import PoolFullError, SessionPool


def test_the_pool_refuses_past_capacity_and_expires_the_silent_first():
    now = [0.0]
    pool = SessionPool(2, idle_timeout=10.0, clock=lambda: now[0])
    pool.admit("a")
    now[0] = 4.0
    pool.admit("b")
    with pytest.raises(PoolFullError, match="2 live sessions"):
        pool.admit("c")
    now[0] = 12.0
    pool.touch("a")  # a spoke at 12: b (last heard at 4) is the one past 10 s of silence at 15
    now[0] = 15.0
    assert pool.expired() == ["b"] and pool.deadline("a") == pytest.approx(7.0)
    pool.end("b")
    pool.admit("c")  # room again
    assert len(pool) == 2


def test_an_env_that_cannot_be_built_is_one_error_line_and_frees_its_slot():
    pool = SessionPool(1)

    def broken():
        raise OSError("no world file")

    sent = []

    async def main() -> None:
        inbox = [{"type": "websocket.connect"}]

        async def receive():
            return inbox.pop(0)

        async def send(message):
            sent.append(message)

        await serving.openenv_ws(pool, broken)({"type": "websocket"}, receive, send)

    anyio.run(main)
    assert [m["type"] for m in sent] == ["websocket.accept", "websocket.send", "websocket.close"]
    error = json.loads(sent[1]["text"])
    assert error["data"] == {"message": "OSError: no world file", "code": "FACTORY_ERROR"} and len(pool) == 0


# ------------------------------------------------------------------------------------------------ MCP
mcp = pytest.importorskip("mcp")
from test_mcp_sessions import Served, _client  # noqa: E402

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2026-07-28",
           "mcp-method": "tools/call"}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def _post(port: int, name: str, arguments: dict, meta: dict, rid: int = 1, headers: dict | None = None) -> tuple[int, dict]:
    import http.client

    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments, "_meta": meta}}
    c.request("POST", "/mcp", json.dumps(body), {**HEADERS, "mcp-name": name, **(headers or {})})
    r = c.getresponse()
    return r.status, json.loads(r.read())


@pytest.fixture
def counted(monkeypatch):
    """How many requests the fast path answered itself."""
    hits = []
    parse = serving.McpFastPath._parse

    def counting(self, scope, body):
        parsed = parse(self, scope, body)
        hits.append(parsed is not None)
        return parsed

    monkeypatch.setattr(serving.McpFastPath, "_parse", counting)
    return hits


def test_the_fast_path_answers_what_the_sdk_answers(counted):
    """The same calls to one server through the fast path and through the SDK's own path (an Origin header sends a
    request to the SDK, which checks it): the replies are equal, errors included."""
    s = Served()
    try:
        _, started = _post(s.port, "start_session", {}, META)
        token = started["result"]["structuredContent"]["session"]
        meta = {**META, "agentworld/session": token}
        calls = [("get_account", {"account_id": "AC-1001"}),  # a read
                 ("transfer_funds", {"from_account_id": "AC-1001", "to_account_id": "AC-1002", "amount": 5}),  # a write
                 ("get_account", {"account_idx": "AC-1001"}),  # the tool's own error: a wrong argument
                 ("get_account", {"account_id": "AC-9999"})]  # a domain error
        fresh = {**meta, "agentworld/reset": True}  # each run starts from a fresh world, so both see the same money

        def run(headers=None):
            return [_post(s.port, name, args, fresh if i == 0 else meta, rid=i, headers=headers) for i, (name, args) in enumerate(calls)]

        counted.clear()
        fast = run()
        assert counted == [True] * len(calls)
        sdk = run({"origin": f"http://127.0.0.1:{s.port}"})
        assert len(counted) == len(calls)  # the Origin requests never reached the fast path
        assert [status for status, _ in fast + sdk] == [200] * 2 * len(calls)
        assert [reply for _, reply in fast] == [reply for _, reply in sdk]
        assert fast[2][1]["result"]["isError"] and "Unknown argument 'account_idx'" in fast[2][1]["result"]["content"][0]["text"]
        # what the fast path does not answer goes to the SDK, whose errors stay its own
        status, reply = _post(s.port, "get_account", {"account_id": "AC-1001"}, {"agentworld/session": token})  # no envelope
        assert status == 400 and "envelope" in reply["error"]["message"]
        status, reply = _post(s.port, "get_account", {}, META, headers={"mcp-name": "other"})
        assert status == 400 and "mcp-name" in reply["error"]["message"]
        status, reply = _post(s.port, "get_account", {"account_id": "AC-1001"}, {**META, "agentworld/session": "forged.token"})
        assert reply["result"]["isError"] and "did not issue" in reply["result"]["content"][0]["text"]
    finally:
        s.stop()


@pytest.mark.timeout(60)
def test_the_sdks_own_client_is_served_by_the_fast_path(counted):
    s = Served()

    async def play() -> None:
        http, client = _client(s.url, "2026-07-28")
        async with http, client:
            r = await client.call_tool("start_session", {})
            meta = {"agentworld/session": json.loads(r.content[0].text)["session"]}
            counted.clear()
            r = await client.call_tool("get_account", {"account_id": "AC-1001"}, meta=meta)
            assert not r.is_error and r.structured_content["account_id"] == "AC-1001"
            r = await client.call_tool("get_account", {"account_id": "AC-0"}, meta=meta)
            assert r.is_error

    try:
        anyio.run(play)
        assert counted == [True, True]
    finally:
        s.stop()


# ------------------------------------------------------------------------------------------------ OpenEnv
pytest.importorskip("openenv")


@pytest.fixture(scope="module")
def openenv_url():
    from agentworld_gym.integrations.openenv import serve_in_background

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = serve_in_background("AgentWorld/finance-v0", port=port, max_sessions=2, idle_timeout=1.5, max_turns=5)
    yield f"ws://127.0.0.1:{port}/ws"
    server.should_exit = True


async def _ask(ws, message) -> dict:
    await ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(await ws.recv())


CALL = json.dumps({"name": "get_account", "arguments": {"account_id": "AC-1001"}})


@pytest.mark.timeout(60)
def test_bad_input_is_answered_per_client_and_the_others_keep_playing(openenv_url):
    import websockets

    async def main() -> None:
        async with websockets.connect(openenv_url) as a, websockets.connect(openenv_url) as b:
            r = await _ask(a, {"type": "step", "data": {"text": CALL}})
            assert r["type"] == "error" and "reset" in r["data"]["message"]  # step before reset
            assert (await _ask(a, {"type": "reset", "data": {"seed": 0}}))["type"] == "observation"
            # a full pool: the third client gets one typed line and is closed; a and b are untouched
            async with websockets.connect(openenv_url) as c:
                refused = json.loads(await c.recv())
                assert refused["type"] == "error" and refused["data"]["code"] == "CAPACITY_REACHED" and refused["data"]["max_sessions"] == 2
                with pytest.raises(websockets.ConnectionClosed):
                    await c.recv()
            # malformed frames: errors for their sender, whose session goes on
            assert (await _ask(b, "{not json"))["data"]["code"] == "INVALID_JSON"
            assert (await _ask(b, "[1, 2]"))["data"]["code"] == "VALIDATION_ERROR"
            assert (await _ask(b, {"type": "step", "data": {"txt": CALL}}))["data"]["code"] == "VALIDATION_ERROR"
            assert (await _ask(b, {"type": "reset", "data": {"seed": "zero"}}))["data"]["code"] == "VALIDATION_ERROR"
            assert (await _ask(b, {"type": "dance"}))["data"]["code"] == "UNKNOWN_TYPE"
            r = await _ask(a, {"type": "step", "data": {"text": CALL}})
            assert r["type"] == "observation" and r["data"]["observation"]["turn"] == 1 and "AC-1001" in r["data"]["observation"]["messages"][-1]["content"]
            assert (await _ask(a, {"type": "state"}))["data"]["step_count"] == 1
            await a.send(json.dumps({"type": "close"}))
            with pytest.raises(websockets.ConnectionClosed):
                await a.recv()
            assert (await _ask(b, {"type": "reset", "data": {}}))["type"] == "observation"

    anyio.run(main)


@pytest.mark.timeout(60)
def test_a_client_that_sends_nothing_is_expired_and_its_slot_freed(openenv_url):
    import websockets

    async def main() -> None:
        async with websockets.connect(openenv_url) as busy, websockets.connect(openenv_url) as silent:
            t = time.monotonic()
            for _ in range(4):  # busy keeps talking across the silent one's 1.5 s
                assert (await _ask(busy, {"type": "reset", "data": {}}))["type"] == "observation"
                await anyio.sleep(0.5)
            expired = json.loads(await silent.recv())
            assert expired["data"]["code"] == "SESSION_EXPIRED" and "1.5 s" in expired["data"]["message"]
            assert time.monotonic() - t >= 1.4
            with pytest.raises(websockets.ConnectionClosed):
                await silent.recv()
            async with websockets.connect(openenv_url) as newcomer:  # the slot is free again
                assert (await _ask(newcomer, {"type": "reset", "data": {}}))["type"] == "observation"

    anyio.run(main)


@pytest.mark.timeout(60)
def test_a_delta_session_gets_only_what_changed_and_a_plain_one_everything(openenv_url):
    import websockets

    async def main() -> None:
        async with websockets.connect(openenv_url) as ws:
            assert (await _ask(ws, {"type": "reset", "data": {"delta": "yes"}}))["data"]["code"] == "VALIDATION_ERROR"
            full = (await _ask(ws, {"type": "reset", "data": {"seed": 1}}))["data"]["observation"]
            plain = (await _ask(ws, {"type": "step", "data": {"text": CALL}}))["data"]["observation"]
            assert "metadata" not in plain and plain["tools"] == full["tools"] != [] and plain["text"].startswith(full["text"])
            opening = (await _ask(ws, {"type": "reset", "data": {"seed": 1, "delta": True}}))["data"]["observation"]
            assert opening == full  # a reset is whole either way
            frame = await _ask(ws, {"type": "step", "data": {"text": CALL}})
            delta = frame["data"]["observation"]
            assert delta["metadata"]["delta"] == {"text_from": len(full["text"]), "messages_from": len(full["messages"])}
            assert delta["tools"] == [] and full["text"] + delta["text"] == plain["text"]
            assert full["messages"] + delta["messages"] == plain["messages"] and len(json.dumps(delta)) * 5 < len(json.dumps(plain))

    anyio.run(main)


def test_a_delta_step_sends_the_text_whole_when_the_transcript_window_dropped_turns():
    from agentworld_gym.integrations.openenv import AgentWorldOpenEnv

    env = AgentWorldOpenEnv("AgentWorld/finance-v0")
    env.reset_payload({"seed": 0, "delta": True})
    env._sent = ("[... 1,000 characters of earlier turns not shown", 1)  # what a dropped window's text no longer starts with
    obs = env.step_payload({"text": CALL})["observation"]
    assert obs["metadata"]["delta"] == {"text_from": 0, "messages_from": 1} and obs["text"] == env.env.unwrapped._transcript.text
    env.close()
