"""Compute tools: real deterministic functions behind real tool specs that calculate, convert,
hash, encode, parse or evaluate rather than read a table.

Each `Function` names the slots it needs (matched to a tool's parameters by name and type), the
words in a tool name that call for it, its implementation and known input/output pairs that
validation runs through the forged tool (so a compute tool is kept only when it returns what its
name says). Expression evaluation is an `ast` walk over a small whitelist with bounded numbers and
steps, never `eval`.
"""

from __future__ import annotations

import ast
import base64
import csv
import hashlib
import io
import json
import math
import operator
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from ..tools import ToolError

MAX_TEXT = 20_000
MAX_STEPS = 10_000
MAX_NUMBER = 1e100


# ------------------------------------------------------------------------------------------ sandboxed arithmetic

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}
_FUNCS: dict[str, Callable] = {
    "sqrt": math.sqrt, "abs": abs, "round": round, "min": min, "max": max, "sum": lambda *a: sum(a[0] if len(a) == 1 else a),
    "log": math.log, "log10": math.log10, "log2": math.log2, "exp": math.exp, "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "floor": math.floor, "ceil": math.ceil, "factorial": math.factorial, "pow": pow, "int": int, "float": float, "len": len,
}
_CONSTS = {"pi": math.pi, "e": math.e, "tau": math.tau}


class _Sandbox:
    """Evaluates assignments, `print(...)` calls and arithmetic expressions; anything else is refused."""

    def __init__(self):
        self.names: dict[str, object] = dict(_CONSTS)
        self.out: list[str] = []
        self.steps = 0

    def run(self, code: str):
        if not isinstance(code, str) or not code.strip():
            raise ToolError("Give the expression or code to evaluate.")
        if len(code) > 2_000:
            raise ToolError("The code is too long for this sandbox (2,000 characters at most).")
        try:
            tree = ast.parse(code.replace("^", "**") if "^" in code and "**" not in code else code, mode="exec")
        except SyntaxError as exc:
            raise ToolError(f"Syntax error: {exc.msg} (line {exc.lineno}).") from None
        last = None
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
                value = self.eval(stmt.value)
                for t in stmt.targets:
                    self.names[t.id] = value
                last = None
            elif isinstance(stmt, ast.Expr):
                last = self.eval(stmt.value)
            else:
                raise ToolError(f"This sandbox runs arithmetic, assignments and print() only, not {type(stmt).__name__}.")
        return last

    def eval(self, node):
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ToolError("The computation takes too many steps.")
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise ToolError(f"Unknown name {node.id!r}.")
            return self.names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            a, b = self.eval(node.left), self.eval(node.right)
            if isinstance(node.op, ast.Pow) and isinstance(b, (int, float)) and abs(b) > 1_000:
                raise ToolError("The exponent is too large.")
            if isinstance(node.op, ast.Mult) and (isinstance(a, str) or isinstance(b, str)):
                raise ToolError("Repeating text is not supported.")
            try:
                value = _BIN[type(node.op)](a, b)
            except ZeroDivisionError:
                raise ToolError("Division by zero.") from None
            except (TypeError, OverflowError) as exc:
                raise ToolError(f"Cannot compute that: {exc}.") from None
            return _bounded(value)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self.eval(node.operand))
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP:
            return _CMP[type(node.ops[0])](self.eval(node.left), self.eval(node.comparators[0]))
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.eval(x) for x in node.elts][:1_000]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            args = [self.eval(a) for a in node.args]
            if node.func.id == "print":
                self.out.append(" ".join(map(str, args)))
                return None
            fn = _FUNCS.get(node.func.id)
            if fn is None:
                raise ToolError(f"Unknown function {node.func.id!r}; available: print, {', '.join(sorted(_FUNCS))}.")
            if node.func.id == "factorial" and args and isinstance(args[0], int) and args[0] > 500:
                raise ToolError("factorial() is limited to 500.")
            try:
                return _bounded(fn(*args))
            except (ValueError, TypeError, OverflowError) as exc:
                raise ToolError(f"{node.func.id}() failed: {exc}.") from None
        raise ToolError(f"This sandbox does not support {type(node).__name__} expressions.")


def _bounded(v):
    if isinstance(v, float) and (math.isnan(v) or abs(v) > MAX_NUMBER):
        raise ToolError("The result is out of range.")
    if isinstance(v, int) and abs(v) > 10**100:
        raise ToolError("The result is out of range.")
    return v


