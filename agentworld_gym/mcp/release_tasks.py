"""ALIAS (issue #40): `agentworld_gym.mcp.release_tasks` moved to `agentworld_gym.suites.release`; this old path keeps working (same module object)."""

import sys
import warnings

from ..suites import release as _moved

warnings.warn("agentworld_gym.mcp.release_tasks moved to agentworld_gym.suites.release (issue #40): import it from there", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
