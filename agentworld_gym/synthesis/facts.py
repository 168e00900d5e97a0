"""What synthesis needs to know about one built world, computed once and cached.

Everything here is derived from the theme's spec and its built database, never from a theme's
specifics: column values to sample arguments from, how often a value occurs (for "does this
identify one entity?"), initial table hashes, and episode copies that record which tables a
call chain wrote to.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from bisect import bisect_left, insort
from collections import Counter
from functools import lru_cache
from typing import Any

from ..actions import ToolCall
from ..theme import Theme
from ..tools import Tool, ToolResult
from ..world import _authorizer, open_copy, sql_name

READ_MEMO_SIZE = 50_000  # reads remembered per world (cleared when full: memory stays bounded)
_ENCODE = json.JSONEncoder(default=str).encode  # the same text as json.dumps(row, default=str)
# The statement's verb, then its table as SQLite accepts it: "double quoted" ("" inside is one "), `backticked`,
# [bracketed] or a bare word; the whole name is kept (`posts/drops`, not `posts`).
_WRITE_SQL = re.compile(r'^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+'
                        r'(?:"((?:[^"]|"")*)"|`((?:[^`]|``)*)`|\[([^\]]*)\]|(\w+))', re.I)


_MAY_WRITE = frozenset("IiRrUuDd \t\n\r")  # how the statements `written_table` matches can begin
_NO_WRITE = re.compile(r"\s*(?:SELECT|SAVEPOINT|RELEASE|ROLLBACK|BEGIN|COMMIT|END)\b", re.I)  # statements that write nothing


@lru_cache(maxsize=4096)
def written_table(sql: str) -> str | None:
    """The table an INSERT / REPLACE / UPDATE / DELETE statement writes to (None for anything else)."""
    m = _WRITE_SQL.match(sql)
    if m is None:
        return None
    double, back, bracket, bare = m.groups()
    if double is not None:
        return double.replace('""', '"')
    if back is not None:
        return back.replace("``", "`")
    return bracket if bracket is not None else bare


class Run:
    """A fresh copy of a world on which one call chain executes; remembers the tables it wrote.

    Copies are pooled per world: opening a copy costs a schema parse, and restoring one from the
    template (deserialize) makes SQLite prepare every statement again (about 5x the cost of a
    cached lookup), so a run works inside a savepoint opened on the pristine copy and rolled back
    when it closes: the copy goes back to the pool unchanged, its prepared statements still valid.
    Each write runs inside a savepoint of its own, rolled back when the call fails, so a refused
    write leaves the copy as it was (as the tool's own savepoint does outside a transaction).
    With `memo`, a call that changes nothing (a read, or a write the world's rules refuse) is answered
    from the world's memo (`Facts.reads`: such a call on the pristine world gives the same result
    every time, the clock being fixed), so walks and plans that retry a call pay once. After a write
    the memo still answers a call none of whose statements named a table this run has written to
    (`Facts.tables_in` of each statement SQLite ran for it): a tool's result depends only on what it
    read, and those tables are as in the pristine world. (No theme's world has triggers, views or
    enforced foreign keys, which would read tables no statement names.)
    """

    def __init__(self, fx: Facts, memo: bool = False):
        self.fx, self.theme = fx, fx.theme
        self.conn = fx._acquire()
        self.conn.execute("SAVEPOINT run")  # the pristine copy: rolled back to on close (see the class docstring)
        self.conn.set_trace_callback(self._trace)
        self.written: set[str] = set()
        self._touched: set[str] = set()  # tables the current call wrote to
        self._named: set[str] | None = None  # tables the current call's statements named (memo runs only)
        self._unread = False  # the current call ran a statement that may write where its text does not say
        self.changed: set[str] = set()  # tables a write that succeeded touched: where this copy may differ from the pristine world
        self.state_rows: dict | None = None  # {table: rows} read when the run's end state was hashed (graph.state_check)
        self.dirty = False
        self._memo: dict | None = fx.reads if memo else None  # results on the pristine world (see the class docstring)
        self.db = self.theme.db(self.conn)
        self.calls: list[ToolCall] = []
        self.results: list[ToolResult] = []
        self.changes: list[frozenset] = []  # per call: the tables it wrote to, if it was a write that succeeded (else empty)

    def _trace(self, sql: str) -> None:
        table = written_table(sql) if sql[:1] in _MAY_WRITE else None  # a SELECT is most statements: no regex for it
        if table:
            self.written.add(table)
            self._touched.add(table)
            if table not in self.fx.table_names:
                self._unread = True
        elif _NO_WRITE.match(sql) is None:
            self._unread = True  # a statement that may write where `written_table` cannot tell (WITH ... UPDATE)
        if self._named is not None:
            self._named |= self.fx.tables_in(sql)

    def call(self, name: str, arguments: dict) -> ToolResult:
        """Run one call (a call already made on this unchanged copy that changed nothing, a read or a
        refused write, is answered from memory)."""
        call = ToolCall(name, dict(arguments))
        writes = self.theme.toolset[name].writes if name in self.theme.toolset else False
        change = frozenset()
        self.dirty = self.dirty or writes
        memo = self._memo  # a refused write leaves the copy as it was: its own savepoint is rolled back below
        key = (name, repr(sorted(arguments.items()))) if memo is not None else None
        hit = memo.get(key) if key is not None else None
        if hit is not None and self.changed and not self.changed.isdisjoint(hit[2]):
            hit = None  # it read a table this run changed: the pristine world's answer may not hold here
        if hit is not None:
            result, tables, _named = hit
            self.written.update(tables)  # what the call touched before it was refused, as a real call records
        else:
            self._touched, self._unread = set(), False
            self._named = set() if key is not None else None
            self.fx.tool_calls += 1
            if writes:
                self.conn.execute("SAVEPOINT call")
                result = self.theme.toolset.call(self.db, call)
                if not result.ok:
                    self.conn.execute("ROLLBACK TO call")
                self.conn.execute("RELEASE call")
            else:
                result = self.theme.toolset.call(self.db, call)
            named, self._named = self._named, None
            if writes and result.ok:
                # the world changed there: no longer the one the memo answers for (everywhere, when a statement
                # wrote where its text does not say)
                change = frozenset(self.fx.table_names if self._unread else self._touched)
                self.changed |= change
            elif key is not None and self.changed.isdisjoint(named):
                if len(memo) >= READ_MEMO_SIZE:
                    memo.clear()
                # failed calls too (they fail again on the same world); what it read is as in the pristine world
                memo[key] = (result, frozenset(self._touched), frozenset(named))
        self.calls.append(call)
        self.results.append(result)
        self.changes.append(change)
        return result

    def use_memo(self) -> None:
        """Answer calls from the world's memo from now on (under the rule of the class docstring, which
        holds on any copy: `changed` holds every table a write of this run changed, rolled back or not)."""
        self._memo = self.fx.reads

    def would_succeed(self, name: str, arguments: dict) -> bool:
        """Whether write `name` would succeed on this copy now: tried inside a savepoint that is then rolled
        back, so the copy is left as it was (the tables it touched are recorded as a real call's are).
        With `memo`, answered from the world's probe memo (`Facts.probes`) under the rule the read memo
        follows: the probe named no table this run has changed."""
        memo = self.fx.probes if self._memo is not None else None
        key = (name, repr(sorted(arguments.items())))
        hit = memo.get(key) if memo is not None else None
        if hit is not None and (not self.changed or self.changed.isdisjoint(hit[2])):
            self.written.update(hit[1])
            return hit[0]
        self._touched, self._named = set(), set()
        self.fx.tool_calls += 1
        self.conn.execute("SAVEPOINT probe")
        try:
            ok = self.theme.toolset.call(self.db, ToolCall(name, dict(arguments))).ok
        finally:
            self.conn.execute("ROLLBACK TO probe")
            self.conn.execute("RELEASE probe")
            named, self._named = self._named, None
        self.dirty = True
        if memo is not None and self.changed.isdisjoint(named):
            if len(memo) >= READ_MEMO_SIZE:
                memo.clear()
            memo[key] = (ok, frozenset(self._touched), frozenset(named))
        return ok

    def close(self) -> None:
        if self.conn is not None:
            self.conn.set_trace_callback(None)
            pristine = self.conn.in_transaction  # the savepoint opened on the pristine copy still holds
            if pristine:
                self.conn.execute("ROLLBACK")
            self.fx._release(self.conn, not pristine and (self.dirty or bool(self.written)))
            self.conn = None

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Facts:
    """Cached facts about the world (theme, db_seed): read through one private, never-written copy."""

    def __init__(self, theme: Theme, db_seed: int):
        self.theme, self.db_seed = theme, db_seed
        self.template = theme.world(db_seed).template
        self._conn = open_copy(self.template)
        self._values: dict[tuple[str, str], tuple] = {}
        self._counts: dict[tuple[str, str], dict] = {}
        self._hashes: dict[tuple[str, ...], str] = {}
        self._row_text: dict[str, dict[tuple, str]] = {}
        self._initial_rows: dict[str, Counter] = {}
        self._initial_texts: dict[str, bytes] = {}
        self._initial_sorted_texts: dict[str, list[str]] = {}
        self.columns = {c.name: t.name for t in reversed(theme.spec.tables) for c in t.columns}  # first table wins
        self.table_columns = {t.name: {c.name for c in t.columns} for t in theme.spec.tables}
        self.tool_calls = 0  # calls synthesis ran on copies of this world (not those answered from the memo): its work, load aside
        # CPU seconds spent in `graph.viable`'s probes of this world (once per world, level and kind; a bench reports
        # synthesis with and without them), and whether one is running
        self.probe_cpu, self.probing = 0.0, False
        self.derived: dict = {}  # what synthesis works out once per world from it (e.g. which keys list enough records)
        self.reads: dict = {}  # (tool, arguments) -> (ToolResult, tables touched, tables named) of a call that changed nothing on the pristine world (see Run)
        self.probes: dict = {}  # (write tool, arguments) -> (whether it succeeds, tables touched, tables named) on the pristine world (Run.would_succeed)
        self._idle: list = []
        self._lock = threading.Lock()
        names = [r[0] for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        self.table_names = frozenset(names)
        # whole names only: no word character on either side (a lookaround, not \\b, so names that begin or end
        # with punctuation match too)
        self._table_names = re.compile(r"(?<!\w)(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?!\w)") if names else None
        self._named_in: dict[str, frozenset] = {}
        self._related: dict[tuple[str, str], dict] = {}

    def tables_in(self, sql: str) -> frozenset:
        """The world's tables a statement's text names (any whole word that is a table's name: a value or
        column that happens to be one only adds a table, never hides one)."""
        named = self._named_in.get(sql)
        if named is None:
            named = frozenset(self._table_names.findall(sql)) if self._table_names else frozenset()
            if len(self._named_in) >= READ_MEMO_SIZE:
                self._named_in.clear()
            self._named_in[sql] = named
        return named

    def run(self, memo: bool = False) -> Run:
        """A fresh copy; `memo` answers reads of the unchanged world from the world's read memo (synthesis
        only: the replays that verify a task always run every call)."""
        return Run(self, memo)

    def _acquire(self):
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return open_copy(self.template)

    def _release(self, conn, dirty: bool) -> None:
        if dirty:  # back to the template (the world's authorizer forbids deserialize while set); only when
            # something ended the run's savepoint (a full ROLLBACK of it leaves the copy pristine but sets no flag)
            conn.set_authorizer(None)
            conn.deserialize(self.template)
            conn.set_authorizer(_authorizer)
        with self._lock:
            if len(self._idle) < 4:
                self._idle.append(conn)
                return
        conn.close()

    def values(self, table: str, column: str) -> tuple:
        """Distinct non-null values of a column, sorted (deterministic)."""
        key = (table, column)
        if key not in self._values:
            rows = self._conn.execute(f'SELECT DISTINCT {sql_name(column)} FROM {sql_name(table)} WHERE {sql_name(column)} IS NOT NULL ORDER BY 1')
            self._values[key] = tuple(r[0] for r in rows)
        return self._values[key]

    def count(self, table: str, column: str, value: Any) -> int:
        """How many rows hold `value` in `column` (1 = the value identifies one row)."""
        key = (table, column)
        if key not in self._counts:
            rows = self._conn.execute(f'SELECT {sql_name(column)}, COUNT(*) FROM {sql_name(table)} GROUP BY 1')
            self._counts[key] = dict(rows.fetchall())
        return self._counts[key].get(value, 0)

    def share(self, table: str, column: str, value: Any) -> float:
        """The share of the table's rows that hold `value` in `column` (0 when the table is empty)."""
        self.count(table, column, value)
        total = sum(self._counts[table, column].values())
        return self._counts[table, column].get(value, 0) / total if total else 0.0

    def initial_hash(self, tables: tuple[str, ...]) -> str:
        key = tuple(sorted(tables))
        if key not in self._hashes:
            self._hashes[key] = self.state_hash(self._conn, key, unchanged=key)
        return self._hashes[key]

    def state_hash(self, conn, tables: tuple[str, ...], rows: dict | None = None, unchanged=()) -> str:
        """Exactly `world.state_hash(conn, tables)`, but each row's JSON text is cached: after a
        write most rows are unchanged, and encoding them again is what makes hashing slow. (SQLite
        column affinity fixes each column's type, so equal rows always encode to the same text.)
        With `rows`, each table's rows (`Facts.rows`) are put there too, from the same read. Tables in
        `unchanged` (the caller knows they are as in the pristine world) are not read: their text and
        rows are the pristine world's, cached."""
        h = hashlib.sha256()
        for t in sorted(tables):
            if t in unchanged:
                h.update(t.encode())
                h.update(self._initial_text(t))
                if rows is not None:
                    rows[t] = self.initial_rows(t)
                continue
            fetched = conn.execute(f'SELECT * FROM {sql_name(t)}').fetchall()
            counted = Counter(fetched)
            if rows is not None:
                rows[t] = counted
            h.update(t.encode())
            h.update(self._text_after_changes(t, fetched, counted))
        return h.hexdigest()[:32]

    def _text(self, table: str, fetched: list) -> bytes:
        """What `world.state_hash` hashes for a table after its name: its rows' JSON texts, sorted, one a line."""
        return "\n".join(self._sorted_texts(table, fetched)).encode()

    def _sorted_texts(self, table: str, fetched: list) -> list[str]:
        cache = self._row_text.setdefault(table, {})
        if len(cache) > 200_000:
            cache.clear()
        get = cache.get
        texts = [get(r) or cache.setdefault(r, _ENCODE(r)) for r in fetched]
        texts.sort()
        return texts

    def _text_after_changes(self, table: str, fetched: list, counted: Counter) -> bytes:
        """`_text` of a table read as `fetched`, worked out from the pristine table's sorted texts: only the
        rows it gained or lost are encoded and placed (each row appears once in both: a table with a
        repeated row is encoded whole)."""
        initial = self.initial_rows(table)
        if len(counted) != len(fetched) or len(initial) != initial.total():
            return self._text(table, fetched)
        gained, lost = counted.keys() - initial.keys(), initial.keys() - counted.keys()
        if len(gained) + len(lost) > len(fetched) // 4:
            return self._text(table, fetched)
        texts = list(self._initial_sorted(table))
        cache = self._row_text[table]
        for r in lost:
            text = cache.get(r) or cache.setdefault(r, _ENCODE(r))
            i = bisect_left(texts, text)
            if i == len(texts) or texts[i] != text:
                return self._text(table, fetched)
            del texts[i]
        for r in gained:
            insort(texts, cache.get(r) or cache.setdefault(r, _ENCODE(r)))
        return "\n".join(texts).encode()

    def _initial_sorted(self, table: str) -> list[str]:
        if table not in self._initial_sorted_texts:
            self._initial_sorted_texts[table] = self._sorted_texts(table, self._conn.execute(f'SELECT * FROM {sql_name(table)}').fetchall())
        return self._initial_sorted_texts[table]

    def _initial_text(self, table: str) -> bytes:
        if table not in self._initial_texts:
            self._initial_texts[table] = "\n".join(self._initial_sorted(table)).encode()
        return self._initial_texts[table]

    def rows(self, conn, table: str) -> Counter:
        """A table's rows as a multiset: equal for two copies exactly when their state hashes of the table
        are equal (column affinity fixes each column's type), at a fraction of the cost (no JSON).
        Compare them with `same_rows`."""
        return Counter(conn.execute(f'SELECT * FROM {sql_name(table)}').fetchall())

    def initial_rows(self, table: str) -> Counter:
        if table not in self._initial_rows:
            self._initial_rows[table] = self.rows(self._conn, table)
        return self._initial_rows[table]

    def same_state(self, conn, expected: dict[str, Counter], tables=None) -> bool:
        """Whether `conn` holds exactly `expected` ({table: rows}) in `tables` (default: all of them; the
        caller knows the others are equal); stops at the first table that differs, and compares row counts
        first (a left-out insert or delete shows there without reading the rows)."""
        tables = list(expected) if tables is None else [t for t in expected if t in tables]
        if any(conn.execute(f'SELECT COUNT(*) FROM {sql_name(t)}').fetchone()[0] != expected[t].total() for t in tables):
            return False
        return all(same_rows(self.rows(conn, t), expected[t]) for t in tables)

    def related(self, key: str, value: Any, other: str) -> tuple:
        """The values of entity key `other` that some row of the world holds beside `value` of entity key
        `key` (a share's document and user, an event and its organiser), sorted; empty when none does.
        A column holds an entity key when it is its table's primary key or a foreign key to a table
        whose primary key it is. Built once per pair of keys."""
        pair = (key, other)
        if pair not in self._related:
            found: dict = {}
            for t in self.theme.spec.tables:
                cols = {}
                for c in t.columns:
                    k = t.pk if c.name == t.pk else (self.theme.spec.table(c.arg).pk if c.gen == "fk" else None)
                    if k in pair and k not in cols:
                        cols[k] = c.name
                if len(cols) == 2 and key != other:
                    for a, b in self._conn.execute(f'SELECT DISTINCT {sql_name(cols[key])}, {sql_name(cols[other])} FROM {sql_name(t.name)} '
                                                   f'WHERE {sql_name(cols[key])} IS NOT NULL AND {sql_name(cols[other])} IS NOT NULL'):
                        found.setdefault(a, set()).add(b)
            self._related[pair] = {a: tuple(sorted(bs, key=lambda v: (type(v).__name__, v))) for a, bs in found.items()}
        return self._related[pair].get(value, ())

    def key_column(self, key: str) -> tuple[str, str] | None:
        return self.theme.entity_keys.get(key)

    def column_of(self, param: str) -> tuple[str, str] | None:
        """The (table, column) a plain parameter's values can be sampled from, if any column has its name."""
        table = self.columns.get(param)
        return (table, param) if table else None

    def neighbours(self, table: str, column: str, value: Any) -> list:
        """Near-duplicates of `value`: its neighbours in the sorted column (AC-1038 -> AC-1039, AC-1037)."""
        values = self.values(table, column)
        try:
            i = values.index(value)
        except ValueError:
            return []
        return [values[j] for j in (i + 1, i - 1) if 0 <= j < len(values) and values[j] != value]


