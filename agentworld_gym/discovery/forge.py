"""Tool forging: executable `Tool` objects built from template specs bound to a theme's schema.

A template spec is JSON data (so forged themes serialise): the tool's real or composed name, its
kind (get / list / search / lookup / create / update / cancel / delete / aggregate / transfer), the
table it works on, and one entry per parameter giving the parameter's JSON schema and its role:

  key     the primary key of the table          fk      a key of another table (a filter / link)
  filter  an equality filter on a column        query   a case-insensitive substring search
  limit   how many rows to return               value   a column value to write
  newkey  a caller-chosen primary key           amount / from / to   transfer operands
  locator a non-key column naming the records a write acts on (a path, a name, a pid)
  offset / page / sort / direction   paging and ordering of list and search results
  slot    an input of a compute function (kind "compute": see discovery.compute)

A parameter that cannot be given meaning is not in the template at all (see "dropped").
"""

from __future__ import annotations

import re
from typing import Any

from ..theme import humanize, noun_of
from ..tools import READ, WRITE, Db, Tool, ToolError
from ..world import ThemeSpec, sql_name
from .infer import plural, singular

WRITE_KINDS = {"create", "update", "cancel", "delete", "transfer"}
CANCEL_WORDS = ("cancelled", "canceled", "closed", "revoked", "withdrawn", "disabled", "ended", "retired", "archived", "dropped", "expired", "rejected", "paused", "muted")
TEXT_CAP = 200  # same as build.TEXT_CAP (kept here so forging needs no build import)
MISSING = "ZZ-0000-missing"  # an id no world contains (used by validation)


def _noun(table: str) -> str:
    return humanize(singular(table))


def _nouns(table: str) -> str:
    return humanize(table)


def _rows(db: Db, spec_table: str, where: list[str], params: list, order: str, limit: int | None, offset: int = 0, desc: bool = False) -> list[dict]:
    sql = f'SELECT * FROM {sql_name(spec_table)}' + (" WHERE " + " AND ".join(where) if where else "") + f' ORDER BY {sql_name(order)}' + (" DESC" if desc else "")
    if limit is not None:
        sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
    return db.all(sql, params)


