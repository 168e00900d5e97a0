"""The policy protocol and the two non-learning policies every test and benchmark leans on."""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..checks import Number
from ..errors import ConfigError
from ..spaces import sample_value


@runtime_checkable
class Policy(Protocol):
    def act(self, observation: str, info: dict[str, Any]) -> str: ...


def _gold(env) -> Any:
    task = getattr(env, "unwrapped", env).task
    if task is None:
        raise ConfigError("Expected an env that has been reset; OraclePolicy reads its current task.")
    return task


def gold_actions(task) -> list[dict]:
    """The task's gold tool calls followed by the submit call with the gold answer."""
    answer = task.answer if task.answer_type != "none" else "done"
    return [*task.solution, {"name": "submit", "arguments": {"answer": answer}}]


class OraclePolicy:
    """Replays the current task's gold solution, then submits the gold answer.

    It reads the task from the env it is bound to (the answer key), so it is a reference solver for
    tests and data generation, never a baseline.
    """

    def __init__(self, env):
        self.env = env

    def act(self, observation: str, info: dict[str, Any]) -> str:
        actions = gold_actions(_gold(self.env))
        calls_made = sum(1 for m in info["messages"] if m["role"] == "assistant")
        return json.dumps(actions[min(calls_made, len(actions) - 1)])


class RandomPolicy:
    """Well-formed random calls to the env's tools; submits a random observed value with prob `p_submit`."""

    def __init__(self, seed: int | None = None, p_submit: float = 0.15):
        Number(integer=False, low=0, high=1).check("p_submit", p_submit)
        self.rng = np.random.default_rng(seed)
        self.p_submit = p_submit

    def act(self, observation: str, info: dict[str, Any]) -> str:
        tools = [t["function"] for t in info["tools"] if t["function"]["name"] != "submit"]
        if self.rng.random() < self.p_submit or not tools:
            return json.dumps({"name": "submit", "arguments": {"answer": str(self.rng.integers(0, 100))}})
        fn = tools[int(self.rng.integers(len(tools)))]
        params = fn.get("parameters", {})
        args = {k: sample_value(v, self.rng) for k, v in params.get("properties", {}).items() if k in params.get("required", ())}
        return json.dumps({"name": fn["name"], "arguments": args})


def make_policy(spec: str, env=None, seed: int | None = None, device: str | None = None, dtype: str | None = None) -> Policy:
    """'oracle' | 'random' | 'hf:<model>' | 'openai:<model>@<base_url>'; `device` places an hf: model (None: cuda when
    visible) and `dtype` sets its weights' type (None: float32)."""
    if spec == "oracle":
        return OraclePolicy(env)
    if spec == "random":
        return RandomPolicy(seed)
    if spec.startswith(("hf:", "openai:")) or spec == "smollm2-135m":
        from .llm import make_llm_policy

        return make_llm_policy(spec, device=device, dtype=dtype)
    raise ConfigError(f"Expected a policy spec 'oracle', 'random', 'hf:<model>' or 'openai:<model>@<url>', got {spec!r}.")


def run_episode(env, policy: Policy, seed: int | None = None, options: dict | None = None) -> dict:
    """Play one episode; returns reward, turns, success and the final info."""
    obs, info = env.reset(seed=seed, options=options)
    total, turns = 0.0, 0
    while True:
        obs, reward, terminated, truncated, info = env.step(policy.act(obs, info))
        total += reward
        turns += 1
        if terminated or truncated:
            break
    verification = info.get("verification", {})
    return {"reward": total, "turns": turns, "success": bool(verification.get("passed")), "truncated": truncated,
            "task_id": info["task_id"], "difficulty": info["difficulty"], "info": info}