def _tidy(v):
    if isinstance(v, float):
        v = round(v, 10)
        return int(v) if v.is_integer() and abs(v) < 1e15 else v
    return v


def evaluate(expression: str) -> dict:
    box = _Sandbox()
    value = box.run(str(expression))
    return {"expression": expression, "result": _tidy(value)}


def run_code(code: str) -> dict:
    box = _Sandbox()
    value = box.run(str(code))
    out = "\n".join(box.out)
    if value is not None:
        out = (out + "\n" if out else "") + str(_tidy(value))
    return {"output": out, "result": _tidy(value) if value is not None else None}


def _number(v, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:
            return float(v)
        except (TypeError, ValueError):
            raise ToolError(f"{name} must be a number, got {v!r}.") from None
    return v


def arithmetic(op: str) -> Callable:
    def fn(a, b) -> dict:
        x, y = _number(a, "the first number"), _number(b, "the second number")
        if op == "divide" and y == 0:
            raise ToolError("Division by zero.")
        if op == "power" and abs(y) > 1_000:
            raise ToolError("The exponent is too large.")
        value = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "divide": operator.truediv,
                 "power": operator.pow, "modulo": operator.mod}[op](x, y)
        return {"result": _tidy(_bounded(value))}
    return fn


# ------------------------------------------------------------------------------------------ units

_UNITS: dict[str, tuple[str, float]] = {}
for _dim, _table in {
    "length": {"m": 1, "meter": 1, "metre": 1, "km": 1000, "kilometer": 1000, "cm": 0.01, "mm": 0.001, "mi": 1609.344, "mile": 1609.344,
               "ft": 0.3048, "foot": 0.3048, "feet": 0.3048, "in": 0.0254, "inch": 0.0254, "yd": 0.9144, "yard": 0.9144, "nmi": 1852},
    "mass": {"kg": 1, "kilogram": 1, "g": 0.001, "gram": 0.001, "mg": 1e-6, "lb": 0.45359237, "pound": 0.45359237, "oz": 0.028349523125,
             "ounce": 0.028349523125, "t": 1000, "tonne": 1000},
    "volume": {"l": 1, "liter": 1, "litre": 1, "ml": 0.001, "gal": 3.785411784, "gallon": 3.785411784, "cup": 0.2365882365, "m3": 1000},
    "time": {"s": 1, "sec": 1, "second": 1, "min": 60, "minute": 60, "h": 3600, "hr": 3600, "hour": 3600, "day": 86400, "week": 604800},
    "data": {"b": 1, "byte": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 1024, "mib": 1024**2, "gib": 1024**3},
    "speed": {"m/s": 1, "km/h": 1 / 3.6, "kmh": 1 / 3.6, "mph": 0.44704, "knot": 0.514444},
}.items():
    for _u, _f in _table.items():
        _UNITS[_u] = (_dim, _f)
_TEMPS = {"c": "c", "celsius": "c", "f": "f", "fahrenheit": "f", "k": "k", "kelvin": "k"}


def _unit(u) -> str:
    s = str(u).strip().lower()
    if s in _UNITS or s in _TEMPS:
        return s
    if s.endswith("s") and s[:-1] in _UNITS | _TEMPS:
        return s[:-1]
    raise ToolError(f"Unknown unit {u!r}; known: {', '.join(sorted(set(_UNITS) | set(_TEMPS)))}.")


def convert_units(value, from_unit, to_unit) -> dict:
    x = _number(value, "value")
    a, b = _unit(from_unit), _unit(to_unit)
    if a in _TEMPS or b in _TEMPS:
        if a not in _TEMPS or b not in _TEMPS:
            raise ToolError(f"Cannot convert {from_unit} to {to_unit}: different quantities.")
        c = {"c": x, "f": (x - 32) * 5 / 9, "k": x - 273.15}[_TEMPS[a]]
        out = {"c": c, "f": c * 9 / 5 + 32, "k": c + 273.15}[_TEMPS[b]]
    else:
        (da, fa), (db, fb) = _UNITS[a], _UNITS[b]
        if da != db:
            raise ToolError(f"Cannot convert {from_unit} ({da}) to {to_unit} ({db}).")
        out = x * fa / fb
    return {"value": x, "from_unit": from_unit, "to_unit": to_unit, "result": _tidy(round(out, 6))}


# ------------------------------------------------------------------------------------------ text, hashing, encoding

