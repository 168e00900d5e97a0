"""Pool v2: forged tools keep what the real server does, validation can fail, worlds obey their rules."""

from __future__ import annotations

import copy
import random

import pytest
from agentworld_gym.envs import FLAGSHIPS, get_theme

from agentworld_gym import semantics
from agentworld_gym.actions import ToolCall
from agentworld_gym.discovery import compute
from agentworld_gym.discovery.forge import forge_tool
from agentworld_gym.discovery.pipeline import prepare, run_source
from agentworld_gym.discovery.sources import Source
from agentworld_gym.discovery.validate import rule_violations, validate_tool
from agentworld_gym.tools import Db, Toolset
from agentworld_gym.world import build_template, open_copy


def _server(name: str, tools: list[tuple[str, str, dict, list[str]]]) -> Source:
    """A Toucan-shaped source: (tool name, description, {param: schema}, required)."""
    return Source(name, "toucan", ("Productivity",), "", [
        {"name": n, "description": d, "parameters": {"type": "object", "properties": p, "required": r}} for n, d, p, r in tools], code="L2-35")


NOTES = _server("Note Keeper", [
    ("get_note", "Fetch one note with its body and tags.", {"note_id": {"type": "string", "description": "The note's id, e.g. NO-1001."},
                                                          "verbose": {"type": "boolean"}}, ["note_id"]),
    ("delete_note", "Permanently delete a note.", {"note_id": {"type": "string", "description": "Note to delete."}}, ["note_id"]),
    ("remove_file", "Remove a file from the workspace.", {"path": {"type": "string", "description": "Path of the file."}}, ["path"]),
    ("create_note", "Write a new note.", {"title": {"type": "string", "description": "Title."}, "meta": {"type": "object"}}, ["title"]),
    ("search_notes", "Full-text search over notes.", {"query": {"type": "string", "description": "Words to find."},
                                                       "limit": {"type": "integer"}, "offset": {"type": "integer"},
                                                       "cursor": {"type": "string"}}, ["query"]),
    ("calculate", "Evaluate a math expression.", {"expression": {"type": "string", "description": "e.g. 2+2"}}, ["expression"]),
    ("hash_text", "Hash text with md5 or sha256.", {"text": {"type": "string"}, "algorithm": {"type": "string", "enum": ["md5", "sha256"]}}, ["text"]),
])


@pytest.fixture(scope="module")
def notes():
    prep = prepare(NOTES, "note-keeper")
    return prep, {t["name"]: t for t in prep.templates}, build_template(prep.spec)


def _call(prep, t, blob, **kw):
    conn = open_copy(blob)
    db = Db(conn, prep.spec.now, prep.spec.primary_keys)
    return Toolset([forge_tool(t, prep.spec)]).call(db, ToolCall(t["name"], kw)), conn


def test_real_descriptions_are_kept_and_meaningless_parameters_dropped(notes):
    prep, t, _ = notes
    assert t["get_note"]["description"] == "Fetch one note with its body and tags."
    assert t["get_note"]["params"][0]["schema"]["description"] == "The note's id, e.g. NO-1001."
    create = t["create_note"]
    assert [p["name"] for p in create["params"]] == ["title"]
    assert [d[0] for d in create["dropped"]] == ["meta"] and [d[0] for d in t["get_note"]["dropped"]] == ["verbose"]
    search = t["search_notes"]
    assert {p["role"] for p in search["params"]} == {"query", "limit", "offset"}
    assert [d[0] for d in search["dropped"]] == ["cursor"]
    schema = forge_tool(create, prep.spec).parameters
    assert set(schema["properties"]) == {"title"}, "a dropped parameter is not shown to the agent"


def test_delete_removes_the_record_and_a_path_delete_removes_by_path(notes):
    prep, t, blob = notes
    assert t["delete_note"]["kind"] == "delete" and t["remove_file"]["kind"] == "delete"
    conn0 = open_copy(blob)
    key = conn0.execute("SELECT note_id FROM notes ORDER BY note_id LIMIT 1").fetchone()[0]
    n = conn0.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
    res, conn = _call(prep, t["delete_note"], blob, note_id=key)
    assert res.ok and conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == n - 1
    assert conn.execute("SELECT 1 FROM notes WHERE note_id = ?", (key,)).fetchone() is None
    table = t["remove_file"]["table"]
    path = conn0.execute(f'SELECT path FROM "{table}" LIMIT 1').fetchone()[0]
    res, conn = _call(prep, t["remove_file"], blob, path=path)
    assert res.ok and conn.execute(f'SELECT COUNT(*) FROM "{table}" WHERE path = ?', (path,)).fetchone()[0] == 0
    res, _ = _call(prep, t["remove_file"], blob, path="/no/such/file")
    assert not res.ok and "No " in res.content


