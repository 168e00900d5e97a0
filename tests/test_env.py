import json
import pickle

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import agentworld_gym
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.errors import ConfigError, ResetNeededError, UnknownThemeError
from agentworld_gym.policies import OraclePolicy, RandomPolicy, run_episode
from agentworld_gym.utils import check_env

gym.register_envs(agentworld_gym)


@pytest.fixture
def env():
    e = gym.make("AgentWorld/finance-v0", difficulty=2, max_turns=30)
    yield e
    e.close()


def test_check_env_finance():
    for difficulty in (1, 3, 5):
        check_env(gym.make("AgentWorld/finance-v0", difficulty=difficulty))


def test_reset_gives_transcript_and_info(env):
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert info["messages"][0]["role"] == "system" and info["messages"][1]["content"] in obs
    names = {t["function"]["name"] for t in info["tools"]}
    assert {"get_account", "transfer_funds", "submit"} <= names
    assert info["task_id"].startswith("finance-") and info["difficulty"] == 2
    assert "verification" not in info


def test_an_info_kept_from_an_earlier_step_does_not_change(env):
    _, first = env.reset(seed=0)
    _, *_, second = env.step('{"name": "list_accounts", "arguments": {}}')
    assert len(first["messages"]) == 2 and len(second["messages"]) == 4


def test_same_seed_same_bytes_over_30_steps():
    def rollout():
        e = gym.make("AgentWorld/finance-v0", difficulty=3, max_turns=30)
        policy = RandomPolicy(seed=11, p_submit=0.0)
        obs, info = e.reset(seed=42)
        seen = [obs]
        for _ in range(30):
            obs, r, term, trunc, info = e.step(policy.act(obs, info))
            seen.append(obs)
            if term or trunc:
                break
        return seen

    a, b = rollout(), rollout()
    assert len(a) == 31 and a == b


def test_pickle_round_trip_mid_episode(env):
    obs, info = env.reset(seed=5)
    task = env.unwrapped.task
    env.step(json.dumps(task.solution[0]))
    clone = pickle.loads(pickle.dumps(env.unwrapped))
    assert clone.state_hash() == env.unwrapped.state_hash()
    oracle_a, oracle_b = OraclePolicy(env), OraclePolicy(clone)
    done = False
    while not done:
        o1, r1, t1, tr1, i1 = env.step(oracle_a.act(None, env.unwrapped._info()))
        o2, r2, t2, tr2, i2 = clone.step(oracle_b.act(None, clone._info()))
        assert o1 == o2 and r1 == r2
        done = t1 or tr1
    assert r1 == 1.0


BAD_ACTIONS = [
    '{"name": "get_account", "arguments": {',  # malformed JSON
    '{"name": "get_acount", "arguments": {"account_id": "AC-1001"}}',  # unknown tool
    '{"name": "get_account", "arguments": {"account_id": 1001}}',  # wrong type
    '{"name": "get_account", "arguments": {}}',  # missing argument
    '{"name": "get_account", "arguments": {"account_id": "AC-1001", "pin": "1234"}}',  # extra argument
    '{"name": "get_account", "arguments": {"account_id": "' + "A" * 1_000_000 + '"}}',  # 1 MB string
    '{"name": "get_account", "arguments": {"account_id": "\\u0000\\u0007\\u001b[31m"}}',  # control characters
    "get_account(account_id=\"AC-1001'; DROP TABLE accounts; --\")",  # SQL fragment
    '{"name": "transfer_funds", "arguments": {"from_account_id": "AC-1001", "to_account_id": "AC-1001", "amount": 5}}',
    '{"name": "transfer_funds", "arguments": {"from_account_id": "AC-1001", "to_account_id": "AC-1002", "amount": 1e12}}',
    "get_account(account_id=open('/etc/passwd').read())",
    b"\xff\xfe binary",
    "<tool_call>not json</tool_call>",
]


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=range(len(BAD_ACTIONS)))
def test_bad_actions_become_error_observations(env, action):
    obs, info = env.reset(seed=0)
    before = env.unwrapped.state_hash()
    obs, reward, terminated, truncated, info = env.step(action)
    assert not terminated and not truncated and reward == 0.0
    assert info["messages"][-1]["role"] == "tool" and info["messages"][-1]["content"].startswith("Error")
    assert env.observation_space.contains(obs)
    assert env.unwrapped.state_hash() == before
    # the episode goes on: the gold solution still solves it
    task = env.unwrapped.task
    for call in task.solution:
        env.step(json.dumps(call))
    obs, reward, terminated, *_ = env.step(json.dumps({"name": "submit", "arguments": {"answer": task.answer if task.answer_type != "none" else "done"}}))
    assert terminated and reward == 1.0


