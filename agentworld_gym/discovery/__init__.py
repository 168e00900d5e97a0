"""Agentic environment discovery: real tool ecosystems and catalogs -> validated, playable themes.

Stages (one module each): `sources` (catalog readers), `mapping` (onto the 20/50 taxonomy),
`infer` (schema inference / archetype composition), `build` (complexification, world building),
`forge` (executable tools from template specs), `validate` (generated unit tests), `pipeline`
(the whole chain, resumable `discover`), `pool` (the built-in pool index).
Bring your own tools: `formats` (inputs recognised by shape), `summary` (what a run kept and
dropped, per tool), `load` (`load_pool(DIR)` registers a discovered folder).
"""

from .formats import read_catalog, read_input, read_mcp
from .pipeline import ThemeResult, discover, forge_theme, prepare, run_source, theme_from_record
from .sources import BadInput, Source

__all__ = ["BadInput", "Source", "ThemeResult", "discover", "forge_theme", "prepare", "read_catalog", "read_input", "read_mcp", "run_source", "theme_from_record"]
