"""One way to name a theme in every subcommand: its short name or its env id, a did-you-mean when wrong, and
themes from `agentworld discover` usable from show, play, serve, synth and bench through `--pool DIR`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentworld_gym.envs.registry import bare_id, get_entry, gym_id

from agentworld_gym.cli import main
from agentworld_gym.errors import UnknownThemeError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def isolated_registry():
    """Themes a test loads with --pool are gone after it (the same ids from another folder would clash)."""
    import gymnasium as gym
    from agentworld_gym.envs import registry

    from agentworld_gym.discovery import load

    saved = (dict(registry._ENTRIES), dict(registry._LOADED), dict(load._ORIGIN), dict(gym.registry))
    yield
    for live, before in zip((registry._ENTRIES, registry._LOADED, load._ORIGIN, gym.registry), saved, strict=True):
        live.clear()
        live.update(before)


@pytest.fixture(scope="module")
def discovered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pool") / "mine"
    assert main(["discover", "--catalog", str(ROOT / "tests/fixtures/discovery/servers.json"), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.mark.parametrize("name", ["finance", "AgentWorld/finance-v0", "finance-v0"])
def test_every_form_of_a_name_means_the_same_theme(name):
    assert bare_id(name) == get_entry(name).id == "finance" and gym_id(name) == "AgentWorld/finance-v0"


def test_envs_that_are_not_themes_resolve_for_play_show_and_bench_and_say_why_not_for_synth(capsys):
    assert gym_id("pool") == "AgentWorld/pool-v0" and gym_id("mcp") == "AgentWorld/mcp-v0"
    with pytest.raises(UnknownThemeError, match="external environment"):
        get_entry("pool")
    assert main(["synth", "pool", "-o", "/dev/null"]) == 2 and "no world here to serve or synthesize" in capsys.readouterr().err
    assert main(["show", "pool"]) == 0 and "a pool drawing one of" in capsys.readouterr().out


def test_show_lists_an_imported_environments_tools_and_tasks(capsys):
    from agentworld_gym.mcp.tau2_domains import installed_domains

    if "mock" not in installed_domains():
        pytest.skip("tau2-mock-mcp-eval not installed (pip install 'agentworld-gym[tau2]')")
    assert main(["show", "tau2-mock"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("AgentWorld/tau2-mock-v0: external environment") and "create_task(user_id, title" in out


@pytest.mark.parametrize("argv", [["show", "financ"], ["synth", "AgentWorld/financ-v0", "-o", "/dev/null"],
                                  ["bench", "--env", "financ", "--episodes", "1"], ["serve", "financ"],
                                  ["play", "financ"], ["serve-openenv", "financ"]])
def test_a_misspelt_theme_gets_did_you_mean_in_every_subcommand(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentworld: error: Expected a registered theme") and "Did you mean 'finance'" in err


def test_bench_env_takes_the_short_name(capsys):
    assert main(["bench", "--env", "finance", "--episodes", "2", "--no-nulls", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["env"] == "AgentWorld/finance-v0"


def test_discovered_themes_work_from_every_subcommand_with_pool(discovered, tmp_path, capsys):
    theme = "local.bird-sightings"
    assert main(["show", theme, "--pool", str(discovered)]) == 0
    assert capsys.readouterr().out.startswith(f"{theme}: ")
    assert main(["--pool", str(discovered), "synth", f"AgentWorld/{theme}-v0", "-n", "2", "-o", str(tmp_path / "t.jsonl")]) == 0
    assert [json.loads(line)["theme"] for line in (tmp_path / "t.jsonl").read_text().splitlines()] == [theme, theme]
    assert main(["bench", "--env", theme, f"--pool={discovered}", "--episodes", "2", "--no-nulls", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["success_rate"] == 1.0
    run = [sys.executable, "-m", "agentworld_gym.cli"]
    played = subprocess.run([*run, "play", theme, "--pool", str(discovered), "--color", "never"], input="/quit\n",
                            capture_output=True, text=True, timeout=120)
    assert played.returncode == 0 and "Task:" in played.stdout, played.stderr
    served = subprocess.run([*run, "serve", theme], input="", capture_output=True, text=True, timeout=120,
                            env={**os.environ, "AGENTWORLD_POOL": str(discovered)})
    assert f"MCP server of theme {theme!r}" in served.stderr and served.stdout == ""
    unknown = subprocess.run([*run, "show", theme], capture_output=True, text=True, timeout=120)  # a fresh process, no --pool
    assert unknown.returncode == 2 and "--pool DIR" in unknown.stderr


def test_training_themes_take_any_form_and_the_held_out_check_sees_through_it():
    from agentworld_gym.errors import ConfigError
    from agentworld_gym.suites.core import heldout_themes
    from agentworld_gym.train.common import training_themes

    assert training_themes(["AgentWorld/finance-v0", "retail"]) == ["finance", "retail"]
    held = sorted(heldout_themes())[0]
    with pytest.raises(ConfigError, match="outside the held-out suite"):
        training_themes([f"AgentWorld/{held}-v0"])
