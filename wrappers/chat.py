"""Chat-message observations: OpenAI-format messages plus tool schemas, for LLM trainers.

    env = ChatMessagesObservation(gym.make("AgentWorld/finance-v0"))
    obs, info = env.reset(seed=0)
    tokenizer.apply_chat_template(obs["messages"], tools=obs["tools"], add_generation_prompt=True)
"""

from __future__ import annotations

import copy
import json
from typing import Any

import gymnasium as gym
import numpy as np

ROLES = ("system", "user", "assistant", "tool")


def tool_call_arguments(call: dict) -> dict:
    """The arguments of an OpenAI-format tool call as a dict: info["messages"] holds them as a JSON
    object; older recordings and OpenAI endpoints hold a JSON string. Unreadable text gives {}."""
    arguments = call.get("function", call).get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return {}
    return arguments if isinstance(arguments, dict) else {}


class ChatSpace(gym.Space[dict]):
    """{"messages": [OpenAI chat messages], "tools": [OpenAI tool schemas]}."""

    def __init__(self, tools: list[dict] | None = None, seed: int | np.random.Generator | None = None):
        self.tools = list(tools or [])
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if not isinstance(x, dict) or not isinstance(x.get("messages"), list) or not isinstance(x.get("tools"), list):
            return False
        return all(isinstance(m, dict) and m.get("role") in ROLES and isinstance(m.get("content", ""), str) for m in x["messages"])

    def sample(self, mask: Any = None, probability: Any = None) -> dict:
        words = ("hello", "account", "look", "up", "please", "42")
        text = " ".join(str(self.np_random.choice(words)) for _ in range(int(self.np_random.integers(1, 6))))
        return {"messages": [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": text}],
                "tools": copy.deepcopy(self.tools)}

    def __repr__(self) -> str:
        return f"ChatSpace({len(self.tools)} tools)"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ChatSpace) and other.tools == self.tools


class ChatMessagesObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Transcript text -> {"messages", "tools"} in OpenAI chat format (a copy per step, so an
    observation never changes after it is returned)."""

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        tools = getattr(env.unwrapped, "theme", None)
        self.observation_space = ChatSpace(tools.tool_schemas if tools is not None else [])
        self._info: dict = {}

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._info = info
        return self.observation(obs), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._info = info
        return self.observation(obs), reward, terminated, truncated, info

    def observation(self, observation: Any) -> dict:
        return {"messages": copy.deepcopy(self._info.get("messages", [])), "tools": copy.deepcopy(self._info.get("tools", []))}


__all__ = ["ChatMessagesObservation", "ChatSpace", "tool_call_arguments"]
