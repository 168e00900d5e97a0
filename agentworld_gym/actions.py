"""The one action parser: turns an agent's text into tool calls, a plain response, or an error.

Accepted forms (several calls in one action are fine in each; the README has a table with examples):
  * JSON ``{"name": ..., "arguments": {...}}`` (or ``"parameters"``, ``"args"``, ``"input"``), a list of
    them, or several one after another; lenient JSON too (single quotes, trailing commas, Python literals);
  * OpenAI function objects ``{"type": "function", "function": {...}}``, assistant messages with
    ``"tool_calls"``, legacy ``{"function_call": {...}}``, Gemini ``{"functionCall": {...}}``,
    Command-R ``{"tool_name": ..., "parameters": ...}``;
  * the native formats chat templates emit: Hermes/Qwen ``<tool_call>…</tool_call>`` (JSON, or Qwen3-Coder
    ``<function=…><parameter=…>`` inside), Llama 3.x ``<|python_tag|>``, Mistral ``[TOOL_CALLS]`` (both the
    list and the ``name[ARGS]{…}`` form), DeepSeek ``<｜tool▁call▁begin｜>…``, Kimi ``<|tool_call_begin|>…``,
    Granite/Phi ``<|tool_call|>``, Functionary/Llama ``<function=name>{…}</function>`` and ``>>>name``,
    gpt-oss ``to=functions.name … <|message|>{…}<|call|>``, fenced blocks (````tool_code``, ````json``);
  * Python call syntax ``get_account(account_id="AC-1")`` or ``[f(a=1), g(2)]``, read with ``ast``
    (literals only, never ``eval``); ``print(default_api.f(...))`` as Gemma writes it.
``<think>…</think>`` reasoning is dropped. Anything else with no call in it is a plain-text response,
except text that carries a tool-call marker but cannot be read: that is an error, never an answer.

Agent text is bounded before any regex, split or JSON read runs: at most MAX_ACTION_CHARS characters,
MAX_CALLS calls, values nested MAX_DEPTH deep and integers of MAX_INT_BITS bits; beyond that the action is an
error. Every pattern here runs in linear time. The caps apply while reading, not after: Python-syntax text (and
lenient JSON, which is read the same way) is scanned once before `ast` sees it, and refused past MAX_CALLS calls,
MAX_DEPTH levels or MAX_PYTHON_VALUES values, since building a syntax tree costs ~2 µs a value; a JSON list stops
at MAX_CALLS + 1 calls. So a step's parse costs at most a few ms whatever the 100,000 characters hold.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

MAX_ACTION_CHARS = 100_000  # longer actions are refused as a whole (documented in docs/actions.md)
MAX_CALLS = 32
MAX_DEPTH = 32
MAX_INT_BITS = 256  # bigger integers are not read (they could not be printed or stored anyway)
MAX_PYTHON_VALUES = 4_096  # values (items, arguments, strings) in one Python-syntax action: bounds the `ast` cost

_JSON_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_CALL_START = re.compile(r"\[?\s*[A-Za-z_][\w.]*\s*\(")  # at the start of stripped text: linear (no two quantifiers share a character)
_LONG_DIGITS = re.compile(r"\d{78}")
# The tokens that shape Python source: strings (triple-quoted first) and the brackets and commas between values.
# Strings are written as unrolled loops (a run of plain characters, then an escape and another run), so each
# is matched at C speed in one pass, with no backtracking.
_PY_SHAPE = re.compile(r'''"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""|\'\'\'[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*\'\'\''''
                       r'''|"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"|'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'|[()\[\]{},]''')
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")
_NAME_PREFIXES = ("functions.", "default_api.")
# Markers that mean the text is trying to be a tool call; such text is never a final answer.
_CALL_MARKERS = ("<tool_call", "<|tool_call|>", "<|python_tag|>", "[TOOL_CALLS]", "<｜tool▁call", "<|tool_call_begin|>",
                 "<function=", "```tool_code", "<|call|>", '"function_call"', '"tool_calls"', '"arguments":', "'arguments':")


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    args: tuple = ()  # positional arguments (Python-call syntax), bound by the toolset
    # The name as the text wrote it, before a `functions.` / `default_api.` prefix was dropped: a grader whose
    # functions carry that prefix in their own names (BFCL's `functions.intersect`) reads this one.
    written_as: str = field(default="", compare=False, repr=False)

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


def clean_text(text: str) -> str:
    """`text` with lone surrogates replaced by '?', so it can be encoded, stored and printed."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")  # the codec's C fast path


