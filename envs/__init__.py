"""The environment pool: flagship themes (and, when present, the generated catalog), registered
with gymnasium on import as AgentWorld/<theme>-v0."""

from __future__ import annotations

from .registry import ThemeEntry, entries, env_id, get_theme, register_pool, register_theme, theme_ids

# id -> (L1 category, L2 subcategory). Modules live in envs/themes/<id>.py and expose THEME.
FLAGSHIPS: dict[str, tuple[str, str]] = {
    "finance": ("Finance & Markets", "Financial Analysis & Portfolio"),
    "websearch": ("Search & Information Retrieval", "General Web Search"),
    "scholar": ("Academic & Scientific Research", "Literature Search & Discovery"),
    "social": ("Social Media & Community", "Social Network Integration"),
    "testing": ("Browser Automation & Testing", "UI Testing & Quality Assurance"),
    "mlhub": ("AI & Machine Learning", "Model Hubs & LLM APIs"),
    "compute": ("Mathematics & Computation", "Arithmetic & General Calculation"),
    "music": ("Media & Entertainment", "Video & Audio Processing"),
    "docs": ("Document & Design", "Office & Text Processing"),
    "security": ("Cybersecurity & Network Analysis", "Network Monitoring & Threat Intelligence"),
    "retail": ("Data Storage & Databases", "Relational Databases"),
    "travel": ("Travel & Transportation", "Booking & Hospitality"),
    "clinic": ("Healthcare & Life Sciences", "Clinical Medicine & Health"),
    "tickets": ("Reasoning & Decision Support", "Structured Thinking & Planning"),
    "weather": ("Weather & Geospatial", "Weather Forecasting"),
    "crypto": ("Cryptocurrency & Web3", "DeFi & DEX Protocols"),
    "github": ("Software Development", "Code Execution & Analysis"),
    "cloud": ("System & Cloud Infrastructure", "Cloud Platform Services"),
    "calendar": ("Communication & General Utilities", "Time, Calendar & Scheduling"),
    "news": ("News & Trends", "News Aggregation & Feeds"),
}


def register_all() -> None:
    for theme_id, (category, subcategory) in FLAGSHIPS.items():
        register_theme(ThemeEntry(theme_id, f"agentworld_gym.envs.themes.{theme_id}:THEME", category, subcategory))



def register_external() -> None:
    """AgentWorld/mcp-v0 and the tau2 domains available here (agentworld_gym.mcp.registration)."""
    from agentworld_gym.mcp.registration import register_external as register

    register()


register_all()
register_external()
from .catalog import register_catalog  # noqa: E402  (after the flagships: they win on a shared id)

register_catalog()
register_pool()  # AgentWorld/pool-v0 (per-category pools are registered with their first theme)

__all__ = ["FLAGSHIPS", "ThemeEntry", "entries", "env_id", "get_theme", "register_theme", "theme_ids"]
