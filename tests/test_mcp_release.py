"""Agent-World release-format environments: loading, sandboxed tools, discovery tasks, failures."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import gymnasium as gym
import pytest
from mcp_helpers import children

import agentworld_gym  # noqa: F401
from agentworld_gym.actions import ToolCall
from agentworld_gym.cli import main as cli_main
from agentworld_gym.mcp.release import ReleaseBackend, register_release
from agentworld_gym.policies.base import OraclePolicy, run_episode

RELEASE = Path(__file__).parent / "fixtures" / "agentworld_release"
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed (.ci/run installs it)")


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    """Imports are remembered in the user's data dir: keep the tests' out of the real one."""
    monkeypatch.setenv("AGENTWORLD_DATA", str(tmp_path / "data"))


def test_register_reports_what_does_not_load():
    report = register_release(RELEASE)
    assert sorted(report["registered"]) == ["AgentWorld/release-bookshop-v0", "AgentWorld/release-sleepy-v0"]
    assert "does not parse" in report["failed"]["broken"]
    assert "no data folder" in report["failed"]["orphan"]
    assert report["taxonomy"]["AgentWorld/release-bookshop-v0"]["L2"] == "Retail"


def test_cli_import(capsys):
    assert cli_main(["import", "agentworld-release", str(RELEASE), "--no-tasks"]) == 0
    out = capsys.readouterr().out
    assert "registered AgentWorld/release-bookshop-v0" in out and "not loaded broken" in out


@pytest.mark.timeout(60)
def test_bookshop_env_tasks_replay_and_original_untouched():
    register_release(RELEASE)
    original = {p.name: p.read_bytes() for p in (RELEASE / "bookshop").iterdir()}
    env = gym.make("AgentWorld/release-bookshop-v0", n_tasks=4)
    tasks = env.unwrapped.tasks
    assert tasks and any(t.state_hash for t in tasks)
    for t in tasks:
        assert run_episode(env, OraclePolicy(env), options={"task": t})["reward"] == 1.0
    writing = next(t for t in tasks if t.state_hash)
    env.reset(options={"task": writing})
    _, reward, *_ = env.step('submit(answer="done")')
    assert reward == 0.0
    env.reset(options={"task": writing})
    obs, *_ = env.step('{"name": "place_order", "arguments": {"book_id": "B-2", "quantity": 1}}')
    assert obs.rstrip().endswith("Error: Only 0 left of B-2.")
    obs, *_ = env.step('{"name": "get_book", "arguments": {"book_id": 7}}')
    assert "expected string" in obs.splitlines()[-1]
    env.close()
    assert {p.name: p.read_bytes() for p in (RELEASE / "bookshop").iterdir()} == original


@pytest.mark.timeout(60)
def test_tool_code_is_time_limited_confined_and_restartable():
    before = children()
    b = ReleaseBackend(RELEASE, "sleepy", timeout=1)
    b.reset()
    t0 = time.monotonic()
    assert "within 1s" in b.call(ToolCall("nap", {})).content
    assert time.monotonic() - t0 < 5
    assert b.call(ToolCall("chatty", {})).data == {"said": "hello"}  # restarted; stdout noise does not corrupt answers
    assert "exited" in b.call(ToolCall("crash", {})).content
    assert "No such file" in b.call(ToolCall("peek", {"path": str(Path(__file__).resolve())})).content  # not in the sandbox view
    assert json.loads(b.call(ToolCall("peek", {"path": "state.json"})).data["text"]) == {"state": "ok"}
    b.close()
    assert children() <= before
