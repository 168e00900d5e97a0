"""MCP both ways: serve a theme (or a live episode) as an MCP server, and turn any MCP server into
a Gym env and a discovery source. Importers for tau2-bench domains and Agent-World release
environments live here too.

Nothing here imports the `mcp` SDK at package import; modules that need it import it inside
functions. Every module uses `from __future__ import annotations` and absolute `import mcp`
(which resolves to the SDK: this package is `agentworld_gym.mcp`, never a top-level `mcp`).
"""

from __future__ import annotations

__all__ = ["MCPBackend", "MCPToolset", "make_mcp_env"]


def __getattr__(name: str):
    if name == "MCPToolset":
        from .client import MCPToolset

        return MCPToolset
    if name in ("MCPBackend", "make_mcp_env"):
        from . import backend

        return getattr(backend, name)
    raise AttributeError(name)
