"""ALIAS (issue #40): `agentworld_gym.bfcl` moved to `agentworld_gym.suites.bfcl`; this old path keeps working (same module object)."""

import sys
import warnings

from .suites import bfcl as _moved

warnings.warn("agentworld_gym.bfcl moved to agentworld_gym.suites.bfcl (issue #40): import it from there", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
