"""The 20 seeded tasks every integration's parity test plays, and the reference: the oracle through env.step."""

from __future__ import annotations

import json

from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.integrations._common import as_task, draw_tasks
from agentworld_gym.policies.base import gold_actions

PARITY_IDS = ("AgentWorld/finance-v0", "AgentWorld/retail-v0", "AgentWorld/travel-v0", "AgentWorld/clinic-v0", "AgentWorld/tickets-v0")


def parity_rows() -> list[dict]:
    """4 seeded tasks from each of 5 flagship themes, difficulties 1-2."""
    return [row for i, env_id in enumerate(PARITY_IDS) for row in draw_tasks(env_id, 4, seed=100 * i, difficulty=1 + i % 2)]


def oracle_calls(row: dict) -> list[dict]:
    return gold_actions(as_task(row["task"]))


def direct_episode(row: dict) -> tuple[float, list[dict]]:
    """Reward and messages of the oracle's episode played with env.step directly."""
    env = AgentWorldEnv(row["theme"])
    env.reset(options={"task": as_task(row["task"])})
    reward, info = 0.0, {}
    for call in oracle_calls(row):
        _, r, terminated, truncated, info = env.step(json.dumps(call, ensure_ascii=False, default=str))
        reward += r
        if terminated or truncated:
            break
    env.close()
    return reward, info["messages"]
