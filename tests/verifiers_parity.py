"""Run in the verifiers venv by test_integration_verifiers.py: the oracle through the verifiers env on the 20
parity tasks (tool calls as the model's AssistantMessages) against env.step; prints one line per task."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import verifiers as vf  # noqa: E402
from integration_parity import direct_episode, oracle_calls, parity_rows  # noqa: E402

from agentworld_gym.integrations import verifiers as aw_vf  # noqa: E402


async def play(env, row: dict) -> tuple[float, list[dict], list[str]]:
    state = {"info": {"agentworld_task": row["task"], "theme": row["theme"]}, "trajectory": []}
    await env.setup_state(state)
    ids = []
    for i, call in enumerate(oracle_calls(row)):
        message = vf.AssistantMessage(content="", tool_calls=[vf.ToolCall(id=f"model_{i}", name=call["name"], arguments=json.dumps(call["arguments"]))])
        replies = await env.env_response([message], state)
        ids += [r.tool_call_id for r in replies]
        assert not await env.episode_over(state) or call["name"] == "submit"
    return await env.agentworld_reward(state), state["agentworld_messages"], ids


def main() -> int:
    env = aw_vf.load_environment("AgentWorld/finance-v0", n_tasks=1)
    failures = 0
    for row in parity_rows():
        want_reward, want_messages = direct_episode(row)
        reward, messages, ids = asyncio.run(play(env, row))
        ok = reward == want_reward == 1.0 and messages == want_messages and ids == [f"model_{i}" for i in range(len(ids))]
        failures += not ok
        print(row["theme"], as_id(row), "ok" if ok else f"MISMATCH reward {reward} vs {want_reward}")
    print(f"parity {20 - failures}/20")
    return 1 if failures else 0


def as_id(row: dict) -> str:
    return json.loads(row["task"])["id"]


if __name__ == "__main__":
    raise SystemExit(main())
