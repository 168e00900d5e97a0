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
    assert "\nTools:\n- " in row["prompt"][0]["content"] and "- get_account(" in row["prompt"][0]["content"]  # the one prompt: SkyRL renders no tools=


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


def test_the_generators_max_turns_wins_over_the_rows():
    """SkyRL's generator writes generator.max_turns into extras["max_turns"]; a row's extra_info default must not
    override it (it did: every episode ran to 20 turns whatever the generator set)."""
    row = aw_skyrl.skyrl_dataset("AgentWorld/finance-v0", 1, max_turns=20)[0]
    env = skyrl_gym.make(aw_skyrl.ENV_CLASS, extras={**row, "max_turns": 2})
    env.init(row["prompt"])
    out = [env.step('{"name": "get_account", "arguments": {"account_id": "AC-1001"}}') for _ in range(2)]
    assert [o["done"] for o in out] == [False, True] and env.get_metrics()["truncated"] == 1.0
    assert "max_turns" not in aw_skyrl.skyrl_dataset("AgentWorld/finance-v0", 1)[0]["extra_info"]  # none unless asked
    assert skyrl_gym.make(aw_skyrl.ENV_CLASS, extras={"extra_info": row["extra_info"]}).max_turns == 20  # the row's, alone


def test_get_metrics_reports_the_episode():
    import json

    row = parity_rows()[0]
    env = skyrl_gym.make(aw_skyrl.ENV_CLASS, extras={"extra_info": {"task": row["task"]}})
    env.init(row["prompt"])
    env.step('{"name": "no_such_tool", "arguments": {}}')
    for call in oracle_calls(row):
        env.step(json.dumps(call, ensure_ascii=False, default=str))
    m = env.get_metrics()
    assert m["success"] == 1.0 and m["reward"] == 1.0 and m["truncated"] == 0.0
    assert m["turns"] == len(oracle_calls(row)) + 1 and m["tool_errors"] == 1 and m["tool_calls"] == m["turns"]
    mean = type(env).aggregate_metrics([m, {**m, "success": 0.0}])
    assert mean["success"] == 0.5


def test_the_env_registers_inside_a_ray_task():
    """SkyRL runs its generator in a Ray task, where registrations made in the driver do not exist; the task body
    (`skyrl_entrypoint`'s first step, `register()`) makes the env there. Checked in a real local Ray worker."""
    ray = pytest.importorskip("ray")

    row = aw_skyrl.skyrl_dataset("AgentWorld/finance-v0", 1)[0]

    def in_task(row):
        import skyrl_gym as gym_in_worker

        before = "agentworld" in gym_in_worker.envs.registration.registry
        from agentworld_gym.integrations.skyrl import ENV_CLASS, register

        register()
        env = gym_in_worker.make(ENV_CLASS, extras={**row, "max_turns": 3})
        env.init(row["prompt"])
        return before, env.max_turns, env.step("I cannot tell.")["done"]

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": str(__import__("integration_parity").ROOT)}})
    try:
        assert ray.get(ray.remote(num_cpus=1)(in_task).remote(row), timeout=300)[1:] == (3, True)
    finally:
        ray.shutdown()
