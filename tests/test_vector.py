"""Vector envs from factories: gymnasium Sync/Async (text obs, autoreset) and SB3 SubprocVecEnv."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import agentworld_gym  # noqa: F401
from agentworld_gym.errors import ConfigError
from agentworld_gym.vector import make_env, make_sb3_vec_env, make_vector_env

SUBMIT = json.dumps({"name": "submit", "arguments": {"answer": "nope"}})
LOOKUP = json.dumps({"name": "get_account", "arguments": {"account_id": "AC-1001"}})


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_text_vector_env_matches_single_envs(mode):
    envs = make_vector_env("AgentWorld/finance-v0", 2, mode=mode, difficulty=1, max_turns=3)
    try:
        obs, infos = envs.reset(seed=7)
        assert isinstance(obs, tuple) and len(obs) == 2 and all(isinstance(o, str) for o in obs)
        single = [make_env("AgentWorld/finance-v0", difficulty=1, max_turns=3)() for _ in range(2)]
        expected = [e.reset(seed=7 + i)[0] for i, e in enumerate(single)]
        assert list(obs) == expected
        actions = envs.action_space.sample()
        assert len(actions) == 2 and all(isinstance(a, str) for a in actions)
        obs, rewards, terminated, truncated, infos = envs.step((LOOKUP, LOOKUP))
        assert list(obs) == [e.step(LOOKUP)[0] for e in single]
        assert rewards.shape == (2,) and not terminated.any() and not truncated.any()
    finally:
        envs.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_next_step_autoreset(mode):
    """Gymnasium's NextStep autoreset: the step after an episode ends resets that sub-env, ignores
    its action and returns reward 0; the other sub-env carries on."""
    envs = make_vector_env("AgentWorld/finance-v0", 2, mode=mode, difficulty=1, max_turns=3)
    single = make_env("AgentWorld/finance-v0", difficulty=1, max_turns=3)()
    try:
        envs.reset(seed=3)
        single.reset(seed=3)
        obs, rewards, terminated, truncated, _ = envs.step((SUBMIT, LOOKUP))
        assert terminated.tolist() == [True, False]
        assert single.step(SUBMIT)[2]
        next_obs, _ = single.reset()  # the same RNG stream continues into the next task
        obs, rewards, terminated, truncated, infos = envs.step((LOOKUP, LOOKUP))  # env 0's action is ignored
        assert obs[0] == next_obs and "[assistant]" not in obs[0]
        assert rewards[0] == 0.0 and not terminated[0] and not truncated[0]
        assert "[assistant]" in obs[1]
        obs, rewards, terminated, truncated, _ = envs.step((LOOKUP, LOOKUP))
        assert truncated.tolist() == [False, True]  # env 1 reached max_turns=3
    finally:
        envs.close()


def test_plain_gymnasium_vector_env_batches_answers_of_mixed_types():
    """Built the way gymnasium's docs build vector envs, with no helper of ours: a numeric answer in
    one episode and a text answer in the next must batch into the same info key."""
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("AgentWorld/finance-v0", max_turns=2) for _ in range(3)])
    envs.reset(seed=0)
    envs.action_space.seed(0)
    answers = []
    for _ in range(12):
        _, _, terminated, truncated, infos = envs.step(('submit(answer=7)', 'submit(answer="seven")', 'submit(answer=[1])'))
        if "verification" in infos:
            done = infos["_verification"]
            answers += [json.loads(a) for a in infos["verification"]["submitted_answer"][done]]
    assert 7 in answers and "seven" in answers and [1] in answers


def test_plain_async_vector_env_with_default_arguments_works():
    """The call people write first: default shared_memory=True, copy=True, a lambda factory."""
    envs = gym.vector.AsyncVectorEnv([lambda: gym.make("AgentWorld/finance-v0")] * 2)
    sync = gym.vector.SyncVectorEnv([lambda: gym.make("AgentWorld/finance-v0")] * 2)
    try:
        obs, _ = envs.reset(seed=5)
        assert obs == sync.reset(seed=5)[0] and isinstance(obs, tuple)
        long_call = json.dumps({"name": "get_account", "arguments": {"account_id": "AC-1001", "note": "x" * 50_000}})
        for action in (LOOKUP, long_call, SUBMIT, LOOKUP):  # through an episode end and NextStep autoreset
            obs, rewards, terminated, truncated, _ = envs.step((action, LOOKUP))
            expected = sync.step((action, LOOKUP))
            assert obs == expected[0] and rewards.tolist() == expected[1].tolist() and terminated.tolist() == expected[2].tolist()
            assert all(isinstance(o, str) for o in obs)
        kept = obs
        envs.step((LOOKUP, LOOKUP))
        assert kept == expected[0]  # copy=True: an earlier batch does not change under the caller
    finally:
        envs.close()
        sync.close()


def test_async_vector_env_without_copy_sees_the_latest_observations():
    envs = gym.vector.AsyncVectorEnv([make_env("AgentWorld/finance-v0")] * 2, copy=False)
    try:
        live, _ = envs.reset(seed=1)
        at_reset = tuple(live)
        envs.step((LOOKUP, LOOKUP))
        assert len(live) == 2 and live[-1] == live[1]
        assert all("[assistant]" not in o for o in at_reset) and all("[assistant]" in o for o in live)
    finally:
        envs.close()


def test_same_step_autoreset_returns_the_reset_observation():
    envs = make_vector_env("AgentWorld/finance-v0", 2, mode="sync", autoreset_mode="SameStep", difficulty=1)
    try:
        envs.reset(seed=0)
        obs, _, terminated, _, infos = envs.step((SUBMIT, SUBMIT))
        assert terminated.all()
        assert all("[assistant]" not in o for o in obs)  # already the next episode's opening
        assert all("Submitted" in o for o in infos["final_obs"])
    finally:
        envs.close()


def test_sb3_subproc_vec_env_runs_the_adapters():
    venv = make_sb3_vec_env("AgentWorld/finance-v0", 2, subprocess=True, difficulty=1, max_turns=2)
    try:
        obs = venv.reset()
        assert obs.shape == (2, 512) and obs.dtype == np.float32
        for _ in range(3):
            obs, rewards, dones, infos = venv.step(np.array([venv.action_space.sample() for _ in range(2)]))
            assert obs.shape == (2, 512) and rewards.shape == (2,) and len(infos) == 2
    finally:
        venv.close()


def test_bad_configuration():
    with pytest.raises(ConfigError):
        make_vector_env("AgentWorld/finance-v0", 2, mode="threads")
    with pytest.raises(ConfigError):
        make_vector_env("AgentWorld/finance-v0", 0)


@pytest.mark.slow
def test_rllib_tune_register_env_builds_a_pool_env():
    """RLlib's env registry (tune.register_env) builds and steps an adapter-wrapped pool env;
    examples/rllib_pool.py trains PPO on it."""
    pytest.importorskip("ray.rllib")
    from agentworld_gym.wrappers import make_sb3_env
    from ray import tune
    from ray.tune.registry import ENV_CREATOR, _global_registry

    tune.register_env("agentworld-finance", lambda config: make_sb3_env("AgentWorld/finance-v0", **config))
    env = _global_registry.get(ENV_CREATOR, "agentworld-finance")({"difficulty": 1, "max_turns": 2})
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs) and reward in (0.0, 1.0)
