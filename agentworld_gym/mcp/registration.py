"""Gym ids for external worlds, registered on `import agentworld_gym` (cheap: no SDK, no server start).

  AgentWorld/mcp-v0          any MCP server: gym.make("AgentWorld/mcp-v0", command=[...], tasks=...)
  AgentWorld/tau2-<d>-v0     every installed tau2 domain package (tau2-<d>-mcp-eval)
  AgentWorld/release-<id>-v0 Agent-World release environments, after `agentworld import agentworld-release PATH`
"""

from __future__ import annotations

import gymnasium as gym

MCP_ENV_ID = "AgentWorld/mcp-v0"


def tau2_env_id(domain: str) -> str:
    return f"AgentWorld/tau2-{domain}-v0"


def register_tau2(domain: str, data: str | None = None) -> str:
    kwargs = {"domain": domain} if data is None else {"domain": domain, "data": data}
    gym.register(id=tau2_env_id(domain), entry_point="agentworld_gym.mcp.tau2:make_tau2_env", kwargs=kwargs, disable_env_checker=True)
    return tau2_env_id(domain)


def register_external() -> None:
    gym.register(id=MCP_ENV_ID, entry_point="agentworld_gym.mcp.backend:make_mcp_env", disable_env_checker=True)
    from .tau2_domains import installed_domains

    for domain in installed_domains():
        register_tau2(domain)
