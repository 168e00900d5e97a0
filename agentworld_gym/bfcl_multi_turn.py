"""ALIAS (issue #40): `agentworld_gym.bfcl_multi_turn` moved to `agentworld_gym.suites.bfcl_multi_turn`; this old path keeps working (same module object)."""

import sys
import warnings

from .suites import bfcl_multi_turn as _moved

warnings.warn("agentworld_gym.bfcl_multi_turn moved to agentworld_gym.suites.bfcl_multi_turn (issue #40): import it from there", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
