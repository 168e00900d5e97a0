"""Chat-message observations and JSONL trajectory recording."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from agentworld_gym.wrappers import ChatMessagesObservation, RecordTrajectory, candidate_actions, read_trajectories
from agentworld_gym.wrappers.chat import ChatSpace
from gymnasium.utils.env_checker import check_env

import agentworld_gym  # noqa: F401
from agentworld_gym.errors import ConfigError
from agentworld_gym.policies import OraclePolicy, run_episode

LOOKUP = json.dumps({"name": "get_account", "arguments": {"account_id": "AC-1001"}})


def test_chat_observation_is_openai_messages_and_tools():
    env = ChatMessagesObservation(gym.make("AgentWorld/finance-v0", difficulty=1))
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert [m["role"] for m in obs["messages"]] == ["system", "user"]
    assert obs["messages"] == info["messages"] and obs["tools"] == info["tools"]
    assert {t["function"]["name"] for t in obs["tools"]} >= {"get_account", "submit"}
    after, *_ = env.step(LOOKUP)
    assert [m["role"] for m in after["messages"]] == ["system", "user", "assistant", "tool"]
    assert after["messages"][2]["tool_calls"][0]["function"]["name"] == "get_account"
    assert len(obs["messages"]) == 2, "an earlier observation changed after a later step"


def test_chat_wrapped_env_passes_gymnasium_check_env():
    env = ChatMessagesObservation(gym.make("AgentWorld/finance-v0", difficulty=1))
    check_env(env, skip_render_check=True)


def test_chat_space_contains_and_samples():
    space = ChatSpace([{"type": "function", "function": {"name": "f"}}], seed=0)
    sample = space.sample()
    assert space.contains(sample) and sample["tools"][0]["function"]["name"] == "f"
    assert not space.contains({"messages": [{"role": "robot", "content": "hi"}], "tools": []})
    assert not space.contains("text")


def test_recording_writes_one_line_per_episode_and_reads_back(tmp_path):
    path = tmp_path / "runs" / "finance.jsonl"
    env = RecordTrajectory(gym.make("AgentWorld/finance-v0", difficulty=2), path)
    results = [run_episode(env, OraclePolicy(env), seed=s) for s in range(3)]
    env.reset(seed=9)
    env.step(LOOKUP)
    env.close()  # the unfinished episode is kept, marked as such
    episodes = list(read_trajectories(path))
    assert len(episodes) == 4 == env.episodes_written
    for ep, res in zip(episodes, results, strict=False):
        assert ep["finished"] and ep["success"] and ep["reward"] == 1.0
        assert ep["task_id"] == res["task_id"] and ep["turns"] == res["turns"] == len(ep["steps"])
        assert ep["messages"][-1]["role"] == "tool" and ep["verification"]["passed"]
        assert ep["steps"][-1]["terminated"]
    assert episodes[-1]["finished"] is False and episodes[-1]["seed"] == 9 and episodes[-1]["steps"][0]["action"] == LOOKUP


def test_recording_under_the_discrete_adapter_stores_the_chosen_text(tmp_path):
    from agentworld_gym.wrappers import CandidateChoiceAction

    path = tmp_path / "adapter.jsonl"
    env = RecordTrajectory(CandidateChoiceAction(gym.make("AgentWorld/finance-v0", difficulty=1)), path)
    _, info = env.reset(seed=0)
    env.step(info["candidates"].index(candidate_actions(info)[0]))
    env.close()
    (episode,) = read_trajectories(path)
    assert json.loads(episode["steps"][0]["action"])["name"]


def test_reader_rejects_a_corrupt_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"task_id": "a"}\nnot json\n')
    with pytest.raises(ConfigError, match="line 2"):
        list(read_trajectories(path))