def _text(v, name: str = "text") -> str:
    if not isinstance(v, str):
        raise ToolError(f"{name} must be text, got {type(v).__name__}.")
    if len(v) > MAX_TEXT:
        raise ToolError(f"{name} is too long ({len(v)} characters; {MAX_TEXT} at most).")
    return v


def hash_text(text, algorithm="sha256") -> dict:
    algo = str(algorithm or "sha256").lower().replace("-", "")
    if algo not in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake2s"):
        raise ToolError(f"Unknown hash algorithm {algorithm!r}; use md5, sha1, sha256, sha512, blake2b.")
    return {"algorithm": algo, "hash": hashlib.new(algo, _text(text).encode()).hexdigest()}


def base64_encode(text) -> dict:
    return {"result": base64.b64encode(_text(text).encode()).decode()}


def base64_decode(text) -> dict:
    try:
        return {"result": base64.b64decode(_text(text).encode(), validate=True).decode()}
    except (ValueError, UnicodeDecodeError):
        raise ToolError("That is not valid base64 text.") from None


def url_encode(text) -> dict:
    return {"result": urllib.parse.quote(_text(text), safe="")}


def url_decode(text) -> dict:
    return {"result": urllib.parse.unquote(_text(text))}


def text_stats(text) -> dict:
    t = _text(text)
    sentences = [s for s in re.split(r"[.!?]+", t) if s.strip()]
    return {"characters": len(t), "characters_no_spaces": len(re.sub(r"\s", "", t)), "words": len(t.split()),
            "lines": len(t.splitlines()) or (1 if t else 0), "sentences": len(sentences)}


def change_case(text, case="upper") -> dict:
    t, c = _text(text), str(case or "upper").lower()
    fns = {"upper": str.upper, "uppercase": str.upper, "lower": str.lower, "lowercase": str.lower, "title": str.title,
           "snake": lambda s: re.sub(r"\W+", "_", s.strip()).lower(), "kebab": lambda s: re.sub(r"\W+", "-", s.strip()).lower()}
    if c not in fns:
        raise ToolError(f"Unknown case {case!r}; use {', '.join(fns)}.")
    return {"result": fns[c](t)}


def reverse_text(text) -> dict:
    return {"result": _text(text)[::-1]}


def _compile(pattern):
    p = _text(pattern, "pattern")
    if len(p) > 300:
        raise ToolError("The pattern is too long (300 characters at most).")
    if re.search(r"\([^)]*[+*][^)]*\)[+*{]", p):  # nested quantifiers can backtrack for ever
        raise ToolError("Nested quantifiers such as (a+)+ are not allowed.")
    try:
        return re.compile(p)
    except re.error as exc:
        raise ToolError(f"Invalid regular expression: {exc}.") from None


def regex_find(pattern, text) -> dict:
    rx = _compile(pattern)
    found = [m.group(0) for m in rx.finditer(_text(text))][:1_000]
    return {"matches": found, "count": len(found)}


def regex_replace(pattern, text, replacement) -> dict:
    rx = _compile(pattern)
    out, n = rx.subn(_text(replacement, "replacement").replace("\\g", "\\g"), _text(text))
    return {"result": out, "replacements": n}


def format_json(text) -> dict:
    try:
        data = json.loads(_text(text, "json"))
    except json.JSONDecodeError as exc:
        raise ToolError(f"Invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}.") from None
    return {"result": json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)}


def validate_json(text) -> dict:
    try:
        json.loads(_text(text, "json"))
        return {"valid": True, "error": None}
    except json.JSONDecodeError as exc:
        return {"valid": False, "error": f"{exc.msg} at line {exc.lineno} column {exc.colno}"}


def csv_to_json(text) -> dict:
    rows = list(csv.DictReader(io.StringIO(_text(text, "csv"))))
    return {"rows": rows[:1_000], "count": len(rows)}


# ------------------------------------------------------------------------------------------ dates and time zones

def _date(v, name: str) -> date:
    try:
        return date.fromisoformat(str(v)[:10])
    except ValueError:
        raise ToolError(f"{name} must be a date as YYYY-MM-DD, got {v!r}.") from None


def days_between(start, end) -> dict:
    a, b = _date(start, "start"), _date(end, "end")
    return {"start": a.isoformat(), "end": b.isoformat(), "days": (b - a).days}


