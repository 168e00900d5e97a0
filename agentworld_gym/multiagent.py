"""A PettingZoo AEC env where an `assistant` and a `user` share one tool-use episode.

The user holds the task: its opening message hides the facts the assistant needs (ids, emails,
dates: "[email: ask me]"), and it tells a fact only when asked about it. The assistant calls the
theme's tools and finally submits; both agents get the task's verified reward (cooperative).
`ScriptedUser` (deterministic) is the default user policy; any policy can play either side.

    env = AssistantUserEnv("finance", difficulty=1)
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else policies[agent].act(obs, info)
        env.step(action)

Turn order: the user opens; after a tool call the assistant keeps the turn; a plain-text message
from the assistant is a question and passes the turn to the user; the user's reply passes it back.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import numpy as np
from pettingzoo import AECEnv

from .actions import parse_action
from .env import MAX_ECHO, AgentWorldEnv, _clip
from .errors import ConfigError
from .spaces import TextSpace, ToolCallSpace
from .wrappers.chat import tool_call_arguments

ASSISTANT, USER = "assistant", "user"
_FACT = re.compile(  # emails, dates, IPs, domains, ids like AC-1001
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b"
    r"|\b(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}\b|(?<![\w-])[A-Za-z]{1,6}-\d+(?![\w-])"
)
_SKIP = {"is", "on", "at", "to", "from", "of", "the", "for", "with", "a", "an", "in", "and", "whose", "by", "that"}
_ASKS = {"email": ("email", "e-mail", "mail"), "date": ("date", "day", "when")}


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


def task_facts(instruction: str) -> dict[str, str]:
    """{label: value} for the ids, emails, dates, IPs and domains an instruction names, labelled
    by the noun before them ("account AC-1", "domain x.com") or by their kind ("email", "date")."""
    facts: dict[str, str] = {}
    for m in _FACT.finditer(instruction):
        value = m.group(0)
        kind = "email" if "@" in value else "date" if value[:4].isdigit() else "id"
        label = kind
        if kind == "id":
            words = re.findall(r"[A-Za-z]+", instruction[: m.start()])[-3:]
            for w in reversed(words):
                if w.lower() not in _SKIP:
                    label = w.lower()
                    break
        base, n = label, 2
        while label in facts and facts[label] != value:
            label, n = f"{base} {n}", n + 1
        facts[label] = value
    return facts


def mask_facts(instruction: str, facts: dict[str, str]) -> str:
    """The instruction with every fact replaced by a request to ask for it."""
    by_value = {v: k for k, v in facts.items()}
    return _FACT.sub(lambda m: f"[{by_value.get(m.group(0), 'detail')}: ask me]", instruction)


class ScriptedUser:
    """A deterministic user: opens with the masked task, and answers a question with exactly the
    facts whose label (or kind) the question names."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if info.get("opening") is not None:
            return info["opening"]
        question = (info.get("question") or "").lower()
        facts: dict[str, str] = info.get("facts", {})
        told = [f"The {label} is {value}." for label, value in facts.items() if _asked(label, question)]
        if told:
            return " ".join(told)
        if not facts:
            return "I have no other details; please go ahead with what you have."
        return "I can tell you my " + ", ".join(facts) + ". Which one do you need?"


def _asked(label: str, question: str) -> bool:
    words = _ASKS.get(label.split()[0], (label.split()[0],))
    return any(re.search(rf"\b{re.escape(w)}", question) for w in words) or (label != "id" and label in question)


