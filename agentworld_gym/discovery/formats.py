"""Discovery inputs: the shapes tool specs come in, recognised by shape (or forced by name).

`read_input(path)` parses a JSON or JSON Lines file (or a folder of them), decides which shape it
has and returns its servers as `Source`s, with every entry it could not use as a `BadInput` that
says why. `read_mcp(command)` lists the tools of a live MCP server. An input of no accepted shape,
or one that holds no tools, raises `InputFormatError` naming the accepted shapes and what was found;
it never quietly becomes a theme.

Tool names, descriptions and parameter schemas (with their descriptions) are passed on unchanged.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputFormatError
from .sources import BadInput, Source, _tool, tensorblock_source, toucan_source

# name -> what it looks like (shown in errors and in `agentworld discover --help`)
SHAPES: dict[str, str] = {
    "mcp-tools-list": 'an MCP tools/list result: {"tools": [{"name", "description", "inputSchema"}, ...]} '
                      "(or the JSON-RPC response around it, or the bare list)",
    "openai-tools": 'an OpenAI tools array: [{"type": "function", "function": {"name", "description", "parameters"}}, ...]',
    "anthropic-tools": 'an Anthropic tools array: [{"name", "description", "input_schema"}, ...]',
    "functions": 'function docs, JSON list or JSON Lines (BFCL, OpenAI functions): [{"name", "description", "parameters"}, ...]',
    "servers": 'a JSON or JSON Lines list of servers with tools: [{"name", "tools": [...]}, ...]; the tool lists may sit '
               'deeper, e.g. {"name", "tools": {"<config>": {"tools": [...]}}}',
    "toucan": 'Toucan MCP server records, JSON Lines: {"server_name", "primary_label", "tools": [...]}',
    "tensorblock": 'TensorBlock MCP server profiles, JSON Lines: {"name", "description", "category"} '
                   "(no tool lists: themes are composed from the description)",
    "mcp-command": 'a live MCP server over stdio: --mcp "COMMAND ARGS" (its tools/list is read)',
}
SINGLE_SERVER = ("mcp-tools-list", "openai-tools", "anthropic-tools", "functions")
_SCHEMA_KEYS = ("inputSchema", "input_schema", "parameters")
_NAME_KEYS = ("server_name", "name", "title", "serverName", "server", "id")
_SAMPLE = 50  # records looked at to decide a shape


@dataclass
class Input:
    """What one input gave: its shape, where it came from, and its servers and rejected entries."""

    format: str
    where: str
    items: list[Source | BadInput] = field(default_factory=list)

    @property
    def sources(self) -> list[Source]:
        return [i for i in self.items if isinstance(i, Source)]

    @property
    def bad(self) -> list[BadInput]:
        return [i for i in self.items if isinstance(i, BadInput)]


def accepted_shapes() -> str:
    return "\n".join(f"  {name:<16} {text}" for name, text in SHAPES.items())


def _fail(where: str, found: str, forced: str | None = None) -> InputFormatError:
    head = (f"Expected {where} to hold tools as {forced!r} ({SHAPES[forced]}), got {found}." if forced else
            f"Expected {where} in one of the accepted shapes, got {found}.")
    return InputFormatError(f"{head}\nAccepted shapes (detected by shape; force one with --format NAME):\n{accepted_shapes()}")


# ------------------------------------------------------------------------------------------ shapes

def _is_tool(d) -> bool:
    if not isinstance(d, dict):
        return False
    if d.get("type") == "function" and isinstance(d.get("function"), dict):
        d = d["function"]
    return isinstance(d.get("name"), str) and any(isinstance(d.get(k), dict) for k in _SCHEMA_KEYS)


def _is_openai(d) -> bool:
    return isinstance(d, dict) and d.get("type") == "function" and _is_tool(d)


def _has(key: str):
    return lambda d: isinstance(d, dict) and isinstance(d.get("name"), str) and isinstance(d.get(key), dict)


def nested_tools(obj, depth: int = 0) -> list[dict]:
    """Tool specs anywhere inside a server record: lists of tools, or {tool name: spec} maps under a
    "tools" key, at most a few levels down (e.g. tools -> <config name> -> tools). Deduplicated by name."""
    found: list[dict] = []
    if depth > 4:
        return found
    if isinstance(obj, list):
        tools = [x for x in obj if _is_tool(x)]
        found = tools or [t for x in obj if isinstance(x, (dict, list)) for t in nested_tools(x, depth + 1)]
    elif isinstance(obj, dict) and not _is_tool(obj):
        for key, value in obj.items():
            if key == "tools" and isinstance(value, dict) and value and all(
                    isinstance(v, dict) and "name" not in v and any(isinstance(v.get(k), dict) for k in _SCHEMA_KEYS) for v in value.values()):
                found += [{"name": name, **spec} for name, spec in value.items()]  # {tool name: spec}
            elif isinstance(value, (dict, list)):
                found += nested_tools(value, depth + 1)
    unique: dict[str, dict] = {}
    for t in found:
        unique.setdefault(str((t.get("function") or t).get("name")), t)
    return list(unique.values())


def _server_name(d: dict) -> str | None:
    return next((d[k].strip() for k in _NAME_KEYS if isinstance(d.get(k), str) and d[k].strip()), None)


def _share(records: list, test) -> float:
    sample = records[:_SAMPLE]
    return sum(1 for r in sample if test(r)) / len(sample) if sample else 0.0


def detect(data) -> str | None:
    """The shape of parsed JSON (a document, or the list of a JSON Lines file's records); None when unknown."""
    if isinstance(data, dict):
        inner = data.get("result") if isinstance(data.get("result"), dict) else data  # JSON-RPC response
        if isinstance(inner.get("tools"), list) and inner["tools"] and _share(inner["tools"], _is_tool) >= 0.5:
            return "mcp-tools-list"
        servers = data.get("servers", data.get("mcpServers"))
        if isinstance(servers, (list, dict)) and servers:
            return "servers"
        return "servers" if _server_name(data) and nested_tools(data) else None
    if not isinstance(data, list) or not data or _share(data, lambda r: isinstance(r, dict)) < 0.5:
        return None
    for shape, test in (("openai-tools", _is_openai), ("toucan", lambda r: isinstance(r, dict) and "server_name" in r),
                        ("mcp-tools-list", _has("inputSchema")), ("anthropic-tools", _has("input_schema")),
                        ("functions", _has("parameters"))):
        if _share(data, test) >= 0.5:
            return shape
    if _share(data, lambda r: isinstance(r, dict) and _server_name(r) is not None) >= 0.5 and any(nested_tools(r) for r in data[:_SAMPLE]):
        return "servers"
    if _share(data, lambda r: isinstance(r, dict) and isinstance(r.get("name"), str) and "category" in r and "description" in r) >= 0.5:
        return "tensorblock"
    return None


def describe(data) -> str:
    """A short account of what parsed JSON holds, for error messages."""
    if isinstance(data, dict):
        return f"a JSON object with keys {sorted(map(str, data))[:12]}"
    if isinstance(data, list):
        if not data:
            return "an empty list"
        first = data[0]
        kinds = sorted({type(x).__name__ for x in data})
        what = f"a list of {len(data)} {'/'.join(kinds)} item{'s' if len(data) != 1 else ''}"
        if isinstance(first, dict):
            nested = sum(bool(nested_tools(r)) for r in data[:_SAMPLE] if isinstance(r, dict))
            return (f"{what}; the first has keys {sorted(map(str, first))[:12]}; "
                    f"{nested} of the first {min(len(data), _SAMPLE)} hold tool specs (an object with 'name' and "
                    f"one of {list(_SCHEMA_KEYS)})")
        return f"{what}; the first is {json.dumps(first)[:80]}"
    return f"a JSON {type(data).__name__} ({json.dumps(data)[:60]})"


# ------------------------------------------------------------------------------------------ readers

def _single_server(records: list[tuple[str, object]], name: str, kind: str, ref: str) -> list[Source | BadInput]:
    """One server from a list of tool specs; entries that are not tool specs are reported."""
    tools, out = [], []
    for ref, rec in records:
        if _is_tool(rec):
            tools.append(_tool(rec))
        else:
            out.append(BadInput(ref, f"not a tool spec ({describe([rec])})"))
    if tools:
        out.append(Source(name, kind, (), "", tools, ref))
    return out


def _servers(records: list[tuple[str, object]]) -> list[Source | BadInput]:
    out: list[Source | BadInput] = []
    for ref, rec in records:
        if not isinstance(rec, dict):
            out.append(BadInput(ref, f"not a server record ({describe([rec])})"))
            continue
        name = _server_name(rec)
        tools = [_tool(t) for t in nested_tools(rec)]
        if name is None:
            out.append(BadInput(ref, f"server record without a name (expected one of {list(_NAME_KEYS)})"))
        elif not tools:
            out.append(BadInput(ref, "server lists no tools"))
        else:
            labels = rec.get("categories") or rec.get("tags") or ([rec["category"]] if rec.get("category") else [])
            labels = tuple(str(x) for x in labels) if isinstance(labels, list) else (str(labels),)
            out.append(Source(name, "tools", labels, str(rec.get("description") or ""), tools, ref))
    return out


def _records_of(shape: str, data) -> list | None:
    """The list of records a shape reads from a parsed document (None when the document cannot be one)."""
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        return None
    if shape == "mcp-tools-list":
        inner = data.get("result") if isinstance(data.get("result"), dict) else data
        return inner.get("tools") if isinstance(inner.get("tools"), list) else None
    if shape == "servers":
        servers = data.get("servers", data.get("mcpServers"))
        if isinstance(servers, dict):  # {server name: {..., "tools": [...]}}
            return [{"name": k, **v} if isinstance(v, dict) else v for k, v in servers.items()]
        return servers if isinstance(servers, list) else [data]
    if isinstance(data.get("tools"), list):
        return data["tools"]
    return None


def read_records(shape: str, records: list[tuple[str, object]], name: str, path: Path) -> list[Source | BadInput]:
    if shape in SINGLE_SERVER:
        kind = "bfcl" if "multi_turn_func_doc" in str(path) else "tools"
        return _single_server(records, name, kind, str(path))
    if shape == "servers":
        return _servers(records)
    read = toucan_source if shape == "toucan" else tensorblock_source
    out: list[Source | BadInput] = []
    for ref, rec in records:
        try:
            src = read(rec, ref)
        except (KeyError, TypeError, AttributeError) as exc:
            out.append(BadInput(ref, f"malformed {shape} record ({type(exc).__name__}: {str(exc)[:80]})"))
            continue
        out.append(src if shape != "toucan" or src.tools else BadInput(ref, "server lists no tools"))
    return out


def _parse(path: Path) -> tuple[object, list[tuple[str, object]] | None, list[BadInput]]:
    """(document, None, []) for a JSON file; (None, [(ref, record)], bad lines) for JSON Lines."""
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text), None, []
    except json.JSONDecodeError as exc:
        first_error = exc
    records, bad = [], []
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append((f"{path}:{i}", json.loads(line)))
            except json.JSONDecodeError as exc:
                bad.append(BadInput(f"{path}:{i}", f"malformed line ({exc.msg})"))
    if not records:
        raise _fail(str(path), f"neither JSON nor JSON Lines ({first_error.msg} at line {first_error.lineno})")
    return None, records, bad


