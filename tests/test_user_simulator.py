"""The user simulator: tau2 scenarios and project tasks held by a user who tells facts only when asked,
the scripted user's protocol (stop / transfer / out of scope), policy users, and the single-agent env's
conversation mode."""

from __future__ import annotations

import json
import re

import pytest
from openai_standin import StandInServer

from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.errors import ConfigError
from agentworld_gym.policies import OraclePolicy, run_episode
from agentworld_gym.policies.null import DoNothingPolicy
from agentworld_gym.suites.tau2 import get_domain, installed_domains
from agentworld_gym.user_simulator import (
    OUT_OF_SCOPE,
    STOP,
    TRANSFER,
    ConversationOracle,
    PolicyUser,
    ScriptedUser,
    end_reason,
    first_person,
    make_user,
    scenario_from_instruction,
    scenario_from_tau2,
)

USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{3,5}\b")


def tau2_scenarios(domain: str) -> list[dict]:
    return [t["user_scenario"] for t in json.loads((get_domain(domain).data_dir() / "tasks.json").read_text())]


def say(user, scenario, *agent_lines: str) -> str:
    """The user's reply after the opening and the agent's lines (the user's own replies in between)."""
    dialogue = [{"role": "user", "content": user.reply(scenario, [])}]
    for line in agent_lines:
        dialogue.append({"role": "assistant", "content": line})
        dialogue.append({"role": "user", "content": user.reply(scenario, dialogue)})
    return dialogue[-1]["content"]


def test_first_person():
    assert first_person("You are Emma Kim.\nYour user id is emma_kim_9957.") == "I am Emma Kim.\nMy user id is emma_kim_9957."
    assert first_person("You need to bring them with you, and you want a refund.") == "I need to bring them with me, and I want a refund."


@pytest.mark.skipif(not {"airline", "retail"} <= set(installed_domains()), reason="tau2 packages not installed")
@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_every_tau2_user_keeps_its_ids_until_asked(domain):
    user = ScriptedUser()
    checked = 0
    for raw in tau2_scenarios(domain):
        ins = raw["instructions"]
        scenario = scenario_from_tau2(raw)
        ids = set(USER_ID.findall(ins.get("known_info") or "")) - set(USER_ID.findall(ins["reason_for_call"]))
        opening = user.reply(scenario, [])
        assert opening and not any(i in opening for i in ids), "the opening leaks a private user id"
        if ids:
            reply = say(user, scenario, "Could you give me your user id?")
            assert all(i in reply for i in ids), (reply, ids)
            checked += 1
    assert checked >= 10  # the domains' users who know their user id


@pytest.mark.skipif("retail" not in installed_domains(), reason="tau2 packages not installed")
def test_scripted_user_protocol_on_a_retail_scenario():
    raw = next(s for s in tau2_scenarios("retail") if "zip" in (s["instructions"]["known_info"] or "")
               and "email" in (s["instructions"]["unknown_info"] or ""))
    scenario, user = scenario_from_tau2(raw), ScriptedUser()
    zip_code = re.search(r"\b\d{5}\b", raw["instructions"]["known_info"]).group(0)
    assert zip_code not in user.reply(scenario, [])
    assert zip_code in say(user, scenario, "Please tell me your name and zip code.")
    assert "not remember my email" in say(user, scenario, "What is your email address?")
    assert say(user, scenario, "Shall I proceed with the exchange?") == "Yes, please go ahead."
    listed = say(user, scenario, "What colour do you like?")
    assert listed.startswith("I can tell you my") and zip_code not in listed
    assert end_reason(say(user, scenario, "I will transfer you to a human agent now.")) == "transfer"
    assert end_reason(say(user, scenario, "Your exchange is done.")) == "user_stop"
    assert end_reason(f"nothing more to say {OUT_OF_SCOPE}") == "out_of_scope" and end_reason("no token") is None
    assert say(user, scenario, "Let me transfer you to a human.") == TRANSFER