class AssistantUserEnv(AECEnv):
    """PettingZoo AEC env: agents "assistant" and "user" over one AgentWorld task.

    Args:
        theme: a theme id; other kwargs (difficulty, tasks, reward_mode, ...) go to AgentWorldEnv.
        max_turns: actions (both agents together) before both are truncated.
    """

    metadata = {"render_modes": ["ansi", "human"], "name": "agentworld_assistant_user_v0", "is_parallelizable": False}

    def __init__(self, theme: str = "finance", max_turns: int = 30, render_mode: str | None = None, **env_kwargs):
        if max_turns < 2:
            raise ConfigError(f"Expected max_turns >= 2 (the user opens, the assistant answers), got {max_turns!r}.")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ConfigError(f"Expected render_mode in {self.metadata['render_modes']}, got {render_mode!r}.")
        super().__init__()
        self.task_env = AgentWorldEnv(theme, max_turns=max_turns, **env_kwargs)
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
        _, env_info = self.task_env.reset(seed=seed, options=options)
        task = self.task_env.task
        self.facts = task_facts(task.instruction)
        self.opening = mask_facts(task.instruction, self.facts)
        self.dialogue: list[dict] = [{"role": "system", "content": self.task_env.theme.system_prompt}]
        self._seen_env_messages = len(env_info["messages"])
        self.turns = 0
        self.question: str | None = None
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = USER
        self._update_infos()

    def observe(self, agent: str) -> Utterance:
        if agent == ASSISTANT:
            return Utterance(_render(self.dialogue))
        card = [f"[your task]\n{self.task_env.task.instruction}",
                "[facts you know]\n" + ("\n".join(f"{k}: {v}" for k, v in self.facts.items()) or "(none)")]
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
            self._user_says(action)
        else:
            self._assistant_does(action)
        if not any(self.terminations.values()) and self.turns >= self.max_turns:
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
    def _user_says(self, action: Any) -> None:
        if not isinstance(action, str):
            text = f"(the user's message could not be read: expected text, got {type(action).__name__})"
        elif not action.strip():
            text = "(the user sent an empty message)"
        else:
            text = _clip(action)
        self.dialogue.append({"role": "user", "content": text})
        self.question = None
        self.agent_selection = ASSISTANT

    def _assistant_does(self, action: Any) -> None:
        parsed = parse_action(action)
        if parsed.is_response:  # plain text: a question for the user
            text = parsed.text
            if not text:
                self.dialogue.append({"role": "assistant", "content": ""})
                self.dialogue.append({"role": "tool", "tool_call_id": f"call_{self.turns}_error", "name": "dialogue",
                                      "content": "Error: your message was empty. Ask the user a question, call a tool, or submit."})
                return
            self.dialogue.append({"role": "assistant", "content": _clip(text)})
            self.question = _clip(text, MAX_ECHO)
            self.agent_selection = USER
            return
        # Tool calls, submit, or unreadable calls: the task env runs and grades them.
        _, reward, terminated, truncated, env_info = self.task_env.step(action)
        self.dialogue.extend(env_info["messages"][self._seen_env_messages:])
        self._seen_env_messages = len(env_info["messages"])
        if terminated or truncated:
            self.rewards = {a: float(reward) for a in self.agents}
            if terminated:
                self.terminations = {a: True for a in self.agents}
            else:
                self.truncations = {a: True for a in self.agents}
            self._finish()

    def _finish(self) -> None:
        self.agent_selection = self.possible_agents[0] if self.possible_agents[0] in self.agents else self.agents[0]

    def _update_infos(self) -> None:
        base = {"task_id": self.task_env.task.id, "theme": self.task_env.theme.id, "turn": self.turns}
        verification = self.task_env.verification
        if verification is not None:
            base["verification"] = verification.to_dict()
        self.infos = {
            ASSISTANT: {**base, "messages": list(self.dialogue), "tools": self.task_env.theme.tool_schemas},
            USER: {**base, "facts": dict(self.facts), "question": self.question,
                   "opening": self.opening if self.turns == 0 else None},
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


def play(aec: AssistantUserEnv, assistant, user=None, seed: int | None = None) -> dict:
    """Run one episode with `assistant` and `user` policies (`act(obs, info) -> str`; the user
    defaults to `ScriptedUser`); returns the reward, the number of turns and the final info."""
    user = user or ScriptedUser()
    aec.reset(seed=seed)
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
    return {"reward": reward, "turns": aec.turns, "success": reward >= 1.0, "info": aec.task_env._info()}


__all__ = ["ASSISTANT", "USER", "AssistantUserEnv", "DialogueSpace", "ScriptedUser", "Utterance", "env", "mask_facts", "play", "task_facts"]
