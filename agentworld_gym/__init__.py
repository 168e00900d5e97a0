"""agentworld-gym: the Agent-World arena as a Gymnasium suite of tool-use environments.

    import gymnasium as gym, agentworld_gym
    gym.register_envs(agentworld_gym)
    env = gym.make("AgentWorld/finance-v0", difficulty=2)
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import envs  # noqa: E402  (registers every theme with gymnasium)
from .env import AgentWorldEnv  # noqa: E402
from .envs import get_theme, theme_ids  # noqa: E402
from .tasks import Task  # noqa: E402

__all__ = ["AgentWorldEnv", "Task", "__version__", "envs", "get_theme", "load_pool", "theme_ids"]


def __getattr__(name: str):
    if name == "load_pool":  # agentworld_gym.load_pool(DIR): themes an `agentworld discover --out DIR` run kept (imported on use)
        from .discovery.load import load_pool

        return load_pool
    raise AttributeError(f"module 'agentworld_gym' has no attribute {name!r}")
