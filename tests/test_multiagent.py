"""PettingZoo AEC assistant-user env: API conformance, the scripted user, bad messages."""

from __future__ import annotations

import json
import re
import warnings

import pytest
from pettingzoo.test import api_test, seed_test

from agentworld_gym.multiagent import ASSISTANT, USER, AssistantUserEnv, ScriptedUser, mask_facts, play, task_facts


def make(**kw):
    return AssistantUserEnv("finance", difficulty=kw.pop("difficulty", 1), max_turns=kw.pop("max_turns", 12), **kw)


def test_pettingzoo_api_test_and_seed_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # text spaces: api_test recommends Box/Discrete
        api_test(make(), num_cycles=40)
        seed_test(make, num_cycles=40)


def test_task_facts_and_masking():
    text = "1. Find the customer whose email is a.b@example.com.\n2. Transfer 25 from account AC-1001 to account AC-1002 on 2025-06-03."
    facts = task_facts(text)
    assert facts == {"email": "a.b@example.com", "account": "AC-1001", "account 2": "AC-1002", "date": "2025-06-03"}
    masked = mask_facts(text, facts)
    assert not any(v in masked for v in facts.values())
    assert "[email: ask me]" in masked and "[account 2: ask me]" in masked and "25" in masked


class AskingAssistant:
    """Asks for every fact the opening hides, then replays the gold calls and submits the answer."""

    def __init__(self, env: AssistantUserEnv):
        self.env = env

    def act(self, obs: str, info: dict) -> str:
        task = self.env.task_env.task
        asked = sum(1 for m in info["messages"] if m["role"] == "assistant" and not m.get("tool_calls"))
        labels = re.findall(r"\[([\w ]+): ask me\]", obs)
        if asked < len(labels):
            return f"Could you tell me the {labels[asked]}?"
        calls = sum(1 for m in info["messages"] if m.get("tool_calls"))
        if calls < len(task.solution):
            return json.dumps(task.solution[calls])
        return json.dumps({"name": "submit", "arguments": {"answer": task.answer if task.answer_type != "none" else "done"}})


@pytest.mark.parametrize("seed", range(6))
def test_scripted_user_reveals_facts_only_when_asked_and_the_task_gets_solved(seed):
    env = make()
    env.reset(seed=seed)
    assert env.agent_selection == USER
    facts = dict(env.facts)
    env.step(ScriptedUser().act(env.observe(USER), env.infos[USER]))
    first = env.observe(ASSISTANT)
    assert not any(v in first for v in facts.values()), "the opening leaks a fact"
    result = play(env, AskingAssistant(env), seed=seed)
    assert result["success"] and result["reward"] == 1.0
    final = env.render()
    assert all(v in final for v in facts.values())
    assert env.rewards == {} or all(r == 1.0 for r in env.rewards.values())


def test_unrelated_question_lists_what_the_user_knows():
    env = make()
    env.reset(seed=1)
    env.step(env.infos[USER]["opening"])
    env.step("What is the weather like?")
    assert env.agent_selection == USER
    reply = ScriptedUser().act(env.observe(USER), env.infos[USER])
    assert reply.startswith("I can tell you my") and not any(v in reply for v in env.facts.values())


@pytest.mark.parametrize("bad", ["", "   ", "x" * 200_000, None, 12345, b"\xff\xfe", '{"name": ', "<tool_call>{oops</tool_call>"])
def test_bad_messages_become_clear_observations(bad):
    env = make()
    env.reset(seed=0)
    env.step(bad)  # the user's opening
    assert env.agent_selection == ASSISTANT
    opening = env.observe(ASSISTANT)
    assert "[user]" in opening and len(opening) < 60_000
    if bad is None or isinstance(bad, (int, bytes)):
        assert "could not be read" in opening
    elif not str(bad).strip():
        assert "empty message" in opening
    env.step(bad)  # the assistant's turn
    obs, _, terminated, truncated, _ = env.last()
    if env.agent_selection == ASSISTANT:  # empty or unreadable: an error observation, same agent again
        assert "Error" in obs.split("[assistant]")[-1]
    else:  # readable text is a question for the user
        assert env.agent_selection == USER and "[assistant asks]" in env.observe(USER)
    assert not terminated and not truncated


def test_max_turns_truncates_both_agents():
    env = make(max_turns=3)
    env.reset(seed=0)
    env.step(env.infos[USER]["opening"])
    env.step("Which account?")
    env.step("I don't know.")
    assert all(env.truncations.values()) and not any(env.terminations.values())
    for _agent in env.agent_iter():
        env.step(None)
    assert env.agents == []


def test_user_ends_the_conversation_and_both_agents_are_graded():
    env = make()
    env.reset(seed=2)
    env.step(ScriptedUser().act(env.observe(USER), env.infos[USER]))
    env.step("I looked into it and it is all settled.")  # no question: the scripted user stops
    env.step(ScriptedUser().act(env.observe(USER), env.infos[USER]))
    assert all(env.terminations.values()) and env.infos[ASSISTANT]["ended_by"] == "user_stop"
    assert env.infos[ASSISTANT]["verification"]["passed"] is False  # nothing was done


@pytest.mark.skipif("mock" not in __import__("agentworld_gym.suites.tau2", fromlist=["x"]).installed_domains(), reason="tau2 not installed")
def test_a_tau2_domain_as_the_assistant_user_env():
    from agentworld_gym.suites.tau2 import make_tau2_env

    env = AssistantUserEnv(task_env=make_tau2_env("airline"), max_turns=40)
    try:
        task = env.task_env.tasks[3]

        class Asker:
            def act(self, obs, info):
                facts = env.scenario.facts
                said = [m for m in info["messages"] if m["role"] == "assistant"]
                asks = [m for m in said if not m.get("tool_calls")]
                if len(asks) < len(facts):
                    return f"What is your {facts[len(asks)].label}?"
                made = len(said) - len(asks)
                return json.dumps(task.solution[made]) if made < len(task.solution) else "Done: " + task.answer

        result = play(env, Asker(), options={"task": task})
        facts = env.scenario.facts
        assert facts and result["success"] and result["ended_by"] == "user_stop"
        opening = next(m["content"] for m in result["info"]["messages"] if m["role"] == "user")
        assert not any(f.text in opening for f in facts) and result["info"]["user"] == "relay"
    finally:
        env.close()