def parse_action(action: Any) -> ParsedAction:
    """Parse one agent action. Never raises: failures come back as `ParsedAction.error`."""
    if not isinstance(action, str):
        return ParsedAction(error=f"Expected the action to be text, got {type(action).__name__}.")
    if len(action) > MAX_ACTION_CHARS:
        return ParsedAction(error=f"The action is {len(action):,} characters long; the limit is {MAX_ACTION_CHARS:,}. "
                                  "Send a shorter tool call or answer.")
    try:
        parsed = _parse(clean_text(action))
    except _ParseFailure as exc:
        return ParsedAction(error=str(exc))
    except (RecursionError, MemoryError):
        return ParsedAction(error="The action is nested too deeply to read as a tool call.")
    if len(parsed.calls) > MAX_CALLS:
        return ParsedAction(error=f"Expected at most {MAX_CALLS} tool calls in one action, got {len(parsed.calls)}.")
    return parsed


def _parse(action: str) -> ParsedAction:
    visible = _drop_reasoning(action).strip()
    has_native = "<" in visible or "[TOOL_CALLS]" in visible  # every native marker but Mistral's has a '<'
    for marker, reader in _NATIVE if has_native else ():
        if marker in visible:
            calls, text = reader(visible)
            if not calls:
                raise _ParseFailure(f"Found {marker} but no tool call after it.")
            return ParsedAction(calls=tuple(calls), text=text)
    if _functionary_marker(visible):
        calls, text = _functionary(visible)
        return ParsedAction(calls=tuple(calls), text=text)
    if visible[:1] in "{[":
        try:
            return ParsedAction(calls=tuple(_from_json_values(visible)))
        except _ParseFailure:
            if visible[:1] == "{" or not _looks_like_call(visible):
                raise
    if _looks_like_call(visible):
        return ParsedAction(calls=tuple(_from_python(visible)))
    if "```" in visible:
        calls, text = _fenced(visible)
        if calls:
            return ParsedAction(calls=tuple(calls), text=text)
    calls = _embedded_json(visible)
    if calls:
        return ParsedAction(calls=tuple(calls))
    marker = next((m for m in _CALL_MARKERS if m in visible), None)
    if marker is not None:
        raise _ParseFailure(f"The text contains {marker!r} like a tool call, but no call could be read from it.")
    return ParsedAction(text=visible)


def _drop_reasoning(text: str) -> str:
    """Text without <think>…</think> blocks (an unclosed one runs to the end; a lone </think> ends one)."""
    if "think>" not in text:
        return text
    out, i = [], 0
    while True:
        j = text.find("<think>", i)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        k = text.find("</think>", j + 7)
        if k < 0:
            break
        i = k + 8
    text = "".join(out)
    return text.rpartition("</think>")[2] if "</think>" in text else text


def _looks_like_call(text: str) -> bool:
    """`name(` or `[name(` at the start of (stripped) text."""
    return _CALL_START.match(text) is not None


# ------------------------------------------------------------------------------------------ native formats


def _split(text: str, sep: str, limit: int = MAX_CALLS) -> list[str]:
    """text.split(sep), refusing more than `limit` pieces after the first (so a repeated marker costs nothing)."""
    pieces = text.split(sep, limit + 1)
    if len(pieces) > limit + 1:
        raise _ParseFailure(f"Expected at most {limit} tool calls in one action, got more {sep!r} blocks.")
    return pieces


def _between(text: str, start: str, ends: tuple[str, ...]) -> tuple[list[str], str]:
    """The bodies after each `start` up to the first of `ends` (or the end), and the text outside them."""
    pieces = _split(text, start)
    outside, bodies = [pieces[0]], []
    for piece in pieces[1:]:
        cut = min((i for i in (piece.find(e) for e in ends) if i >= 0), default=len(piece))
        bodies.append(piece[:cut])
        end = next((e for e in ends if piece.startswith(e, cut)), "")
        outside.append(piece[cut + len(end):])
    return bodies, " ".join(s.strip() for s in outside if s.strip())


def _hermes(text: str):
    bodies, outside = _between(text, "<tool_call>", ("</tool_call>",))
    return [c for body in bodies for c in _body(body)], outside


