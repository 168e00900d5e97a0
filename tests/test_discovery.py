"""Discovery pipeline: real Toucan servers and BFCL docs end to end, validation thresholds, bad
input, resumable discover, and the registered catalog pool (a sample through check_env + oracle)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from agentworld_gym.envs import catalog, taxonomy

import agentworld_gym  # noqa: F401  (registers the pool)
from agentworld_gym import envs
from agentworld_gym.discovery import archetypes
from agentworld_gym.discovery.forge import forge_tool, phrase_ok
from agentworld_gym.discovery.formats import read_catalog
from agentworld_gym.discovery.pipeline import discover, prepare, read_record, run_source, theme_from_record
from agentworld_gym.discovery.sources import Source, read_toucan
from agentworld_gym.discovery.validate import validate_tool
from agentworld_gym.utils.check import check_env
from agentworld_gym.world import build_template

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TOUCAN = DATA / "catalogs" / "toucan_mcp_servers.jsonl"
BFCL = DATA / "bfcl" / "multi_turn_func_doc"
needs_data = pytest.mark.skipif(not TOUCAN.exists(), reason="../shared/data not present")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AGENTWORLD_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def test_taxonomy_has_20_l1_and_50_l2_and_archetypes_cover_every_l2():
    assert len(taxonomy.L1) == 20 and len(taxonomy.L2) == 50
    assert all(c.parent in taxonomy.L1 for c in taxonomy.L2.values())
    assert taxonomy.l1_of("Weather Forecasting").name == "Weather & Geospatial"
    assert set(archetypes.LIBRARY) == set(taxonomy.L2)
    for code in taxonomy.L2:
        tables = archetypes.tables_of(code)
        names = {t.name for t in tables}
        assert len(tables) >= 3 and all(t.parent is None or t.parent in names for t in tables)
        assert len(archetypes.labels_of(code)) >= 4
    with pytest.raises(agentworld_gym.errors.ConfigError):
        taxonomy.category("Not A Category")


def test_composed_variants_have_different_schemas():
    shapes = set()
    for v in range(6):
        spec = prepare(Source(f"L2-38#{v}", "catalog", code="L2-38", variant=v)).spec
        assert spec.category == "Healthcare & Life Sciences" and spec.subcategory == "Clinical Medicine & Health" and spec.label
        shapes.add(tuple((t.name, tuple(c.name for c in t.columns)) for t in spec.tables))
    assert len(shapes) == 6


@needs_data
def test_toucan_servers_end_to_end_keep_real_names_and_pass_validation():
    sources = [s for s in read_toucan(TOUCAN) if isinstance(s, Source)]
    assert len(sources) == 870 and sum(len(s.tools) for s in sources) == 6044
    sample = random.Random(3).sample(sources, 8)
    results = [run_source(s) for s in sample]
    assert sum(r.ok for r in results) >= 6
    for src, res in zip(sample, results, strict=True):
        real = {t["name"]: set((t["parameters"] or {}).get("properties") or {}) for t in src.tools}
        for t in res.templates:
            if t.get("companion"):  # composed for a server with one or two tools
                assert t["name"] not in real
                continue
            assert t["name"] in real, "forged tools keep the real tool names"
            kept, dropped = {p["name"] for p in t["params"]}, {d[0] for d in t.get("dropped", ())}
            assert kept | dropped == real[t["name"]] and not kept & dropped, "real parameters are kept or dropped with a reason"
            assert all("does not change the result" not in p["schema"]["description"] for p in t["params"])
            assert t["phrase"] == "" or phrase_ok(t["phrase"])
        for rep in res.reports:
            assert (rep.name in {t["name"] for t in res.templates}) == rep.kept
            assert rep.reason.startswith("kept" if rep.kept else "dropped")


@needs_data
def test_bfcl_multi_turn_docs_end_to_end():
    files = sorted(BFCL.glob("*.json"))
    assert len(files) >= 10
    results = []
    for path in files[:5]:
        items = list(read_catalog(path))
        src = next(i for i in items if isinstance(i, Source))
        assert src.kind == "bfcl"
        results.append((src, run_source(src)))
    ok = [(s, r) for s, r in results if r.ok]
    assert len(ok) >= 3
    for src, res in ok:
        assert {t["name"] for t in res.templates if not t.get("companion")} <= {t["name"] for t in src.tools}
        assert res.spec.category in {c.name for c in taxonomy.L1.values()}


def test_validation_drops_a_broken_tool_and_keeps_a_good_one():
    prep = prepare(Source("L2-40#0", "catalog", code="L2-40", variant=0))
    blob = build_template(prep.spec)
    good = next(t for t in prep.templates if t["kind"] == "get")
    report = validate_tool(good, forge_tool(good, prep.spec), prep.spec, blob)
    assert report.kept and report.pass_rate == 1.0 and report.valid_passed >= 1
    # an implementation bound to the wrong table, tested against the tool's spec: valid calls fail
    other = next(t.name for t in prep.spec.tables if t.name != good["table"])
    broken = {**good, "table": other}
    report = validate_tool(good, forge_tool(broken, prep.spec), prep.spec, blob)
    assert not report.kept and report.pass_rate <= 0.5 and report.valid_passed == 0


def test_bad_input_is_reported_and_discover_resumes(tmp_path):
    good = {"server_name": "Tiny Notes", "primary_label": "Memory Management", "secondary_labels": [], "description": "",
            "tools": [{"name": "get_note", "input_schema": {"type": "object", "properties": {"note_id": {"type": "string"}}, "required": ["note_id"]}},
                      {"name": "search_notes", "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}]}
    nested = {"server_name": "Nested Only", "primary_label": "Others", "secondary_labels": [], "description": "",
              "tools": [{"name": "configure", "input_schema": {"type": "object", "properties": {"options": {"type": "object"}}, "required": ["options"]}}]}
    path = tmp_path / "catalog.jsonl"
    path.write_text(json.dumps(good) + "\n{not json\n" + json.dumps(nested) + "\n")
    report = discover(read_catalog(path), tmp_path / "out", progress=False)
    assert len(report["bad_input"]) == 1 and report["themes"] == 1
    assert report["dropped"] == [{"id": "nested-only", "reason": "no forgeable tool"}]
    assert any("nested object" in k for k in report["skipped_tools"])
    record = tmp_path / "out" / "themes" / "tiny-notes.json"
    before = record.stat().st_mtime_ns
    (tmp_path / "out" / "themes" / "nested-only.json").write_text('{"id": "nested-only", "ok"')  # a torn write
    discover(read_catalog(path), tmp_path / "out", progress=False)
    assert record.stat().st_mtime_ns == before, "finished themes are not redone"
    assert read_record(tmp_path / "out" / "themes" / "nested-only.json") is not None, "a corrupt record is redone"
    theme = theme_from_record(read_record(record))
    companions = {t["name"] for t in read_record(record)["tools"] if t.get("companion")}
    assert set(theme.toolset.tools) - companions == {"get_note", "search_notes"} and len(theme.toolset.tools) >= 4
    assert not list((tmp_path / "out").rglob("*.part"))


def test_pool_index_meets_the_issue_targets():
    data = json.loads(catalog.INDEX_PATH.read_text())
    themes = data["themes"]
    assert len(themes) >= 2000 and sum(len(t[5]) for t in themes) >= 19_000
    assert {t[1] for t in themes} == set(taxonomy.L2)
    assert len({t[0] for t in themes}) == len(themes)
    assert all(t[6] > 0.5 and t[5] for t in themes)
    assert len({t[7] for t in themes}) >= 1500, "schemas genuinely differ"
    registered = set(envs.theme_ids())
    assert all(t[0] in registered for t in themes if not t[0].startswith("pool"))
    assert f"AgentWorld/{themes[0][0]}-v0" in gym.registry


def test_import_registers_the_pool_without_building_anything():
    code = ("import sys, agentworld_gym; from agentworld_gym.envs import catalog; "
            "print(len(catalog._ROWS), 'faker' in sys.modules, 'agentworld_gym.discovery' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout.split()
    assert int(out[0]) >= 2000 and out[1:] == ["False", "False"]


@pytest.mark.parametrize("pick", [0, 1, 2])
def test_sample_of_pool_themes_passes_check_env_with_the_oracle(pick):
    rows = list(catalog._ROWS.values())
    by_source = {"catalog": [r for r in rows if r[3] == "catalog"], "toucan": [r for r in rows if r[3] == "toucan"]}
    pool = by_source["toucan"] if pick == 1 else by_source["catalog"]
    row = random.Random(pick * 7919).choice(pool)
    env = gym.make(f"AgentWorld/{row[0]}-v0")
    check_env(env, seeds=(0, 1))
    theme = envs.get_theme(row[0])
    assert sorted(theme.toolset.tools) == sorted(row[5])
    assert theme.spec.label == row[2] and taxonomy.category(theme.spec.subcategory).code == row[1]


def test_forged_tools_never_fail_internally_on_schema_valid_calls():
    """Every tool of a sample of pool themes (plus the ones that once raised KeyError on an optional
    id) gets schema-valid calls with only the required and with all arguments: each answer is a
    result or a domain error, never an internal failure."""
    import numpy as np

    from agentworld_gym.env import AgentWorldEnv
    from agentworld_gym.spaces import sample_value

    rng = np.random.default_rng(0)
    from agentworld_gym.discovery.infer import slugify
    from agentworld_gym.discovery.pipeline import forge_theme
    from agentworld_gym.discovery.pool import load_facts, source_from_fact

    def registered_or_forged(theme_id):  # a read-only server left out of the pool (rules floor) is forged from its facts
        if theme_id in catalog._ROWS:
            return theme_id
        res = run_source(source_from_fact(next(f for f in load_facts() if slugify(f[0]) == theme_id)), theme_id, task_seeds=())
        return forge_theme(res.spec, res.templates)

    themes = random.Random(3).sample(sorted(catalog._ROWS), 150) + ["op-gg", "weather-forecast-server"]
    for theme_id in themes:
        env = AgentWorldEnv(registered_or_forged(theme_id), max_turns=10**6)
        env.reset(seed=0)
        for t in env.theme.toolset.tools.values():
            props, required = t.parameters.get("properties", {}), t.parameters.get("required", [])
            for only_required in (True, False):
                args = {k: sample_value(v, rng) for k, v in props.items() if k in required or not only_required}
                obs, *_ = env.step(json.dumps({"name": t.name, "arguments": args}))
                assert "failed internally" not in obs[-300:], (theme_id, t.name, args)
        env.close()


def test_cli_stats_and_show(capsys):
    from agentworld_gym.cli import main

    assert main(["stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["themes"] >= 2000 and stats["tools"] >= 19_000 and stats["categories"] == 20 and stats["subcategories"] == 50
    assert stats["flagship"] >= 1 and 0.5 < stats["tool_test_pass_rate"] <= 1.0
    theme_id = next(iter(catalog._ROWS))
    assert main(["show", theme_id]) == 0
    out = capsys.readouterr().out
    assert "Schema:" in out and "Tools (" in out and "level 1:" in out


def test_llm_wording_is_checked_before_use():
    from agentworld_gym.discovery.llm import accept, propose_wording

    prep = prepare(Source("L2-49#1", "catalog", code="L2-49", variant=1))
    t = next(x for x in prep.templates if x["kind"] == "get")
    key = t["params"][0]["name"]
    good = json.dumps({"description": "Shows everything stored about one record.", "phrase": f"pull up the record {{{key}}}"})
    assert accept(t, good) == {"description": "Shows everything stored about one record.", "phrase": f"pull up the record {{{key}}}"}
    assert accept(t, json.dumps({"description": "Shows one record.", "phrase": f"call {t['name']} on {{{key}}}"})) is None
    assert accept(t, json.dumps({"description": "Shows one record.", "phrase": "pull up {nonexistent_param}"})) is None
    assert accept(t, "not json at all") is None
    replies = iter([good] + ["{}"] * 100)
    assert propose_wording(prep.spec, [t], lambda messages: next(replies)) == 1 and t["phrase"].startswith("pull up")
    assert propose_wording(prep.spec, [t], lambda messages: (_ for _ in ()).throw(ConnectionError("down"))) == 0


def test_entity_composition_links_children_to_present_parents_and_plans_distinct_themes(tmp_path):
    """A composed catalog theme's foreign keys point at tables it holds (parents first), and the
    planner keeps every planned theme below the overlap limit against the pool and each other."""
    from agentworld_gym.discovery.entities import ENTITIES, compose_entities, features, plan_catalog
    from agentworld_gym.discovery.pool import MAX_OVERLAP, OverlapIndex, features_of

    draft = compose_entities(("pull_requests", "repositories", "code_reviews"), code="L2-17", title="Forge", about="Code hosting.",
                             theme_id="forge", label="x")
    spec = draft.to_spec()
    assert [t.name for t in spec.tables] == ["repositories", "pull_requests", "code_reviews"]
    assert [c.arg for t in spec.tables for c in t.columns if c.gen == "fk"] == ["repositories", "pull_requests"]
    assert features_of(spec) == features(("pull_requests", "repositories", "code_reviews"))
    assert "Forge (Code hosting)" in spec.description
    profiles = tmp_path / "profiles.jsonl"
    rows = [{"id": f"s{i}", "name": f"org/git-forge-{i}", "description": "Manage GitHub repositories, pull requests, commits, branches "
             "and code reviews.", "category": "Version Control"} for i in range(12)]
    rows.append({"id": "w", "name": "Weather Now", "description": "Hello there.", "category": "Weather"})  # calls for nothing
    profiles.write_text("\n".join(json.dumps(r) for r in rows))
    index = OverlapIndex({"taken": features(("repositories", "pull_requests", "commits", "branches"))})
    plan = plan_catalog(profiles, index, {"git-forge-0"})
    ids = [tid for tid, _, _ in plan]
    assert ids and "git-forge-0" not in ids and "weather-now" not in ids
    for n, (tid, src, ref) in enumerate(plan):
        feats = set(features(ref["entities"]))
        others = [features(r["entities"]) for _, _, r in plan[:n]] + [index.sets[0]]
        assert all(len(feats & set(o)) / len(feats | set(o)) < MAX_OVERLAP for o in others), tid
        assert all(k in ENTITIES for k in src.entities) and src.code


def test_composed_catalog_themes_are_distinct_and_the_frozen_suite_themes_keep_their_recipes():
    from agentworld_gym.discovery.entities import features
    from agentworld_gym.discovery.pool import FROZEN, MAX_OVERLAP, OverlapIndex, base_jobs, load_facts

    rows = json.loads(catalog.INDEX_PATH.read_text())["themes"]
    heldout = {p.stem for p in (Path(__file__).resolve().parents[1] / "agentworld_gym" / "suites" / "heldout").glob("*.jsonl")}
    assert heldout == FROZEN
    assert not [r[0] for r in rows if r[3] == "catalog" and not isinstance(r[4], dict)]  # no archetype variants are left
    by_id = {r[0]: r for r in rows}
    assert all(by_id[t][3] == "catalog" and isinstance(by_id[t][4], dict) for t in FROZEN)  # held out from the composed catalog
    # a rebuild takes the frozen themes' recipes from the committed index, not from a fresh plan
    frozen_jobs = {tid: ref for tid, _, ref in base_jobs(load_facts())[0] if tid in FROZEN}
    assert frozen_jobs == {t: by_id[t][4] for t in FROZEN}
    index = OverlapIndex()
    composed = [r for r in rows if isinstance(r[4], dict)]
    assert len(composed) >= 1000
    for r in composed:
        feats = features(r[4]["entities"])
        assert index.nearest(feats)[1] < MAX_OVERLAP, r[0]
        index.add(r[0], feats)


_OPENED: list[str] | None = None  # paths opened while a test records them (an audit hook cannot be removed)


def _record_opens(event, args):
    if _OPENED is not None and event == "open" and isinstance(args[0], str | bytes | Path):
        _OPENED.append(str(args[0]))


def test_the_catalog_plan_reads_the_shipped_profile_facts_not_the_shared_folder():
    global _OPENED
    from agentworld_gym.discovery import entities
    from agentworld_gym.discovery.pool import OverlapIndex

    assert entities.PROFILES.is_file() and "shared" not in entities.PROFILES.resolve().parts
    sys.addaudithook(_record_opens)
    _OPENED = []
    try:
        plan = entities.plan_catalog(entities.PROFILES, OverlapIndex(), set(), target=25)
        opened = list(_OPENED)
    finally:
        _OPENED = None
    assert len(plan) >= 25 and entities.PROFILES.as_posix() in {Path(p).resolve().as_posix() for p in opened}
    assert not [p for p in opened if "shared" in Path(p).resolve().parts], opened


def test_the_shipped_profile_facts_are_what_the_planner_reads_from_the_full_catalogue(shared_data, tmp_path):
    from agentworld_gym.discovery.entities import PROFILES, read_profiles, write_profile_facts

    src = shared_data / "catalogs" / "tensorblock_mcp_profiles.jsonl"
    assert read_profiles(PROFILES) == read_profiles(src)
    assert write_profile_facts(src, tmp_path / "p.jsonl.gz") == len(read_profiles(PROFILES))
    assert (tmp_path / "p.jsonl.gz").read_bytes() == PROFILES.read_bytes()  # the same catalogue gives the same bytes


def test_no_registered_theme_overlaps_its_nearest_neighbour_at_the_limit():
    """The pool floor over the whole registry (flagships, composed catalog, Toucan; held-out themes included)."""
    from agentworld_gym.discovery.pipeline import prepare
    from agentworld_gym.discovery.pool import MAX_OVERLAP, OverlapIndex, features_of, flagship_features, load_facts, recipe_source

    facts = load_facts()
    feats = flagship_features()
    feats.update({tid: features_of(prepare(recipe_source(row, facts), tid).spec) for tid, row in catalog._ROWS.items()})
    index = OverlapIndex(feats)
    over = [(tid, *index.nearest(f, skip=tid)) for tid, f in feats.items() if index.nearest(f, skip=tid)[1] >= MAX_OVERLAP]
    assert len(feats) >= 2000 and not over, over[:5]
