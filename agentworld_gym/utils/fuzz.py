"""An adversarial grammar of agent actions, for checking that `step()` is total.

`random_action(rng, tools)` draws one action: a tool call in any accepted format (JSON, Python call, Hermes,
OpenAI objects, native model tokens, fences) with arbitrary nested values (huge and non-finite numbers, lone
surrogates, SQL fragments, deep nesting, non-JSON Python literals), many calls at once, truncated calls,
pathological text near the size limit (whitespace runs, repeated markers, long answers), or no text at all
(None, bytes, objects whose repr fails). The property test (tests/test_step_contract.py) and the long fuzz
benchmark (benchmarks/fuzz_step.py) draw from this one grammar; `check_step` states the contract both check.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np

from ..actions import MAX_ACTION_CHARS
from ..spaces import sample_value

_WORDS = ("AC-1001", "CU-1001", "TX-5001", "open", "paid", "alpha", "Zürich", "東京", "🙂", "", " ", "null", "0")
_NASTY_STRINGS = ("\ud800", "a\udfffb", "\x00", "'; DROP TABLE accounts; --", "%s%s%n", "{0}{1}", "\\u0000", "\r\n\t",
                  "\u202e", "<tool_call>", "```", "</think>", '{"name":', "submit(answer=1)")
_NUMBERS = (0, -0.0, 1, -1, 2**31, 2**63, -(2**63) - 1, 10**18, float("nan"), float("inf"), float("-inf"), 1e-300,
            5e-324, 1e308, -1e308, 0.1, 12.5, 1e15, 1e15 + 1)


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr failed")


def random_value(rng: random.Random, depth: int = 0) -> Any:
    """A JSON-ish value: mostly plausible, often hostile."""
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(_WORDS)
    if roll < 0.40:
        return rng.choice(_NASTY_STRINGS) * rng.choice((1, 1, 3, 1000))
    if roll < 0.65:
        return rng.choice(_NUMBERS) if rng.random() < 0.6 else rng.uniform(-1e6, 1e6)
    if roll < 0.72:
        return rng.choice((True, False, None))
    if depth > 3 and rng.random() < 0.7:
        return rng.randint(-5, 5)
    if roll < 0.86:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(("a", "id", "", "x y", "\ud800")): random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def _py_literal(value: Any, rng: random.Random) -> str:
    """Python source for `value`, sometimes swapped for a literal JSON has no word for."""
    if rng.random() < 0.08:
        return rng.choice(('b"k"', "1j", "{1, 2}", "...", "{b'k': 1}", "{(1, 2): 3}", "{**x}", "0x" + "f" * 600,
                           "x.y", "f(1)", "__import__('os')", "-inf", "1_000", "'\\ud800'", "[" * 50 + "]" * 50))
    if isinstance(value, float) and value != value:
        return "float('nan')"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_py_literal(v, rng)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_py_literal(v, rng) for v in value) + "]"
    return repr(value)


def _json(obj: Any, rng: random.Random) -> str:
    text = json.dumps(obj, ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.05:  # an integer literal beyond Python's 4,300-digit limit
        text = text.replace("0", "9" * 5000, 1) if "0" in text else text
    return text


def _call(rng: random.Random, tools: list[dict]) -> tuple[str, dict]:
    tool = rng.choice(tools) if tools and rng.random() < 0.85 else None
    if tool is None:
        name = rng.choice(("submit", "nope", "", "get account", "functions.x", "__import__", "a" * 300, "\ud800"))
        props: dict = {"answer": {}} if name == "submit" else {}
    else:
        name, props = tool["name"], tool.get("parameters", {}).get("properties", {})
    np_rng = np.random.default_rng(rng.randrange(2**32))  # a valid value half the time, so calls also reach the tools
    args = {k: (sample_value(p, np_rng) if rng.random() < 0.5 else random_value(rng)) for k, p in props.items() if rng.random() < 0.9}
    if rng.random() < 0.15:
        args[rng.choice(("x", "amount", "limit", "\ud800", ""))] = random_value(rng)
    return name, args


def _encode(name: str, args: dict, rng: random.Random) -> str:
    """One call in one of the accepted (or almost accepted) formats."""
    arg_json = _json(args, rng)
    forms = (
        lambda: _json({"name": name, "arguments": args}, rng),
        lambda: f"{name}(" + ", ".join(f"{k}={_py_literal(v, rng)}" for k, v in args.items() if k.isidentifier()) + ")",
        lambda: f"<think>plan</think>\n<tool_call>\n{_json({'name': name, 'arguments': args}, rng)}\n</tool_call>",
        lambda: _json({"type": "function", "function": {"name": name, "arguments": arg_json}}, rng),
        lambda: _json({"role": "assistant", "function_call": {"name": name, "arguments": arg_json}}, rng),
        lambda: f"<|python_tag|>{_json({'name': name, 'parameters': args}, rng)}<|eom_id|>",
        lambda: f"[TOOL_CALLS]{name}[ARGS]{arg_json}",
        lambda: f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arg_json}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        lambda: f"<|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>{arg_json}<|tool_call_end|>",
        lambda: f"<function={name}>{arg_json}</function>",
        lambda: f"```tool_code\nprint(default_api.{name}(" + ", ".join(f"{k}={_py_literal(v, rng)}" for k, v in args.items() if k.isidentifier()) + "))\n```",
        lambda: "{" + f"'name': {name!r}, 'arguments': {_py_literal(args, rng)},}}",
    )
    text = rng.choice(forms)()
    if rng.random() < 0.1:  # cut short, as a model stopped mid-call
        text = text[: rng.randint(0, len(text))]
    return text


def _pathological(rng: random.Random) -> str:
    """Text near the size limit built to make a careless regex or split run for seconds."""
    n = rng.choice((5_000, 20_000, MAX_ACTION_CHARS - 50))
    unit = rng.choice((" ", "\n", "[", "{", "(", "<tool_call>", "```", "<think>", "a,", ", ", ",,;;", "1", "1,", "$ ",
                       '{"a":', "f(", "\\u", "\ud800", "<function=", "[TOOL_CALLS]", "<|python_tag|>", "\t ,"))
    body = unit * (n // len(unit))
    return rng.choice((body, f"submit(answer={json.dumps(body)})", f'{{"name": "submit", "arguments": {{"answer": {json.dumps(body)}}}}}',
                       "answer: " + body, body + "get_account(account_id='AC-1001')"))


def random_action(rng: random.Random, tools: list[dict]) -> Any:
    """One adversarial action for an env whose tool schemas are `tools` (OpenAI format or bare)."""
    tools = [t.get("function", t) for t in tools]
    roll = rng.random()
    if roll < 0.04:
        return rng.choice((None, 123, 4.5, b"get_account()", bytearray(b"x"), ["a"], {"name": "x"}, _BadRepr(), object(), ("t",)))
    if roll < 0.10:
        return _pathological(rng)
    if roll < 0.13:  # over the size limit: up to 1 MB
        return rng.choice((" ", "x", "{", "\ud800")) * rng.choice((MAX_ACTION_CHARS + 1, 500_000, 1_000_000))
    if roll < 0.20:
        answer = rng.choice((" " * 20_000, "9" * 400, 10**400 if rng.random() < 0.5 else "1,2," * 4000, random_value(rng)))
        return rng.choice((f"submit(answer={answer!r})" if not isinstance(answer, str) or len(answer) < 30_000 else "x",
                           json.dumps({"name": "submit", "arguments": {"answer": answer}}, default=str)[:MAX_ACTION_CHARS]))
    if roll < 0.25:
        return "".join(chr(rng.randrange(0x110000)) for _ in range(rng.randint(0, 200)))
    n = 1 if rng.random() < 0.8 else rng.choice((2, 5, 40))
    calls = [_call(rng, tools) for _ in range(n)]
    if n > 1 and rng.random() < 0.5:
        return json.dumps([{"name": c, "arguments": a} for c, a in calls], default=str)
    return "\n".join(_encode(c, a, rng) for c, a in calls)


def check_step(env, action: Any) -> tuple[float, bool]:
    """Play `action` and check the step contract; returns (seconds, whether the step was an error observation).

    The contract: step() returns (str, float, bool, bool, dict) whatever the action; the observation is in the
    observation space; rendering works; and a step that ends in an error observation leaves the world unchanged.
    """
    import time

    from ..world import open_copy, state_hash

    base = env.unwrapped
    before = base.snapshot() if base.backend is None else None  # bytes: cheap to take and compare
    n_messages = len(base.messages)
    start = time.perf_counter()
    obs, reward, terminated, truncated, info = env.step(action)
    elapsed = time.perf_counter() - start
    assert isinstance(obs, str) and env.observation_space.contains(obs)
    assert isinstance(reward, float) and isinstance(terminated, bool) and isinstance(truncated, bool) and isinstance(info, dict)
    obs.encode("utf-8")  # storable and printable
    json.dumps(info, default=str).encode("utf-8")
    replies = [m for m in base.messages[n_messages:] if m["role"] == "tool"]
    error = bool(replies) and all(m["content"].startswith("Error") for m in replies)
    if error and before is not None and base.snapshot() != before:  # the pages differ: compare the content
        assert base.state_hash() == state_hash(open_copy(before)), f"an error observation changed the world: {action!r:.200}"
    return elapsed, error
