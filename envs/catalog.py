"""The generated theme catalog: ~2,300 discovered themes (composed for all 50 L2 categories, and
derived from real Toucan MCP servers), registered on import from a compact index.

Registration must stay cheap, so each id goes straight into gymnasium's registry (an `EnvSpec` per
id, no per-call checks) and into ours with a loader; the theme itself (world + forged tools) is
rebuilt from its recipe by the discovery pipeline on the first `get_theme()` / `gym.make()`.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

from agentworld_gym.errors import ConfigError

from . import taxonomy
from .registry import _ENTRIES, ENTRY_POINT, ThemeEntry, env_id, register_pool, register_theme

INDEX_PATH = Path(__file__).resolve().parent / "data" / "pool_index.json"
_ROWS: dict[str, list] = {}
_FACTS: list | None = None
STATS: dict = {}


def catalog_theme(theme_id: str):
    """Rebuild one catalog theme from its recipe (deterministic; the world is cached on disk)."""
    global _FACTS
    from agentworld_gym.discovery.pipeline import forge_theme, prepare
    from agentworld_gym.discovery.pool import load_facts, recipe_source

    row = _ROWS[theme_id]
    if row[3] != "catalog" and _FACTS is None:
        _FACTS = load_facts(INDEX_PATH.parent)
    prep = prepare(recipe_source(row, _FACTS), theme_id)
    keep = set(row[5])
    templates = [t for t in prep.templates if t["name"] in keep]
    if len(templates) != len(keep):
        raise ConfigError(f"Expected theme {theme_id!r} to rebuild its {len(keep)} validated tools, got {len(templates)}. "
                          "The pool index is out of date: rebuild it with `python -m agentworld_gym.discovery.pool`.")
    return forge_theme(prep.spec, templates)


def register_catalog(path: Path = INDEX_PATH) -> int:
    """Register every theme of the index not registered yet (flagships win); returns how many."""
    if os.environ.get("AGENTWORLD_NO_CATALOG") or not path.exists():
        return 0
    data = json.loads(path.read_text(encoding="utf-8"))
    STATS.update(data.get("stats", {}))
    registry = gym.registry
    n = 0
    l1s = set()
    for row in data["themes"]:
        tid, l2 = row[0], row[1]
        if tid in _ENTRIES or tid.startswith("pool"):
            continue
        cat = taxonomy.L2[l2]
        l1 = taxonomy.L1[cat.parent].name
        _ROWS[tid] = row
        register_theme(ThemeEntry(tid, partial(catalog_theme, tid), l1, cat.name, row[3], len(row[5])), gym_register=False)
        eid = env_id(tid)
        registry[eid] = EnvSpec(id=eid, entry_point=ENTRY_POINT, kwargs={"theme": tid}, disable_env_checker=True)
        l1s.add(l1)
        n += 1
    for l1 in sorted(l1s):
        register_pool(l1)
    return n


def label_of(theme_id: str) -> str | None:
    """The L3 label of a catalog theme (None for themes outside the catalog)."""
    row = _ROWS.get(theme_id)
    return row[2] if row else None