def _body(body: str) -> list[ToolCall]:
    """One block's content: JSON, Python calls, Qwen3-Coder `<function=…>` or GLM `<arg_key>` markup."""
    body = body.strip()
    if "<function=" in body:
        return _function_tags(body)[0]
    if "<arg_key>" in body:
        name, _, rest = body.partition("<arg_key>")
        keys, _ = _between("<arg_key>" + rest, "<arg_key>", ("</arg_key>",))
        values, _ = _between(rest, "<arg_value>", ("</arg_value>",))
        return [_named(name.strip(), {k.strip(): _scalar(v) for k, v in zip(keys, values, strict=False)})]
    if body[:1] in "{[":
        return _from_json_values(body)
    return _from_python(body)


def _function_tags(text: str):
    """`<function=name>{json}</function>` (Llama 3.1, Functionary) or with `<parameter=k>v</parameter>` (Qwen3-Coder)."""
    bodies, outside = _between(text, "<function=", ("</function>",))
    calls = []
    for body in bodies:
        name, _, args = body.partition(">")
        args = args.strip()
        if "<parameter=" in args:
            params, _ = _between(args, "<parameter=", ("</parameter>",))
            arguments = {}
            for p in params:
                key, _, value = p.partition(">")
                arguments[key.strip()] = _scalar(value.strip())
            calls.append(_named(name.strip(), arguments))
        else:
            calls.append(_call(name.strip(), _loads(args) if args else {}))
    return calls, outside


def _scalar(value: str) -> Any:
    """A parameter value written as text: JSON when it reads as JSON, else the string itself."""
    value = value.strip()
    try:
        return _jsonable(json.loads(value), 0)
    except (ValueError, RecursionError):
        return value


def _python_tag(text: str):
    before, _, body = text.partition("<|python_tag|>")
    for end in ("<|eom_id|>", "<|eot_id|>"):
        body = body.partition(end)[0]
    return [c for part in _split_top_level(body) for c in _body(part)], before.strip()


def _split_top_level(body: str) -> list[str]:
    """Llama separates several calls with ';'; split there unless the whole body reads as one."""
    body = body.strip()
    if ";" not in body:
        return [body]
    try:
        _loads(body)
        return [body]
    except _ParseFailure:
        return [p for p in _split(body, ";") if p.strip()] if body[:1] in "{[" else [body]


def _special_block(start: str, end: str):
    def read(text: str):
        bodies, outside = _between(text, start, (end,))
        return [c for body in bodies for c in _body(body)], outside
    return read


def _mistral(text: str):
    before, _, rest = text.partition("[TOOL_CALLS]")
    calls = []
    for piece in _split(rest, "[TOOL_CALLS]"):
        piece = piece.replace("</s>", "").strip()
        if "[ARGS]" in piece:  # v11+: name[ARGS]{...} (an optional [CALL_ID]id after the name)
            name, _, args = piece.partition("[ARGS]")
            calls.append(_call(name.partition("[CALL_ID]")[0].strip(), _loads(args.strip())))
        elif piece:
            calls += _from_json_values(piece)
    return calls, before.strip()


def _deepseek(text: str):
    bodies, outside = _between(text, "<｜tool▁call▁begin｜>", ("<｜tool▁call▁end｜>",))
    calls = []
    for body in bodies:
        left, sep, right = body.partition("<｜tool▁sep｜>")
        if not sep:
            raise _ParseFailure("Expected <｜tool▁sep｜> inside a DeepSeek tool call.")
        if "```" in right:  # V3 / R1: function<｜tool▁sep｜>name\n```json\n{...}\n```
            name, _, fenced = right.partition("\n")
            calls.append(_call(name.strip(), _loads(_unfence(fenced))))
        else:  # V3.1: name<｜tool▁sep｜>{...}
            calls.append(_call(left.strip(), _loads(right.strip())))
    return calls, outside.replace("<｜tool▁calls▁begin｜>", "").replace("<｜tool▁calls▁end｜>", "").strip()


def _kimi(text: str):
    bodies, outside = _between(text, "<|tool_call_begin|>", ("<|tool_call_end|>",))
    calls = []
    for body in bodies:
        ident, _, args = body.partition("<|tool_call_argument_begin|>")
        calls.append(_call(ident.strip().rpartition(":")[0] or ident.strip(), _loads(args.strip())))
    return calls, outside.replace("<|tool_calls_section_begin|>", "").replace("<|tool_calls_section_end|>", "").strip()


