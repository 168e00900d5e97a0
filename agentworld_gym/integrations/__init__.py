"""Adapters to the LLM-RL libraries people train agents with, one module each, each an optional extra:

- `agentworld_gym.integrations.trl`: `trl.GRPOTrainer` through its `environment_factory` hook (TRL >= 1.x),
  and oracle episodes as a TRL SFT dataset (`pip install 'agentworld-gym[trl]'`).
- `agentworld_gym.integrations.verifiers`: a `verifiers.MultiTurnEnv` (`pip install 'agentworld-gym[verifiers]'`).
- `agentworld_gym.integrations.openenv`: an OpenEnv HTTP server and client (`pip install 'agentworld-gym[openenv]'`).
- `agentworld_gym.integrations.skyrl`: a SkyRL-gym `BaseTextEnv` (`pip install 'agentworld-gym[skyrl]'`).

Nothing here is imported by `import agentworld_gym`; each module imports its library when it is imported.
"""