def test_project_task_facts_are_masked_and_told_on_request():
    text = "Find the customer whose email is a.b@example.com and move 25 from account AC-1001 to account AC-1002 on 2025-06-03."
    scenario, user = scenario_from_instruction(text), ScriptedUser()
    assert [f.label for f in scenario.facts] == ["email", "account", "account 2", "date"]
    opening = user.reply(scenario, [])
    assert not any(v in opening for v in ("a.b@example.com", "AC-1001", "AC-1002", "2025-06-03")) and "[email: ask me]" in opening
    assert say(user, scenario, "What is the e-mail?") == "The email is a.b@example.com."
    assert "AC-1002" in say(user, scenario, "Which account 2?")


def test_single_agent_env_conversation_on_a_theme():
    env = AgentWorldEnv("finance", difficulty=2, user="scripted", max_turns=20)
    wins = {"conversation oracle": 0, "oracle without asking": 0, "do-nothing": 0}
    for seed in range(6):
        obs, info = env.reset(seed=seed)
        facts = env.scenario.facts
        values = [f.text.split(" is ", 1)[1].rstrip(".") for f in facts]
        assert info["user"] == "scripted" and not any(v in info["messages"][1]["content"] for v in values)
        r = run_episode(env, ConversationOracle(env), seed=seed)
        wins["conversation oracle"] += r["success"]
        told = " ".join(m["content"] for m in r["info"]["messages"] if m["role"] == "user")
        assert all(v in told for v in values)  # every fact came from the user, on request
        wins["oracle without asking"] += run_episode(env, OraclePolicy(env), seed=seed)["success"]
        wins["do-nothing"] += run_episode(env, DoNothingPolicy(), seed=seed)["success"]
    env.close()
    assert wins == {"conversation oracle": 6, "oracle without asking": 6, "do-nothing": 0}


def test_agent_text_goes_to_the_user_and_the_user_can_end_it():
    env = AgentWorldEnv("finance", user="scripted")
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("What can you tell me?")
    assert not terminated and info["messages"][-1]["role"] == "user" and info["messages"][-1]["content"].startswith("I can tell you my")
    obs, reward, terminated, truncated, info = env.step("   ")  # an empty message is the agent's error, not the user's turn
    assert not terminated and info["messages"][-1]["role"] == "tool" and info["messages"][-1]["content"].startswith("Error")
    obs, reward, terminated, truncated, info = env.step("I have finished.")
    assert terminated and info["ended_by"] == "user_stop" and reward == 0.0 and STOP in info["messages"][-1]["content"]
    env.close()


def test_policy_user_over_an_openai_endpoint():
    with StandInServer() as server:
        server.answer = lambda messages: "My user id is sam_9. " if "user id" in messages[-1]["content"] else "I want a refund."
        user = make_user(f"openai:standin@{server.url}")
        scenario = scenario_from_tau2({"instructions": {"reason_for_call": "You want a refund.", "known_info": "Your user id is sam_9."}})
        assert isinstance(user, PolicyUser) and user.name.startswith("openai:")
        assert say(user, scenario) == "I want a refund."
        assert say(user, scenario, "What is your user id?") == "My user id is sam_9."
        sent = server.requests[-1]["messages"]
        assert "sam_9" in sent[0]["content"] and STOP in sent[0]["content"]  # the scenario and the rules, to the user model only
        assert [m["role"] for m in sent[1:]] == ["user", "assistant", "user"]  # the agent speaks as the model's "user"


@pytest.mark.parametrize(("spec", "match"), [("hf:/no/such/model", "user model that loads"), ("telepathy", "Expected a user"),
                                               (object(), "reply")])
def test_users_that_cannot_load_are_one_config_error(spec, match):
    with pytest.raises(ConfigError, match=match) as err:
        make_user(spec)
    assert "\n" not in str(err.value)


def test_a_transformers_model_plays_the_user_in_the_env(tiny):
    """`hf:<model>` as the user: a real (tiny, random) transformers model answers the agent inside step()."""
    env = AgentWorldEnv("finance", user=f"hf:{tiny}", max_turns=4)
    try:
        obs, info = env.reset(seed=0)
        assert info["user"] == f"hf:{tiny}" and info["messages"][1]["role"] == "user" and info["messages"][1]["content"]
        obs, reward, terminated, truncated, info = env.step("Which account do you mean?")
        assert info["messages"][-1]["role"] == "user" and info["messages"][-2]["content"] == "Which account do you mean?"
    finally:
        env.close()