def test_unknown_tool_suggests_the_close_one(env):
    env.reset(seed=0)
    *_, info = env.step('get_acount(account_id="AC-1001")')
    assert "Did you mean 'get_account'" in info["messages"][-1]["content"]


def test_plain_text_response_ends_episode_and_is_graded(env):
    env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step("I think the answer is unknown.")
    assert terminated and reward == 0.0 and info["verification"]["passed"] is False


def test_max_turns_truncates():
    e = gym.make("AgentWorld/finance-v0", max_turns=3)
    e.reset(seed=0)
    results = [e.step('get_account(account_id="AC-1001")') for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    assert "verification" in results[-1][4]


def test_partial_reward_is_fraction_of_checks():
    e = gym.make("AgentWorld/finance-v0", difficulty=3, reward_mode="partial")
    for seed in range(40):
        e.reset(seed=seed)
        task = e.unwrapped.task
        if task.state_hash is not None and task.answer_type != "none":
            break
    else:
        pytest.fail("no task with both an answer and a state check in 40 seeds")
    for call in task.solution:
        e.step(json.dumps(call))
    *_, reward, term, trunc, info = e.step('submit(answer="surely wrong")')[0:5]
    assert info["verification"]["checks"] == {"answer": False, "state": True} and reward == 0.5


def test_snapshot_restore(env):
    env.reset(seed=0)
    base = env.unwrapped
    snap, h = base.snapshot(), base.state_hash()
    base.conn.execute("UPDATE accounts SET balance = balance + 1")
    assert base.state_hash() != h
    base.restore(snap)
    assert base.state_hash() == h


def test_render_modes():
    e = gym.make("AgentWorld/finance-v0", render_mode="ansi")
    obs, _ = e.reset(seed=0)
    assert e.render() == obs


def test_programmer_misuse_raises_typed_errors():
    e = AgentWorldEnv("finance")
    with pytest.raises(ResetNeededError, match="reset"):
        e.step("{}")
    with pytest.raises(UnknownThemeError, match="Did you mean 'finance'"):
        AgentWorldEnv("finanse")
    with pytest.raises(ConfigError, match="difficulty"):
        AgentWorldEnv("finance", difficulty=9)
    with pytest.raises(ConfigError, match="reward_mode"):
        AgentWorldEnv("finance", reward_mode="dense")
    e.reset(seed=0)
    e.step('submit(answer="x")')
    with pytest.raises(ResetNeededError):
        e.step('submit(answer="x")')


def test_episodes_do_not_share_state():
    a, b = AgentWorldEnv("finance"), AgentWorldEnv("finance")
    a.reset(seed=0)
    b.reset(seed=0)
    h = b.state_hash()
    a.step('set_card_status(card_id="CD-2001", status="blocked")')
    a.step('set_card_status(card_id="CD-2001", status="active")')
    a.step('transfer_funds(from_account_id="AC-1001", to_account_id="AC-1002", amount=1.0)')
    assert b.state_hash() == h
    a.reset(seed=0)
    assert a.state_hash() == h


def test_oracle_many_tasks_finance():
    e = gym.make("AgentWorld/finance-v0")
    for difficulty in (1, 2, 3):
        e.unwrapped.difficulty = difficulty
        for seed in range(20):
            assert run_episode(e, OraclePolicy(e), seed=seed)["reward"] == 1.0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(
    st.text(max_size=200),
    st.builds(lambda n, a: json.dumps({"name": n, "arguments": a}),
              st.sampled_from(["get_account", "transfer_funds", "list_transactions", "submit", "nope", ""]),
              st.dictionaries(st.sampled_from(["account_id", "amount", "from_account_id", "to_account_id", "limit", "x"]),
                              st.one_of(st.integers(), st.floats(allow_nan=True), st.text(max_size=20), st.none(), st.lists(st.integers(), max_size=3)),
                              max_size=4)),
))
def test_fuzzed_actions_never_raise(env, action):
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    assert env.observation_space.contains(obs)
    assert reward in (0.0, 1.0)


