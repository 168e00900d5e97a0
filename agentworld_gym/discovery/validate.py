"""Validation as in the paper, made able to fail: generated unit tests per tool check the behaviour
its spec implies (a get returns that record, a list or search returns exactly the rows its filters
and text select, a create adds one row, an update stores the values, a delete removes the rows and
only those, a compute tool returns the known answer for known inputs, a business rule refuses what
it forbids, and a tool's name agrees with what it was forged to do); expected outcomes are read
back from the database or recomputed in Python, never by running the forged SQL again. A tool is
kept when its pass rate is > 0.5 and at least one valid call passes; a theme when it keeps >= 1
tool. Each report says why the tool was kept or dropped.

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
from ..world import ThemeSpec, open_copy, sql_name
from .forge import MISSING

TOOL_THRESHOLD = 0.5


@dataclass
class ToolReport:
    name: str
    kind: str
    tests: int = 0
    passed: int = 0
    valid_passed: int = 0
    missing: int = 0  # valid calls the generator could not construct (counted as failed tests)
    failures: list[str] = field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.tests if self.tests else 0.0

    @property
    def kept(self) -> bool:
        return self.pass_rate > TOOL_THRESHOLD and self.valid_passed > 0 and not any(f.startswith("its name says") for f in self.failures)

    @property
    def reason(self) -> str:
        """Why the tool was kept or dropped, in one line (shown in discovery reports)."""
        if self.kept:
            return f"kept: {self.passed}/{self.tests} behaviour tests passed" + (f" (first failure: {self.failures[0]})" if self.failures else "")
        if self.failures and self.failures[0].startswith("its name says"):
            return f"dropped: {self.failures[0]}"
        if not self.valid_passed:
            return "dropped: no valid call did what the spec says" + (f" ({self.failures[0]})" if self.failures else "")
        return f"dropped: {self.passed}/{self.tests} behaviour tests passed (<= {TOOL_THRESHOLD:.0%}); first failure: {self.failures[0]}"

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "tests": self.tests, "passed": self.passed, "pass_rate": round(self.pass_rate, 3),
                "kept": self.kept, "reason": self.reason, "failures": self.failures[:3]}


def _rows(conn, sql: str, params=()) -> list[dict]:
    cur = conn.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


class _Case:
    """One generated test: arguments, plus a check run against the tool result and a reference DB."""

    def __init__(self, args: dict, check, valid: bool, rule: str = ""):
        self.args, self.check, self.valid, self.rule = args, check, valid, rule  # rule: the rule kind a refused call breaks


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


def _kind_of_name(name: str) -> str | None:
    """What a tool's name says it does, for the writes whose meaning a name fixes (else None)."""
    from .infer import verb_kind, words_of

    kind, _ = verb_kind(words_of(name))
    return kind if kind in ("delete", "create", "cancel", "update") else None


_SAME_CLASS = {"delete": {"delete", "cancel"}, "cancel": {"cancel", "delete", "update"}, "create": {"create"}, "update": {"update", "cancel"}}


def name_mismatch(t: dict) -> str | None:
    """A reason when the forged behaviour contradicts the tool's name (a delete that inserts)."""
    said = _kind_of_name(t["name"])
    if said is None or t["kind"] in _SAME_CLASS[said] or t["kind"] == "compute":
        return None
    return f"its name says {said} but it was forged as {t['kind']}"


def _matches(row: dict, filters: list[tuple[str, Any]], text: str | None, columns: list[str]) -> bool:
    """The spec's meaning of a list/search call, in Python: equal filters, and the text in a searched column."""
    if any(row.get(c) != v for c, v in filters):
        return False
    return text is None or any(text in str(row.get(c) if row.get(c) is not None else "").lower() for c in columns)


