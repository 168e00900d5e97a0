"""Each rejection rule of tasks v2, with a task built to break it; and the null policies."""

from __future__ import annotations

import dataclasses
import json

import pytest
from agentworld_gym.envs import get_theme

import agentworld_gym  # noqa: F401  (registers the themes)
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.policies import run_episode
from agentworld_gym.policies.null import CONSTANT_ANSWERS, FirstIdPolicy, first_value, null_policies
from agentworld_gym.synthesis import answer_prior, cheap_answers, guessable, quality_problems, synthesize_task
from agentworld_gym.synthesis.audit import wording_problems
from agentworld_gym.synthesis.facts import facts
from agentworld_gym.synthesis.graph import capped
from agentworld_gym.synthesis.quality import audit
from agentworld_gym.tasks import Task

THEME = "finance"


@pytest.fixture(scope="module")
def theme():
    return get_theme(THEME)


@pytest.fixture(scope="module")
def answer_task(theme) -> Task:
    return next(t for s in range(100) if (t := synthesize_task(theme, 2, s, "graph")).answer_type == "text")


def _sql(theme, query: str) -> list:
    return [r[0] for r in facts(theme, 0)._conn.execute(query)]


def _with_state(theme, task: Task, solution: list[dict]) -> Task:
    """`task` with another gold solution, its state fields recomputed by replaying it."""
    fx = facts(theme, 0)
    with fx.run() as run:
        for c in solution:
            assert run.call(c["name"], c["arguments"]).ok, c
        tables = tuple(sorted(run.written))
        return dataclasses.replace(task, solution=tuple(solution), state_tables=tables, state_hash=fx.state_hash(run.conn, tables),
                                   answer=None, answer_type="none", features={})


def test_synthesized_tasks_break_no_rule(theme):
    for level in (1, 3, 5):
        for s in range(4):
            task = synthesize_task(theme, level, s, "mixed", fallback=True)
            assert audit(theme, task) == [], (task.instruction, audit(theme, task))
            assert not guessable(theme, task)


@pytest.mark.parametrize(("text", "rule"), [
    ("1. Look up card {v}.\n2. Look up the account from step 1. What is its status?", "step_leak"),
    ("Look up card {v}, then look up its account. What is the status?", "step_leak"),
    ("What is the status of the account of card {v}? Careful: card CD-0000 is a different card from card {v}; leave it out of this.", "decoy"),
    ("Look up card {v}. What is the status of that account?", "ambiguous_reference"),
    ("Call get_card for card {v}. What is the status?", "step_leak"),
])
def test_wording_rules_reject_scripts_decoys_and_pointers(theme, answer_task, text, rule):
    value = next(v for c in answer_task.solution for v in c["arguments"].values())
    bad = dataclasses.replace(answer_task, instruction=text.format(v=value))
    assert rule in wording_problems(theme, bad)
    assert f"the instruction breaks the wording rule {rule!r}" in quality_problems(theme, bad)
    assert wording_problems(theme, answer_task) == []


def test_an_unused_lookup_is_rejected(theme, answer_task):
    customer = _sql(theme, "SELECT customer_id FROM customers ORDER BY 1")[-1]
    extra = {"name": "get_customer", "arguments": {"customer_id": customer}}
    bad = dataclasses.replace(answer_task, solution=(extra, *answer_task.solution),
                              features={**answer_task.features, "answer_path": [answer_task.features["answer_path"][0] + 1, *answer_task.features["answer_path"][1:]]})
    assert "a gold lookup's result is never used" in quality_problems(theme, bad)
    assert "unused_call" in audit(theme, bad)


