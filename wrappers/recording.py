"""Record trajectories as JSONL (one finished episode a line) and read them back.

    env = RecordTrajectory(gym.make("AgentWorld/finance-v0"), "runs/finance.jsonl")
    ...
    for episode in read_trajectories("runs/finance.jsonl"):
        print(episode["task_id"], episode["reward"], len(episode["steps"]))

A line holds: task_id, theme, difficulty, seed, steps [{action, reward, terminated, truncated}],
reward (sum), success, turns, the final OpenAI-format messages, tools and the verification report.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym

from agentworld_gym.errors import ConfigError


class RecordTrajectory(gym.Wrapper):
    """Appends each finished episode to a JSONL file; an episode cut short by reset() or close()
    is written too, marked "finished": false."""

    def __init__(self, env: gym.Env, path: str | Path, include_tools: bool = False):
        super().__init__(env)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.include_tools = include_tools
        self._episode: dict | None = None
        self.episodes_written = 0

    def reset(self, *, seed=None, options=None):
        self._flush(finished=False)
        obs, info = self.env.reset(seed=seed, options=options)
        self._episode = {"task_id": info.get("task_id"), "theme": info.get("theme"), "difficulty": info.get("difficulty"),
                         "seed": seed, "steps": [], "info": info}
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._episode is not None:
            text = info.get("action_text", action)
            self._episode["steps"].append({"action": _jsonable(text), "reward": float(reward),
                                           "terminated": bool(terminated), "truncated": bool(truncated)})
            self._episode["info"] = info
            if terminated or truncated:
                self._flush(finished=True)
        return obs, reward, terminated, truncated, info

    def close(self):
        self._flush(finished=False)
        return super().close()

    def _flush(self, finished: bool) -> None:
        episode, self._episode = self._episode, None
        if episode is None or (not finished and not episode["steps"]):
            return
        info = episode.pop("info")
        steps = episode["steps"]
        record = {**episode, "finished": finished, "turns": len(steps), "reward": sum(s["reward"] for s in steps),
                  "success": bool(info.get("verification", {}).get("passed", False)),
                  "verification": info.get("verification"), "messages": copy.deepcopy(info.get("messages", []))}
        if self.include_tools:
            record["tools"] = info.get("tools", [])
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self.episodes_written += 1


def _jsonable(x: Any) -> Any:
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    if hasattr(x, "item") and getattr(x, "size", 2) == 1:  # numpy scalars / 1-element arrays
        return x.item()
    return str(x)


def read_trajectories(path: str | Path) -> Iterator[dict]:
    """Yield the episodes of a JSONL trajectory file, one dict per line."""
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"Expected one JSON episode per line in {path}, line {lineno} is not: {exc.msg}.") from exc


__all__ = ["RecordTrajectory", "read_trajectories"]
