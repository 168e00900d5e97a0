"""Using what `agentworld discover --out DIR` wrote: `load_pool(DIR)` registers every kept theme.

    import gymnasium as gym, agentworld_gym
    ids = agentworld_gym.load_pool("my_pool")      # ['AgentWorld/local.bird-sightings-v0', ...]
    env = gym.make(ids[0])

Discovered ids carry a prefix ("local." by default) that no built-in id has (built-in slugs have no
dot), so a discovered theme never replaces a built-in one; with prefix="" an id that is already
registered raises instead. A theme is rebuilt from its record on the first `gym.make()`.
Processes started fresh (not forked) call `load_pool` again before making the env.
"""

from __future__ import annotations

import dataclasses
import re
from functools import partial
from pathlib import Path

from ..errors import ConfigError
from ..theme import Theme

DEFAULT_PREFIX = "local."
_ORIGIN: dict[str, Path] = {}  # registered discovered theme id -> the record it came from


def _theme(record_path: Path, theme_id: str) -> Theme:
    from ..world import ThemeSpec
    from .pipeline import forge_theme, read_record

    rec = read_record(record_path)
    if rec is None:
        raise ConfigError(f"Expected a theme record at {record_path}, got a missing or unreadable file. Rerun `agentworld discover`.")
    spec = dataclasses.replace(ThemeSpec.from_dict(rec["spec"]), id=theme_id)  # the env and its tasks name the registered id
    return forge_theme(spec, rec["tools"])


def load_pool(path: str | Path, prefix: str = DEFAULT_PREFIX) -> list[str]:
    """Register the themes a discover run kept in `path` (its themes/*.json); returns their env ids,
    `AgentWorld/<prefix><id>-v0`. Loading the same folder again is a no-op.

    Raises ConfigError when the folder has no kept theme, or an id is already registered from
    somewhere else (a built-in theme, or another folder): pass another `prefix` to load both."""
    import gymnasium as gym
    from gymnasium.envs.registration import EnvSpec

    from ..envs.registry import _ENTRIES, ENTRY_POINT, ThemeEntry, env_id, register_theme
    from .pipeline import read_record

    path = Path(path)
    themes_dir = path / "themes"
    if not themes_dir.is_dir():
        raise ConfigError(f"Expected a folder written by `agentworld discover --out DIR` (with DIR/themes/*.json), got {str(path)!r}.")
    if prefix and not re.fullmatch(r"[\w:.-]+", prefix):
        raise ConfigError(f"Expected a prefix of letters, digits, '.', ':' or '-' (a gymnasium id part), got {prefix!r}.")
    records = [(p, read_record(p)) for p in sorted(themes_dir.glob("*.json"))]
    kept = [(p.resolve(), rec) for p, rec in records if rec is not None and rec["ok"]]
    if not kept:
        raise ConfigError(f"Expected at least one kept theme in {themes_dir}, got {len(records)} records and none kept. "
                          f"See {path / 'report.json'} for why each was dropped.")
    clashes = [(f"{prefix}{rec['id']}", p) for p, rec in kept if f"{prefix}{rec['id']}" in _ENTRIES and _ORIGIN.get(f"{prefix}{rec['id']}") != p]
    if clashes:
        tid, p = clashes[0]
        where = _ORIGIN.get(tid) or f"the built-in {_ENTRIES[tid].source} theme"
        raise ConfigError(f"Expected discovered ids that are not registered yet, got {len(clashes)} already taken, e.g. {tid!r} "
                          f"(from {where}; this one from {p}). Load with another prefix, e.g. load_pool({str(path)!r}, prefix='mine.').")
    ids = []
    for p, rec in kept:
        tid = f"{prefix}{rec['id']}"
        if tid not in _ENTRIES:
            spec = rec["spec"]
            register_theme(ThemeEntry(tid, partial(_theme, p, tid), spec["category"], spec["subcategory"], "local", len(rec["tools"])),
                           gym_register=False)
            gym.registry[env_id(tid)] = EnvSpec(id=env_id(tid), entry_point=ENTRY_POINT, kwargs={"theme": tid}, disable_env_checker=True)
            _ORIGIN[tid] = p
        ids.append(env_id(tid))
    return ids