def _check_limit(v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or not 1 <= v <= 100:
        raise ToolError(f"The number of results must be a whole number between 1 and 100, got {v!r}.")
    return int(v)


def _require_row(db: Db, table: str, pk: str, key: Any, noun: str) -> dict:
    row = db.one(f'SELECT * FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (key,))
    if row is None:
        raise ToolError(f"{noun.capitalize()} {key!r} not found.")
    return row


def _whole(v, name: str, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or v < lo or v > 100_000:
        raise ToolError(f"{name} must be a whole number of at least {lo}, got {v!r}.")
    return int(v)


def make_fn(t: dict, spec: ThemeSpec):
    """The Python implementation of template `t` over `spec`'s tables."""
    if t["kind"] == "compute":
        from .compute import call, fixed_inputs

        mapping = {p["name"]: p["slot"] for p in t["params"]}
        fixed = fixed_inputs(t["function"], t["name"], mapping)
        return lambda db, **kw: call(t["function"], mapping, kw, fixed)
    kind, table = t["kind"], t["table"]
    pks = spec.primary_keys
    pk = pks[table]
    noun = _noun(table)
    params = t["params"]
    by_role: dict[str, list[dict]] = {}
    for p in params:
        by_role.setdefault(p["role"], []).append(p)
    key = (by_role.get("key") or [None])[0]
    col = t.get("column")

    def filters(db: Db, kw: dict) -> tuple[list[str], list]:
        where, args = [], []
        for p in by_role.get("fk", []) + by_role.get("filter", []):
            if p["name"] in kw and kw[p["name"]] is not None:
                if p["role"] == "fk":
                    ref = p["table"]
                    _require_row(db, ref, pks[ref], kw[p["name"]], _noun(ref))
                where.append(f'{sql_name(p["column"])} = ?')
                args.append(kw[p["name"]])
        return where, args

    def need(kw: dict, p: dict):
        # a real schema may mark a parameter optional that the tool cannot do without (the record's id)
        if kw.get(p["name"]) is None:
            raise ToolError(f"Give {p['name']}: this call needs it.")
        return kw[p["name"]]

    def limit_of(kw: dict) -> int:
        for p in by_role.get("limit", []):
            if p["name"] in kw:
                return _check_limit(kw[p["name"]])
        return 20

    columns = [c.name for c in spec.table(table).columns]

    def page_of(kw: dict) -> tuple[str, bool, int]:
        """(order column, descending, offset) from the sort / direction / offset / page parameters."""
        order, desc, offset = pk, False, 0
        for p in by_role.get("sort", []):
            if kw.get(p["name"]) is not None:
                order = str(kw[p["name"]])
                if order not in columns:
                    raise ToolError(f"Cannot sort by {order!r}; sort by one of: {', '.join(columns)}.")
        for p in by_role.get("direction", []):
            if kw.get(p["name"]) is not None:
                d = str(kw[p["name"]]).lower()
                if d not in ("asc", "desc", "ascending", "descending"):
                    raise ToolError(f"The order must be asc or desc, got {kw[p['name']]!r}.")
                desc = d.startswith("desc")
        for p in by_role.get("offset", []):
            if kw.get(p["name"]) is not None:
                offset = _whole(kw[p["name"]], "The offset", 0)
        for p in by_role.get("page", []):
            if kw.get(p["name"]) is not None:
                offset = (_whole(kw[p["name"]], "The page", 1) - 1) * limit_of(kw)
        return order, desc, offset

    loc = (by_role.get("locator") or [None])[0]
    rules = set(t.get("rules", ()))
    status_col, terminal = t.get("terminal") or (None, ())
    terminal = tuple(terminal)
    nonneg = set(t.get("nonneg", ()))
    children = [tuple(x) for x in t.get("children", ())]

    scopes = by_role.get("fk", []) if kind in ("delete", "cancel") else []

    def targets(db: Db, kw: dict) -> list:
        """The primary keys a write acts on: the given id, or every row holding the locator value;
        a parent id given beside it (a message's channel) must exist and own those rows."""
        if loc is None:
            k = need(kw, key)
            _require_row(db, table, pk, k, noun)
            keys = [k]
        else:
            v = need(kw, loc)
            keys = [r[pk] for r in db.all(f'SELECT {sql_name(pk)} FROM {sql_name(table)} WHERE {sql_name(loc["column"])} = ? ORDER BY {sql_name(pk)}', (v,))]
            if not keys:
                raise ToolError(f"No {noun} with {humanize(loc['name'])} {v!r}.")
        for p in scopes:
            if kw.get(p["name"]) is not None:
                parent = _noun(p["table"])
                _require_row(db, p["table"], pks[p["table"]], kw[p["name"]], parent)
                for k in keys:
                    if db.value(f'SELECT {sql_name(p["column"])} FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (k,)) != kw[p["name"]]:
                        raise ToolError(f"{noun.capitalize()} {k!r} does not belong to {parent} {kw[p['name']]!r}.")
        return keys

    def check_open(db: Db, k) -> None:
        if "terminal" in rules:
            state = db.value(f'SELECT {sql_name(status_col)} FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (k,))
            if state in terminal:
                raise ToolError(f"{noun.capitalize()} {k!r} is {state} and can no longer be changed.")

    upper = t.get("upper", {})
    textcap = set(t.get("textcap", ()))

    def check_values(values: dict) -> None:
        for c, v in values.items():
            if c in nonneg and isinstance(v, (int, float)) and not isinstance(v, bool) and not 0 <= v <= upper.get(c, float("inf")):
                raise ToolError(f"{humanize(c).capitalize()} must be between 0 and {upper.get(c, 'any'):,}, got {v!r}.")
            if c in textcap and isinstance(v, str) and not 0 < len(v.strip()) <= TEXT_CAP:
                raise ToolError(f"{humanize(c).capitalize()} must be non-empty and at most {TEXT_CAP} characters, got {len(v)}.")

    if kind == "get":
        def fn(db: Db, **kw):
            return _require_row(db, table, pk, need(kw, key), noun)
    elif kind in ("list", "lookup"):
        def fn(db: Db, **kw):
            where, args = filters(db, kw)
            if key and key["name"] in kw:
                where.append(f'{sql_name(pk)} = ?')
                args.append(kw[key["name"]])
            order, desc, offset = page_of(kw)
            return _rows(db, table, where, args, order, limit_of(kw), offset, desc)
    elif kind == "search":
        q = by_role["query"][0]

        def fn(db: Db, **kw):
            where, args = filters(db, kw)
            order, desc, offset = page_of(kw)
            if kw.get(q["name"]) is None:  # an optional query left out: no text filter
                return _rows(db, table, where, args, order, limit_of(kw), offset, desc)
            text = str(kw[q["name"]]).strip().lower()
            if not text:
                raise ToolError("The search text must not be empty.")
            where.append("(" + " OR ".join(f"lower(COALESCE({sql_name(c)}, '')) LIKE ?" for c in t["columns"]) + ")")
            args += [f"%{text}%"] * len(t["columns"])
            return _rows(db, table, where, args, order, limit_of(kw), offset, desc)
    elif kind == "create":
        prefix = t.get("prefix", "")

        def fn(db: Db, **kw):
            row = {c: d for c, d in t.get("defaults", {}).items()}
            for p in by_role.get("fk", []):
                if p["name"] in kw:
                    _require_row(db, p["table"], pks[p["table"]], kw[p["name"]], _noun(p["table"]))
                    row[p["column"]] = kw[p["name"]]
            for p in by_role.get("value", []) + by_role.get("filter", []):
                if p["name"] in kw:
                    row[p["column"]] = kw[p["name"]]
            check_values(row)
            newkey = (by_role.get("newkey") or [None])[0]
            if newkey and newkey["name"] in kw:
                new_id = kw[newkey["name"]]
                if db.one(f'SELECT 1 FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (new_id,)):
                    raise ToolError(f"{noun.capitalize()} {new_id!r} already exists.")
            else:
                new_id = next_key(db, table, pk, prefix, t.get("key_type", "text"))
            row[pk] = new_id
            db.insert(table, row)
            return _require_row(db, table, pk, new_id, noun)
    elif kind == "update":
        def fn(db: Db, **kw):
            keys = targets(db, kw)
            values = {p["column"]: kw[p["name"]] for p in by_role.get("value", []) + by_role.get("fk", []) if p["name"] in kw}
            for p in by_role.get("fk", []):
                if p["name"] in kw:
                    _require_row(db, p["table"], pks[p["table"]], kw[p["name"]], _noun(p["table"]))
            if not values:
                raise ToolError("Nothing to change: give at least one new value.")
            check_values(values)
            for k in keys:
                check_open(db, k)
            if "unchanged" in rules:
                current = [_require_row(db, table, pk, k, noun) for k in keys]
                if all(all(row.get(c) == v for c, v in values.items()) for row in current):
                    what = ", ".join(f"{humanize(c)} {v!r}" for c, v in values.items())
                    raise ToolError(f"{noun.capitalize()} {keys[0]!r} already has {what}; an update that changes nothing is refused.")
            for k in keys:
                db.update(table, k, **values)
            if loc is None:
                return _require_row(db, table, pk, keys[0], noun)
            return {"updated": len(keys), pk: keys if len(keys) > 1 else keys[0], **values}
    elif kind == "cancel":
        value = t["value"]

        def fn(db: Db, **kw):
            keys = targets(db, kw)
            rows = [_require_row(db, table, pk, k, noun) for k in keys]
            for row in rows:
                if row[col] == value:
                    raise ToolError(f"{noun.capitalize()} {row[pk]!r} is already {value}.")
                check_open(db, row[pk])
            for row in rows:
                db.update(table, row[pk], **{col: value})
            if len(rows) == 1:
                return {pk: rows[0][pk], col: value, "previous": rows[0][col]}
            return {pk: keys, col: value, "updated": len(keys)}
    elif kind == "delete":
        def fn(db: Db, **kw):
            keys = targets(db, kw)
            for child, fk_col in children:
                for k in keys:
                    n = db.value(f'SELECT COUNT(*) FROM {sql_name(child)} WHERE {sql_name(fk_col)} = ?', (k,))
                    if n:
                        raise ToolError(f"{noun.capitalize()} {k!r} still has {n} {humanize(child)}; remove those first.")
            for k in keys:
                db.execute(f'DELETE FROM {sql_name(table)} WHERE {sql_name(pk)} = ?', (k,))
            return {pk: keys[0] if len(keys) == 1 else keys, "deleted": len(keys)}
    elif kind == "aggregate":
        group = (by_role.get("fk") or by_role.get("key"))[0]

        def fn(db: Db, **kw):
            where, args = [], []
            k = need(kw, group)
            if group["role"] == "fk":
                _require_row(db, group["table"], pks[group["table"]], k, _noun(group["table"]))
            where.append(f'{sql_name(group["column"])} = ?')
            args.append(k)
            for p in by_role.get("filter", []):
                if p["name"] in kw:
                    where.append(f'{sql_name(p["column"])} = ?')
                    args.append(kw[p["name"]])
            agg = f", ROUND(COALESCE(SUM({sql_name(col)}), 0), 2) AS total, ROUND(COALESCE(AVG({sql_name(col)}), 0), 2) AS average" if col else ""
            row = db.one(f'SELECT COUNT(*) AS count{agg} FROM {sql_name(table)} WHERE ' + " AND ".join(where), args)
            return {group["name"]: k, **row}
    elif kind == "transfer":
        src, dst, amt = by_role["from"][0], by_role["to"][0], by_role["amount"][0]

        def fn(db: Db, **kw):
            a, b, amount = need(kw, src), need(kw, dst), need(kw, amt)
            if not isinstance(amount, (int, float)) or amount <= 0:
                raise ToolError(f"The amount must be greater than zero, got {amount!r}.")
            if a == b:
                raise ToolError("The source and the destination must differ.")
            ra = _require_row(db, table, pk, a, noun)
            rb = _require_row(db, table, pk, b, noun)
            if (ra[col] or 0) < amount:
                raise ToolError(f"Not enough {humanize(col)}: {ra[col]} available, {amount} requested.")
            db.update(table, a, **{col: round((ra[col] or 0) - amount, 2)})
            db.update(table, b, **{col: round((rb[col] or 0) + amount, 2)})
            return {src["name"]: a, dst["name"]: b, "moved": amount, f"{col}_left": round((ra[col] or 0) - amount, 2)}
    else:
        raise ValueError(f"Expected a template kind, got {kind!r}")
    return fn


def next_key(db: Db, table: str, pk: str, prefix: str, key_type: str = "text"):
    if key_type == "int":
        return int(db.value(f'SELECT COALESCE(MAX(CAST({sql_name(pk)} AS INTEGER)), 1000) FROM {sql_name(table)}')) + 1
    n = db.value(f'SELECT MAX(CAST(SUBSTR({sql_name(pk)}, ?) AS INTEGER)) FROM {sql_name(table)} WHERE {sql_name(pk)} LIKE ?', (len(prefix) + 1, prefix + "%"))
    return f"{prefix}{int(n or 1000) + 1}"


def forge_tool(t: dict, spec: ThemeSpec) -> Tool:
    """One executable Tool from a template spec."""
    props, required = {}, []
    for p in t["params"]:
        props[p["name"]] = p["schema"]
        if p.get("required"):
            required.append(p["name"])
    if t["kind"] == "compute":
        return Tool(name=t["name"], description=t["description"],
                    parameters={"type": "object", "properties": props, "required": required, "additionalProperties": False},
                    fn=make_fn(t, spec), mode=READ, consumes=(), produces=(), phrase=t.get("phrase", ""), returns=t.get("returns", ""),
                    examples={k: list(v) for k, v in t.get("examples", {}).items()}, _order=tuple(props))
    table = t["table"]
    pks = spec.primary_keys
    fks = [c.name for c in spec.table(table).columns if c.gen == "fk"]
    mode = WRITE if t["kind"] in WRITE_KINDS else READ
    consumes = tuple(p["name"] for p in t["params"] if p["role"] in ("key", "fk", "from", "to") and p["name"] in _entity_names(spec))
    produces = () if t["kind"] == "delete" else tuple(dict.fromkeys([pks[table], *fks]))
    if t["kind"] == "aggregate":
        produces = tuple(p["column"] for p in t["params"] if p["role"] in ("fk", "key"))
    return Tool(
        name=t["name"], description=t["description"],
        parameters={"type": "object", "properties": props, "required": required, "additionalProperties": False},
        fn=make_fn(t, spec), mode=mode, consumes=consumes, produces=produces, phrase=t.get("phrase", ""),
        returns=t.get("returns", ""), examples={k: list(v) for k, v in t.get("examples", {}).items()}, _order=tuple(props),
    )


def _entity_names(spec: ThemeSpec) -> set[str]:
    """Parameter names the graph synthesizer can resolve to an entity key (see Theme.key_of)."""
    keys = set(spec.primary_keys.values())
    return keys | {c.name for t in spec.tables for c in t.columns if c.gen == "fk"}


# ------------------------------------------------------------------------------------------ planning (composed themes)

_SYN = {
    "get": ("get", "fetch", "show", "lookup"), "list": ("list", "browse"), "search": ("search", "find"),
    "create": ("create", "add", "register"), "update": ("update", "set", "change"), "cancel": ("cancel", "close"),
    "delete": ("delete", "remove"), "aggregate": ("summarize", "total", "count"),
}


def _schema_for(col, description: str) -> dict:
    s: dict[str, Any] = {"type": {"int": "integer", "float": "number"}.get(col.type, "string"), "description": description}
    if col.gen == "choice":
        s["enum"] = list(col.arg)
    return s


def _key_schema(spec: ThemeSpec, table: str, description: str) -> dict:
    col = spec.table(table).columns[0]
    return {"type": "integer" if col.type == "int" else "string", "description": description}


def plan_tools(spec: ThemeSpec, rng, writes_only: bool = False) -> list[dict]:
    """Template specs for a composed theme: get/list/search per table, plus writes and summaries
    where the schema supports them (a status column, a numeric column, a parent table).
    `writes_only`: every write the schema supports (no random thinning, no cap), nothing else."""
    out: list[dict] = []
    pick = lambda kind: _SYN[kind][int(rng.integers(len(_SYN[kind])))]  # noqa: E731
    for tab in spec.tables:
        pk = tab.pk
        n, ns = singular(tab.name), tab.name
        noun, nouns = _noun(tab.name), _nouns(tab.name)
        key = {"name": pk, "role": "key", "required": True, "schema": _key_schema(spec, tab.name, f"The {noun} id.")}
        fks = [c for c in tab.columns if c.gen == "fk"]
        choices = [c for c in tab.columns[1:] if c.gen == "choice" and c.type == "text"]
        texts = [c.name for c in tab.columns[1:] if c.gen == "faker" and c.arg in ("name", "company", "catch_phrase", "bs", "city", "word", "user_name", "slug", "email", "domain_name")]
        nums = [c for c in tab.columns[1:] if c.gen in ("int", "float")]
        status = next((c for c in choices if c.name in ("status", "state")), None)
        out.append(dict(kind="get", name=f"{pick('get')}_{n}", table=tab.name, params=[key], phrase=f"look up {{{pk}}}",
                        description=f"Get the full record of one {noun} by its id."))
        list_params = [{"name": c.name, "role": "fk", "column": c.name, "table": c.arg, "required": True,
                        "schema": _key_schema(spec, c.arg, f"Only {nouns} of this {_noun(c.arg)}.")} for c in fks[:1]]
        filt = choices[int(rng.integers(len(choices)))] if choices else None
        if filt is not None:
            list_params.append({"name": filt.name, "role": "filter", "column": filt.name, "required": not fks,
                                "schema": _schema_for(filt, f"Only {nouns} with this {humanize(filt.name)}.")})
        list_params.append({"name": "limit", "role": "limit", "required": False,
                            "schema": {"type": "integer", "description": "How many to return, 1-100 (default 20).", "default": 20}})
        if fks or filt is not None:
            of = f" of {{{fks[0].name}}}" if fks else ""
            adj = f"{{{filt.name}}} " if filt is not None else ""
            out.append(dict(kind="list", name=f"{pick('list')}_{ns}", table=tab.name, params=list_params,
                            phrase=f"list the {adj}{nouns}{of}", description=f"List {nouns}, filtered as given, ordered by id."))
        if texts:
            cols = texts[:2]
            out.append(dict(kind="search", name=f"{pick('search')}_{ns}", table=tab.name, columns=cols,
                            params=[{"name": "query", "role": "query", "required": True, "schema": {"type": "string", "description": f"Text to look for in the {' or '.join(humanize(c) for c in cols)}."}},
                                    {"name": "limit", "role": "limit", "required": False, "schema": {"type": "integer", "description": "How many to return, 1-100 (default 20).", "default": 20}}],
                            phrase=f"find the {nouns} whose {humanize(cols[0])} mentions {{query}}", description=f"Search {nouns} by text.", search_column=cols[0]))
        if status is not None:
            cancel = next((v for v in status.arg if v in CANCEL_WORDS), None)
            if cancel:
                out.append(dict(kind="cancel", name=f"{pick('cancel')}_{n}", table=tab.name, column=status.name, value=cancel, params=[key],
                                phrase=f"mark {{{pk}}} as {cancel}", description=f"Mark a {noun} as {cancel} (fails if it already is)."))
            out.append(dict(kind="update", name=f"{pick('update')}_{n}_{status.name}", table=tab.name, params=[
                key, {"name": status.name, "role": "value", "column": status.name, "required": True, "schema": _schema_for(status, f"The new {humanize(status.name)}.")}],
                phrase=f"change the {humanize(status.name)} of {{{pk}}} to {{{status.name}}}", description=f"Change a {noun}'s {humanize(status.name)}."))
        elif choices:
            c = choices[0]
            out.append(dict(kind="update", name=f"{pick('update')}_{n}_{c.name}", table=tab.name, params=[
                key, {"name": c.name, "role": "value", "column": c.name, "required": True, "schema": _schema_for(c, f"The new {humanize(c.name)}.")}],
                phrase=f"set the {humanize(c.name)} of {{{pk}}} to {{{c.name}}}", description=f"Change a {noun}'s {humanize(c.name)}."))
        if fks:
            parent = fks[0]
            num = nums[int(rng.integers(len(nums)))] if nums else None
            what = f"the number and total {humanize(num.name)} of" if num else "how many"
            out.append(dict(kind="aggregate", name=f"{pick('aggregate')}_{ns}_by_{singular(parent.arg)}", table=tab.name, column=num.name if num else None,
                            params=[{"name": parent.name, "role": "fk", "column": parent.name, "table": parent.arg, "required": True,
                                     "schema": _key_schema(spec, parent.arg, f"The {_noun(parent.arg)} id.")}],
                            phrase=f"work out {what} {nouns} {{{parent.name}}} has", description=f"Count the {nouns} of one {_noun(parent.arg)}" + (f" and sum their {humanize(num.name)}." if num else ".")))
            values = [c for c in tab.columns[1:] if c.gen in ("choice", "int", "float") and c.gen != "fk"][:3]
            params = [{"name": parent.name, "role": "fk", "column": parent.name, "table": parent.arg, "required": True,
                       "schema": _key_schema(spec, parent.arg, f"The {_noun(parent.arg)} it belongs to.")}]
            params += [{"name": c.name, "role": "value", "column": c.name, "required": True, "schema": _schema_for(c, f"The {humanize(c.name)}.")} for c in values]
            if rng.random() < 0.7 or writes_only:
                filled = " and ".join(f"{humanize(c.name)} {{{c.name}}}" for c in values)
                out.append(dict(kind="create", name=f"{pick('create')}_{n}", table=tab.name, params=params, prefix=_prefix_of(spec, tab.name),
                                defaults={}, phrase=f"add a new {noun} for {{{parent.name}}}" + (f" with {filled}" if filled else ""),
                                description=f"Add a {noun} to a {_noun(parent.arg)}; returns the new record."))
            if rng.random() < 0.4 or writes_only:
                out.append(dict(kind="delete", name=f"{pick('delete')}_{n}", table=tab.name, params=[key], phrase=f"remove {{{pk}}}",
                                description=f"Delete a {noun} permanently."))
    if writes_only:
        out = [t for t in out if t["kind"] in WRITE_KINDS] + _record_writes(spec, pick)
    names = set()
    unique = []
    for t in out:  # synonyms may collide across tables; keep the first
        if t["name"] not in names:
            names.add(t["name"])
            unique.append(t)
    cap = int(rng.integers(9, 17))  # keep prompts readable: 9-16 tools, every table keeps its lookup
    if len(unique) > cap and not writes_only:
        must = [t for t in unique if t["kind"] == "get"]
        rest = [t for t in unique if t["kind"] != "get"]
        keep = {id(t) for t in must} | {id(rest[i]) for i in rng.choice(len(rest), size=max(0, cap - len(must)), replace=False)}
        unique = [t for t in unique if id(t) in keep]
    return unique


def path_companions(spec: ThemeSpec, templates: list[dict]) -> list[dict]:
    """For a composed theme that lacks one, the tools a record store has for removing a record together
    with its children: delete the parent (refused while children refer to it, the `children` rule),
    list a parent's children, delete a child. They make the rule-respecting path task of
    synthesis.rules possible. One parent/child pair, the first in table order whose child's first
    foreign key names the parent and whose parent has at most two kinds of child; [] when the theme
    already has such a path or no pair qualifies."""
    def find(kind: str, table: str, fk: str | None = None) -> dict | None:
        for t in templates:
            if t["kind"] != kind or t["table"] != table:
                continue
            req = [p for p in t["params"] if p.get("required")]
            if kind == "delete" and [p["role"] for p in req] == ["key"]:
                return t
            if kind == "list" and req and all(p["role"] == "fk" and p["column"] == fk for p in req):
                return t
        return None

    names = {t["name"] for t in templates}

    def name(*options: str) -> str:
        return next((n for n in options if n not in names), options[-1] + "_records")

    pairs = []
    for child in spec.tables:
        fks = [c for c in child.columns if c.gen == "fk"]
        if not fks or fks[0].arg == child.name:
            continue
        parent = fks[0].arg
        kinds = {(t.name, c.name) for t in spec.tables for c in t.columns if c.gen == "fk" and c.arg == parent}
        if len(kinds) <= 2:
            pairs.append((parent, child.name, fks[0].name))
    for parent, child, fk in pairs:
        if find("delete", parent) and find("delete", child) and find("list", child, fk):
            return []  # the theme already has a removal path
    if not pairs:
        return []
    parent, child, fk = pairs[0]
    out = []
    for table in (parent, child):
        if not find("delete", table):
            tab = spec.table(table)
            n = singular(table)
            out.append(dict(kind="delete", name=name(f"delete_{n}", f"remove_{n}"), table=table, companion="paths", phrase=f"remove {{{tab.pk}}}",
                            params=[{"name": tab.pk, "role": "key", "required": True, "schema": _key_schema(spec, table, f"The {_noun(table)} id.")}],
                            description=f"Delete a {_noun(table)} permanently."))
            names.add(out[-1]["name"])
    if not find("list", child, fk):
        out.append(dict(kind="list", name=name(f"list_{child}", f"list_{child}_of_{singular(parent)}"), table=child, companion="paths",
                        params=[{"name": fk, "role": "fk", "column": fk, "table": parent, "required": True,
                                 "schema": _key_schema(spec, parent, f"Only {_nouns(child)} of this {_noun(parent)}.")},
                                {"name": "limit", "role": "limit", "required": False,
                                 "schema": {"type": "integer", "description": "How many to return, 1-100 (default 20).", "default": 20}}],
                        phrase=f"list the {_nouns(child)} of {{{fk}}}", description=f"List the {_nouns(child)} of one {_noun(parent)}, ordered by id."))
    return out


def _record_writes(spec: ThemeSpec, pick) -> list[dict]:
    """Writes any record store has, beyond those `plan_tools` derives from relations and statuses: add a
    record to a table without a parent, and set a record's first amount or count. Listed after the
    others (and drawing the random stream after them) so a theme the others already serve is unchanged."""
    out = []
    for tab in spec.tables:
        pk, n = tab.pk, singular(tab.name)
        noun = _noun(tab.name)
        key = {"name": pk, "role": "key", "required": True, "schema": _key_schema(spec, tab.name, f"The {noun} id.")}
        nums = [c for c in tab.columns[1:] if c.gen in ("int", "float") and isinstance(c.arg, tuple)]
        if not any(c.gen == "fk" for c in tab.columns):
            values = [c for c in tab.columns[1:] if c.gen in ("choice", "int", "float") or (c.gen == "faker" and c.type == "text")][:3]
            if values:
                filled = " and ".join(f"{humanize(c.name)} {{{c.name}}}" for c in values)
                out.append(dict(kind="create", name=f"{pick('create')}_{n}", table=tab.name, prefix=_prefix_of(spec, tab.name), defaults={},
                                params=[{"name": c.name, "role": "value", "column": c.name, "required": True, "schema": _schema_for(c, f"The {humanize(c.name)}.")}
                                        for c in values],
                                phrase=f"add a new {noun} with {filled}", description=f"Add a {noun}; returns the new record."))
        if nums:
            c = nums[0]
            out.append(dict(kind="update", name=f"{pick('update')}_{n}_{c.name}", table=tab.name, params=[
                key, {"name": c.name, "role": "value", "column": c.name, "required": True, "schema": _schema_for(c, f"The new {humanize(c.name)}.")}],
                phrase=f"set the {humanize(c.name)} of {{{pk}}} to {{{c.name}}}", description=f"Change a {noun}'s {humanize(c.name)}."))
    return out


def _prefix_of(spec: ThemeSpec, table: str) -> str:
    arg = spec.table(table).columns[0].arg
    return arg[0] if isinstance(arg, tuple) else ""


def phrase_ok(phrase: str) -> bool:
    """A phrase names no identifier: outside {placeholders} there is no snake_case or camelCase word."""
    bare = re.sub(r"\{[^}]*\}", "", phrase)
    return bool(bare.strip()) and not re.search(r"\w_\w|[a-z][A-Z]", bare)


__all__ = ["MISSING", "WRITE_KINDS", "forge_tool", "make_fn", "next_key", "phrase_ok", "plan_tools", "plural", "noun_of"]
