"""Tools: defined once as typed Python callables; schema, validation and docs derive from them.

A tool is a function whose first parameter is the episode's `Db` and whose other parameters carry
type hints and are described in a Google-style docstring::

    @tool(produces=("account_id",))
    def get_account(db: Db, account_id: str) -> dict:
        '''Look up one account.

        Args:
            account_id: The account id, e.g. "AC-1001".
        '''
        return db.get("accounts", account_id)

Domain failures are raised as `ToolError` inside the tool and come back to the agent as an error
observation; they never escape `env.step()`.
"""

from __future__ import annotations

import inspect
import json
import logging
import math
import re
import reprlib
import sqlite3
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .actions import ToolCall
from .errors import ConfigError, ToolDefinitionError, did_you_mean
from .world import sql_name

log = logging.getLogger(__name__)

READ, WRITE = "read", "write"


class ToolError(Exception):
    """A domain error a tool reports to the agent (not found, insufficient funds, ...)."""


class Db:
    """The per-episode database handle tools receive: a thin, dict-returning layer over sqlite3."""

    __slots__ = ("conn", "now", "_pks")

    def __init__(self, conn: sqlite3.Connection, now: str = "2025-06-01T12:00:00", pks: dict | None = None):
        self.conn = conn
        self.now = now  # a fixed clock keeps writes deterministic
        self._pks = pks or {}

    def all(self, sql: str, params: Sequence = ()) -> list[dict]:
        cur = self.conn.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def one(self, sql: str, params: Sequence = ()) -> dict | None:
        cur = self.conn.execute(sql, params)
        row = cur.fetchone()
        return None if row is None else dict(zip([d[0] for d in cur.description], row, strict=True))

    def value(self, sql: str, params: Sequence = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def execute(self, sql: str, params: Sequence = ()) -> int:
        return self.conn.execute(sql, params).rowcount

    def get(self, table: str, key: Any, what: str | None = None) -> dict:
        """The row of `table` whose primary key is `key`, or a ToolError 'X not found'."""
        pk = self._pks.get(table) or "rowid"
        row = self.one(f'SELECT * FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (key,))
        if row is None:
            raise ToolError(f"{what or table.rstrip('s').replace('_', ' ').capitalize()} {key!r} not found.")
        return row

    def insert(self, table: str, row: dict) -> None:
        cols = ", ".join(sql_name(c) for c in row)
        marks = ", ".join("?" for _ in row)
        self.conn.execute(f'INSERT INTO {sql_name(table)} ({cols}) VALUES ({marks})', tuple(row.values()))

    def update(self, table: str, key: Any, **values: Any) -> None:
        pk = self._pks.get(table) or "rowid"
        sets = ", ".join(f'{sql_name(c)} = ?' for c in values)
        self.conn.execute(f'UPDATE {sql_name(table)} SET {sets} WHERE {sql_name(pk)} = ?', (*values.values(), key))

    def next_id(self, table: str, prefix: str, start: int = 1) -> str:
        """The next free id of the form PREFIX<number> in `table`'s primary key column."""
        pk = self._pks.get(table) or "id"
        n = self.value(
            f'SELECT MAX(CAST(SUBSTR({sql_name(pk)}, ?) AS INTEGER)) FROM {sql_name(table)} WHERE {sql_name(pk)} LIKE ?',
            (len(prefix) + 1, prefix + "%"),
        )
        return f"{prefix}{max(int(n or 0) + 1, start)}"


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    content: str  # what the agent sees
    data: Any = None  # the raw return value (None on error)


@dataclass(eq=False)
class Tool:
    """One executable tool with its derived JSON Schema and dependency-graph metadata."""

    name: str
    description: str
    parameters: dict
    fn: Callable[..., Any]
    mode: str = READ
    consumes: tuple[str, ...] = ()  # entity keys taken as input (e.g. "account_id")
    produces: tuple[str, ...] = ()  # entity keys found in the output
    phrase: str = ""  # an instruction clause with {arg} placeholders; never names the tool
    returns: str = ""  # a noun phrase for what the output is ("the account's details")
    examples: dict = field(default_factory=dict)  # arg -> example values for task synthesis
    _order: tuple[str, ...] = ()

    @property
    def writes(self) -> bool:
        return self.mode == WRITE

    def openai_schema(self) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    def bind(self, call: ToolCall) -> dict:
        """Map positional arguments onto parameter names."""
        if not call.args:
            return call.arguments
        if len(call.args) > len(self._order):
            raise ToolError(f"{self.name} takes at most {len(self._order)} positional arguments, got {len(call.args)}.")
        bound = dict(zip(self._order, call.args, strict=False))  # fewer args than params is fine
        dup = set(bound) & set(call.arguments)
        if dup:
            raise ToolError(f"{self.name} got multiple values for {sorted(dup)}.")
        return {**bound, **call.arguments}


def tool(
    fn: Callable | None = None,
    *,
    mode: str = READ,
    consumes: Iterable[str] | None = None,
    produces: Iterable[str] = (),
    phrase: str = "",
    returns: str = "",
    examples: dict | None = None,
    name: str | None = None,
    bounds: dict[str, tuple[float, float]] | None = None,
):
    """Decorator turning a typed, documented function into a `Tool`.

    `consumes` defaults to the parameters whose name ends in `_id`. `bounds` gives a number parameter its
    schema `minimum` and `maximum` (money: at least a cent), checked before the tool runs.
    """

    def wrap(f: Callable) -> Tool:
        description, arg_docs = parse_docstring(f.__doc__ or "")
        parameters, order = schema_from_signature(f, arg_docs)
        for arg, (low, high) in (bounds or {}).items():
            if parameters["properties"].get(arg, {}).get("type") not in ("number", "integer"):
                raise ToolDefinitionError(f"Expected bounds only on number parameters of {f.__name__}, got {arg!r}.")
            parameters["properties"][arg].update(minimum=low, maximum=high)
        cons = tuple(consumes) if consumes is not None else tuple(p for p in order if p.endswith("_id"))
        if mode not in (READ, WRITE):
            raise ToolDefinitionError(f"Expected mode 'read' or 'write' for {f.__name__}, got {mode!r}.")
        return Tool(
            name=name or f.__name__, description=description, parameters=parameters, fn=f, mode=mode,
            consumes=cons, produces=tuple(produces), phrase=phrase, returns=returns,
            examples=dict(examples or {}), _order=order,
        )

    return wrap(fn) if fn is not None else wrap


_ARG_LINE = re.compile(r"^(\s+)(\w+)\s*(?:\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Google-style docstring -> (description, {arg: description})."""
    head, _, rest = inspect.cleandoc(doc).partition("\nArgs:")
    args: dict[str, str] = {}
    current, base = None, None
    for line in rest.splitlines():
        if line and not line[0].isspace():  # the next section (Returns:, Raises:)
            break
        m = _ARG_LINE.match(line)
        if m and (base is None or len(m.group(1)) == base):
            base, current = len(m.group(1)), m.group(2)
            args[current] = m.group(3).strip()
        elif current and line.strip():
            args[current] += " " + line.strip()
    return " ".join(head.split()), args


def _json_type(hint: Any, where: str) -> dict:
    origin = typing.get_origin(hint)
    if hint is str:
        return {"type": "string"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if hint is dict or origin is dict:
        return {"type": "object"}
    if origin is Literal:
        values = list(typing.get_args(hint))
        return {**_json_type(type(values[0]), where), "enum": values}
    if hint is list or origin in (list, tuple, Sequence):
        items = typing.get_args(hint)
        return {"type": "array", "items": _json_type(items[0], where) if items else {}}
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(inner) == 1:
            return _json_type(inner[0], where)
    raise ToolDefinitionError(f"Expected a JSON-compatible type hint for {where}, got {hint!r}. Use str, int, float, bool, Literal, list or dict.")


def schema_from_signature(fn: Callable, arg_docs: dict[str, str]) -> tuple[dict, tuple[str, ...]]:
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    params = list(sig.parameters.values())[1:]  # skip `db`
    props: dict[str, dict] = {}
    required = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name not in hints:
            raise ToolDefinitionError(f"Expected a type hint on parameter {p.name!r} of {fn.__name__}.")
        prop = _json_type(hints[p.name], f"{fn.__name__}.{p.name}")
        if p.name in arg_docs:
            prop["description"] = arg_docs[p.name]
        if p.default is p.empty:
            required.append(p.name)
        elif p.default is not None:
            prop["default"] = p.default
        props[p.name] = prop
    schema = {"type": "object", "properties": props, "required": required, "additionalProperties": False}
    return schema, tuple(props)


# Any number an agent passes must be finite and at most this large (SQLite integers are 64-bit; a float this
# size has no cents left); a schema's own minimum/maximum narrows it further.
MAX_MAGNITUDE = 1e15

_PY_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict}


def validate_arguments(schema: dict, arguments: dict) -> str | None:
    """Check arguments against a (simple) JSON Schema; return an error message or None.

    Hand-written rather than `jsonschema` because it runs on every step and must be fast.
    """
    props = schema.get("properties", {})
    for key in arguments:
        if key not in props and schema.get("additionalProperties", True) is not True:
            return f"Unknown argument {key!r}.{did_you_mean(key, props)} Expected arguments: {', '.join(props) or 'none'}."
    for key in schema.get("required", ()):
        if key not in arguments:
            return f"Missing required argument {key!r}."
    for key, value in arguments.items():
        prop = props.get(key)
        if prop is not None:
            err = _check_value(prop, value, key)
            if err:
                return err
    return None


def _check_value(prop: dict, value: Any, where: str) -> str | None:
    kind = prop.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if kinds and not any(_is_type(value, k) for k in kinds):
        return f"Argument {where!r} expected {' or '.join(kinds)}, got {_json_name(value)} {_shown(value)}."
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        err = _check_number(prop, value, where)
        if err:
            return err
    if "enum" in prop and value not in prop["enum"]:
        return f"Argument {where!r} must be one of {prop['enum']}, got {_shown(value)}."
    if "array" in kinds and isinstance(value, list) and prop.get("items"):
        for i, item in enumerate(value):
            err = _check_value(prop["items"], item, f"{where}[{i}]")
            if err:
                return err
    return None


def _check_number(prop: dict, value: float, where: str) -> str | None:
    if not (math.isfinite(value) and -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE):
        return f"Argument {where!r} must be a finite number between {-MAX_MAGNITUDE:g} and {MAX_MAGNITUDE:g}, got {_shown(value)}."
    if prop.get("minimum") is not None and value < prop["minimum"]:
        return f"Argument {where!r} must be at least {prop['minimum']:g}, got {_shown(value)}."
    if prop.get("maximum") is not None and value > prop["maximum"]:
        return f"Argument {where!r} must be at most {prop['maximum']:g}, got {_shown(value)}."
    if prop.get("exclusiveMinimum") is not None and value <= prop["exclusiveMinimum"]:
        return f"Argument {where!r} must be greater than {prop['exclusiveMinimum']:g}, got {_shown(value)}."
    if prop.get("exclusiveMaximum") is not None and value >= prop["exclusiveMaximum"]:
        return f"Argument {where!r} must be less than {prop['exclusiveMaximum']:g}, got {_shown(value)}."
    return None


def _shown(value: Any) -> str:
    """A short repr for an error message (reprlib bounds the cost on huge values)."""
    return reprlib.repr(value)


def _is_type(value: Any, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    py = _PY_TYPES.get(kind)
    return True if py is None else isinstance(value, py)


def _json_name(value: Any) -> str:
    return {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object"}.get(type(value), "null" if value is None else type(value).__name__)


def to_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(", ", ": "), default=str)


class Toolset:
    """A theme's tools by name, with validated, error-safe dispatch."""

    def __init__(self, tools: Iterable[Tool]):
        self.tools: dict[str, Tool] = {}
        for t in tools:
            if t.name in self.tools:
                raise ConfigError(f"Expected unique tool names, got {t.name!r} twice.")
            self.tools[t.name] = t
        self._schemas = [t.openai_schema() for t in self.tools.values()]

    def __iter__(self):
        return iter(self.tools.values())

    def __len__(self) -> int:
        return len(self.tools)

    def __contains__(self, name: str) -> bool:
        return name in self.tools

    def __getitem__(self, name: str) -> Tool:
        return self.tools[name]

    @property
    def schemas(self) -> list[dict]:
        """OpenAI-format tool schemas (`{"type": "function", "function": {...}}`)."""
        return self._schemas

    def call(self, db: Db, call: ToolCall) -> ToolResult:
        """Validate and run one call; every failure becomes an error result, never an exception."""
        t = self.tools.get(call.name)
        if t is None:
            hint = did_you_mean(call.name, self.tools)
            return ToolResult(False, f"Error: unknown tool {call.name[:80]!r}.{hint} Available tools: {', '.join(self.tools)}.")
        try:
            arguments = t.bind(call)
        except ToolError as exc:
            return ToolResult(False, f"Error: {exc}")
        problem = validate_arguments(t.parameters, arguments)
        if problem:
            return ToolResult(False, f"Error: invalid arguments for {t.name}: {problem}")
        conn = db.conn
        if hasattr(conn, "start_call"):
            conn.start_call()
        savepoint = t.writes and not conn.in_transaction
        try:
            if savepoint:
                conn.execute("SAVEPOINT tool")
            data = t.fn(db, **arguments)
            if savepoint:
                conn.execute("RELEASE tool")
        except ToolError as exc:
            _rollback(conn, savepoint)
            return ToolResult(False, f"Error: {exc}")
        except sqlite3.Error as exc:
            _rollback(conn, savepoint)
            return ToolResult(False, f"Error: the request could not be completed ({exc}).")
        except Exception as exc:  # a bug in a tool must not end the episode
            _rollback(conn, savepoint)
            log.warning("tool %s raised %r", t.name, exc)
            return ToolResult(False, f"Error: {t.name} failed internally ({type(exc).__name__}).")
        return ToolResult(True, to_text(data), data)


def _rollback(conn: sqlite3.Connection, savepoint: bool) -> None:
    if savepoint:
        conn.execute("ROLLBACK TO tool")
        conn.execute("RELEASE tool")