def add_days(start, days) -> dict:
    n = _number(days, "days")
    if abs(n) > 1_000_000:
        raise ToolError("days is out of range.")
    return {"result": (_date(start, "date") + timedelta(days=int(n))).isoformat()}


def day_of_week(day) -> dict:
    d = _date(day, "date")
    return {"date": d.isoformat(), "weekday": d.strftime("%A")}


def _zone(name):
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(f"Unknown time zone {name!r}; use an IANA name such as Europe/London.") from None


def convert_timezone(time, from_zone, to_zone) -> dict:
    try:
        t = datetime.fromisoformat(str(time).replace("Z", "+00:00"))
    except ValueError:
        raise ToolError(f"time must be an ISO date-time such as 2025-06-01T12:00:00, got {time!r}.") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_zone(from_zone))
    out = t.astimezone(_zone(to_zone))
    return {"time": out.replace(tzinfo=None).isoformat(timespec="minutes"), "zone": str(to_zone), "utc_offset": out.strftime("%z")}


# ------------------------------------------------------------------------------------------ the registry

@dataclass(frozen=True)
class Slot:
    name: str
    hints: tuple[str, ...]  # parameter name words that fill this slot
    type: str = "string"  # string | number
    optional: bool = False


@dataclass(frozen=True)
class Function:
    name: str
    triggers: tuple[str, ...]  # tool-name words that call for it (all words of one entry must appear)
    slots: tuple[Slot, ...]
    fn: Callable
    cases: tuple[tuple[dict, dict], ...] = field(default=())  # (inputs by slot, expected subset of the result)


_TEXT = ("text", "input", "string", "content", "data", "value", "message", "str", "s", "source")
_NUM_A = ("a", "x", "num1", "number1", "first", "first_number", "n1", "left", "value1", "operand1", "number_1", "num_1")
_NUM_B = ("b", "y", "num2", "number2", "second", "second_number", "n2", "right", "value2", "operand2", "number_2", "num_2")


def _arith(op: str, words: tuple[str, ...], *cases: tuple[float, float, float]) -> Function:
    return Function(op, tuple((w,) for w in words), (Slot("a", _NUM_A, "number"), Slot("b", _NUM_B, "number")), arithmetic(op),
                    tuple(({"a": a, "b": b}, {"result": want}) for a, b, want in cases))


