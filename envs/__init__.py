"""The environment pool: flagship themes (and, when present, the generated catalog), registered
with gymnasium on import as AgentWorld/<theme>-v0."""

from __future__ import annotations

from .registry import ThemeEntry, entries, env_id, get_theme, register_theme, theme_ids

# id -> (L1 category, L2 subcategory). Modules live in envs/themes/<id>.py and expose THEME.
FLAGSHIPS: dict[str, tuple[str, str]] = {
    "finance": ("Finance & Markets", "Financial Analysis & Portfolio"),
}


def register_all() -> None:
    for theme_id, (category, subcategory) in FLAGSHIPS.items():
        register_theme(ThemeEntry(theme_id, f"agentworld_gym.envs.themes.{theme_id}:THEME", category, subcategory))


register_all()

__all__ = ["FLAGSHIPS", "ThemeEntry", "entries", "env_id", "get_theme", "register_theme", "theme_ids"]