def _harmony(text: str):
    """gpt-oss: `<|channel|>commentary to=functions.name <|constrain|>json<|message|>{...}<|call|>`."""
    calls, outside = [], []
    for piece in _split(text, "<|call|>"):
        head, sep, args = piece.rpartition("<|message|>")
        at = head.rfind("to=")
        if not sep or at < 0:
            outside.append(piece)
            continue
        target = head[at + 3:].partition("<|")[0].split()
        calls.append(_call(target[0] if target else "", _loads(args.strip())))
    return calls, " ".join(s.strip() for s in outside if s.strip())


def _functionary(text: str):
    """Functionary v3: `>>>name\\n{json}` blocks (`>>>all\\n` is plain text)."""
    before, _, rest = text.partition(">>>")
    calls, outside = [], [before]
    for block in _split(rest, ">>>"):
        name, _, body = block.partition("\n")
        if name.strip() == "all":
            outside.append(body)
        else:
            calls.append(_call(name.strip(), _loads(body.strip()) if body.strip() else {}))
    return calls, " ".join(s.strip() for s in outside if s.strip())


def _functionary_marker(text: str) -> bool:
    return text.startswith(">>>") or "\n>>>" in text


# Checked in order; the first marker found in the text decides the reader.
_NATIVE = (
    ("<tool_call>", _hermes),
    ("<|python_tag|>", _python_tag),
    ("[TOOL_CALLS]", _mistral),
    ("<｜tool▁call▁begin｜>", _deepseek),
    ("<|tool_call_begin|>", _kimi),
    ("<|tool_call|>", _special_block("<|tool_call|>", "<|/tool_call|>")),
    ("<function=", _function_tags),
    ("<|call|>", _harmony),
)


def _fenced(text: str):
    """Calls inside ``` fences (an optional language tag such as json, python, tool_code); text outside them."""
    parts = _split(text, "```", 2 * MAX_CALLS + 1)
    calls, outside = [], parts[0::2]
    for block in parts[1::2]:
        body = _unfence("```" + block + "```")
        if body[:1] in "{[" or _looks_like_call(body):
            calls += _body(body)
    return calls, " ".join(s.strip() for s in outside if s.strip())


def _unfence(text: str) -> str:
    """The content of one ```lang … ``` block (or the text itself when it has no fence)."""
    text = text.strip()
    if not text.startswith("```"):
        return text
    head, _, body = text[3:].partition("\n")
    if head.strip() and not head.strip().isidentifier():
        body = head + "\n" + body  # ```{"name": ...} on one line
    return body.rpartition("```")[0].strip() if "```" in body else body.strip()


def _embedded_json(text: str, tries: int = 8) -> list[ToolCall]:
    """A JSON tool call inside prose ("Sure! {"name": ...}"): the first few '{' that start one."""
    decoder, start = json.JSONDecoder(), 0
    for _ in range(tries):
        start = text.find("{", start)
        if start < 0:
            return []
        try:
            obj, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            start += 1
            continue
        if isinstance(obj, dict) and any(k in obj for k in ("name", "function", "function_call", "tool_calls", "tool_name")):
            return _from_json(_jsonable(obj, 0))
        start += 1
    return []


# ------------------------------------------------------------------------------------------ JSON shapes


def _loads(text: str, calls: bool = False) -> Any:
    """JSON, or lenient JSON (single quotes, trailing commas, True/False/None) read as Python literals.
    `calls`: the text holds the calls themselves, so a list past MAX_CALLS is refused before any walk."""
    try:
        value = json.loads(text)
        if calls and isinstance(value, list) and len(value) > MAX_CALLS:
            raise _ParseFailure(f"Expected at most {MAX_CALLS} tool calls in one action, got {len(value)}.")
        return _jsonable(value, 0) if _may_need_cleaning(text, value) else value
    except json.JSONDecodeError as exc:
        error = f"Could not read the tool call as JSON: {exc.msg} at position {exc.pos}."
    except ValueError as exc:  # e.g. an integer literal over Python's 4,300-digit limit
        raise _ParseFailure(f"Could not read the tool call as JSON: {str(exc)[:120]}") from None
    _check_python_shape(text.strip())
    try:
        return _literal(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, _ParseFailure):
        raise _ParseFailure(error) from None


def _may_need_cleaning(json_text: str, value: Any) -> bool:
    """Whether decoded JSON could hold a lone surrogate, an integer over MAX_INT_BITS (78+ digits) or nesting
    past MAX_DEPTH; C-speed checks spare the Python walk (~3 µs a value) on everything else."""
    if _LONG_DIGITS.search(json_text) is not None:
        return True
    if "\\u" in json_text:  # only a \\u escape makes a lone surrogate
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return True
    return json_text.count("{") + json_text.count("[") > MAX_DEPTH and _deeper_than(json_text, MAX_DEPTH)