def test_search_filters_and_pages(notes):
    prep, t, blob = notes
    s = t["search_notes"]
    col = s["columns"][0]
    conn0 = open_copy(blob)
    word = str(conn0.execute(f'SELECT "{col}" FROM notes LIMIT 1').fetchone()[0]).split()[0].lower()
    res, _ = _call(prep, s, blob, query=word, limit=100)
    assert res.ok and res.data and all(any(word in str(r[c]).lower() for c in s["columns"]) for r in res.data)
    everything, _ = _call(prep, s, blob, query="e", limit=4)
    second, _ = _call(prep, s, blob, query="e", limit=4, offset=2)
    assert [r["note_id"] for r in second.data][:2] == [r["note_id"] for r in everything.data][2:4]


def test_compute_tools_are_real_functions(notes):
    prep, t, blob = notes
    assert t["calculate"]["kind"] == "compute" and t["hash_text"]["kind"] == "compute"
    res, _ = _call(prep, t["calculate"], blob, expression="2 + 3 * 4")
    assert res.ok and res.data["result"] == 14
    res, _ = _call(prep, t["calculate"], blob, expression="__import__('os').system('true')")
    assert not res.ok, "the sandbox refuses anything but arithmetic"
    res, _ = _call(prep, t["calculate"], blob, expression="9 ** 9 ** 9")
    assert not res.ok and "too large" in res.content
    res, _ = _call(prep, t["hash_text"], blob, text="abc", algorithm="md5")
    assert res.ok and res.data["hash"] == "900150983cd24fb0d6963f7d28e17f72"


@pytest.mark.parametrize("fn", compute.FUNCTIONS, ids=lambda f: f.name)
def test_every_compute_function_answers_its_known_cases(fn):
    for inputs, expected in fn.cases:
        assert compute.matches_expected(fn.fn(**inputs), expected)


def test_compute_matching_needs_every_required_parameter():
    types = {"portfolio_id": "string"}
    assert compute.match_function("calculate_portfolio_value", {"portfolio_id": {}}, {"portfolio_id"}, types) is None
    f, mapping = compute.match_function("convert_units", {"value": {}, "from": {}, "to": {}}, {"value", "from", "to"},
                                        {"value": "number", "from": "string", "to": "string"})
    assert f.name == "convert_units" and mapping == {"value": "value", "from": "from_unit", "to": "to_unit"}


def test_validation_fails_a_tool_that_lies(notes):
    """Tests follow the spec, not the forged SQL: a delete that inserts, a search that ignores its
    text and a calculator that answers wrongly are all dropped, with the reason."""
    prep, t, blob = notes
    good = validate_tool(t["delete_note"], forge_tool(t["delete_note"], prep.spec), prep.spec, blob)
    assert good.kept and good.reason.startswith("kept")
    liar = {**copy.deepcopy(t["create_note"]), "name": "delete_note_for_real"}
    report = validate_tool(liar, forge_tool(liar, prep.spec), prep.spec, blob)
    assert not report.kept and "name says delete" in report.reason
    deaf = copy.deepcopy(t["search_notes"])
    tool = forge_tool(deaf, prep.spec)
    real_fn = tool.fn
    tool.fn = lambda db, **kw: real_fn(db, **{**kw, "query": "e"})  # ignores what it was asked for
    report = validate_tool(deaf, tool, prep.spec, blob)
    assert not report.kept and report.reason.startswith("dropped")
    wrong = copy.deepcopy(t["calculate"])
    tool = forge_tool(wrong, prep.spec)
    tool.fn = lambda db, **kw: {"result": 0}
    report = validate_tool(wrong, tool, prep.spec, blob)
    assert not report.kept and "no valid call" in report.reason


PROJECTS = _server("Project Board", [
    ("get_project", "", {"project_id": {"type": "string"}}, ["project_id"]),
    ("delete_project", "Delete a project.", {"project_id": {"type": "string"}}, ["project_id"]),
    ("list_tasks", "", {"project_id": {"type": "string"}}, ["project_id"]),
    ("update_task", "Change a task's state.", {"task_id": {"type": "string"},
                                               "status": {"type": "string", "enum": ["open", "in_progress", "completed", "cancelled"]}},
     ["task_id", "status"]),
])


def test_write_tools_enforce_the_rules_in_the_system_prompt():
    prep = prepare(PROJECTS, "project-board")
    t = {x["name"]: x for x in prep.templates}
    blob = build_template(prep.spec)
    assert any("cannot be deleted" in r for r in prep.spec.rules) and any("can no longer be changed" in r for r in prep.spec.rules)
    parent = open_copy(blob).execute("SELECT project_id FROM tasks LIMIT 1").fetchone()[0]
    res, conn = _call(prep, t["delete_project"], blob, project_id=parent)
    assert not res.ok and "remove those first" in res.content
    assert conn.execute("SELECT 1 FROM projects WHERE project_id = ?", (parent,)).fetchone(), "a refused delete removes nothing"
    done = open_copy(blob).execute("SELECT task_id FROM tasks WHERE status IN ('completed', 'cancelled') LIMIT 1").fetchone()[0]
    res, _ = _call(prep, t["update_task"], blob, task_id=done, status="open")
    assert not res.ok and "can no longer be changed" in res.content
    for name in ("delete_project", "update_task"):
        report = validate_tool(t[name], forge_tool(t[name], prep.spec), prep.spec, blob)
        assert report.kept and report.tests >= 7, "each rule is one of the generated tests"
    from agentworld_gym.discovery.pipeline import forge_theme

    assert all(r in forge_theme(prep.spec, prep.templates).system_prompt for r in prep.spec.rules)


