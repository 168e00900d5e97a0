"""restore() and reset(options=...) check what they are given and raise typed errors (issue 38 item 5)."""

import pytest

import agentworld_gym  # noqa: F401
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.errors import ConfigError, SnapshotError, TaskError


@pytest.fixture(scope="module")
def finance():
    env = AgentWorldEnv("finance", max_turns=10)
    env.reset(seed=0)
    yield env
    env.close()


@pytest.fixture(scope="module")
def retail():
    env = AgentWorldEnv("retail", max_turns=10)
    env.reset(seed=0)
    yield env
    env.close()


def _bad_snapshots(finance, retail):
    good = finance.snapshot()
    edited_header = bytearray(good)
    edited_header[16:18] = b"\x00\x03"  # a page size SQLite cannot have
    page = int.from_bytes(good[16:18], "big")
    wiped = bytearray(good)
    wiped[page:2 * page] = b"\xff" * page  # the second page (a table's b-tree) overwritten
    return {
        "empty bytes": (b"", "got 0 bytes"),
        "a string": ("SQLite format 3", "got str"),
        "None": (None, "got NoneType"),
        "a list": ([1, 2], "got list"),
        "random bytes": (bytes(range(256)) * 40, "(a SQLite database)"),
        "header only": (good[:100], "got 100 bytes"),
        "truncated to half": (good[: len(good) // 2], "damaged database"),
        "bad page size": (bytes(edited_header), "damaged database"),
        "a wiped page": (bytes(wiped), "damaged database"),
        "another theme's snapshot": (retail.snapshot(), "Expected a snapshot of theme 'finance'"),
    }


@pytest.mark.parametrize("case", ["empty bytes", "a string", "None", "a list", "random bytes", "header only", "truncated to half",
                                  "bad page size", "a wiped page", "another theme's snapshot"])
def test_restore_refuses_what_is_not_this_themes_snapshot_and_keeps_the_episode(finance, retail, case):
    blob, message = _bad_snapshots(finance, retail)[case]
    before = finance.state_hash()
    with pytest.raises(SnapshotError) as caught:
        finance.restore(blob)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert isinstance(caught.value, ConfigError)
    assert finance.state_hash() == before  # the episode database is as it was
    finance.step('{"name": "list_accounts", "arguments": {}}')  # and the episode goes on


def test_restore_takes_a_good_snapshot_back(finance):
    finance.reset(seed=1)
    snap, before = finance.snapshot(), finance.state_hash()
    finance.step('transfer_funds(from_account_id="AC-1001", to_account_id="AC-1002", amount=1.0)')
    assert finance.state_hash() != before
    finance.restore(bytearray(snap))  # bytes-like is fine
    assert finance.state_hash() == before


@pytest.mark.parametrize("options, error, message", [
    ("task", ConfigError, "Expected options to be a dict"),
    ({"difficulty": 9}, ConfigError, "Expected difficulty in 1-5"),
    ({"task": 42}, TaskError, "Expected options['task'] to be a Task or its dict, got int"),
    ({"task": {"id": "x"}}, TaskError, "Expected task fields"),
    ({"task": {"id": "x", "theme": "finance", "instruction": "hi", "solution": [], "bogus_field_ok": 1, "difficulty": 1,
               "db_seed": "zero"}}, TaskError, "db_seed to be an int"),
    ({"task": {"id": "x", "theme": "finance", "instruction": "hi", "solution": [], "state_tables": ["orders"]}}, TaskError,
     "state_tables among theme 'finance'"),
])
def test_reset_refuses_bad_options(finance, options, error, message):
    with pytest.raises(error) as caught:
        finance.reset(options=options)
    assert message in str(caught.value)


def test_reset_refuses_another_themes_task(finance, retail):
    with pytest.raises(TaskError, match="Expected a task of theme 'finance', got one of 'retail'"):
        finance.reset(options={"task": retail.task})
    with pytest.raises(TaskError, match="got one of 'retail'"):
        finance.reset(options={"task": retail.task.to_dict()})
    obs, info = finance.reset(options={"task": finance.task})  # its own task is fine
    assert info["task_id"] == finance.task.id