def read_file(path: str | Path, fmt: str | None = None, name: str | None = None) -> Input:
    """Read one JSON / JSON Lines file in any accepted shape (or in `fmt`)."""
    path = Path(path)
    if fmt is not None and fmt not in SHAPES:
        raise InputFormatError(f"Expected --format to be one of {list(SHAPES)}, got {fmt!r}.")
    if not path.exists():
        raise InputFormatError(f"Expected an input file or folder, got {str(path)!r}, which does not exist.")
    doc, lines, bad = _parse(path)
    data = doc if lines is None else [rec for _, rec in lines]
    shape = fmt or detect(data)
    if shape is None:
        raise _fail(str(path), describe(data))
    records = _records_of(shape, doc) if lines is None else lines
    if records is None:
        raise _fail(str(path), describe(data), forced=shape)
    if lines is None:
        records = [(f"{path}[{i}]", rec) for i, rec in enumerate(records)]
    items = bad + read_records(shape, records, name or path.stem.replace("_", " "), path)
    inp = Input(shape, str(path), items)
    if not inp.sources:
        reasons = sorted({b.reason for b in inp.bad})[:3]
        raise _fail(str(path), f"{describe(data)}, with no usable server or tool ({'; '.join(reasons) or 'nothing read'})", forced=shape)
    return inp


