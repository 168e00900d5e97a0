"""ALIAS (issue #40): `agentworld_gym.mcp.tau2` moved to `agentworld_gym.suites.tau2`; this old path keeps working (same module object)."""

import sys
import warnings

from ..suites import tau2 as _moved

warnings.warn("agentworld_gym.mcp.tau2 moved to agentworld_gym.suites.tau2 (issue #40): import it from there", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