def _compute_cases(t: dict) -> list[_Case]:
    from . import compute

    f = compute.BY_NAME[t["function"]]
    by_slot = {p["slot"]: p["name"] for p in t["params"]}
    fixed = compute.fixed_inputs(t["function"], t["name"], {p["name"]: p["slot"] for p in t["params"]})
    out = []
    for inputs, expected in f.cases:
        # a case fits when the tool takes each of its inputs, or its name fixes that input to the case's value
        if any(slot not in by_slot and fixed.get(slot) != v for slot, v in inputs.items()):
            continue
        args = {by_slot[slot]: v for slot, v in inputs.items() if slot in by_slot}
        types = {p["name"]: p["schema"].get("type") for p in t["params"]}
        if any(types.get(k) == "integer" and not (isinstance(v, int) or isinstance(v, float) and v.is_integer()) for k, v in args.items()):
            continue  # a case the tool's own schema cannot take (2.5 for an integer)
        enums = {p["name"]: p["schema"]["enum"] for p in t["params"] if "enum" in p["schema"]}
        for name, options in enums.items():  # a tool that takes 'C'/'F' gets the case in its own spelling
            spelled = next((o for o in options if name in args and compute.same_value(o, args[name])), None)
            if name in args and spelled is None:
                break
            if name in args:
                args[name] = spelled
        else:
            out.append(_Case(args, lambda r, conn, want=expected: r.ok and compute.matches_expected(r.data, want), True))
    return out[:3]


