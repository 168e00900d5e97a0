import ast
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentworld_gym.actions import MAX_ACTION_CHARS, ToolCall, parse_action


def test_json_call():
    p = parse_action('{"name": "get_account", "arguments": {"account_id": "AC-1"}}')
    assert p.calls == (ToolCall("get_account", {"account_id": "AC-1"}),)
    assert p.error is None and not p.is_response


@pytest.mark.parametrize("arguments", [{"x": 1}, json.dumps({"x": 1})])
def test_openai_function_object_with_object_or_string_arguments(arguments):
    p = parse_action(json.dumps({"type": "function", "function": {"name": "f", "arguments": arguments}}))
    assert p.calls == (ToolCall("f", {"x": 1}),)


def test_openai_assistant_message_with_several_tool_calls():
    msg = {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "a", "arguments": "{}"}},
                                               {"type": "function", "function": {"name": "b", "arguments": '{"k": [1, 2]}'}}]}
    p = parse_action(json.dumps(msg))
    assert [c.name for c in p.calls] == ["a", "b"] and p.calls[1].arguments == {"k": [1, 2]}


def test_hermes_with_reasoning_around_it():
    text = '<think>I need the balance.</think>Let me check.\n<tool_call>\n{"name": "get_account", "arguments": {"account_id": "AC-7"}}\n</tool_call>'
    p = parse_action(text)
    assert p.calls == (ToolCall("get_account", {"account_id": "AC-7"}),)
    assert p.text == "Let me check."


def test_several_hermes_calls_and_unclosed_last_block():
    p = parse_action('<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", "arguments": {"n": 2}}')
    assert [c.name for c in p.calls] == ["a", "b"]


def test_python_call_syntax_never_evaluates():
    p = parse_action('get_account(account_id="AC-1", limit=5, flag=True, tags=["a", "b"], opts={"x": None})')
    assert p.calls[0].arguments == {"account_id": "AC-1", "limit": 5, "flag": True, "tags": ["a", "b"], "opts": {"x": None}}
    bad = parse_action('get_account(account_id=__import__("os").system("echo pwned"))')
    assert bad.error is not None and "literal" in bad.error


def test_python_positional_and_multiple_calls():
    p = parse_action("[sort('a.txt'), cd(folder='..')]")
    assert p.calls == (ToolCall("sort", {}, ("a.txt",)), ToolCall("cd", {"folder": ".."}))
    p = parse_action("a(x=1)\nb(y=2)")
    assert [c.name for c in p.calls] == ["a", "b"]


def test_plain_text_is_a_response_and_broken_calls_are_errors():
    assert parse_action("The balance is 12.50 dollars.").is_response
    assert parse_action('{"name": "get_account", "arguments": {').error is not None
    assert parse_action("get_account(account_id=").error is not None
    assert parse_action('{"arguments": {}}').error is not None
    assert parse_action(12345).error is not None


def test_every_bfcl_multi_turn_gold_call_parses(shared_data):
    path = shared_data / "bfcl" / "possible_answer" / "BFCL_v4_multi_turn_base.json"
    n = 0
    for line in path.read_text().splitlines():
        for turn in json.loads(line)["ground_truth"]:
            for call in turn:
                p = parse_action(call)
                assert p.error is None, (call, p.error)
                expected = ast.parse(call, mode="eval").body
                assert len(p.calls) == 1 and p.calls[0].name == ast.unparse(expected.func), call
                assert set(p.calls[0].arguments) == {k.arg for k in expected.keywords}
                n += 1
    assert n > 500


@given(st.text(max_size=300))
def test_parser_never_raises(text):
    p = parse_action(text)
    assert p.error is not None or p.calls or p.is_response


def test_pathological_inputs():
    assert parse_action("[" * 100_000).error is not None
    assert parse_action("{" + '"a":' * 50_000).error is not None
    assert parse_action("x" * MAX_ACTION_CHARS).is_response
    assert "limit is 100,000" in parse_action("x" * 1_000_000).error


# ---------------------------------------------------------------- caps apply while reading (issue 38 item 6)
from agentworld_gym import actions as actions_module  # noqa: E402
from agentworld_gym.actions import MAX_CALLS, MAX_DEPTH, MAX_PYTHON_VALUES  # noqa: E402


@pytest.fixture
def parses(monkeypatch):
    """Count the syntax trees `ast` builds, to prove the caps refuse text before it is parsed."""
    seen = []
    real = ast.parse

    def counting(source, *args, **kwargs):
        seen.append(len(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(actions_module.ast, "parse", counting)
    return seen


@pytest.mark.parametrize("text, message", [
    ("\n".join(["f(a=1)"] * 10_000), f"at most {MAX_CALLS} tool calls"),
    ("[" + ", ".join(["f(a=1)"] * (MAX_CALLS + 1)) + "]", f"at most {MAX_CALLS} tool calls"),
    ("f(x=[" + ",".join(["1"] * 30_000) + "])", f"at most {MAX_PYTHON_VALUES:,} values"),
    ("f(" + ",".join(f"a{i}=1" for i in range(9_000)) + ")", f"at most {MAX_PYTHON_VALUES:,} values"),
    ("{'name': 'f', 'arguments': {'x': [" + ",".join(["1"] * 30_000) + "]}}", f"at most {MAX_PYTHON_VALUES:,} values"),
    ("f(x=" + "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2) + ")", f"more than {MAX_DEPTH} levels"),
])
def test_python_caps_refuse_before_any_syntax_tree(parses, text, message):
    parsed = parse_action(text)
    assert parsed.error is not None and message in parsed.error, parsed.error
    assert parses == [], "the text was handed to ast.parse before the cap refused it"


def test_json_call_list_past_the_cap_is_refused():
    text = json.dumps([{"name": "f", "arguments": {"a": "\\u00e9"}}] * 1_500)
    assert f"at most {MAX_CALLS} tool calls" in parse_action(text).error


def test_caps_do_not_refuse_what_is_within_them():
    # values up to the cap, and strings full of commas, brackets and quotes (one value each)
    p = parse_action("f(x=[" + ",".join(["1"] * (MAX_PYTHON_VALUES - 2)) + "])")
    assert p.error is None and len(p.calls[0].arguments["x"]) == MAX_PYTHON_VALUES - 2
    noisy = "a, (b), [c], {d}, 'e', \\\"f\\\" " * 2_000
    p = parse_action(f'f(x="{noisy}", y=\'\'\'it\'s, (ok)\'\'\')')
    assert p.error is None and p.calls[0].arguments["x"] == noisy.replace('\\"', '"')
    p = parse_action("[" + ", ".join([f"f(a={i})" for i in range(MAX_CALLS)]) + "]")
    assert p.error is None and len(p.calls) == MAX_CALLS
    p = parse_action("f(x=" + "[" * MAX_DEPTH + "]" * MAX_DEPTH + ")")
    assert p.error is None
    # strict JSON keeps no value cap (it is read in C), and nesting is still checked
    p = parse_action(json.dumps({"name": "f", "arguments": {"x": [7] * 20_000}}))
    assert p.error is None and len(p.calls[0].arguments["x"]) == 20_000
    deep = '{"name": "f", "arguments": {"x": ' + "[" * (MAX_DEPTH + 2) + "1" + "]" * (MAX_DEPTH + 2) + "}}"
    assert "nested" in parse_action(deep).error
    lone = '{"name": "f", "arguments": {"x": ["\\ud800", ' + ", ".join(["[1]"] * 40) + "]}}"
    assert parse_action(lone).calls[0].arguments["x"][0] == "?"
