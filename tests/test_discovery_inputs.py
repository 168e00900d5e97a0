"""Bring-your-own-tools discovery: every accepted input shape (fixtures written for this project),
a live MCP server, a real catalog, loud errors for anything else, the run summary, and loading a
discovered folder without replacing built-in themes (including the example of docs/byo-tools.md)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from agentworld_gym.envs.registry import get_entry, register_theme

import agentworld_gym
from agentworld_gym.cli import main
from agentworld_gym.discovery.formats import SHAPES, read_input, read_mcp
from agentworld_gym.discovery.infer import slugify
from agentworld_gym.discovery.summary import tool_rows
from agentworld_gym.errors import ConfigError, InputFormatError

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "discovery"
TOUCAN = ROOT.parent / "shared" / "data" / "catalogs" / "toucan_mcp_servers.jsonl"


@pytest.fixture(autouse=True)
def isolated_registry():
    """Each test's discovered themes are gone after it (they would clash with the next test's)."""
    from agentworld_gym.envs import registry

    from agentworld_gym.discovery import load

    saved = (dict(registry._ENTRIES), dict(registry._LOADED), dict(load._ORIGIN), dict(gym.registry))
    yield
    for live, before in zip((registry._ENTRIES, registry._LOADED, load._ORIGIN, gym.registry), saved, strict=True):
        live.clear()
        live.update(before)


def raw_tools(obj) -> dict[str, dict]:
    """{tool name: {"description", "params": {param: description}}} straight from a fixture's JSON."""
    out = {}

    def walk(o):
        if isinstance(o, dict):
            f = o.get("function", o)
            schema = next((f[k] for k in ("inputSchema", "input_schema", "parameters") if isinstance(f.get(k), dict)), None)
            if isinstance(f.get("name"), str) and schema is not None:
                out[f["name"]] = {"description": f.get("description", ""),
                                  "params": {p: s.get("description") for p, s in schema.get("properties", {}).items()}}
                return
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(obj)
    return out


def load_fixture(name: str):
    text = (FIX / name).read_text(encoding="utf-8")
    return json.loads(text) if name.endswith(".json") else [json.loads(line) for line in text.splitlines() if line.strip()]


# file, detected shape, servers read, entries rejected at input, tools read
CASES = [
    ("mcp_tools_list.json", "mcp-tools-list", ["mcp tools list"], 0, 4),
    ("openai_tools.json", "openai-tools", ["openai tools"], 0, 4),
    ("anthropic_tools.json", "anthropic-tools", ["anthropic tools"], 0, 3),
    ("functions.jsonl", "functions", ["functions"], 0, 3),
    ("servers.json", "servers", ["Bird Sightings", "天气 服务"], 1, 6),
    ("toucan.jsonl", "toucan", ["Harbour Berths"], 1, 3),
    ("tensorblock.jsonl", "tensorblock", ["Tide Tables", "Chess Clubs"], 0, 0),
]


@pytest.mark.parametrize(("name", "shape", "servers", "rejected", "n_tools"), CASES)
def test_each_shape_is_detected_and_keeps_the_original_wording(name, shape, servers, rejected, n_tools):
    inp = read_input(FIX / name)
    assert inp.format == shape
    assert [s.name for s in inp.sources] == servers
    assert len(inp.bad) == rejected
    tools = [t for s in inp.sources for t in s.tools or ()]
    assert len(tools) == n_tools
    raw = raw_tools(load_fixture(name))
    for t in tools:  # names, descriptions and parameter descriptions pass through unchanged
        assert t["description"] == raw[t["name"]]["description"] != ""
        assert {p: s.get("description") for p, s in t["parameters"]["properties"].items()} == raw[t["name"]]["params"]
        assert t["parameters"]["type"] == "object"  # BFCL's "dict" is read as JSON Schema


def test_other_spellings_of_the_same_shapes(tmp_path):
    servers = load_fixture("servers.json")
    variants = {
        "servers.jsonl": ("\n".join(json.dumps(r, ensure_ascii=False) for r in servers), "servers", 2),
        "by_name.json": (json.dumps({"mcpServers": {r["name"]: {"tools": r.get("tools", {})} for r in servers}}), "servers", 2),
        "one_server.json": (json.dumps(servers[0]), "servers", 1),
        "bare_mcp.json": (json.dumps(load_fixture("mcp_tools_list.json")["result"]["tools"]), "mcp-tools-list", 1),
        "tools_map.json": (json.dumps([{"name": "Map", "tools": {"get_item": {"description": "d", "inputSchema": {"type": "object"}}}}]), "servers", 1),
    }
    for name, (text, shape, n_servers) in variants.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        inp = read_input(tmp_path / name)
        assert (inp.format, len(inp.sources)) == (shape, n_servers), name


