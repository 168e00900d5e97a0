"""`agentworld serve`: a real MCP server subprocess, talked to with the SDK's client over stdio and HTTP."""

from __future__ import annotations

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

SERVE = [sys.executable, "-m", "agentworld_gym.mcp", "serve", "finance"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _exercise(client: Client, theme) -> None:
    tools = (await client.list_tools()).tools
    expected = {s["function"]["name"]: s["function"] for s in theme.toolset.schemas}
    assert {t.name for t in tools} == set(expected)  # exactly the theme's tools, no submit
    for t in tools:
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


@pytest.mark.timeout(60)
def test_http_server_sessions_are_isolated():
    theme = get_theme("finance")
    port = _free_port()
    proc = subprocess.Popen([*SERVE, "--transport", "http", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.2)
        url = f"http://127.0.0.1:{port}/mcp"
        write = next(t for t in theme.toolset if t.writes)
        from agentworld_gym.synthesis import synthesize_task

        task = next(synthesize_task(theme, 3, s) for s in range(50) if any(theme.toolset[c["name"]].writes for c in synthesize_task(theme, 3, s).solution))
        call = next(c for c in task.solution if theme.toolset[c["name"]].writes)
        assert write is not None

        async def main():
            async with Client(url, mode="legacy") as a, Client(url, mode="legacy") as b:
                await _exercise(a, theme)
                first = await a.call_tool(call["name"], call["arguments"])
                assert not first.is_error
                # the same write in another session runs on its own, untouched world
                other = await b.call_tool(call["name"], call["arguments"])
                assert other.content[0].text == first.content[0].text
                # an explicit session key and reset work on any transport
                k1 = await a.call_tool(call["name"], call["arguments"], meta={"agentworld/session": "k"})
                k2 = await a.call_tool(call["name"], call["arguments"], meta={"agentworld/session": "k", "agentworld/reset": True})
                assert k1.content[0].text == k2.content[0].text == first.content[0].text

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(10)


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
