"""The theme registry: every theme id, its category, and how to load it (lazily).

Registering an id is cheap (a dict entry and a `gym.register` call); a theme's module, world and
tools load on the first `get_theme()`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym

from agentworld_gym.errors import ConfigError, UnknownThemeError, did_you_mean
from agentworld_gym.theme import Theme

NAMESPACE = "AgentWorld"
ENTRY_POINT = "agentworld_gym.env:AgentWorldEnv"


@dataclass(frozen=True)
class ThemeEntry:
    id: str
    loader: str | Callable[[], Theme]  # "module:attribute" or a function returning the Theme
    category: str
    subcategory: str
    source: str = "flagship"
    n_tools: int | None = None


_ENTRIES: dict[str, ThemeEntry] = {}
_LOADED: dict[str, Theme] = {}


def env_id(theme_id: str) -> str:
    return f"{NAMESPACE}/{theme_id}-v0"


def register_theme(entry: ThemeEntry | Theme, *, gym_register: bool = True, replace: bool = False) -> str:
    """Add a theme to the registry (and to gymnasium as AgentWorld/<id>-v0); returns the env id.

    An id that is already registered raises ConfigError unless `replace=True`: a theme never
    silently takes the place of another (discovered themes load under a prefix, see `load_pool`)."""
    theme_id = entry.id
    if theme_id in _ENTRIES and not replace:
        raise ConfigError(f"Expected a theme id that is not registered yet, got {theme_id!r} (a {_ENTRIES[theme_id].source} theme). "
                          "Pass replace=True to replace it, or register yours under another id "
                          "(agentworld_gym.load_pool(DIR, prefix=...) for a discovered folder).")
    if isinstance(entry, Theme):
        theme = entry
        _LOADED[theme.id] = theme
        entry = ThemeEntry(theme.id, lambda: theme, theme.spec.category, theme.spec.subcategory, theme.spec.source, len(theme.toolset))
    else:
        _LOADED.pop(entry.id, None)
    _ENTRIES[entry.id] = entry
    if gym_register:
        gym.register(id=env_id(entry.id), entry_point=ENTRY_POINT, kwargs={"theme": entry.id}, disable_env_checker=True)
        register_pool(entry.category)
    return env_id(entry.id)


POOL_ENTRY_POINT = "agentworld_gym.envs.pool:PoolEnv"


def category_slug(category: str) -> str:
    """'Finance & Markets' -> 'finance-markets' (the pool id of an L1 category)."""
    return re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-")

_POOLS: set[str] = set()


def register_pool(category: str | None = None) -> str:
    """Register AgentWorld/pool-v0 (category None) or AgentWorld/pool-<category slug>-v0, once."""
    slug = category_slug(category) if category else ""
    name = f"pool-{slug}" if slug else "pool"
    if name not in _POOLS:
        _POOLS.add(name)
        gym.register(id=f"{NAMESPACE}/{name}-v0", entry_point=POOL_ENTRY_POINT, kwargs={"category": category or None},
                     disable_env_checker=True)
    return f"{NAMESPACE}/{name}-v0"


def theme_ids(source: str | None = None) -> list[str]:
    return [k for k, e in _ENTRIES.items() if source is None or e.source == source]


def entries() -> list[ThemeEntry]:
    return list(_ENTRIES.values())


def bare_id(name: str) -> str:
    """`AgentWorld/finance-v0` or `finance-v0` -> `finance`; a name that is itself a theme id stays as it is."""
    if name in _ENTRIES:
        return name
    if name.startswith(NAMESPACE + "/"):
        name = name[len(NAMESPACE) + 1:]
    return name if name in _ENTRIES else re.sub(r"-v\d+$", "", name)


def _external_names() -> dict[str, str]:
    """{bare name: gym id} of the AgentWorld envs that are not themes of this registry: pools, tau2 domains,
    Agent-World release environments, the generic MCP env."""
    prefix = NAMESPACE + "/"
    return {bare_id(gid): gid for gid in gym.registry if gid.startswith(prefix) and bare_id(gid) not in _ENTRIES}


def _unknown(name: str) -> UnknownThemeError:
    every = [*_ENTRIES, *_external_names()]
    return UnknownThemeError(f"Expected a registered theme (a name such as 'finance' or an id such as 'AgentWorld/finance-v0'), "
                             f"got {name!r}.{did_you_mean(bare_id(name), every)} Run `agentworld list` to see them all; themes "
                             "from `agentworld discover --out DIR` join every command with `--pool DIR`.")


def get_entry(theme_id: str) -> ThemeEntry:
    """The registered theme a user's name means: its id (`finance`) or its env id (`AgentWorld/finance-v0`)."""
    bare = bare_id(theme_id)
    entry = _ENTRIES.get(bare)
    if entry is None:
        external = _external_names().get(bare)
        if external is not None:
            raise UnknownThemeError(f"Expected a theme with a world of its own, got {theme_id!r}: {external} is an external "
                                    "environment (a pool, a tau2 domain, an Agent-World release environment or an MCP server) "
                                    f"that `agentworld play {bare}`, `show {bare}` and `bench --env {bare}` take, but that has "
                                    "no world here to serve or synthesize tasks from.")
        raise _unknown(theme_id)
    return entry


def gym_id(name: str) -> str:
    """The gymnasium id a user's name means, in every subcommand: a theme (`finance`, `AgentWorld/finance-v0`,
    `finance-v0`) or any other AgentWorld env (`pool`, `tau2-mock`, `release-crm_logger`, `AgentWorld/mcp-v0`).
    An unknown name raises UnknownThemeError with the closest names."""
    bare = bare_id(name)
    if bare in _ENTRIES:
        return env_id(bare)
    external = _external_names().get(bare)
    if external is not None:
        return external
    raise _unknown(name)


def get_theme(theme_id: str) -> Theme:
    entry = get_entry(theme_id)
    theme = _LOADED.get(entry.id)
    if theme is None:
        if callable(entry.loader):
            theme = entry.loader()
        else:
            module, _, attr = entry.loader.partition(":")
            theme = getattr(importlib.import_module(module), attr)
        _LOADED[entry.id] = theme
    return theme