FUNCTIONS: tuple[Function, ...] = (
    Function("run_code", (("run", "python"), ("execute", "python"), ("run", "code"), ("execute", "code"), ("python",), ("sandbox",)),
             (Slot("code", ("code", "python", "program", "python_code", "pycode", "snippet")),), run_code,
             (({"code": "x = 6\nx * 7"}, {"result": 42}), ({"code": "print(2 ** 10)"}, {"output": "1024"}),
              ({"code": "a = 3\nb = a + 4\nprint(a, b)"}, {"output": "3 7"}))),
    Function("evaluate", (("calculate",), ("calculator",), ("evaluate",), ("eval",), ("math",), ("compute",), ("calc",), ("arithmetic",), ("expression",)),
             (Slot("expression", ("expression", "expr", "formula", "equation", "calculation", "math", "input", "query", "problem")),), evaluate,
             (({"expression": "2 + 3 * 4"}, {"result": 14}), ({"expression": "sqrt(16) + (1 + 2) ** 3"}, {"result": 31}),
              ({"expression": "(10 - 4) / 4"}, {"result": 1.5}))),
    _arith("add", ("add", "sum", "plus", "addition"), (6, 3, 9), (-2, 2.5, 0.5), (1000, 24, 1024)),
    _arith("subtract", ("subtract", "minus", "subtraction", "difference"), (6, 3, 3), (3, 6, -3), (2.5, 0.5, 2)),
    _arith("multiply", ("multiply", "product", "times", "multiplication"), (6, 3, 18), (-4, 2.5, -10), (0, 7, 0)),
    _arith("divide", ("divide", "division", "quotient"), (6, 3, 2), (1, 4, 0.25), (-9, 3, -3)),
    _arith("power", ("power", "pow", "exponent"), (2, 10, 1024), (9, 0.5, 3), (5, 0, 1)),
    _arith("modulo", ("modulo", "mod", "remainder"), (7, 3, 1), (10, 5, 0), (9, 4, 1)),
    Function("convert_units", (("convert", "unit"), ("convert", "units"), ("unit", "conversion"), ("convert", "temperature"), ("convert", "length"),
                               ("convert", "weight"), ("convert", "distance"), ("unit", "converter")),
             (Slot("value", ("value", "amount", "quantity", "number", "input", "val"), "number"),
              Slot("from_unit", ("from_unit", "from", "source_unit", "unit_from", "from_units", "input_unit", "fromunit")),
              Slot("to_unit", ("to_unit", "to", "target_unit", "unit_to", "to_units", "output_unit", "tounit"))), convert_units,
             (({"value": 1, "from_unit": "km", "to_unit": "m"}, {"result": 1000}), ({"value": 100, "from_unit": "celsius", "to_unit": "fahrenheit"}, {"result": 212}),
              ({"value": 2, "from_unit": "kg", "to_unit": "g"}, {"result": 2000}), ({"value": 1, "from_unit": "lb", "to_unit": "oz"}, {"result": 16}),
              ({"value": 1, "from_unit": "gallon", "to_unit": "l"}, {"result": 3.785412}), ({"value": 2, "from_unit": "h", "to_unit": "min"}, {"result": 120}))),
    Function("hash_text", (("hash",), ("md5",), ("sha256",), ("sha1",), ("checksum",), ("digest",)),
             (Slot("text", _TEXT), Slot("algorithm", ("algorithm", "algo", "hash_type", "type", "method"), optional=True)), hash_text,
             (({"text": "abc", "algorithm": "md5"}, {"hash": "900150983cd24fb0d6963f7d28e17f72"}),
              ({"text": "abc", "algorithm": "sha256"}, {"hash": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}),
              ({"text": "abc", "algorithm": "sha1"}, {"hash": "a9993e364706816aba3e25717850c26c9cd0d89d"}),
              ({"text": "hello", "algorithm": "md5"}, {"hash": "5d41402abc4b2a76b9719d911017c592"}),
              ({"text": "", "algorithm": "md5"}, {"hash": "d41d8cd98f00b204e9800998ecf8427e"}),
              ({"text": "", "algorithm": "sha1"}, {"hash": "da39a3ee5e6b4b0d3255bfef95601890afd80709"}),
              ({"text": "hello", "algorithm": "sha1"}, {"hash": "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"}),
              ({"text": "", "algorithm": "sha256"}, {"hash": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}),
              ({"text": "hello", "algorithm": "sha256"}, {"hash": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}))),
    Function("base64_decode", (("base64", "decode"), ("decode", "base64"), ("b64", "decode")), (Slot("text", _TEXT + ("encoded", "base64")),), base64_decode,
             (({"text": "aGVsbG8="}, {"result": "hello"}), ({"text": "YQ=="}, {"result": "a"}), ({"text": "YWJj"}, {"result": "abc"}))),
    Function("base64_encode", (("base64",), ("b64",)), (Slot("text", _TEXT),), base64_encode,
             (({"text": "hello"}, {"result": "aGVsbG8="}), ({"text": "a"}, {"result": "YQ=="}), ({"text": "abc"}, {"result": "YWJj"}))),
    Function("url_decode", (("url", "decode"), ("decode", "url"), ("unquote",)), (Slot("text", _TEXT + ("url", "encoded")),), url_decode,
             (({"text": "a%20b%26c"}, {"result": "a b&c"}), ({"text": "%2F"}, {"result": "/"}), ({"text": "x"}, {"result": "x"}))),
    Function("url_encode", (("url", "encode"), ("encode", "url"), ("urlencode",)), (Slot("text", _TEXT + ("url",)),), url_encode,
             (({"text": "a b&c"}, {"result": "a%20b%26c"}), ({"text": "/"}, {"result": "%2F"}), ({"text": "x"}, {"result": "x"}))),
    Function("text_stats", (("word", "count"), ("count", "words"), ("text", "stats"), ("text", "statistics"), ("character", "count"),
                            ("count", "characters"), ("analyze", "text"), ("word", "counter")),
             (Slot("text", _TEXT),), text_stats, (({"text": "the quick brown fox"}, {"words": 4, "characters": 19}),
                                                  ({"text": "One. Two three!"}, {"words": 3, "sentences": 2}), ({"text": "a\nb c"}, {"lines": 2, "words": 3}))),
    Function("change_case", (("uppercase",), ("lowercase",), ("case",), ("upper",), ("lower",)),
             (Slot("text", _TEXT), Slot("case", ("case", "mode", "style", "type", "format"), optional=True)), change_case,
             (({"text": "Hello World", "case": "upper"}, {"result": "HELLO WORLD"}),)),
    Function("reverse_text", (("reverse", "text"), ("reverse", "string")), (Slot("text", _TEXT),), reverse_text,
             (({"text": "abc"}, {"result": "cba"}), ({"text": "a b"}, {"result": "b a"}), ({"text": "racecar"}, {"result": "racecar"}))),
    Function("regex_replace", (("regex", "replace"), ("replace", "pattern"), ("regex", "sub")),
             (Slot("pattern", ("pattern", "regex", "regexp", "expression")), Slot("text", _TEXT),
              Slot("replacement", ("replacement", "replace", "repl", "with", "new", "replace_with"))), regex_replace,
             (({"pattern": "[0-9]+", "text": "a1b22", "replacement": "#"}, {"result": "a#b#", "replacements": 2}),)),
    Function("regex_find", (("regex",), ("regexp",), ("match", "pattern"), ("grep",), ("find", "pattern"), ("extract", "pattern")),
             (Slot("pattern", ("pattern", "regex", "regexp", "expression")), Slot("text", _TEXT)), regex_find,
             (({"pattern": "[0-9]+", "text": "a1b22c333"}, {"matches": ["1", "22", "333"], "count": 3}),)),
    Function("validate_json", (("validate", "json"), ("json", "valid"), ("check", "json"), ("lint", "json")),
             (Slot("text", _TEXT + ("json", "json_string", "json_data", "json_text")),), validate_json,
             (({"text": '{"a": 1}'}, {"valid": True}), ({"text": '{"a": }'}, {"valid": False}))),
    Function("format_json", (("format", "json"), ("pretty", "json"), ("json", "prettify"), ("beautify", "json"), ("parse", "json")),
             (Slot("text", _TEXT + ("json", "json_string", "json_data", "json_text")),), format_json,
             (({"text": '{"b":1,"a":[2]}'}, {"result": '{\n  "a": [\n    2\n  ],\n  "b": 1\n}'}),)),
    Function("csv_to_json", (("csv", "json"), ("parse", "csv"), ("csv", "to")), (Slot("text", _TEXT + ("csv", "csv_data", "csv_text", "csv_string")),), csv_to_json,
             (({"text": "name,age\nAda,36\nAlan,41"}, {"count": 2, "rows": [{"name": "Ada", "age": "36"}, {"name": "Alan", "age": "41"}]}),)),
    Function("convert_timezone", (("convert", "time"), ("timezone",), ("time", "zone"), ("convert", "timezone")),
             (Slot("time", ("time", "datetime", "date_time", "timestamp", "source_time", "input_time")),
              Slot("from_zone", ("from_timezone", "source_timezone", "from_tz", "from_zone", "source_zone", "from", "timezone_from")),
              Slot("to_zone", ("to_timezone", "target_timezone", "to_tz", "to_zone", "target_zone", "to", "timezone_to"))), convert_timezone,
             (({"time": "2025-06-01T12:00:00", "from_zone": "UTC", "to_zone": "Asia/Tokyo"}, {"time": "2025-06-01T21:00"}),
              ({"time": "2025-01-15T09:30:00", "from_zone": "Europe/London", "to_zone": "America/New_York"}, {"time": "2025-01-15T04:30"}),
              ({"time": "2025-07-15T09:30:00", "from_zone": "Europe/London", "to_zone": "America/New_York"}, {"time": "2025-07-15T04:30"}))),
    Function("days_between", (("days", "between"), ("date", "difference"), ("date", "diff"), ("days", "until"), ("duration",)),
             (Slot("start", ("start", "start_date", "from", "from_date", "date1", "first_date", "begin")),
              Slot("end", ("end", "end_date", "to", "to_date", "date2", "second_date", "until"))), days_between,
             (({"start": "2024-02-27", "end": "2024-03-01"}, {"days": 3}),)),
    Function("add_days", (("add", "days"), ("date", "add"), ("add", "date")),
             (Slot("start", ("date", "start", "start_date", "from", "base_date")), Slot("days", ("days", "n", "amount", "offset", "count"), "number")), add_days,
             (({"start": "2024-02-27", "days": 3}, {"result": "2024-03-01"}),)),
    Function("day_of_week", (("day", "week"), ("weekday",)), (Slot("day", ("date", "day", "datetime")),), day_of_week,
             (({"day": "2025-06-01"}, {"weekday": "Sunday"}), ({"day": "2024-02-29"}, {"weekday": "Thursday"}),
              ({"day": "2000-01-01"}, {"weekday": "Saturday"}))),
)
BY_NAME = {f.name: f for f in FUNCTIONS}
ARITHMETIC = {"add", "subtract", "multiply", "divide", "power", "modulo"}


