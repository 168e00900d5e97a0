"""World building: complexification rounds over a draft, and the finishing touches that need the
built world (search columns, summary columns, example values for task synthesis)."""

from __future__ import annotations

import sqlite3

import numpy as np

from ..world import ThemeSpec, build_template, open_copy, sql_name
from . import archetypes
from .infer import TableDraft, ThemeDraft, brand, fk_column, key_column, parse_field, pk_name, singular, slugify, stable_seed

TEXT_PROVIDERS = ("name", "company", "catch_phrase", "bs", "city", "word", "user_name", "slug", "email", "domain_name", "country", "sentence")


def complexify(draft: ThemeDraft, rounds: int, seed: int = 0) -> ThemeDraft:
    """Grow a draft by `rounds` rounds; each adds a related table, a few typed columns and rows.

    The knob behind "harder worlds": more tables and relations give longer dependency chains.
    """
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        parent = draft.tables[int(rng.integers(len(draft.tables)))]
        line = archetypes.EXTRA_TABLES[int(rng.integers(len(archetypes.EXTRA_TABLES)))]
        d = archetypes.parse_line(line.format(parent=parent.name))
        name = d.name if draft.table(d.name) is None else f"{singular(parent.name)}_{d.name}"
        if draft.table(name) is None:
            cols = [key_column(name), fk_column(parent.pk, parent.name)]
            cols += [parse_field(f) for f in d.fields]
            draft.tables.append(TableDraft(name, cols, parent.name, int(rng.integers(30, 90))))
        target = draft.tables[int(rng.integers(len(draft.tables)))]
        for i in rng.choice(len(archetypes.EXTRA_COLUMNS), size=2, replace=False):
            target.add(parse_field(archetypes.EXTRA_COLUMNS[int(i)]))
        for t in draft.tables:
            t.rows = int(t.rows * 1.25)
    draft.meta["rounds"] = draft.meta.get("rounds", 0) + rounds
    return draft


def finish_templates(templates: list[dict], spec: ThemeSpec) -> list[dict]:
    """Choose search and summary columns once the tables are final."""
    for t in templates:
        if t["kind"] == "compute":
            continue
        tab = spec.table(t["table"])
        cols = {c.name: c for c in tab.columns}
        live = []
        for p in t["params"]:  # a relation dropped to break a cycle leaves its parameter without effect: drop it
            dead_fk = p["role"] == "fk" and (p.get("column") not in cols or cols[p["column"]].gen != "fk")
            dead_column = p["role"] in ("filter", "value", "locator") and p.get("column") not in cols
            if dead_fk or dead_column:
                t.setdefault("dropped", []).append([p["name"], "its relation was cut to break a cycle"])
            else:
                live.append(p)
        t["params"] = live
        if t["kind"] == "search" and not t.get("columns"):
            texts = [c.name for c in tab.columns[1:] if c.gen == "faker" and (c.arg if isinstance(c.arg, str) else c.arg[0]) in TEXT_PROVIDERS]
            t["columns"] = texts[:2] or [tab.pk]
            t["search_column"] = t["columns"][0]
        if t["kind"] == "aggregate" and t.get("column") is None:
            nums = [c.name for c in tab.columns[1:] if c.type in ("int", "float") and c.gen not in ("fk", "id")]
            t["column"] = nums[0] if nums else None
    return templates


TERMINAL = ("cancelled", "canceled", "closed", "archived", "retired", "revoked", "expired", "rejected", "completed", "done", "resolved", "deleted",
            "deprecated", "withdrawn", "retracted", "dismissed", "delivered", "refunded", "settled", "finished", "merged", "terminated", "void")
TEXT_CAP = 200  # characters a written text field may hold


def upper_limit(col) -> int | float:
    """The largest value a write may store in a numeric column: ten times the generator's top, rounded up."""
    import math

    top = col.arg[1] * 10
    return int(10 ** math.ceil(math.log10(top))) if top > 0 else 0


RULE_KINDS = ("terminal", "unchanged", "children", "ownership", "balance", "nonneg", "textcap", "unique", "ref")  # the order rules are stated in
RULE_FAMILY = {"terminal": "state", "unchanged": "state", "children": "integrity", "ownership": "ownership", "balance": "limit",
               "nonneg": "limit", "textcap": "limit", "unique": "integrity", "ref": "integrity"}