def test_format_forces_a_shape_and_a_wrong_one_says_what_it_found():
    assert read_input(FIX / "servers.json", fmt="servers").format == "servers"
    with pytest.raises(InputFormatError, match="as 'openai-tools'"):
        read_input(FIX / "servers.json", fmt="openai-tools")
    with pytest.raises(InputFormatError, match="as 'tensorblock'.*malformed tensorblock record"):
        read_input(FIX / "toucan.jsonl", fmt="tensorblock")
    with pytest.raises(InputFormatError, match="Expected --format to be one of"):
        read_input(FIX / "servers.json", fmt="yaml")


def test_anything_else_fails_listing_the_accepted_shapes_and_what_was_found(tmp_path):
    with pytest.raises(InputFormatError) as err:
        read_input(FIX / "not_tools.json")
    message = str(err.value)
    assert "keys ['config', 'name', 'url']" in message and "0 of the first 2 hold tool specs" in message
    assert all(shape in message for shape in SHAPES)
    prose = tmp_path / "notes.txt"
    prose.write_text("tools: get_weather, search\n")
    with pytest.raises(InputFormatError, match="neither JSON nor JSON Lines"):
        read_input(prose)
    with pytest.raises(InputFormatError, match="does not exist"):
        read_input(tmp_path / "missing.json")


def test_folder_reads_each_file_and_reports_the_ones_it_cannot(tmp_path):
    for name in ("openai_tools.json", "not_tools.json"):
        (tmp_path / name).write_bytes((FIX / name).read_bytes())
    inp = read_input(tmp_path)
    assert [s.name for s in inp.sources] == ["openai tools"]
    assert len(inp.bad) == 1 and "not_tools.json" in inp.bad[0].ref


def test_cli_run_summarises_and_a_folder_loads_without_replacing_builtins(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["discover", "--catalog", str(FIX / "servers.json"), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"servers in\s+3\s+\(2 read, 1 rejected at input\)", printed)
    assert re.search(r"1\s+server lists no tools", printed) and "descriptions kept" in printed
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    s = report["summary"]
    assert report["ok"] is s["ok"] is True and s["themes_out"] == report["themes"] == 2
    assert s["tools_in"] == 6 and s["tools_kept"] + sum(s["tools_dropped"].values()) == 6
    assert {r["tool"] for r in s["tools"]} == set(raw_tools(load_fixture("servers.json")))
    assert all(r["reason"] for r in s["tools"])
    assert (out / "themes" / "天气-服务.json").exists()

    ids = agentworld_gym.load_pool(out)
    assert ids == ["AgentWorld/local.bird-sightings-v0", "AgentWorld/local.天气-服务-v0"]
    assert agentworld_gym.load_pool(out) == ids  # loading again is a no-op
    env = gym.make(ids[1])
    _, info = env.reset(seed=0)
    assert info["theme"] == "local.天气-服务"
    kept = {r["tool"] for r in s["tools"] if r["kept"] and r["theme"] == "天气-服务"}
    assert kept and kept <= {t.name for t in env.unwrapped.theme.toolset}
    env.close()
    # loaded themes stay out of the built-in pools unless named
    from agentworld_gym.envs.pool import PoolEnv

    assert not any(t.startswith("local.") for t in PoolEnv().theme_ids)
    assert PoolEnv(themes=["local.bird-sightings", "finance"]).theme_ids == ["local.bird-sightings", "finance"]
    # the same ids from another folder clash, loudly; another prefix loads them
    other = tmp_path / "other"
    (other / "themes").mkdir(parents=True)
    for p in (out / "themes").iterdir():
        (other / "themes" / p.name).write_bytes(p.read_bytes())
    with pytest.raises(ConfigError, match="already taken"):
        agentworld_gym.load_pool(other)
    assert agentworld_gym.load_pool(other, prefix="other.")[0] == "AgentWorld/other.bird-sightings-v0"


def test_a_discovered_id_never_replaces_a_builtin_theme(tmp_path):
    record = {"id": "finance", "source": "tools", "ok": True, "reason": "", "spec": {"category": "x", "subcategory": "y"}, "tools": []}
    (tmp_path / "themes").mkdir()
    (tmp_path / "themes" / "finance.json").write_text(json.dumps(record))
    builtin = get_entry("finance")
    with pytest.raises(ConfigError, match="'finance'.*built-in flagship"):
        agentworld_gym.load_pool(tmp_path, prefix="")
    with pytest.raises(ConfigError, match="not registered yet, got 'finance'"):
        register_theme(builtin, gym_register=False)
    assert get_entry("finance") is builtin
    assert agentworld_gym.load_pool(tmp_path) == ["AgentWorld/local.finance-v0"]  # the prefix keeps both


def test_a_run_that_keeps_nothing_fails(tmp_path, capsys):
    nested = [{"name": "Only Nested", "tools": [{"name": "configure", "description": "Apply settings.",
                                                 "inputSchema": {"type": "object", "properties": {"options": {"type": "object"}}, "required": ["options"]}}]}]
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(nested))
    assert main(["discover", "--catalog", str(path), "--out", str(tmp_path / "out")]) == 1
    printed = capsys.readouterr()
    assert "FAILED: no theme kept" in printed.out
    assert "discover: 100%" in printed.err  # the progress bar
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["ok"] is False and report["summary"]["tools_dropped"]
    with pytest.raises(ConfigError, match="none kept"):
        agentworld_gym.load_pool(tmp_path / "out")
    assert main(["discover", "--catalog", str(FIX / "not_tools.json"), "--out", str(tmp_path / "x")]) == 2
    assert "Accepted shapes" in capsys.readouterr().err


