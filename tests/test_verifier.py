"""The verifier checks the whole world, and partial reward never pays for a guess."""

from __future__ import annotations

import json

import pytest
from agentworld_gym.envs import get_theme

import agentworld_gym  # noqa: F401  (registers the themes)
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.synthesis import synthesize_task
from agentworld_gym.synthesis.facts import facts


def _task(level: int, want) -> object:
    theme = get_theme("finance")
    return next(t for s in range(200) if want(t := synthesize_task(theme, level, s, "mixed")))


def _play(env: AgentWorldEnv, task, actions: list[dict]) -> tuple[float, dict]:
    env.reset(seed=0, options={"task": task})
    for a in actions:
        _, reward, terminated, truncated, info = env.step(json.dumps(a))
        if terminated or truncated:
            return reward, info
    raise AssertionError("the episode did not end")


def _submit(answer) -> dict:
    return {"name": "submit", "arguments": {"answer": answer}}


@pytest.mark.parametrize("mode", ["binary", "partial"])
def test_an_unrequested_write_fails_a_write_task(mode):
    task = _task(5, lambda t: t.state_hash is not None and "transfers" not in t.state_tables)
    env = AgentWorldEnv("finance", reward_mode=mode)
    gold = [*task.solution, _submit(task.answer if task.answer_type != "none" else "done")]
    assert _play(env, task, gold)[0] == 1.0
    fx = facts(get_theme("finance"), 0)
    accounts = [r[0] for r in fx._conn.execute("SELECT account_id FROM accounts WHERE status = 'active' AND balance > 50 ORDER BY 1")]
    a, b = [x for x in accounts if x not in json.dumps(task.solution)][:2]
    extra = {"name": "transfer_funds", "arguments": {"from_account_id": a, "to_account_id": b, "amount": 5.0}}
    reward, info = _play(env, task, [*task.solution, extra, gold[-1]])
    assert "transfer" in env.messages[-3]["content"].lower() or "TR-" in env.messages[-3]["content"]  # the write took effect
    assert info["verification"]["checks"]["state"] is False and reward == 0.0


def test_an_unrequested_write_fails_an_answer_task():
    task = _task(1, lambda t: t.state_hash is None and t.answer_type != "none")
    env = AgentWorldEnv("finance")
    fx = facts(get_theme("finance"), 0)
    card = fx._conn.execute("SELECT card_id FROM cards WHERE status = 'active' ORDER BY 1").fetchone()[0]
    reward, info = _play(env, task, [*task.solution, _submit(task.answer)])
    assert reward == 1.0 and info["verification"]["checks"] == {"answer": True, "state": True}
    write = {"name": "set_card_status", "arguments": {"card_id": card, "status": "blocked"}}
    reward, info = _play(env, task, [*task.solution, write, _submit(task.answer)])
    assert info["verification"]["checks"] == {"answer": True, "state": False} and reward == 0.0


def test_a_write_that_leaves_a_table_as_it_was_is_not_an_error():
    """Whole-world means equal contents, not "no statement ran": a write undone before the end passes."""
    task = _task(1, lambda t: t.state_hash is None and t.answer_type != "none")
    env = AgentWorldEnv("finance")
    fx = facts(get_theme("finance"), 0)
    card = fx._conn.execute("SELECT c.card_id FROM cards c JOIN accounts a USING (account_id) "
                            "WHERE c.status = 'active' AND a.status = 'active' ORDER BY 1").fetchone()[0]
    there = {"name": "set_card_status", "arguments": {"card_id": card, "status": "blocked"}}
    back = {"name": "set_card_status", "arguments": {"card_id": card, "status": "active"}}
    assert _play(env, task, [*task.solution, there, back, _submit(task.answer)])[0] == 1.0


def test_partial_reward_never_pays_for_a_guess():
    task = _task(5, lambda t: t.state_hash is not None and t.answer_type != "none")
    env = AgentWorldEnv("finance", reward_mode="partial")
    # the right answer without the writes: a guess that happens to be right earns nothing
    reward, info = _play(env, task, [_submit(task.answer)])
    assert info["verification"]["checks"] == {"answer": True, "state": False} and reward == 0.0
    # the writes done, the answer wrong: the change of the world earns its share
    reward, info = _play(env, task, [*task.solution, _submit("surely wrong")])
    assert info["verification"]["checks"] == {"answer": False, "state": True} and reward == 0.5
    # an answer task: an unchanged world is free, so a wrong answer earns nothing
    plain = _task(1, lambda t: t.state_hash is None and t.answer_type != "none")
    reward, info = _play(env, plain, [_submit("surely wrong")])
    assert info["verification"]["checks"]["state"] is True and reward == 0.0


def test_a_restored_snapshot_is_checked_on_every_table():
    task = _task(1, lambda t: t.state_hash is None and t.answer_type != "none")
    env = AgentWorldEnv("finance")
    env.reset(seed=0, options={"task": task})
    env.conn.execute("UPDATE cards SET status = 'blocked'")  # written behind the trace's back ...
    env.restore(env.snapshot())  # ... and carried into a restored copy
    _, reward, *_ , info = env.step(json.dumps(_submit(task.answer)))
    assert info["verification"]["checks"]["state"] is False and reward == 0.0