def _valid_case(t: dict, spec: ThemeSpec, ref: sqlite3.Connection, rng) -> _Case | None:
    """One valid call and a check of what the spec says it must do (read back from the database
    after the call, or recomputed in Python from the rows; never the forged SQL run again)."""
    kind, table = t["kind"], t["table"]
    pk = spec.table(table).pk
    roles = {}
    for p in t["params"]:
        roles.setdefault(p["role"], []).append(p)
    rows = _rows(ref, f'SELECT * FROM {sql_name(table)} ORDER BY {sql_name(pk)}')
    if not rows and kind not in ("create", "list", "lookup", "search"):
        return None
    row = rows[int(rng.integers(len(rows)))] if rows else {}
    args: dict[str, Any] = {}
    count = lambda conn: conn.execute(f'SELECT COUNT(*) FROM {sql_name(table)}').fetchone()[0]  # noqa: E731
    loc = (roles.get("locator") or [None])[0]

    def target_args() -> list | None:
        """Name a record by its key, or by its locator value; the keys that value selects."""
        if kind in ("delete", "cancel"):  # a parent id beside the key names the row's own parent
            for p in roles.get("fk", []):
                if row.get(p["column"]) is not None:
                    args[p["name"]] = row[p["column"]]
        if loc is None:
            args[roles["key"][0]["name"]] = row[pk]
            return [row[pk]]
        v = row.get(loc["column"])
        if v is None:
            return None
        args[loc["name"]] = v
        return [r[pk] for r in rows if r.get(loc["column"]) == v]

    if kind == "get":
        args[roles["key"][0]["name"]] = row[pk]
        _fill_required(t, args, rng)
        return _Case(args, lambda r, conn: r.ok and isinstance(r.data, dict) and r.data.get(pk) == row[pk] and r.data == row, True)
    if kind in ("list", "lookup", "search"):
        for p in roles.get("fk", []) + roles.get("filter", []) + roles.get("key", []):
            if row and (p.get("required") or rng.random() < 0.5):
                v = row[p.get("column", pk)]
                if v is None:
                    if p.get("required"):
                        return None
                    continue
                args[p["name"]] = v
        limit = 20
        for p in roles.get("limit", []):
            if p.get("required") or rng.random() < 0.5:
                limit = int(rng.integers(1, 8))
                args[p["name"]] = limit
        text = None
        if kind == "search":
            q = roles["query"][0]
            value = row.get(t["columns"][0]) if row else None
            text = str(value).split()[0].lower() if value is not None and str(value).split() else "a"
            args[q["name"]] = text
        _fill_required(t, args, rng)
        args = _coerce(t, args)
        by_name = {p["name"]: p for p in t["params"]}
        filters = [(by_name[k].get("column", pk), v) for k, v in args.items() if k in by_name and by_name[k]["role"] in ("fk", "filter", "key")]
        paged = any(by_name[k]["role"] in ("offset", "page", "sort", "direction") for k in args if k in by_name)
        text = str(args[roles["query"][0]["name"]]).strip().lower() if kind == "search" else None
        expected = [r[pk] for r in rows if _matches(r, filters, text, t.get("columns") or [])]

        def check(r, conn):
            if not r.ok or not isinstance(r.data, list) or len(r.data) > limit:
                return False
            if not all(isinstance(x, dict) and _matches(x, filters, text, t.get("columns") or []) for x in r.data):
                return False  # a row the filter or the search text excludes came back
            if paged:
                return True
            return sorted(x[pk] for x in r.data) == sorted(expected)[:limit]  # and none that matches is missing
        return _Case(args, check, True)
    if kind == "create":
        values = {}
        for p in t["params"]:
            if p["role"] == "fk":
                parent = p["table"]
                keys = [r[0] for r in ref.execute(f'SELECT {sql_name(spec.table(parent).pk)} FROM {sql_name(parent)}')]
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
        before = len(rows)

        def check(r, conn):
            if not r.ok or not isinstance(r.data, dict) or pk not in r.data:
                return False
            stored = _rows(conn, f'SELECT * FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (r.data[pk],))
            return count(conn) == before + 1 and len(stored) == 1 and all(stored[0][c] == v for c, v in values.items())
        return _Case(args, check, True)
    if kind == "update":
        open_rows = [x for x in rows if not t.get("terminal") or x.get(t["terminal"][0]) not in t["terminal"][1]]
        if not open_rows:
            return None
        row = open_rows[int(rng.integers(len(open_rows)))]
        keys = target_args()
        if not keys or any(x[pk] in keys and x not in open_rows for x in rows):
            return None
        changes = {}
        for p in roles.get("value", []) + roles.get("fk", []):
            if not (p.get("required") or not changes):
                continue
            if "enum" in p["schema"]:
                options = [v for v in p["schema"]["enum"] if v != row.get(p["column"])] or p["schema"]["enum"]
            elif p["role"] == "fk":
                options = [r[0] for r in ref.execute(f'SELECT {sql_name(spec.table(p["table"]).pk)} FROM {sql_name(p["table"])}')]
            else:
                options = [r[p["column"]] for r in rows if r.get(p["column"]) is not None and r.get(p["column"]) != row.get(p["column"])]
            if not options:
                return None
            v = options[int(rng.integers(len(options)))]
            args[p["name"]] = v
            changes[p["column"]] = v
        _fill_required(t, args, rng)

        def check(r, conn):
            stored = [_rows(conn, f'SELECT * FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (k,)) for k in keys]
            return r.ok and count(conn) == len(rows) and all(len(x) == 1 and all(x[0][c] == v for c, v in changes.items()) for x in stored)
        return _Case(args, check, True)
    if kind == "cancel":
        col, value = t["column"], t["value"]
        ends = set(t["terminal"][1]) if t.get("terminal") else {value}
        open_rows = [r for r in rows if r.get(col) not in ends | {value}]
        if not open_rows:
            return None
        row = open_rows[int(rng.integers(len(open_rows)))]
        keys = target_args()
        if not keys or any(r[pk] in keys and r.get(col) in ends | {value} for r in rows):
            return None
        _fill_required(t, args, rng)

        def check(r, conn):
            got = [conn.execute(f'SELECT {sql_name(col)} FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (k,)).fetchone() for k in keys]
            return r.ok and count(conn) == len(rows) and all(g is not None and g[0] == value for g in got)
        return _Case(args, check, True)
    if kind == "delete":
        kids = [tuple(x) for x in t.get("children", ())]
        free = [x for x in rows if not any(ref.execute(f'SELECT 1 FROM {sql_name(c)} WHERE {sql_name(f)} = ? LIMIT 1', (x[pk],)).fetchone() for c, f in kids)]
        if not free:
            return None
        row = free[int(rng.integers(len(free)))]
        keys = target_args()
        if not keys or any(k not in {x[pk] for x in free} for k in keys):
            return None
        _fill_required(t, args, rng)

        def check(r, conn):
            left = sum(conn.execute(f'SELECT COUNT(*) FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (k,)).fetchone()[0] for k in keys)
            return r.ok and left == 0 and count(conn) == len(rows) - len(keys)  # those rows are gone, and only those
        return _Case(args, check, True)
    if kind == "aggregate":
        g = (roles.get("fk") or roles.get("key"))[0]
        k = row[g["column"]]
        if k is None:
            return None
        args[g["name"]] = k
        _fill_required(t, args, rng)
        col = t.get("column")
        by_name = {p["name"]: p for p in t["params"]}
        filters = [(g["column"], k)] + [(by_name[a]["column"], v) for a, v in args.items() if by_name.get(a, {}).get("role") == "filter"]
        group = [r for r in rows if _matches(r, filters, None, [])]
        nums = [r[col] for r in group if r.get(col) is not None] if col else []

        def check(r, conn):
            if not r.ok or not isinstance(r.data, dict) or r.data.get("count") != len(group):
                return False
            if not col:
                return True
            return abs(r.data["total"] - round(sum(nums), 2)) < 0.011 and abs(r.data["average"] - (round(sum(nums) / len(nums), 2) if nums else 0)) < 0.011
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
            got = dict(conn.execute(f'SELECT {sql_name(pk)}, {sql_name(col)} FROM {sql_name(table)} WHERE {sql_name(pk)} IN (?, ?)', (a[pk], b[pk])).fetchall())
            return r.ok and abs(got[a[pk]] - (a[col] - 1.0)) < 0.011 and abs(got[b[pk]] - ((b[col] or 0) + 1.0)) < 0.011
        return _Case(args, check, True)
    return None


def rule_cases(t: dict, spec: ThemeSpec, ref: sqlite3.Connection, valid_args: dict) -> list[_Case]:
    """Calls a business rule must refuse, one per rule kind the template carries (`_Case.rule`): change
    a closed record, an update that changes nothing, delete one that still has children, act through a
    parent it does not belong to, overdraw a transfer, write past a limit or an over-long text, reuse an
    id, refer to a record that does not exist."""
    fails = lambda r, conn: not r.ok  # noqa: E731
    out = []
    if not valid_args or not t.get("rules"):
        return out
    table = t["table"]
    pk = spec.table(table).pk
    key = next((p for p in t["params"] if p["role"] == "key"), None)
    one = lambda sql, args=(): ref.execute(sql, args).fetchone()  # noqa: E731
    if "terminal" in t["rules"] and key:
        col, ends = t["terminal"]
        hit = one(f'SELECT {sql_name(pk)} FROM {sql_name(table)} WHERE {sql_name(col)} IN ({",".join("?" * len(ends))}) LIMIT 1', list(ends))
        if hit:
            out.append(_Case({**valid_args, key["name"]: hit[0]}, fails, False, "terminal"))
    if "unchanged" in t["rules"] and key and key["name"] in valid_args:
        row = _rows(ref, f'SELECT * FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (valid_args[key["name"]],))
        same = {p["name"]: row[0][p["column"]] for p in t["params"] if p["role"] in ("value", "fk") and p["name"] in valid_args} if row else {}
        if same and all(v is not None for v in same.values()):
            out.append(_Case({**valid_args, **same}, fails, False, "unchanged"))
    if "children" in t["rules"] and key:
        for child, fk in t["children"]:
            hit = one(f'SELECT {sql_name(fk)} FROM {sql_name(child)} WHERE {sql_name(fk)} IS NOT NULL LIMIT 1')
            if hit:
                out.append(_Case({**valid_args, key["name"]: hit[0]}, fails, False, "children"))
                break
    if "ownership" in t["rules"] and key and key["name"] in valid_args:
        for p in (p for p in t["params"] if p["role"] == "fk"):
            other = one(f'SELECT {sql_name(spec.table(p["table"]).pk)} FROM {sql_name(p["table"])} WHERE {sql_name(spec.table(p["table"]).pk)} NOT IN '
                        f'(SELECT {sql_name(p["column"])} FROM {sql_name(table)} WHERE {sql_name(pk)} = ?) LIMIT 1', (valid_args[key["name"]],))
            if other:
                out.append(_Case({**valid_args, p["name"]: other[0]}, fails, False, "ownership"))
                break
    if "balance" in t["rules"]:
        amt = next(p["name"] for p in t["params"] if p["role"] == "amount")
        out.append(_Case({**valid_args, amt: 10**12}, fails, False, "balance"))
    if "nonneg" in t["rules"]:
        p = next((p for p in t["params"] if p.get("column") in t["nonneg"] and p["schema"].get("type") in ("integer", "number")), None)
        if p:
            out.append(_Case({**valid_args, p["name"]: -5}, fails, False, "nonneg"))
    if "textcap" in t["rules"]:
        p = next((p for p in t["params"] if p.get("column") in t["textcap"] and p["schema"].get("type") == "string" and "enum" not in p["schema"]), None)
        if p:
            out.append(_Case({**valid_args, p["name"]: "x" * 201}, fails, False, "textcap"))
    if "unique" in t["rules"]:
        p = next(p for p in t["params"] if p["role"] == "newkey")
        hit = one(f'SELECT {sql_name(pk)} FROM {sql_name(table)} LIMIT 1')
        if hit:
            out.append(_Case({**valid_args, p["name"]: hit[0]}, fails, False, "unique"))
    if "references" in t["rules"]:
        p = next((p for p in t["params"] if p["role"] == "fk" and p["schema"].get("type") == "string"), None)
        if p:
            out.append(_Case({**valid_args, p["name"]: MISSING}, fails, False, "references"))
    return out


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
        valid: list[_Case] = _compute_cases(t) if t["kind"] == "compute" else []
        for _ in range(0 if t["kind"] == "compute" else 6):
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
        refused = [] if t["kind"] == "compute" else rule_cases(t, spec, ref, valid[0].args if valid else {})
        n = max(len(invalid), 1)
        cases = valid[:n] + invalid[:n] + refused
        report.tests = 2 * n + len(refused)  # missing valid cases count as failures
        report.missing = n - len(valid[:n])
        mismatch = name_mismatch(t)
        if mismatch:
            report.tests += 1
            report.failures.insert(0, mismatch)
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
                    what = "valid call" if case.valid else ("call a rule must refuse" if case in refused else "invalid call")
                    report.failures.append(f"{what} {case.args!r:.120}: {result.content[:120]}")
            finally:
                conn.close()
    finally:
        ref.close()
    return report


def rule_violations(spec: ThemeSpec, conn: sqlite3.Connection) -> list[str]:
    """What an initial world breaks of its theme's rules: dangling references, start dates after end
    dates, negative amounts in non-negative columns, and the theme's own checks (spec.extra["rule_check"],
    a "module:function" taking the connection). Empty for a valid world."""
    from ..world import date_pairs
    from .build import TEXT_CAP, upper_limit

    out = []
    for t in spec.tables:
        for c in t.columns:
            if c.gen == "fk":
                parent = spec.table(c.arg)
                n = conn.execute(f'SELECT COUNT(*) FROM {sql_name(t.name)} WHERE {sql_name(c.name)} IS NOT NULL AND {sql_name(c.name)} NOT IN '
                                 f'(SELECT {sql_name(parent.pk)} FROM {sql_name(parent.name)})').fetchone()[0]
                if n:
                    out.append(f"{t.name}.{c.name}: {n} rows refer to a missing {parent.name} row")
            elif c.gen in ("int", "float") and isinstance(c.arg, tuple) and c.arg[0] >= 0:
                n = conn.execute(f'SELECT COUNT(*) FROM {sql_name(t.name)} WHERE {sql_name(c.name)} < 0 OR {sql_name(c.name)} > ?', (upper_limit(c),)).fetchone()[0]
                if n:
                    out.append(f"{t.name}.{c.name}: {n} values outside 0..{upper_limit(c)}")
            elif c.gen == "faker" and c.type == "text":
                n = conn.execute(f'SELECT COUNT(*) FROM {sql_name(t.name)} WHERE length({sql_name(c.name)}) > ?', (TEXT_CAP,)).fetchone()[0]
                if n:
                    out.append(f"{t.name}.{c.name}: {n} values longer than {TEXT_CAP} characters")
        for a, b in date_pairs(t):
            n = conn.execute(f'SELECT COUNT(*) FROM {sql_name(t.name)} WHERE {sql_name(b)} < {sql_name(a)}').fetchone()[0]
            if n:
                out.append(f"{t.name}: {n} rows end ({b}) before they start ({a})")
    check = spec.extra.get("rule_check") if isinstance(spec.extra, dict) else None
    if check:
        import importlib

        module, _, fn = check.partition(":")
        out += getattr(importlib.import_module(module), fn)(conn)
    return out