def test_summary_counts_a_description_only_when_the_kept_tool_carries_it():
    src = read_input(FIX / "anthropic_tools.json").sources[0]
    tool = src.tools[0]
    params = list(tool["parameters"]["properties"].values())
    carried = {"name": tool["name"], "description": tool["description"], "params": [{"schema": p} for p in params]}
    generated = {"name": tool["name"], "description": "Get the full record of one plant by its id."}
    for template, expected, n_params in ((carried, True, 1), (generated, False, 0)):
        rec = {"id": "anthropic-tools", "ok": True, "reason": "", "tools": [template], "skipped": [],
               "validation": {"tools": [{"name": tool["name"], "tests": 4, "passed": 4}]}}
        row = tool_rows(src, rec)[0]
        assert row["kept"] and row["description_kept"] is expected and row["param_descriptions_kept"] == [n_params, 1]
        assert row["reason"] == "validation passed 4/4"
    dropped = tool_rows(src, {"id": "a", "ok": True, "reason": "", "tools": [], "validation": {"tools": []},
                              "skipped": [{"source": "a", "tool": tool["name"], "reason": "a delete that removed nothing"}]})[0]
    assert not dropped["kept"] and dropped["reason"] == "a delete that removed nothing"


def test_slugs_keep_names_in_other_scripts_readable():
    assert slugify("天气 服务") == "天气-服务"
    assert slugify("Погода API") == "погода-api"
    assert slugify("データ検索") == "データ検索"  # no combining marks dropped from kana
    assert slugify("Café Déjà-vu v2") == "cafe-deja-vu-w2"
    assert slugify("Exa Search") == "exa-search"
    assert gym.envs.registration.ENV_ID_RE.fullmatch("AgentWorld/local.データ検索-v0")


def test_a_live_mcp_server_is_read_and_discovered(tmp_path, capsys):
    pytest.importorskip("mcp")
    server = FIX / "notes_mcp_server.py"
    inp = read_mcp([sys.executable, str(server)])
    assert inp.format == "mcp-command" and inp.sources[0].name == "notes mcp server"
    tools = {t["name"]: t for t in inp.sources[0].tools}
    assert set(tools) == {"create_note", "get_note", "search_notes", "delete_note"}
    assert tools["get_note"]["description"] == "Read one note by id."
    assert tools["get_note"]["parameters"]["properties"]["note_id"]["description"] == "Id of the note, as create_note returned it."
    out = tmp_path / "out"
    code = main(["discover", "--mcp", shlex.join([sys.executable, str(server)]), "--name", "Notebook", "--out", str(out), "--quiet"])
    summary = json.loads((out / "report.json").read_text())["summary"]
    assert summary["inputs"][0]["format"] == "mcp-command" and summary["tools_in"] == 4
    assert code == (0 if summary["ok"] else 1) and (out / "themes" / "notebook.json").exists()


@pytest.mark.skipif(not TOUCAN.exists(), reason="../shared/data not present")
def test_real_toucan_catalog_reads_every_server_and_keeps_its_wording(tmp_path):
    inp = read_input(TOUCAN)
    assert inp.format == "toucan"
    assert len(inp.sources) == 870 and sum(len(s.tools) for s in inp.sources) == 6044
    assert {b.reason for b in inp.bad} == {"server lists no tools"} and len(inp.sources) + len(inp.bad) == 2120
    first = json.loads(TOUCAN.read_text(encoding="utf-8").splitlines()[0])
    assert [t["description"] for t in inp.sources[0].tools] == [t["description"] for t in first["tools"]]
    assert main(["discover", "--catalog", str(TOUCAN), "--limit", "3", "--out", str(tmp_path / "out"), "--quiet"]) == 0
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert summary["servers_read"] == 3 and summary["servers_in"] < 2120 and summary["themes_out"] >= 1


def test_readme_example_runs(tmp_path, monkeypatch, capsys):
    section = (ROOT / "docs" / "byo-tools.md").read_text(encoding="utf-8")  # the page the README sends readers to
    command = re.search(r"```bash\n(agentworld discover .*?)\n```", section).group(1)
    code = re.search(r"```py\n(.*?)```", section, flags=re.S).group(1)
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    monkeypatch.chdir(tmp_path)
    assert main([*shlex.split(command)[1:], "--quiet"]) == 0
    capsys.readouterr()
    exec(compile(code, "docs/byo-tools.md", "exec"), {"__name__": "readme"})
    theme, tools = capsys.readouterr().out.split(" ", 1)
    assert theme == "local.天气-服务" and "get_station" in tools
