"""Worlds v3: semantic column types, values a real service would hold, and constraints across columns
and tables that the generator keeps and a general checker finds (agentworld_gym.semantics)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from agentworld_gym.envs import FLAGSHIPS, get_theme

from agentworld_gym import semantics
from agentworld_gym.world import Column, Table, ThemeSpec, build_database, date_col, fk_col, id_col, int_col, money_col

FIXTURES = Path(__file__).parent / "fixtures"


# ------------------------------------------------------------------------------ order pairs, by a general rule


@pytest.mark.parametrize("start,end,kind", [
    ("boarding_from", "boarding_to", "date"),        # names no list holds
    ("shift_began", "shift_finished", "date"),
    ("checkInDate", "checkOutDate", "date"),          # camelCase
    ("valid_since", "valid_through", "date"),
    ("lease_start_on", "lease_end_on", "date"),
    ("kickoff_opened", "kickoff_closed", "date"),
    ("temp_lo", "temp_hi", "number"),
    ("first_row", "last_row", "number"),
    ("slice_start_index", "slice_end_index", "number"),
    ("price_floor_min", "price_floor_max", "number"),
    ("departs_local", "arrives_local", "time"),
    ("embark_on", "disembark_on", "date"),          # a word and its undoing
    ("mounted_at", "unmounted_at", "date"),
])
def test_order_pairs_found_for_made_up_names(start, end, kind):
    cols = {start: kind, end: kind, "unrelated_note": None, "weight": "number"}
    assert semantics.order_pairs(cols) == [(start, end)]


@pytest.mark.parametrize("a,b,kind", [
    ("from_amount", "to_amount", "number"),  # a conversion's two amounts are not a range
    ("open", "close", "number"),              # a day's open and close prices
    ("tokens_in", "tokens_out", "number"),
])
def test_two_quantities_are_not_a_range(a, b, kind):
    assert semantics.order_pairs({a: kind, b: kind}) == []


def test_pairs_need_the_same_kind_of_value():
    assert semantics.order_pairs({"start_date": "date", "end_index": "number"}) == []


# ------------------------------------------------------------------------------ the checker on hand-made worlds


def _db(sql: str) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(sql)
    return conn


_BROKEN = """
CREATE TABLE voyages (voyage_id TEXT PRIMARY KEY, embark_on TEXT, disembark_on TEXT, registered_at TEXT, cabin_count INTEGER);
CREATE TABLE cabins (cabin_id TEXT PRIMARY KEY, voyage_id TEXT REFERENCES voyages(voyage_id), registered_at TEXT);
CREATE TABLE shipments (shipment_id TEXT PRIMARY KEY, status TEXT, shipped_at TEXT, refund_amount REAL, total REAL);
CREATE TABLE shipment_lines (line_id TEXT PRIMARY KEY, shipment_id TEXT REFERENCES shipments(shipment_id), amount REAL);
INSERT INTO voyages VALUES ('V-1', '2025-03-10', '2025-03-01', '2025-01-05', 3);
INSERT INTO cabins VALUES ('C-1', 'V-1', '2024-12-01'), ('C-2', 'V-1', '2025-02-01');
INSERT INTO shipments VALUES ('S-1', 'shipped', NULL, 0, 30.0), ('S-2', 'refunded', '2025-01-02', 0, 5.0), ('S-3', 'pending', '2025-01-03', 0, 0);
INSERT INTO shipment_lines VALUES ('L-1', 'S-1', 10.0), ('L-2', 'S-1', 15.0), ('L-3', 'S-2', 5.0);
"""


def test_checker_finds_every_kind_of_violation():
    v = semantics.violations(_db(_BROKEN))
    assert v["n_order"] == 1 and "embark_on>disembark_on" in v["order"][0]
    assert v["n_lineage"] == 1 and "C-1" in v["lineage"][0]
    # shipped without a ship date, refunded without a refund, pending with a ship date
    assert v["n_status"] == 3, v["status"]
    assert v["n_totals"] == 1 and "S-1" in v["totals"][0]
    assert v["n_counts"] == 1 and "cabin_count" in v["counts"][0]


def test_checker_passes_a_consistent_world():
    fixed = (_BROKEN.replace("'2025-03-10', '2025-03-01'", "'2025-03-01', '2025-03-10'").replace("'2024-12-01'", "'2025-01-06'")
             .replace("'shipped', NULL", "'shipped', '2025-01-01'").replace("'refunded', '2025-01-02', 0", "'refunded', '2025-01-02', 5.0")
             .replace("'pending', '2025-01-03'", "'pending', NULL").replace("30.0", "25.0").replace(", 3);", ", 2);"))
    v = semantics.violations(_db(fixed))
    assert all(v["n_" + k] == 0 for k in semantics.CHECKS), v


# ------------------------------------------------------------------------------ the generator keeps them


def _made_up_spec(source: str = "catalog") -> ThemeSpec:
    return ThemeSpec(
        id="voyage-desk", title="Voyage Desk", category="Travel", subcategory="Trips", label="cruise bookings", source=source,
        description="You help passengers of a cruise line with voyages, cabins and their orders.",
        tables=(
            Table("voyages", (id_col("voyage_id", "VO-"), date_col("embark_on"), date_col("disembark_on"), date_col("registered_at"),
                              int_col("cabin_count", 0, 40), Column("departure_airport", "faker", "word"),
                              Column("query", "faker", "word"), Column("notes", "faker", "sentence")), rows=30),
            Table("cabins", (id_col("cabin_id", "CA-"), fk_col("voyage_id", "voyages"), date_col("registered_at"), int_col("first_row", 1, 90),
                             int_col("last_row", 1, 90), Column("guest_email", "faker", "word"), Column("title", "faker", "catch_phrase")), rows=60),
            Table("orders", (id_col("order_id", "OR-"), fk_col("cabin_id", "cabins"), date_col("placed_at"), date_col("shipped_at"),
                             Column("status", "choice", ("placed", "shipped", "delivered", "refunded")), money_col("refund_amount", 1, 90),
                             money_col("total", 1, 900), date_col("refunded_on")), rows=80),
            Table("order_lines", (id_col("line_id", "LI-"), fk_col("order_id", "orders"), money_col("amount", 1, 200)), rows=200),
        ))


def test_generated_worlds_keep_every_constraint():
    v = semantics.violations(build_database(_made_up_spec()))
    assert all(v["n_" + k] == 0 for k in semantics.CHECKS), {k: v[k][:3] for k in semantics.CHECKS}


def test_independent_draws_would_break_them():
    # the same spec's columns drawn independently (what the generator did before): the check can fail
    import numpy as np
    from faker import Faker

    from agentworld_gym.world import _column_values, _create_schema

    spec = _made_up_spec()
    fake, rng, keys = Faker(), np.random.default_rng(0), {}
    fake.seed_instance(0)
    conn = sqlite3.connect(":memory:")
    _create_schema(conn, spec)
    for t in spec.tables:
        cols = {c.name: _column_values(c, t.rows, fake, rng, keys, spec) for c in t.columns}
        keys[t.name] = cols[t.pk]
        conn.executemany(f'INSERT INTO "{t.name}" VALUES ({",".join("?" * len(cols))})', list(zip(*cols.values(), strict=True)))
    v = semantics.violations(conn)
    assert all(v["n_" + k] > 0 for k in semantics.CHECKS), {k: v["n_" + k] for k in semantics.CHECKS}


def test_typed_columns_hold_plausible_values_and_no_filler():
    spec = _made_up_spec()
    conn = build_database(spec)
    report = semantics.type_report(spec, conn)
    assert {"airport", "search", "text", "email", "title"} <= set(report)
    assert all(r["implausible"] == 0 for r in report.values()), report
    assert {a for (a,) in conn.execute("SELECT departure_airport FROM voyages")} <= semantics.AIRPORT_CODES
    cells, lorem, examples = semantics.lorem_report(spec, conn)
    assert cells > 100 and lorem == 0, examples


def test_filler_detector_flags_lorem_and_spares_the_themes_words():
    vocab = semantics.theme_vocabulary(_made_up_spec())
    assert semantics.is_lorem("skill", vocab) and semantics.is_lorem("Notice soon as brother.", vocab)
    assert not semantics.is_lorem("Notes on the cabin for Ana Diaz.", vocab)
    assert not semantics.is_lorem("0x3bad9f00d", vocab)
    assert semantics.is_lorem("Streamlined homogeneous toolset", vocab) and semantics.is_lorem("enterprise whiteboard", vocab)
    assert not semantics.is_lorem("Last Night", vocab) and not semantics.is_lorem("TOWN", vocab)  # a name, a ticker


@pytest.mark.parametrize("theme_id", sorted(FLAGSHIPS))
def test_flagship_worlds_pass_the_same_checks(theme_id):
    spec = get_theme(theme_id).spec
    conn = build_database(spec)
    v = semantics.violations(conn)
    assert all(v["n_" + k] == 0 for k in semantics.CHECKS), {k: v[k][:3] for k in semantics.CHECKS}
    cells, lorem, examples = semantics.lorem_report(spec, conn)
    assert lorem <= 0.02 * cells, examples


# ------------------------------------------------------------------------------ bring your own tools: the pet clinic


def test_pet_clinic_tools_get_the_world_their_descriptions_describe():
    from agentworld_gym.discovery.formats import read_input
    from agentworld_gym.discovery.pipeline import run_source

    res = run_source(read_input(FIXTURES / "pet_clinic_tools.json").sources[0])
    spec = res.spec
    assert res.ok, res.reason
    assert spec.category == "Healthcare & Life Sciences", spec.category  # from the tools' own words
    assert {t.name for t in spec.tables} == {"owners", "pets", "appointments", "reminders"}  # no invented `emails`
    pets = {c.name: c for c in spec.table("pets").columns}
    assert pets["owner_id"].gen == "fk" and pets["birth_date"].gen == "date" and pets["weight"].type == "float"
    assert spec.extra["examples"]["pets.species"] == ["dog", "cat"]  # the parameter's own examples
    assert {"email", "phone_number", "address"} <= {c.name for c in spec.table("owners").columns}
    assert spec.extra.get("missing_fields", []) == []
    conn = build_database(spec)
    assert {s for (s,) in conn.execute("SELECT species FROM pets")} == {"dog", "cat"}
    name, born, weight = conn.execute("SELECT name, birth_date, weight FROM pets LIMIT 1").fetchone()
    assert name.isalpha() and name[0].isupper() and born < "2025" and 0 < weight < 100
    email, phone = conn.execute("SELECT email, phone_number FROM owners LIMIT 1").fetchone()
    assert semantics.plausible("email", email) and semantics.plausible("phone", phone)


def test_a_spec_describing_fields_no_column_can_hold_is_not_ok():
    from agentworld_gym.discovery.pipeline import run_source
    from agentworld_gym.discovery.sources import Source

    tools = [{"name": "get_spell", "description": "Get a spell's incantation, glyphs, aura, resonance and mana.",
              "parameters": {"type": "object", "properties": {"spell_id": {"type": "string"}}, "required": ["spell_id"]}},
             {"name": "list_spells", "description": "List spells.", "parameters": {"type": "object", "properties": {}}}]
    res = run_source(Source("Spell Book", "tools", (), "", tools))
    missing = {f for _, f in res.spec.extra["missing_fields"]}
    assert {"incantation", "glyph", "aura", "resonance", "mana"} <= missing
    assert not res.ok and "described fields found no column" in res.reason


# ------------------------------------------------------------------------------ names match content (issue 34 item 3)


def _tool(name, description, **params):
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": {p: {"type": t} for p, t in params.items()}, "required": list(params)}}


def test_tables_are_named_after_the_entity_the_tools_descriptions_name():
    from agentworld_gym.discovery.infer import infer_from_tools

    tools = [_tool("browser_click", "Click an element on the page", selector="string"),
             _tool("navigate", "Navigate to a URL", url="string"),
             _tool("sub", "Subtract two numbers", a="number", b="number"),
             _tool("get_docs", "Read the documents of a project", doc_id="string"),
             _tool("get_pr", "Get a pull request of a repository", pr_id="string"),
             _tool("gdb_set_breakpoint", "", line="integer")]  # nothing describes it: the tool's own word stays
    draft, _, _ = infer_from_tools("Browser Kit", tools, code="L2-01", theme_id="browser-kit", label="browser", source="tools")
    names = {t.name for t in draft.tables}
    assert {"elements", "urls", "numbers", "documents", "pull_requests", "breakpoints"} <= names, names
    assert not names & {"clicks", "navigates", "subs", "docs", "prs"}, names


def test_plural_keeps_words_that_have_no_other_plural():
    from agentworld_gym.discovery.infer import plural, singular

    assert [plural(w) for w in ("news", "metadata", "redis", "radius", "flight", "category")] == ["news", "metadata", "redis", "radius", "flights", "categories"]
    assert singular("movies") == "movie" and singular("categories") == "category"


def test_catalog_compositions_hold_only_called_for_entities():
    from agentworld_gym.discovery.entities import ENTITIES, _candidates, entities_for

    matched = [k for _, k in entities_for("Review pull requests and code reviews, and comment on issues.", "review-bot")]
    combos = _candidates(matched)
    assert combos and all(set(c) <= set(matched) for c in combos)
    assert "repositories" not in matched and all("repositories" not in c for c in combos)  # the parent nobody asked for stays out
    assert all(len({ENTITIES[k].table for k in c}) == len(c) for c in combos)


def test_filler_rule_reads_names_with_digits_and_title_case_with_small_words():
    vocab = frozenset()
    assert not semantics.is_lorem("k8s-worker", vocab) and not semantics.is_lorem("support smiles2svg", vocab)
    assert not semantics.is_lorem("A Study of Dark Matter", vocab)
    assert semantics.is_lorem("sm-store", vocab) and semantics.is_lorem("Store 2", vocab)  # one filler word stays filler


def test_acronym_tables_keep_their_word_in_the_world_vocabulary():
    spec = ThemeSpec("acr", "Acronyms", "c", "s", "l", "d", [Table("sms_messages", [id_col("sms_id", "SM")], 5),
                                                              Table("dns_records", [id_col("dns_record_id", "DN")], 5)])
    words = semantics.domain_words(spec)
    assert {"sms", "dns"} <= set(words) and not {"sm", "dn"} & set(words)


def test_toucan_themes_whose_tools_say_nothing_readable_are_not_kept():
    """A theme whose tools carry no readable description has nothing its names can be checked against
    (issue 34): the pool builder does not keep it, and the committed index holds none."""
    import json

    from agentworld_gym.discovery.pool import DATA, INDEX, described, load_facts, readable, recipe_source

    assert readable("Get QR code for pairing WhatsApp API.") and readable("Le contenu de la pensée à analyser")
    assert not readable("") and not readable("获取当前时间") and not readable("通过关键字搜索GitHub仓库的代码和说明文档")
    assert not readable("Search")  # one word says too little
    tools = [{"name": "a", "description": "获取日常待办事项"}, {"name": "b", "description": "List the open to-do items of a day."}]
    assert described(tools) and described(tools, {"b"}) and not described(tools, {"a"})
    facts = load_facts()
    rows = [r for r in json.loads((DATA / INDEX).read_text())["themes"] if r[3] == "toucan"]
    assert rows and all(described(recipe_source(r, facts).tools, set(r[5])) for r in rows)


def test_the_pool_builder_drops_a_server_whose_tools_say_nothing_readable(tmp_path):
    """server-time's tools are described in Chinese only: a build does not keep it, and
    drop_undescribed takes it out of a built index while a described Toucan theme stays."""
    import json

    from agentworld_gym.envs import catalog

    from agentworld_gym.discovery.infer import slugify
    from agentworld_gym.discovery.pool import DATA, FACTS, INDEX, UNDESCRIBED, drop_undescribed, load_facts, run_jobs, source_from_fact

    facts = load_facts()
    i = next(i for i, f in enumerate(facts) if slugify(f[0]) == "server-time")
    done: dict = {}
    run_jobs([("server-time", source_from_fact(facts[i]), str(i))], tmp_path / "journal.jsonl", done, "test", progress=False)
    assert not done["server-time"]["ok"] and done["server-time"]["reason"] == UNDESCRIBED
    kept = next(r for r in catalog._ROWS.values() if r[3] == "toucan")
    silent = ["server-time", kept[1], "time", "toucan", str(i), [t[0] for t in facts[i][2]], 1.0, "x"]
    (tmp_path / FACTS).symlink_to(DATA / FACTS)
    (tmp_path / INDEX).write_text(json.dumps({"version": 1, "stats": {}, "themes": [list(kept), silent]}))
    assert drop_undescribed(tmp_path) == ["server-time"]
    data = json.loads((tmp_path / INDEX).read_text())
    assert [r[0] for r in data["themes"]] == [kept[0]] and data["stats"]["undescribed"] == ["server-time"]
