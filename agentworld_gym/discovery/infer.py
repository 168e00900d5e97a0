"""Schema inference: from real tool schemas (names, parameter names and types, id fields, verbs) or
from the archetype library (description-only sources) to a `ThemeSpec` plus tool template specs.

Nothing here runs SQL; `forge` binds the template specs to a built world.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from ..theme import humanize, singular
from ..world import Column, Table, ThemeSpec
from . import archetypes
from .sources import stable_seed

# ------------------------------------------------------------------------------------------ columns

_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# generator token -> (gen, arg, type)
FIELD_GENS: dict[str, tuple[str, object, str]] = {
    "person": ("faker", "name", "text"), "company": ("faker", "company", "text"), "title": ("faker", "catch_phrase", "text"),
    "phrase": ("faker", "bs", "text"), "sentence": ("faker", "sentence", "text"), "word": ("faker", "word", "text"),
    "domain": ("faker", "domain_name", "text"), "url": ("faker", "url", "text"), "email": ("faker", "email", "text"),
    "username": ("faker", "user_name", "text"), "city": ("faker", "city", "text"), "country": ("faker", "country", "text"),
    "street": ("faker", "street_address", "text"), "phone": ("faker", "phone_number", "text"), "ip": ("faker", "ipv4", "text"),
    "filename": ("faker", "file_name", "text"), "path": ("faker", "file_path", "text"), "slug": ("faker", "slug", "text"),
    "code": ("faker", ("bothify", "??-####", _UPPER), "text"), "ticker": ("faker", ("lexify", "????", _UPPER), "text"),
    "currency": ("faker", "currency_code", "text"), "wallet": ("faker", ("hexify", "0x^^^^^^^^^^^^^^^^"), "text"),
    "hash": ("faker", "sha1", "text"), "version": ("faker", ("numerify", "#.#.#"), "text"), "cve": ("faker", ("numerify", "CVE-2024-####"), "text"),
    "color": ("faker", "hex_color", "text"), "drug": ("choice", ("amoxicillin", "ibuprofen", "metformin", "lisinopril", "atorvastatin", "omeprazole", "sertraline", "cetirizine"), "text"),
    "month": ("choice", tuple(f"2025-{m:02d}" for m in range(1, 13)), "text"), "date": ("date", ("2024-01-01", "2025-05-31"), "text"),
    "int_rank": ("int", (1, 100), "int"), "small_int": ("int", (1, 20), "int"), "big_int": ("int", (100_000, 9_999_999), "int"),
    "int_ms": ("int", (5, 5_000), "int"), "count": ("int", (0, 10_000), "int"), "year": ("int", (1950, 2025), "int"),
    "stars": ("int", (1, 5), "int"), "pixels": ("choice", (320, 640, 1024, 1280, 1920, 2048, 4096), "int"),
    "port": ("choice", (22, 53, 80, 443, 3306, 5432, 8080), "int"), "flag": ("choice", (0, 1), "int"),
    "money": ("float", (5, 5_000), "float"), "small_money": ("float", (0.1, 50), "float"), "price": ("float", (1, 900), "float"),
    "ratio": ("float", (0.1, 100), "float"), "pct": ("float", (0, 100), "float"), "rating": ("float", (1, 5), "float"),
    "temp": ("float", (-10, 40), "float"), "pressure": ("float", (980, 1040), "float"), "lat": ("float", (-60, 70), "float"),
    "lon": ("float", (-180, 180), "float"), "distance": ("float", (0.5, 500), "float"), "cvss": ("float", (0, 10), "float"),
    "number": ("float", (0, 1_000), "float"), "integer": ("int", (1, 100), "int"),
}

_EXACT = {
    "email": "email", "phone": "phone", "city": "city", "country": "country", "url": "url", "address": "street", "name": "title",
    "title": "title", "description": "sentence", "text": "sentence", "content": "sentence", "message": "sentence", "summary": "sentence",
    "username": "username", "user": "username", "owner": "username", "author": "person", "language": "word", "location": "city",
    "domain": "domain", "ip": "ip", "symbol": "ticker", "ticker": "ticker", "currency": "currency", "path": "path", "file": "filename",
    "filename": "filename", "version": "version", "query": "phrase", "keyword": "word", "topic": "word", "tag": "word", "category": "word",
    "rating": "rating", "score": "int_rank", "year": "year", "latitude": "lat", "longitude": "lon", "lat": "lat", "lon": "lon", "lng": "lon",
    "color": "color", "hash": "hash", "slug": "slug", "region": "word", "repo": "slug", "branch": "slug", "label": "word",
}
_SUFFIX = (
    (("_at", "_on", "_date", "date", "created", "updated", "deadline", "due", "born", "since", "until"), "date"),
    (("price", "amount", "total", "revenue", "cost", "balance", "budget", "salary", "fee", "market_cap", "value", "tvl", "liquidity"), "money"),
    (("count", "volume", "followers", "views", "likes", "shares", "subscribers", "downloads", "members", "passengers", "viewers",
      "visitors", "uses", "hits", "tokens", "words", "documents", "objects", "capacity", "seats", "employees", "invocations", "clicks",
      "reach", "quota", "limit", "items", "xp", "points", "lines", "length", "_kb", "_mb", "_gb", "_sec", "_min", "_ms", "_bp",
      "iterations", "audience", "elevation", "citations", "stars", "found"), "count"),
    (("rate", "ratio", "percent", "pct", "growth", "change", "score", "confidence", "weight", "progress"), "pct"),
    (("email",), "email"), (("url", "link", "website", "homepage"), "url"), (("name",), "title"), (("city",), "city"),
    (("phone",), "phone"), (("_ip", "address"), "street"),
)


def column_for(name: str, gen: str | None = None, json_type: str | None = None, enum=None) -> Column:
    """A column typed by an explicit generator token, a JSON type/enum, or its name."""
    if enum:
        values = tuple(v for v in enum if isinstance(v, (str, int, float)) and not isinstance(v, bool))
        if values:
            return Column(name, "choice", values, type="int" if all(isinstance(v, int) for v in values) else "text")
    if gen is None:
        gen = _gen_from_name(name, json_type)
    kind, arg, typ = FIELD_GENS[gen]
    return Column(name, kind, arg, type=typ)


def _gen_from_name(name: str, json_type: str | None) -> str:
    low = humanize(name).replace(" ", "_")
    if json_type == "boolean" or low.startswith(("is_", "has_")) or low in ("enabled", "verified", "active", "pinned", "done"):
        return "flag"
    by_name = _EXACT.get(low)
    if by_name is None:
        for suffixes, g in _SUFFIX:
            if low.endswith(suffixes):
                by_name = g
                break
    if json_type == "integer":
        return by_name if by_name and FIELD_GENS[by_name][2] == "int" else "integer"
    if json_type == "number":
        return by_name if by_name and FIELD_GENS[by_name][2] in ("int", "float") else "number"
    if by_name and FIELD_GENS[by_name][2] != "text" and json_type == "string":
        return "word"  # a number-sounding string parameter still takes text
    return by_name or "word"


def parse_field(token: str) -> Column:
    """A DSL token ('status=open/closed', 'owner:person', 'price') -> Column."""
    if "=" in token:
        name, _, values = token.partition("=")
        vals = tuple(v.replace("_", " ") if not v.isdigit() else int(v) for v in values.split("/"))
        return Column(name, "choice", vals, type="int" if all(isinstance(v, int) for v in vals) else "text")
    name, _, gen = token.partition(":")
    return column_for(name, gen or None)


# ------------------------------------------------------------------------------------------ names



def plural(word: str) -> str:
    if word in _SAME_IN_PLURAL or word.endswith(("is", "us")):
        return word  # news, metadata, redis, prometheus: a table of them keeps the name (no 'redises')
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word if word.endswith("s") and singular(word) != word else word + "es"
    return word + "s"


def _fold(c: str) -> str:
    """A Latin letter with accents -> its ASCII letter ('é' -> 'e'); any other character as it is."""
    base = unicodedata.normalize("NFKD", c)
    return base[0] if base[0].isascii() and base[0].isalpha() else c


def slugify(text: str) -> str:
    """'Café Déjà-vu 2' -> 'cafe-deja-vu-2'; accents fold to ASCII, other scripts stay readable
    ('天气 MCP' -> '天气-mcp'): gymnasium ids accept any Unicode word character."""
    s = re.sub(r"[\W_]+", "-", "".join(map(_fold, unicodedata.normalize("NFKC", text))).lower()).strip("-")
    s = re.sub(r"-v(\d)", r"-w\1", s)  # '-v2' inside a slug would read as a gymnasium version
    return s[:48].strip("-") or "theme"


def words_of(name: str) -> list[str]:
    return humanize(name).split()


def pk_name(table: str) -> str:
    return f"{singular(table)}_id"


def _prefixes(names: list[str]) -> dict[str, str]:
    out, used = {}, set()
    for n in names:
        letters = re.sub(r"[^A-Z]", "", n.upper()) or "X"
        cand = letters[:2]
        i = 2
        while cand in used:
            cand = letters[:1] + (letters[i] if i < len(letters) else str(i))
            i += 1
        used.add(cand)
        out[n] = cand + "-"
    return out


# ------------------------------------------------------------------------------------------ drafts

@dataclass
class TableDraft:
    """A mutable table while a theme is being inferred / complexified."""

    name: str
    columns: list[Column]
    parent: str | None = None  # the table the first foreign key points at
    rows: int = 30
    key_type: str = "text"  # "int" for integer keys taken from real schemas

    @property
    def pk(self) -> str:
        return self.columns[0].name

    def has(self, col: str) -> bool:
        return any(c.name == col for c in self.columns)

    def add(self, col: Column) -> None:
        if not self.has(col.name):
            self.columns.append(col)


@dataclass
class ThemeDraft:
    """Everything inference learned about a theme; `to_spec()` freezes it."""

    id: str
    title: str
    category: str
    subcategory: str
    label: str
    description: str
    source: str
    tables: list[TableDraft] = field(default_factory=list)
    tools: list[dict] = field(default_factory=list)  # raw tool descriptions (real sources) or [] (composed)
    rules: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def table(self, name: str) -> TableDraft | None:
        return next((t for t in self.tables if t.name == name), None)

    def to_spec(self, described: bool = True) -> ThemeSpec:
        """The frozen spec; `described=False` leaves out the columns placed for described fields (tools
        are planned without them, so a theme's tools stay the ones its pool recipe names)."""
        prefixes = _prefixes([t.name for t in self.tables])
        late = self.meta.get("late_columns", []) if described else []
        tables = []
        for t in self.tables:
            cols = list(t.columns)
            for table, col in late:
                if table == t.name:
                    at = next((i for i, c in enumerate(cols) if c.name == col.name), None)
                    if at is None:
                        cols.append(col)
                    else:
                        cols[at] = col
            if cols[0].gen == "id":
                start = cols[0].arg[1] if isinstance(cols[0].arg, tuple) else 1001
                prefix = "" if t.key_type == "int" else prefixes[t.name]
                cols[0] = Column(cols[0].name, "id", (prefix, start), type="int" if t.key_type == "int" else "text")
            tables.append(Table(t.name, tuple(cols), t.rows))
        kept = ("notes", "examples", "described_fields", "missing_fields")
        extra = {k: self.meta[k] for k in kept if self.meta.get(k)} if described else {}
        return ThemeSpec(id=self.id, title=self.title, category=self.category, subcategory=self.subcategory, label=self.label,
                         description=self.description, tables=tuple(tables), rules=tuple(self.rules), source=self.source, extra=extra)


def key_column(table: str, name: str | None = None, key_type: str = "text") -> Column:
    return Column(name or pk_name(table), "id", ("", 1001), type="int" if key_type == "int" else "text")


def fk_column(name: str, parent: str) -> Column:
    return Column(name, "fk", parent)


# ------------------------------------------------------------------------------------------ composition

_BRANDS_A = ("North", "Blue", "Bright", "Swift", "Silver", "Cedar", "Harbor", "Summit", "Maple", "Atlas", "Lumen", "Orbit", "Pine", "Coral", "Ember", "Nova")
_BRANDS_B = ("wind", "ridge", "port", "line", "works", "hub", "field", "stone", "gate", "wave", "point", "bridge", "light", "path")


def brand(seed: int) -> str:
    return _BRANDS_A[seed % len(_BRANDS_A)] + _BRANDS_B[(seed // len(_BRANDS_A)) % len(_BRANDS_B)]


# ------------------------------------------------------------------------------------------ real tool schemas

VERBS = {
    "get": ("get", "fetch", "retrieve", "read", "show", "describe", "view", "lookup", "check", "inspect", "info", "detail", "details", "status", "load", "open"),
    "list": ("list", "browse", "all", "enumerate", "ls", "recent", "top", "trending", "latest", "history"),
    "search": ("search", "find", "query", "discover", "lookup", "match", "filter", "grep", "explore", "scan", "resolve"),
    "create": ("create", "add", "new", "post", "make", "insert", "register", "submit", "upload", "write", "send", "publish", "book",
               "place", "schedule", "save", "store", "generate", "log", "record", "start", "invite", "reserve", "mkdir", "touch", "import", "append", "push", "comment", "reply"),
    "update": ("update", "set", "edit", "modify", "change", "rename", "move", "patch", "configure", "enable", "disable", "toggle", "mark",
               "assign", "tag", "label", "approve", "complete", "resolve", "merge", "star", "pin", "upsert", "mv", "adjust", "fill"),
    "delete": ("delete", "remove", "destroy", "drop", "clear", "purge", "rm", "rmdir", "unlink", "erase"),
    "cancel": ("cancel", "close", "revoke", "stop", "terminate", "unsubscribe", "reject", "archive", "void", "abort", "kill", "end", "block", "suspend", "deactivate"),
    "transfer": ("transfer", "pay", "swap", "send_money", "withdraw", "deposit", "bridge"),
    "aggregate": ("count", "sum", "total", "stats", "statistics", "analyze", "analyse", "summary", "summarize", "aggregate", "average",
                  "compare", "metrics", "report", "calculate", "compute", "estimate", "evaluate", "measure", "score", "rank", "breakdown"),
}
_VERB_OF = {}
for _kind, _words in VERBS.items():
    for _w in _words:
        _VERB_OF.setdefault(_w, _kind)
_STOP = {"by", "for", "the", "a", "an", "of", "to", "in", "on", "from", "with", "and", "or", "my", "all", "info", "data", "details",
         "detail", "list", "api", "tool", "v1", "v2", "id", "ids", "current", "new", "s", "using", "via", "mcp", "server"}
_GENERIC = {"server", "api", "tool", "tools", "access", "service", "content", "client", "integration", "assistant", "manager", "kit",
            "hub", "pro", "lite", "plus", "official", "simple", "toolkit", "bridge", "connector", "engine", "agent", "advanced", "basic",
            "full", "raw", "single", "multiple", "batch", "bulk", "quick", "detailed", "extended", "custom", "general", "key", "word", "words"}
_ID_NAMES = {"id", "uuid", "slug", "symbol", "ticker", "code", "key", "handle", "isbn", "doi", "hash", "sku", "iata"}
LIMIT_NAMES = {"items_per_page", "max_count", "result_count", "max_records", "maxresults", "numresults", "limit", "max_results", "num_results", "count", "top", "top_k", "page_size", "per_page", "n", "k", "size", "max", "results", "num", "number_of_results", "max_items"}
PAGING_NAMES = {"page", "offset", "cursor", "skip", "start", "page_token", "next_token", "after", "before"}
SORT_NAMES = {"sort", "sort_by", "order_by", "sortby", "orderby", "sort_field"}
DIRECTION_NAMES = {"order", "sort_order", "direction", "sort_direction", "sort_dir"}
QUERY_NAMES = {"query", "q", "keyword", "keywords", "search", "term", "search_term", "search_query", "text", "prompt", "question", "topic", "pattern"}
SCALARS = {"string", "integer", "number", "boolean"}


def is_id_param(name: str) -> bool:
    low = humanize(name).replace(" ", "_")
    return low in _ID_NAMES or low.endswith(("_id", "_uuid", "_slug", "_key", "_code", "_symbol", "_ticker"))


def simple_type(schema) -> tuple[str | None, list | None]:
    """(JSON type, enum) of a parameter schema, or (None, None) when it is not a usable shape."""
    if not isinstance(schema, dict):
        return None, None
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if t is None:
        for alt in schema.get("anyOf") or schema.get("oneOf") or ():
            at, en = simple_type(alt)
            if at:
                return at, en
        if "enum" in schema:
            t = "string"
    if t == "float":
        t = "number"
    if t in ("int",):
        t = "integer"
    if t == "dict":
        t = "object"
    enum = schema.get("enum") if isinstance(schema.get("enum"), list) else None
    return t, enum


def verb_kind(tokens: list[str]) -> tuple[str, str | None]:
    """The template kind suggested by the first verb-like token of a tool name, and that token."""
    for tok in tokens:
        if tok in _VERB_OF:
            return _VERB_OF[tok], tok
    return "lookup", None


_GENERIC_FIELDS = ("name:title", "status=active/pending/closed", "created_at", "value:money", "category=general/standard/special",
                   "owner:person", "description:sentence", "count", "rating:rating", "region=north/south/east/west")
_MEDIA = {"email", "mail", "sms", "notification", "fax"}  # how a record goes out, not what it is
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")


@dataclass
class Skipped:
    """A tool (or source) discovery could not use, and why."""

    source: str
    tool: str
    reason: str


def _library_fields(table: str) -> list[str]:
    for code in archetypes.LIBRARY:
        for d in archetypes.tables_of(code):
            if d.name == table or singular(d.name) == singular(table):
                return list(d.fields)
    return []


def infer_from_tools(name: str, tools: list[dict], *, code: str, theme_id: str, label: str, source: str,
                     title: str | None = None) -> tuple[ThemeDraft, list[dict], list[Skipped]]:
    """Entities, keys, relations and tool templates inferred from real tool schemas.

    `tools` items are {"name", "parameters": JSON-Schema object}. Tools whose shape cannot be
    forged (a required nested object, an untyped required parameter, an odd name) are returned
    as `Skipped` with the reason.
    """
    from ..envs import taxonomy

    cat = taxonomy.L2[code]
    server_words = {singular(w) for w in words_of(name)} | set(words_of(name))
    said = _said_stems(name, label, tools)
    named = [singular(w) for w in words_of(name) if w not in _STOP and w not in _VERB_OF and w not in _GENERIC and w not in _ACTIONS and len(w) > 2]
    main_noun = next((w for w in reversed(named) if _stem_of(w) in said), named[-1] if named else "record")
    draft = ThemeDraft(id=theme_id, title=title or name, category=taxonomy.L1[cat.parent].name, subcategory=cat.name, label=label,
                       source=source, description=f"You help users of {title or name}, a {label} service, with its records.")
    skipped: list[Skipped] = []
    plans = []
    compute_templates: list[dict] = []
    seen = set()
    for tool in tools:
        tname = str(tool.get("name", ""))
        why = _unsupported(tool, tname, seen)
        if why:
            skipped.append(Skipped(name, tname, why))
            continue
        seen.add(tname)
        schema = tool["parameters"]
        props = schema.get("properties") or {}
        required = set(schema.get("required") or ()) & set(props)
        computed = compute_template(tool, tname, props, required)
        if computed is not None:
            compute_templates.append(computed)
            continue
        tokens = [w for w in words_of(tname)]
        kind, _ = verb_kind(tokens)
        words = [w for w in tokens if w not in _VERB_OF and w not in _STOP and w not in _GENERIC and not w.isdigit() and 1 < len(w) <= 14]
        nouns = [w for w in words if w not in server_words] or words  # a server's own name says least
        if len(nouns) > 1 and singular(nouns[-1]) in _MEDIA and singular(nouns[-2]) in (tool.get("description") or "").lower():
            nouns = nouns[:-1]  # send_reminder_email sends a reminder: the record is the reminder, email is how it goes
        noun = _entity_noun(nouns, tool, said, main_noun)
        ids = [p for p in props if is_id_param(p) and simple_type(props[p])[0] in ("string", "integer", "number")]
        own = [p for p in ids if noun_of(p) in (noun, "") or humanize(p) in _ID_NAMES]
        key = (own or (ids[:1] if kind in ("get", "update", "delete", "cancel", "transfer") else []))[:1]
        plans.append((tool, tname, props, required, kind, noun, ids, key[0] if key else None))
    # tables: one per entity noun, parents (referenced by id parameters) first
    for _tool, _tname, props, _required, _kind, noun, ids, key in plans:
        table = plural(noun)
        tab = draft.table(table)
        if tab is None:
            pk = key if key and noun_of(key) == noun and humanize(key).replace(" ", "_") not in _ID_NAMES else pk_name(table)
            key_type = "int" if key and simple_type(props[key])[0] in ("integer", "number") else "text"
            tab = TableDraft(table, [key_column(table, pk, key_type)], rows=20 + stable_seed(name, table) % 41, key_type=key_type)
            draft.tables.append(tab)
        elif key and simple_type(props[key])[0] in ("integer", "number") and tab.key_type == "text" and tab.pk in (key, pk_name(table)):
            tab.key_type = "int"  # a numeric key anywhere makes the whole table's key numeric
            tab.columns[0] = key_column(table, tab.pk, "int")
        for p in ids:
            if p == key:
                continue
            ref_noun = noun_of(p) if noun_of(p) not in _ID_NAMES else main_noun
            ref = plural(singular(ref_noun.replace(" ", "_")))
            if ref == table:
                continue
            rtype = "int" if simple_type(props[p])[0] in ("integer", "number") else "text"
            parent = draft.table(ref)
            if parent is None:
                draft.tables.insert(0, TableDraft(ref, [key_column(ref, pk_name(ref), rtype)], rows=15 + stable_seed(name, ref) % 26, key_type=rtype))
            elif rtype == "int" and parent.key_type == "text":  # numeric references make the parent's key numeric
                parent.key_type = "int"
                parent.columns[0] = key_column(ref, parent.pk, "int")
            tab.add(fk_column(p, ref))
            tab.parent = tab.parent or ref
    templates: list[dict] = []
    for tool, tname, props, required, kind, noun, _ids, key in plans:
        table = plural(noun)
        tab = draft.table(table)
        t = _template(tool, tname, props, required, kind, key, tab, draft, skipped, name)
        if t is not None:
            templates.append(t)
    if not draft.tables:  # a server of compute tools only: its records still need a table
        draft.tables.append(TableDraft(plural(main_noun), [key_column(plural(main_noun))], rows=20 + stable_seed(name, main_noun) % 41))
    templates += compute_templates
    for tab in draft.tables:  # flesh entities out with typed fields from the library (or generic ones)
        extra = _library_fields(tab.name)
        if not extra:
            s = stable_seed(name, tab.name)
            extra = [_GENERIC_FIELDS[(s + i * 7) % len(_GENERIC_FIELDS)] for i in range(4)]
        for tok in extra[:5]:
            tab.add(parse_field(tok))
        if not any(c.gen == "faker" and c.type == "text" for c in tab.columns[1:]):
            tab.add(parse_field("name:title"))
    draft.tables = _topological(draft.tables)
    place_described_fields(draft, plans)
    return draft, templates, skipped


# ------------------------------------------------------------------------------------------ entity nouns

# actions a tool name may start or end with that are not in VERBS (they do not choose a template
# kind) and never name the entity the tool manages: `browser_click`, `navigate`, `gdb_step`
_ACTIONS = frozenset(["navigate", "click", "hover", "press", "scroll", "drag", "type", "wait", "back", "forward", "tap", "swipe", "select", "attach", "continue", "finish", "step", "next", "take", "sell", "assess", "remember", "convert", "echo", "ping", "hello", "greet", "initialize", "init", "exec", "execute", "run", "render", "restart", "logout", "login", "follow", "unfollow", "mute", "unmute", "jump", "dig", "fly", "undo", "pause", "resume", "protect", "unprotect", "replace", "decompose", "parse", "optimize", "collect", "reload", "go", "use", "do", "get", "need"])
# short forms tool names use for the entity the descriptions spell out
_SHORT = {"doc": "document", "repo": "repository", "db": "database", "msg": "message", "img": "image", "pic": "picture",
          "env": "environment", "desc": "description", "calc": "calculation", "temp": "temperature", "sim": "simulator",
          "exec": "execution", "stat": "statistic", "param": "parameter", "dir": "directory", "pv": "process_variable", "pr": "pull_request",
          "dev": "developer"}


def _stopwords() -> frozenset[str]:
    from ..semantics import STOPWORDS

    return STOPWORDS


def _stem_of(word: str) -> str:
    from ..semantics import stem

    return stem(singular(word))


def _text_stems(text: str) -> set[str]:
    """The stems of a text's words (what a table name must share one of to be named after what it says)."""
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text or "").lower()
    return {_stem_of(w) for w in re.findall(r"[a-z][a-z0-9]+", text) if len(w) > 2}


def _tool_text(tool: dict) -> str:
    props = (tool.get("parameters") or {}).get("properties") if isinstance(tool.get("parameters"), dict) else None
    params = [str(s.get("description") or "") for s in (props or {}).values() if isinstance(s, dict)]
    return " ".join([str(tool.get("description") or ""), *params])


def _said_stems(name: str, label: str, tools: list[dict]) -> set[str]:
    """What a server says it holds: its name, its label, its tools' and parameters' own descriptions."""
    return _text_stems(" ".join([name, label, *(_tool_text(t) for t in tools)]))


def _entity_noun(nouns: list[str], tool: dict, said: set[str], main_noun: str) -> str:
    """The entity a tool manages, named as the server's own words name it: the last noun of the tool's
    name that its description (or, failing that, the server's words) uses, its short form spelled out
    (`get_docs` -> document); else the noun its description leads with; else (nothing describes it)
    the tool's own word, or the server's noun for a tool named by an action alone. A noun no description
    uses (`sub`, `browser_click`'s `click`) would name a table after nothing."""
    own = _text_stems(_tool_text(tool))
    cands = []
    for w in reversed(nouns):
        w = singular(w)
        if w in _ACTIONS or w in _stopwords():
            continue  # 'getInfoAdminOnly' manages no 'onlies'
        cands += [_SHORT[w], w] if w in _SHORT else [w]
    for pool in (own, said):
        for w in cands:
            if _stem_of(w.split("_")[-1]) in pool and len(w) > 2 and not w[0].isdigit():
                return w
    lead = _lead_noun(str(tool.get("description") or ""))
    if lead:
        return lead
    return cands[0] if cands else main_noun  # nothing describes it: the tool's own word, as before


_DETERMINERS = frozenset(["a", "an", "the", "all", "each", "every", "one", "two", "some", "any", "of", "its", "their", "your", "his", "her", "this", "these"])
_NOT_NOUN = ("ly", "ed", "ing", "ous", "ive", "ful", "able", "ible", "est")


def _lead_noun(text: str) -> str | None:
    """The first noun the description puts after a determiner ('Subtract two numbers' -> number,
    'Click an element on the page' -> element), adjectives it knows of skipped; None when there is none."""
    toks = re.findall(r"[a-z][a-z0-9]*", text.lower().split(".")[0])
    for i, w in enumerate(toks[:-1]):
        if w not in _DETERMINERS:
            continue
        for nxt in toks[i + 1: i + 4]:
            if nxt in _DESCRIPTION_FILLER or nxt in _FIELD_STOP or nxt in _DETERMINERS:
                continue
            if len(nxt) < 3 or nxt in _STOP or nxt in _VERB_OF or nxt in _ACTIONS or nxt in _GENERIC or nxt.endswith(_NOT_NOUN):
                break
            return singular(nxt)
    return None


# words a description leads with that are not the entity (the first noun after them is)
_DESCRIPTION_FILLER = frozenset(["this", "that", "these", "those", "which", "what", "when", "where", "there", "their", "them", "then", "than", "with", "without", "into", "onto", "from", "about", "over", "under", "between", "within", "using", "given", "specified", "provided", "specific", "based", "each", "every", "some", "many", "more", "most", "other", "another", "such", "current", "available", "multiple", "single", "several", "certain", "only", "also", "just", "about", "returns", "return", "gets", "given", "previous", "first", "last", "new", "old", "full", "entire", "whole", "specific", "optional", "random", "basic", "simple", "different", "same", "various", "top", "latest", "recent"])


# ------------------------------------------------------------------------------------------ described fields

_LIST_CUES = (
    r"(?:\b[a-z]+'s|\bits|\btheir|\bhis|\bher)\s+(?P<a>[a-z][a-z ,/-]+)",  # "a pet's name, species and weight"
    r"\bwith (?:its|their|the|a|an)\s+(?P<b>[a-z][a-z ,/-]+)",  # "appointments with their date, vet and status"
    r"\b(?:including|includes|such as|returns?|shows?|containing|contains)\s+(?:its|their|the|a|an)?\s*(?P<c>[a-z][a-z ,/-]+)",
)
_SAME_IN_PLURAL = {"species", "series", "news", "status", "analysis", "basis", "means", "data", "media", "metadata", "sheep", "aircraft"}
_FIELD_STOP = {"the", "a", "an", "its", "their", "his", "her", "any", "all", "each", "current", "optional", "optionally"}
_EXAMPLE_RE = re.compile(r"\b(?:e\.g\.|eg|such as|for example|like)\s*[:,]?\s*([\w' -]+(?:\s*(?:,|\bor\b|\band\b)\s*[\w' -]+)+)", re.I)


def described_fields(text: str) -> list[str]:
    """Field names a tool's description lists ('Get a pet's name, species, birth date, weight and owner'
    -> ['name', 'species', 'birth_date', 'weight', 'owner']): a list of two or more short noun phrases
    after a possessive, 'with their', 'including' or 'returns'."""
    out: list[str] = []
    for sentence in re.split(r"[.;:\n]", (text or "").lower()):
        for cue in _LIST_CUES:
            for m in re.finditer(cue, sentence):
                body = next(g for g in m.groups() if g)
                body = re.split(r"\b(?:for|of|by|from|in|on|to|with|that|which|when|if|as|so|whose|who)\b", body)[0]
                items = [i.strip() for i in re.split(r",|\band\b|\bor\b|/", body) if i.strip()]
                if len(items) < 2:
                    continue
                for item in items:
                    words = [w for w in item.split() if w not in _FIELD_STOP]
                    if words and words[-1].endswith("s") and len(words[-1]) > 3 and words[-1] not in _SAME_IN_PLURAL:
                        words[-1] = singular(words[-1])  # "sessions with their ids and ages": each one's id and age
                    if 1 <= len(words) <= 3 and all(w.isalpha() for w in words):
                        name = "_".join(words)
                        if name not in out:
                            out.append(name)
    return out


def example_values(text: str) -> tuple[str, ...]:
    """Values a parameter description gives as examples ('Only pets of this species, e.g. dog or cat')."""
    m = _EXAMPLE_RE.search(text or "")
    if not m:
        return ()
    vals = [v.strip(" '\"").lower() for v in re.split(r",|\bor\b|\band\b", m.group(1))]
    vals = [v for v in vals if v and len(v.split()) <= 3 and v not in ("etc", "more")]
    return tuple(dict.fromkeys(vals)) if len(vals) >= 2 else ()


# a described field -> the column generator token it gets when its name alone says what it holds
_SEMANTIC_TOKEN = {"person": "person", "company": "company", "email": "email", "phone": "phone", "address": "street", "country": "country",
                   "currency": "currency", "city": "city", "airport": "city", "url": "url", "domain": "domain", "ip": "ip", "path": "path",
                   "filename": "filename", "version": "version", "language": "word", "color": "color", "hash": "hash",
                   "username": "username", "search": "phrase", "title": "title", "pet_name": "title", "slug": "slug", "text": "sentence", "term": "word", "money": "money",
                   "percent": "pct", "rating": "rating", "year": "year", "latitude": "lat", "longitude": "lon"}
_DATE_WORDS = {"date", "birthday", "dob", "deadline", "time", "timestamp", "day"}
MAX_MISSING_FIELDS = 3  # described fields a theme may leave without a column and still be "ok"


def _column_for_field(field_name: str, table: str, note: str = "") -> Column | None:
    """A typed column for a described field, or None when nothing says what it holds."""
    from ..semantics import semantic_type

    words = field_name.split("_")
    if words[0] in ("birth", "born", "founded", "established"):
        return Column(field_name, "date", ("2005-01-01", "2024-12-31"))  # a life or a company began years ago
    if words[-1] in _DATE_WORDS or field_name.endswith(("_at", "_on")):
        return Column(field_name, "date", ("2024-01-01", "2025-05-31"))
    if words[-1] == "status":
        return parse_field(f"{field_name}=active/pending/closed")
    kind = semantic_type(field_name, table, "text", None, note)
    if kind in (None, "term", "title", "text"):  # a name that says nothing of text may say it is a number (weight, price)
        kind = semantic_type(field_name, table, "float", None, note) or kind
    if kind == "quantity":
        return Column(field_name, "float", (0.5, 80.0), type="float") if words[-1] in ("weight", "height", "length", "width", "size", "distance") \
            else column_for(field_name, "count")
    if kind in _SEMANTIC_TOKEN:
        return column_for(field_name, _SEMANTIC_TOKEN[kind])
    return None


def place_described_fields(draft: ThemeDraft, plans: list) -> None:
    """Give each table the fields its tools' descriptions, output schemas and parameter descriptions
    name: a field matching a column (or a related table) is found; one whose name says its type becomes
    a column of that type (a parameter's examples are what the world draws its values from); the rest are recorded as
    missing (draft.meta["missing_fields"]). Kept descriptions go to draft.meta["notes"] for typing."""
    notes: dict = draft.meta.setdefault("notes", {})
    late: list = draft.meta.setdefault("late_columns", [])
    missing: list = draft.meta.setdefault("missing_fields", [])
    described: dict = draft.meta.setdefault("described_fields", {})
    tables = {t.name: t for t in draft.tables}
    for tool, tname, props, _required, _kind, noun, _ids, _key in plans:
        tab = tables.get(plural(noun))
        if tab is None:
            continue
        for p, s in props.items():
            d = s.get("description") if isinstance(s, dict) else None
            if isinstance(d, str) and d.strip():
                notes.setdefault(f"{tab.name}.{p}", d.strip()[:200])
                examples = example_values(d)
                col = next((c for c in tab.columns if c.name == p), None)
                if examples and col is not None and col.gen == "faker" and col.type == "text":
                    draft.meta.setdefault("examples", {})[f"{tab.name}.{p}"] = list(examples)  # the world draws from them
        fields = described_fields(tool.get("description") or "")
        output = tool.get("output_schema")
        if isinstance(output, dict) and isinstance(output.get("properties"), dict):
            fields += [f for f in output["properties"] if isinstance(f, str) and _NAME_RE.match(f) and f not in fields]
        for f in fields:
            f_low = humanize(f).replace(" ", "_")
            described.setdefault(tab.name, [])
            if f_low not in described[tab.name]:
                described[tab.name].append(f_low)
            placed = {c.name for t_, c in late if t_ == tab.name}
            found = _has_field(tab, f_low, tables, placed)
            if found is True:
                continue
            col = found or _column_for_field(f_low, tab.name)
            if col is None:
                if [tname, f_low] not in missing:
                    missing.append([tname, f_low])
                continue
            late.append((tab.name, col))


def _has_field(tab: TableDraft, field_name: str, tables: dict, placed: set) -> bool | Column:
    """True when a table already holds a described field: a column of that name, or one it starts
    ('vet' ~ vet_name), or a reference to the table it names ('owner' ~ owner_id -> owners); a
    foreign-key Column to add when it names an earlier table the table does not refer to yet."""
    if tab.has(field_name) or field_name in placed or any(c.name.startswith(field_name + "_") for c in tab.columns) or field_name in ("id", tab.pk):
        return True
    if plural(field_name) == tab.name or singular(field_name) == singular(tab.name):
        return True  # "a pet's pet": the record itself
    ref = plural(field_name)
    if ref in tables and ref != tab.name:
        if any(c.gen == "fk" and c.arg == ref for c in tab.columns):
            return True
        names = list(tables)
        if names.index(ref) < names.index(tab.name) and not tab.has(pk_name(ref)) and pk_name(ref) not in placed:
            return fk_column(pk_name(ref), ref)
    return False


def _unsupported(tool: dict, tname: str, seen: set) -> str | None:
    if not _NAME_RE.match(tname):
        return f"tool name {tname[:40]!r} is not a plain identifier"
    if tname in seen or tname == "submit":
        return "duplicate tool name"
    schema = tool.get("parameters")
    if not isinstance(schema, dict) or not isinstance(schema.get("properties", {}), dict):
        return "parameters are not a JSON-Schema object"
    props = schema.get("properties") or {}
    for p, s in props.items():
        if not _NAME_RE.match(str(p)):
            return f"parameter name {str(p)[:30]!r} is not a plain identifier"
        t, _ = simple_type(s)
        if p in (schema.get("required") or ()):
            if t is None:
                return f"required parameter {p!r} has no usable type"
            if t == "object":
                return f"required parameter {p!r} is a nested object"
            if t == "array":
                return f"required parameter {p!r} is an array"
            if t not in SCALARS:
                return f"required parameter {p!r} has unsupported type {t!r}"
    return None


def _param_schema(s: dict, t: str | None, enum, role: str, pname: str) -> dict:
    """The parameter's schema as the agent sees it: its own description when the source has one."""
    real = s.get("description") if isinstance(s, dict) and isinstance(s.get("description"), str) and s["description"].strip() else None
    out: dict = {"description": real.strip() if real else _describe(role, pname)}
    if t in SCALARS or t in ("array", "object"):
        out["type"] = t
    if enum and t in SCALARS:
        out["enum"] = list(enum)
    if t == "array":
        it, _ = simple_type(s.get("items") or {})
        if it in SCALARS:
            out["items"] = {"type": it}
    return out


def _describe(role: str, pname: str) -> str:
    h = humanize(pname)
    return {"key": f"The id of the record ({h}).", "fk": f"The {h} it refers to.", "limit": "How many results to return (1-100).",
            "query": "Text to look for.", "offset": "How many results to skip.", "page": "Which page of results (1 = the first).",
            "sort": "The field to order the results by.", "direction": "asc or desc."}.get(role, f"The {h}.")


def _template(tool, tname, props, required, kind, key, tab: TableDraft, draft: ThemeDraft, skipped, server) -> dict | None:
    params = []
    write = kind in ("create", "update", "delete", "cancel", "transfer")
    amount = next((p for p in props if humanize(p).split()[-1:] in (["amount"], ["quantity"], ["value"]) and simple_type(props[p])[0] in ("integer", "number")), None)
    if kind == "transfer":
        ends = [p for p in props if is_id_param(p) or humanize(p).split()[0] in ("from", "to", "source", "destination", "sender", "recipient")]
        if amount is None or len(ends) < 2:
            kind = "update" if key else "create"
    locator = None
    if kind in ("update", "delete", "cancel") and key is None:
        # no id: the record is named by another value (a path, a name, a pid): act on the rows holding it
        usable = [p for p in props if simple_type(props[p])[0] in ("string", "integer") and not simple_type(props[p])[1]
                  and humanize(p).replace(" ", "_") not in LIMIT_NAMES | PAGING_NAMES]
        locator = next((p for p in usable if p in required), usable[0] if usable else None)
        if locator is None:
            skipped.append(Skipped(server, tname, f"{kind} without a parameter that says which record"))
            return None
    if kind == "get" and key is None:
        kind = "lookup"
    if kind == "search" and not any(humanize(p).replace(" ", "_") in QUERY_NAMES for p in props):
        strings = [p for p in props if simple_type(props[p])[0] == "string" and not is_id_param(p) and not simple_type(props[p])[1]]
        kind = "search" if strings else "lookup"
    if kind == "aggregate" and not (key or any(is_id_param(p) for p in props)):
        kind = "lookup"
    query_done = False
    dropped: list[list[str]] = []
    for p, s in props.items():
        t, enum = simple_type(s)
        low = humanize(p).replace(" ", "_")
        req = p in required
        if p == key and kind == "transfer":
            role = "from"
        elif kind == "transfer" and is_id_param(p) and not any(x["role"] == "to" for x in params) and any(x["role"] == "from" for x in params):
            role = "to"
        elif kind == "transfer" and low.split("_")[0] in ("from", "source", "sender") and t == "string":
            role = "from"
        elif kind == "transfer" and low.split("_")[0] in ("to", "destination", "recipient") and t == "string":
            role = "to"
        elif kind == "transfer" and p == amount:
            role = "amount"
        elif p == key:
            role = "newkey" if kind == "create" else "key"
        elif p == locator:
            role = "locator"
        elif is_id_param(p) and t in ("string", "integer", "number") and any(c.name == p and c.gen == "fk" for c in tab.columns):
            role = "fk"
        elif t not in SCALARS:
            role = "ignore"
        elif low in LIMIT_NAMES and t in ("integer", "number"):
            role = "limit"
        elif kind in ("list", "lookup", "search") and low in ("offset", "skip", "start") and t in ("integer", "number"):
            role = "offset"
        elif kind in ("list", "lookup", "search") and low == "page" and t in ("integer", "number"):
            role = "page"
        elif kind in ("list", "lookup", "search") and low in SORT_NAMES and t == "string" and not enum:
            role = "sort"
        elif kind in ("list", "lookup", "search") and low in DIRECTION_NAMES and t == "string" and (not enum or {str(e).lower() for e in enum} <= {"asc", "desc"}):
            role = "direction"
        elif low in PAGING_NAMES:
            role = "ignore"
        elif kind == "search" and not query_done and t == "string" and not enum and (low in QUERY_NAMES or not any(humanize(x).replace(" ", "_") in QUERY_NAMES for x in props)):
            role, query_done = "query", True
        elif (t == "boolean" and not write) or kind in ("delete", "cancel", "get", "aggregate"):
            role = "ignore"
        else:
            role = "value" if write else "filter"
        if role == "ignore":  # a parameter that cannot be given meaning is left out of the schema, not faked
            dropped.append([p, _drop_reason(kind, t, low, write)])
            continue
        entry = {"name": p, "role": role, "required": req, "schema": _param_schema(s, t, enum, role, p)}
        if role == "locator":
            tab.add(column_for(p, json_type=t))
            entry["column"] = p
        if role in ("filter", "value"):
            if tab.has(p) and not any(c.name == p and c.gen in ("fk", "id") for c in tab.columns):
                pass
            elif tab.has(p):
                entry["role"] = "ignore"
            else:
                tab.add(column_for(p, json_type=t, enum=enum))
            if entry["role"] != "ignore":
                entry["column"] = p
        elif role in ("key", "newkey", "from", "to"):
            entry["column"] = tab.pk
        elif role == "fk":
            entry["column"] = p
            entry["table"] = next(c.arg for c in tab.columns if c.name == p and c.gen == "fk")
        elif role == "amount":
            entry["column"] = p
        params.append(entry)
    if kind == "transfer":
        roles = {x["role"] for x in params}
        if not {"from", "to", "amount"} <= roles:
            skipped.append(Skipped(server, tname, "transfer without two ends and an amount"))
            return None
        amt = next(x for x in params if x["role"] == "amount")
        tab.add(Column(amt["name"], "float", (100, 5_000), type="float"))
        amt.pop("column", None)
    own = tool.get("description") if isinstance(tool.get("description"), str) else ""
    t = {"name": tname, "kind": kind, "table": tab.name, "params": params, "real": True,
         "description": own.strip() or _tool_description(kind, tab.name), "phrase": _real_phrase(kind, tab.name, params)}
    if own.strip():
        t["own_description"] = True
    if dropped:
        t["dropped"] = dropped
    if kind == "transfer":
        t["column"] = amt["name"]
    if kind == "search":
        q = next((x for x in params if x["role"] == "query"), None)
        if q is None:
            t["kind"] = "lookup"
        else:
            t["columns"] = None  # filled once the table's text columns are known (see build.finish_templates)
    if kind == "cancel":
        t["column"], t["value"] = "status", "cancelled"
        if not tab.has("status"):
            tab.add(Column("status", "choice", ("active", "pending", "cancelled"), weights=(0.6, 0.3, 0.1)))
        elif not any(c.name == "status" and c.gen == "choice" and "cancelled" in c.arg for c in tab.columns):
            t["kind"] = "update" if any(x["role"] == "value" for x in params) else "delete"
    if kind == "aggregate":
        key_p = next((x for x in params if x["role"] in ("key", "fk")), None)
        if key_p is None:
            t["kind"] = "lookup"
        t["column"] = None  # the numeric column is chosen once the table is complete
    if kind == "create":
        t["prefix"] = ""
        t["key_type"] = tab.key_type
    if kind == "update" and not any(x["role"] in ("value", "fk") for x in params):
        if locator is not None:
            skipped.append(Skipped(server, tname, "update with nothing to change"))
            return None
        t["kind"] = "get"
    return t


def _drop_reason(kind: str, t: str | None, low: str, write: bool) -> str:
    if t not in SCALARS:
        return f"{t or 'untyped'} parameter with no column behind it"
    if low in PAGING_NAMES:
        return "cursor paging: results come back whole"
    if t == "boolean" and not write:
        return "output-format flag of a read"
    return f"no meaning for a {kind}"


def compute_template(tool: dict, tname: str, props: dict, required: set[str]) -> dict | None:
    """A compute template when the tool's name and parameters fit a deterministic function."""
    from . import compute

    types = {p: simple_type(s)[0] for p, s in props.items()}
    found = compute.match_function(tname, props, required, types)
    if found is None:
        return None
    f, mapping = found
    slots = {s.name: s for s in f.slots}
    params = []
    for p, slot in mapping.items():
        typ = types.get(p) or ("number" if slots[slot].type == "number" else "string")
        params.append({"name": p, "role": "slot", "slot": slot, "required": p in required or not slots[slot].optional,
                       "schema": _param_schema(props[p], typ, simple_type(props[p])[1], "slot", p)})
    dropped = [[p, f"no meaning for {f.name.replace('_', ' ')}"] for p in props if p not in mapping]
    inputs = {p: [case[0][slot] for case in f.cases if slot in case[0]] for p, slot in mapping.items()}
    own = tool.get("description") if isinstance(tool.get("description"), str) else ""
    t = {"name": tname, "kind": "compute", "function": f.name, "table": None, "params": params, "real": True,
         "description": own.strip() or f"{humanize(f.name).capitalize()}.", "examples": {p: v for p, v in inputs.items() if v},
         "phrase": f"{humanize(f.name)} with " + " and ".join(f"{humanize(slot)} {{{p}}}" for p, slot in mapping.items())}
    if own.strip():
        t["own_description"] = True
    if dropped:
        t["dropped"] = dropped
    return t


def _tool_description(kind: str, table: str) -> str:
    n, ns = humanize(singular(table)), humanize(table)
    return {
        "get": f"Get one {n} by its id.", "list": f"List {ns}, optionally filtered.", "lookup": f"Find the {ns} matching the given values.",
        "search": f"Search {ns} by text.", "create": f"Add a new {n}; returns the stored record.", "update": f"Change fields of one {n}.",
        "cancel": f"Cancel one {n}.", "delete": f"Delete one {n}.", "aggregate": f"Count and total the {ns} for one key.",
        "transfer": f"Move an amount from one {n} to another.",
    }[kind]


def _real_phrase(kind: str, table: str, params: list[dict]) -> str:
    n, ns = humanize(singular(table)), humanize(table)
    req = [p for p in params if p["required"]]
    key = next((p["name"] for p in params if p["role"] in ("key", "newkey")), None)
    with_ = " and ".join(f"{humanize(p['name'])} {{{p['name']}}}" for p in req if p["role"] in ("filter", "value", "fk", "query", "ignore", "limit", "newkey"))
    if kind == "get":
        return f"look up the {n} {{{key}}}"
    q = next((p["name"] for p in params if p["role"] == "query"), None)
    k = next((p["name"] for p in params if p["role"] in ("key", "fk")), None)
    if kind in ("search", "aggregate") and (q if kind == "search" else k) is None:
        kind = "lookup"  # the template falls back to a lookup too
    if kind in ("list", "lookup"):
        return f"find the {ns}" + (f" with {with_}" if with_ else "")
    if kind == "search":
        rest = " and ".join(f"{humanize(p['name'])} {{{p['name']}}}" for p in req if p["role"] in ("filter", "fk"))
        return f"search the {ns} for {{{q}}}" + (f" with {rest}" if rest else "")
    if kind == "create":
        return f"record a new {n}" + (f" with {with_}" if with_ else "")
    if kind == "update":
        return f"update the {n} {{{key}}}" + (f" setting {with_}" if with_ else "")
    if kind == "cancel":
        return f"cancel the {n} {{{key}}}"
    if kind == "delete":
        return f"delete the {n} {{{key}}}"
    if kind == "aggregate":
        return f"count the {ns} for {humanize(k)} {{{k}}}"
    roles = {p["role"]: p["name"] for p in params}
    return f"move {{{roles.get('amount')}}} from {{{roles.get('from')}}} to {{{roles.get('to')}}}"


def _topological(tables: list[TableDraft]) -> list[TableDraft]:
    done: list[TableDraft] = []
    names = {t.name for t in tables}
    pending = list(tables)
    while pending:
        for t in pending:
            deps = {c.arg for c in t.columns if c.gen == "fk"} & names
            if deps <= {d.name for d in done} | {t.name}:
                done.append(t)
                pending.remove(t)
                break
        else:  # a cycle: drop the offending foreign keys of the first table
            t = pending.pop(0)
            t.columns = [c for c in t.columns if c.gen != "fk" or c.arg in {d.name for d in done}]
            done.append(t)
    return done


from ..theme import noun_of  # noqa: E402  (kept at the end: only the real-schema path needs it)
