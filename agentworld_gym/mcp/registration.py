"""Gym ids for external worlds, registered on `import agentworld_gym` (cheap: no SDK, no server start).

  AgentWorld/mcp-v0          any MCP server: gym.make("AgentWorld/mcp-v0", command=[...], tasks=...)
  AgentWorld/tau2-<d>-v0     every installed tau2 domain package (tau2-<d>-mcp-eval)
  AgentWorld/release-<id>-v0 Agent-World release environments, after `agentworld import agentworld-release PATH`
                             (in every later process too: the import writes an index in data_home())
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import gymnasium as gym

MCP_ENV_ID = "AgentWorld/mcp-v0"


def tau2_env_id(domain: str) -> str:
    return f"AgentWorld/tau2-{domain}-v0"


def register_tau2(domain: str, data: str | None = None) -> str:
    kwargs = {"domain": domain} if data is None else {"domain": domain, "data": data}
    gym.register(id=tau2_env_id(domain), entry_point="agentworld_gym.suites.tau2:make_tau2_env", kwargs=kwargs, disable_env_checker=True)
    return tau2_env_id(domain)


def env_id_for(release_id: str) -> str:
    return f"AgentWorld/release-{release_id}-v0"


def data_home() -> Path:
    """Where imports are remembered: $AGENTWORLD_DATA, else $XDG_DATA_HOME/agentworld-gym (~/.local/share/agentworld-gym)."""
    root = os.environ.get("AGENTWORLD_DATA") or os.path.join(os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"),
                                                           "agentworld-gym")
    return Path(root)


def index_path() -> Path:
    return data_home() / "release-index.json"


def read_index() -> dict:
    """{release id: {path, taxonomy (L1/L2/L3), n_tools, tasks}} written by `agentworld import agentworld-release`."""
    try:
        found = json.loads(index_path().read_text(encoding="utf-8")).get("environments", {})
    except (OSError, json.JSONDecodeError, AttributeError):
        return {}
    # a damaged index must never break `import agentworld_gym`: keep only well-formed entries
    return {k: v for k, v in found.items() if isinstance(v, dict) and isinstance(v.get("path"), str)} if isinstance(found, dict) else {}


RELEASE_ENTRY_POINT = "agentworld_gym.mcp.release:make_release_env"


def register_release_env(release_id: str, path: str) -> str | None:
    """Register AgentWorld/release-<id>-v0; None when that id already names something else (a catalog theme
    such as `release-tracker-1`), which is never replaced."""
    gid, kwargs = env_id_for(release_id), {"path": path, "env_id": release_id}
    if gid in gym.registry and gym.registry[gid].entry_point != RELEASE_ENTRY_POINT:
        return None
    if gid not in gym.registry or gym.registry[gid].kwargs != kwargs:
        gym.register(id=gid, entry_point=RELEASE_ENTRY_POINT, kwargs=kwargs, disable_env_checker=True)
    return gid


def register_index() -> list[str]:
    """Register every release environment the index remembers (one JSON read; nothing starts)."""
    return [gid for release_id, entry in read_index().items() if (gid := register_release_env(release_id, entry["path"]))]


def register_external() -> None:
    gym.register(id=MCP_ENV_ID, entry_point="agentworld_gym.mcp.backend:make_mcp_env", disable_env_checker=True)
    register_index()
    from .tau2_domains import installed_domains

    for domain in installed_domains():
        register_tau2(domain)
