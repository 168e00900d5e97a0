"""The 20 seeded tasks every integration's parity test plays, the reference (the oracle through env.step),
and running the integrations' examples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.integrations._common import as_task, draw_tasks
from agentworld_gym.policies.base import gold_actions

ROOT = Path(__file__).resolve().parents[1]


def example_lines(name: str) -> int:
    """Non-blank lines of examples/<name> (the README promises each example in <= 15)."""
    return sum(1 for line in (ROOT / "examples" / name).read_text().splitlines() if line.strip())


def run_example(name: str, model: str, cwd: Path, timeout: int = 300, args: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess:
    """Run examples/<name> with `model` (and `args`) in a fresh process, from `cwd`, the checkout on its path."""
    return subprocess.run([sys.executable, str(ROOT / "examples" / name), model, *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, capture_output=True, text=True, timeout=timeout)


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
