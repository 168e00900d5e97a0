"""verifiers: AgentWorld tasks as a `verifiers.StatefulToolEnv` (a ToolEnv), loadable the way verifiers loads environments.

Supports verifiers 0.1.14 to 0.3.1 (`make test` installs 0.3.1, the newest release with ToolEnv, in its own venv
`.venv/verifiers`, with the environment package `deploy/verifiers` (`agentworld-env`): verifiers 0.3 pins mcp<2,
beside the project's mcp 2.x. verifiers 0.4 has no ToolEnv: agents run as programs in a runtime (uv scripts)
and tools are MCP toolsets, a different integration). Each rollout plays one AgentWorld episode: ToolEnv's loop
parses the model's tool calls and runs each in the task's world (results carry the model's call ids), a reply
without tool calls is the answer, and the rubric's reward is the env's verifiable reward. Tools are given per
example in `info["tool_defs"]`, so a pool mixes themes.

    import verifiers as vf
    env = vf.load_environment("agentworld-env", gym_id="AgentWorld/finance-v0", n_tasks=20)   # pip install ./deploy/verifiers
    # or: vf-eval agentworld-env -a '{"gym_id": "AgentWorld/finance-v0"}' -m MODEL -b URL
    # without the package: vf.load_environment("agentworld_gym.integrations.verifiers", gym_id=...)
"""

from __future__ import annotations

import json

from ..errors import require
from ._common import Episode, as_task, draw_tasks

vf = require("verifiers", "verifiers")


def tool_defs(tools: list[dict]) -> list[dict]:
    """OpenAI tool schemas -> verifiers' provider-agnostic tool definitions."""
    return [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
             "parameters": t["function"].get("parameters", {"type": "object", "properties": {}})} for t in tools]


def rows(env_id: str, n_tasks: int, seed: int = 0, **make_kwargs) -> list[dict]:
    """Dataset rows: `prompt` (instructions + task), `answer` (unused: the env grades), `info` (the AgentWorld
    task as JSON, its theme, its tool_defs)."""
    from ..envs import get_theme

    out = []
    for r in draw_tasks(env_id, n_tasks, seed, **make_kwargs):
        # not info["task"] nor a "task" column: verifiers reads those as a payload that replaces the row
        out.append({"prompt": r["prompt"], "answer": "",
                    "info": json.dumps({"agentworld_task": r["task"], "theme": r["theme"], "tool_defs": tool_defs(get_theme(r["theme"]).tool_schemas)})})
    return out


# the rollout's episode, passed to each tool call by `update_tool_args` (StatefulToolEnv's hook); never shown to the model
EPISODE_ARG = "_agentworld_episode"


class AgentWorldEnv(vf.StatefulToolEnv):
    """A verifiers `StatefulToolEnv` (ToolEnv whose tools get per-rollout state) whose rollouts are AgentWorld
    episodes: ToolEnv's own loop parses and dispatches the calls; each runs in the rollout's episode."""

    def __init__(self, dataset, max_turns: int = 20, **kwargs):
        rubric = vf.Rubric(funcs=[self.agentworld_reward], weights=[1.0])
        super().__init__(dataset=dataset, eval_dataset=dataset, rubric=rubric, max_turns=max_turns, **kwargs)
        self.episode_turns = max_turns

    async def setup_state(self, state) -> None:
        info = state["info"]
        state["episode"] = Episode(info["theme"], max_turns=self.episode_turns)
        state["episode"].reset(as_task(info["agentworld_task"]))

    def update_tool_args(self, tool_name, tool_args, messages, state, **kwargs) -> dict:
        return {**tool_args, EPISODE_ARG: state["episode"]}

    async def call_tool(self, tool_name, tool_args, tool_call_id, **kwargs):
        """Run the call in the episode: the theme's tools come per row (`info["tool_defs"]`, so a pool mixes
        themes), not from `self.tool_map`; an unknown tool or bad arguments get the env's error observation."""
        episode: Episode = tool_args.pop(EPISODE_ARG)
        return vf.ToolMessage(role="tool", tool_call_id=tool_call_id, content=episode.call(tool_name, tool_args))

    async def env_response(self, messages, state, **kwargs):
        replies = await super().env_response(messages, state, **kwargs)
        if state["episode"].done:  # the call ended the episode (submit, max turns): its result ends the rollout
            state["final_env_response"] = replies
        return replies

    @vf.stop
    async def episode_over(self, state) -> bool:
        """The episode ended (submit, max turns) or the model replied without a tool call (its answer)."""
        episode: Episode = state.get("episode")
        if episode is None:
            return False
        if not episode.done and state["trajectory"]:
            last = state["trajectory"][-1]["completion"][-1]
            if getattr(last, "role", None) == "assistant" and not getattr(last, "tool_calls", None):
                episode.finish(last.content if isinstance(last.content, str) else "")
        return episode.done

    async def agentworld_reward(self, state, **kwargs) -> float:
        """The env's verifiable reward (an episode still running is ended with no answer)."""
        episode: Episode = state["episode"]
        reward = episode.finish("")
        state["agentworld_messages"] = episode.messages
        return reward


def load_environment(gym_id: str = "AgentWorld/finance-v0", n_tasks: int = 20, seed: int = 0, max_turns: int = 20,
                     **make_kwargs) -> AgentWorldEnv:
    """The entry point `verifiers.load_environment` / `vf-eval` call (`gym_id`: verifiers names its own first
    argument `env_id`, the module path)."""
    datasets = require("datasets", "verifiers")
    return AgentWorldEnv(datasets.Dataset.from_list(rows(gym_id, n_tasks, seed, **make_kwargs)), max_turns=max_turns)


__all__ = ["EPISODE_ARG", "AgentWorldEnv", "load_environment", "rows", "tool_defs"]