def test_a_write_and_its_undo_are_rejected(theme, answer_task):
    cards = _sql(theme, "SELECT c.card_id FROM cards c JOIN accounts a USING (account_id) "
                        "WHERE c.status = 'active' AND a.status = 'active' ORDER BY 1")
    block = [{"name": "set_card_status", "arguments": {"card_id": c, "status": "blocked"}} for c in cards[:2]]
    undo = {"name": "set_card_status", "arguments": {"card_id": cards[0], "status": "active"}}
    good = _with_state(theme, answer_task, [block[1]])
    assert quality_problems(theme, good) == []
    whole = _with_state(theme, answer_task, [block[0], undo])  # the world ends as it began
    assert "gold writes cancel each other out" in quality_problems(theme, whole)
    partial = _with_state(theme, answer_task, [block[0], undo, block[1]])  # a pair cancels; the table still changes
    assert "a gold write can be left out" in quality_problems(theme, partial)
    assert "self_cancelling" in audit(theme, partial)


def test_a_count_of_a_full_page_is_not_an_answer(theme):
    tool = theme.toolset["list_transactions"]
    assert capped(tool, {"account_id": "AC-1", "limit": 3}, [{}] * 3)
    assert capped(tool, {"account_id": "AC-1"}, [{}] * 20)  # the default page size
    assert capped(tool, {"account_id": "AC-1", "limit": 50}, [{}] * 10)  # a usual page size, whatever the limit
    assert not capped(tool, {"account_id": "AC-1"}, [{}] * 7)
    account = _sql(theme, "SELECT account_id FROM transactions GROUP BY 1 HAVING COUNT(*) > 3 ORDER BY 1")[0]
    call = {"name": "list_transactions", "arguments": {"account_id": account, "limit": 3}}
    task = Task(id="t", theme=THEME, kind="graph", instruction=f"How many transactions does account {account} have?", difficulty=1,
                solution=(call,), answer=3, answer_type="number", features={"answer_path": [0, "#count"]})
    assert "page_size_answer" in audit(theme, task)


def test_an_answer_a_cheap_strategy_gives_is_rejected(theme, answer_task):
    for answer, kind in [(1, "number"), (0, "number"), (2, "number"), (True, "bool"), (False, "bool"), ("done", "text")]:
        bad = dataclasses.replace(answer_task, answer=answer, answer_type=kind)
        assert "a cheap strategy's answer passes" in quality_problems(theme, bad), (answer, kind)
    first = first_value(answer_task.instruction)
    assert first and "a cheap strategy's answer passes" in quality_problems(theme, dataclasses.replace(answer_task, answer=first))
    level = next(lv for lv in range(1, 6) if answer_prior(theme, lv))  # a level of this theme where some answers repeat
    prior, at_level = answer_prior(theme, level), dataclasses.replace(answer_task, difficulty=level)
    assert all(p in cheap_answers(theme, at_level) for p in prior)
    frequent = dataclasses.replace(at_level, answer=prior[0], answer_type="number" if isinstance(prior[0], (int, float)) else "text")
    assert "a cheap strategy's answer passes" in quality_problems(theme, frequent)
    assert "a cheap strategy's answer passes" not in quality_problems(theme, answer_task)


def test_answer_prior_is_deterministic_and_frequent(theme):
    from agentworld_gym.synthesis.quality import _answer_prior

    a = answer_prior(theme, 2)
    _answer_prior.cache_clear()
    assert answer_prior(theme, 2) == a


def test_first_value_and_null_policies(theme, answer_task):
    assert first_value('Please refund "order 7" for account AC-1033.') == "order 7"
    assert first_value("What is the balance of account AC-1033 and card CD-2001?") == "AC-1033"
    assert first_value("What is the name of the customer with email a.b@example.org?") == "a.b@example.org"
    assert first_value("How many are there?") is None
    policies = null_policies(seed=0)
    assert list(policies) == ["do-nothing", *(f"constant:{c}" for c in CONSTANT_ANSWERS), "first-id", "random"]
    env = AgentWorldEnv(THEME)
    for name, policy in policies.items():
        result = run_episode(env, policy, seed=0, options={"task": answer_task})
        assert result["success"] is False, name  # synthesis rejected every task these pass
        if name != "random":
            assert result["turns"] == 1, name
    _, info = env.reset(seed=0, options={"task": answer_task})
    call = json.loads(FirstIdPolicy().act("", info))
    assert call == {"name": "submit", "arguments": {"answer": first_value(answer_task.instruction)}}


