"""A small version of benchmarks/bench_serve.py's load, checked for correctness rather than speed: 24 concurrent
sessions, each its own real `mcp.Client` over loopback HTTP (the stateless 2026-07-28 protocol, session token in
_meta), play episodes of reads and writes at once against one server; every call must succeed and every session
must see its own writes and nobody else's."""

from __future__ import annotations

import json

import anyio
import pytest

pytest.importorskip("mcp")
from test_mcp_sessions import Served, _client  # noqa: E402  (the uvicorn-in-a-thread server of the session tests)

SESSIONS = 24  # over the default 16 sessions per client address: the server is told to allow more


@pytest.fixture
def served():
    s = Served(sessions_per_client=SESSIONS, max_sessions=SESSIONS)
    yield s
    s.stop()


def _balance(result) -> float:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)["balance"]


@pytest.mark.timeout(120)
def test_concurrent_sessions_complete_without_errors_or_cross_talk(served):
    errors: list[str] = []
    seen: dict[int, tuple[float, float, float]] = {}  # session -> (balance at start, at end, what it moved)

    async def session(i: int, start: anyio.Event) -> None:
        http, client = _client(served.url, "2026-07-28")
        async with http, client:
            r = await client.call_tool("start_session", {})
            if r.is_error:
                errors.append(f"session {i} start: {r.content[0].text}")
                return
            meta = {"agentworld/session": json.loads(r.content[0].text)["session"]}
            await start.wait()  # every session is open before any plays: the calls really interleave
            before = _balance(await client.call_tool("get_account", {"account_id": "AC-1001"}, meta=meta))
            moved = 0.0
            for k in range(4):  # amounts unique to this session, so a transfer seen by another shows in its balance
                amount = round(1 + i + k / 100, 2)
                r = await client.call_tool("transfer_funds", {"from_account_id": "AC-1001", "to_account_id": "AC-1002", "amount": amount}, meta=meta)
                if r.is_error:
                    errors.append(f"session {i} transfer: {r.content[0].text}")
                    return
                moved += amount
                await anyio.sleep(0)
            after = _balance(await client.call_tool("get_account", {"account_id": "AC-1001"}, meta=meta))
            seen[i] = (before, after, moved)
            r = await client.call_tool("end_session", {}, meta=meta)
            if r.is_error:
                errors.append(f"session {i} end: {r.content[0].text}")

    async def main():
        start = anyio.Event()
        async with anyio.create_task_group() as tg:
            for i in range(SESSIONS):
                tg.start_soon(session, i, start)
            with anyio.fail_after(60):
                while len(served.server.worlds) < SESSIONS and not errors:
                    await anyio.sleep(0.02)
            assert len(served.server.worlds) == SESSIONS  # all open at once, from one client address
            start.set()

    anyio.run(main)
    assert errors == []
    assert len(seen) == SESSIONS
    starts = {before for before, _, _ in seen.values()}
    assert len(starts) == 1  # every world started as the same fresh copy
    for i, (before, after, moved) in seen.items():
        assert after == pytest.approx(before - moved, abs=1e-6), f"session {i} saw transfers it did not make"
    assert len(served.server.worlds) == 0  # every world given back


@pytest.mark.timeout(60)
def test_the_default_per_client_limit_refuses_the_seventeenth_session():
    """Why the load test raises sessions_per_client: by default one address holds 16 worlds, and the 17th
    start_session is refused with a line that names the way out (the others keep working)."""
    s = Served()
    try:
        async def main():
            http, client = _client(s.url, "2026-07-28")
            async with http, client:
                tokens = []
                for _ in range(16):
                    r = await client.call_tool("start_session", {})
                    assert not r.is_error, r.content[0].text
                    tokens.append(json.loads(r.content[0].text)["session"])
                r = await client.call_tool("start_session", {})
                assert r.is_error and "16 live sessions" in r.content[0].text and "end_session" in r.content[0].text
                assert not (await client.call_tool("get_account", {"account_id": "AC-1001"}, meta={"agentworld/session": tokens[-1]})).is_error

        anyio.run(main)
    finally:
        s.stop()