def attach_rules(spec: ThemeSpec, templates: list[dict]) -> ThemeSpec:
    """Business rules that the theme's write tools enforce, derived from its schema, stated in the
    returned spec's `rules` (shown in the system prompt) and marked on each template that enforces them:

    - state: a record whose status is terminal (cancelled, closed, ...) can no longer be changed, and an
      update that would change nothing is refused;
    - integrity: a record other records still refer to cannot be deleted; a new record's id must be new;
    - ownership: a record removed or closed through a parent must belong to that parent;
    - limits: numeric columns stay between 0 and a ceiling, text fields are non-empty and short, a
      transfer moves a positive amount no larger than the source holds;
    - references: a write that names a related record needs that record to exist.
    """
    import dataclasses

    from ..theme import humanize

    rules: dict[str, str] = {}
    limited: dict[str, set] = {}
    capped: dict[str, set] = {}
    for t in templates:
        if t["kind"] not in ("update", "cancel", "delete", "create", "transfer"):
            continue
        tab = spec.table(t["table"])
        noun, cols = humanize(singular(tab.name)), {c.name: c for c in tab.columns}
        marks = []
        status = next((c for c in tab.columns if c.name in ("status", "state") and c.gen == "choice"), None)
        ends = tuple(v for v in (status.arg if status else ()) if isinstance(v, str) and v in TERMINAL)
        if t["kind"] in ("update", "cancel") and ends:
            t["terminal"] = [status.name, list(ends)]
            marks.append("terminal")
            rules[f"terminal:{tab.name}"] = f"A {noun} that is {' or '.join(ends)} can no longer be changed."
        if t["kind"] == "cancel" and t.get("value") not in ends:
            rules[f"terminal:{tab.name}:{t['value']}"] = f"A {noun} that is already {t['value']} cannot be set to {t['value']} again."
        if t["kind"] == "delete":
            kids = [[other.name, c.name] for other in spec.tables for c in other.columns if c.gen == "fk" and c.arg == tab.name]
            if kids:
                t["children"] = kids
                marks.append("children")
                rules[f"children:{tab.name}"] = (f"A {noun} that still has {' or '.join(sorted({humanize(k[0]) for k in kids}))} "
                                                 "cannot be deleted; remove those first.")
        written = [p["column"] for p in t["params"] if p["role"] in ("value", "filter") and p.get("column") in cols]
        nonneg = [c for c in written if cols[c].gen in ("int", "float") and isinstance(cols[c].arg, tuple) and cols[c].arg[0] >= 0]
        if t["kind"] in ("create", "update") and nonneg:
            t["nonneg"] = nonneg
            t["upper"] = {c: upper_limit(cols[c]) for c in nonneg}
            marks.append("nonneg")
            limited.setdefault(tab.name, set()).update(nonneg)
            cs = sorted(limited[tab.name])
            rules[f"nonneg:{tab.name}"] = "; ".join(f"The {humanize(c)} of a {noun} must be between 0 and {upper_limit(cols[c]):,}" for c in cs) + "."
        texts = [c for c in written if cols[c].type == "text" and cols[c].gen not in ("choice", "id", "fk")]
        if t["kind"] in ("create", "update") and texts:
            t["textcap"] = texts
            marks.append("textcap")
            capped.setdefault(tab.name, set()).update(texts)
            cs = sorted(capped[tab.name])
            rules[f"textcap:{tab.name}"] = f"The {' and '.join(humanize(c) for c in cs)} of a {noun} must be non-empty and at most {TEXT_CAP} characters."
        if t["kind"] == "update" and any(p["role"] in ("value", "fk") for p in t["params"]):
            marks.append("unchanged")  # a write that would leave the record as it is is a mistake, not a change
            rules[f"unchanged:{tab.name}"] = f"An update that would leave a {noun} exactly as it is is refused."
        scopes = [p for p in t["params"] if p["role"] == "fk"] if t["kind"] in ("delete", "cancel") else []
        if scopes:
            marks.append("ownership")
            for p in scopes:
                parent = humanize(singular(p["table"]))
                rules[f"ownership:{tab.name}:{p['table']}"] = f"A {noun} can only be removed or closed through the {parent} it belongs to."
        if t["kind"] == "transfer":
            marks.append("balance")
            rules[f"balance:{tab.name}"] = (f"A transfer moves a positive amount between two different {humanize(tab.name)}, "
                                            f"and never more {humanize(t['column'])} than the source holds.")
        if t["kind"] == "create" and any(p["role"] == "newkey" for p in t["params"]):
            marks.append("unique")
            rules[f"unique:{tab.name}"] = f"A new {noun} needs an id no other {noun} has."
        if any(p["role"] == "fk" for p in t["params"]) and t["kind"] in ("create", "update"):
            marks.append("references")
            for p in t["params"]:
                if p["role"] == "fk":
                    rules[f"ref:{tab.name}:{p['table']}"] = f"A {noun} can only refer to an existing {humanize(singular(p['table']))}."
        if marks:
            t["rules"] = marks
    ordered = sorted(rules.items(), key=lambda kv: RULE_KINDS.index(kv[0].split(":")[0]))
    return dataclasses.replace(spec, rules=tuple(dict.fromkeys([*spec.rules, *(text for _, text in ordered)])))


def build_world(spec: ThemeSpec, db_seed: int = 0) -> bytes:
    """The world's serialized database (cached by spec fingerprint, see world.build_template)."""
    return build_template(spec, db_seed)