class ReadToolsKeepState(RuleBasedStateMachine):
    """Any sequence of READ tool calls (valid or not) leaves the state hash unchanged."""

    @initialize()
    def start(self):
        self.env = AgentWorldEnv("finance", max_turns=10_000)
        self.env.reset(seed=0)
        self.hash = self.env.state_hash()
        self.reads = [t for t in self.env.theme.toolset if not t.writes]

    @rule(i=st.integers(0, 100), value=st.sampled_from(["AC-1001", "CU-1001", "TX-5001", "CD-2001", "AC-9999", "x", 5, None]),
          category=st.sampled_from(["groceries", "travel", "none"]))
    def call_read_tool(self, i, value, category):
        t = self.reads[i % len(self.reads)]
        args = {p: (category if p == "category" else value) for p in t.parameters["properties"]}
        self.env.step(json.dumps({"name": t.name, "arguments": args}))

    @invariant()
    def state_unchanged(self):
        if hasattr(self, "env"):
            assert self.env.state_hash() == self.hash

    def teardown(self):
        if hasattr(self, "env"):
            self.env.close()


TestReadToolsKeepState = ReadToolsKeepState.TestCase
TestReadToolsKeepState.settings = settings(max_examples=20, stateful_step_count=15, deadline=None)


def test_observation_shows_a_bounded_window_of_a_long_episode(monkeypatch):
    """The transcript is kept as parts and shows the opening plus the latest MAX_WINDOW characters, so a
    step's cost does not grow with the episode; info["messages"] keeps everything (issue 38 item 6)."""
    import agentworld_gym.env as env_module

    monkeypatch.setattr(env_module, "MAX_WINDOW", 5_000)
    e = AgentWorldEnv("finance", max_turns=400)
    obs, info = e.reset(seed=0)
    opening = obs
    action = "[" + ", ".join(["list_accounts()"] * 8) + "]"
    sizes = []
    for _ in range(59):
        obs, *_, info = e.step(action)
        sizes.append(len(obs))
        assert obs.startswith(opening)
    assert max(sizes) <= len(opening) + 5_000 + 4_200 + 200  # window + one part at most + the note
    assert "characters of earlier turns not shown" in obs
    assert len(info["messages"]) == 2 + 59 * 9  # the whole dialogue is still there
    last = info["messages"][-1]["content"]
    assert obs.endswith(f"[tool list_accounts]\n{last}\n")
    clone = pickle.loads(pickle.dumps(e))
    assert clone.render() is None and clone._transcript.text == obs
    e.close()


def test_short_episode_observation_is_the_whole_transcript(env):
    obs, info = env.reset(seed=1)
    obs, *_ = env.step('{"name": "list_accounts", "arguments": {}}')
    assert "not shown" not in obs and obs.startswith("[system]\n")
    assert obs.endswith(f"[tool list_accounts]\n{env.unwrapped.messages[-1]['content']}\n")


def test_final_hash_of_an_episode_without_writes_is_the_full_hash():
    """The submit-time shortcut (no gold table written: the template's cached hash) equals hashing the rows."""
    from agentworld_gym.env import AgentWorldEnv

    env = AgentWorldEnv("retail", difficulty=3)
    checked = 0
    for seed in range(12):
        env.reset(seed=seed)
        if env.task.state_hash is None:
            continue
        checked += 1
        assert env._written == set()
        assert env._final_hash() == env.state_hash(env.task.state_tables or None)
        call = env.task.solution[-1]  # the gold's write: now the tables must be hashed
        env.step(json.dumps({"name": call["name"], "arguments": call["arguments"]}))
        if env._written & set(env.task.state_tables):
            assert env._final_hash() == env.state_hash(env.task.state_tables or None)
    env.close()
    assert checked >= 3  # write tasks were drawn
