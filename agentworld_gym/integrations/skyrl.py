"""SkyRL-gym: AgentWorld episodes as a `skyrl_gym` `BaseTextEnv`, registered as "agentworld".

Supports skyrl-gym 0.4 (what `make test` installs). SkyRL builds an env per dataset row with
`skyrl_gym.make(row["env_class"], env_config=..., extras=row)`; `skyrl_dataset` writes such rows (the task
travels in `extra_info`), `init` starts the task's episode, `step(text)` plays the model's reply through the
env's parser and answers with the tool results (OpenAI messages); the reward is the env's verifiable reward,
given when the episode ends.

    import skyrl_gym, agentworld_gym.integrations.skyrl as aw
    row = aw.skyrl_dataset("AgentWorld/finance-v0", 1)[0]
    env = skyrl_gym.make("agentworld", extras=row)
    chat, _ = env.init(row["prompt"])
    out = env.step('{"name": "get_account", "arguments": {"account_id": "AC-1001"}}')
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError, require
from ._common import Episode, as_task, draw_tasks

skyrl_gym = require("skyrl_gym", "skyrl")
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput  # noqa: E402

ENV_CLASS = "agentworld"


class AgentWorldTextEnv(BaseTextEnv):
    """One AgentWorld task as a SkyRL text env. `extras` is the dataset row: its `extra_info["task"]` (or `task`)
    holds the task as JSON; `extra_info["max_turns"]` bounds the episode (default 20)."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None):
        super().__init__()
        extras = extras or {}
        info = extras.get("extra_info") or {}
        task = info.get("task", extras.get("task"))
        if task is None:
            raise ConfigError("Expected the dataset row to carry the task in extras['extra_info']['task'], got none. "
                              "Build rows with agentworld_gym.integrations.skyrl.skyrl_dataset.")
        self.task = as_task(task)
        self.max_turns = int(info.get("max_turns", extras.get("max_turns", 20)))
        self.episode = Episode(self.task.theme, max_turns=self.max_turns)

    def init(self, prompt):
        self.episode.reset(self.task)
        self.turns = 0
        return prompt, {"task_id": self.task.id, "theme": self.task.theme}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        observations = [{"role": m["role"], "content": m["content"]} for m in self.episode.step(action)]
        done = self.episode.done
        metadata = {"verification": self.episode.info.get("verification")} if done else {}
        return BaseTextEnvStepOutput(observations=[] if done else observations, reward=self.episode.reward if done else 0.0,
                                     done=done, metadata=metadata)

    def close(self):
        self.episode.close()


def skyrl_dataset(env_id: str, n_tasks: int, seed: int = 0, max_turns: int = 20, **make_kwargs) -> list[dict]:
    """SkyRL dataset rows: `prompt` (the one prompt, `agentworld_gym.prompt`: instructions, rules, tools; the task), `env_class`,
    `reward_spec` and `extra_info` (the task). Save them with `datasets.Dataset.from_list(rows).to_parquet(...)`."""
    rows = draw_tasks(env_id, n_tasks, seed, **make_kwargs)
    return [{"prompt": r["prompt"], "env_class": ENV_CLASS, "data_source": env_id,
             "reward_spec": {"method": "rule", "ground_truth": as_task(r["task"]).id},
             "extra_info": {"task": r["task"], "max_turns": max_turns}} for r in rows]


if ENV_CLASS not in skyrl_gym.envs.registration.registry:
    skyrl_gym.register(id=ENV_CLASS, entry_point=f"{__name__}:AgentWorldTextEnv")

__all__ = ["ENV_CLASS", "AgentWorldTextEnv", "skyrl_dataset"]