def test_flagship_worlds_pass_their_rule_checks():
    for name in FLAGSHIPS:
        spec = get_theme(name).spec
        assert rule_violations(spec, open_copy(build_template(spec))) == [], name


def test_rule_checks_catch_a_broken_calendar():
    spec = get_theme("calendar").spec
    conn = open_copy(build_template(spec))
    ev = conn.execute("SELECT event_id, organizer_id FROM events LIMIT 1").fetchone()
    conn.execute("UPDATE events SET date = '2025-05-31' WHERE event_id = ?", (ev[0],))
    conn.execute("INSERT INTO invitations VALUES ('IN-9999', ?, ?, 'pending')", ev)
    found = rule_violations(spec, conn)
    assert any("weekend" in v for v in found) and any("organiser" in v for v in found)


def test_pool_worlds_sample_pass_rule_checks_and_differ():
    """A seeded sample of registered pool themes (the whole registry: benchmarks/bench_pool_quality.py)."""
    from agentworld_gym.envs.registry import entries

    ids = sorted(e.id for e in entries() if e.source != "flagship" and e.id not in FLAGSHIPS)
    first_rows = set()
    below = []
    for tid in random.Random(0).sample(ids, 25):
        theme = get_theme(tid)
        spec = theme.spec
        conn = open_copy(build_template(spec))
        assert rule_violations(spec, conn) == [], tid
        assert all(r in theme.system_prompt for r in spec.rules)
        if (len(spec.rules) < 2 or not any(t.mode == "write" for t in theme.toolset.tools.values())):
            below.append(tid)
        t0 = spec.tables[0]
        first_rows.add(tuple(conn.execute(f'SELECT * FROM "{t0.name}" LIMIT 1').fetchone()[1:]))
    assert len(first_rows) == 25, "every world has its own seed"
    # every pool theme (held-out suite themes included) has write tools and states >= 2 rules they enforce
    # (the whole registry, by rule kind: tests/test_pool_rules.py and benchmarks/results/pool_rules.md)
    assert not below, below


def test_dates_come_in_order_and_fks_keep_their_parent_type():
    prep = run_source(_server("Trip Planner", [
        ("get_trip", "", {"trip_id": {"type": "integer"}}, ["trip_id"]),
        ("list_bookings", "", {"trip_id": {"type": "integer"}, "start_date": {"type": "string"}, "end_date": {"type": "string"}}, ["trip_id"]),
    ]), "trip-planner")
    spec = prep.spec
    conn = open_copy(build_template(spec))
    pairs = semantics.order_pairs({"start_date": "date", "end_date": "date"})
    assert pairs == [("start_date", "end_date")] and conn.execute("SELECT COUNT(*) FROM bookings WHERE end_date < start_date").fetchone()[0] == 0
    assert semantics.violations(conn)["n_order"] == 0
    assert conn.execute("SELECT typeof(trip_id) FROM bookings LIMIT 1").fetchone()[0] == "integer"


def test_world_cache_key_carries_the_generator_version(tmp_path, monkeypatch):
    from agentworld_gym import world as world_mod

    monkeypatch.setenv("AGENTWORLD_CACHE", str(tmp_path))
    monkeypatch.setattr(world_mod, "_TEMPLATES", {})
    spec = get_theme("finance").spec
    build_template(spec, 3)
    (path,) = (tmp_path / "worlds").glob("finance-*")
    assert path.name.endswith(f"-3-1-g{world_mod.GENERATOR_VERSION}.sqlite")
    monkeypatch.setattr(world_mod, "GENERATOR_VERSION", world_mod.GENERATOR_VERSION + 1)
    build_template(spec, 3)
    assert len(list((tmp_path / "worlds").glob("finance-*"))) == 2, "a new generator never reuses an old world"


def test_a_hash_tool_named_md5_hashes_with_md5():
    prep = prepare(_server("Hash Kit", [("md5", "MD5 of a text.", {"input": {"type": "string"}}, ["input"]),
                                        ("sha1", "SHA-1 of a text.", {"input": {"type": "string"}}, ["input"])]), "hash-kit")
    t = {x["name"]: x for x in prep.templates}
    blob = build_template(prep.spec)
    res, _ = _call(prep, t["md5"], blob, input="abc")
    assert res.data["hash"] == "900150983cd24fb0d6963f7d28e17f72"
    res, _ = _call(prep, t["sha1"], blob, input="abc")
    assert res.data["hash"] == "a9993e364706816aba3e25717850c26c9cd0d89d"
    report = validate_tool(t["md5"], forge_tool(t["md5"], prep.spec), prep.spec, blob)
    assert report.kept and report.missing == 0 and report.passed == report.tests
