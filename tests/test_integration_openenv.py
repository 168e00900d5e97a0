"""OpenEnv: the server and client run one evaluation (the example), keep one world per session, and match env.step."""

from __future__ import annotations

import json
import socket

import pytest

pytest.importorskip("openenv.core", reason="OpenEnv integration: the `openenv` extra is not installed (pip install 'agentworld-gym[openenv]')")

from integration_parity import direct_episode, example_lines, oracle_calls, parity_rows, run_example  # noqa: E402

from agentworld_gym.integrations.openenv import AgentWorldAction, AgentWorldClient, serve_in_background  # noqa: E402


def test_example_evaluates_one_episode_with_a_tiny_model(tiny, tmp_path):
    out = run_example("openenv_episode.py", tiny, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "reward 0.0" in out.stdout
    assert example_lines("openenv_episode.py") <= 15


@pytest.fixture(scope="module")
def base_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = serve_in_background("AgentWorld/finance-v0", port=port, max_sessions=4)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True


def test_cli_binds_loopback_by_default():
    from agentworld_gym.cli import build_parser

    args = build_parser().parse_args(["serve-openenv", "finance"])
    assert args.host == "127.0.0.1" and args.func.__name__ == "cmd_serve_openenv"


def test_one_world_per_session(base_url):
    with AgentWorldClient(base_url=base_url).sync() as a, AgentWorldClient(base_url=base_url).sync() as b:
        first_a, first_b = a.reset(seed=0), b.reset(seed=0)
        assert first_a.observation.task_id == first_b.observation.task_id  # same seed, same task
        a.step(AgentWorldAction(text='{"name": "get_account", "arguments": {"account_id": "AC-1001"}}'))
        assert a.state().step_count == 1 and b.state().step_count == 0
        assert len(b.step(AgentWorldAction(text="I don't know")).observation.messages) == 3  # b's episode saw none of a's


def test_parity_oracle_through_openenv(base_url):
    with AgentWorldClient(base_url=base_url).sync() as client:
        for row in parity_rows():
            if row["theme"] != "finance":
                continue  # this server serves finance; the theme ids are covered by the in-process check below
            want_reward, want_messages = direct_episode(row)
            result = client.reset(task=json.loads(row["task"]))
            for call in oracle_calls(row):
                result = client.step(AgentWorldAction(text=json.dumps(call, ensure_ascii=False, default=str)))
            assert result.done and result.reward == want_reward == 1.0
            assert result.observation.messages == want_messages


def test_parity_oracle_through_the_openenv_environment_on_20_tasks():
    from agentworld_gym.integrations.openenv import AgentWorldOpenEnv

    for row in parity_rows():
        want_reward, want_messages = direct_episode(row)
        env = AgentWorldOpenEnv(f"AgentWorld/{row['theme']}-v0")
        obs = env.reset(task=json.loads(row["task"]))
        for call in oracle_calls(row):
            obs = env.step(AgentWorldAction(text=json.dumps(call, ensure_ascii=False, default=str)))
        assert obs.done and obs.reward == want_reward == 1.0
        assert obs.messages == want_messages
        env.close()
