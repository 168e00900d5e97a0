"""SkyRL-gym: the registered BaseTextEnv runs one evaluation episode (the example) and matches env.step."""

from __future__ import annotations

import pytest

pytest.importorskip("skyrl_gym", reason="SkyRL-gym integration: the `skyrl` extra is not installed (pip install 'agentworld-gym[skyrl]')")

import skyrl_gym  # noqa: E402
from integration_parity import direct_episode, example_lines, oracle_calls, parity_rows, run_example  # noqa: E402

from agentworld_gym.integrations import skyrl as aw_skyrl  # noqa: E402


def test_example_evaluates_one_episode_with_a_tiny_model(tiny, tmp_path):
    out = run_example("skyrl_episode.py", tiny, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "reward 0.0" in out.stdout  # a random model does not solve the task
    assert example_lines("skyrl_episode.py") <= 15


def test_registered_and_subclass_of_base_text_env():
    from skyrl_gym.envs.base_text_env import BaseTextEnv

    assert aw_skyrl.ENV_CLASS in skyrl_gym.envs.registration.registry
    row = aw_skyrl.skyrl_dataset("AgentWorld/finance-v0", 1)[0]
    env = skyrl_gym.make(row["env_class"], extras=row)
    assert isinstance(env, BaseTextEnv)
    assert "Tools (JSON Schema)" in row["prompt"][0]["content"]  # SkyRL renders no tools=, so they are in the text


def test_parity_oracle_through_skyrl():
    import json

    for row in parity_rows():
        want_reward, want_messages = direct_episode(row)
        extras = {"extra_info": {"task": row["task"]}}
        env = skyrl_gym.make(aw_skyrl.ENV_CLASS, extras=extras)
        env.init(row["prompt"])
        rewards = [env.step(json.dumps(call, ensure_ascii=False, default=str)) for call in oracle_calls(row)]
        assert rewards[-1]["done"] and not any(r["done"] for r in rewards[:-1])
        assert rewards[-1]["reward"] == want_reward == 1.0
        assert env.episode.messages == want_messages