def _deeper_than(json_text: str, limit: int) -> bool:
    """Whether JSON brackets nest more than `limit` deep: strings dropped, then the innermost pairs peeled
    off one level a pass (at most limit + 1 passes, each a C-speed regex)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", json_text))
    for _ in range(limit + 1):
        if not brackets:
            return False
        brackets, peeled = _INNERMOST.subn("", brackets)
        if not peeled:
            return True  # unbalanced: let the walk decide
    return bool(brackets)


def _from_json_values(text: str) -> list[ToolCall]:
    """One JSON value, or several one after another (`{..}\\n{..}`, `{..}; {..}`)."""
    try:
        return _from_json(_loads(text, calls=True))
    except _ParseFailure as first:
        decoder, i, n, calls = json.JSONDecoder(), 0, len(text), []
        while i < n:
            while i < n and text[i] in " \t\r\n;,":
                i += 1
            if i >= n:
                break
            try:
                obj, i = decoder.raw_decode(text, i)
            except ValueError:
                raise first from None
            calls += _from_json(_jsonable(obj, 0))
            if len(calls) > MAX_CALLS:
                raise _ParseFailure(f"Expected at most {MAX_CALLS} tool calls in one action, got more.") from None
        if not calls:
            raise
        return calls


def _from_json(obj: Any) -> list[ToolCall]:
    if isinstance(obj, list):
        if not obj:
            raise _ParseFailure("Expected at least one tool call, got an empty list.")
        if len(obj) > MAX_CALLS:
            raise _ParseFailure(f"Expected at most {MAX_CALLS} tool calls in one action, got {len(obj)}.")
        return [c for item in obj for c in _from_json(item)]
    if not isinstance(obj, dict):
        raise _ParseFailure(f"Expected a JSON object with 'name' and 'arguments', got {type(obj).__name__}.")
    if "tool_calls" in obj:  # an OpenAI assistant message
        return _from_json(obj["tool_calls"] or [])
    if "name" not in obj:
        for key in ("function", "function_call", "functionCall"):  # OpenAI tools, legacy functions, Gemini
            if isinstance(obj.get(key), dict):
                obj = obj[key]
                break
    name = obj["name"] if "name" in obj else obj.get("tool_name")
    if not isinstance(name, str) or not name:
        raise _ParseFailure('Expected a JSON tool call like {"name": "...", "arguments": {...}}; the "name" is missing.')
    arguments = obj["arguments"] if "arguments" in obj else next((obj[k] for k in ("parameters", "args", "input") if k in obj), {})
    if isinstance(arguments, str):
        arguments = _loads(arguments) if arguments.strip() else {}
    return [_call(name, arguments)]


def _call(name: str, arguments: Any) -> ToolCall:
    if not name:
        raise _ParseFailure("Expected a tool name, got none.")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise _ParseFailure(f'Expected "arguments" to be an object, got {_kind(arguments)}.')
    return _named(name, arguments)


def _named(name: str, arguments: dict, args: tuple = ()) -> ToolCall:
    return ToolCall(name=_tool_name(name), arguments=arguments, args=args, written_as=name)


def _tool_name(name: str) -> str:
    if "." not in name:
        return name
    for prefix in _NAME_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _jsonable(value: Any, depth: int) -> Any:
    """`value` if it is plain JSON data within the bounds; else a parse failure saying what is wrong."""
    if depth > MAX_DEPTH:
        raise _ParseFailure(f"Argument values are nested more than {MAX_DEPTH} levels deep.")
    if isinstance(value, str):
        return clean_text(value)  # a JSON escape like "\\ud800" decodes to a lone surrogate
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise _ParseFailure(f"An integer in the call has {value.bit_length()} bits; numbers must fit in {MAX_INT_BITS}.")
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise _ParseFailure(f"Argument names and object keys must be strings, got {_kind(key)}.")
        return {clean_text(k): _jsonable(v, depth + 1) for k, v in value.items()}
    raise _ParseFailure(f"Argument values must be JSON data (strings, numbers, lists, objects), got {_kind(value)}.")


def _kind(value: Any) -> str:
    return {str: "a string", bool: "a boolean", int: "an integer", float: "a number", list: "an array",
            dict: "an object"}.get(type(value), "null" if value is None else type(value).__name__)


# ------------------------------------------------------------------------------------------ Python calls


def _check_python_shape(text: str) -> None:
    """Refuse Python source past the call, nesting or value caps before `ast` builds a tree for it (one scan,
    stopped at the first cap passed). Calls are the `(` opened at the top level, or inside an outer `[...]`."""
    top = 1 if text[:1] == "[" else 0
    depth = calls = values = 0
    for match in _PY_SHAPE.finditer(text):
        token = match.group()
        if token in "([{":
            if token == "(" and depth == top:
                calls += 1
                if calls > MAX_CALLS:
                    raise _ParseFailure(f"Expected at most {MAX_CALLS} tool calls in one action, got more.")
            depth += 1
            if depth > MAX_DEPTH + 2:  # the call's own '(' and an outer list add two levels
                raise _ParseFailure(f"Argument values are nested more than {MAX_DEPTH} levels deep.")
        elif token in ")]}":
            depth = max(depth - 1, 0)
            continue
        elif token != ",":
            continue  # a string: one value however long, counted by the comma or bracket before it
        values += 1  # every value but the first in a container follows a comma; each container opens once
        if values > MAX_PYTHON_VALUES:
            raise _ParseFailure(f"Expected at most {MAX_PYTHON_VALUES:,} values in a call written as Python or lenient JSON, "
                                "got more. Send large data as strict JSON or in several calls.")


def _from_python(text: str) -> list[ToolCall]:
    _check_python_shape(text.strip())
    try:
        tree = ast.parse(text.strip(), mode="eval")
        nodes = tree.body.elts if isinstance(tree.body, (ast.List, ast.Tuple)) else [tree.body]
    except SyntaxError:
        try:  # several calls on separate lines / separated by ';'
            nodes = [stmt.value for stmt in ast.parse(text.strip()).body if isinstance(stmt, ast.Expr)]
        except SyntaxError as exc:
            raise _ParseFailure(f"Could not read the tool call: {exc.msg} (line {exc.lineno}).") from None
        except ValueError as exc:  # e.g. a source with NUL bytes, an over-long integer literal
            raise _ParseFailure(f"Could not read the tool call: {str(exc)[:120]}") from None
    except ValueError as exc:
        raise _ParseFailure(f"Could not read the tool call: {str(exc)[:120]}") from None
    if not nodes:
        raise _ParseFailure("Expected a tool call like name(arg=value), found none.")
    return [_call_from_node(node) for node in nodes]


def _call_from_node(node: ast.AST) -> ToolCall:
    if not isinstance(node, ast.Call):
        raise _ParseFailure("Expected a tool call like name(arg=value).")
    name = _dotted_name(node.func)
    if name == "print" and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Call):
        return _call_from_node(node.args[0])  # Gemma's tool_code: print(default_api.f(...))
    args = tuple(_literal(a) for a in node.args)
    arguments = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise _ParseFailure("'**' arguments are not supported in a tool call.")
        arguments[kw.arg] = _literal(kw.value)
    return _named(name, arguments, args)


def _dotted_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted_name(node.value)}.{node.attr}"
    raise _ParseFailure("Expected the tool name before '(', e.g. get_account(...).")


def _literal(node: ast.AST, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise _ParseFailure(f"Argument values are nested more than {MAX_DEPTH} levels deep.")
    if isinstance(node, ast.Name) and node.id in _JSON_LITERALS:
        return _JSON_LITERALS[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)) and not isinstance(node.value, bool):
        value = node.value  # the common case, without literal_eval's per-node cost
        return value if isinstance(value, float) else _jsonable(value, depth)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(e, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _ParseFailure("'**' unpacking is not supported in argument values.")
        keys = [_literal(k, depth + 1) for k in node.keys]
        wrong = [k for k in keys if not isinstance(k, str)]
        if wrong:
            raise _ParseFailure(f"Argument names and object keys must be strings, got {_kind(wrong[0])}.")
        return {clean_text(k): _literal(v, depth + 1) for k, v in zip(keys, node.values, strict=True)}
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError):
        raise _ParseFailure(f"Argument values must be literals (strings, numbers, lists, ...), got a {type(node).__name__} expression.") from None
    if isinstance(value, float) and not math.isfinite(value):
        return value  # kept so validation can say the number is out of range
    return _jsonable(value, depth)
