"""External MCP servers as Gym envs (AgentWorld/mcp-v0), discovery on live servers, bad servers, cleanup."""

from __future__ import annotations

import re
import sqlite3
import sys
import time
from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("mcp")
from mcp_helpers import children, need  # noqa: E402

import agentworld_gym  # noqa: E402,F401
from agentworld_gym.errors import BackendError  # noqa: E402
from agentworld_gym.mcp.backend import MCPBackend  # noqa: E402
from agentworld_gym.mcp.client import MCPToolset  # noqa: E402
from agentworld_gym.mcp.discovery import discover_tasks  # noqa: E402
from agentworld_gym.policies.base import OraclePolicy, run_episode  # noqa: E402
from agentworld_gym.synthesis.persona import first_person_with_reason, person_requests  # noqa: E402

BAD = [sys.executable, str(Path(__file__).parent / "fixtures" / "bad_mcp_server.py")]
CALC_EXAMPLES = {"calculate": {"expression": ["2+3*4", "(7-2)**2", "17 // 5", "sqrt(16)"]}}


@pytest.mark.timeout(60)
def test_calculator_env_discovery_and_oracle():
    calc = need("mcp-server-calculator")
    before = children()
    backend = MCPBackend([calc], id="calculator", fresh="keep")
    with person_requests():  # tasks v3 (opt-in): discovery words its tasks as a person's goals
        report = discover_tasks(backend, n_tasks=2, examples=CALC_EXAMPLES)
    backend.close()
    assert report.nondeterministic == [] and len(report.tasks) == 2
    for task in report.tasks:  # a person's request (issue 33): a goal with a reason, never a numbered script
        assert first_person_with_reason(task.instruction) and not re.search(r"(^|\n)\s*\d+[.)]\s", task.instruction), task.instruction
        assert "confirm when it is done" not in task.instruction.lower() and "\n" not in task.instruction
    env = gym.make("AgentWorld/mcp-v0", command=[calc], name="calculator", fresh="keep", tasks=report.tasks)
    for task in report.tasks:
        assert run_episode(env, OraclePolicy(env), options={"task": task})["reward"] == 1.0
    env.reset(options={"task": report.tasks[0]})
    obs, *_ = env.step('{"name": "calculate", "arguments": {"expression": "1/"}}')
    assert "Error" in obs.splitlines()[-1]
    obs, reward, terminated, _, _ = env.step('submit(answer="-1")')
    assert terminated and reward == 0.0
    env.close()
    assert children() <= before


