"""Validation as in the paper: generated unit tests per tool, expected outcomes computed
independently by direct SQL on a fresh copy of the world; keep a tool when its pass rate is > 0.5,
a theme when it keeps >= 1 tool and >= 1 valid test passes.

Every tool gets as many valid calls (arguments drawn from the database) as invalid ones (an id no
world holds, a missing required argument, a wrong type, an unknown argument), so a tool whose valid
calls all fail scores at most 0.5 and is dropped.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..actions import ToolCall
from ..tools import Db, Tool, Toolset
from ..world import ThemeSpec, open_copy
from .forge import MISSING

TOOL_THRESHOLD = 0.5


@dataclass
class ToolReport:
    name: str
    kind: str
    tests: int = 0
    passed: int = 0
    valid_passed: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.tests if self.tests else 0.0

    @property
    def kept(self) -> bool:
        return self.pass_rate > TOOL_THRESHOLD

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "tests": self.tests, "passed": self.passed, "pass_rate": round(self.pass_rate, 3),
                "kept": self.kept, "failures": self.failures[:3]}


def _rows(conn, sql: str, params=()) -> list[dict]:
    cur = conn.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


class _Case:
    """One generated test: arguments, plus a check run against the tool result and a reference DB."""

    def __init__(self, args: dict, check, valid: bool):
        self.args, self.check, self.valid = args, check, valid


def _coerce(t: dict, args: dict) -> dict:
    """Values drawn from the database, cast to the parameter types (1 -> True for a boolean)."""
    types = {p["name"]: p["schema"].get("type") for p in t["params"]}
    out = {}
    for k, v in args.items():
        typ = types.get(k)
        if typ == "boolean" and v in (0, 1):
            v = bool(v)
        elif typ == "integer" and isinstance(v, float) and v.is_integer() or typ == "integer" and isinstance(v, str) and v.isdigit():
            v = int(v)
        elif typ == "number" and isinstance(v, str):
            with contextlib.suppress(ValueError):
                v = float(v)
        elif typ == "string" and isinstance(v, (int, float)) and not isinstance(v, bool):
            v = str(v)
        out[k] = v
    return out


def _fill_required(t: dict, args: dict, rng) -> dict:
    for p in t["params"]:
        if p.get("required") and p["name"] not in args:
            ex = t.get("examples", {}).get(p["name"])
            if ex:
                args[p["name"]] = ex[int(rng.integers(len(ex)))]
            elif "enum" in p["schema"]:
                args[p["name"]] = p["schema"]["enum"][0]
            else:
                args[p["name"]] = {"integer": 1, "number": 1.0, "boolean": True}.get(p["schema"].get("type"), "x")
    return args


def _valid_case(t: dict, spec: ThemeSpec, ref: sqlite3.Connection, rng) -> _Case | None:
    kind, table = t["kind"], t["table"]
    pk = spec.table(table).pk
    roles = {}
    for p in t["params"]:
        roles.setdefault(p["role"], []).append(p)
    rows = _rows(ref, f'SELECT * FROM "{table}" ORDER BY "{pk}"')
    if not rows and kind not in ("create", "list", "lookup", "search"):
        return None
    row = rows[int(rng.integers(len(rows)))] if rows else {}
    args: dict[str, Any] = {}
    if kind == "get":
        args[roles["key"][0]["name"]] = row[pk]
        _fill_required(t, args, rng)
        return _Case(args, lambda r, conn: r.ok and r.data == row, True)
    if kind in ("list", "lookup", "search"):
        where, params = [], []
        for p in roles.get("fk", []) + roles.get("filter", []) + roles.get("key", []):
            if row and (p.get("required") or rng.random() < 0.5):
                col = p.get("column", pk)
                args[p["name"]] = row[col]
                if row[col] is None:
                    where.append(f'"{col}" IS NULL')
                    args.pop(p["name"])
                    if p.get("required"):
                        return None
                    where.pop()
                    continue
                where.append(f'"{col}" = ?')
                params.append(row[col])
        limit = 20
        for p in roles.get("limit", []):
            if p.get("required") or rng.random() < 0.5:
                limit = int(rng.integers(1, 8))
                args[p["name"]] = limit
        if kind == "search":
            q = roles["query"][0]
            value = row.get(t["columns"][0]) if row else None
            text = str(value).split()[0].lower() if value is not None and str(value).split() else "a"
            args[q["name"]] = text
            where.append("(" + " OR ".join(f'lower(COALESCE("{c}", \'\')) LIKE ?' for c in t["columns"]) + ")")
            params += [f"%{text}%"] * len(t["columns"])
        _fill_required(t, args, rng)
        sql = f'SELECT "{pk}" FROM "{table}"' + (" WHERE " + " AND ".join(where) if where else "") + f' ORDER BY "{pk}" LIMIT {limit}'
        expected = [r[0] for r in ref.execute(sql, params)]
        return _Case(args, lambda r, conn: r.ok and isinstance(r.data, list) and [x[pk] for x in r.data] == expected, True)
    if kind == "create":
        values = {}
        for p in t["params"]:
            if p["role"] == "fk":
                parent = p["table"]
                keys = [r[0] for r in ref.execute(f'SELECT "{spec.table(parent).pk}" FROM "{parent}"')]
                if not keys:
                    return None
                args[p["name"]] = keys[int(rng.integers(len(keys)))]
                values[p["column"]] = args[p["name"]]
            elif p["role"] in ("value", "filter") and (p.get("required") or rng.random() < 0.5):
                if "enum" in p["schema"]:
                    v = p["schema"]["enum"][int(rng.integers(len(p["schema"]["enum"])))]
                else:
                    pool = [r[p["column"]] for r in rows if r.get(p["column"]) is not None]
                    if not pool:
                        continue
                    v = pool[int(rng.integers(len(pool)))]
                args[p["name"]] = v
                values[p["column"]] = v
            elif p["role"] == "newkey":
                args[p["name"]] = "zz-new-key-1" if p["schema"].get("type") == "string" else 987_001
        _fill_required(t, args, rng)
        before = ref.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]

        def check(r, conn):
            if not r.ok or not isinstance(r.data, dict) or pk not in r.data:
                return False
            after = conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
            stored = _rows(conn, f'SELECT * FROM "{table}" WHERE "{pk}" = ?', (r.data[pk],))
            return after == before + 1 and len(stored) == 1 and all(stored[0][c] == v for c, v in values.items())
        return _Case(args, check, True)
    if kind == "update":
        args[roles["key"][0]["name"]] = row[pk]
        changes = {}
        for p in roles.get("value", []) + roles.get("fk", []):
            if not (p.get("required") or not changes):
                continue
            if "enum" in p["schema"]:
                options = [v for v in p["schema"]["enum"] if v != row.get(p["column"])] or p["schema"]["enum"]
            elif p["role"] == "fk":
                options = [r[0] for r in ref.execute(f'SELECT "{spec.table(p["table"]).pk}" FROM "{p["table"]}"')]
            else:
                options = [r[p["column"]] for r in rows if r.get(p["column"]) is not None and r.get(p["column"]) != row.get(p["column"])]
            if not options:
                return None
            v = options[int(rng.integers(len(options)))]
            args[p["name"]] = v
            changes[p["column"]] = v
        _fill_required(t, args, rng)

        def check(r, conn):
            stored = _rows(conn, f'SELECT * FROM "{table}" WHERE "{pk}" = ?', (row[pk],))
            return r.ok and len(stored) == 1 and all(stored[0][c] == v for c, v in changes.items())
        return _Case(args, check, True)
    if kind == "cancel":
        col, value = t["column"], t["value"]
        open_rows = [r for r in rows if r.get(col) != value]
        if not open_rows:
            return None
        row = open_rows[int(rng.integers(len(open_rows)))]
        args[roles["key"][0]["name"]] = row[pk]
        _fill_required(t, args, rng)
        return _Case(args, lambda r, conn: r.ok and conn.execute(f'SELECT "{col}" FROM "{table}" WHERE "{pk}" = ?', (row[pk],)).fetchone()[0] == value, True)
    if kind == "delete":
        args[roles["key"][0]["name"]] = row[pk]
        _fill_required(t, args, rng)
        return _Case(args, lambda r, conn: r.ok and conn.execute(f'SELECT COUNT(*) FROM "{table}" WHERE "{pk}" = ?', (row[pk],)).fetchone()[0] == 0, True)
    if kind == "aggregate":
        g = (roles.get("fk") or roles.get("key"))[0]
        k = row[g["column"]]
        if k is None:
            return None
        args[g["name"]] = k
        _fill_required(t, args, rng)
        col = t.get("column")
        agg = f', ROUND(COALESCE(SUM("{col}"), 0), 2), ROUND(COALESCE(AVG("{col}"), 0), 2)' if col else ""
        expected = ref.execute(f'SELECT COUNT(*){agg} FROM "{table}" WHERE "{g["column"]}" = ?', (k,)).fetchone()

        def check(r, conn):
            if not r.ok:
                return False
            got = (r.data["count"],) + ((r.data["total"], r.data["average"]) if col else ())
            return got == tuple(expected)
        return _Case(args, check, True)
    if kind == "transfer":
        col = t["column"]
        rich = [r for r in rows if (r.get(col) or 0) >= 2]
        if len(rich) < 1 or len(rows) < 2:
            return None
        a = rich[int(rng.integers(len(rich)))]
        b = next(r for r in rows if r[pk] != a[pk])
        amt = next(p["name"] for p in t["params"] if p["role"] == "amount")
        args = {roles["from"][0]["name"]: a[pk], roles["to"][0]["name"]: b[pk], amt: 1.0}
        _fill_required(t, args, rng)

        def check(r, conn):
            got = dict(conn.execute(f'SELECT "{pk}", "{col}" FROM "{table}" WHERE "{pk}" IN (?, ?)', (a[pk], b[pk])).fetchall())
            return r.ok and abs(got[a[pk]] - (a[col] - 1.0)) < 0.011 and abs(got[b[pk]] - ((b[col] or 0) + 1.0)) < 0.011
        return _Case(args, check, True)
    return None


def _invalid_cases(t: dict, valid_args: dict) -> list[_Case]:
    """Calls that must fail: each check only asks that the tool reports an error (and writes nothing)."""
    fails = lambda r, conn: not r.ok  # noqa: E731
    out = []
    keyed = [p for p in t["params"] if p["role"] in ("key", "fk", "from") and p["name"] in valid_args]
    if keyed:
        p = keyed[0]
        missing = MISSING if p["schema"].get("type") != "integer" else 987_654_321
        if p["schema"].get("type") in ("integer", "number", "string", None):
            out.append(_Case({**valid_args, p["name"]: missing}, fails, False))
    required = [p for p in t["params"] if p.get("required")]
    if required:
        out.append(_Case({k: v for k, v in valid_args.items() if k != required[0]["name"]}, fails, False))
    typed = [p for p in t["params"] if p["schema"].get("type") in ("string", "integer", "number", "boolean")]
    if typed:
        p = typed[0]
        wrong = {"string": 12345, "integer": "twelve", "number": "twelve", "boolean": "maybe"}[p["schema"]["type"]]
        out.append(_Case({**valid_args, p["name"]: wrong}, fails, False))
    out.append(_Case({**valid_args, "zz_unknown_argument": 1}, fails, False))
    return out[:3]


def validate_tool(t: dict, tool: Tool, spec: ThemeSpec, blob: bytes, seed: int = 0) -> ToolReport:
    """Run the generated unit tests of one forged tool; expected outcomes come from direct SQL."""
    rng = np.random.default_rng(seed)
    report = ToolReport(t["name"], t["kind"])
    toolset = Toolset([tool])
    ref = open_copy(blob)
    try:
        valid: list[_Case] = []
        for _ in range(6):
            if len(valid) >= 3:
                break
            try:
                case = _valid_case(t, spec, ref, rng)
            except (KeyError, IndexError, TypeError, sqlite3.Error) as exc:  # a template the generator cannot serve
                report.failures.append(f"no valid call ({type(exc).__name__}: {exc})")
                case = None
            if case is not None:
                case.args = _coerce(t, case.args)
                valid.append(case)
        invalid = _invalid_cases(t, valid[0].args if valid else {})
        n = max(len(invalid), 1)
        cases = valid[:n] + invalid[:n]
        report.tests = 2 * n  # missing valid cases count as failures
        for case in cases:
            conn = open_copy(blob)
            try:
                db = Db(conn, spec.now, spec.primary_keys)
                before = None if case.valid else conn.execute("SELECT total_changes()").fetchone()[0]
                result = toolset.call(db, ToolCall(t["name"], dict(case.args)))
                try:
                    ok = bool(case.check(result, conn))
                except Exception as exc:  # a malformed result fails the test, it does not stop validation
                    ok = False
                    report.failures.append(f"check raised {type(exc).__name__}")
                if not case.valid and ok and conn.execute("SELECT total_changes()").fetchone()[0] != before:
                    ok = False  # a rejected call must not write
                if ok:
                    report.passed += 1
                    report.valid_passed += case.valid
                else:
                    report.failures.append(f"{'valid' if case.valid else 'invalid'} {case.args!r:.120}: {result.content[:120]}")
            finally:
                conn.close()
    finally:
        ref.close()
    return report
