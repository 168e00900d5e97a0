"""Every tool-call format in the table of docs/actions.md parses to the call it shows; attempted calls are never answers."""

import re
from pathlib import Path

import pytest

from agentworld_gym.actions import ToolCall, parse_action

README = Path(__file__).resolve().parents[1] / "docs" / "actions.md"  # the page that lists the formats
EXPECTED = ToolCall("get_account", {"account_id": "AC-1001"})


def _readme_formats() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Accepted tool-call formats", 1)[1].split("\n#", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| format"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        example = cells[1].replace("\\|", "|")
        ticks = len(example) - len(example.lstrip("`"))
        example = example[ticks:-ticks].strip(" ") if ticks > 1 else example[ticks:-ticks]
        rows.append((cells[0], example.replace("\\n", "\n")))
    return rows


FORMATS = _readme_formats()


def test_the_readme_lists_the_major_families():
    names = " ".join(name for name, _ in FORMATS)
    assert len(FORMATS) >= 25
    for family in ("Hermes", "Qwen", "Llama", "Mistral", "DeepSeek", "Functionary", "Granite", "Gemma", "Kimi",
                   "gpt-oss", "function_call", "lenient"):
        assert family in names, family


@pytest.mark.parametrize(("name", "example"), FORMATS, ids=[n for n, _ in FORMATS])
def test_each_readme_format_parses_to_its_call(name, example):
    parsed = parse_action(example)
    assert parsed.error is None, parsed.error
    assert parsed.calls == (EXPECTED,)


@pytest.mark.parametrize("text", [
    '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "arguments": {"n": 2}}</tool_call>',
    '<|python_tag|>{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"n": 2}}<|eom_id|>',
    '[TOOL_CALLS]a[ARGS]{}[TOOL_CALLS]b[ARGS]{"n": 2}',
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{}<｜tool▁call▁end｜>"
    '<｜tool▁call▁begin｜>b<｜tool▁sep｜>{"n": 2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    '<function=a>{}</function><function=b>{"n": 2}</function>',
    '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {"n": 2}}',
    '```tool_code\na()\nb(n=2)\n```',
    "[a(), b(n=2)]",
])
def test_several_calls_in_one_block(text):
    parsed = parse_action(text)
    assert parsed.error is None, parsed.error
    assert parsed.calls == (ToolCall("a", {}), ToolCall("b", {"n": 2}))


@pytest.mark.parametrize("text", [
    '<tool_call>{"name": "get_account", "arguments": {"account_id": }</tool_call>',
    "[TOOL_CALLS]",
    "<|python_tag|>get_account(account_id=",
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_account{}<｜tool▁call▁end｜>",
    "I will call it now: <function=get_account>{account_id: AC-1001</function>",
    'Here you go: {"function_call": {"name": "get_account", "arguments": "{\\"account_id\\": "}}',
    "```tool_code\nprint(default_api.get_account(account_id=))\n```",
    "<|tool_call_begin|>functions.get_account:0<|tool_call_argument_begin|>{'a': }<|tool_call_end|>",
    'Sure, calling it: {"name": "get_account", "arguments": {"account_id": }',
])
def test_text_that_attempts_a_call_is_an_error_never_a_final_answer(text):
    parsed = parse_action(text)
    assert not parsed.is_response and parsed.error is not None


def test_plain_prose_stays_an_answer():
    for text in ("The balance is 1,523.40 dollars.", "Done: {not json} and f(x) is a function.", "```\nplain code\n```"):
        parsed = parse_action(text)
        assert parsed.is_response, (text, parsed)