def read_input(path: str | Path, fmt: str | None = None, name: str | None = None) -> Input:
    """A file, or a folder whose *.json / *.jsonl files are read one by one (one that fails is reported)."""
    path = Path(path)
    if not path.is_dir():
        return read_file(path, fmt, name)
    inp = Input("folder", str(path))
    shapes = set()
    for p in sorted(path.glob("*.json*")):
        try:
            one = read_file(p, fmt)
        except InputFormatError as exc:
            inp.items.append(BadInput(str(p), str(exc).split("\n")[0]))
            continue
        shapes.add(one.format)
        inp.items += one.items
    if not inp.sources:
        found = "; ".join(b.reason for b in inp.bad[:3]) or "no *.json or *.jsonl file"
        raise _fail(str(path), f"a folder with no usable file ({found})", forced=fmt)
    inp.format = f"folder of {'/'.join(sorted(shapes))}"
    return inp


def read_mcp(command: str | list[str], name: str | None = None, start_timeout: float = 60.0) -> Input:
    """The tools of a live MCP server (stdio): started, asked for tools/list, closed.

    Tools whose input schema is unusable are reported as BadInput; the rest pass on unchanged."""
    from ..mcp.client import MCPToolset

    argv = shlex.split(command) if isinstance(command, str) else list(command)
    label = " ".join(argv)
    with MCPToolset(argv, skip_bad_tools=True, start_timeout=start_timeout) as server:
        listed, skipped = list(server.tools), dict(server.skipped)
    items: list[Source | BadInput] = [BadInput(f"mcp:{label}#{tool}", f"unusable input schema ({why})") for tool, why in skipped.items()]
    if not listed:
        raise InputFormatError(f"Expected the MCP server {label!r} to list at least one usable tool, got "
                               f"{len(skipped)} unusable and none usable.")
    items.append(Source(name or _command_name(argv), "tools", (), "", [_tool(t) for t in listed], f"mcp:{label}"))
    return Input("mcp-command", f"mcp:{label}", items)


def _command_name(argv: list[str]) -> str:
    """'python path/to/notes_server.py' -> 'notes server'; 'mcp-server-time' -> 'mcp server time'."""
    script = next((a for a in reversed(argv) if a.endswith((".py", ".js", ".ts", ".mjs"))), None)
    base = Path(script or argv[0]).name.rsplit(".", 1)[0] if script else Path(argv[0]).name
    return base.replace("_", " ").replace("-", " ")


def read_catalog(path: str | Path, fmt: str | None = None) -> Iterator[Source | BadInput]:
    """Any accepted input (see discovery.formats: detected by shape, or `fmt`); raises InputFormatError
    for anything else."""
    yield from read_input(path, fmt).items