def _values(conn: sqlite3.Connection, table: str, column: str, n: int = 8) -> list:
    rows = conn.execute(f'SELECT DISTINCT {sql_name(column)} FROM {sql_name(table)} WHERE {sql_name(column)} IS NOT NULL ORDER BY 1 LIMIT 40').fetchall()
    vals = [r[0] for r in rows]
    step = max(1, len(vals) // n)
    return vals[::step][:n]


def bind_examples(templates: list[dict], spec: ThemeSpec, blob: bytes) -> list[dict]:
    """Example values for required parameters the task synthesizer cannot resolve on its own
    (search text, generic `id` parameters, ignored flags), sampled from the built world."""
    conn = open_copy(blob)
    try:
        entity = set(spec.primary_keys.values()) | {c.name for t in spec.tables for c in t.columns if c.gen == "fk"}
        columns = {c.name for t in spec.tables for c in t.columns}
        for t in templates:
            if t["kind"] == "compute":
                continue  # its examples are the function's known inputs
            ex = {}
            for p in t["params"]:
                if not p.get("required") or p["name"] in entity and p["role"] in ("key", "fk", "from", "to"):
                    continue
                role, name = p["role"], p["name"]
                if role in ("key", "from", "to"):
                    ex[name] = _values(conn, t["table"], spec.table(t["table"]).pk)
                elif role == "fk":
                    ex[name] = _values(conn, p["table"], spec.table(p["table"]).pk)
                elif role == "query":
                    vals = _values(conn, t["table"], t["columns"][0])
                    ex[name] = [str(v).split()[0].lower() if isinstance(v, str) and v.split() else str(v) for v in vals]
                elif role == "locator":
                    ex[name] = _values(conn, t["table"], p["column"])
                elif role in ("limit", "page"):
                    ex[name] = [3, 5, 10] if role == "limit" else [1, 2]
                elif role == "offset":
                    ex[name] = [0, 5]
                elif role == "sort":
                    ex[name] = [c.name for c in spec.table(t["table"]).columns][:4]
                elif role == "direction":
                    ex[name] = ["asc", "desc"]
                elif role == "amount":
                    ex[name] = [1.0, 5.0, 12.5]
                elif role == "newkey":
                    ex[name] = [f"new-{name}-{i}" if p["schema"].get("type") == "string" else 90_000 + i for i in range(1, 4)]
                elif role in ("filter", "value") and name in columns and "enum" not in p["schema"]:
                    continue  # the synthesizer samples same-named columns itself
                elif "enum" in p["schema"]:
                    continue
                else:
                    typ = p["schema"].get("type")
                    ex[name] = {"integer": [1, 2, 3], "number": [1.0, 2.5], "boolean": [True, False]}.get(typ, ["standard", "default"])
            if ex:
                t["examples"] = {**t.get("examples", {}), **ex}
    finally:
        conn.close()
    return templates


def compose(code: str, variant: int, *, label: str | None = None, name: str | None = None, theme_id: str | None = None,
            source: str = "catalog", rounds: int | None = None) -> ThemeDraft:
    """A theme of L2 category `code` composed from the archetype library, deterministic in `variant`.

    Each variant keeps a different subset of tables and fields and different row counts, so
    schemas genuinely differ; `rounds` complexification rounds (default: variant-dependent) add
    tables, columns and rows.
    """
    from ..envs import taxonomy

    cat = taxonomy.L2[code]
    rng = np.random.default_rng(stable_seed(code, variant, label or "", name or ""))
    labels = archetypes.labels_of(code)
    label = label or labels[variant % len(labels)]
    defs = archetypes.tables_of(code)
    # a connected subset: pick tables, then add their parents
    k = int(rng.integers(2, len(defs) + 1))
    chosen = {defs[i].name for i in rng.choice(len(defs), size=k, replace=False)}
    by_name = {d.name: d for d in defs}
    for n in list(chosen):
        p = by_name[n].parent
        while p:
            chosen.add(p)
            p = by_name[p].parent
    title = name or f"{brand(stable_seed(code, variant))} {label.title()}"
    draft = ThemeDraft(
        id=theme_id or f"{slugify(label)}-{variant // len(labels) + 1}", title=title, category=taxonomy.L1[cat.parent].name,
        subcategory=cat.name, label=label, source=source,
        description=f"You help the users of this {label} look up, change and summarise its records.",
    )
    for d in defs:
        if d.name not in chosen:
            continue
        cols = [key_column(d.name)]
        if d.parent:
            cols.append(fk_column(pk_name(d.parent), d.parent))
        fields = [f for f in d.fields if rng.random() < 0.8] or list(d.fields[:2])
        if len(fields) < 2:
            fields = list(d.fields[:3])
        cols += [parse_field(f) for f in fields]
        rows = int(rng.integers(15, 41)) if not d.parent else int(rng.integers(30, 121))
        draft.tables.append(TableDraft(d.name, cols, d.parent, rows))

    n_rounds = int(rng.integers(0, 3)) if rounds is None else rounds
    return complexify(draft, n_rounds, seed=stable_seed(code, variant, "rounds"))
