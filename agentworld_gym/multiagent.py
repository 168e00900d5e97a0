"""A PettingZoo AEC env where an `assistant` and a `user` share one tool-use episode.

The user holds the task (agentworld_gym.user_simulator): it opens with the reason for the call,
keeping back the private facts the assistant needs (ids, emails, dates: "[email: ask me]"; for a
tau2 task its known_info), and tells a fact only when asked about it. The assistant calls the tools
and finally submits or reports; both agents get the task's verified reward (cooperative). The user
ends the conversation with tau2's tokens (###STOP###, ###TRANSFER###, ###OUT-OF-SCOPE###).
`ScriptedUser` (deterministic) is the default user policy; any policy can play either side
(`PolicyUser(make_llm_policy(spec))` plays the user from a model).

    env = AssistantUserEnv("finance", difficulty=1)           # or AssistantUserEnv(task_env=make_tau2_env("airline"))
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else policies[agent].act(obs, info)
        env.step(action)

Turn order: the user opens; after a tool call the assistant keeps the turn; a plain-text message
from the assistant goes to the user and passes the turn; the user's reply passes it back. The
single-agent env plays the same conversation with a simulated user inside (`AgentWorldEnv(user=...)`);
here the task env relays the user agent's messages (`RelayUser`, `env.user_says`).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import numpy as np
from pettingzoo import AECEnv

from .env import AgentWorldEnv
from .errors import ConfigError
from .spaces import TextSpace, ToolCallSpace
from .user_simulator import RelayUser, ScriptedUser, mask_facts, task_facts
from .wrappers.chat import tool_call_arguments

ASSISTANT, USER = "assistant", "user"


class Utterance(str):
    """A str that also declares its dtype (object), as PettingZoo's api_test asks of observations."""

    __slots__ = ()
    dtype = np.dtype(object)


class DialogueSpace(TextSpace):
    """The text space of an agent's observation; its members are `Utterance`s (plain str subclass)."""

    def __init__(self, max_length: int = 2**26, seed=None):
        super().__init__(max_length=max_length, seed=seed)
        self.dtype = np.dtype(object)

    def sample(self, mask: Any = None, probability: Any = None) -> Utterance:
        return Utterance(super().sample())


