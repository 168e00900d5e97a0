"""step() is total: any action (text in any format, hostile values, huge or pathological text, or no text at all)
comes back as an observation, on every flagship and a sample of pool themes; error observations change nothing;
numbers out of range are refused at validation on every flagship write tool."""

import io
import json
import random
import sys
import time

import gymnasium as gym
import numpy as np
import pytest
from agentworld_gym.envs.registry import theme_ids
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentworld_gym
from agentworld_gym.actions import MAX_ACTION_CHARS, ToolCall
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.spaces import sample_value
from agentworld_gym.tools import validate_arguments
from agentworld_gym.utils.fuzz import check_step, random_action

gym.register_envs(agentworld_gym)
FLAGSHIPS = theme_ids("flagship")
POOL_SAMPLE = random.Random(13).sample(sorted(set(theme_ids()) - set(FLAGSHIPS)), 6)
_ENVS: dict[str, AgentWorldEnv] = {}


def _env(theme: str) -> AgentWorldEnv:
    if theme not in _ENVS:
        _ENVS[theme] = AgentWorldEnv(theme, max_turns=3, render_mode="ansi")
    return _ENVS[theme]


@pytest.mark.parametrize("theme", FLAGSHIPS + POOL_SAMPLE)
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(rng=st.randoms(use_true_random=False), seed=st.integers(0, 3))
def test_any_action_comes_back_as_an_observation(theme, rng, seed):
    env = _env(theme)
    env.reset(seed=seed)
    for _ in range(2):
        check_step(env, random_action(rng, env.theme.tool_schemas))
        assert isinstance(env.render(), str)
        if env._done:
            break


@pytest.mark.parametrize("action", [
    'get_account(account_id={b"k": 1})', "get_account(account_id={**x})", '{"name": "get_account", "arguments": {"account_id": ' + "9" * 4400 + "}}",
    "get_account(account_id=0x" + "f" * 4000 + ")", '{"name": "get_account", "arguments": {"account_id": "\\ud800"}}', "get_account(account_id='\ud800')",
    "submit(answer=" + "9" * 400 + ")", "submit(answer=0x" + "f" * 400 + ")", "submit(answer='" + " " * 20_000 + "')",
    "submit(answer='" + "a, " * 16_000 + "')", " " * 20_000, "\ud800", None, b"get_account()", object(),
])
def test_the_actions_that_used_to_raise(action):
    env = AgentWorldEnv("finance", tasks=None, render_mode="ansi")
    env.reset(seed=0)
    start = time.perf_counter()
    check_step(env, action)
    assert time.perf_counter() - start < 1.0  # generous here; benchmarks/fuzz_step.py measures the 50 ms budget


def test_an_answer_nobody_can_print_renders_in_human_mode(monkeypatch):
    env = AgentWorldEnv("finance", render_mode="human")
    env.reset(seed=0)
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", out)
    env.step("submit(answer='Zürich 東京 \ud800 🙂')")
    out.flush()
    assert b"Z?rich" in out.buffer.getvalue()


def test_actions_over_the_limit_are_refused_quickly():
    env = AgentWorldEnv("finance")
    env.reset(seed=0)
    for size in (MAX_ACTION_CHARS + 1, 1_000_000):
        obs, *_ = env.step(" " * size)
        assert f"the limit is {MAX_ACTION_CHARS:,}" in obs
        assert len(obs) < 20_000  # the echo is clipped too


# ---------------------------------------------------------------------------------------------- numbers

BAD_NUMBERS = [float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 2**70]
WRITE_TOOLS = [(slug, t.name, p) for slug in FLAGSHIPS for t in _env(slug).theme.toolset if t.writes
               for p, prop in t.parameters["properties"].items() if prop.get("type") in ("number", "integer")]


