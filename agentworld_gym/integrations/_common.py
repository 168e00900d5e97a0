"""What every integration shares: tasks drawn from an env id, one theme's episode driven call by call."""

from __future__ import annotations

import json
from typing import Any

from ..env import AgentWorldEnv
from ..tasks import Task

DEFAULT_HOST = "127.0.0.1"  # servers bind this machine only: never the network unless asked for


def draw_tasks(env_id: str, n: int, seed: int = 0, **make_kwargs) -> list[dict]:
    """`n` tasks drawn by resetting `env_id` (a theme or a pool id) with seeds seed, seed+1, ...

    Each row: `theme`, `task` (the task as JSON text) and `prompt` (the one prompt, `agentworld_gym.prompt`:
    the system message the trainer and `agentworld bench` show, and the user's request).
    """
    import gymnasium as gym

    from ..prompt import render_prompt

    env = gym.make(env_id, **make_kwargs)
    rows = []
    for i in range(n):
        _, info = env.reset(seed=seed + i)
        base = env.unwrapped
        current = getattr(base, "current", None)  # a pool env plays the drawn theme's env
        task = (current.unwrapped if current is not None else base).task
        rows.append({"theme": info["theme"], "task": task.to_json(), "prompt": render_prompt(info["messages"][:2], info["tools"])})
    env.close()
    return rows


def as_task(task: Task | dict | str) -> Task:
    if isinstance(task, Task):
        return task
    return Task.from_dict(json.loads(task) if isinstance(task, str) else task)


class Episode:
    """One theme's `AgentWorldEnv`, driven by tool calls (name + arguments object) or a final reply.

    Every integration plays the env through this, so an integration's episode is the env's episode:
    the same messages, the same verifiable reward.
    """

    def __init__(self, theme: str, **env_kwargs):
        self.env = AgentWorldEnv(theme, **env_kwargs)
        self.info: dict[str, Any] = {}
        self.reward = 0.0
        self.done = True
        self.truncated = False

    def reset(self, task: Task | dict | str) -> dict:
        _, self.info = self.env.reset(options={"task": as_task(task)})
        self.reward, self.done, self.truncated = 0.0, False, False
        return self.info

    def step(self, action: str) -> list[dict]:
        """Play one action (any text the env parses); returns the new messages after the action's own."""
        if self.done:
            return [{"role": "tool", "content": "The episode has ended; nothing was run."}]
        seen = len(self.info["messages"])
        _, reward, terminated, truncated, self.info = self.env.step(action)
        self.reward += reward
        self.done, self.truncated = terminated or truncated, truncated
        return self.info["messages"][seen + 1:]

    def call(self, name: str, arguments: dict) -> str:
        """Run one tool call; returns the tool result (or the env's error) as text."""
        new = self.step(json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False, default=str))
        return "\n".join(m["content"] for m in new)

    def finish(self, reply: str = "") -> float:
        """End the episode with a plain-text reply when it is still running; returns the reward."""
        if not self.done:
            self.step(reply)
        return self.reward

    @property
    def messages(self) -> list[dict]:
        return self.info.get("messages", [])

    def close(self) -> None:
        self.env.close()