class AssistantUserEnv(AECEnv):
    """PettingZoo AEC env: agents "assistant" and "user" over one task.

    Args:
        theme: a theme id; other kwargs (difficulty, tasks, reward_mode, ...) go to AgentWorldEnv.
        max_turns: actions (both agents together) before both are truncated.
        task_env: an env to play instead of a theme's (e.g. `make_tau2_env("airline")`); its user becomes a relay.
    """

    metadata = {"render_modes": ["ansi", "human"], "name": "agentworld_assistant_user_v0", "is_parallelizable": False}

    def __init__(self, theme: str = "finance", max_turns: int = 30, render_mode: str | None = None, task_env: AgentWorldEnv | None = None,
                 **env_kwargs):
        if max_turns < 2:
            raise ConfigError(f"Expected max_turns >= 2 (the user opens, the assistant answers), got {max_turns!r}.")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ConfigError(f"Expected render_mode in {self.metadata['render_modes']}, got {render_mode!r}.")
        super().__init__()
        if task_env is None:
            task_env = AgentWorldEnv(theme, max_turns=max_turns, user=RelayUser(), **env_kwargs)
        self.task_env = task_env.unwrapped
        self.task_env.user = RelayUser()
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.possible_agents = [USER, ASSISTANT]
        self.agents: list[str] = []
        self._spaces = {
            ASSISTANT: (DialogueSpace(), ToolCallSpace(self.task_env.theme.tool_schemas)),
            USER: (DialogueSpace(), TextSpace(max_length=1_000_000)),
        }

    # ------------------------------------------------------------------ spaces
    @cache  # noqa: B019  (PettingZoo expects the same space object every call)
    def observation_space(self, agent: str) -> TextSpace:
        return self._spaces[agent][0]

    @cache  # noqa: B019
    def action_space(self, agent: str) -> TextSpace:
        return self._spaces[agent][1]

    # ------------------------------------------------------------------ AEC API
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.task_env.reset(seed=seed, options=options)
        self.scenario = self.task_env.scenario
        self.facts = {f.label: f.text for f in self.scenario.facts}
        self.opening = self.scenario.opening
        self.turns = 0
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = USER
        self._update_infos()

    @property
    def dialogue(self) -> list[dict]:
        """Every message of the episode (system, user, assistant, tool), as the assistant sees them."""
        return self.task_env.messages

    @property
    def question(self) -> str | None:
        """The assistant's last words to the user while the user has the turn."""
        said = self.task_env.dialogue()
        return said[-1]["content"] if self.turns and said and said[-1]["role"] == "assistant" and self.agent_selection == USER else None

    def observe(self, agent: str) -> Utterance:
        if agent == ASSISTANT:
            return Utterance(_render(self.dialogue))
        card = [self.scenario.card()]
        if self.turns == 0:
            card.append("[next]\nOpen the conversation: tell the assistant what you need.")
        elif self.question is not None:
            card.append(f"[assistant asks]\n{self.question}")
        return Utterance("\n\n".join(card) + "\n")

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        self.turns += 1
        if agent == USER:
            result = self.task_env.user_says(action)
            self.agent_selection = ASSISTANT
        else:
            result = self.task_env.step(action)
            last = self.task_env.messages[-1]
            if last["role"] == "assistant" and not last.get("tool_calls"):  # words for the user: their turn
                self.agent_selection = USER
        _, reward, terminated, truncated, _ = result
        if terminated or truncated:
            self.rewards = {a: float(reward) for a in self.agents}
            (self.terminations if terminated else self.truncations).update({a: True for a in self.agents})
            self._finish()
        elif self.turns >= self.max_turns:
            self.truncations = {a: True for a in self.agents}
            self._finish()
        self._update_infos()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        text = _render(self.dialogue)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.task_env.close()

    # ------------------------------------------------------------------ turns
    def _finish(self) -> None:
        self.agent_selection = self.possible_agents[0] if self.possible_agents[0] in self.agents else self.agents[0]

    def _update_infos(self) -> None:
        base = {"task_id": self.task_env.task.id, "theme": self.task_env.theme.id, "turn": self.turns}
        if self.task_env.ended_by is not None:
            base["ended_by"] = self.task_env.ended_by
        verification = self.task_env.verification
        if verification is not None:
            base["verification"] = verification.to_dict()
        self.infos = {
            ASSISTANT: {**base, "messages": list(self.dialogue), "tools": self.task_env.theme.tool_schemas},
            USER: {**base, "scenario": self.scenario, "dialogue": self.task_env.dialogue(), "facts": dict(self.facts),
                   "question": self.question, "opening": self.opening if self.turns == 0 else None},
        }
        self.infos = {a: self.infos[a] for a in self.agents}


def _render(messages: list[dict]) -> str:
    parts = []
    for m in messages:
        role = m["role"] if m["role"] != "tool" else f"tool {m.get('name', '')}".strip()
        content = m.get("content") or ""
        if m.get("tool_calls") and not content:
            content = "\n".join(json.dumps({"name": c["function"]["name"], "arguments": tool_call_arguments(c)}, ensure_ascii=False)
                                for c in m["tool_calls"])
        parts.append(f"[{role}]\n{content}\n")
    return "\n".join(parts)


def env(**kwargs) -> AssistantUserEnv:
    """PettingZoo-style constructor."""
    return AssistantUserEnv(**kwargs)


def play(aec: AssistantUserEnv, assistant, user=None, seed: int | None = None, options: dict | None = None) -> dict:
    """Run one episode with `assistant` and `user` policies (`act(obs, info) -> str`; the user
    defaults to `ScriptedUser`); returns the reward, the number of turns, how it ended and the final info."""
    user = user or ScriptedUser()
    aec.reset(seed=seed, options=options)
    policies = {ASSISTANT: assistant, USER: user}
    reward = 0.0
    for agent in aec.agent_iter():
        obs, r, terminated, truncated, info = aec.last()
        if agent == ASSISTANT:
            reward += r
        if terminated or truncated:
            aec.step(None)
            continue
        aec.step(policies[agent].act(obs, info))
    return {"reward": reward, "turns": aec.turns, "success": reward >= 1.0, "ended_by": aec.task_env.ended_by, "info": aec.task_env._info()}


__all__ = ["ASSISTANT", "USER", "AssistantUserEnv", "DialogueSpace", "ScriptedUser", "Utterance", "env", "mask_facts", "play", "task_facts"]
