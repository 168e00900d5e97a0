"""Theme sources: real tool ecosystems (Toucan-format MCP server specs, BFCL function docs, any
list of tool schemas), real server catalogs (name/description/category only) and the project's
own catalog generated from the taxonomy. Bad lines are reported, never fatal; which shapes are
accepted and how they are recognised is in `formats`."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Source:
    name: str
    kind: str  # toucan | bfcl | tools | tensorblock | catalog
    labels: tuple[str, ...] = ()
    description: str = ""  # taxonomy mapping; a composed catalog theme also states it as what its server is about
    tools: list[dict] | None = None  # [{"name", "description", "parameters"}] when the source has real tool schemas
    ref: str = ""  # where it came from (file:line)
    code: str | None = None  # an L2 code when the source already knows it (catalog)
    variant: int = 0
    entities: tuple[str, ...] = ()  # a composed catalog theme's entity keys (discovery.entities)
    label: str = ""  # its L3 label


@dataclass
class BadInput:
    ref: str
    reason: str


def _tool(d: dict) -> dict:
    """{"name", "description", "parameters"} from Toucan / OpenAI / Anthropic / BFCL / MCP shapes.

    The description and the parameter schema (with its per-parameter descriptions) are passed on
    unchanged: they are the tool's real wording, which the forged tool keeps."""
    if d.get("type") == "function" and isinstance(d.get("function"), dict):
        d = d["function"]
    params = d.get("parameters", d.get("input_schema", d.get("inputSchema")))
    if isinstance(params, dict) and params.get("type") == "dict":  # BFCL writes Python type names
        params = _bfcl_schema(params)
    description = d.get("description")
    out = {"name": d.get("name", ""), "description": description if isinstance(description, str) else "",
           "parameters": params if params is not None else {"type": "object", "properties": {}}}
    output = d.get("outputSchema", d.get("output_schema"))
    if isinstance(output, dict):  # what the tool returns names fields its records hold
        out["output_schema"] = output
    return out


def _bfcl_schema(s):
    if isinstance(s, dict):
        out = {k: _bfcl_schema(v) for k, v in s.items()}
        if out.get("type") == "dict":
            out["type"] = "object"
        elif out.get("type") == "float":
            out["type"] = "number"
        elif out.get("type") == "tuple":
            out["type"] = "array"
        elif out.get("type") == "any":
            out.pop("type")
        return out
    if isinstance(s, list):
        return [_bfcl_schema(x) for x in s]
    return s


def _lines(path: Path) -> Iterator[str]:
    with Path(path).open(encoding="utf-8") as f:
        yield from f


def toucan_source(d: dict, ref: str) -> Source:
    """One Toucan server record as a Source (its `tools` may be empty)."""
    tools = [_tool(t) for t in d.get("tools") or [] if isinstance(t, dict)]
    return Source(str(d["server_name"]), "toucan", (str(d.get("primary_label", "")), *map(str, d.get("secondary_labels") or ())),
                  str(d.get("description") or ""), tools, ref)


def tensorblock_source(d: dict, ref: str) -> Source:
    """One TensorBlock server profile (name, description, category; no tools) as a Source."""
    return Source(str(d["name"]), "tensorblock", (str(d.get("category", "")),), str(d.get("description") or ""), None, ref,
                  variant=stable_seed(d["name"]) % 997)


def read_toucan(path: Path, with_tools_only: bool = True) -> Iterator[Source | BadInput]:
    for i, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        try:
            src = toucan_source(json.loads(line), f"{path}:{i}")
            if src.tools or not with_tools_only:
                yield src
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            yield BadInput(f"{path}:{i}", f"malformed line ({type(exc).__name__}: {str(exc)[:80]})")


def read_tensorblock(path: Path) -> Iterator[Source | BadInput]:
    for i, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        try:
            yield tensorblock_source(json.loads(line), f"{path}:{i}")
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            yield BadInput(f"{path}:{i}", f"malformed line ({type(exc).__name__}: {str(exc)[:80]})")


def catalog_sources(per_l2: int = 30) -> Iterator[Source]:
    """The project's own catalog: `per_l2` composed themes for each of the 50 L2 categories."""
    from ..envs import taxonomy

    for code in taxonomy.L2:
        for v in range(per_l2):
            yield Source(f"{code}#{v}", "catalog", (), "", None, f"catalog:{code}:{v}", code=code, variant=v)


def stable_seed(*parts) -> int:
    return zlib.crc32("|".join(map(str, parts)).encode())
