"""Theme sources: real tool ecosystems (Toucan-format MCP server specs, BFCL function docs, any
list of tool schemas), real server catalogs (name/description/category only) and the project's
own catalog generated from the taxonomy. Bad lines are reported, never fatal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .infer import stable_seed


@dataclass
class Source:
    name: str
    kind: str  # toucan | bfcl | tools | tensorblock | catalog
    labels: tuple[str, ...] = ()
    description: str = ""  # used for taxonomy mapping only; never copied into a theme
    tools: list[dict] | None = None  # [{"name", "parameters"}] when the source has real tool schemas
    ref: str = ""  # where it came from (file:line)
    code: str | None = None  # an L2 code when the source already knows it (catalog)
    variant: int = 0


@dataclass
class BadInput:
    ref: str
    reason: str


def _tool(d: dict) -> dict:
    """{"name", "parameters"} from Toucan / OpenAI / BFCL / MCP shapes."""
    if d.get("type") == "function" and isinstance(d.get("function"), dict):
        d = d["function"]
    params = d.get("parameters", d.get("input_schema", d.get("inputSchema")))
    if isinstance(params, dict) and params.get("type") == "dict":  # BFCL writes Python type names
        params = _bfcl_schema(params)
    return {"name": d.get("name", ""), "parameters": params if params is not None else {"type": "object", "properties": {}}}


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


def read_toucan(path: Path, with_tools_only: bool = True) -> Iterator[Source | BadInput]:
    for i, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            tools = [_tool(t) for t in d.get("tools") or [] if isinstance(t, dict)]
            if with_tools_only and not tools:
                continue
            yield Source(str(d["server_name"]), "toucan", (str(d.get("primary_label", "")), *map(str, d.get("secondary_labels") or ())),
                         str(d.get("description") or ""), tools, f"{path}:{i}")
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            yield BadInput(f"{path}:{i}", f"malformed line ({type(exc).__name__}: {str(exc)[:80]})")


def read_tensorblock(path: Path) -> Iterator[Source | BadInput]:
    for i, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            yield Source(str(d["name"]), "tensorblock", (str(d.get("category", "")),), str(d.get("description") or ""), None, f"{path}:{i}",
                         variant=stable_seed(d["name"]) % 997)
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            yield BadInput(f"{path}:{i}", f"malformed line ({type(exc).__name__}: {str(exc)[:80]})")


def read_tool_file(path: Path) -> Iterator[Source | BadInput]:
    """A JSON list of tool schemas, or JSON Lines of them (BFCL function docs): one source per file."""
    path = Path(path)
    tools, bad = [], []
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        items = data if isinstance(data, list) else data.get("tools", [data]) if isinstance(data, dict) else []
    except json.JSONDecodeError:
        items = []
        for i, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    items.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    bad.append(BadInput(f"{path}:{i}", f"malformed line ({exc.msg})"))
    for item in items:
        if isinstance(item, dict):
            tools.append(_tool(item))
    yield from bad
    name = path.stem.replace("_", " ")
    kind = "bfcl" if "multi_turn_func_doc" in str(path) else "tools"
    if tools:
        yield Source(name, kind, (), "", tools, str(path))
    else:
        yield BadInput(str(path), "no tool schemas found")


def catalog_sources(per_l2: int = 30) -> Iterator[Source]:
    """The project's own catalog: `per_l2` composed themes for each of the 50 L2 categories."""
    from ..envs import taxonomy

    for code in taxonomy.L2:
        for v in range(per_l2):
            yield Source(f"{code}#{v}", "catalog", (), "", None, f"catalog:{code}:{v}", code=code, variant=v)


def read_catalog(path: str | Path) -> Iterator[Source | BadInput]:
    """Any supported catalog: a directory of tool files, a Toucan or TensorBlock JSONL, a tool list."""
    path = Path(path)
    if path.is_dir():
        for p in sorted(path.glob("*.json*")):
            yield from read_tool_file(p)
        return
    if not path.exists():
        yield BadInput(str(path), "no such file")
        return
    with path.open(encoding="utf-8") as f:
        first = next((line for line in f if line.strip()), "")
    try:
        head = json.loads(first)
    except json.JSONDecodeError:
        head = None
    if isinstance(head, dict) and "server_name" in head:
        yield from read_toucan(path)
    elif isinstance(head, dict) and "category" in head and "tools" not in head and "parameters" not in head:
        yield from read_tensorblock(path)
    else:
        yield from read_tool_file(path)