def test_small_counts_and_common_values_are_not_answers(theme):
    """A count of 8 or fewer items, a small whole number and a value common in its column are guesses
    among few values (what the theme-level "mode" baseline wins on): synthesis never asks for them."""
    from agentworld_gym.synthesis.graph import COMMON_SHARE, _few_values, few_items

    fx = facts(theme, 0)
    assert few_items(8) and not few_items(9)
    assert _few_values(fx, "balance", 3) and _few_values(fx, "balance", 7.0) and not _few_values(fx, "balance", 12345.67)
    common = next((c, v) for t, cols in sorted(fx.table_columns.items()) for c in sorted(cols) if fx.column_of(c) == (t, c)
                  and len(fx.values(t, c)) > 8 for v in fx.values(t, c) if fx.share(t, c, v) >= COMMON_SHARE)
    assert _few_values(fx, *common)
    for level in (1, 2):
        for s in range(6):
            task = synthesize_task(theme, level, s, "mixed")
            if task.state_hash is None and isinstance(task.answer, (int, float)) and not isinstance(task.answer, bool):
                assert not (task.answer == int(task.answer) and few_items(abs(int(task.answer)))), task.instruction


# --------------------------------------------------------------------------------------------
# columns named as a user names them (wording.field_name / when, audit rule "column_phrase")


@pytest.mark.parametrize(("column", "name"), [
    ("duration_min", "duration in minutes"), ("size_mb", "size in MB"), ("watch_time_sec", "watch time in seconds"),
    ("gpu_hours", "gpu hours"), ("total_minutes", "total minutes"),  # the unit is the thing counted: as it is
    ("posted_on", "posted date"), ("started_at", "start time"), ("expiresAt", "expiry time"), ("credit_limit", "credit limit"),
])
def test_field_name_reads_units_and_moments(column, name):
    from agentworld_gym.synthesis import wording as W

    assert W.field_name(column) == name
    assert not W.is_plural(W.field_name("duration_min"))  # "What is the duration in minutes of ...", not "How many"


def test_when_asks_for_a_moment_as_a_user_would():
    from agentworld_gym.synthesis import wording as W

    assert W.when("started_at", "session SE-1003") == "Tell me when session SE-1003 started."
    assert W.when("posted_on", "bank transaction BN-1") == "Tell me when bank transaction BN-1 was posted."
    assert W.when("last_scanned_at", "target TA-1") == "Tell me when target TA-1 was last scanned."
    assert W.when("expires_at", "certificate CE-1") == "Tell me when certificate CE-1 expires."
    assert W.when("next_run_at", "job JO-1") is None and W.when("check_in_at", "stay ST-1") is None  # no plain verb
    assert W.when("duration_min", "event EV-1") is None


def test_a_raw_column_name_breaks_the_column_phrase_rule():
    from agentworld_gym.synthesis import wording as W
    from agentworld_gym.synthesis.audit import column_phrases

    cal = get_theme("calendar")  # events.duration_min
    task = next(t for s in range(200) if "duration in minutes" in (t := synthesize_task(cal, 2, s, "programmatic")).instruction)
    assert "column_phrase" not in audit(cal, task)
    bad = dataclasses.replace(task, instruction=task.instruction.replace("duration in minutes", "duration min"))
    assert column_phrases(cal, bad.instruction) == ["duration min"]
    assert "column_phrase" in audit(cal, bad)
    assert W.clause(cal, dataclasses.replace(cal.toolset[task.solution[0]["name"]], phrase="find events over {duration_min} duration min"),
                    {"duration_min": "30"}) == "find events over 30 duration in minutes"