def _words(name: str) -> list[str]:
    from ..theme import humanize

    return humanize(name).split()


def _is_key(pname: str) -> bool:
    """An id-like parameter names a record; it is never the text a function works on."""
    low = "_".join(_words(pname))
    return low in ("id", "uuid") or low.endswith(("_id", "_uuid", "_key", "_path", "_file"))


def _fills(slot: Slot, pname: str, ptype: str | None) -> bool:
    low = "_".join(_words(pname))
    if slot.type == "number" and ptype not in ("number", "integer"):
        return False
    if slot.type == "string" and ptype not in ("string", None):
        return False
    return low in slot.hints or pname.lower() in slot.hints


def match_function(tool_name: str, props: dict, required: set[str], types: dict[str, str | None]) -> tuple[Function, dict[str, str]] | None:
    """(function, {parameter: slot}) when the tool's name calls for a function whose required slots
    its parameters fill and every required parameter has a slot; else None."""
    words = set(_words(tool_name))
    for f in FUNCTIONS:
        if not any(set(t) <= words for t in f.triggers):
            continue
        mapping: dict[str, str] = {}
        free = list(props)
        for slot in f.slots:
            p = next((p for p in free if _fills(slot, p, types.get(p)) and not _is_key(p)), None)
            if p is None:
                if slot.optional:
                    continue
                mapping = {}
                break
            mapping[p] = slot.name
            free.remove(p)
        if not mapping or any(r not in mapping for r in required):
            continue
        if len(props) - len(mapping) > (0 if f.name in ARITHMETIC else 2):
            continue  # more inputs than the function has: the tool does something else (add_rectangle(x, y, width, ...))
        return f, mapping
    return None