@pytest.mark.timeout(90)
def test_sqlite_server_env_over_a_database_we_build(tmp_path):
    sqlite_bin = need("mcp-server-sqlite")
    from agentworld_gym.envs import get_theme

    db = tmp_path / "finance.db"
    mem = sqlite3.connect(":memory:")
    mem.deserialize(get_theme("finance").world(0).template)
    out = sqlite3.connect(db)
    mem.backup(out)
    out.close()
    tables = [r[0] for r in mem.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY 1")][:2]
    first = tables[0]
    kwargs = dict(command=[sqlite_bin, "--db-path", "{episode_dir}/db.sqlite"], files={"db.sqlite": str(db)},
                  state_calls=[{"name": "read_query", "arguments": {"query": f'SELECT * FROM "{t}" ORDER BY 1'}} for t in tables])
    backend = MCPBackend(id="sqlite", **kwargs)
    examples = {"read_query": {"query": [f'SELECT COUNT(*) AS n FROM "{t}"' for t in tables]},
                "write_query": {"query": [f'DELETE FROM "{first}" WHERE rowid = 1']},
                "create_table": {"query": ["CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"]},
                "append_insight": {"insight": ["accounts look healthy"]}}
    report = discover_tasks(backend, n_tasks=1, examples=examples, probes_per_tool=1, max_calls=2)
    backend.close()
    assert {"list_tables", "describe_table", "read_query"} <= set(report.tools)
    assert "describe_table" not in report.unprobed  # fed by list_tables' output
    assert report.graph["list_tables"]["describe_table"] == 3
    assert report.tasks
    env = gym.make("AgentWorld/mcp-v0", tasks=report.tasks, name="sqlite", **kwargs)
    rewards = [run_episode(env, OraclePolicy(env), options={"task": t})["reward"] for t in report.tasks]
    env.close()
    assert rewards == [1.0] * len(report.tasks)


def test_import_stays_light_and_ids_are_registered():
    import subprocess

    code = "import sys, agentworld_gym, gymnasium as gym; assert 'mcp' not in sys.modules; assert 'AgentWorld/mcp-v0' in gym.registry"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.timeout(60)
def test_tau2_mock_end_to_end():
    if "AgentWorld/tau2-mock-v0" not in gym.registry:
        pytest.skip("tau2-mock-mcp-eval not installed (pip install 'agentworld-gym[tau2]')")
    env = gym.make("AgentWorld/tau2-mock-v0")
    tasks = env.unwrapped.tasks
    assert len(tasks) == 10 and all(t.state_hash for t in tasks)
    names = {s["function"]["name"] for s in env.unwrapped.backend.tools}
    assert names == {"get_users", "create_task", "update_task_status", "transfer_to_human_agents"}
    scores = [run_episode(env, OraclePolicy(env), options={"task": t})["reward"] for t in tasks]
    assert scores == [1.0] * 10
    writing = next(t for t in tasks if t.features["changes_state"])
    obs, info = env.reset(options={"task": writing})
    assert "tau2 mock domain" in obs
    _, reward, terminated, _, _ = env.step('submit(answer="done")')  # doing nothing fails a state-changing task
    assert terminated and reward == 0.0
    env.reset(options={"task": writing})
    obs, *_ = env.step('{"name": "create_task", "arguments": {"user_id": "nobody", "title": "x"}}')
    assert obs.rstrip().endswith("Error: User nobody not found")
    import pickle

    clone = pickle.loads(pickle.dumps(env.unwrapped))  # a backend env pickles by configuration (a new server)
    assert [t.id for t in clone.tasks] == [t.id for t in tasks]
    assert run_episode(clone, OraclePolicy(clone), options={"task": writing})["reward"] == 1.0
    clone.close()
    env.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["crash", "hang", "garbage"])
def test_bad_servers_give_error_observations_and_leave_no_process(mode):
    before = children()
    tasks = [{"id": "t", "theme": "bad", "instruction": "Echo hi.", "solution": [{"name": "echo", "arguments": {"text": "hi"}}],
              "answer": "hi", "answer_type": "text"}]
    env = gym.make("AgentWorld/mcp-v0", command=[*BAD, mode], name="bad", fresh="restart", tasks=tasks, timeout=2)
    env.reset(seed=0)
    t0 = time.monotonic()
    obs, reward, terminated, truncated, _ = env.step('{"name": "echo", "arguments": {"text": "hi"}}')
    assert time.monotonic() - t0 < 10
    assert obs.splitlines()[-1].startswith("Error")
    obs, *_ = env.step('{"name": "echo", "arguments": {"text": "again"}}')  # the next call fails fast too
    assert obs.splitlines()[-1].startswith("Error")
    env.reset(seed=1)  # a fresh episode restarts the dead server
    env.close()
    time.sleep(0.2)
    assert children() <= before


@pytest.mark.timeout(60)
def test_broken_schema_and_dead_commands_are_typed_errors():
    with pytest.raises(BackendError, match="broken"):
        MCPToolset([*BAD, "broken-schema"])
    with MCPToolset([*BAD, "broken-schema"], skip_bad_tools=True) as ts:
        assert [t["name"] for t in ts.tools] == ["echo"] and "bad" in ts.skipped
        assert ts.call("echo", {"text": "x"}).content == "x"
    with pytest.raises(BackendError, match="inputSchema"):
        MCPToolset([*BAD, "invalid-schema"])  # the SDK rejects the whole tool list
    with pytest.raises(BackendError, match="start"):
        MCPToolset([sys.executable, "-c", "import sys; sys.exit(3)"])
    with pytest.raises(BackendError, match="within"):
        MCPToolset([sys.executable, "-c", "import time; time.sleep(60)"], start_timeout=2)
    assert not children()
