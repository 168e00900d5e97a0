"""Theme specs (pure data) and their worlds: deterministic SQLite databases, one copy per episode.

A `ThemeSpec` describes tables as columns with value generators (faker providers, id sequences,
choices, ranges, foreign keys). `build_template()` turns (spec, db_seed, scale) into a serialized
SQLite database with sqlite-utils and a per-build seeded Faker; the bytes are cached in memory and
on disk (keyed by the spec hash). `World` deserializes a private in-memory copy per episode.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
import tempfile
import warnings
import zlib
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ConfigError
from .sql_names import sql_name  # noqa: F401 - re-exported: tools, discovery and synthesis quote through world

_SQL_TYPES = {"text": "TEXT", "int": "INTEGER", "float": "REAL"}


@dataclass(frozen=True)
class Column:
    """A column and how to generate its values.

    gen is one of: "id" (prefix + running number from `start`), "faker" (provider in `arg`),
    "choice" (values in `arg`, optional `weights`), "int" / "float" ((lo, hi) in `arg`), "date"
    ((start, end) ISO dates in `arg`), "fk" (table name in `arg`), "const" (value in `arg`).
    """

    name: str
    gen: str
    arg: Any = None
    type: str = "text"  # text | int | float
    weights: tuple[float, ...] | None = None
    unique: bool = False
    nullable_share: float = 0.0


def id_col(name: str, prefix: str, start: int = 1001) -> Column:
    return Column(name, "id", (prefix, start))


def faker_col(name: str, provider: str, unique: bool = False) -> Column:
    return Column(name, "faker", provider, unique=unique)


def choice_col(name: str, values, weights=None, type: str = "text") -> Column:
    return Column(name, "choice", tuple(values), type=type, weights=tuple(weights) if weights else None)


def int_col(name: str, lo: int, hi: int) -> Column:
    return Column(name, "int", (lo, hi), type="int")


def money_col(name: str, lo: float, hi: float) -> Column:
    return Column(name, "float", (lo, hi), type="float")


def date_col(name: str, start: str = "2024-01-01", end: str = "2025-05-31") -> Column:
    return Column(name, "date", (start, end))


def fk_col(name: str, table: str) -> Column:
    return Column(name, "fk", table)


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    rows: int = 20

    @property
    def pk(self) -> str:
        return self.columns[0].name  # the first column is the primary key


@dataclass(frozen=True)
class ThemeSpec:
    """Everything that defines a theme's world, as JSON-serialisable data."""

    id: str  # slug, e.g. "finance"
    title: str
    category: str  # L1
    subcategory: str  # L2
    label: str  # L3, free text
    description: str
    tables: tuple[Table, ...]
    rules: tuple[str, ...] = ()  # business rules shown to the agent
    source: str = "flagship"
    now: str = "2025-06-01T12:00:00"
    extra: dict = field(default_factory=dict, hash=False, compare=False)

    def table(self, name: str) -> Table:
        for t in self.tables:
            if t.name == name:
                return t
        raise ConfigError(f"Expected a table of theme {self.id!r}, got {name!r}.")

    @property
    def primary_keys(self) -> dict[str, str]:
        return {t.name: t.pk for t in self.tables}

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> ThemeSpec:
        tables = tuple(
            Table(t["name"], tuple(Column(**{**c, "arg": _tuplify(c.get("arg")), "weights": _tuplify(c.get("weights"))}) for c in t["columns"]), t.get("rows", 20))
            for t in d["tables"]
        )
        return cls(**{**d, "tables": tables, "rules": tuple(d.get("rules", ()))})

    @cached_property
    def fingerprint(self) -> str:
        """A stable hash of the spec; keys the on-disk world cache."""
        blob = json.dumps(self.to_dict(), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def __hash__(self) -> int:
        return hash(self.fingerprint)


def _tuplify(x):
    return tuple(_tuplify(i) for i in x) if isinstance(x, list) else x


# --------------------------------------------------------------------------------------------
# Building


# Bump when value generation changes without a spec change: it is part of every world cache key,
# so nobody keeps a world built by older generators.
GENERATOR_VERSION = 5  # 3: semantic column types and cross-column constraints (agentworld_gym.semantics); 4: no stop words in generated text; 5: whole acronyms (sms, not sm)


def world_seed(spec: ThemeSpec, db_seed: int) -> int:
    """The generators' seed: flagships keep `db_seed` (their tasks and tests are written against those
    worlds); every other theme mixes in its id, so no two pool worlds open with the same rows."""
    if spec.source == "flagship":
        return db_seed
    return zlib.crc32(f"{spec.id}|{db_seed}".encode())


def _generate_rows(spec: ThemeSpec, db_seed: int, scale: float) -> dict[str, list[dict]]:
    from faker import Faker

    from . import semantics  # imported when a world is built, not with the package

    seed = world_seed(spec, db_seed)
    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = np.random.default_rng(seed)
    keys: dict[str, list] = {}
    out: dict[str, list[dict]] = {}
    notes = spec.extra.get("notes") if isinstance(spec.extra, dict) else None
    # Flagships keep the worlds their hand-written tests were made on: only their filler text columns get
    # typed values, drawn from a stream of their own, so every other column keeps its values.
    flagship = spec.source == "flagship"
    t_fake, t_rng = (Faker("en_US"), np.random.default_rng(seed + 3)) if flagship else (fake, rng)
    if flagship:
        t_fake.seed_instance(seed + 3)
    maker = semantics.ValueMaker(spec, t_fake, t_rng)
    for table in spec.tables:
        n = max(1, int(round(table.rows * scale)))
        columns = {}
        for c in table.columns:
            values = _typed_values(c, table, n, t_fake, t_rng, maker, notes) if not flagship or _is_filler(c) else None
            if values is None or flagship:
                drawn = _column_values(c, n, fake, rng, keys, spec)
                values = drawn if values is None else values
            columns[c.name] = values
        out[table.name] = [{name: values[i] for name, values in columns.items()} for i in range(n)]
        keys[table.name] = columns[table.pk]
    semantics.enforce(spec, out, np.random.default_rng(seed + 2))
    repair = spec.extra.get("seed_repair") if isinstance(spec.extra, dict) else None
    if repair:  # a theme whose rules the independent column draws would break fixes its rows here
        import importlib

        module, _, fn = repair.partition(":")
        getattr(importlib.import_module(module), fn)(out, np.random.default_rng(seed + 1))
    return out


# ---------------------------------------------------------------------------- domain-aware values

_FILLER_PROVIDERS = ("catch_phrase", "bs", "sentence", "sentences", "word", "words", "paragraph", "text", "slug")


def _is_filler(c: Column) -> bool:
    """A column declared with one of Faker's filler providers (buzzword phrases, lorem words)."""
    provider = c.arg if isinstance(c.arg, str) else c.arg[0] if isinstance(c.arg, tuple) and c.arg else None
    return c.gen == "faker" and provider in _FILLER_PROVIDERS


_PEOPLE = {"user", "customer", "patient", "author", "employee", "member", "student", "contact", "person", "people", "player", "artist",
           "owner", "researcher", "teacher", "doctor", "agent", "driver", "guest", "attendee", "speaker", "candidate", "client", "subscriber",
           "follower", "reviewer", "instructor", "volunteer", "donor", "tenant", "staff", "physician", "athlete", "creator", "influencer",
           "musician", "host", "traveler", "traveller", "passenger", "buyer", "seller", "applicant", "recipient", "assignee", "coach"}
_ORGS = {"company", "organization", "organisation", "vendor", "supplier", "brand", "store", "shop", "restaurant", "hotel", "airline",
         "bank", "exchange", "agency", "publisher", "institution", "university", "school", "merchant", "partner", "carrier", "lender",
         "insurer", "broker", "manufacturer", "retailer", "sponsor", "charity", "employer", "firm", "startup", "provider", "lab"}
_PLACES = {"city", "location", "venue", "station", "airport", "site", "warehouse", "branch", "office", "facility", "clinic", "hospital",
           "park", "destination", "property", "building", "campus", "port", "stadium", "farm", "field", "plant", "store_location"}
_FILES = {"file", "document", "attachment", "image", "photo", "upload", "asset", "screenshot", "recording", "backup", "export", "report_file"}
_SYSTEMS = {"repo", "repository", "project", "package", "library", "model", "dataset", "service", "app", "application", "bot", "pipeline",
            "workflow", "endpoint", "api", "channel", "server", "database", "index", "bucket", "cluster", "container", "function", "job",
            "deployment", "environment", "namespace", "queue", "topic", "branch_name", "plugin", "extension", "module", "component", "instance"}
_SYSTEM_SUFFIXES = ("api", "service", "worker", "core", "web", "sync", "prod", "staging", "gateway", "store", "engine", "pipeline")
_WORKS = {"song": ("Midnight", "Golden", "Electric", "Paper", "Silent", "Summer", "Neon", "Broken", "Wild", "Blue"),
          "track": ("Midnight", "Golden", "Electric", "Paper", "Silent", "Summer", "Neon", "Broken", "Wild", "Blue")}
_SUBJECTS = ("Statistics", "Organic Chemistry", "Machine Learning", "World History", "Microeconomics", "Linear Algebra", "Creative Writing",
             "Marine Biology", "Data Structures", "Public Speaking", "Spanish", "Photography", "Accounting", "Astronomy", "Ethics")
_WORK_NOUNS = ("Light", "River", "Road", "Garden", "City", "Dream", "Fire", "Heart", "Sky", "Shadow", "Echo", "Harbor", "Storm", "Night")
_WORK_ADJS = ("Midnight", "Golden", "Electric", "Silent", "Summer", "Neon", "Broken", "Wild", "Hidden", "Last", "Distant", "Quiet")
_TASK_VERBS = ("Fix", "Update", "Review", "Draft", "Migrate", "Test", "Document", "Refactor", "Schedule", "Prepare", "Audit", "Plan")
_TASK_OBJECTS = ("report", "checklist", "notes", "plan", "schedule", "summary", "follow-up", "backlog", "review", "list")
_PRODUCT_ADJS = ("Stainless", "Wireless", "Organic", "Compact", "Ergonomic", "Waterproof", "Bamboo", "Smart", "Vintage", "Portable")
_PRODUCT_NOUNS = ("Water Bottle", "Headphones", "Desk Lamp", "Backpack", "Coffee Grinder", "Yoga Mat", "Keyboard", "Blender",
                  "Running Shoes", "Notebook", "Sunglasses", "Tent", "Phone Case", "Chair")
_RESEARCH = ("Graph Neural Networks", "Protein Folding", "Climate Models", "Sparse Attention", "Causal Inference", "Battery Chemistry",
             "Gene Expression", "Reinforcement Learning", "Urban Mobility", "Dark Matter", "Soil Microbiomes", "Speech Recognition")
_RESEARCH_HEADS = ("A Study of", "Scaling", "Rethinking", "Efficient", "Robust", "Towards Better", "On the Limits of", "Learning")
_EVENTS = ("Quarterly Review", "Product Launch", "Team Offsite", "Design Sprint", "Hackathon", "Town Hall", "Training Day", "Webinar",
           "Board Meeting", "Kickoff", "Workshop", "Conference")
_FOODS = ("Lemon Chicken", "Mushroom Risotto", "Lentil Soup", "Banana Bread", "Pad Thai", "Caesar Salad", "Beef Stew", "Veggie Tacos",
          "Apple Pie", "Miso Ramen", "Pesto Pasta", "Greek Salad")


def _domain_name_values(c: Column, table: Table, n: int, fake, rng: np.random.Generator, words=("data",)) -> list | None:
    """Names and titles that fit what the table holds (people, companies, places, files, systems,
    works, tasks, products, papers, events, recipes) instead of generic business phrases; None
    when the column is not a name/title drawn from a generic provider."""
    if c.gen != "faker" or c.arg not in ("catch_phrase", "bs") or c.name.lower() not in ("name", "title", "display_name", "full_name", "label"):
        return None
    noun = table.name.lower()
    noun = noun[:-3] + "y" if noun.endswith("ies") else noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    if noun in _PEOPLE:
        return [fake.name() for _ in range(n)]
    if noun in _ORGS:
        return [fake.company() for _ in range(n)]
    if noun in _PLACES:
        return [f"{fake.city()} {noun.replace('_', ' ').title()}" for _ in range(n)]
    if noun in _FILES:
        return [f"{pick(words)}_{int(rng.integers(1, 99))}.{pick(('pdf', 'docx', 'md', 'txt', 'csv', 'png'))}" for _ in range(n)]
    if noun in _SYSTEMS:
        return [f"{pick(words)}-{pick(_SYSTEM_SUFFIXES)}" for _ in range(n)]
    if noun in ("course", "lesson", "class", "module_course", "lecture", "quiz", "exam"):
        return [f"{pick(('Intro to', 'Advanced', 'Applied', 'Foundations of'))} {pick(_SUBJECTS)}" for _ in range(n)]
    if noun in ("paper", "publication", "article", "preprint", "study", "thesis"):
        return [f"{pick(_RESEARCH_HEADS)} {pick(_RESEARCH)}" for _ in range(n)]
    if noun in ("song", "track", "album", "book", "movie", "film", "episode", "podcast", "show", "playlist", "video", "game", "novel", "story", "poem", "post"):
        return [f"{pick(_WORK_ADJS)} {pick(_WORK_NOUNS)}" for _ in range(n)]
    if noun in ("task", "issue", "ticket", "todo", "bug", "story_point", "request", "incident", "goal", "milestone", "note", "reminder"):
        return [f"{pick(_TASK_VERBS)} {pick(words)} {pick(_TASK_OBJECTS)}" for _ in range(n)]
    if noun in ("product", "item", "listing", "sku", "variant", "gift", "deal", "offer"):
        return [f"{pick(_PRODUCT_ADJS)} {pick(_PRODUCT_NOUNS)}" for _ in range(n)]
    if noun in ("event", "meeting", "session", "webinar", "campaign", "conference", "appointment", "booking"):
        return [f"{fake.city()} {pick(_EVENTS)}" for _ in range(n)]
    if noun in ("recipe", "dish", "meal", "menu_item"):
        return [pick(_FOODS) for _ in range(n)]
    return None


def _typed_values(c: Column, table: Table, n: int, fake, rng: np.random.Generator, maker, notes) -> list | None:
    """Values for a text column whose semantic type is known (semantics.semantic_type): names that
    fit the table, then a real value of the type; None leaves the column to its declared generator."""
    from . import semantics
    examples = maker.examples.get(f"{table.name}.{c.name}")
    if examples and c.gen == "faker" and c.type == "text":  # the values its tool's own description gives ("e.g. dog or cat")
        return [examples[i] for i in rng.integers(0, len(examples), size=n)]
    kind = semantics.column_semantic(c, table, notes)
    if kind not in semantics.TEXT_TYPES or c.type != "text":
        return None
    values = _domain_name_values(c, table, n, fake, rng, maker.vocab) if kind == "title" else None
    if values is None:
        values = maker.many(kind, n, c.name, table.name)
    if c.unique or kind in ("title", "slug", "search", "text"):  # names and titles rarely repeat in a real service
        distinct = maker.unique(kind, values)
        if distinct is None and c.unique:
            return None
        values = distinct or values
    if c.nullable_share:
        values = [None if rng.random() < c.nullable_share else v for v in values]
    return values


def _column_values(c: Column, n: int, fake, rng: np.random.Generator, keys: dict, spec: ThemeSpec) -> list:
    if c.gen == "id":
        prefix, start = c.arg
        return [f"{prefix}{start + i}" for i in range(n)]
    if c.gen == "faker":
        source = fake.unique if c.unique else fake
        provider, *args = c.arg if isinstance(c.arg, tuple) else (c.arg,)
        try:
            values = [_plain(getattr(source, provider)(*args)) for _ in range(n)]
        finally:
            fake.unique.clear()
    elif c.gen == "choice":
        p = np.asarray(c.weights, float) / sum(c.weights) if c.weights else None
        values = [c.arg[i] for i in rng.choice(len(c.arg), size=n, p=p)]
    elif c.gen == "int":
        values = [int(v) for v in rng.integers(c.arg[0], c.arg[1] + 1, size=n)]
    elif c.gen == "float":
        values = [round(float(v), 2) for v in rng.uniform(c.arg[0], c.arg[1], size=n)]
    elif c.gen == "date":
        lo, hi = date.fromisoformat(c.arg[0]), date.fromisoformat(c.arg[1])
        days = rng.integers(0, (hi - lo).days + 1, size=n)
        values = [(lo + timedelta(days=int(d))).isoformat() for d in days]
    elif c.gen == "fk":
        parent = keys.get(c.arg)
        if not parent:
            raise ConfigError(f"Expected table {c.arg!r} to come before its foreign key {c.name!r} in theme {spec.id!r}.")
        if spec.source != "flagship" and len(parent) >= 4:
            parent = parent[: len(parent) - max(1, len(parent) // 7)]  # the newest records have no children yet
        values = [parent[i] for i in rng.integers(0, len(parent), size=n)]
    elif c.gen == "const":
        values = [c.arg] * n
    else:
        raise ConfigError(f"Expected a column generator (id, faker, choice, int, float, date, fk, const), got {c.gen!r} for {c.name!r}.")
    if c.nullable_share:
        values = [None if rng.random() < c.nullable_share else v for v in values]
    return values


def _plain(v: Any) -> Any:
    if isinstance(v, (str, int, float)) or v is None:
        return v
    if isinstance(v, date):
        return v.isoformat()
    return str(v)


def _sqlite_utils():
    """sqlite_utils, imported without pandas: pandas only adds type mappings we never use, and
    importing it costs seconds, which would dominate the first `gym.make` of a theme."""
    import sys

    if "sqlite_utils" not in sys.modules and "pandas" not in sys.modules:
        sys.modules["pandas"] = None  # makes sqlite_utils' optional `import pandas` fail fast
        try:
            import sqlite_utils  # noqa: F401
        finally:
            del sys.modules["pandas"]
    import sqlite_utils

    return sqlite_utils


def column_type(c: Column, spec: ThemeSpec) -> str:
    """A column's storage type; a foreign key takes its parent key's type (an integer key is
    referred to by integers, never by the text "1007")."""
    if c.gen == "fk" and spec.source != "flagship":
        return spec.table(c.arg).columns[0].type
    return c.type


def _create_schema(conn: sqlite3.Connection, spec: ThemeSpec) -> None:
    sqlite_utils = _sqlite_utils()

    db = sqlite_utils.Database(conn)
    for t in spec.tables:
        cols = {c.name: _SQL_TYPES[column_type(c, spec)] for c in t.columns}
        fks = [(c.name, c.arg, spec.table(c.arg).pk) for c in t.columns if c.gen == "fk"]
        db[t.name].create({k: {"TEXT": str, "INTEGER": int, "REAL": float}[v] for k, v in cols.items()}, pk=t.pk, foreign_keys=fks)


def build_database(spec: ThemeSpec, db_seed: int = 0, scale: float = 1.0) -> sqlite3.Connection:
    """Build the theme's database from scratch into a new in-memory connection."""
    sqlite_utils = _sqlite_utils()

    conn = sqlite3.connect(":memory:", check_same_thread=False)
    _create_schema(conn, spec)
    db = sqlite_utils.Database(conn)
    for name, rows in _generate_rows(spec, db_seed, scale).items():
        db[name].insert_all(rows, batch_size=500)
    conn.commit()
    return conn


def cache_dir() -> Path:
    """Where built worlds are cached (override with AGENTWORLD_CACHE)."""
    root = os.environ.get("AGENTWORLD_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "agentworld-gym")
    return Path(root)


_TEMPLATES: dict[tuple[str, int, float], bytes] = {}
_MAGIC = b"SQLite format 3\x00"


def build_template(spec: ThemeSpec, db_seed: int = 0, scale: float = 1.0) -> bytes:
    """The serialized database for (spec, db_seed, scale): from memory, disk cache, or a fresh build.

    A cache file is the database followed by a trailer holding its SHA-256; the hash is checked on every
    read, and a file that fails it (truncated, edited, unreadable, or from before the trailer existed) is
    never served: it is rebuilt with a warning. Disk writes go to a temp file renamed into place, so an
    interrupted or racing build never leaves a half-written entry.
    """
    key = (spec.fingerprint, db_seed, scale, GENERATOR_VERSION)
    blob = _TEMPLATES.get(key)
    if blob is not None:
        return blob
    check_scale(spec, scale)
    path = cache_dir() / "worlds" / f"{spec.id}-{spec.fingerprint}-{db_seed}-{scale:g}-g{GENERATOR_VERSION}.sqlite"
    blob, problem = read_cached_world(path)
    if blob is None:
        if problem is not None:
            warnings.warn(f"World cache {path} {problem}; it is not used and is being rebuilt.", RuntimeWarning, stacklevel=2)
        conn = build_database(spec, db_seed, scale)
        blob = conn.serialize()
        conn.close()
        write_cached_world(path, blob)
    _TEMPLATES[key] = blob
    return blob


MAX_TABLE_ROWS = 200_000  # rows one table may get from `scale` (a world is built in memory, ~1 KB a row)


def check_scale(spec: ThemeSpec, scale: float) -> None:
    """Refuse, before any work, a scale that is not a finite number > 0 or would give a table more than MAX_TABLE_ROWS."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < float("inf"):
        raise ConfigError(f"Expected scale to be a finite number > 0, got {scale!r}.")
    biggest = max((t.rows for t in spec.tables), default=1)
    if biggest * scale > MAX_TABLE_ROWS:
        raise ConfigError(f"Expected scale <= {MAX_TABLE_ROWS / biggest:g} for theme {spec.id!r} (its largest table has {biggest} rows "
                          f"at scale 1; the limit is {MAX_TABLE_ROWS:,} rows), got {scale:g}. Use a smaller scale.")


_TRAILER = b"\nagentworld-sha256:"  # + 64 hex digits, after the database's last page
_TRAILER_LEN = len(_TRAILER) + 64


def read_cached_world(path: Path) -> tuple[bytes | None, str | None]:
    """(database, None) when `path` holds a database whose content hash matches its trailer; else (None, why)
    (why is None when there is simply no file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    blob, trailer = data[:-_TRAILER_LEN], data[-_TRAILER_LEN:]
    if len(data) < _TRAILER_LEN or not trailer.startswith(_TRAILER):
        return None, "has no content hash (truncated, or written by an older version)"
    if hashlib.sha256(blob).hexdigest().encode() != trailer[len(_TRAILER):]:
        return None, "does not match its content hash (damaged or edited)"
    if not blob.startswith(_MAGIC):
        return None, "is not a SQLite database"
    return blob, None


def write_cached_world(path: Path, blob: bytes) -> None:
    """Write `blob` and its content hash to `path` atomically (a temp file renamed into place)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".part")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob + _TRAILER + hashlib.sha256(blob).hexdigest().encode())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:  # a read-only cache dir only costs speed
        pass


# Authorizer: tools run ordinary SQL; nothing may attach files or load extensions.
_DENY = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH}


def _authorizer(action, arg1, arg2, dbname, source):
    if action in _DENY:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and arg2 in ("load_extension", "readfile", "writefile"):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


class BoundedConnection(sqlite3.Connection):
    """A connection whose statements abort after a bounded amount of work (per `start_call()`)."""

    TICKS = 1_000  # progress-handler ticks of 10,000 VM steps each: ~10M steps per tool call

    def start_call(self) -> None:
        self.ticks = 0

    def _tick(self) -> int:
        self.ticks += 1
        return 1 if self.ticks > self.TICKS else 0


def open_copy(blob: bytes) -> BoundedConnection:
    """A private, writable in-memory copy of a serialized database."""
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None, factory=BoundedConnection)
    conn.deserialize(blob)
    conn.set_authorizer(_authorizer)
    conn.ticks = 0
    conn.set_progress_handler(conn._tick, 10_000)
    return conn


def state_hash(conn: sqlite3.Connection, tables: list[str] | tuple[str, ...] | None = None) -> str:
    """A stable hash of the given tables' contents (all tables when None), independent of row order."""
    if tables is None:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    h = hashlib.sha256()
    for t in sorted(tables):
        rows = sorted(json.dumps(r, default=str) for r in conn.execute(f'SELECT * FROM {sql_name(t)}'))
        h.update(t.encode())
        h.update("\n".join(rows).encode())
    return h.hexdigest()[:32]


class World:
    """A theme's database for one episode (or one replay): build once, copy per episode."""

    def __init__(self, spec: ThemeSpec, db_seed: int = 0, scale: float = 1.0):
        self.spec, self.db_seed, self.scale = spec, db_seed, scale
        self.template = build_template(spec, db_seed, scale)
        self.conn: sqlite3.Connection | None = None

    def fresh(self) -> sqlite3.Connection:
        """Replace the current copy with a fresh one from the template and return it."""
        self.close()
        self.conn = open_copy(self.template)
        return self.conn

    def snapshot(self) -> bytes:
        return self._require().serialize()

    def restore(self, blob: bytes) -> None:
        self.close()
        self.conn = open_copy(blob)

    def state_hash(self, tables=None) -> str:
        return state_hash(self._require(), tables)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _require(self) -> sqlite3.Connection:
        if self.conn is None:
            self.fresh()
        return self.conn
