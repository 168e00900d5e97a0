"""ALIAS (issue #40): `agentworld_gym.bench` moved to `agentworld_gym.suites.core`; this old path keeps working (same module object)."""

import sys
import warnings

from .suites import core as _moved

warnings.warn("agentworld_gym.bench moved to agentworld_gym.suites.core (issue #40): import it from there", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