def same_rows(a: Counter, b: Counter) -> bool:
    """Whether two row multisets of `Facts.rows` are equal: compared as dicts (in C; Counter's own == walks
    every element in Python to treat a missing row as a zero count, and these hold no zero counts)."""
    return dict.__eq__(a, b)


def same_tables(a: dict[str, Counter], b: dict[str, Counter]) -> bool:
    """Whether two {table: rows} maps hold the same tables with the same rows (`same_rows`)."""
    return a.keys() == b.keys() and all(same_rows(rows, b[t]) for t, rows in a.items())


@lru_cache(maxsize=256)
def facts(theme: Theme, db_seed: int = 0) -> Facts:
    return Facts(theme, db_seed)


PAGE_SIZES = (10, 20, 25, 50, 100)  # list lengths that look like a page rather than a whole answer


def capped(t: Tool, arguments: dict, data: Any) -> bool:
    """True when a list output may have been cut to a page (a count of it would be the page size, not
    the answer): it is as long as a numeric parameter's value or default (a limit, a page size), or
    as long as a usual page size (the tool may cut it without saying so)."""
    if not isinstance(data, list):
        return False
    if len(data) in PAGE_SIZES:
        return True
    for p, prop in t.parameters.get("properties", {}).items():
        if prop.get("type") in ("integer", "number") and p not in t.consumes:
            limit = arguments.get(p, prop.get("default"))
            if isinstance(limit, (int, float)) and not isinstance(limit, bool) and len(data) >= limit:
                return True
    return False
