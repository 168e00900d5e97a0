"""Typed errors for programmer misuse.

Two error channels exist in agentworld-gym: what an *agent* does wrong (bad JSON, unknown tool,
wrong argument types) becomes an error observation inside the episode and never raises; what a
*programmer* does wrong raises one of the errors below, phrased "Expected X, got Y" with a hint.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class AgentWorldError(Exception):
    """Base class for every error agentworld-gym raises on purpose."""


class UnknownThemeError(AgentWorldError, KeyError):
    """A theme or env id that is not registered."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class ConfigError(AgentWorldError, ValueError):
    """Bad constructor arguments or an inconsistent spec."""


class UnknownArgumentError(ConfigError, TypeError):
    """A keyword argument the constructor does not take (a TypeError too, as Python would raise)."""


class MissingFileError(ConfigError, FileNotFoundError):
    """A file or folder named in an argument that does not exist (a FileNotFoundError too)."""

    def __str__(self) -> str:  # OSError would format (errno, strerror)
        return str(self.args[0]) if self.args else ""


class SnapshotError(ConfigError):
    """Bytes given to `restore()` that are not a snapshot of this env's theme (or not a readable database)."""


class ResetNeededError(AgentWorldError, RuntimeError):
    """`step()` called before `reset()` or after the episode ended."""


class ToolDefinitionError(AgentWorldError, TypeError):
    """A tool function whose signature or docstring cannot be turned into a schema."""


class InputFormatError(ConfigError):
    """A discovery input whose shape is not one of the accepted tool-spec formats (or that holds no tools)."""


class TaskError(AgentWorldError, ValueError):
    """A task that cannot be synthesized, loaded or verified."""


class PhrasingError(TaskError):
    """A language model's rewrite of a task request drops a value the verifier needs or leaks one it must not."""


class BackendError(AgentWorldError, RuntimeError):
    """An external backend (MCP server, tool subprocess) that cannot start, dies, hangs or breaks its contract."""


class DependencyError(AgentWorldError, ImportError):
    """An optional dependency (an extra) is missing."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """A short ' Did you mean ...?' suffix, or '' when nothing is close."""
    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.6)
    if not close:
        return ""
    return " Did you mean " + " or ".join(repr(c) for c in close) + "?"


def check_choice(name: str, value, choices: Iterable) -> None:
    """Raise a ConfigError naming the choices (and the closest one) when `value` is not among them."""
    choices = tuple(choices)
    if value not in choices:
        hint = did_you_mean(value, [str(c) for c in choices]) if isinstance(value, str) else ""
        raise ConfigError(f"Expected {name} in {choices}, got {value!r}.{hint}")


def check_unknown_kwargs(owner: str, given: Iterable[str], accepted: Iterable[str]) -> None:
    """Raise an UnknownArgumentError for the first keyword `owner` does not take, with a did-you-mean."""
    accepted = sorted(accepted)
    for name in given:
        if name not in accepted:
            raise UnknownArgumentError(f"Expected a keyword argument of {owner} ({', '.join(accepted)}), "
                                       f"got {name!r}.{did_you_mean(name, accepted)}")


def require(module: str, extra: str):
    """Import an optional dependency or raise a DependencyError naming the extra to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise DependencyError(
            f"Expected the optional package {module!r} to be installed, got ImportError: {exc}. "
            f"Install it with: pip install 'agentworld-gym[{extra}]'"
        ) from exc
