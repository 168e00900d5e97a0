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


DEFAULT_MAX_TURNS = 20


class AgentWorldTextEnv(BaseTextEnv):
    """One AgentWorld task as a SkyRL text env. `extras` is the dataset row: its `extra_info["task"]` (or `task`)
    holds the task as JSON. The episode's turn limit is the generator's (`generator.max_turns`, which SkyRL's
    generator writes into `extras["max_turns"]`), else the row's `extra_info["max_turns"]`, else 20."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None):
        super().__init__()
        extras = extras or {}
        info = extras.get("extra_info") or {}
        task = info.get("task", extras.get("task"))
        if task is None:
            raise ConfigError("Expected the dataset row to carry the task in extras['extra_info']['task'], got none. "
                              "Build rows with agentworld_gym.integrations.skyrl.skyrl_dataset.")
        self.task = as_task(task)
        self.max_turns = int(extras.get("max_turns") or info.get("max_turns") or DEFAULT_MAX_TURNS)
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

    def get_metrics(self) -> dict[str, Any]:
        """The episode's figures, averaged over episodes by SkyRL (`aggregate_metrics`) into its logged metrics."""
        report = self.episode.info.get("verification") or {}
        calls = [m for m in self.episode.messages if m["role"] == "tool"]
        return {"success": float(bool(report.get("passed"))), "reward": self.episode.reward, "turns": self.turns,
                "truncated": float(self.episode.truncated), "tool_calls": len(calls),
                "tool_errors": sum(str(m.get("content", "")).lstrip().lower().startswith("error") for m in calls),
                "difficulty": self.task.difficulty}

    def close(self):
        self.episode.close()


def skyrl_dataset(env_id: str, n_tasks: int, seed: int = 0, max_turns: int | None = None, **make_kwargs) -> list[dict]:
    """SkyRL dataset rows: `prompt` (the one prompt, `agentworld_gym.prompt`: instructions, rules, tools; the task), `env_class`,
    `reward_spec` and `extra_info` (the task). Save them with `datasets.Dataset.from_list(rows).to_parquet(...)`."""
    rows = draw_tasks(env_id, n_tasks, seed, **make_kwargs)
    return [{"prompt": r["prompt"], "env_class": ENV_CLASS, "data_source": env_id,
             "reward_spec": {"method": "rule", "ground_truth": as_task(r["task"]).id},
             "extra_info": {"task": r["task"], **({"max_turns": max_turns} if max_turns else {})}} for r in rows]


def register() -> None:
    """Register the env as ENV_CLASS with skyrl_gym in this process (SkyRL's generator runs in a Ray task, which
    must call this itself: see `skyrl_entrypoint`)."""
    if ENV_CLASS not in skyrl_gym.envs.registration.registry:
        skyrl_gym.register(id=ENV_CLASS, entry_point=f"{__name__}:AgentWorldTextEnv")


def skyrl_entrypoint(cfg) -> None:
    """The body of SkyRL's training task: register the env inside the Ray task, then run SkyRL's PPO/GRPO
    experiment (`skyrl_train`) with `cfg`. Run it as SkyRL runs its own entrypoint:
    `ray.get(ray.remote(num_cpus=1)(skyrl_entrypoint).remote(cfg))`, or `python -m agentworld_gym.integrations.skyrl`
    with SkyRL's Hydra overrides."""
    register()
    from skyrl_train.entrypoints.main_base import BasePPOExp  # the skyrl-train package (not a dependency here)

    BasePPOExp(cfg).run()


register()

__all__ = ["DEFAULT_MAX_TURNS", "ENV_CLASS", "AgentWorldTextEnv", "register", "skyrl_dataset", "skyrl_entrypoint"]


if __name__ == "__main__":
    def _main() -> None:
        """SkyRL's Hydra entrypoint with this env registered in its Ray task (skyrl-train installed)."""
        import hydra
        import ray
        from skyrl_train.entrypoints.main_base import config_dir
        from skyrl_train.utils import validate_cfg
        from skyrl_train.utils.utils import initialize_ray

        @hydra.main(config_path=config_dir, config_name="ppo_base_config", version_base=None)
        def main(cfg) -> None:
            validate_cfg(cfg)
            initialize_ray(cfg)
            ray.get(ray.remote(num_cpus=1)(skyrl_entrypoint).remote(cfg))

        main()

    _main()
