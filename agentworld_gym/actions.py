"""The one action parser: turns an agent's text into tool calls, a plain response, or an error.

Accepted forms (several calls in one action are fine in each):
  * JSON ``{"name": ..., "arguments": {...}}`` or a list of them;
  * OpenAI function objects ``{"type": "function", "function": {"name", "arguments"}}`` (arguments as
    an object or a JSON string), and assistant messages with ``"tool_calls"``;
  * Hermes ``<tool_call>{...}</tool_call>`` with free text or ``<think>...</think>`` around it;
  * Python call syntax ``get_account(account_id="AC-1")`` or ``[f(a=1), g(2)]``, read with ``ast``
    (literals only, never ``eval``).
Anything else with no call in it is a plain-text response.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

_THINK = re.compile(r"<think>.*?(</think>|$)", re.S)
_HERMES = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.S)
_FENCE = re.compile(r"```(?:json|python|tool_call)?\s*(.*?)```", re.S)
_LOOKS_LIKE_CALL = re.compile(r"^\s*\[?\s*[A-Za-z_][\w.]*\s*\(")
_JSON_LITERALS = {"true": True, "false": False, "null": None}


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    args: tuple = ()  # positional arguments (Python-call syntax), bound by the toolset

    def to_json(self) -> str:
        return json.dumps({"name": self.name, "arguments": self.arguments}, ensure_ascii=False)


@dataclass(frozen=True)
class ParsedAction:
    calls: tuple[ToolCall, ...] = ()
    text: str = ""  # free text outside the calls (reasoning, or the response itself)
    error: str | None = None  # set when the text tried to be a call but could not be read

    @property
    def is_response(self) -> bool:
        return not self.calls and self.error is None


class _ParseFailure(ValueError):
    pass


def parse_action(action: Any) -> ParsedAction:
    """Parse one agent action. Never raises: failures come back as `ParsedAction.error`."""
    if not isinstance(action, str):
        return ParsedAction(error=f"Expected the action to be text, got {type(action).__name__}.")
    try:
        return _parse(action)
    except _ParseFailure as exc:
        return ParsedAction(error=str(exc))
    except (RecursionError, MemoryError):
        return ParsedAction(error="The action is nested too deeply to read as a tool call.")


def _parse(action: str) -> ParsedAction:
    visible = _THINK.sub("", action).strip()
    if "<tool_call>" in visible:
        bodies = _HERMES.findall(visible)
        calls = [c for body in bodies for c in _parse_body(body.strip())]
        return ParsedAction(calls=tuple(calls), text=_HERMES.sub("", visible).strip())
    if visible[:1] in "{[":
        try:
            return ParsedAction(calls=tuple(_from_json(_loads(visible))))
        except _ParseFailure:
            if visible[:1] == "{" or not _LOOKS_LIKE_CALL.match(visible):
                raise
    if _LOOKS_LIKE_CALL.match(visible):
        return ParsedAction(calls=tuple(_from_python(visible)))
    fenced = _FENCE.findall(visible)
    if fenced:
        calls = [c for body in fenced for c in _parse_body(body.strip())]
        return ParsedAction(calls=tuple(calls), text=_FENCE.sub("", visible).strip())
    return ParsedAction(text=visible)


def _parse_body(body: str) -> list[ToolCall]:
    if body[:1] in "{[":
        return _from_json(_loads(body))
    return _from_python(body)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _ParseFailure(f"Could not read the tool call as JSON: {exc.msg} at position {exc.pos}.") from None


def _from_json(obj: Any) -> list[ToolCall]:
    if isinstance(obj, list):
        if not obj:
            raise _ParseFailure("Expected at least one tool call, got an empty list.")
        return [c for item in obj for c in _from_json(item)]
    if not isinstance(obj, dict):
        raise _ParseFailure(f"Expected a JSON object with 'name' and 'arguments', got {type(obj).__name__}.")
    if "tool_calls" in obj:  # an OpenAI assistant message
        return _from_json(obj["tool_calls"] or [])
    if isinstance(obj.get("function"), dict):  # {"type": "function", "function": {...}}
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        raise _ParseFailure('Expected a JSON tool call like {"name": "...", "arguments": {...}}; the "name" is missing.')
    arguments = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(arguments, str):
        arguments = _loads(arguments) if arguments.strip() else {}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise _ParseFailure(f'Expected "arguments" to be an object, got {type(arguments).__name__}.')
    return [ToolCall(name=name, arguments=arguments)]


def _from_python(text: str) -> list[ToolCall]:
    try:
        tree = ast.parse(text.strip(), mode="eval")
        nodes = tree.body.elts if isinstance(tree.body, (ast.List, ast.Tuple)) else [tree.body]
    except SyntaxError:
        try:  # several calls on separate lines / separated by ';'
            nodes = [stmt.value for stmt in ast.parse(text.strip()).body if isinstance(stmt, ast.Expr)]
        except SyntaxError as exc:
            raise _ParseFailure(f"Could not read the tool call: {exc.msg} (line {exc.lineno}).") from None
    if not nodes:
        raise _ParseFailure("Expected a tool call like name(arg=value), found none.")
    return [_call_from_node(node) for node in nodes]


def _call_from_node(node: ast.AST) -> ToolCall:
    if not isinstance(node, ast.Call):
        raise _ParseFailure("Expected a tool call like name(arg=value).")
    name = _dotted_name(node.func)
    args = tuple(_literal(a) for a in node.args)
    arguments = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise _ParseFailure("'**' arguments are not supported in a tool call.")
        arguments[kw.arg] = _literal(kw.value)
    return ToolCall(name=name, arguments=arguments, args=args)


def _dotted_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted_name(node.value)}.{node.attr}"
    raise _ParseFailure("Expected the tool name before '(', e.g. get_account(...).")


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_LITERALS:
        return _JSON_LITERALS[node.id]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values, strict=True)}
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        raise _ParseFailure(
            f"Argument values must be literals (strings, numbers, lists, ...), got {ast.unparse(node)[:60]!r}."
        ) from None
