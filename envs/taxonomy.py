"""The environment taxonomy of the Agent-World paper: 20 first-tier (L1) and 50 second-tier (L2)
categories. Every theme carries its L1, its L2 and a free-text third-level (L3) label."""

from __future__ import annotations

from dataclasses import dataclass

from agentworld_gym.errors import ConfigError, did_you_mean


@dataclass(frozen=True)
class Category:
    code: str  # "L1-04" or "L2-10"
    name: str
    parent: str | None = None  # the L1 code of an L2 category


# (L1 code, L1 name, ((L2 code, L2 name), ...)) — the paper's category tree (names are facts).
_TREE = (
    ("L1-01", "Search & Information Retrieval", (("L2-01", "General Web Search"), ("L2-02", "Web Content Extraction"), ("L2-03", "API Gateway & Aggregation"))),
    ("L1-02", "Academic & Scientific Research", (("L2-04", "Literature Search & Discovery"), ("L2-05", "Citation & Scholarly Analytics"))),
    ("L1-03", "Social Media & Community", (("L2-06", "Social Network Integration"), ("L2-07", "Video & Content Platforms"))),
    ("L1-04", "Finance & Markets", (("L2-08", "Stock & Equity Data"), ("L2-09", "Currency & Foreign Exchange"), ("L2-10", "Financial Analysis & Portfolio"))),
    ("L1-05", "Cryptocurrency & Web3", (("L2-11", "Crypto Market Data"), ("L2-12", "DeFi & DEX Protocols"), ("L2-13", "Blockchain Infrastructure & Wallets"))),
    ("L1-06", "Weather & Geospatial", (("L2-14", "Weather Forecasting"), ("L2-15", "Maps & Location Services"), ("L2-16", "Earth Science & Environmental Monitoring"))),
    ("L1-07", "Software Development", (("L2-17", "Code Execution & Analysis"), ("L2-18", "Package & Dependency Management"), ("L2-19", "Framework & Component Libraries"))),
    ("L1-08", "System & Cloud Infrastructure", (("L2-20", "Shell & Terminal Operations"), ("L2-21", "Cloud Platform Services"), ("L2-22", "DevOps & Workflow Automation"))),
    ("L1-09", "Browser Automation & Testing", (("L2-23", "Browser Control & Interaction"), ("L2-24", "UI Testing & Quality Assurance"))),
    ("L1-10", "Data Storage & Databases", (("L2-25", "Relational Databases"), ("L2-26", "NoSQL & Document Stores"), ("L2-27", "Memory & Knowledge Management"))),
    ("L1-11", "AI & Machine Learning", (("L2-28", "Model Hubs & LLM APIs"), ("L2-29", "Image & Multimedia Generation"), ("L2-30", "Agent Orchestration & Multi-Agent"))),
    ("L1-12", "Reasoning & Decision Support", (("L2-31", "Structured Thinking & Planning"), ("L2-32", "Argumentation & Decision Frameworks"))),
    ("L1-13", "Mathematics & Computation", (("L2-33", "Arithmetic & General Calculation"), ("L2-34", "Scientific & Symbolic Computing"))),
    ("L1-14", "Media & Entertainment", (("L2-35", "Video & Audio Processing"), ("L2-36", "Gaming & Interactive"), ("L2-37", "Arts, Culture & Museums"))),
    ("L1-15", "Healthcare & Life Sciences", (("L2-38", "Clinical Medicine & Health"), ("L2-39", "Chemistry, Biology & Bioinformatics"))),
    ("L1-16", "Travel & Transportation", (("L2-40", "Booking & Hospitality"), ("L2-41", "Transit, Navigation & Vehicles"))),
    ("L1-17", "Document & Design", (("L2-42", "Office & Text Processing"), ("L2-43", "Design, UI & Visualization"))),
    ("L1-18", "News & Trends", (("L2-44", "News Aggregation & Feeds"), ("L2-45", "Trend Analytics & Monitoring"))),
    ("L1-19", "Cybersecurity & Network Analysis", (("L2-46", "Offensive Security & Penetration Testing"), ("L2-47", "Network Monitoring & Threat Intelligence"))),
    ("L1-20", "Communication & General Utilities", (("L2-48", "Messaging & Notification"), ("L2-49", "Time, Calendar & Scheduling"), ("L2-50", "Education, Reference & Lifestyle"))),
)

L1: dict[str, Category] = {code: Category(code, name) for code, name, _ in _TREE}
L2: dict[str, Category] = {code: Category(code, name, l1) for l1, _, subs in _TREE for code, name in subs}
_BY_NAME: dict[str, Category] = {c.name.lower(): c for c in (*L1.values(), *L2.values())}


def category(code_or_name: str) -> Category:
    """An L1 or L2 category by code ("L2-10") or name (case-insensitive)."""
    c = L1.get(code_or_name) or L2.get(code_or_name) or _BY_NAME.get(code_or_name.lower())
    if c is None:
        raise ConfigError(f"Expected a taxonomy code or name, got {code_or_name!r}.{did_you_mean(code_or_name, [*L1, *L2, *(c.name for c in _BY_NAME.values())])}")
    return c


def l1_of(l2: str) -> Category:
    """The L1 category above an L2 category (code or name)."""
    return L1[category(l2).parent]


def subcategories(l1: str) -> list[Category]:
    code = category(l1).code
    return [c for c in L2.values() if c.parent == code]
