"""`check_env`: gymnasium's checker plus the checks every agentworld theme must pass.

Ships in the package so theme authors run exactly what CI runs.
"""

from __future__ import annotations

import json

import gymnasium as gym
from gymnasium.utils.env_checker import check_env as gym_check_env

from ..errors import AgentWorldError


class EnvCheckError(AgentWorldError, AssertionError):
    """A theme or env that breaks one of the suite's contracts."""


def _fail(msg: str):
    raise EnvCheckError(msg)


def check_env(env: gym.Env, seeds=(0, 1, 2), skip_render_check: bool = True) -> None:
    """Raise EnvCheckError (or gymnasium's own assertion) when `env` breaks a contract:

    * gymnasium's `check_env` (API, spaces, determinism of reset);
    * every tool schema is a valid JSON-Schema object with a description;
    * for each seed: the oracle's gold solution scores 1.0 and a do-nothing submit scores 0.0;
    * observations are inside the observation space;
    * `close()` releases the episode database and may be called twice.
    """
    from ..policies import OraclePolicy, run_episode

    base = env.unwrapped
    gym_check_env(base, skip_render_check=skip_render_check)
    for schema in base.theme.tool_schemas:
        fn = schema.get("function", {})
        params = fn.get("parameters", {})
        if not fn.get("name") or not fn.get("description"):
            _fail(f"Expected every tool to have a name and description, got {json.dumps(fn)[:200]}.")
        if params.get("type") != "object" or not isinstance(params.get("properties"), dict):
            _fail(f"Expected tool {fn['name']!r} parameters to be a JSON-Schema object, got {params!r}.")
        for req in params.get("required", ()):
            if req not in params["properties"]:
                _fail(f"Tool {fn['name']!r} requires {req!r} but does not define it.")
    for seed in seeds:
        result = run_episode(env, OraclePolicy(env), seed=seed)
        if result["reward"] != 1.0:
            _fail(f"Expected the gold solution to score 1.0 on seed {seed}, got {result['reward']} "
                  f"(task {result['task_id']}: {result['info'].get('verification')}).")
        obs, info = env.reset(seed=seed)
        obs, reward, terminated, _, info = env.step('{"name": "submit", "arguments": {"answer": "__nothing__"}}')
        if not terminated or reward != 0.0:
            _fail(f"Expected a do-nothing submit to end the episode with reward 0.0 on seed {seed}, got {reward}.")
        if not env.observation_space.contains(obs):
            _fail("Expected every observation to be inside the observation space.")
    env.reset(seed=seeds[0])
    env.close()
    if getattr(base, "conn", None) is not None:
        _fail("Expected close() to release the episode database.")
    env.close()
