"""A person's request: entities named by what a person knows, and a speaker with a reason.

Synthesis first words a task by entity keys ("the appointments of patient PT-1007"); a person does not
know row ids. `resolve` finds, from tool metadata alone, how a person would point at the same record
and the reads the agent then needs to find it:

* by a lookup tool that takes a value of the record's own table and no key (`find_patient_by_email`,
  `find_project_by_name`, or a text search whose description names the searched columns, "Text to
  look for in the name or owner"): "the patient with email a@b.org", 'the habit "Morning run"';
* through the record that owns it: the owner found as above, then the list of the owner's records,
  picked by a field that tells it apart from the others listed ("my appointment on 2025-06-02").

A value that names the record must hold for that record alone in the world (checked here, recorded in
the task's `unique` feature and checked again by the quality filter). A record no tool can find by
what a person knows keeps its id, as a code the person was given. The resolving reads become the
start of the gold solution (graph and rule tasks) or of the gold program (programmatic tasks); either
is executed again by the quality filter, so the gold answer still comes from executing the gold.

`frame` then puts the goal in a speaker's mouth: who they are where that is how the record is found
("My email is ..."), why they ask (a phrasebook keyed by what the request does and what the asked-for
field is about), and the request itself.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import re
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..theme import Theme, humanize, noun_of
from . import wording as W
from .facts import Facts

# Tasks v3 is opt-in: every v3 behaviour of synthesis (person-style requests, depth floors, the stricter
# cheap-strategy checks, discovery goals) runs only when `enabled()`; off, synthesis makes exactly the
# classic tasks. Why it is not the default: docs/tasks.md ("Opt-in").
REQUESTS = ("classic", "person")
_REQUESTS: contextvars.ContextVar[str | None] = contextvars.ContextVar("agentworld_requests", default=None)


def enabled() -> bool:
    """True when tasks are synthesized as a person's requests (tasks v3): inside `with person_requests():`,
    else when the environment variable AGENTWORLD_REQUESTS is "person" (default "classic")."""
    mode = _REQUESTS.get()
    if mode is None:
        mode = os.environ.get("AGENTWORLD_REQUESTS", "classic").strip().lower() or "classic"
    if mode not in REQUESTS:
        from ..errors import ConfigError

        raise ConfigError(f"Expected AGENTWORLD_REQUESTS in {REQUESTS}, got {mode!r}. Unset it, or set it to 'person' for tasks v3.")
    return mode == "person"


@contextmanager
def settled():
    """The switch as `enabled` reads it now, held for the block: synthesis asks `enabled` many times per task, and
    reading the environment on each (about 4% of its CPU) is not needed within one task. A block already set is kept."""
    if _REQUESTS.get() is not None:
        yield
        return
    token = _REQUESTS.set("person" if enabled() else "classic")
    try:
        yield
    finally:
        _REQUESTS.reset(token)


def check_requests(requests: str | None) -> None:
    """A wording asked for by an env or a trainer: "person", "classic", or None (the process's); else a ConfigError."""
    from ..errors import check_choice

    check_choice("requests", requests, (None, *REQUESTS))


def requests_as(requests: str | None):
    """`person_requests` for "person" or "classic" (`check_requests`); None leaves the process's setting as it is."""
    return person_requests(requests == "person") if requests is not None else nullcontext()


@contextmanager
def person_requests(on: bool = True):
    """Synthesize tasks v3 (on=True) or classic tasks (on=False) inside the block, whatever the environment says."""
    token = _REQUESTS.set("person" if on else "classic")
    try:
        yield
    finally:
        _REQUESTS.reset(token)

# columns a person knows a record by, best first (a column must also identify one row to be used); a column is also
# known by its last word ('student_email', 'seed_url', 'wallet_address', 'tracking_number'): `_rank`
_KNOWN = ("email", "username", "handle", "login", "name", "full_name", "title", "subject", "headline", "domain", "host",
          "address", "code", "symbol", "cve", "isbn", "doi", "url", "path", "filename", "slug", "sku", "tag", "label",
          "number", "phone")
_PERSONAL = ("email", "username", "handle", "login", "phone")  # a column only its owner would give as "mine"
_SEARCH_PARAMS = ("query", "q", "text", "search", "keyword", "term")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# "the page with query travel": a search argument used as if it named a record (a search finds many, or none)
LOCATOR = re.compile(rf"\bwith (?:{'|'.join(_SEARCH_PARAMS)})\b", re.I)


@dataclass
class Resolution:
    """How a person points at one record, and the gold reads that find it."""

    key: str  # the entity key (column) of the record
    value: Any  # the key value the reads find
    calls: list[dict]  # the gold reads, literal arguments, in order
    source: list[str]  # the same as Python source lines of a gold program (last line sets `var`)
    var: str
    phrase: str  # third person: "the patient with email a@b.org"
    mine: str | None = None  # first person: "my appointment on 2025-06-02"
    identity: str | None = None  # what a first-person speaker says of themselves: "My email is a@b.org."
    unique: list[tuple] = field(default_factory=list)  # (table, column, value) that must identify one row


@lru_cache(maxsize=4096)
def _finders(theme: Theme) -> dict[str, list[tuple[str, str, tuple[str, ...]]]]:
    """{entity key: [(read tool, its one required parameter, the columns a value for it comes from)]}:
    tools that find a record without being given any key."""
    out: dict[str, list] = {}
    for t in theme.toolset:
        required = list(t.parameters.get("required", ()))
        if t.writes or t.consumes or len(required) != 1 or not t.produces:
            continue
        p = required[0]
        for k in t.produces:
            key = theme.key_of(k) or k
            where = theme.entity_keys.get(key)
            if where is None:
                continue
            cols = {c.name for c in theme.spec.table(where[0]).columns}
            if p in cols:  # the value itself, if it names one record; else a listing by a shared field (a
                # specialty) from which the record is picked by a column a person knows
                found = (p, *(f"{p}>{c}" for c in sorted(cols, key=_known_order) if _known(c) and c != p))
            elif p in _SEARCH_PARAMS:  # a text search: the columns its description says it looks in
                desc = t.parameters["properties"][p].get("description", "").lower() + " " + t.description.lower()
                found = tuple(c for c in sorted(cols, key=_known_order) if _known(c) and re.search(rf"\b{re.escape(humanize(c))}\b", desc))
            else:
                found = ()
            if found:
                out.setdefault(key, []).append((t.name, p, found))  # each branch gives its columns best first
            break  # a finder finds its first produced entity
    return out


def _rank(column: str) -> int:
    """The column's place in `_KNOWN`, by its name, else by its last word; len(_KNOWN) for a column people do not know
    records by."""
    kind = column if column in _KNOWN else column.rpartition("_")[2]
    return _KNOWN.index(kind) if kind in _KNOWN else len(_KNOWN)


def _known(column: str) -> bool:
    return _rank(column) < len(_KNOWN)


def _known_order(column: str) -> tuple[int, str]:
    """Best known first; ties ('email', 'student_email') by name, so the order never depends on a set's."""
    return _rank(column), column


def _pick_rank(column: str, value: Any) -> int:
    """Which field of a listed record a person tells it apart by: a name or title, a date, a word, a number."""
    if _known(column):
        return _rank(column)
    if isinstance(value, str):
        return len(_KNOWN) + (0 if _ISO_DATE.match(value) else 1)
    return len(_KNOWN) + (2 if isinstance(value, int) else 3)


@lru_cache(maxsize=4096)
def _listers(theme: Theme) -> dict[str, list[tuple[str, str, str]]]:
    """{entity key: [(read tool, its key parameter, the owner's entity key)]}: tools that list the
    records of one owner (a read whose only required parameter is the owner's key)."""
    out: dict[str, list] = {}
    for t in theme.toolset:
        required = list(t.parameters.get("required", ()))
        if t.writes or len(required) != 1 or required[0] not in t.consumes:
            continue
        owner = theme.key_of(required[0])
        for k in t.produces:
            key = theme.key_of(k) or k
            if key != owner and key in theme.entity_keys:
                out.setdefault(key, []).append((t.name, required[0], owner))
    return out


def _row(fx: Facts, key: str, value: Any) -> dict | None:
    table, col = fx.key_column(key)
    cur = fx._conn.execute(f'SELECT * FROM "{table}" WHERE "{col}" = ?', (value,))
    got = cur.fetchone()
    return dict(zip([d[0] for d in cur.description], got, strict=True)) if got else None


def _key_in(data: Any, key: str, value: Any) -> tuple[str, str] | None:
    """(how the program reads the key off `data`, the key's field) when `data` (a record, or a list of
    records) holds exactly one record with `value` for `key`."""
    items = data if isinstance(data, list) else [data]
    hits = [i for i, x in enumerate(items) if isinstance(x, dict) and _field(x, key) and x[_field(x, key)] == value]
    if len(hits) != 1:
        return None
    f = _field(items[hits[0]], key)
    return ("list" if isinstance(data, list) else "dict"), f


def _field(record: dict, key: str) -> str | None:
    if key in record:
        return key
    return next((k for k in record if k.endswith("_" + key)), None)


def _mentions(value: Any) -> str:
    """A value as the request says it: text in quotes when it is several words (a title), else as is."""
    text = W.show(value)
    return f'"{text}"' if isinstance(value, str) and " " in text and "@" not in text and not _ISO_DATE.match(text) else text


def _by(column: str, value: Any) -> str:
    """'with email a@b.org', 'named Ann Lee', 'titled "Q3 plan"', 'on 2025-06-02'."""
    if column in ("name", "full_name", "username", "handle", "login"):
        return f"named {_mentions(value)}" if column in ("name", "full_name") else f"with {W.field_name(column)} {_mentions(value)}"
    if column in ("title", "subject", "headline"):
        return f"titled {_mentions(value)}"
    if isinstance(value, str) and _ISO_DATE.match(value):
        return f"from {value}"
    return f"with {W.field_name(column)} {_mentions(value)}"


def _direct(theme: Theme, fx: Facts, run, key: str, value: Any, var: str) -> Resolution | None:
    """The record found by a finder tool given a value of its own table that only it holds."""
    row = _row(fx, key, value)
    if row is None:
        return None
    table = fx.key_column(key)[0]
    for name, param, columns in _finders(theme).get(key, ()):
        for col in columns:
            by, _, col = col.rpartition(">")  # "specialty>name": list by the specialty, pick by the name
            v = row.get(col)
            if not isinstance(v, (str, int)) or isinstance(v, bool) or (isinstance(v, str) and not v.strip()) or fx.count(table, col, v) != 1:
                continue
            arg = row.get(by) if by else v
            if arg is None or isinstance(arg, bool):
                continue
            res = run.call(name, {param: arg})
            how = _key_in(res.data, key, value) if res.ok else None
            if how is None:
                continue
            shape, f = how
            got = f"call({name!r}, {param}={arg!r})"
            if shape == "list":  # a search may list others too: the one with exactly this value
                got = f"[x for x in {got} if x.get({col!r}) == {v!r}][0]"
                if sum(1 for x in res.data if isinstance(x, dict) and x.get(col) == v) != 1:
                    continue
            noun = noun_of(key)
            personal = col in _PERSONAL
            where = f" ({W.field_name(by)} {W.show(arg)})" if by else ""
            return Resolution(key, value, [{"name": name, "arguments": {param: arg}}], [f"    {var} = {got}[{f!r}]"], var,
                              f"the {noun} {_by(col, v)}{where}", mine="me" if personal else None,
                              identity=f"My {W.field_name(col)} is {W.show(v)}." if personal else None, unique=[(table, col, v)])
    return None


def _through_owner(theme: Theme, fx: Facts, run, key: str, value: Any, var: str, hops: int = 2) -> Resolution | None:
    """The record picked, by a field no other listed record shares, from its owner's list; the owner
    found by `_direct`, else through its own owner (up to `hops` owners up: a card of an account of a customer)."""
    row = _row(fx, key, value)
    if row is None:
        return None
    for name, param, owner in _listers(theme).get(key, ()):
        table = fx.key_column(key)[0]
        owner_cols = [c.name for c in theme.spec.table(table).columns if c.gen == "fk" and theme.spec.table(c.arg).pk == owner]
        if not owner_cols or row.get(owner_cols[0]) is None:
            continue
        ovar = _var(owner, row[owner_cols[0]])
        parent = _direct(theme, fx, run, owner, row[owner_cols[0]], ovar) or (
            _through_owner(theme, fx, run, owner, row[owner_cols[0]], ovar, hops - 1) if hops > 1 else None)
        if parent is None:
            continue
        res = run.call(name, {param: row[owner_cols[0]]})
        if not res.ok or not isinstance(res.data, list) or not _key_in(res.data, key, value):
            continue
        items = [x for x in res.data if isinstance(x, dict)]
        mine = next(x for x in items if x.get(_field(x, key)) == value)
        for col in sorted(mine, key=lambda c: (_pick_rank(c, mine[c]), c)):
            v = mine[col]
            if (col.lower().endswith("id") or theme.key_of(col) or isinstance(v, bool) or not isinstance(v, (str, int, float))
                    or (isinstance(v, str) and (not v.strip() or len(v) > 40)) or sum(1 for x in items if x.get(col) == v) != 1):
                continue
            f = _field(mine, key)
            noun = noun_of(key)
            pick = f"[x for x in call({name!r}, {param}={parent.var}) if x.get({col!r}) == {v!r}][0][{f!r}]"
            by = f"on {v}" if isinstance(v, str) and _ISO_DATE.match(v) else _by(col, v)
            return Resolution(key, value, [*parent.calls, {"name": name, "arguments": {param: row[owner_cols[0]]}}],
                              [*parent.source, f"    {var} = {pick}"], var, f"the {noun} {by} of {parent.phrase}",
                              mine=f"my {noun} {by}" if parent.mine else None, identity=parent.identity, unique=parent.unique)
    return None


def resolve(theme: Theme, fx: Facts, key: str, value: Any) -> Resolution | None:
    """How a person points at the record of `key` = `value` (see the module docstring), or None."""
    cache = fx.derived.setdefault("resolve", {})
    ck = (key, value)
    if ck not in cache:
        with fx.run(memo=True) as run:
            var = _var(key, value)
            cache[ck] = _direct(theme, fx, run, key, value, var) or _through_owner(theme, fx, run, key, value, var)
    return cache[ck]


NAMEABLE_SWEEP = 500  # a key column with more values is not swept for the records a person can name


def named_values(theme: Theme, fx: Facts, key: str) -> tuple:
    """The values of entity `key` whose record a person can name (`resolve`), in the world's order, worked out once per
    world; empty where no tool finds records by what a person knows or the key column is longer than NAMEABLE_SWEEP.
    Tasks v3 builds from these records rather than dropping candidates that name the others by id (`keeps_ids`)."""
    cache = fx.derived.setdefault("named values", {})
    if key not in cache:
        where = fx.key_column(key) if _finders(theme) else None
        values = tuple(fx.values(*where)) if where else ()
        cache[key] = tuple(v for v in values if resolve(theme, fx, key, v) is not None) if len(values) <= NAMEABLE_SWEEP else ()
    return cache[key]


NAMED_POOL = (8, 0.25)  # the least records, and share of the key's records, a person can name for keys to be drawn from them only


def named_pool(theme: Theme, fx: Facts, key: str) -> tuple:
    """`named_values` when they are many enough to draw a task's records from (else empty: a few records asked about again
    and again give answers a guesser learns, and the answer prior rejects them; those keys are drawn from all records)."""
    named = named_values(theme, fx, key)
    least, share = NAMED_POOL
    return named if len(named) >= max(least, share * len(fx.values(*fx.key_column(key)))) else ()


def _var(key: str, value: Any) -> str:
    """The gold program's variable for one resolved record (the same record, the same line: shared reads appear once)."""
    return "r_" + hashlib.sha1(f"{key}={value!r}".encode()).hexdigest()[:8]


def named(text: str, noun: str, value: Any) -> re.Pattern:
    """The places `text` names a record by key ('patient PT-1007')."""
    return _named(noun, W.show(value))


@lru_cache(maxsize=4096)
def _named(noun: str, shown: str) -> re.Pattern:  # compiled once: synthesis asks it of the same records again and again
    return re.compile(rf"\b{re.escape(noun)} {re.escape(shown)}(?![\w-])")


def rephrase(text: str, res: Resolution, noun: str, speaker: bool = True) -> tuple[str, bool]:
    """`text` with the record named by what a person knows; (text, whether it speaks in the first
    person). First person only where the record is the speaker's own thing ('the phone of me' is
    never written: the possessive 'my <field>' must absorb every mention)."""
    pat = named(text, noun, res.value)
    if res.mine and speaker:  # one speaker per request: another person's records stay in the third person
        mark = "\x00"
        first = pat.sub(mark, text)
        if res.mine == "me":
            first = re.sub(rf"\bthe ((?:(?!of\b|the\b)[a-z]+ ?){{1,3}}) of {mark}", lambda m: f"my {m.group(1).strip()}", first)
        else:
            first = first.replace(mark, res.mine)
        if mark not in first:
            return first, True
    return pat.sub(lambda _m: res.phrase, text), False


ID_KEPT = 0.1  # the share of candidates whose request would still name a row id that synthesis keeps (see `keeps_ids`)

# records whose id is a code the service gives the person and people quote back (an order number, a booking
# reference, an issue or bug number, a job or CI run id): naming one by its id is what a person does
HELD_CODES = ("order", "booking", "reservation", "ticket", "invoice", "receipt", "shipment", "return", "claim", "incident",
              "issue", "pull request", "bug", "job", "run", "test case", "prescription")


def held_code(key: str) -> bool:
    """Whether the id of entity `key` ('order_id', 'finetune_job_id') is such a code (`HELD_CODES`), not an internal row id."""
    noun = noun_of(key)
    return any(noun == c or noun.endswith(" " + c) for c in HELD_CODES)


def keeps_ids(theme: Theme, text: str, given: list[tuple], rng) -> bool:
    """Whether a candidate is dropped because its request still names a row id (`given`'s key values a
    person was not given; a `held_code` is one they were given): kept with probability ID_KEPT, so tasks whose
    records people can name win, while a theme with no tool that finds records by what people know keeps all of its tasks."""
    if not _finders(theme):
        return False
    ids = [v for _n, table, column, v in given if column == theme.spec.table(table).pk and not held_code(column) and W.show(v) in text]
    return bool(ids) and rng.random() >= ID_KEPT


def personalize(theme: Theme, fx: Facts, text: str, given: list[tuple]) -> tuple[str, list[Resolution], str | None]:
    """`text` with each record stated by key (`given`: (noun, table, column, value) of the synthesis)
    named by what a person knows instead, where a tool can find it that way; (text, the resolutions
    used, the speaker's identity sentence when the request became first person, else None)."""
    found: list[Resolution] = []
    identity = None
    done = set()
    for stated, table, column, value in given:
        if column != theme.spec.table(table).pk or (column, value) in done:
            continue
        done.add((column, value))
        noun = next((n for n in (stated, noun_of(column)) if named(text, n, value).search(text)), None)
        if noun is None:
            continue
        res = resolve(theme, fx, column, value)
        if res is None:
            continue
        text, first = rephrase(text, res, noun, speaker=identity is None or res.identity == identity)
        if first and identity is None:
            identity = res.identity
        found.append(res)
    return text, found, identity


def gold_reads(found: list[Resolution]) -> list[dict]:
    """The resolving reads of `found`, in order, each once."""
    out: list[dict] = []
    for r in found:
        out += [c for c in r.calls if c not in out]
    return out


def program_lines(found: list[Resolution], lines: list[str]) -> list[str]:
    """A gold program's body with the resolving reads first and each resolved key read from them."""
    head: list[str] = []
    for r in found:
        head += [line for line in r.source if line not in head]
        lines = [line.replace(repr(r.value), r.var) for line in lines]
    return head + lines


# ------------------------------------------------------------------------------------ the speaker

# why a person asks, by what the request does and what the asked-for field is about (a phrasebook; no "this <word>":
# the wording audit reads it as a pointer to something the request never named)
_REASONS = {
    "money": ("I'm reconciling a bill and the figures have to match", "I'm going through the costs before I approve anything",
              "I want to check the amount before I pay"),
    "time": ("I'm planning my week and need to know where things stand", "I'm putting together a schedule for the team",
             "I need the timing right before I confirm anything"),
    "contact": ("I need to get in touch about it today", "I'm updating my contact sheet before I make some calls"),
    "count": ("I'm preparing a short report for my team and need the number", "I need the figure for a summary I'm writing today",
              "my manager asked me for this number before the meeting"),
    "pick": ("I have to decide which one to look at first", "I'm choosing where to focus this week and want to compare them",
             "I'm writing a recommendation and need to know which stands out"),
    "change": ("plans have changed on my side and the records need to follow", "I promised to sort it out today",
               "I'm tidying things up before the end of the week"),
    "ask": ("a colleague asked me about it and I want to give the right answer", "I'm double-checking the records before I reply to an email",
            "I'm filling in a form and need the detail"),
}
_MONEY = ("amount", "price", "cost", "fee", "balance", "budget", "salary", "revenue", "spend", "paid", "charge", "refund")
_TIME = ("date", "time", "day", "start", "end", "due", "deadline", "when")
_CONTACT = ("phone", "email", "address", "contact")
_REASON = re.compile(r"\b(?:because|since|so that|so I|as I|before|I need|I'm|I am|I have to|I want|I promised|asked me|plans have)\b", re.I)
_FIRST = re.compile(r"\b(?:I|I'm|I've|I'd|me|my|mine|we|our|us)\b")


def reason(kind: str, question: str, rng) -> str:
    """One reason from the phrasebook: by the field asked about (money, time, contact), else by `kind`."""
    words = set(re.findall(r"[a-z]+", question.lower()))
    for topic, marks in (("money", _MONEY), ("time", _TIME), ("contact", _CONTACT)):
        if kind in ("ask", "count") and words & set(marks):
            kind = topic
            break
    options = _REASONS.get(kind, _REASONS["ask"])
    return options[int(rng.integers(len(options)))]


def frame(text: str, kind: str, rng, identity: str | None = None, constraint: str = "") -> str:
    """The request in a speaker's words: a reason, who they are (when the records are found by it), the goal."""
    why = reason(kind, text, rng)
    opener = W.sentence(why[:1].upper() + why[1:])
    parts = [opener, identity or "", text, constraint]
    return " ".join(p for p in parts if p)


def first_person_with_reason(text: str) -> bool:
    """Whether a request has a speaker (I, my, we, ...) and says why (a reason marker)."""
    return bool(_FIRST.search(text)) and bool(_REASON.search(text))


def internal_ids(theme: Theme, fx: Facts, text: str) -> list[str]:
    """Row ids the request names: values of a table's key column (a code a person was given, such as a
    series code or a CVE, is another column, and the ids that are such codes, `held_code`, do not count)."""
    ids = fx.derived.get("row ids")
    if ids is None:
        ids = fx.derived["row ids"] = frozenset(W.show(v) for t in theme.spec.tables if not held_code(t.pk) for v in fx.values(t.name, t.pk))
    return sorted({w for w in re.findall(r"[\w@.+-]+", text) if w.rstrip(".") in ids for w in [w.rstrip(".")]})


def identifier_names(theme: Theme, text: str) -> list[str]:
    """Column or tool argument names the request uses as stored ('duration_min', 'user_id', 'dueDate'),
    or search arguments used as locators ('with query travel')."""
    out = [n for n, pattern in _identifiers(theme) if pattern.search(text)]
    out += [m.group(0) for m in LOCATOR.finditer(text)]
    return sorted(out)


@lru_cache(maxsize=256)
def _identifiers(theme: Theme) -> tuple[tuple[str, re.Pattern], ...]:
    """The theme's column and argument names that read as identifiers (snake_case, camelCase), each with its pattern,
    compiled once per theme rather than on every request checked."""
    names = {c.name for t in theme.spec.tables for c in t.columns} | {p for t in theme.toolset for p in t.parameters.get("properties", {})}
    return tuple((n, re.compile(rf"(?<![\w@.-]){re.escape(n)}(?![\w@-])")) for n in sorted(names) if "_" in n or re.search(r"[a-z][A-Z]", n))


__all__ = ["HELD_CODES", "Resolution", "first_person_with_reason", "frame", "gold_reads", "held_code", "identifier_names", "internal_ids", "named_pool", "named_values", "personalize", "program_lines",
           "reason", "rephrase", "resolve"]
