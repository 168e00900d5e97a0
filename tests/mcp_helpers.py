"""Shared helpers for the MCP tests: where the registry's MCP servers are installed, child processes."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest


def server_bin(name: str) -> str | None:
    """A console script of an MCP server from the registry: $AGENTWORLD_MCP_SERVERS_BIN, PATH, or the
    tool venv `.venv/mcp-servers` (servers that pin mcp<2 cannot share the project's venv)."""
    dirs = [os.environ.get("AGENTWORLD_MCP_SERVERS_BIN"), str(Path(sys.prefix) / "mcp-servers" / "bin"), None]
    for d in dirs:
        found = shutil.which(name, path=d) if d is not None else shutil.which(name)
        if found:
            return found
    return None


def need(name: str) -> str:
    path = server_bin(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install {name} into a tool venv, or set AGENTWORLD_MCP_SERVERS_BIN)")
    return path


def children() -> set[int]:
    from agentworld_gym.mcp.client import _child_pids

    return _child_pids()