def _call_with(theme: str, tool_name: str, param: str, value) -> tuple[str, bool]:
    """Play `tool_name` with valid-typed arguments and `param=value` through the env; (observation, state changed)."""
    env = _env(theme)
    env.reset(seed=0)
    tool = env.theme.toolset[tool_name]
    rng = np.random.default_rng(0)
    args = {k: sample_value(p, rng) for k, p in tool.parameters["properties"].items()}
    args[param] = value
    before = env.state_hash()
    env.step(json.dumps({"name": tool_name, "arguments": args}))  # NaN and Infinity as JSON tokens
    reply = [m for m in env.messages if m["role"] == "tool"][-1]["content"]
    return reply, env.state_hash() != before


def test_every_flagship_write_tool_with_a_number_is_covered():
    assert len(WRITE_TOOLS) >= 20 and {slug for slug, *_ in WRITE_TOOLS} >= {"finance", "retail", "crypto", "travel", "weather"}


@pytest.mark.parametrize(("theme", "tool_name", "param"), WRITE_TOOLS, ids=[f"{s}.{t}.{p}" for s, t, p in WRITE_TOOLS])
def test_non_finite_and_out_of_range_numbers_are_refused_at_validation(theme, tool_name, param):
    for value in BAD_NUMBERS:
        reply, changed = _call_with(theme, tool_name, param, value)
        assert reply.startswith("Error: invalid arguments") and repr(param) in reply, (value, reply)
        assert not changed
    schema = _env(theme).theme.toolset[tool_name].parameters["properties"][param]
    for value in (-0.0, 1e-300):  # legal numbers; a schema minimum (money, quantities) refuses them
        reply, changed = _call_with(theme, tool_name, param, value)
        low = schema.get("minimum")
        if low is not None and value < low:
            assert reply.startswith("Error: invalid arguments") and "at least" in reply and not changed, reply
        elif reply.startswith("Error"):
            assert not changed, reply  # a business rule refused it, and nothing was written


def test_money_below_a_cent_never_moves_money():
    for value in (1e-300, 0.001, float("nan")):
        reply, changed = _call_with("finance", "transfer_funds", "amount", value)
        assert reply.startswith("Error") and not changed
    env = _env("finance")
    assert validate_arguments(env.theme.toolset["transfer_funds"].parameters,
                              {"from_account_id": "AC-1001", "to_account_id": "AC-1002", "amount": 0.01}) is None
    assert env.theme.toolset.call(env.db, ToolCall("transfer_funds", {"from_account_id": "AC-1", "to_account_id": "AC-2",
                                                                     "amount": float("nan")})).content.startswith("Error: invalid")


# ---------------------------------------------------------------------------------------------- the checker itself

def _plain_json(value, depth=0) -> bool:
    if isinstance(value, str):
        value.encode("utf-8")  # no lone surrogates reach a tool
        return True
    if value is None or isinstance(value, (bool, float)):
        return True
    if isinstance(value, int):
        return value.bit_length() <= 256
    if isinstance(value, list):
        return all(_plain_json(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_json(k) and _plain_json(v, depth + 1) for k, v in value.items())
    return False


@settings(max_examples=300, deadline=None, derandomize=True)
@given(rng=st.randoms(use_true_random=False))
def test_parsed_calls_carry_only_plain_json(rng):
    from agentworld_gym.actions import parse_action

    parsed = parse_action(random_action(rng, _env("finance").theme.tool_schemas))
    for call in parsed.calls:
        assert isinstance(call.name, str) and _plain_json(call.name)
        assert _plain_json(call.arguments) and _plain_json(list(call.args))
    assert _plain_json(parsed.text) and _plain_json(parsed.error or "")


def test_the_checker_catches_an_error_observation_that_changed_the_world(monkeypatch):
    from agentworld_gym.tools import ToolError

    env = AgentWorldEnv("finance")
    env.reset(seed=0)
    tool = env.theme.toolset["get_account"]

    def leaky(db, account_id):  # a read tool (no savepoint) that writes, then reports an error
        db.execute("UPDATE accounts SET balance = 0")
        raise ToolError("nope")

    monkeypatch.setattr(tool, "fn", leaky)
    with pytest.raises(AssertionError, match="changed the world"):
        check_step(env, '{"name": "get_account", "arguments": {"account_id": "AC-1001"}}')
