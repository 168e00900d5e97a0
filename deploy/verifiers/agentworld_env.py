"""The `agentworld-env` verifiers environment: AgentWorld tasks as a `verifiers.StatefulToolEnv`.

    import verifiers as vf
    env = vf.load_environment("agentworld-env", gym_id="AgentWorld/finance-v0", n_tasks=20)

`gym_id` is any AgentWorld env or pool id; the env, its tools and its reward are
`agentworld_gym.integrations.verifiers`' (this package only gives verifiers the module it loads by id).
"""

from agentworld_gym.integrations.verifiers import AgentWorldEnv, load_environment

__all__ = ["AgentWorldEnv", "load_environment"]
