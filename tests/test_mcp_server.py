"""`agentworld serve`: a real MCP server subprocess, talked to with the SDK's client over stdio and HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import anyio
import gymnasium as gym
import pytest

pytest.importorskip("mcp")
from agentworld_gym.envs import get_theme  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

import agentworld_gym  # noqa: E402,F401
from agentworld_gym.mcp.server import theme_server  # noqa: E402

SERVE = [sys.executable, "-m", "agentworld_gym.mcp", "serve", "finance"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _exercise(client: Client, theme) -> None:
    tools = (await client.list_tools()).tools
    expected = {s["function"]["name"]: s["function"] for s in theme.toolset.schemas}
    assert {t.name for t in tools} == set(expected) | {"start_session", "reset_world", "end_session"}  # the theme's tools, no submit
    for t in tools:
        if t.name in ("start_session", "reset_world", "end_session"):
            continue
        assert t.input_schema == expected[t.name]["parameters"]
        assert t.description == expected[t.name]["description"]
    env = gym.make("AgentWorld/finance-v0")
    env.reset(seed=0)
    _, _, _, _, info = env.step('{"name": "get_account", "arguments": {"account_id": "AC-0"}}')
    env_error = info["messages"][-1]["content"]
    r = await client.call_tool("get_account", {"account_id": "AC-0"})
    assert r.is_error and r.content[0].text == env_error
    resources = (await client.list_resources()).resources
    doc = await client.read_resource(resources[0].uri)
    assert "accounts" in doc.contents[0].text


@pytest.mark.timeout(60)
def test_stdio_server_matches_env():
    theme = get_theme("finance")

    async def main():
        async with Client(StdioServerParameters(command=SERVE[0], args=SERVE[1:])) as client:
            await _exercise(client, theme)

    anyio.run(main)


def _start_server(*flags: str):
    port = _free_port()
    proc = subprocess.Popen([*SERVE, "--transport", "http", "--port", str(port), *flags], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            assert proc.poll() is None, "the server exited"
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("the server did not start")


@pytest.fixture(scope="module")
def http_server():
    proc, url = _start_server()
    yield url
    proc.terminate()
    proc.wait(10)


def _write_call(theme):
    from agentworld_gym.synthesis import synthesize_task

    for seed in range(50):
        task = synthesize_task(theme, 3, seed)
        for c in task.solution:
            if theme.toolset[c["name"]].writes:
                return c
    raise AssertionError("no write call")


async def _session_meta(client: Client, mode: str) -> dict | None:
    """Handshake clients are told apart by their Mcp-Session-Id; stateless ones ask for a token."""
    if mode == "legacy":
        return None
    r = await client.call_tool("start_session", {})
    return {"agentworld/session": json.loads(r.content[0].text)["session"]}


@pytest.mark.timeout(90)
@pytest.mark.parametrize("mode", ["legacy", "auto", "2026-07-28"])  # handshake; the SDK default; stateless pinned
def test_http_clients_each_get_their_own_world(http_server, mode):
    theme = get_theme("finance")
    call = _write_call(theme)
    results: dict[str, list] = {}

    async def one_client(label: str):
        async with Client(http_server, mode=mode) as client:
            meta = await _session_meta(client, mode)
            first = await client.call_tool(call["name"], call["arguments"], meta=meta)
            second = await client.call_tool(call["name"], call["arguments"], meta=meta)
            results[label] = [first, second]

    async def main():
        async with anyio.create_task_group() as tg:  # two clients at once
            tg.start_soon(one_client, "a")
            tg.start_soon(one_client, "b")

    anyio.run(main)
    a, b = results["a"], results["b"]
    assert not a[0].is_error, a[0].content[0].text
    # Each client's first write ran on an untouched world: identical results; the second saw the first's write.
    assert a[0].content[0].text == b[0].content[0].text
    assert a[1].content[0].text == b[1].content[0].text != a[0].content[0].text


@pytest.mark.timeout(60)
def test_stateless_calls_without_a_token_are_refused_clearly(http_server):
    async def main():
        async with Client(http_server) as client:  # the SDK's default client speaks the stateless protocol
            r = await client.call_tool("get_account", {"account_id": "AC-1001"})
            assert r.is_error and "start_session" in r.content[0].text and "agentworld/session" in r.content[0].text
            forged = await client.call_tool("get_account", {"account_id": "AC-1001"}, meta={"agentworld/session": "default"})
            assert forged.is_error and "did not issue" in forged.content[0].text
        async with Client(http_server, mode="legacy") as legacy:
            # a handshake client's session id is not a token: it cannot be used to reach that client's world
            sid = "0" * 32
            r = await legacy.call_tool("get_account", {"account_id": "AC-1001"}, meta={"agentworld/session": sid})
            assert r.is_error and "did not issue" in r.content[0].text

    anyio.run(main)


def test_tokens_are_unguessable_and_eviction_is_explicit():
    server = theme_server("finance", max_sessions=2)
    call = _write_call(get_theme("finance"))

    async def main():
        async with Client(server) as client:
            tokens = [json.loads((await client.call_tool("start_session", {})).content[0].text)["session"] for _ in range(3)]
            assert len(set(tokens)) == 3 and all(len(t) >= 40 for t in tokens)
            assert len(server.worlds) == 2
            r = await client.call_tool(call["name"], call["arguments"], meta={"agentworld/session": tokens[0]})
            assert r.is_error and "session expired" in r.content[0].text and "reset_world" in r.content[0].text
            assert len(server.worlds) == 2  # no silent new world
            assert not (await client.call_tool("reset_world", {}, meta={"agentworld/session": tokens[0]})).is_error
            r = await client.call_tool(call["name"], call["arguments"], meta={"agentworld/session": tokens[0]})
            assert not r.is_error

    anyio.run(main)


@pytest.mark.timeout(60)
def test_http_bearer_token_auth():
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    proc, url = _start_server("--auth-token", "s3cret", "--max-sessions", "1")
    try:
        async def main():
            with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 in its own error types
                async with Client(url, mode="legacy") as client:
                    await client.call_tool("get_account", {"account_id": "AC-1001"})
            async with (httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}) as http,
                        Client(streamable_http_client(url, http_client=http), mode="legacy") as client):
                r = await client.call_tool("get_account", {"account_id": "AC-1001"})
                assert not r.is_error

        anyio.run(main)
        r = httpx2.post(url, json={}, headers={"Authorization": "Bearer wrong"})
        assert r.status_code == 401 and "Authorization: Bearer" in r.text
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_binds_loopback_by_default():
    from agentworld_gym.cli import build_parser

    args = build_parser().parse_args(["serve", "finance", "--transport", "http"])
    assert args.host == "127.0.0.1" and args.auth_token is None and args.max_sessions == 256


@pytest.mark.timeout(60)
def test_live_episode_served_and_graded():
    from agentworld_gym.synthesis import synthesize_task

    env = gym.make("AgentWorld/finance-v0")
    task = synthesize_task(env.unwrapped.theme, 2, 1)
    env.reset(seed=0, options={"task": task})
    server = env.unwrapped.as_mcp_server()

    async def main():
        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "submit" in names
            for c in task.solution:
                r = await client.call_tool(c["name"], c["arguments"])
                assert not r.is_error
            answer = task.answer if task.answer_type != "none" else "done"
            await client.call_tool("submit", {"answer": answer})
            late = await client.call_tool(task.solution[0]["name"], task.solution[0]["arguments"])
            assert late.is_error and "episode is over" in late.content[0].text

    anyio.run(main)
    assert env.unwrapped.verification.passed


@pytest.mark.timeout(90)
def test_serve_says_where_it_listens_and_the_url_it_prints_answers():
    """HTTP prints its URL with the /mcp path once bound (--port 0 picks a free one); stdio says on stderr what it
    is waiting for, and stdout carries only the protocol."""
    from mcp.client.streamable_http import streamable_http_client

    proc = subprocess.Popen([*SERVE, "--transport", "http", "--port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert line.startswith("agentworld serve: MCP server of theme 'finance'"), line
        url = line.split(" at ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp") and not url.endswith(":0/mcp")

        async def main():
            async with Client(streamable_http_client(url), mode="legacy") as client:
                assert "get_account" in {t.name for t in (await client.list_tools()).tools}

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(10)
    done = subprocess.run(SERVE, input="", capture_output=True, text=True, timeout=60)
    assert done.stdout == "" and "on stdio: an MCP client starts this command" in done.stderr