def fixed_inputs(function: str, tool_name: str, mapping: dict[str, str]) -> dict:
    """Inputs a tool's name fixes when it has no parameter for them (`md5(text)` hashes with md5)."""
    if function == "hash_text" and "algorithm" not in mapping.values():
        named = [w for w in _words(tool_name) if w in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake2s")]
        return {"algorithm": named[0] if named else "sha256"}
    return {}


def call(function: str, mapping: dict[str, str], kw: dict, fixed: dict | None = None) -> dict:
    """Run `function` on the tool's arguments (renamed to slots) and the inputs its name fixes."""
    f = BY_NAME[function]
    args = {**(fixed or {}), **{mapping[k]: v for k, v in kw.items() if k in mapping and v is not None}}
    missing = [s.name for s in f.slots if not s.optional and s.name not in args]
    if missing:
        name = next((p for p, s in mapping.items() if s == missing[0]), missing[0])
        raise ToolError(f"Give {name}: this call needs it.")
    try:
        return f.fn(**args)
    except ToolError:
        raise
    except (ValueError, TypeError, ArithmeticError, RecursionError, MemoryError, csv.Error, LookupError) as exc:
        raise ToolError(f"Cannot compute that: {type(exc).__name__}: {str(exc)[:120]}.") from None


def same_value(a, b) -> bool:
    """Two spellings of one input: equal ignoring case, or the same unit (C = celsius, kg = kilogram)."""
    if str(a).lower() == str(b).lower():
        return True
    try:
        ua, ub = _unit(a), _unit(b)
    except ToolError:
        return False
    if ua in _TEMPS or ub in _TEMPS:
        return _TEMPS.get(ua) == _TEMPS.get(ub)
    return _UNITS[ua] == _UNITS[ub]


def matches_expected(result, expected: dict) -> bool:
    """A result satisfies a known case when every expected field is equal (numbers to 1e-6)."""
    if not isinstance(result, dict):
        return False
    for k, want in expected.items():
        got = result.get(k)
        if isinstance(want, (int, float)) and not isinstance(want, bool) and isinstance(got, (int, float)) and not isinstance(got, bool):
            if abs(got - want) > 1e-6:
                return False
        elif got != want:
            return False
    return True


__all__ = ["FUNCTIONS", "BY_NAME", "Function", "Slot", "call", "match_function", "matches_expected"]
